//! Reading a documentation file into the list of columns it documents.
//!
//! Two shapes, tried in order:
//! - a **data dictionary**: a delimited table with a header naming a column of names
//!   (`Variable`, `Name`, `Field`, `Column`…) and optionally `Description`/`Label` and
//!   `Units`/`Unit` columns; one documented column per row;
//! - a **format text**: lines that each describe one column, in one of the layouts such
//!   files use — `1  YEAR  I4  year` (position, name, Fortran format, description),
//!   `TEMP  F6.1  degC  air temperature` (name, format, unit, description),
//!   `3-6  A4  Station ID` (byte range, format, name), `Column 3: Temperature (deg C)`,
//!   or numbered lines `1  YEAR  year`. Other lines (titles, prose) are ignored; the
//!   layout matching the most lines wins.
//!
//! The patterns are simple token tests, written by hand rather than with `regex` (not a
//! dependency of this crate, and each test is a few lines).

mod listing;

use super::{DocColumn, Listing, Span};
use crate::analyze::rules::{self, ReadingRule};

/// A format text must describe at least this many columns: a single matching line is
/// too easily a sentence of prose.
const MIN_TEXT_COLUMNS: usize = 2;
/// Lines of a data dictionary searched for its header.
const HEADER_LINES: usize = 10;
/// Longest name taken from a line, in characters: past it, a "name" is a sentence.
const MAX_NAME_CHARS: usize = 60;

/// Header cells (lowercased, letters and digits only) naming the column of names, best
/// first.
const NAME_HEADERS: [&str; 14] = [
    "variable",
    "variablename",
    "varname",
    "var",
    "name",
    "fieldname",
    "field",
    "columnname",
    "attribute",
    "attributename",
    "parameter",
    "column",
    "code",
    "item",
];
/// Header cells of the description column.
const DESCRIPTION_HEADERS: [&str; 9] = [
    "description",
    "label",
    "variablelabel",
    "variabledescription",
    "definition",
    "meaning",
    "desc",
    "longname",
    "details",
];
/// Header cells of the unit column.
const UNIT_HEADERS: [&str; 6] = [
    "units",
    "unit",
    "uom",
    "unitofmeasure",
    "unitsofmeasure",
    "measurementunit",
];

/// Units recognised as a bare token after a format specifier (`TEMP F6.1 degC …`);
/// bracketed tokens and tokens with `/`, `°` or `%` count whatever they say.
const UNIT_WORDS: [&str; 46] = [
    "degc", "degf", "degk", "deg", "c", "k", "mm", "cm", "m", "km", "in", "ft", "kg", "g", "mg",
    "ug", "l", "ml", "hpa", "mb", "mbar", "pa", "kpa", "kt", "kts", "knots", "mph", "ppm", "ppb",
    "psu", "dbar", "w", "kw", "mw", "kwh", "mwh", "j", "kj", "s", "sec", "min", "h", "hr", "hours",
    "days", "percent",
];

/// The columns `text` documents, in order; `None` when it documents none (or names one
/// column twice, which no loader accepts).
pub fn parse(text: &str) -> Option<Vec<DocColumn>> {
    listing(text).map(|l| l.columns)
}

/// The columns `text` documents with their positions when it gives them; `None` when it
/// documents none (or names one column twice, which no loader accepts). Field lists that
/// only positions make columns (a Fortran format statement, ranges, widths, a SAS
/// `input`) are read under [`ReadingRule::FormatCompanion`].
pub fn listing(text: &str) -> Option<Listing> {
    let by_content = rules::on(ReadingRule::FormatCompanion);
    let mut found = dictionary(text)
        .or_else(|| aligned_dictionary(text))
        .or_else(|| format_text(text));
    if by_content {
        if let Some(l) = listing::statement_listing(text, found.clone()) {
            found = Some(l);
        }
        // Lines with ranges or widths: they place the fields of a listing read
        // without positions (`1  year  4` is also a numbered line), or are the listing.
        if found.as_ref().is_none_or(|f| f.spans.is_none()) {
            if let Some(r) = listing::ranged_listing(text).or_else(|| listing::sas_input(text)) {
                found = match found {
                    None => Some(r),
                    Some(mut f) => {
                        let same = f.columns.len() == r.columns.len()
                            && f.columns
                                .iter()
                                .zip(&r.columns)
                                .all(|(a, b)| a.name.eq_ignore_ascii_case(&b.name));
                        if same {
                            f.spans = r.spans;
                        }
                        Some(f)
                    }
                };
            }
        }
    } else if let Some(l) = found.as_mut() {
        l.spans = None;
    }
    let mut l = found?;
    if l.spans.as_deref().is_some_and(|s| !plausible(s)) {
        if !l.count_ok {
            return None;
        }
        l.spans = None;
    }
    let mut seen = std::collections::HashSet::new();
    l.columns
        .iter()
        .all(|c| seen.insert(c.name.to_lowercase()))
        .then_some(l)
}

/// A listing of columns without positions, counted as the usual layouts are.
fn names_only(columns: Vec<DocColumn>) -> Listing {
    Listing {
        numeric: vec![None; columns.len()],
        columns,
        spans: None,
        count_ok: true,
    }
}

/// Characters a record's first field may start after: a layout starts at the line's
/// start, give or take a few blanks.
const MAX_FIRST_START: usize = 8;

/// Whether spans look like a record's layout: the first field near the line's start,
/// the fields covering at least half of the record.
fn plausible(spans: &[Span]) -> bool {
    let first = spans.iter().map(|s| s.0).min().unwrap_or(0);
    let total = spans.iter().map(|s| s.1).max().unwrap_or(0);
    let covered: usize = spans.iter().map(|s| s.1 - s.0).sum();
    first <= MAX_FIRST_START && covered * 2 >= total
}

/// Whether spans, in any order, leave no character to two fields.
fn disjoint(spans: &[(usize, usize)]) -> bool {
    let mut sorted = spans.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).all(|w| w[0].1 <= w[1].0) && spans.iter().all(|s| s.0 < s.1)
}

/// Whether a description is of a table with a header naming a column of names: what a
/// delimited data dictionary must have.
pub fn names_header(d: &crate::analyze::Description) -> bool {
    let Some((header, columns)) = d.content.single_table() else {
        return false;
    };
    header
        && columns
            .iter()
            .any(|c| NAME_HEADERS.contains(&norm_header(&c.name).as_str()))
}

fn norm_header(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn non_empty(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// A delimited data dictionary: the delimiter that splits the first non-empty line into
/// cells of which one names the column of names.
fn dictionary(text: &str) -> Option<Listing> {
    for delim in [b',', b'\t', b';', b'|'] {
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delim)
            .flexible(true)
            .has_headers(false)
            .from_reader(text.as_bytes());
        let mut records = reader.records().filter_map(|r| r.ok());
        // The header: among the first lines (a title may stand above it), the first of
        // two or more cells with one naming a column of names.
        let Some(heads) = records.by_ref().take(HEADER_LINES).find_map(|r| {
            let heads: Vec<String> = r.iter().map(norm_header).collect();
            (heads.len() > 1 && heads.iter().any(|h| NAME_HEADERS.contains(&h.as_str())))
                .then_some(heads)
        }) else {
            continue;
        };
        let find = |words: &[&str]| words.iter().find_map(|w| heads.iter().position(|h| h == w));
        let rows: Vec<csv::StringRecord> = records.collect();
        // The column of names: the best-ranked header whose values are not all numbers
        // (a `Column` header may hold positions, with the names beside them).
        let name = NAME_HEADERS.iter().find_map(|w| {
            let i = heads.iter().position(|h| h == w)?;
            let names: Vec<&str> = rows
                .iter()
                .filter_map(|r| r.get(i))
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            (!names.is_empty() && !names.iter().all(|s| s.parse::<f64>().is_ok())).then_some(i)
        });
        let Some(name) = name else { continue };
        let (desc, unit) = (find(&DESCRIPTION_HEADERS), find(&UNIT_HEADERS));
        let places = Places {
            range: find(&RANGE_HEADERS),
            start: find(&START_HEADERS),
            end: find(&END_HEADERS),
            width: find(&WIDTH_HEADERS),
            code: find(&CODE_HEADERS),
        };
        let mut placed = Vec::new();
        let cols: Vec<DocColumn> = rows
            .iter()
            .filter_map(|r| {
                let col = DocColumn {
                    name: non_empty(r.get(name)?)?,
                    unit: unit
                        .and_then(|i| r.get(i))
                        .and_then(non_empty)
                        .filter(|u| !matches!(u.as_str(), "-" | "--" | "n/a" | "none")),
                    description: desc.and_then(|i| r.get(i)).and_then(non_empty),
                };
                placed.push(places.of(r));
                Some(col)
            })
            .collect();
        if !cols.is_empty() {
            let mut l = names_only(cols);
            (l.spans, l.numeric) = places.spans(&placed, l.columns.len());
            return Some(l);
        }
    }
    None
}

/// Header cells of a dictionary's columns that place a field: a character range
/// (`1-4`), its first and last characters, its width, its format code.
const RANGE_HEADERS: [&str; 9] = [
    "columns",
    "cols",
    "bytes",
    "byte",
    "position",
    "positions",
    "location",
    "colspan",
    "range",
];
const START_HEADERS: [&str; 6] = [
    "start",
    "begin",
    "startcol",
    "startcolumn",
    "startpos",
    "from",
];
const END_HEADERS: [&str; 6] = ["end", "stop", "endcol", "endcolumn", "endpos", "to"];
const WIDTH_HEADERS: [&str; 4] = ["width", "length", "len", "fieldwidth"];
const CODE_HEADERS: [&str; 3] = ["format", "fmt", "fortranformat"];

/// Where a dictionary's columns place each field.
struct Places {
    range: Option<usize>,
    start: Option<usize>,
    end: Option<usize>,
    width: Option<usize>,
    code: Option<usize>,
}

/// One row's place: (start counted from 1, end included) or a width, and a code's kind.
type Place = (Option<(u64, u64)>, Option<u64>, Option<char>);

impl Places {
    fn of(&self, r: &csv::StringRecord) -> Place {
        let cell = |i: Option<usize>| i.and_then(|i| r.get(i)).map(str::trim);
        let int = |i: Option<usize>| cell(i).and_then(|c| c.parse::<u64>().ok());
        let code = cell(self.code).and_then(listing::code_width);
        let range = cell(self.range)
            .and_then(listing::numbers)
            .and_then(|n| match n.as_slice() {
                [a, b] => Some((*a, *b)),
                _ => None,
            });
        let width = int(self.width).or(code.map(|c| c.1 as u64));
        let span = range.or_else(|| match (int(self.start), int(self.end), width) {
            (Some(s), Some(e), _) => Some((s, e)),
            (Some(s), None, Some(w)) if w > 0 => Some((s, s + w - 1)),
            _ => None,
        });
        (span, width, code.map(|c| c.0))
    }

    /// The rows' spans, when every row has one (or a width, laid end to end) and they
    /// make a layout; and which fields are numbers by their codes.
    fn spans(&self, placed: &[Place], n: usize) -> (Option<Vec<Span>>, Vec<Option<bool>>) {
        let numeric = placed
            .iter()
            .map(|p| p.2.map(listing::numeric_kind))
            .collect::<Vec<_>>();
        let numeric = if numeric.len() == n {
            numeric
        } else {
            vec![None; n]
        };
        if placed.len() != n {
            return (None, numeric);
        }
        let spans: Option<Vec<(usize, usize)>> = if placed.iter().all(|p| p.0.is_some()) {
            placed
                .iter()
                .map(|p| {
                    let (s, e) = p.0?;
                    (s >= 1 && e >= s).then(|| (s as usize - 1, e as usize))
                })
                .collect()
        } else if placed.iter().all(|p| p.1.is_some_and(|w| w > 0)) {
            let mut at = 0usize;
            Some(
                placed
                    .iter()
                    .map(|p| {
                        let w = p.1.unwrap_or(0) as usize;
                        at += w;
                        (at - w, at)
                    })
                    .collect(),
            )
        } else {
            None
        };
        (spans.filter(|s| disjoint(s)), numeric)
    }
}

/// Cells of a whitespace-aligned text line with their starting column: runs of two or
/// more blanks (or a tab) part them, so that one space inside a description does not.
fn aligned_cells(line: &str) -> Vec<(usize, &str)> {
    let mut cells = Vec::new();
    let mut start: Option<(usize, usize)> = None; // (byte, char column)
    let mut blanks = 0;
    for (col, (i, c)) in line.char_indices().enumerate() {
        if c == ' ' || c == '\t' {
            blanks += if c == '\t' { 2 } else { 1 };
            continue;
        }
        if blanks >= 2 || start.is_none() {
            if let Some((s, at)) = start {
                cells.push((at, line[s..i].trim()));
            }
            start = Some((i, col));
        }
        blanks = 0;
    }
    if let Some((s, at)) = start {
        cells.push((at, line[s..].trim()));
    }
    cells
}

/// A data dictionary laid out as an aligned text table (`Field  Name  Units  Description`
/// over its rows), as format files often hold one: its header among the first lines, its
/// rows up to the next blank line, each cell put under the header cell it starts nearest
/// to (a blank unit leaves its column empty), then read like a tab-separated dictionary.
fn aligned_dictionary(text: &str) -> Option<Listing> {
    let lines: Vec<&str> = text.lines().collect();
    let (at, header) = lines
        .iter()
        .take(HEADER_LINES * 2)
        .enumerate()
        .find_map(|(i, l)| {
            let cells = aligned_cells(l);
            (cells.len() > 1
                && cells
                    .iter()
                    .any(|(_, c)| NAME_HEADERS.contains(&norm_header(c).as_str())))
            .then_some((i, cells))
        })?;
    let mut block = vec![header
        .iter()
        .map(|(_, c)| *c)
        .collect::<Vec<_>>()
        .join("\t")];
    for line in lines[at + 1..].iter().take_while(|l| !l.trim().is_empty()) {
        let mut row = vec![""; header.len()];
        for (col, cell) in aligned_cells(line) {
            let nearest = (0..header.len())
                .min_by_key(|&h| header[h].0.abs_diff(col))
                .unwrap_or(0);
            if !row[nearest].is_empty() {
                return None; // two cells under one header: not an aligned table
            }
            row[nearest] = cell;
        }
        block.push(row.join("\t"));
    }
    if block.len() <= MIN_TEXT_COLUMNS {
        return None;
    }
    let mut found = dictionary(&block.join("\n"))?;
    // Without a unit column, a unit may stand in the name: `Rainfall (mm)`.
    for c in found.columns.iter_mut().filter(|c| c.unit.is_none()) {
        (c.name, c.unit) = split_unit(&c.name);
    }
    Some(found)
}

/// The layouts of [`format_text`] lines, in order of preference on a tie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// `Column 3: Temperature (deg C)`.
    Labelled,
    /// A line with a format specifier (`I4`, `F6.1`, `A10`).
    Specifier,
    /// `1  YEAR  year`, numbered 1, 2, 3….
    Numbered,
}

/// One line read as a column, with its stated position when it has one.
struct Line {
    layout: Layout,
    position: Option<u64>,
    column: DocColumn,
    /// Its characters (start, end) when the line states them (`1-4`, `1  4`).
    span: Option<(usize, usize)>,
    /// Its format code's kind and width (`F6.1` → `F`, 6).
    code: Option<(char, usize)>,
}

/// A format text: every line read in each layout, the layout reading the most lines kept.
fn format_text(text: &str) -> Option<Listing> {
    let lines: Vec<Line> = text
        .lines()
        .filter_map(|l| labelled(l).or_else(|| specifier(l)).or_else(|| numbered(l)))
        .collect();
    let best = [Layout::Labelled, Layout::Specifier, Layout::Numbered]
        .into_iter()
        .map(|k| (k, lines.iter().filter(|l| l.layout == k).count()))
        .max_by_key(|&(k, n)| (n, std::cmp::Reverse(k as u8)))?;
    let mut chosen: Vec<Line> = lines.into_iter().filter(|l| l.layout == best.0).collect();
    if chosen.len() < MIN_TEXT_COLUMNS {
        return None;
    }
    // Stated positions order the columns; numbered lines must count 1, 2, 3… (else
    // they are a list of something else).
    if chosen.iter().all(|l| l.position.is_some()) {
        chosen.sort_by_key(|l| l.position);
        if chosen.windows(2).any(|w| w[0].position == w[1].position) {
            return None;
        }
    }
    if best.0 == Layout::Numbered
        && chosen
            .iter()
            .enumerate()
            .any(|(i, l)| l.position != Some(i as u64 + 1))
    {
        return None;
    }
    // Positions: stated on every line, or laid end to end from the format codes; not
    // when a "name" reads as a sentence or code (`License: …`, `THEN = Y2 M2`).
    let names_like = chosen.iter().all(|l| {
        !l.column
            .name
            .contains([':', ';', '=', '<', '>', '{', '}', ','])
            && l.column.name.split_whitespace().count() <= 4
    });
    let spans: Option<Vec<Span>> = if !names_like {
        None
    } else if chosen.iter().all(|l| l.span.is_some()) {
        chosen.iter().map(|l| l.span).collect()
    } else if chosen.iter().all(|l| l.code.is_some()) {
        let mut at = 0;
        chosen
            .iter()
            .map(|l| {
                let w = l.code.map_or(0, |c| c.1);
                at += w;
                Some((at - w, at))
            })
            .collect()
    } else {
        None
    };
    let numeric = chosen
        .iter()
        .map(|l| l.code.map(|c| listing::numeric_kind(c.0)))
        .collect();
    Some(Listing {
        columns: chosen.into_iter().map(|l| l.column).collect(),
        spans: spans.filter(|s| disjoint(s)),
        numeric,
        count_ok: true,
    })
}

/// `name (unit)` or `name [unit]` → (name, unit).
fn split_unit(s: &str) -> (String, Option<String>) {
    let s = s.trim();
    for (open, close) in [('(', ')'), ('[', ']')] {
        if let Some(inner) = s.strip_suffix(close) {
            if let Some(at) = inner.rfind(open) {
                let (name, unit) = (inner[..at].trim(), inner[at + 1..].trim());
                if !name.is_empty() && !unit.is_empty() && unit.chars().count() <= 16 {
                    return (name.to_string(), Some(unit.to_string()));
                }
            }
        }
    }
    (s.to_string(), None)
}

fn usable_name(s: &str) -> bool {
    let n = s.chars().count();
    n > 0 && n <= MAX_NAME_CHARS && s.chars().any(char::is_alphabetic)
}

/// `Column 3: Temperature (deg C)`, `Field 2 - Station`, `Variable #1 = YEAR`.
fn labelled(line: &str) -> Option<Line> {
    let t = line.trim();
    let lower = t.to_lowercase();
    let word = ["column", "col.", "col", "field", "variable", "var"]
        .into_iter()
        .find(|w| lower.starts_with(w))?;
    let rest = t[word.len()..].trim_start();
    let rest = rest.strip_prefix('#').unwrap_or(rest).trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let position: u64 = rest[..digits].parse().ok()?;
    let rest = rest[digits..].trim_start();
    let sep = rest.chars().next()?;
    if !matches!(sep, ':' | '.' | ')' | '=' | '-' | '–') {
        return None;
    }
    let (name, unit) = split_unit(&rest[sep.len_utf8()..]);
    usable_name(&name).then_some(Line {
        span: None,
        code: None,
        layout: Layout::Labelled,
        position: Some(position),
        column: DocColumn {
            name,
            unit,
            description: None,
        },
    })
}

/// A Fortran-style format specifier: `I4`, `F6.1`, `A10`, `E12.4`, `(F8.2)`.
fn is_specifier(tok: &str) -> bool {
    let t = tok.trim_matches(|c| c == '(' || c == ')');
    let mut chars = t.chars();
    let Some(kind) = chars.next() else {
        return false;
    };
    let rest = chars.as_str();
    let (w, d) = rest.split_once('.').unwrap_or((rest, "0"));
    "AIFEDGLZaifedglz".contains(kind)
        && !w.is_empty()
        && w.chars().all(|c| c.is_ascii_digit())
        && !d.is_empty()
        && d.chars().all(|c| c.is_ascii_digit())
}

/// A position: `3`, `3.`, `3)`, or a byte range `3-6`.
fn position(tok: &str) -> Option<u64> {
    let t = tok.trim_end_matches(['.', ')', ':']);
    let first = t.split_once('-').map_or(t, |(a, b)| {
        if b.chars().all(|c| c.is_ascii_digit()) && !b.is_empty() {
            a
        } else {
            ""
        }
    });
    first.parse().ok()
}

fn is_unit(tok: &str) -> bool {
    let bracketed = (tok.starts_with('(') && tok.ends_with(')'))
        || (tok.starts_with('[') && tok.ends_with(']'));
    let lower = tok.to_lowercase();
    bracketed
        || tok.contains(['/', '°', '%'])
        || UNIT_WORDS.contains(&lower.as_str())
        // m2, m3, km2…
        || (lower.len() <= 4
            && lower.ends_with(['2', '3'])
            && lower[..lower.len() - 1].chars().all(|c| c.is_ascii_alphabetic()))
}

/// A line with a format specifier: `[position] [name] SPEC [unit] [description]`; without
/// a name before the specifier, the text after it is the name (`3-6  A4  Station ID`).
fn specifier(line: &str) -> Option<Line> {
    let toks: Vec<&str> = line.split_whitespace().collect();
    let at = toks.iter().position(|t| is_specifier(t))?;
    let code = listing::code_width(toks[at]);
    let mut pre = &toks[..at];
    let pos = pre.first().and_then(|t| position(t));
    // Leading numbers: the field's number, its range or first and last characters
    // (`1  1-4  I4`, `1  4  I4`, `2  5  6  I2`), told apart by the code's width.
    let lead = pre
        .iter()
        .take(3)
        .take_while(|t| listing::numbers(t).is_some())
        .count();
    let nums: Vec<u64> = pre[..lead]
        .iter()
        .filter_map(|t| listing::numbers(t))
        .flatten()
        .collect();
    let range = pre[..lead].iter().any(|t| t.contains('-'));
    let w = code.map_or(0, |c| c.1 as u64);
    let fits = |a: u64, b: u64| a >= 1 && b >= a && b - a + 1 == w;
    let span = match nums.as_slice() {
        [a, b] if range || fits(*a, *b) => Some((*a, *b)),
        [_, a, b] if fits(*a, *b) => Some((*a, *b)),
        [_, a] if !range && *a >= 1 && w > 0 && lead == 2 => Some((*a, *a + w - 1)),
        _ => None,
    }
    .map(|(a, b)| (a as usize - 1, b as usize));
    if pos.is_some() {
        pre = &pre[lead.max(1)..];
    }
    let post = &toks[at + 1..];
    let column = if pre.is_empty() {
        // Without a name before the specifier, only a position makes it a column line.
        pos?;
        // The name, then after two blanks what it means: `1  I4  year   calendar year`.
        let after = line
            .find(toks[at])
            .map_or("", |i| &line[i + toks[at].len()..]);
        let cells = aligned_cells(after);
        let (name, desc) = match cells.as_slice() {
            [(_, n), rest @ ..] if !rest.is_empty() => {
                (*n, rest.iter().map(|c| c.1).collect::<Vec<_>>().join(" "))
            }
            _ => (after.trim(), String::new()),
        };
        let (name, unit) = split_unit(name);
        let (desc, unit) = match unit {
            Some(u) => (desc, Some(u)),
            None => split_unit(&desc),
        };
        DocColumn {
            name,
            unit,
            description: non_empty(&desc),
        }
    } else {
        let name = pre.join(" ");
        let (unit, desc) = match post {
            [u, rest @ ..] if is_unit(u) && (!rest.is_empty() || u.starts_with(['(', '['])) => (
                Some(u.trim_matches(['(', ')', '[', ']']).to_string()),
                rest.join(" "),
            ),
            _ => (None, post.join(" ")),
        };
        let (desc, unit) = match unit {
            Some(u) => (desc, Some(u)),
            None => split_unit(&desc),
        };
        DocColumn {
            name,
            unit,
            description: non_empty(&desc),
        }
    };
    usable_name(&column.name).then_some(Line {
        layout: Layout::Specifier,
        position: pos,
        column,
        span,
        code,
    })
}

/// `1  YEAR  year of observation`, `2. Temperature (deg C)`: a number, then the name —
/// the first field when two or more spaces separate it from a description.
fn numbered(line: &str) -> Option<Line> {
    let t = line.trim();
    let first = t.split_whitespace().next()?;
    let pos = position(first)?;
    if first.contains('-') {
        return None;
    }
    let rest = t[first.len()..].trim();
    let split = ["  ", "\t", " - ", " – ", ": "]
        .iter()
        .filter_map(|sep| rest.split_once(sep))
        .min_by_key(|(n, _)| n.len());
    let (name, desc) = match split {
        Some((n, d)) => (n.trim(), non_empty(d)),
        None => (rest, None),
    };
    let (name, unit) = split_unit(name);
    // A numbered list of steps or sentences is not a list of columns: a name of several
    // words must come with a unit or a description to count.
    if desc.is_none() && unit.is_none() && name.split_whitespace().count() > 1 {
        return None;
    }
    let (desc, unit) = match (desc, unit) {
        (Some(d), None) => {
            let (d, u) = split_unit(&d);
            (Some(d), u)
        }
        (d, u) => (d, u),
    };
    usable_name(&name).then_some(Line {
        span: None,
        code: None,
        layout: Layout::Numbered,
        position: Some(pos),
        column: DocColumn {
            name,
            unit,
            description: desc,
        },
    })
}

#[cfg(test)]
mod tests;
