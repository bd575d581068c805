//! HTML pages, parsed with `scraper` (html5ever, the browsers' HTML5 algorithm, so
//! unclosed and misnested tags parse as a browser would): title, heading outline, a word
//! count of the visible text, and every `<table>` as a profiled table.
//!
//! A page with tables is described as [`Content::Tables`] (kind "html table") with the
//! title and outline as file notes; a page without tables as [`Content::Text`].

mod load;

use super::collapse;
use super::markup;
use super::model::{Keep, TableBuilder};
use super::profile::{value_type, ColumnType};
use super::{
    AnalyzeError, Analyzer, Content, Format, Heading, NamedTable, Source, TableSet, TextSummary,
};
use crate::text_util::{cut_bytes, cut_chars};
use scraper::{node::Node, ElementRef, Html, Selector};

/// HTML read at most; longer pages are described from their beginning.
const MAX_HTML: usize = 32 * 1024 * 1024;
/// Tables described per page.
const MAX_TABLES: usize = 50;
/// Data rows profiled per table; further rows are only counted.
const MAX_PROFILE_ROWS: usize = 50_000;
/// Columns of a table (after `colspan` expansion); the HTML spec caps colspan at 1000.
const MAX_COLS: usize = 1000;
/// Rows a `rowspan` may cover (the HTML spec's cap).
const MAX_ROWSPAN: u32 = 65_534;
/// Header rows combined into column names.
const MAX_HEADER_ROWS: usize = 5;
/// Bytes kept of one cell's text.
const MAX_CELL_BYTES: usize = 1024;
const MAX_HEADINGS: usize = 200;
/// Headings shown in the file notes of a page with tables.
const OUTLINE_NOTE_HEADINGS: usize = 8;
const EXCERPT_CHARS: usize = 400;
/// Nesting depth parsed at most (real pages stay far below); see [`markup::parse_cut`].
const MAX_DEPTH: u64 = 1000;
/// Scope-check work allowed to the parser: the sum of the depths of all start tags.
const MAX_PARSE_COST: u64 = 100_000_000;

/// Elements whose content is not visible text.
const HIDDEN: [&str; 5] = ["script", "style", "noscript", "template", "head"];
/// Elements that do not break words apart ("<b>to</b>day" is one word).
const INLINE: [&str; 16] = [
    "a", "abbr", "b", "cite", "code", "em", "font", "i", "mark", "q", "s", "small", "span",
    "strong", "sub", "sup",
];

/// Analyzer for [`Format::Html`].
pub(crate) struct HtmlAnalyzer;

impl Analyzer for HtmlAnalyzer {
    fn name(&self) -> &'static str {
        "html"
    }
    fn version(&self) -> u32 {
        // 5: time in other forms read as time (the time-forms reading rule).
        // 6: missing markers, durations and labelling integers (profile values).
        // 7: quarters (`2001Q1`, `Q1 2001`, a year beside `Q1`..`Q4`) and date-times
        // with a time scale (`2014.03.23_20:24:00_TAI`) read as time; footnoted numbers
        // grouped with spaces or dots (`1 234 p`, `1.234,5 r`) stay numbers.
        // 8: the page covers the span of all its tables' time axes.
        // 9: load lines of renamed columns carry markers (one list) and conversions after
        // reading; time in other forms loads as datetimes.
        9
    }
    fn analyze(&self, src: &Source, _format: Format) -> Result<Content, AnalyzeError> {
        let (bytes, truncated) = src.read_up_to(MAX_HTML)?;
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        let (text, lossy) = match std::str::from_utf8(bytes) {
            Ok(s) => (std::borrow::Cow::Borrowed(s), false),
            // Cut in the middle of a character: drop the partial tail.
            Err(e) if truncated && e.error_len().is_none() => {
                (String::from_utf8_lossy(&bytes[..e.valid_up_to()]), false)
            }
            Err(_) => (String::from_utf8_lossy(bytes), true),
        };
        let mut read_notes = Vec::new();
        if truncated {
            read_notes.push(format!("only the first {} MiB read", MAX_HTML >> 20));
        }
        if lossy {
            read_notes.push("invalid UTF-8 replaced".to_string());
        }
        let mut text: &str = &text;
        let mut parse_cut = false;
        if let Some((at, _)) = markup::parse_cut(text, MAX_DEPTH, MAX_PARSE_COST) {
            read_notes.push(format!(
                "markup too deeply nested to parse whole: the first {at} of {} bytes parsed",
                text.len()
            ));
            // `at` is the offset of a `<`, a character boundary.
            text = text.get(..at).unwrap_or(text);
            parse_cut = true;
        }
        let doc = Html::parse_document(text);
        let title = selector("title")
            .and_then(|s| doc.select(&s).next())
            .map(|t| collapse(&t.text().collect::<String>()))
            .filter(|t| !t.is_empty());
        let visible = text_under(doc.root_element(), true, usize::MAX);
        let words = visible.split_whitespace().count() as u64;
        let outline = outline(&doc, text);
        let tables: Vec<ElementRef> = selector("table")
            .map(|s| doc.select(&s).collect())
            .unwrap_or_default();

        if tables.is_empty() {
            let body = collapse(&visible);
            // The title is not visible text, but it is what the page calls itself.
            let excerpt = match &title {
                Some(t) if !body.starts_with(t.as_str()) => format!("{t} — {body}"),
                _ => body,
            };
            return Ok(Content::Text(TextSummary {
                markdown: false,
                lines: text.lines().count() as u64,
                words,
                truncated: truncated || parse_cut,
                lossy,
                encoding: None,
                outline,
                tables: Vec::new(),
                excerpt: cut_chars(&excerpt, EXCERPT_CHARS),
                terms: super::terms::salient(text, 12),
                definitions: Vec::new(),
                definition_count: 0,
                dates: None,
            }));
        }

        let mut set = TableSet::default();
        if let Some(t) = &title {
            set.notes.push(format!("title: {t}"));
        }
        if !outline.is_empty() {
            let shown: Vec<String> = outline
                .iter()
                .take(OUTLINE_NOTE_HEADINGS)
                .map(|h| format!("{} {}", "#".repeat(h.level as usize), h.text))
                .collect();
            let more = outline.len().saturating_sub(OUTLINE_NOTE_HEADINGS);
            let more = if more > 0 {
                format!(" (+{more} more)")
            } else {
                String::new()
            };
            set.notes
                .push(format!("outline: {}{more}", shown.join(" · ")));
        }
        set.notes.push(format!("{words} words of visible text"));
        set.notes.extend(read_notes);
        let described: Vec<(NamedTable, load::Shape)> = tables
            .iter()
            .take(MAX_TABLES)
            .enumerate()
            .map(|(i, t)| describe_table(*t, i + 1, src.keep()))
            .collect();
        // pandas reads the whole file, and one table it fails on fails the whole call:
        // no load lines for a page read in part or mended, or with a table not vetted.
        let whole = !truncated && !parse_cut && !lossy && tables.len() <= MAX_TABLES;
        let tame = spans_as_pandas(&doc) && described.iter().all(|(_, s)| s.tame());
        let mut pandas_index = (whole && tame).then_some(0usize);
        for (t, (mut nt, shape)) in tables.iter().zip(described) {
            let names: Vec<String> = nt.columns.iter().map(|c| c.name.clone()).collect();
            match (shape.found(), pandas_index) {
                (load::Found::Kept, Some(k)) => {
                    nt.load = shape.call(k, &names);
                    pandas_index = Some(k + 1);
                }
                (load::Found::Skipped, _) => {}
                (_, _) => pandas_index = None,
            }
            let parent = t
                .ancestors()
                .find(|a| matches!(a.value(), Node::Element(e) if e.name() == "table"));
            if let Some(p) = parent {
                if let Some(j) = tables.iter().position(|x| x.id() == p.id()) {
                    nt.notes.push(format!("nested in table {}", j + 1));
                }
            }
            set.tables.push(nt);
        }
        if tables.len() > MAX_TABLES {
            set.notes.push(format!(
                "{} more tables not described",
                tables.len() - MAX_TABLES
            ));
        }
        Ok(Content::Tables(set))
    }
}

/// Whether every `colspan` and `rowspan` of the page is a whole number within the spec's
/// caps, read alike here and by pandas (which fails on the whole page at `int("2px")`
/// and lays out a span of 0 as no cell).
fn spans_as_pandas(doc: &Html) -> bool {
    let Some(sel) = selector("td, th") else {
        return false;
    };
    doc.select(&sel).all(|c| {
        [("colspan", MAX_COLS as u32), ("rowspan", MAX_ROWSPAN)]
            .iter()
            .all(|&(a, cap)| {
                c.attr(a).is_none_or(|v| {
                    v.trim()
                        .parse::<u32>()
                        .is_ok_and(|n| (1..=cap).contains(&n))
                })
            })
    })
}

fn selector(s: &str) -> Option<Selector> {
    Selector::parse(s).ok()
}

/// The text under `el`, without hidden elements (and without nested tables when
/// `nested_tables` is false); block elements separate words.
fn text_under(el: ElementRef<'_>, nested_tables: bool, max_bytes: usize) -> String {
    let mut out = String::new();
    // Explicit stack: deeply nested markup must not overflow the call stack.
    let mut stack: Vec<_> = el.children().rev().collect();
    while let Some(n) = stack.pop() {
        if out.len() >= max_bytes {
            break;
        }
        match n.value() {
            Node::Text(t) => out.push_str(t),
            Node::Element(e) => {
                let name = e.name();
                if HIDDEN.contains(&name) || (!nested_tables && name == "table") {
                    continue;
                }
                if !INLINE.contains(&name) {
                    out.push(' ');
                }
                stack.extend(n.children().rev());
            }
            _ => {}
        }
    }
    out
}

/// h1–h6 in document order, with their source lines when the markup shows them.
fn outline(doc: &Html, source: &str) -> Vec<Heading> {
    let Some(sel) = selector("h1, h2, h3, h4, h5, h6") else {
        return Vec::new();
    };
    let tags = markup::heading_tags(source);
    let mut next_tag = 0;
    let mut out = Vec::new();
    for h in doc.select(&sel).take(MAX_HEADINGS) {
        let level = h.value().name().as_bytes().get(1).map_or(1, |d| d - b'0');
        // Align elements with the `<hN` tags of the source in order; a heading the scan
        // cannot place (made by a script, say) gets line 0.
        let line = match tags.iter().skip(next_tag).position(|&(l, _)| l == level) {
            Some(k) => {
                next_tag += k + 1;
                tags[next_tag - 1].1
            }
            None => 0,
        };
        let text = collapse(&text_under(h, true, 4096));
        if !text.is_empty() {
            out.push(Heading { level, text, line });
        }
    }
    out
}

/// One `<tr>` of a table: its cells' text, spans and whether they are `<th>`.
struct RawCell {
    text: String,
    /// The text pandas reads (lxml's `text_content`, stripped), when the cell holds
    /// only text and inline elements and its text is ASCII with no whitespace but single
    /// spaces, so that pandas' whitespace folding leaves it as is.
    pandas_text: Option<String>,
    th: bool,
    colspan: usize,
    rowspan: u32,
}

/// The rows of `table` itself (not of tables nested in it), in order, with whether each
/// comes from `<thead>`.
fn raw_rows<'a>(table: ElementRef<'a>) -> impl Iterator<Item = (ElementRef<'a>, bool)> + 'a {
    table.child_elements().flat_map(|c| {
        let name = c.value().name();
        let rows: Vec<(ElementRef<'a>, bool)> = match name {
            "tr" => vec![(c, false)],
            "thead" | "tbody" | "tfoot" => c
                .child_elements()
                .filter(|r| r.value().name() == "tr")
                .map(|r| (r, name == "thead"))
                .collect(),
            _ => Vec::new(),
        };
        rows
    })
}

fn raw_cells(tr: ElementRef<'_>) -> Vec<RawCell> {
    tr.child_elements()
        .filter(|c| matches!(c.value().name(), "td" | "th"))
        .map(|c| {
            let span = |a: &str| c.attr(a).and_then(|v| v.trim().parse::<u32>().ok());
            let text = cut_bytes(
                collapse(&text_under(c, false, MAX_CELL_BYTES * 4)),
                MAX_CELL_BYTES,
                "",
            );
            let plain = c.descendants().skip(1).all(|d| match d.value() {
                Node::Text(_) => true,
                Node::Element(e) => INLINE.contains(&e.name()),
                _ => false,
            });
            let raw: String = c.text().collect();
            // lxml may decode non-ASCII text otherwise (a page without a charset is read
            // as Latin-1).
            let ascii = raw.is_ascii();
            let raw = raw.trim();
            let single_spaces =
                !raw.contains("  ") && raw.chars().all(|ch| ch == ' ' || !ch.is_whitespace());
            RawCell {
                pandas_text: (plain && ascii && single_spaces).then(|| raw.to_string()),
                text,
                th: c.value().name() == "th",
                colspan: span("colspan").unwrap_or(1).clamp(1, MAX_COLS as u32) as usize,
                rowspan: span("rowspan").unwrap_or(1).clamp(1, MAX_ROWSPAN),
            }
        })
        .collect()
}

/// Lays rows out on a grid: cells spanning columns repeat their text, cells spanning rows
/// reappear in the rows below, so that every row's n-th value belongs to column n.
#[derive(Default)]
struct SpanGrid {
    /// Per column: text and rows still covered by a rowspan from above.
    pending: Vec<Option<(String, u32)>>,
    /// A rowspan from above was laid out right of a row's end past a gap (pandas closes
    /// such gaps).
    gap_filled: bool,
}

impl SpanGrid {
    /// The row's values (trailing empty ones dropped), whether all its cells are `<th>`
    /// and its width before the drop.
    fn row(&mut self, cells: Vec<RawCell>) -> (Vec<String>, bool, usize) {
        let mut out: Vec<String> = Vec::new();
        let all_th = !cells.is_empty() && cells.iter().all(|c| c.th);
        let take_pending = |out: &mut Vec<String>, pending: &mut Vec<Option<(String, u32)>>| {
            while let Some(Some((t, left))) = pending.get_mut(out.len()) {
                out.push(t.clone());
                *left -= 1;
                if *left == 0 {
                    pending[out.len() - 1] = None;
                }
            }
        };
        for c in cells {
            take_pending(&mut out, &mut self.pending);
            for _ in 0..c.colspan {
                if out.len() >= MAX_COLS {
                    break;
                }
                let col = out.len();
                if c.rowspan > 1 {
                    if self.pending.len() <= col {
                        self.pending.resize(col + 1, None);
                    }
                    self.pending[col] = Some((c.text.clone(), c.rowspan - 1));
                }
                out.push(c.text.clone());
            }
        }
        // Rowspans from above right of this row's last cell.
        while out.len() < self.pending.len() {
            take_pending(&mut out, &mut self.pending);
            if out.len() < self.pending.len() && self.pending[out.len()].is_none() {
                out.push(String::new());
                self.gap_filled = true;
            }
        }
        let width = out.len();
        while out.last().is_some_and(String::is_empty) && out.len() > 1 {
            out.pop();
        }
        (out, all_th, width)
    }

    /// Rowspans reach past the rows laid out.
    fn overflows(&self) -> bool {
        self.pending.iter().any(Option::is_some)
    }
}

/// One table: name, header (`<th>` rows or a first row of text), profiled rows; and
/// what pandas' reading of it depends on.
fn describe_table(table: ElementRef<'_>, number: usize, keep: Keep) -> (NamedTable, load::Shape) {
    let caption = table
        .child_elements()
        .find(|c| c.value().name() == "caption")
        .map(|c| collapse(&text_under(c, false, 4096)))
        .filter(|c| !c.is_empty());
    let name = caption
        .or_else(|| {
            table
                .attr("id")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
        })
        .unwrap_or_else(|| format!("table {number}"));

    let mut grid = SpanGrid::default();
    let mut header_rows: Vec<Vec<String>> = Vec::new();
    let mut builder: Option<TableBuilder> = None;
    let mut rows = 0u64;
    let mut first_row_header = false;
    let mut shape = load::Shape::default();
    let (mut thead_rows, mut leading_th) = (0, 0);
    for (i, (tr, in_thead)) in raw_rows(table).enumerate() {
        let raw = raw_cells(tr);
        let blank = raw.iter().all(|c| c.text.is_empty());
        if raw.is_empty() {
            shape.cell_less_rows += 1;
        } else {
            shape.rows_with_cells += 1;
            shape.blank_rows += usize::from(blank);
        }
        if in_thead && thead_rows != i {
            // pandas puts the `<thead>` rows first.
            shape.irregular = true;
        }
        thead_rows += usize::from(in_thead);
        let th_row = !raw.is_empty() && raw.iter().all(|c| c.th);
        // A blank row pandas may take as a header row (it fails on a header of those).
        shape.blank_head_like |= blank && (in_thead || th_row);
        if leading_th == i && th_row {
            leading_th += 1;
        }
        if i == 0 {
            shape.head_texts = raw
                .iter()
                .flat_map(|c| std::iter::repeat_n(c.pandas_text.clone(), c.colspan))
                .collect();
        }
        let (cells, all_th, width) = grid.row(raw);
        shape.width = shape.width.max(width);
        if builder.is_none() {
            let leading = header_rows.len() == i && header_rows.len() < MAX_HEADER_ROWS;
            if leading && (in_thead || all_th) {
                header_rows.push(cells);
                continue;
            }
            // No <th>: a first row of text (not numbers or dates) names the columns.
            if i == 0 && looks_like_header(&cells) {
                first_row_header = true;
                header_rows.push(cells);
                continue;
            }
            builder = Some(TableBuilder::new(column_names(&header_rows)).keeping(keep));
        }
        rows += 1;
        shape.data_text |= !blank;
        if let Some(b) = builder.as_mut() {
            if (b.rows() as usize) < MAX_PROFILE_ROWS {
                b.push_row(cells.iter());
            }
        }
    }
    let builder =
        builder.unwrap_or_else(|| TableBuilder::new(column_names(&header_rows)).keeping(keep));
    let profiled = builder.rows();
    let mut t = builder.finish(name, "html table");
    t.rows = rows;
    if !header_rows.is_empty() {
        t.header_row = Some(header_rows.len() as u64);
    }
    if header_rows.len() > 1 {
        t.notes
            .push(format!("header spans rows 1–{}", header_rows.len()));
    }
    if first_row_header {
        t.notes
            .push("no <th> cells: first row taken as header".into());
    }
    if profiled < rows {
        t.mark_sample(profiled);
    }
    shape.pandas_head = if thead_rows > 0 {
        thead_rows
    } else {
        leading_th
    };
    shape.header_rows = header_rows.len();
    shape.first_row_header = first_row_header;
    let sections = |name: &str| {
        table
            .child_elements()
            .filter(|c| c.value().name() == name)
            .count()
    };
    // Rows outside a `<tbody>` get one here (the HTML5 algorithm) but not from lxml,
    // and pandas reads them after the `<tbody>` rows: with two, the order is unknown.
    shape.irregular |=
        grid.gap_filled || grid.overflows() || sections("tfoot") > 0 || sections("tbody") > 1;
    let inside = |name: &str| {
        table
            .descendants()
            .skip(1)
            .any(|d| matches!(d.value(), Node::Element(e) if e.name() == name))
    };
    shape.holds_table = inside("table");
    shape.styled = inside("style")
        || table.ancestors().chain(table.descendants()).any(|d| {
            matches!(d.value(), Node::Element(e)
                if e.attr("style").is_some_and(|s| s.to_ascii_lowercase().contains("display")))
        });
    shape.any_text = table.descendants().any(|d| {
        matches!(d.value(), Node::Element(e) if matches!(e.name(), "td" | "th"))
            && ElementRef::wrap(d).is_some_and(|c| c.text().any(|s| !s.trim().is_empty()))
    });
    (t, shape)
}

fn looks_like_header(cells: &[String]) -> bool {
    let filled: Vec<&String> = cells.iter().filter(|c| !c.is_empty()).collect();
    !filled.is_empty() && filled.iter().all(|c| value_type(c) == ColumnType::Text)
}

/// Column names from the header rows: the distinct non-empty parts, top to bottom,
/// joined by " / " (a spanning group heading over its sub-headings).
fn column_names(header_rows: &[Vec<String>]) -> Vec<String> {
    let width = header_rows.iter().map(Vec::len).max().unwrap_or(0);
    (0..width)
        .map(|c| {
            let mut parts: Vec<&str> = Vec::new();
            for r in header_rows {
                if let Some(p) = r.get(c).map(String::as_str).filter(|p| !p.is_empty()) {
                    if !parts.contains(&p) {
                        parts.push(p);
                    }
                }
            }
            parts.join(" / ")
        })
        .collect()
}

#[cfg(test)]
mod tests;
