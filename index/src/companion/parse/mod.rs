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

use super::DocColumn;

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
    let cols = dictionary(text)
        .or_else(|| aligned_dictionary(text))
        .or_else(|| format_text(text))?;
    let mut seen = std::collections::HashSet::new();
    cols.iter()
        .all(|c| seen.insert(c.name.to_lowercase()))
        .then_some(cols)
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
fn dictionary(text: &str) -> Option<Vec<DocColumn>> {
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
        let cols: Vec<DocColumn> = rows
            .iter()
            .filter_map(|r| {
                Some(DocColumn {
                    name: non_empty(r.get(name)?)?,
                    unit: unit
                        .and_then(|i| r.get(i))
                        .and_then(non_empty)
                        .filter(|u| !matches!(u.as_str(), "-" | "--" | "n/a" | "none")),
                    description: desc.and_then(|i| r.get(i)).and_then(non_empty),
                })
            })
            .collect();
        if !cols.is_empty() {
            return Some(cols);
        }
    }
    None
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
fn aligned_dictionary(text: &str) -> Option<Vec<DocColumn>> {
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
    let mut cols = dictionary(&block.join("\n"))?;
    // Without a unit column, a unit may stand in the name: `Rainfall (mm)`.
    for c in cols.iter_mut().filter(|c| c.unit.is_none()) {
        (c.name, c.unit) = split_unit(&c.name);
    }
    Some(cols)
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
}

/// A format text: every line read in each layout, the layout reading the most lines kept.
fn format_text(text: &str) -> Option<Vec<DocColumn>> {
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
    Some(chosen.into_iter().map(|l| l.column).collect())
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
    let mut pre = &toks[..at];
    let pos = pre.first().and_then(|t| position(t));
    if pos.is_some() {
        pre = &pre[1..];
    }
    let post = &toks[at + 1..];
    let column = if pre.is_empty() {
        // Without a name before the specifier, only a position makes it a column line.
        pos?;
        let (name, unit) = split_unit(&post.join(" "));
        DocColumn {
            name,
            unit,
            description: None,
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
