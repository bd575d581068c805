//! Word-named siblings: files of one folder with the same format and schema whose names
//! differ in a word rather than a number — `by_state/Ohio.csv`, `by_state/Utah.csv`, or
//! `sales_north.csv`, `sales_south.csv` — form one collection, `by_state/{word}.csv`.
//! Without it fifty per-state tables are fifty documents that must each beat every
//! national table; as a collection they fold into one hit, and every member's search
//! document carries the members' names ([`search_text`]), so a question naming
//! three states finds the collection even when a national table holds those names too.
//!
//! The rule is general (no list of states, regions or products): the varying part is
//! what remains of each name after the longest prefix and suffix all members share, cut
//! at separators so that a shared letter (`Ohio`, `Oregon`) is never taken for a shared
//! part.

use super::{assemble, Collection, Entry, PartRange, MIN_MEMBERS};
use std::collections::BTreeMap;

/// The placeholder of the varying name.
pub const WORD: &str = "{word}";
/// Names a collection keeps (the first, sorted): enough for any real dimension (states,
/// countries, products), bounded for a folder of a hundred thousand per-user files.
pub const NAMES_KEPT: usize = 200;
/// Names the text form lists before it only counts.
pub const NAMES_SHOWN: usize = 20;

/// Formats whose schema digest says what a file holds (columns, keys, arrays). Prose,
/// pages and images share a digest by kind only: three notes in a folder are not
/// siblings because they are all Markdown.
const STRUCTURED: [&str; 12] = [
    "csv",
    "tsv",
    "fixed-width",
    "json",
    "jsonl",
    "yaml",
    "toml",
    "parquet",
    "excel",
    "sqlite",
    "npy",
    "scientific",
];

fn is_sep(c: char) -> bool {
    !c.is_alphanumeric()
}

/// Bytes of the prefix and of the suffix that every name shares, the prefix ending just
/// after a separator and the suffix starting at one (either may be empty).
fn shared_affixes(names: &[&str]) -> (usize, usize) {
    let first = names[0];
    let mut pre = first.len();
    let mut suf = first.len();
    for n in &names[1..] {
        pre = pre.min(
            first
                .bytes()
                .zip(n.bytes())
                .take_while(|(a, b)| a == b)
                .count(),
        );
        suf = suf.min(
            first
                .bytes()
                .rev()
                .zip(n.bytes().rev())
                .take_while(|(a, b)| a == b)
                .count(),
        );
    }
    while !first.is_char_boundary(pre) {
        pre -= 1;
    }
    let pre = first[..pre]
        .char_indices()
        .rfind(|(_, c)| is_sep(*c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let mut start = first.len() - suf;
    while !first.is_char_boundary(start) {
        start += 1;
    }
    let suf = first[start..]
        .char_indices()
        .find(|(_, c)| is_sep(*c))
        .map_or(0, |(i, _)| first.len() - start - i);
    (pre, suf)
}

/// What varies in `name` between the shared prefix and suffix; empty when they overlap.
fn middle(name: &str, pre: usize, suf: usize) -> &str {
    if pre + suf > name.len() {
        return "";
    }
    &name[pre..name.len() - suf]
}

/// Collections of word-named siblings among `entries` (files no numeric collection
/// holds): per (folder, format, schema), at least [`MIN_MEMBERS`] files whose varying
/// parts each hold a letter and differ in their letters. A member whose varying part has none (`sales.csv` beside
/// `sales_north.csv`, or a bare number) is set aside and the rest tried again.
pub fn group(entries: &[&Entry]) -> Vec<(Collection, Vec<String>)> {
    let mut parts: BTreeMap<(&str, &str, &str), Vec<&Entry>> = BTreeMap::new();
    for e in entries {
        if e.schema.is_empty() || !STRUCTURED.contains(&e.format.as_str()) {
            continue;
        }
        let folder = e.path.rsplit_once('/').map_or("", |(d, _)| d);
        parts
            .entry((folder, &e.format, &e.schema))
            .or_default()
            .push(e);
    }
    let mut out = Vec::new();
    for ((folder, format, schema), mut members) in parts {
        members.sort_by(|a, b| a.path.cmp(&b.path));
        while members.len() >= MIN_MEMBERS {
            let names: Vec<&str> = members.iter().map(|e| file_name(&e.path)).collect();
            let (pre, suf) = shared_affixes(&names);
            let worded: Vec<bool> = names
                .iter()
                .map(|n| middle(n, pre, suf).chars().any(char::is_alphabetic))
                .collect();
            if worded.iter().all(|w| *w) {
                if !differ_in_words(&names, pre, suf) {
                    break;
                }
                let mut varying: Vec<String> = names
                    .iter()
                    .map(|n| middle(n, pre, suf).to_string())
                    .collect();
                varying.sort_by_cached_key(|v| (v.to_lowercase(), v.clone()));
                varying.dedup();
                let part = PartRange {
                    name: WORD.to_string(),
                    min: varying[0].clone(),
                    max: varying[varying.len() - 1].clone(),
                    distinct: varying.len() as u64,
                };
                varying.truncate(NAMES_KEPT);
                let first = names[0];
                let template = format!(
                    "{folder}{}{}{WORD}{}",
                    if folder.is_empty() { "" } else { "/" },
                    &first[..pre],
                    &first[first.len() - suf..]
                );
                out.push(assemble(
                    template,
                    format.to_string(),
                    schema,
                    &members,
                    vec![part],
                    varying,
                ));
                break;
            }
            members = members
                .into_iter()
                .zip(worded)
                .filter_map(|(e, w)| w.then_some(e))
                .collect();
        }
    }
    out
}

/// Whether the varying parts differ in their letters, not only in numbers: `x_1`, `x_2`,
/// `x-3` are numbered copies of one thing (the numeric grouping's business), `Ohio`,
/// `Utah`, `Texas` are members named by a word. At least [`MIN_MEMBERS`] distinct
/// letter sequences must remain.
fn differ_in_words(names: &[&str], pre: usize, suf: usize) -> bool {
    let mut words: Vec<String> = names
        .iter()
        .map(|n| {
            middle(n, pre, suf)
                .chars()
                .filter(|c| c.is_alphabetic())
                .flat_map(char::to_lowercase)
                .collect()
        })
        .collect();
    words.sort_unstable();
    words.dedup();
    words.len() >= MIN_MEMBERS
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The line a member's search document gains from its collection: the members'
/// names, so that a question naming several of them matches each member on all of them.
/// `None` for collections whose members differ only in numbers (nothing to match).
pub fn search_text(c: &Collection) -> Option<String> {
    (!c.names.is_empty()).then(|| format!("siblings: {}", c.names.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::super::tests::entry;
    use super::*;

    fn grouped(es: &[Entry]) -> Vec<(Collection, Vec<String>)> {
        group(&es.iter().collect::<Vec<_>>())
    }

    #[test]
    fn affixes_are_cut_at_separators() {
        assert_eq!(shared_affixes(&["Ohio.csv", "Oregon.csv"]), (0, 4));
        assert_eq!(
            shared_affixes(&["sales_north.csv", "sales_south.csv"]),
            (6, 4)
        );
        assert_eq!(
            shared_affixes(&["New_York.csv", "New_Mexico.csv", "Utah.csv"]),
            (0, 4)
        );
        // Overlapping prefix and suffix leave nothing varying.
        let (p, s) = shared_affixes(&["a.csv", "a.b.csv"]);
        assert_eq!(middle("a.csv", p, s), "");
        assert_eq!(shared_affixes(&["Zürich.csv", "Zug.csv"]), (0, 4));
    }

    #[test]
    fn word_named_siblings_form_one_collection() {
        let mut es: Vec<Entry> = ["Ohio", "Utah", "Texas", "New_York", "Maine"]
            .iter()
            .map(|s| entry(&format!("by_state/{s}.csv"), "s1"))
            .collect();
        // Another schema, another folder, a document: not members.
        es.push(entry("by_state/summary.csv", "s2"));
        es.push(entry("other/Idaho.csv", "s1"));
        es.push(Entry {
            format: "markdown".into(),
            ..entry("by_state/notes.md", "md")
        });
        let g = grouped(&es);
        assert_eq!(g.len(), 1, "{g:?}");
        let (c, members) = &g[0];
        assert_eq!(c.template, "by_state/{word}.csv");
        assert_eq!(c.members, 5);
        assert_eq!(members.len(), 5);
        assert_eq!(c.names, ["Maine", "New_York", "Ohio", "Texas", "Utah"]);
        assert_eq!((c.parts[0].name.as_str(), c.parts[0].distinct), (WORD, 5));
        let line = search_text(c).unwrap();
        assert!(line.contains("Ohio") && line.contains("New_York"), "{line}");
        let text = super::super::render(c, None);
        assert!(
            text.contains("{word}: Maine, New_York, Ohio, Texas, Utah\n"),
            "{text}"
        );
    }

    #[test]
    fn the_shared_part_of_names_stays_in_the_template() {
        let mut es: Vec<Entry> = ["north", "south", "east", "west"]
            .iter()
            .map(|r| entry(&format!("sales_{r}.csv"), "s1"))
            .collect();
        let g = grouped(&es);
        assert_eq!(g.len(), 1, "{g:?}");
        assert_eq!(g[0].0.template, "sales_{word}.csv");
        assert_eq!(g[0].0.names, ["east", "north", "south", "west"]);
        // A same-schema `sales.csv` beside them shares no separated prefix: the whole
        // name varies, and all five are one collection.
        es.push(entry("sales.csv", "s1"));
        let g = grouped(&es);
        assert_eq!(g[0].0.template, "{word}.csv");
        assert_eq!(g[0].1.len(), 5);
    }

    #[test]
    fn two_same_schema_files_are_not_a_collection() {
        let es = [entry("d/alpha.csv", "s1"), entry("d/beta.csv", "s1")];
        assert!(grouped(&es).is_empty());
        // Nor are three whose names vary only in numbers.
        let es = [
            entry("d/x_1.csv", "s1"),
            entry("d/x_2.csv", "s1"),
            entry("d/x-3.csv", "s1"),
        ];
        assert!(grouped(&es).is_empty(), "{:?}", grouped(&es));
    }

    #[test]
    fn names_are_capped_and_counted() {
        let es: Vec<Entry> = (0..NAMES_KEPT + 30)
            .map(|i| {
                let w: String = format!("{i:04}")
                    .bytes()
                    .map(|b| (b'a' + b - b'0') as char)
                    .collect();
                entry(&format!("users/{w}.json"), "s1")
            })
            .collect();
        let g = grouped(&es);
        let c = &g[0].0;
        assert_eq!(c.members as usize, NAMES_KEPT + 30);
        assert_eq!(c.names.len(), NAMES_KEPT);
        assert_eq!(c.parts[0].distinct as usize, NAMES_KEPT + 30);
        let text = super::super::render(c, None);
        assert!(
            text.contains(&format!(", … ({} distinct)", NAMES_KEPT + 30)),
            "{text}"
        );
    }
}
