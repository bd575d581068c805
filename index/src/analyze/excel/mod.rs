//! Spreadsheets (xlsx, xlsm, xlsb, xls, ods) read with `calamine`: every sheet's name,
//! used range, header row, per-column profile, title rows and merged regions.
//!
//! The workbook is read from memory (at most [`MAX_WORKBOOK`] bytes). xlsx and xlsb sheets
//! are streamed cell by cell; xls and ods sheets come from calamine's in-memory ranges.
//! Before calamine opens a zip-based workbook, the parts it loads whole (shared strings,
//! styles, the ods content) are checked against a size cap by decompressing them into a
//! sink, since a zip's stated sizes may lie.

use super::rules::Applied;
use super::sheet::{a1, Grid, Merged};
use super::{AnalyzeError, Analyzer, Content, Format, Keep, NamedTable, Source, TableSet};
use calamine::{
    Data, DataRef, Dimensions, ExcelDateTime, Ods, Range, Reader, SheetType, SheetVisible, Xls,
    Xlsb, Xlsx,
};
use std::io::{Cursor, Read};

/// Largest workbook analyzed.
const MAX_WORKBOOK: usize = 256 * 1024 * 1024;
/// Largest decompressed workbook part that calamine loads whole.
const MAX_PART: u64 = 256 * 1024 * 1024;
/// Cells read per streamed sheet; past this the row count is estimated.
const MAX_CELLS: u64 = 20_000_000;
/// Sheets described per workbook.
const MAX_SHEETS: usize = 200;
/// Merged regions listed per sheet.
const MERGED_LISTED: usize = 8;

/// Analyzer for [`Format::Excel`].
pub(crate) struct ExcelAnalyzer;

impl Analyzer for ExcelAnalyzer {
    fn name(&self) -> &'static str {
        "spreadsheet"
    }
    fn version(&self) -> u32 {
        // 5: time in other forms read as time (the time-forms reading rule).
        // 6: missing markers, durations and labelling integers (profile values).
        // 7: quarters (`2001Q1`, `Q1 2001`, a year beside `Q1`..`Q4`) and date-times
        // with a time scale (`2014.03.23_20:24:00_TAI`) read as time; footnoted numbers
        // grouped with spaces or dots (`1 234 p`, `1.234,5 r`) stay numbers; spans
        // stored as times load as timedeltas (`pd.to_timedelta(str(v))`).
        // 8: the workbook covers the span of all its sheets' time axes.
        // 9: load lines of renamed columns carry markers and converters; time in other
        // forms loads as datetimes.
        9
    }
    fn analyze(&self, src: &Source, _format: Format) -> Result<Content, AnalyzeError> {
        let owned;
        let bytes = match src.bytes() {
            Some(b) if b.len() <= MAX_WORKBOOK => b,
            Some(_) => return Err(too_big()),
            None => {
                let (b, cut) = src.read_up_to(MAX_WORKBOOK)?;
                if cut {
                    return Err(too_big());
                }
                owned = b;
                &owned[..]
            }
        };
        // calamine indexes record buffers of the binary formats directly: a panic on a
        // malformed file is caught by the boundary around every analyzer (`guard`).
        describe_workbook(bytes, src.keep(), src.applied())
    }
}

fn too_big() -> AnalyzeError {
    AnalyzeError::Malformed(format!(
        "spreadsheet larger than {} MiB: not analyzed",
        MAX_WORKBOOK >> 20
    ))
}

fn malformed(what: &str, e: impl std::fmt::Display) -> AnalyzeError {
    AnalyzeError::Malformed(format!("{what}: {e}"))
}

/// The workbook flavours calamine reads.
enum Book<'a> {
    Xlsx(Xlsx<Cursor<&'a [u8]>>),
    Xlsb(Xlsb<Cursor<&'a [u8]>>),
    Xls(Xls<Cursor<&'a [u8]>>),
    Ods(Ods<Cursor<&'a [u8]>>),
}

fn describe_workbook(bytes: &[u8], keep: Keep, applied: &Applied) -> Result<Content, AnalyzeError> {
    let mut book = open(bytes)?;
    let sheets = match &book {
        Book::Xlsx(w) => w.sheets_metadata().to_vec(),
        Book::Xlsb(w) => w.sheets_metadata().to_vec(),
        Book::Xls(w) => w.sheets_metadata().to_vec(),
        Book::Ods(w) => w.sheets_metadata().to_vec(),
    };
    let mut set = TableSet::default();
    let mut failures = Vec::new();
    for sheet in sheets.iter().take(MAX_SHEETS) {
        let mut tables = if sheet.typ == SheetType::ChartSheet {
            let mut t = empty(&sheet.name, true);
            t.notes = vec!["chart sheet: no cells".into()];
            vec![t]
        } else {
            match read_sheet(&mut book, &sheet.name, keep, applied) {
                Ok(t) => t,
                Err(e) => {
                    failures.push(e.clone());
                    let mut t = empty(&sheet.name, false);
                    t.notes = vec![format!("could not be read: {e}")];
                    vec![t]
                }
            }
        };
        for t in &mut tables {
            if sheet.visible != SheetVisible::Visible {
                t.notes.insert(0, "hidden sheet".into());
            }
            // Tables found in a sheet are named by their titles, which may repeat.
            let base = t.name.clone();
            let mut n = 2;
            while set.tables.iter().any(|x| x.name == t.name) {
                t.name = format!("{base} ({n})");
                n += 1;
            }
        }
        set.tables.extend(tables);
    }
    if !sheets.is_empty() && failures.len() == sheets.len().min(MAX_SHEETS) {
        return Err(malformed("no sheet could be read", &failures[0]));
    }
    if sheets.len() > MAX_SHEETS {
        set.notes.push(format!(
            "{} more sheets not described",
            sheets.len() - MAX_SHEETS
        ));
    }
    if sheets.is_empty() {
        set.notes.push("workbook has no sheets".into());
    }
    Ok(Content::Tables(set))
}

/// The table of a sheet with no cells.
fn empty(name: &str, complete: bool) -> NamedTable {
    let mut t = Grid::new().finish(name, complete, None, &[], &Applied::default());
    t.swap_remove(0)
}

/// Open the workbook after checking what calamine will load whole.
fn open(bytes: &[u8]) -> Result<Book<'_>, AnalyzeError> {
    let cur = Cursor::new(bytes);
    if bytes.starts_with(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1") {
        // Legacy .xls (OLE compound file); calamine parses every sheet on open.
        return Xls::new(cur)
            .map(Book::Xls)
            .map_err(|e| malformed("not a readable .xls workbook", e));
    }
    let mut zip = zip::ZipArchive::new(cur.clone())
        .map_err(|e| malformed("not a readable spreadsheet (zip)", e))?;
    let names: Vec<String> = zip
        .file_names()
        .map(|n| n.map(|n| n.into_owned()))
        .collect::<Result<_, _>>()
        .map_err(|e| malformed("unreadable zip directory", e))?;
    let has = |n: &str| names.iter().any(|x| x == n);
    let kind = if has("xl/workbook.xml") {
        "xlsx"
    } else if has("xl/workbook.bin") {
        "xlsb"
    } else if has("content.xml") {
        "ods"
    } else {
        return Err(AnalyzeError::Malformed(
            "zip without a workbook part (not xlsx, xlsb or ods)".into(),
        ));
    };
    for name in &names {
        // Worksheets of xlsx/xlsb are streamed; other XML and binary parts are loaded whole.
        let streamed = kind != "ods" && name.starts_with("xl/worksheets/");
        let loaded = [".xml", ".rels", ".bin"].iter().any(|e| name.ends_with(e));
        if streamed || !loaded {
            continue;
        }
        let mut f = zip
            .by_name(name)
            .map_err(|e| malformed("unreadable workbook part", e))?;
        let n = std::io::copy(&mut (&mut f).take(MAX_PART + 1), &mut std::io::sink())
            .map_err(|e| malformed(&format!("unreadable workbook part {name}"), e))?;
        if n > MAX_PART {
            return Err(AnalyzeError::Malformed(format!(
                "workbook part {name} decompresses to more than {} MiB",
                MAX_PART >> 20
            )));
        }
    }
    let book = match kind {
        "xlsx" => Xlsx::new(cur).map(Book::Xlsx).map_err(|e| e.to_string()),
        "xlsb" => Xlsb::new(cur).map(Book::Xlsb).map_err(|e| e.to_string()),
        _ => Ods::new(cur).map(Book::Ods).map_err(|e| e.to_string()),
    };
    book.map_err(|e| malformed(&format!("not a readable {kind} workbook"), e))
}

/// Read one sheet into its table.
fn read_sheet(
    book: &mut Book<'_>,
    name: &str,
    keep: Keep,
    applied: &Applied,
) -> Result<Vec<NamedTable>, String> {
    let mut grid = Grid::new().keeping(keep);
    let mut stop = None;
    let mut declared = None;
    match book {
        Book::Xlsx(w) => {
            let mut r = w.worksheet_cells_reader(name).map_err(|e| e.to_string())?;
            declared = Some(r.dimensions());
            stop = stream(&mut grid, || r.next_cell());
        }
        Book::Xlsb(w) => {
            let mut r = w.worksheet_cells_reader(name).map_err(|e| e.to_string())?;
            declared = Some(r.dimensions());
            stop = stream(&mut grid, || r.next_cell());
        }
        Book::Xls(w) => fill(
            &mut grid,
            &w.worksheet_range(name).map_err(|e| e.to_string())?,
        ),
        Book::Ods(w) => fill(
            &mut grid,
            &w.worksheet_range(name).map_err(|e| e.to_string())?,
        ),
    }
    let declared_last = declared
        .filter(|d: &Dimensions| d.end.0 > 0)
        .map(|d| d.end.0);
    if let Some(s) = stop {
        let mut t = grid.finish(name, false, declared_last, &[], applied);
        for t in &mut t {
            t.notes
                .push(format!("{s}; figures cover the cells read before"));
            if let (Some(d), None) = (declared, &t.range) {
                t.range = Some(format!(
                    "{}:{}",
                    a1(d.start.0, d.start.1),
                    a1(d.end.0, d.end.1)
                ));
            }
        }
        // Merged regions sit after the cells: not worth a second pass over a cut sheet.
        return Ok(t);
    }
    let merged: Vec<Merged> = match book {
        Book::Xlsx(w) => w.merge_cells_by_sheet_name(name).ok(),
        Book::Xls(w) => w.merge_cells_by_sheet_name(name).ok(),
        Book::Xlsb(_) | Book::Ods(_) => None,
    }
    .unwrap_or_default()
    .iter()
    .map(|d| (d.start, d.end))
    .collect();
    let mut tables = grid.finish(name, true, declared_last, &merged, applied);
    if !merged.is_empty() {
        let listed: Vec<String> = merged
            .iter()
            .take(MERGED_LISTED)
            .map(|(s, e)| format!("{}:{}", a1(s.0, s.1), a1(e.0, e.1)))
            .collect();
        let more = if merged.len() > MERGED_LISTED {
            format!(" (+{} more)", merged.len() - MERGED_LISTED)
        } else {
            String::new()
        };
        for t in &mut tables {
            t.notes
                .push(format!("merged cells: {}{more}", listed.join(", ")));
        }
    }
    Ok(tables)
}

/// Feed streamed cells to `grid`; why reading stopped early, if it did.
fn stream<'a, E: std::fmt::Display>(
    grid: &mut Grid,
    mut next: impl FnMut() -> Result<Option<calamine::Cell<DataRef<'a>>>, E>,
) -> Option<String> {
    let mut n = 0u64;
    loop {
        match next() {
            Ok(Some(c)) => {
                n += 1;
                push_ref(grid, c.get_position(), c.get_value());
                if n >= MAX_CELLS {
                    return Some(format!("reading stopped after {n} cells"));
                }
            }
            Ok(None) => return None,
            Err(e) => return Some(format!("reading stopped at an error: {e}")),
        }
    }
}

fn fill(grid: &mut Grid, range: &Range<Data>) {
    for (row, col, v) in range.used_cells() {
        let Some((r0, c0)) = range.start() else {
            return;
        };
        let (Ok(dr), Ok(dc)) = (u32::try_from(row), u32::try_from(col)) else {
            continue;
        };
        if let Some(text) = data_text(v) {
            let is_text = matches!(v, Data::String(_));
            grid.push(r0.saturating_add(dr), c0.saturating_add(dc), text, is_text);
        }
    }
}

fn push_ref(grid: &mut Grid, (row, col): (u32, u32), v: &DataRef<'_>) {
    let (text, is_text) = match v {
        DataRef::Empty => return,
        DataRef::SharedString(s) => (s.to_string(), true),
        DataRef::String(s) => (s.clone(), true),
        DataRef::Int(i) => (i.to_string(), false),
        DataRef::Float(f) => (float_text(*f), false),
        DataRef::Bool(b) => (b.to_string(), false),
        DataRef::DateTime(d) => (datetime_text(d), false),
        DataRef::DateTimeIso(s) | DataRef::DurationIso(s) => (s.clone(), false),
        DataRef::Error(_) => (String::new(), false),
    };
    grid.push(row, col, text, is_text);
}

/// A cell as text; `None` for an empty cell.
fn data_text(v: &Data) -> Option<String> {
    Some(match v {
        Data::Empty => return None,
        Data::String(s) => s.clone(),
        Data::Int(i) => i.to_string(),
        Data::Float(f) => float_text(*f),
        Data::Bool(b) => b.to_string(),
        Data::DateTime(d) => datetime_text(d),
        Data::DateTimeIso(s) | Data::DurationIso(s) => s.clone(),
        Data::Error(_) => String::new(),
    })
}

/// Whole floats as integers (spreadsheets store every number as a float).
fn float_text(f: f64) -> String {
    if !f.is_finite() {
        String::new()
    } else if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else if f.abs() >= 1e15 {
        format!("{f:e}")
    } else {
        format!("{f}")
    }
}

/// ISO 8601: `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SS`, `HH:MM:SS` for a time of day, and
/// `[-]H:MM:SS` for durations.
fn datetime_text(d: &ExcelDateTime) -> String {
    let v = d.as_f64();
    if !v.is_finite() {
        return String::new();
    }
    if d.is_duration() {
        let secs = (v * 86_400.0).round();
        let sign = if secs < 0.0 { "-" } else { "" };
        let s = secs.abs().min(1e15) as u64;
        return format!("{sign}{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
    }
    let (y, mo, da, h, mi, s, _) = d.to_ymd_hms_milli();
    if (0.0..1.0).contains(&v) {
        format!("{h:02}:{mi:02}:{s:02}")
    } else if (h, mi, s) == (0, 0, 0) {
        format!("{y:04}-{mo:02}-{da:02}")
    } else {
        format!("{y:04}-{mo:02}-{da:02}T{h:02}:{mi:02}:{s:02}")
    }
}

#[cfg(test)]
mod tests;
