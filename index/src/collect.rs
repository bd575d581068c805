//! Collections: files that share a format and a schema and whose paths differ only in
//! variable parts (ids, dates, sequence numbers), e.g.
//! `sensors/station-{n}/readings-{date}_to_{date}.csv`, or, within one folder, in a name
//! (`by_state/{word}.csv`, see [`siblings`]). A prompt can then show hundreds of siblings
//! as one schema plus a table of what varies.

use crate::analyze::{Content, Description};
use serde::{Deserialize, Serialize};

mod numeric;
pub mod siblings;

pub use numeric::Builder;

/// Fewest members that make a collection.
pub const MIN_MEMBERS: usize = 3;
/// Members whose paths a collection keeps as examples.
const SAMPLE_MEMBERS: usize = 5;

/// A path with its variable parts replaced by placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The template, e.g. `logs/{year}/app-{n}.log`.
    pub text: String,
    /// The values of the placeholders, in order.
    pub parts: Vec<String>,
}

fn is_hex_token(t: &str) -> bool {
    t.len() >= 8
        && t.bytes().all(|b| b.is_ascii_hexdigit())
        && t.bytes().any(|b| b.is_ascii_digit())
}

fn placeholder(digits: &str) -> &'static str {
    let n = digits.len();
    if n == 8
        && crate::analyze::dates::Day::new(
            digits[..4].parse().unwrap_or(0),
            digits[4..6].parse().unwrap_or(0),
            digits[6..].parse().unwrap_or(0),
        )
        .is_some()
    {
        "{date}"
    } else if n == 4
        && digits
            .parse::<u32>()
            .is_ok_and(|y| (1900..=2100).contains(&y))
    {
        "{year}"
    } else {
        "{n}"
    }
}

/// The template of a relative path: digit runs and hash-like tokens become placeholders.
pub fn template(path: &str) -> Template {
    let mut text = String::with_capacity(path.len());
    let mut parts = Vec::new();
    // Hash-like tokens (hex with digits, ≥ 8 long) first: split at non-alphanumerics.
    let mut rest = path;
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        let (token, tail) = rest.split_at(end);
        if is_hex_token(token) && token.bytes().any(|b| b.is_ascii_alphabetic()) {
            text.push_str("{hash}");
            parts.push(token.to_string());
        } else {
            let mut chars = token.char_indices().peekable();
            while let Some((i, c)) = chars.next() {
                if c.is_ascii_digit() {
                    let mut j = i + 1;
                    while let Some(&(k, d)) = chars.peek() {
                        if !d.is_ascii_digit() {
                            break;
                        }
                        j = k + 1;
                        chars.next();
                    }
                    let digits = &token[i..j];
                    text.push_str(placeholder(digits));
                    parts.push(digits.to_string());
                } else {
                    text.push(c);
                }
            }
        }
        let sep_len = tail.chars().next().map_or(0, char::len_utf8);
        text.push_str(&tail[..sep_len]);
        rest = &tail[sep_len..];
    }
    Template { text, parts }
}

/// The values a member's path gives its collection's placeholders (`by_state/{word}.csv`
/// and `by_state/New_York.csv` → `["New_York"]`), or `None` when the path does not fit
/// the template. A placeholder runs to the first place its following text fits, or to
/// the end of the path.
pub fn varying(template: &str, path: &str) -> Option<Vec<String>> {
    const PLACEHOLDERS: [&str; 5] = ["{n}", "{date}", "{year}", "{hash}", siblings::WORD];
    // Split the template into literal runs around its placeholders, as slices of it: a
    // search asks this of every candidate in a collection.
    let mut literals: Vec<&str> = Vec::new();
    let (mut start, mut i) = (0, 0);
    while let Some(c) = template[i..].chars().next() {
        if let Some(p) = PLACEHOLDERS.iter().find(|p| template[i..].starts_with(**p)) {
            literals.push(&template[start..i]);
            i += p.len();
            start = i;
        } else {
            i += c.len_utf8();
        }
    }
    literals.push(&template[start..]);
    let mut at = path.strip_prefix(literals[0])?;
    let mut values = Vec::with_capacity(literals.len() - 1);
    for (i, lit) in literals.iter().enumerate().skip(1) {
        let last = i == literals.len() - 1;
        let end = if last {
            // The last literal ends the path.
            at.len()
                .checked_sub(lit.len())
                .filter(|&e| at[e..] == **lit)?
        } else if lit.is_empty() {
            at.find(|c: char| !c.is_alphanumeric()).unwrap_or(at.len())
        } else {
            at.find(lit)?
        };
        if end == 0 {
            return None;
        }
        values.push(at[..end].to_string());
        at = &at[end + lit.len()..];
    }
    at.is_empty().then_some(values)
}

/// What must be equal for two files to be siblings: the shape of their content, not its
/// values. Tables: column names (or count and types without a header); JSON: the
/// top-level keys; others: the format's kind.
pub fn schema_signature(d: &Description) -> String {
    let kind = d.format.as_str();
    match &d.content {
        Content::Table(t) if t.header => {
            let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
            format!("{kind}|{}|{}", t.delimiter, names.join("\u{1f}"))
        }
        Content::Table(t) => format!("{kind}|{}|{} columns", t.delimiter, t.columns.len()),
        Content::Tables(ts) => {
            let tables: Vec<String> = ts
                .tables
                .iter()
                .map(|t| {
                    let cols: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
                    format!("{}:{}", t.name, cols.join("\u{1f}"))
                })
                .collect();
            format!("{kind}|{}", tables.join("\u{1e}"))
        }
        Content::Json(j) => {
            let mut top: Vec<&str> = j
                .paths
                .iter()
                .map(|p| p.path.as_str())
                .filter(|p| p.matches('.').count() + p.matches("[]").count() <= 1)
                .collect();
            top.sort_unstable();
            top.dedup();
            format!("{kind}|{}", top.join("\u{1f}"))
        }
        Content::Arrays(a) => {
            let arrays: Vec<String> = a
                .arrays
                .iter()
                .map(|x| format!("{}:{}:{}", x.name, x.dtype, x.shape.len()))
                .collect();
            format!("{kind}|{}", arrays.join("\u{1f}"))
        }
        // No schema beyond the format: such files group by template alone.
        Content::Text(_) | Content::Archive(_) | Content::Media(_) | Content::Opaque(_) => {
            kind.to_string()
        }
    }
}

/// A short stable digest of a schema signature, stored per description and per file.
pub fn schema_digest(d: &Description) -> String {
    let h = blake3::hash(schema_signature(d).as_bytes());
    h.to_hex()[..16].to_string()
}

/// A collection as stored in the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Collection {
    /// Stable id: a digest of (template, format, schema).
    pub id: String,
    /// The path template.
    pub template: String,
    /// The members' format.
    pub format: String,
    /// Members.
    pub members: u64,
    /// Total bytes of the members.
    pub bytes: u64,
    /// Earliest start of the members' time coverage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_start: Option<String>,
    /// Latest end of the members' time coverage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_end: Option<String>,
    /// A member whose description stands for the shared schema.
    pub representative: String,
    /// For each placeholder: its name, smallest and largest value, distinct values.
    pub parts: Vec<PartRange>,
    /// The first members' paths.
    pub sample_members: Vec<String>,
    /// A word collection's varying names, sorted (at most [`siblings::NAMES_KEPT`]; the
    /// member count says how many there are): what a question naming members matches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
}

/// How one placeholder of a collection's template varies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartRange {
    /// `{n}`, `{date}`, `{year}`, `{hash}` or `{word}`.
    pub name: String,
    /// Smallest value (numeric order for digits).
    pub min: String,
    /// Largest value.
    pub max: String,
    /// Distinct values.
    pub distinct: u64,
}

/// One file as grouping sees it.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Relative path.
    pub path: String,
    /// Format name.
    pub format: String,
    /// Schema digest.
    pub schema: String,
    /// Size in bytes.
    pub size: u64,
    /// Time coverage start and end.
    pub time: Option<(String, String)>,
}

fn numeric_key(s: &str) -> (usize, &str) {
    let t = s.trim_start_matches('0');
    (t.len(), t)
}

/// The collection of `members` (at least one) under `template`, with its totals.
fn assemble(
    template: String,
    format: String,
    schema: &str,
    members: &[&Entry],
    parts: Vec<PartRange>,
    names: Vec<String>,
) -> (Collection, Vec<String>) {
    let time_start = members
        .iter()
        .filter_map(|e| e.time.as_ref().map(|t| t.0.clone()))
        .min();
    let time_end = members
        .iter()
        .filter_map(|e| e.time.as_ref().map(|t| t.1.clone()))
        .max();
    let paths: Vec<String> = members.iter().map(|e| e.path.clone()).collect();
    (
        Collection {
            id: collection_id(&template, &format, schema),
            template,
            format,
            members: members.len() as u64,
            bytes: members.iter().map(|e| e.size).sum(),
            time_start,
            time_end,
            representative: paths[0].clone(),
            parts,
            sample_members: paths.iter().take(SAMPLE_MEMBERS).cloned().collect(),
            names,
        },
        paths,
    )
}

/// A collection's stable id: a digest of its template, format and schema.
fn collection_id(template: &str, format: &str, schema: &str) -> String {
    blake3::hash(format!("{template}\u{1f}{format}\u{1f}{schema}").as_bytes()).to_hex()[..16]
        .to_string()
}

/// Grouping every file at once, in memory: the reference the tests hold the grouping a
/// template folder at a time ([`Builder`], `catalog::regroup`) to.
#[cfg(test)]
pub(crate) mod at_once {
    use super::*;

    /// Files by (template, format, schema), each with its template.
    type Groups<'a> =
        std::collections::BTreeMap<(String, String, String), Vec<(&'a Entry, Template)>>;

    /// The entries that no collection of `made` holds.
    fn entries_outside<'a>(
        entries: &'a [Entry],
        made: &[(Collection, Vec<String>)],
    ) -> Vec<&'a Entry> {
        let held: std::collections::HashSet<&str> = made
            .iter()
            .flat_map(|(_, paths)| paths.iter().map(String::as_str))
            .collect();
        entries
            .iter()
            .filter(|e| !held.contains(e.path.as_str()))
            .collect()
    }

    /// Group files into collections; returns the collections and, per collection, its
    /// members' paths. Paths that differ in numbers are grouped first; the files left over
    /// are grouped by name within their folder ([`siblings::group`]), so that adding word
    /// grouping leaves every numeric collection as it was.
    pub fn group(entries: &[Entry]) -> Vec<(Collection, Vec<String>)> {
        let mut groups: Groups<'_> = Default::default();
        for e in entries {
            let t = template(&e.path);
            if t.parts.is_empty() {
                continue;
            }
            groups
                .entry((t.text.clone(), e.format.clone(), e.schema.clone()))
                .or_default()
                .push((e, t));
        }
        let mut out = Vec::new();
        for ((text, format, schema), members) in groups {
            if members.len() < MIN_MEMBERS {
                continue;
            }
            let n_parts = members[0].1.parts.len();
            let names: Vec<String> = {
                let mut v = Vec::new();
                let mut rest = text.as_str();
                while let Some(i) = rest.find('{') {
                    let j = rest[i..].find('}').map_or(rest.len(), |j| i + j + 1);
                    v.push(rest[i..j].to_string());
                    rest = &rest[j..];
                }
                v
            };
            let parts: Vec<PartRange> = (0..n_parts)
                .map(|k| {
                    let vals: Vec<&str> =
                        members.iter().map(|(_, t)| t.parts[k].as_str()).collect();
                    let min = vals
                        .iter()
                        .min_by_key(|v| numeric_key(v))
                        .copied()
                        .unwrap_or_default();
                    let max = vals
                        .iter()
                        .max_by_key(|v| numeric_key(v))
                        .copied()
                        .unwrap_or_default();
                    let mut d: Vec<&str> = vals.clone();
                    d.sort_unstable();
                    d.dedup();
                    PartRange {
                        name: names.get(k).cloned().unwrap_or_else(|| "{n}".into()),
                        min: min.to_string(),
                        max: max.to_string(),
                        distinct: d.len() as u64,
                    }
                })
                .collect();
            let members: Vec<&Entry> = members.iter().map(|(e, _)| *e).collect();
            out.push(assemble(text, format, &schema, &members, parts, Vec::new()));
        }
        out.extend(siblings::group(&entries_outside(entries, &out)));
        out
    }
}

/// The text form of a collection: one line of totals, what varies, a few members, and
/// the representative's description (`schema`) indented below.
pub fn render(c: &Collection, schema: Option<&str>) -> String {
    use std::fmt::Write;
    let mut s = format!(
        "{} — collection {} of {} {} files, one schema, {}",
        c.template,
        c.id,
        c.members,
        c.format,
        crate::analyze::human_size(c.bytes)
    );
    if let (Some(a), Some(b)) = (&c.time_start, &c.time_end) {
        let _ = write!(s, ", {a} … {b}");
    }
    s.push('\n');
    for p in &c.parts {
        if p.name == siblings::WORD && !c.names.is_empty() {
            // Names are not a range: list them, as many as a line can carry.
            let shown = c.names.len().min(siblings::NAMES_SHOWN);
            let _ = write!(s, "  {}: {}", p.name, c.names[..shown].join(", "));
            if (shown as u64) < p.distinct {
                let _ = write!(s, ", … ({} distinct)", p.distinct);
            }
            s.push('\n');
            continue;
        }
        let _ = writeln!(
            s,
            "  {}: {} … {} ({} distinct)",
            p.name, p.min, p.max, p.distinct
        );
    }
    let _ = writeln!(s, "  e.g. {}", c.sample_members.join(", "));
    if let Some(schema) = schema {
        let _ = writeln!(s, "  shared schema, from {}:", c.representative);
        for line in schema.lines().skip(1) {
            let _ = writeln!(s, "  {line}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_members_varying_parts_are_read_back_from_its_template() {
        let v = |t: &str, p: &str| varying(t, p);
        assert_eq!(
            v("by_state/{word}.csv", "by_state/New_York.csv"),
            Some(vec!["New_York".to_string()])
        );
        assert_eq!(
            v("crime/crimes_{year}.csv", "crime/crimes_2012.csv"),
            Some(vec!["2012".to_string()])
        );
        assert_eq!(
            v(
                "s/station-{n}/r-{date}_to_{date}.csv",
                "s/station-7/r-20120101_to_20120131.csv"
            ),
            Some(vec!["7".into(), "20120101".into(), "20120131".into()])
        );
        assert_eq!(v("by_state/{word}.csv", "other/Ohio.csv"), None);
        assert_eq!(v("by_state/{word}.csv", "by_state/.csv"), None);
        assert_eq!(v("{word}.csv", "Utah.csv"), Some(vec!["Utah".to_string()]));
    }

    #[test]
    fn templates_replace_variable_parts() {
        let t = template("sensors/station-0042/readings-20190301_to_20190304.csv");
        assert_eq!(t.text, "sensors/station-{n}/readings-{date}_to_{date}.csv");
        assert_eq!(t.parts, ["0042", "20190301", "20190304"]);
        assert_eq!(
            template("sales/2019/emea/sales_2019_q3_emea_17.csv").text,
            "sales/{year}/emea/sales_{year}_q{n}_emea_{n}.csv"
        );
        assert_eq!(
            template("blobs/3fa9c2e1d4b5a6f7.bin").text,
            "blobs/{hash}.bin"
        );
        assert_eq!(template("manual.md").parts.len(), 0);
    }

    /// A csv file of `schema`, its time coverage from its path (shared with
    /// [`super::siblings`]' tests).
    pub(super) fn entry(path: &str, schema: &str) -> Entry {
        Entry {
            path: path.into(),
            format: "csv".into(),
            schema: schema.into(),
            size: 10,
            time: crate::analyze::time::from_path(path).map(|t| (t.start, t.end)),
        }
    }

    #[test]
    fn groups_siblings_with_one_schema() {
        let mut es: Vec<Entry> = (1..=12)
            .map(|i| {
                entry(
                    &format!(
                        "r/station-{i:04}/readings-2019{:02}01_to_2019{:02}28.csv",
                        i, i
                    ),
                    "s1",
                )
            })
            .collect();
        es.push(entry(
            "r/station-0099/readings-20190101_to_20190128.csv",
            "other-schema",
        ));
        es.push(entry("r/notes.md", "s1"));
        let g = at_once::group(&es);
        assert_eq!(g.len(), 1);
        let (c, members) = &g[0];
        assert_eq!(c.members, 12);
        assert_eq!(members.len(), 12);
        assert_eq!(c.template, "r/station-{n}/readings-{date}_to_{date}.csv");
        assert_eq!(
            (c.parts[0].min.as_str(), c.parts[0].max.as_str()),
            ("0001", "0012")
        );
        assert_eq!(c.time_start.as_deref(), Some("2019-01-01"));
        assert_eq!(c.time_end.as_deref(), Some("2019-12-28"));
        let text = render(c, None);
        assert!(
            text.starts_with(&format!(
                "r/station-{{n}}/readings-{{date}}_to_{{date}}.csv — collection {} of 12 csv files",
                c.id
            )),
            "{text}"
        );
    }

    #[test]
    fn numbered_files_keep_their_collection_and_named_ones_get_theirs() {
        let mut es: Vec<Entry> = (1..=3)
            .map(|i| entry(&format!("d/part_{i}.csv"), "s1"))
            .collect();
        es.extend(["Ohio", "Utah", "Texas"].map(|s| entry(&format!("d/{s}.csv"), "s1")));
        let g = at_once::group(&es);
        let templates: Vec<&str> = g.iter().map(|(c, _)| c.template.as_str()).collect();
        assert_eq!(templates, ["d/part_{n}.csv", "d/{word}.csv"]);
        assert!(g[0].0.names.is_empty());
        assert_eq!(g[1].0.names, ["Ohio", "Texas", "Utah"]);
        assert_eq!(g[1].1, ["d/Ohio.csv", "d/Texas.csv", "d/Utah.csv"]);
    }
}
