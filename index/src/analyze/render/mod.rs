//! The text form of a description: what an LLM prompt or a person sees. Deterministic
//! (same description → same bytes) and held within a byte budget by showing fewer list
//! items until it fits.

use super::{ArchiveSummary, ArraySet, Content, Description, JsonSummary, MediaInfo, TextSummary};
use crate::text_util::cut_bytes;
use std::fmt::Write;
#[cfg(test)]
pub(crate) use tabular::with_path;
use tabular::{table, tables};

mod tabular;

/// How to render.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    /// Largest rendering in bytes.
    pub max_bytes: usize,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions { max_bytes: 2048 }
    }
}

/// How many items of each list to show.
#[derive(Clone, Copy)]
struct Caps {
    items: usize,
    examples: usize,
}

/// Render `desc` of the file at `path` (relative to the lake, `/`-separated).
pub fn render(path: &str, desc: &Description, opts: RenderOptions) -> String {
    let mut caps = Caps {
        items: 60,
        examples: 3,
    };
    // Least useful first: extra examples, then list items (columns, key paths,
    // headings) down to three, then the last example; past that, whole lines are cut.
    let full = caps;
    loop {
        let s = render_with(path, Some(path), desc, caps);
        if s.len() <= opts.max_bytes {
            return s;
        }
        if caps.examples > 1 {
            caps.examples -= 1;
        } else if caps.items > 3 {
            caps.items = (caps.items * 2 / 3).max(3);
        } else if caps.examples > 0 {
            caps.examples = 0;
        } else {
            let whole = render_with(path, Some(path), desc, full).len();
            let columns: Vec<String> = desc
                .content
                .profiled_columns()
                .map(|(_, c)| tabular::display_name(&c.name))
                .collect();
            return cut_lines(&s, opts.max_bytes, &columns, whole);
        }
    }
}

/// Ends a rendering cut inside a line: a budget too small for a line and the note.
const CUT_MARK: &str = " …\n";

/// Labels of the lines a cut leaves out, at most: the note must stay short.
const LEFT_OUT_LABELS: usize = 4;

/// `s` cut at a line end to fit in `max` bytes with a last line saying what was left out
/// (the profiles of `columns`, labelled lines) and the budget that shows everything
/// (`whole` bytes). A budget that does not hold the first line and that note cuts the
/// text at `max` bytes instead.
fn cut_lines(s: &str, max: usize, columns: &[String], whole: usize) -> String {
    let lines: Vec<&str> = s.split_inclusive('\n').collect();
    let mut kept = s.len();
    for k in (1..lines.len()).rev() {
        kept -= lines[k].len();
        let note = left_out(&lines[k..], columns, whole);
        if kept + note.len() <= max {
            return format!("{}{note}", &s[..kept]);
        }
    }
    cut_bytes(s.to_string(), max, CUT_MARK)
}

/// The last line of a cut rendering: how many lines were left out, what they are (the
/// profiles of `columns`, labelled lines: `time coverage`, `note`), and the budget that
/// shows them all (named as the CLI's flag; HTTP and MCP call it `max_bytes`).
fn left_out(lines: &[&str], columns: &[String], whole: usize) -> String {
    let mut labels: Vec<String> = Vec::new();
    let mut profiles = 0;
    for l in lines {
        // A column's line: its name, padded by at least two spaces.
        let t = l.trim_start();
        let profile = columns.iter().any(|c| {
            t.strip_prefix(c.as_str())
                .is_some_and(|r| r.starts_with("  "))
        });
        if profile {
            profiles += 1;
        } else if let Some(label) = line_label(l) {
            if !labels.iter().any(|x| x == label) {
                labels.push(label.to_string());
            }
        }
    }
    if profiles > 0 {
        let noun = if profiles == 1 {
            "column's profile"
        } else {
            "columns' profiles"
        };
        labels.insert(0, format!("{profiles} {noun}"));
    }
    let more = labels.len().saturating_sub(LEFT_OUT_LABELS);
    labels.truncate(LEFT_OUT_LABELS);
    let what = match (labels.is_empty(), more) {
        (true, _) => String::new(),
        (false, 0) => format!(" ({})", labels.join(", ")),
        (false, _) => format!(" ({}, …)", labels.join(", ")),
    };
    format!(
        "  … {}{what} left out; --max-bytes {whole} shows all\n",
        counted(lines.len() as u64, "more line")
    )
}

/// The label a rendered line starts with (`time coverage` of `  time coverage: 2023 …`),
/// when it has one: a few lowercase words and a colon (a column's line pads its name
/// with two spaces, which a label never holds).
fn line_label(line: &str) -> Option<&str> {
    let (label, _) = line.trim_start().split_once(':')?;
    let plain = label.len() <= 24
        && !label.contains("  ")
        && label.starts_with(|c: char| c.is_ascii_lowercase())
        && label.chars().all(|c| c.is_ascii_lowercase() || c == ' ');
    plain.then_some(label)
}

/// Decimal units, as file browsers show sizes.
pub fn human_size(n: u64) -> String {
    const UNITS: [&str; 5] = ["KB", "MB", "GB", "TB", "PB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut x = n as f64 / 1000.0;
    let mut u = 0;
    while x >= 1000.0 && u < UNITS.len() - 1 {
        x /= 1000.0;
        u += 1;
    }
    format!("{x:.1} {}", UNITS[u])
}

/// A number with thousands separators: 138236 → "138,236".
pub(crate) fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Short, stable rendering of a float.
fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else if x.abs() >= 1e6 || x.abs() < 1e-3 {
        format!("{x:.3e}")
    } else {
        let s = format!("{x:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// `load_path` is the path the `load:` line names (None: no load line, for a member of
/// an archive pandas cannot open by the archive's path).
fn render_with(path: &str, load_path: Option<&str>, d: &Description, caps: Caps) -> String {
    let mut s = format!("{path} — {}, {}", d.format.human(), human_size(d.size));
    match &d.content {
        Content::Table(t) => table(&mut s, load_path, t, caps),
        Content::Tables(t) => tables(&mut s, load_path, t, caps),
        Content::Json(j) => json(&mut s, j, caps),
        Content::Text(t) => text(&mut s, t, caps),
        Content::Archive(a) => archive(&mut s, path, a, caps),
        Content::Arrays(a) => arrays(&mut s, a, caps),
        Content::Media(m) => media(&mut s, m, caps),
        Content::Opaque(o) => {
            if o.detected != d.format.human() {
                let _ = write!(s, ", {}", o.detected);
            }
            s.push('\n');
        }
    }
    let path_time;
    let time = match &d.time_coverage {
        Some(t) => Some(t),
        None => {
            path_time = super::time::from_path(path);
            path_time.as_ref()
        }
    };
    if let Some(t) = time {
        let _ = writeln!(
            s,
            "  time coverage: {} … {} (from {})",
            t.start, t.end, t.source
        );
    }
    for n in &d.notes {
        let _ = writeln!(s, "  note: {n}");
    }
    if !d.rules.is_empty() {
        let fired: Vec<String> = d.rules.iter().map(|(r, n)| format!("{r} ×{n}")).collect();
        let _ = writeln!(s, "  reading rules: {}", fired.join(", "));
    }
    if let Some(e) = &d.error {
        let _ = writeln!(s, "  error: {e}");
    }
    s
}

/// `n` (with thousands separators) and the noun, singular for one: "1 line", "3,196
/// words".
pub(crate) fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", thousands(n))
    }
}

fn plural(kind: &str, n: usize) -> String {
    if n == 1 {
        format!("1 {kind}")
    } else if kind.ends_with('s') {
        format!("{n} {kind}es")
    } else {
        format!("{n} {kind}s")
    }
}

fn archive(s: &mut String, path: &str, a: &ArchiveSummary, caps: Caps) {
    if a.members.is_empty() && a.members_total == 0 {
        let _ = writeln!(s, ", {} stream", a.container);
    } else {
        let _ = writeln!(
            s,
            ", {} of {} members, {} uncompressed",
            a.container,
            thousands(a.members_total),
            human_size(a.uncompressed_bytes)
        );
        let listed: Vec<String> = a
            .members
            .iter()
            .take(caps.items)
            .map(|m| format!("{} ({})", m.path, human_size(m.size)))
            .collect();
        let _ = writeln!(s, "  members: {}", listed.join(", "));
        if a.members_total as usize > listed.len() {
            let _ = writeln!(
                s,
                "  … {} more members",
                a.members_total as usize - listed.len()
            );
        }
    }
    for n in &a.notes {
        let _ = writeln!(s, "  {n}");
    }
    let inner = Caps {
        items: (caps.items / 2).max(3),
        examples: caps.examples,
    };
    // pandas reads a single compressed stream by the file's own path when its extension
    // names the codec; a member of a zip or tar needs extracting first.
    let stream = a.members.is_empty() && a.members_total == 0;
    let by_extension = [".gz", ".bz2", ".xz"]
        .iter()
        .any(|e| path.to_ascii_lowercase().ends_with(e));
    let load_path = (stream && by_extension).then_some(path);
    for (member, d) in &a.described {
        for line in render_with(member, load_path, d, inner).lines() {
            let _ = writeln!(s, "  │ {line}");
        }
    }
}

fn arrays(s: &mut String, a: &ArraySet, caps: Caps) {
    let _ = writeln!(s, ", {}, {}", a.container, plural("array", a.arrays.len()));
    if !a.dimensions.is_empty() {
        let dims: Vec<String> = a
            .dimensions
            .iter()
            .map(|(n, l)| format!("{n}={l}"))
            .collect();
        let _ = writeln!(s, "  dimensions: {}", dims.join(", "));
    }
    let width = a
        .arrays
        .iter()
        .take(caps.items)
        .map(|x| x.name.chars().count())
        .max()
        .unwrap_or(0)
        .min(28);
    for x in a.arrays.iter().take(caps.items) {
        let shape: Vec<String> = if x.dims.len() == x.shape.len() && !x.dims.is_empty() {
            x.dims
                .iter()
                .zip(&x.shape)
                .map(|(d, n)| format!("{d}={n}"))
                .collect()
        } else {
            x.shape.iter().map(u64::to_string).collect()
        };
        let attrs: Vec<String> = x.attrs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let mut line = format!(
            "  {:<width$}  {:<8} ({})",
            x.name,
            x.dtype,
            shape.join(", ")
        );
        if !attrs.is_empty() {
            let _ = write!(line, "  {}", attrs.join("; "));
        }
        let _ = writeln!(s, "{line}");
    }
    more(s, a.arrays.len(), caps.items, "arrays");
    for n in &a.notes {
        let _ = writeln!(s, "  {n}");
    }
}

fn media(s: &mut String, m: &MediaInfo, caps: Caps) {
    let mut head = format!(", {}", m.kind);
    if let (Some(w), Some(h)) = (m.width, m.height) {
        let _ = write!(head, ", {w}×{h} px");
    }
    if let Some(p) = m.pages {
        let _ = write!(head, ", {}", plural("page", p as usize));
    }
    if let Some(t) = &m.title {
        let _ = write!(head, ", title {t:?}");
    }
    let _ = writeln!(s, "{head}");
    for o in m.outline.iter().take(caps.items) {
        let _ = writeln!(s, "  {o}");
    }
    for n in &m.notes {
        let _ = writeln!(s, "  {n}");
    }
}

fn more(s: &mut String, total: usize, shown: usize, what: &str) {
    if total > shown {
        let _ = writeln!(s, "  … {} more {what}", total - shown);
    }
}

fn json(s: &mut String, j: &JsonSummary, caps: Caps) {
    let _ = writeln!(s, ", {}", j.root);
    for n in &j.notes {
        let _ = writeln!(s, "  {n}");
    }
    if let Some(b) = j.sampled_bytes {
        let _ = writeln!(
            s,
            "  profiled from a {} sample: counts are estimates (`lakestar index --full` for exact figures)",
            human_size(b)
        );
    }
    if j.bad_lines > 0 {
        let _ = writeln!(
            s,
            "  {} invalid lines, first: {}",
            thousands(j.bad_lines),
            j.first_bad_line.as_deref().unwrap_or("?")
        );
    }
    let width = j
        .paths
        .iter()
        .take(caps.items)
        .map(|p| p.path.chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    for p in j.paths.iter().take(caps.items) {
        let types = if p.types.len() == 1 {
            p.types[0].0.clone()
        } else {
            p.types
                .iter()
                .map(|(t, n)| format!("{t} {n}"))
                .collect::<Vec<_>>()
                .join(" | ")
        };
        // Past the read budget every figure comes from the sample.
        let e = if j.sampled_bytes.is_some() { "~" } else { "" };
        let mut facts = vec![format!("×{e}{}", thousands(p.count))];
        if let Some((lo, hi)) = p.array_len {
            facts.push(format!("length {e}{lo} … {e}{hi}"));
        }
        if let Some((lo, hi)) = p.range {
            facts.push(format!("{e}{} … {e}{}", num(lo), num(hi)));
        }
        if p.distinct > 0 && !p.examples.is_empty() && caps.examples > 0 {
            let more = if p.distinct_exact { "" } else { "≥" };
            facts.push(format!("{more}{} distinct", thousands(p.distinct)));
            let ex: Vec<&str> = p
                .examples
                .iter()
                .take(caps.examples)
                .map(String::as_str)
                .collect();
            facts.push(format!("e.g. {}", ex.join(", ")));
        }
        let _ = writeln!(s, "  {:<width$}  {types}  {}", p.path, facts.join(", "));
    }
    more(s, j.paths.len(), caps.items, "key paths");
    if j.paths_truncated > 0 {
        let _ = writeln!(
            s,
            "  … {} further key paths not profiled",
            thousands(j.paths_truncated)
        );
    }
}

fn text(s: &mut String, t: &TextSummary, caps: Caps) {
    let _ = write!(
        s,
        ", {}, {}",
        counted(t.lines, "line"),
        counted(t.words, "word")
    );
    if t.truncated {
        s.push_str(" (first part read)");
    }
    if t.lossy {
        s.push_str(", invalid UTF-8 replaced");
    }
    s.push('\n');
    if !t.outline.is_empty() {
        s.push_str("  outline:\n");
        let min = t.outline.iter().map(|h| h.level).min().unwrap_or(1);
        for h in t.outline.iter().take(caps.items) {
            let indent = "  ".repeat((h.level - min) as usize);
            let _ = writeln!(s, "    {indent}{} {}", "#".repeat(h.level as usize), h.text);
        }
        more(s, t.outline.len(), caps.items, "headings");
    }
    if !t.tables.is_empty() {
        s.push_str("  tables:\n");
        for tb in t.tables.iter().take(caps.items.min(20)) {
            let under = tb
                .section
                .as_deref()
                .map(|x| format!(" under \"{x}\""))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "    line {}{under}: {} ({} rows)",
                tb.line,
                tb.columns.join(" | "),
                tb.rows
            );
        }
        more(s, t.tables.len(), caps.items.min(20), "tables");
    }
    if !t.definitions.is_empty() {
        let shown: Vec<&str> = t
            .definitions
            .iter()
            .take(caps.items.min(12))
            .map(String::as_str)
            .collect();
        let _ = writeln!(
            s,
            "  defines {} terms: {}",
            t.definition_count,
            shown.join(", ")
        );
    }
    if !t.terms.is_empty() && caps.examples > 0 {
        let shown: Vec<String> = t
            .terms
            .iter()
            .take(4 + 2 * caps.examples)
            .map(|(w, n)| format!("{w} ({n})"))
            .collect();
        let _ = writeln!(s, "  terms: {}", shown.join(", "));
    }
    if !t.excerpt.is_empty() && caps.examples > 0 {
        let _ = writeln!(s, "  excerpt: {}", t.excerpt);
    }
}

#[cfg(test)]
mod tests;
