//! Spreadsheets (xlsx, xlsm, xlsb, xls, ods) read with `calamine`: every sheet's name,
//! used range, header row, per-column profile, title rows and merged regions.
//!
//! The workbook is read from memory (at most [`MAX_WORKBOOK`] bytes). xlsx and xlsb sheets
//! are streamed cell by cell; xls and ods sheets come from calamine's in-memory ranges.
//! Before calamine opens a zip-based workbook, the parts it loads whole (shared strings,
//! styles, the ods content) are checked against a size cap by decompressing them into a
//! sink, since a zip's stated sizes may lie.

use super::sheet::{a1, Grid};
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
        3
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
        describe_workbook(bytes, src.keep())
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

fn describe_workbook(bytes: &[u8], keep: Keep) -> Result<Content, AnalyzeError> {
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
        let mut t = if sheet.typ == SheetType::ChartSheet {
            let mut t = Grid::new().finish(&sheet.name, true, None);
            t.notes = vec!["chart sheet: no cells".into()];
            t
        } else {
            match read_sheet(&mut book, &sheet.name, keep) {
                Ok(t) => t,
                Err(e) => {
                    failures.push(e.clone());
                    let mut t = Grid::new().finish(&sheet.name, false, None);
                    t.notes = vec![format!("could not be read: {e}")];
                    t
                }
            }
        };
        if sheet.visible != SheetVisible::Visible {
            t.notes.insert(0, "hidden sheet".into());
        }
        set.tables.push(t);
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
fn read_sheet(book: &mut Book<'_>, name: &str, keep: Keep) -> Result<NamedTable, String> {
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
    let mut t = grid.finish(name, stop.is_none(), declared_last);
    if let Some(s) = stop {
        t.notes
            .push(format!("{s}; figures cover the cells read before"));
        if let (Some(d), None) = (declared, &t.range) {
            t.range = Some(format!(
                "{}:{}",
                a1(d.start.0, d.start.1),
                a1(d.end.0, d.end.1)
            ));
        }
        // Merged regions sit after the cells: not worth a second pass over a cut sheet.
        return Ok(t);
    }
    let merged = match book {
        Book::Xlsx(w) => w.merge_cells_by_sheet_name(name).ok(),
        Book::Xls(w) => w.merge_cells_by_sheet_name(name).ok(),
        Book::Xlsb(_) | Book::Ods(_) => None,
    };
    if let Some(m) = merged.filter(|m| !m.is_empty()) {
        let listed: Vec<String> = m
            .iter()
            .take(MERGED_LISTED)
            .map(|d| format!("{}:{}", a1(d.start.0, d.start.1), a1(d.end.0, d.end.1)))
            .collect();
        let more = if m.len() > MERGED_LISTED {
            format!(" (+{} more)", m.len() - MERGED_LISTED)
        } else {
            String::new()
        };
        t.notes
            .push(format!("merged cells: {}{more}", listed.join(", ")));
    }
    Ok(t)
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
mod tests {
    use super::*;
    use crate::analyze::{describe, ColumnType};
    use rust_xlsxwriter::{ExcelDateTime as XDate, Format as XFormat, Workbook};

    /// A workbook as people make them: a merged title, a blank row, the header on row 3,
    /// typed data with blanks; a second sheet with a plain table; an empty third sheet.
    fn workbook() -> Vec<u8> {
        let mut wb = Workbook::new();
        let date = XFormat::new().set_num_format("yyyy-mm-dd");
        let stamp = XFormat::new().set_num_format("yyyy-mm-dd hh:mm:ss");
        let ws = wb.add_worksheet().set_name("Sales").unwrap();
        ws.merge_range(
            0,
            0,
            0,
            6,
            "Quarterly sales 2023",
            &XFormat::new().set_bold(),
        )
        .unwrap();
        for (c, h) in [
            "id", "region", "amount", "date", "paid", "comment", "updated",
        ]
        .iter()
        .enumerate()
        {
            ws.write_string(2, c as u16, *h).unwrap();
        }
        let regions = ["North", "South"];
        for i in 0..6u32 {
            let r = 3 + i;
            ws.write_number(r, 0, f64::from(i + 1)).unwrap();
            ws.write_string(r, 1, regions[i as usize % 2]).unwrap();
            ws.write_number(r, 2, 10.5 * f64::from(i + 1)).unwrap();
            let d = XDate::from_ymd(2023, 1 + i as u8, 15).unwrap();
            ws.write_datetime_with_format(r, 3, &d, &date).unwrap();
            ws.write_boolean(r, 4, i % 3 == 0).unwrap();
            if i != 1 {
                ws.write_string(r, 5, format!("note {i}")).unwrap();
            }
            let t = XDate::from_ymd(2023, 3, 1 + i as u8)
                .unwrap()
                .and_hms(8, 30, 0)
                .unwrap();
            ws.write_datetime_with_format(r, 6, &t, &stamp).unwrap();
        }
        let ws = wb.add_worksheet().set_name("Codes").unwrap();
        ws.write_string(0, 0, "code").unwrap();
        ws.write_string(0, 1, "label").unwrap();
        for i in 0..3u32 {
            ws.write_number(i + 1, 0, f64::from(100 + i)).unwrap();
            ws.write_string(i + 1, 1, format!("label {i}")).unwrap();
        }
        wb.add_worksheet().set_name("Empty").unwrap();
        wb.save_to_buffer().unwrap()
    }

    fn tables(c: Content) -> TableSet {
        match c {
            Content::Tables(t) => t,
            other => panic!("not tables: {other:?}"),
        }
    }

    #[test]
    fn xlsx_sheets_header_types_and_notes() {
        let src = Source::from_bytes("q.xlsx", workbook());
        let set = tables(ExcelAnalyzer.analyze(&src, Format::Excel).unwrap());
        let names: Vec<&str> = set.tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["Sales", "Codes", "Empty"]);

        let sales = &set.tables[0];
        assert_eq!(sales.kind, "sheet");
        assert_eq!(sales.range.as_deref(), Some("A1:G9"));
        assert_eq!(sales.header_row, Some(3));
        assert_eq!((sales.rows, sales.rows_exact), (6, true));
        let cols = sales.column_kinds();
        assert_eq!(
            cols,
            [
                ("id", ColumnType::Integer),
                ("region", ColumnType::Categorical),
                ("amount", ColumnType::Float),
                ("date", ColumnType::Date),
                ("paid", ColumnType::Boolean),
                ("comment", ColumnType::Text),
                ("updated", ColumnType::Datetime),
            ]
        );
        assert_eq!(sales.columns[5].nulls, 1);
        assert_eq!(sales.columns[3].min.as_deref(), Some("2023-01-15"));
        assert_eq!(sales.columns[3].max.as_deref(), Some("2023-06-15"));
        assert_eq!(sales.columns[6].min.as_deref(), Some("2023-03-01"));
        assert_eq!(sales.columns[2].max.as_deref(), Some("63"));
        assert_eq!(sales.sample_rows[0][..3], ["1", "North", "10.5"]);
        assert!(sales
            .notes
            .contains(&"title row 1: Quarterly sales 2023".to_string()));
        assert!(sales.notes.contains(&"merged cells: A1:G1".to_string()));
        let shown = crate::analyze::render("q.xlsx", &describe(&src), Default::default());
        assert!(shown.contains("sheet \"Sales\": 6 rows × 7 columns, range A1:G9, header row 3"));

        let codes = &set.tables[1];
        assert_eq!(codes.range.as_deref(), Some("A1:B4"));
        assert_eq!((codes.header_row, codes.rows), (Some(1), 3));
        assert_eq!(codes.columns[0].name, "code");
        assert_eq!(codes.columns[0].kind, ColumnType::Integer);
        assert!(codes.notes.is_empty(), "{:?}", codes.notes);

        let empty = &set.tables[2];
        assert_eq!((empty.rows, empty.columns.len()), (0, 0));
        assert_eq!(empty.notes, ["empty sheet"]);
    }

    /// A minimal OpenDocument spreadsheet, zipped as LibreOffice lays it out: title, blank
    /// row, header on row 3, a repeated row, dates and floats.
    fn ods() -> Vec<u8> {
        use std::io::Write;
        use zip::write::SimpleFileOptions;
        let cell = |v: &str| {
            format!(
                "<table:table-cell office:value-type=\"string\"><text:p>{v}</text:p></table:table-cell>"
            )
        };
        let data = |station: &str, day: &str, temp: &str, repeat: u32| {
            format!(
                "<table:table-row table:number-rows-repeated=\"{repeat}\">{}\
                 <table:table-cell office:value-type=\"date\" office:date-value=\"{day}\">\
                 <text:p>{day}</text:p></table:table-cell>\
                 <table:table-cell office:value-type=\"float\" office:value=\"{temp}\">\
                 <text:p>{temp}</text:p></table:table-cell></table:table-row>",
                cell(station)
            )
        };
        let content = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
             <office:document-content \
             xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" \
             xmlns:table=\"urn:oasis:names:tc:opendocument:xmlns:table:1.0\" \
             xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" office:version=\"1.2\">\
             <office:body><office:spreadsheet><table:table table:name=\"Readings\">\
             <table:table-row><table:table-cell office:value-type=\"string\" \
             table:number-columns-spanned=\"3\"><text:p>Station log</text:p></table:table-cell>\
             <table:covered-table-cell table:number-columns-repeated=\"2\"/></table:table-row>\
             <table:table-row><table:table-cell table:number-columns-repeated=\"3\"/></table:table-row>\
             <table:table-row>{}{}{}</table:table-row>{}{}{}\
             </table:table></office:spreadsheet></office:body></office:document-content>",
            cell("station"),
            cell("day"),
            cell("temp"),
            data("A", "2024-05-01", "12.5", 1),
            data("B", "2024-05-02", "9", 2),
            data("A", "2024-05-03", "-1.25", 1),
        );
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let stored =
            SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        w.start_file("mimetype", stored).unwrap();
        w.write_all(b"application/vnd.oasis.opendocument.spreadsheet")
            .unwrap();
        w.start_file("META-INF/manifest.xml", SimpleFileOptions::default())
            .unwrap();
        w.write_all(
            b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
              <manifest:manifest xmlns:manifest=\"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0\">\
              <manifest:file-entry manifest:full-path=\"/\" \
              manifest:media-type=\"application/vnd.oasis.opendocument.spreadsheet\"/>\
              <manifest:file-entry manifest:full-path=\"content.xml\" manifest:media-type=\"text/xml\"/>\
              </manifest:manifest>",
        )
        .unwrap();
        w.start_file("content.xml", SimpleFileOptions::default())
            .unwrap();
        w.write_all(content.as_bytes()).unwrap();
        w.finish().unwrap().into_inner()
    }

    #[test]
    fn ods_sheet_with_title_and_repeated_rows() {
        let d = describe(&Source::from_bytes("log.ods", ods()));
        assert_eq!(d.format, Format::Excel);
        assert!(d.error.is_none(), "{:?}", d.error);
        let set = tables(d.content);
        let t = &set.tables[0];
        assert_eq!(t.name, "Readings");
        assert_eq!(t.range.as_deref(), Some("A1:C7"));
        assert_eq!((t.header_row, t.rows), (Some(3), 4));
        // Checked with pandas and odfpy: these columns, 4 rows (the repeated one twice).
        assert_eq!(
            t.load.as_deref(),
            Some(r#"pd.read_excel(path, sheet_name="Readings", header=2, usecols="A:C")"#)
        );
        let cols = t.column_kinds();
        assert_eq!(
            cols,
            [
                ("station", ColumnType::Categorical),
                ("day", ColumnType::Date),
                ("temp", ColumnType::Float)
            ]
        );
        assert_eq!(t.columns[2].min.as_deref(), Some("-1.25"));
        assert_eq!(t.notes, ["title row 1: Station log"]);
    }

    #[test]
    fn describe_detects_xlsx_by_content_and_extension() {
        let bytes = workbook();
        for name in ["q.xlsx", "q.xlsm", "export.dat"] {
            let d = describe(&Source::from_bytes(name, bytes.clone()));
            assert_eq!(d.format, Format::Excel, "{name}");
            assert_eq!(d.analyzer, "spreadsheet@3");
            assert!(d.error.is_none(), "{name}: {:?}", d.error);
            assert_eq!(tables(d.content).tables.len(), 3);
        }
    }

    #[test]
    fn ole_and_zip_workbooks_detected_by_extension() {
        use crate::analyze::detect;
        use std::path::Path;
        // An OLE header `infer` cannot tell from an installer: the extension decides.
        let mut ole = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1".to_vec();
        ole.resize(512, 0);
        assert_eq!(detect(Path::new("old.xls"), &ole, 512), Format::Excel);
        assert_ne!(detect(Path::new("setup.msi"), &ole, 512), Format::Excel);
        let zip = b"PK\x03\x04\x14\0\0\0\0\0".to_vec();
        assert_eq!(detect(Path::new("b.xlsb"), &zip, 10), Format::Excel);
        assert_eq!(detect(Path::new("b.zip"), &zip, 10), Format::Archive);
    }

    #[test]
    fn workbook_from_disk_is_read_without_bytes_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.xlsx");
        std::fs::write(&path, workbook()).unwrap();
        let src = Source::open(&path, 0).unwrap();
        assert!(src.bytes().is_none());
        let set = tables(ExcelAnalyzer.analyze(&src, Format::Excel).unwrap());
        assert_eq!(set.tables[0].rows, 6);
    }

    #[test]
    fn corrupt_workbooks_are_errors() {
        let bytes = workbook();
        let cut = bytes[..bytes.len() / 2].to_vec();
        let d = describe(&Source::from_bytes("q.xlsx", cut));
        assert_eq!(d.format, Format::Excel);
        assert!(d.error.is_some());
        assert!(matches!(d.content, Content::Opaque(_)));
        for junk in [
            b"PK\x03\x04garbage".to_vec(),
            b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1 not really ole".to_vec(),
            vec![0u8; 300],
        ] {
            let src = Source::from_bytes("x.xls", junk);
            assert!(ExcelAnalyzer.analyze(&src, Format::Excel).is_err());
        }
    }

    #[test]
    fn cell_text_conversions() {
        assert_eq!(float_text(3.0), "3");
        assert_eq!(float_text(-2.5), "-2.5");
        assert_eq!(float_text(1e20), "1e20");
        assert_eq!(float_text(f64::NAN), "");
        let d = |v, dur| {
            let t = if dur {
                calamine::ExcelDateTimeType::TimeDelta
            } else {
                calamine::ExcelDateTimeType::DateTime
            };
            datetime_text(&ExcelDateTime::new(v, t, false))
        };
        assert_eq!(d(45000.0, false), "2023-03-15");
        assert_eq!(d(45000.5, false), "2023-03-15T12:00:00");
        assert_eq!(d(0.75, false), "18:00:00");
        assert_eq!(d(1.5, true), "36:00:00");
    }
}
