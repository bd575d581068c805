//! Search hits as people read them: the path, a relevance label, the description's first
//! line and why it ranks, with the question's words marked, coloured on a terminal
//! (`anstream` drops the styles when colour is off: `--color`, `NO_COLOR`, a pipe).

use anstyle::{AnsiColor, Style};
use lakestar_index::search::engine::{Hit, HitCollection};
use lakestar_index::search::matching_spans;
use lakestar_index::search::rank::Relevance;
use std::io::Write;

const PATH: Style = Style::new().bold();
const MARK: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
const DIM: Style = Style::new().dimmed();

/// Folded members named in the text form (JSON lists them all).
const MEMBERS_SHOWN: usize = 3;

fn label_style(r: Relevance) -> Style {
    let color = match r {
        Relevance::Strong => AnsiColor::Green,
        Relevance::Fair => AnsiColor::Yellow,
        Relevance::Weak => return DIM,
    };
    Style::new().fg_color(Some(anstyle::Color::Ansi(color)))
}

/// `text` with the spans matching `query` in [`MARK`] over `base`.
fn marked(query: &str, text: &str, base: Style) -> String {
    let mut out = String::new();
    let mut at = 0;
    for r in matching_spans(query, text) {
        out.push_str(&format!("{base}{}{base:#}", &text[at..r.start]));
        out.push_str(&format!("{MARK}{}{MARK:#}", &text[r.clone()]));
        at = r.end;
    }
    out.push_str(&format!("{base}{}{base:#}", &text[at..]));
    out
}

/// The last path component, or the whole path.
fn file_name(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// The collection line: which collection, and its other members that matched, briefly.
fn collection_line(c: &HitCollection, path: &str) -> String {
    let files = super::output::count(c.members, "file");
    let mut s = format!("collection {} ({files}, {})", c.id, c.template);
    if c.matched == 0 {
        return s;
    }
    let others = super::output::count(c.matched as u64, "other member");
    if c.singled_out {
        // The question named this member (its days, its name): the others matched on
        // what they share, and listing them would bury the one asked for.
        s.push_str(&format!(
            "; singled out by the question, {others} match on what they share (--expand lists them)"
        ));
        return s;
    }
    let dir = path.rsplit_once('/').map(|(d, _)| d);
    let names: Vec<&str> = c
        .matching
        .iter()
        .take(MEMBERS_SHOWN)
        .map(|m| match (dir, m.rsplit_once('/')) {
            (Some(d), Some((md, _))) if d == md => file_name(m),
            _ => m.as_str(),
        })
        .collect();
    s.push_str(&format!("; also matching: {}", names.join(", ")));
    let more = c.matched - names.len();
    if more > 0 {
        s.push_str(&format!(" and {more} more (--expand lists them)"));
    }
    s
}

/// Print `hits` for `query` on stdout.
pub(crate) fn print(query: &str, hits: &[Hit]) -> anyhow::Result<()> {
    let mut out = anstream::stdout().lock();
    for (i, h) in hits.iter().enumerate() {
        let label = label_style(h.relevance);
        writeln!(
            out,
            "{DIM}{:>2}.{DIM:#} {}  {label}{}{label:#}",
            i + 1,
            marked(query, &h.path, PATH),
            h.relevance.as_str()
        )?;
        // The summary starts with the path, printed just above.
        let summary = h
            .summary
            .strip_prefix(h.path.as_str())
            .and_then(|s| s.strip_prefix(" — "))
            .unwrap_or(&h.summary);
        if !summary.is_empty() {
            writeln!(out, "    {}", marked(query, summary, Style::new()))?;
        }
        if !h.reasons.is_empty() {
            let why: Vec<String> = h.reasons.iter().map(ToString::to_string).collect();
            writeln!(out, "    {DIM}why:{DIM:#} {}", why.join("; "))?;
        }
        if let Some(c) = &h.collection {
            writeln!(out, "    {}", collection_line(c, &h.path))?;
        }
        for m in &h.companions {
            writeln!(out, "    with: {} ({})", m.path, m.why)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coll(singled_out: bool) -> HitCollection {
        HitCollection {
            id: "c1".into(),
            template: "crime/crimes_{year}.csv".into(),
            members: 22,
            matching: (2005..2015)
                .map(|y| format!("crime/crimes_{y}.csv"))
                .collect(),
            matched: 21,
            singled_out,
        }
    }

    #[test]
    fn a_singled_out_member_does_not_list_its_siblings() {
        let line = collection_line(&coll(true), "crime/crimes_2021.csv");
        assert!(
            line.contains("singled out") && line.contains("21 other members"),
            "{line}"
        );
        assert!(!line.contains("crimes_2005"), "{line}");
        let line = collection_line(&coll(false), "crime/crimes_2021.csv");
        assert!(
            line.ends_with("also matching: crimes_2005.csv, crimes_2006.csv, crimes_2007.csv and 18 more (--expand lists them)"),
            "{line}"
        );
    }

    #[test]
    fn marks_wrap_the_matching_words_only() {
        let plain = marked("burglaries", "Burglary counts", Style::new());
        assert!(
            plain.contains(&format!("{MARK}Burglary{MARK:#}")),
            "{plain:?}"
        );
        assert!(plain.contains(" counts"), "{plain:?}");
    }
}
