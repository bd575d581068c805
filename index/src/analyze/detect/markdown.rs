//! Telling Markdown from text that only comments with `#`.

/// Bytes of a text head looked at for Markdown structure.
const MARKDOWN_SNIFF_BYTES: usize = 16 * 1024;

/// Markdown has structure: fenced code, tables with a delimiter row, links, or headings
/// that stand apart and head prose. A `#` line alone is not enough: data and scientific
/// text files comment with `#` (`# Station: 260`, `## 2161 345600.0`), in runs of such
/// lines or right above their rows.
pub(super) fn looks_markdown(text: &[u8]) -> bool {
    let s = String::from_utf8_lossy(&text[..text.len().min(MARKDOWN_SNIFF_BYTES)]);
    let lines: Vec<&str> = s.lines().map(str::trim_end).collect();
    let blank = |i: usize| lines.get(i).is_none_or(|l| l.trim().is_empty());
    let (mut headings, mut comment_like) = (0usize, 0usize);
    for (i, raw) in lines.iter().enumerate() {
        let l = raw.trim_start();
        if l.starts_with("```") || l.starts_with("~~~") {
            return true;
        }
        // A table's delimiter row: `|---|:--:|` or `--- | ---`.
        if l.contains('|')
            && l.contains("---")
            && l.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
            && i > 0
            && lines[i - 1].contains('|')
        {
            return true;
        }
        if markdown_link(l) {
            return true;
        }
        let level = l.bytes().take_while(|&b| b == b'#').count();
        if level == 0 || !l[level..].starts_with(' ') || level > 6 {
            if level > 0 {
                comment_like += 1;
            }
            continue;
        }
        // A heading stands apart (blank lines around it, where a comment sits on the
        // code or rows it describes) and the next line is prose: words starting with a
        // letter, a list item or emphasis.
        let apart = (i == 0 || blank(i - 1)) && blank(i + 1);
        let next = (i + 1..lines.len())
            .find(|&j| !blank(j))
            .map(|j| lines[j].trim_start());
        let prose = next.is_some_and(|n| {
            n.starts_with(|c: char| c.is_alphabetic())
                && n.split_whitespace().count() >= 2
                && n.chars().filter(|c| c.is_alphabetic()).count() * 2 > n.chars().count()
                || n.starts_with("- ")
                || n.starts_with("* ")
                || n.starts_with("**")
        });
        if apart && prose {
            headings += 1;
        } else {
            comment_like += 1;
        }
    }
    headings > 0 && headings >= comment_like
}

/// `[text](target)`: a Markdown link.
fn markdown_link(l: &str) -> bool {
    l.match_indices("](").any(|(i, _)| {
        l[..i].contains('[')
            && l[i + 2..]
                .find(')')
                .is_some_and(|j| j > 0 && !l[i + 2..i + 2 + j].contains(' '))
    })
}

#[cfg(test)]
mod tests {
    use super::super::{detect, Format};
    use super::*;
    use std::path::Path;

    #[test]
    fn comment_lines_are_text_and_markdown_needs_structure() {
        let text = |s: &str| detect(Path::new("notes.txt"), s.as_bytes(), s.len() as u64);
        // `#` comment lines, in runs or right above what they describe: text.
        assert_eq!(
            text("# Setup notes\n# written by hand\nRun the script twice.\nThen check the log.\n"),
            Format::Text
        );
        assert_eq!(
            text("# Load the file\nimport os\n# and read it\nprint(os.getcwd())\n"),
            Format::Text
        );
        // Markdown structure: headings over paragraphs, fenced code, tables, links.
        assert_eq!(
            text("# Guide\n\nHow to use the data.\n\n## Files\n\n- a.csv: sales\n"),
            Format::Markdown
        );
        assert_eq!(text("Build it:\n\n```\nmake\n```\n"), Format::Markdown);
        assert!(looks_markdown(
            b"Prices:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
        ));
        assert_eq!(
            text("See [the docs](https://example.org/docs) for more.\nAnd more.\n"),
            Format::Markdown
        );
        assert_eq!(
            detect(Path::new("notes"), b"# Title\n\nSome text.\n", 20),
            Format::Markdown
        );
    }
}
