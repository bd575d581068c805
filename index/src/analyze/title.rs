//! A file's own title, read from what its description already holds: a Markdown or
//! text document's one top heading, an HTML page's `<title>`, a sheet's title row, the
//! title line above a CSV table, a document's metadata title. Search hits show it beside
//! the format and shape, which say what a file is but not what it is about.

use super::{Content, Description};
use crate::text_util::cut_chars;

/// Characters of a title shown at most: a hit's line, not a paragraph.
pub(crate) const TITLE_CHARS: usize = 100;

impl Description {
    /// The file's own title, when its content names one (see the module).
    pub fn title(&self) -> Option<String> {
        let raw = match &self.content {
            Content::Text(t) => top_heading(&t.outline),
            Content::Media(m) => m.title.clone(),
            Content::Table(t) => t.preamble.first().cloned(),
            Content::Tables(set) => noted(&set.notes, "title: ").or_else(|| {
                set.tables
                    .iter()
                    .find_map(|t| noted_row(&t.notes))
                    .or_else(|| named_table(set))
            }),
            Content::Json(_) | Content::Archive(_) | Content::Arrays(_) | Content::Opaque(_) => {
                None
            }
        }?;
        let t = super::collapse(&raw);
        let t = t.trim_matches(|c: char| c == '#' || c.is_whitespace());
        (!t.is_empty()).then(|| cut_chars(t, TITLE_CHARS))
    }
}

/// Lines a document's title line may come after (blank lines, a badge).
const TITLE_LINE: u64 = 3;

/// The first heading, at the top level, when it opens the document (its title line, even
/// if a stray heading of that level follows) or is the only one at that level; not the
/// first of several sections further down.
fn top_heading(outline: &[super::Heading]) -> Option<String> {
    let first = outline.first()?;
    let top = outline.iter().map(|h| h.level).min()?;
    let at_top = outline.iter().filter(|h| h.level == top).count();
    (first.level == top && (first.line <= TITLE_LINE || at_top == 1)).then(|| first.text.clone())
}

/// The rest of the first note starting with `prefix`.
fn noted(notes: &[String], prefix: &str) -> Option<String> {
    notes
        .iter()
        .find_map(|n| n.strip_prefix(prefix))
        .map(String::from)
}

/// A sheet's title row (`title row 1: Quarterly sales`).
fn noted_row(notes: &[String]) -> Option<String> {
    notes.iter().find_map(|n| {
        let rest = n.strip_prefix("title row ")?;
        let (_, title) = rest.split_once(": ")?;
        Some(title.to_string())
    })
}

/// The name of a file's only table when the analyzer found it in the file (a title line
/// above it), not one it made up (`table 1`) nor a sheet's default (`Sheet1`).
fn named_table(set: &super::TableSet) -> Option<String> {
    let [t] = set.tables.as_slice() else {
        return None;
    };
    let generic = |prefix: &str| {
        t.name
            .to_lowercase()
            .strip_prefix(prefix)
            .is_some_and(|n| n.trim().chars().all(|c| c.is_ascii_digit()))
    };
    (t.kind == "table" && !generic("table") && !generic("sheet")).then(|| t.name.clone())
}

#[cfg(test)]
mod tests {
    use crate::analyze::{describe, Source};

    fn title(name: &str, text: &str) -> Option<String> {
        describe(&Source::from_bytes(name, text.as_bytes().to_vec())).title()
    }

    #[test]
    fn a_document_names_its_title_and_a_list_of_sections_does_not() {
        let md =
            "# Merchant Guide to Fees\n\nIntro.\n\n## 1. Scope\n\ntext\n\n## 2. Fees\n\nmore\n";
        assert_eq!(
            title("manual.md", md).as_deref(),
            Some("Merchant Guide to Fees")
        );
        // Its title line stays the title when a stray heading of its level follows.
        let stray = format!("{md}\n# 2.1 Volumes\n\ntext\n");
        assert_eq!(
            title("manual.md", &stray).as_deref(),
            Some("Merchant Guide to Fees")
        );
        let sections = "Notes kept while setting up,\nin the order done.\n\n# Install\n\nrun it\n\n# Use\n\ncall it\n";
        assert_eq!(title("notes.md", sections), None);
    }

    #[test]
    fn a_page_a_report_csv_and_a_long_title_are_read() {
        let html = "<html><head><title>Fleet  report</title></head><body>\
            <table><tr><th>ship</th><th>tons</th></tr><tr><td>A</td><td>3</td></tr></table>\
            </body></html>";
        assert_eq!(title("f.html", html).as_deref(), Some("Fleet report"));
        let csv =
            "Complaints by Category\n\nCategory,2019,2020\nNoise,3,4\nParking,5,6\nTrash,1,2\n";
        assert_eq!(
            title("r.csv", csv).as_deref(),
            Some("Complaints by Category")
        );
        assert_eq!(title("plain.csv", "a,b\n1,2\n3,4\n"), None);
        let long = format!("# {}\n\ntext\n", "word ".repeat(60));
        let t = title("long.md", &long).unwrap();
        assert_eq!(t.chars().count(), super::TITLE_CHARS);
        assert!(t.ends_with('…'), "{t}");
    }
}
