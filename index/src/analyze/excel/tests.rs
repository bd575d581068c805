//! Tests of the spreadsheet analyzer.
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
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
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
        assert_eq!(d.analyzer, "spreadsheet@9");
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

/// Write `cells` (row, column, value) to `ws`: a value that parses as a number is written
/// as one, anything else as a string.
fn put(ws: &mut rust_xlsxwriter::Worksheet, cells: &[(u32, u16, &str)]) {
    for &(r, c, v) in cells {
        match v.parse::<f64>() {
            Ok(n) => ws.write_number(r, c, n).unwrap(),
            Err(_) => ws.write_string(r, c, v).unwrap(),
        };
    }
}

/// Rows of `cells` for a block: `first` row, `col` column, one row per line.
fn block(first: u32, col: u16, lines: &[&[&'static str]]) -> Vec<(u32, u16, &'static str)> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        for (j, v) in line.iter().enumerate() {
            if !v.is_empty() {
                out.push((first + i as u32, col + j as u16, *v));
            }
        }
    }
    out
}

fn names_of(t: &NamedTable) -> Vec<&str> {
    t.columns.iter().map(|c| c.name.as_str()).collect()
}

fn sheet_tables(bytes: Vec<u8>) -> Vec<NamedTable> {
    let src = Source::from_bytes("b.xlsx", bytes);
    tables(ExcelAnalyzer.analyze(&src, Format::Excel).unwrap()).tables
}

#[test]
fn title_rows_two_row_merged_header_and_notes_below() {
    let mut wb = Workbook::new();
    let ws = wb.add_worksheet().set_name("Spending").unwrap();
    let plain = XFormat::new();
    put(
        ws,
        &[
            (0, 0, "Table 3. Spending by department"),
            (1, 0, "Thousands of pounds"),
        ],
    );
    ws.merge_range(3, 0, 4, 0, "Department", &plain).unwrap();
    ws.merge_range(3, 1, 3, 2, "", &plain).unwrap();
    ws.write_number(3, 1, 2021).unwrap();
    ws.merge_range(3, 3, 3, 4, "", &plain).unwrap();
    ws.write_number(3, 3, 2022).unwrap();
    put(
        ws,
        &block(4, 1, &[&["Estimate", "Outturn", "Estimate", "Outturn"]]),
    );
    put(
        ws,
        &block(
            5,
            0,
            &[
                &["Health", "120", "118.5", "130", "131"],
                &["Education", "95", "97", "99", "101.2"],
                &["Defence", "40", "41", "42", "40"],
                &["Transport", "22", "21", "25", "24"],
                &["Justice", "9", "9.5", "10", "11"],
            ],
        ),
    );
    put(
        ws,
        &[
            (11, 0, "Source: departmental accounts"),
            (12, 0, "Figures are rounded to the nearest thousand."),
        ],
    );
    let t = &sheet_tables(wb.save_to_buffer().unwrap())[0];
    assert_eq!(
        names_of(t),
        [
            "Department",
            "2021 / Estimate",
            "2021 / Outturn",
            "2022 / Estimate",
            "2022 / Outturn"
        ]
    );
    assert_eq!((t.header_row, t.rows, t.rows_exact), (Some(5), 5, true));
    assert_eq!(t.columns[2].kind, ColumnType::Float);
    assert_eq!(
        t.load.as_deref(),
        Some(
            r#"pd.read_excel(path, sheet_name="Spending", header=None, skiprows=5, names=["Department", "2021 / Estimate", "2021 / Outturn", "2022 / Estimate", "2022 / Outturn"], usecols="A:E", nrows=5)"#
        )
    );
    let notes = t.notes.join("\n");
    for want in [
        "title row 1: Table 3. Spending by department",
        "header rows 4–5 read as one name per column (`2021 / Estimate`)",
        "note row 12 below the table: Source: departmental accounts",
        "note row 13 below the table: Figures are rounded",
    ] {
        assert!(notes.contains(want), "{want:?} not in {notes}");
    }
}

#[test]
fn blocks_side_by_side_are_separate_tables() {
    let mut wb = Workbook::new();
    let ws = wb.add_worksheet().set_name("Regions").unwrap();
    put(
        ws,
        &[(0, 0, "Table 1: Population"), (0, 4, "Table 2: Area")],
    );
    put(
        ws,
        &block(
            2,
            0,
            &[
                &["Region", "Year", "Population"],
                &["North", "2020", "1200"],
                &["North", "2021", "1250"],
                &["South", "2020", "900"],
                &["South", "2021", "950"],
                &["East", "2020", "400"],
                &["East", "2021", "410"],
            ],
        ),
    );
    put(
        ws,
        &block(
            2,
            4,
            &[
                &["Region", "Area km2"],
                &["North", "520.5"],
                &["South", "310"],
                &["East", "150.25"],
            ],
        ),
    );
    let ts = sheet_tables(wb.save_to_buffer().unwrap());
    let got: Vec<(&str, Option<&str>, u64)> = ts
        .iter()
        .map(|t| (t.name.as_str(), t.range.as_deref(), t.rows))
        .collect();
    assert_eq!(
        got,
        [
            ("Regions", Some("A1:C9"), 6),
            ("Table 2: Area", Some("E1:F6"), 3)
        ]
    );
    assert_eq!(names_of(&ts[1]), ["Region", "Area km2"]);
    assert_eq!(ts[1].columns[1].kind, ColumnType::Float);
    assert_eq!(
        ts[1].load.as_deref(),
        // pandas would read the second `Region` of the header row as `Region.1`.
        Some(
            r#"pd.read_excel(path, sheet_name="Regions", header=None, skiprows=3, names=["Region", "Area km2"], usecols="E:F", nrows=3)"#
        )
    );
    assert_eq!(
        ts[0].load.as_deref(),
        Some(r#"pd.read_excel(path, sheet_name="Regions", header=2, usecols="A:C")"#)
    );
    assert!(ts[1].notes[0].starts_with("table 2 of 2 in sheet \"Regions\" (side by side)"));
}

#[test]
fn stacked_tables_each_with_a_header_and_a_total_only_at_the_end() {
    let mut wb = Workbook::new();
    let ws = wb.add_worksheet().set_name("Stacked").unwrap();
    put(
        ws,
        &block(
            0,
            0,
            &[
                &["Table 1: Sales"],
                &["Month", "Units", "Revenue"],
                &["Jan", "10", "100.5"],
                &["Feb", "12", "120"],
                &["Mar", "9", "90"],
                &["Apr", "14", "140"],
                &["Total", "45", "450.5"],
                &[],
                &["Table 2: Staff"],
                &["Team", "Staff", "Vacancies"],
                &["North", "5", "1"],
                // A category named `Total` among the data is data.
                &["Total", "3", "0"],
                &["South", "7", "2"],
                &["East", "4", "0"],
            ],
        ),
    );
    let ts = sheet_tables(wb.save_to_buffer().unwrap());
    let got: Vec<(&str, Option<u64>, u64)> = ts
        .iter()
        .map(|t| (t.name.as_str(), t.header_row, t.rows))
        .collect();
    assert_eq!(
        got,
        [("Stacked", Some(2), 4), ("Table 2: Staff", Some(10), 4)]
    );
    assert_eq!(names_of(&ts[1]), ["Team", "Staff", "Vacancies"]);
    assert_eq!(ts[0].columns[1].kind, ColumnType::Integer);
    assert_eq!(
        ts[0].load.as_deref(),
        Some(r#"pd.read_excel(path, sheet_name="Stacked", header=1, usecols="A:C", nrows=4)"#)
    );
    assert!(
        ts[0]
            .notes
            .iter()
            .any(|n| n == "row 7 (Total) kept as notes, not data"),
        "{:?}",
        ts[0].notes
    );
    assert!(!ts[1].notes.iter().any(|n| n.contains("kept as notes")));
    assert_eq!(ts[1].range.as_deref(), Some("A9:C14"));
}

#[test]
fn an_empty_column_inside_a_table_and_text_rows_of_text_columns_stay_one_table() {
    let mut wb = Workbook::new();
    let ws = wb.add_worksheet().set_name("People").unwrap();
    // Column C is empty throughout; column E has a header and no values.
    put(
        ws,
        &block(
            0,
            0,
            &[
                &["person", "town", "", "age", "comment"],
                // Text in text columns right under the header: data, not a second header.
                &["Name", "Town"],
                &["Smith", "Leeds", "", "41"],
                &["Jones", "York", "", "37"],
                &["Brown", "Hull", "", "52"],
            ],
        ),
    );
    let ts = sheet_tables(wb.save_to_buffer().unwrap());
    assert_eq!(ts.len(), 1, "{ts:?}");
    let t = &ts[0];
    assert_eq!(names_of(t), ["person", "town", "C", "age", "comment"]);
    assert_eq!((t.header_row, t.rows), (Some(1), 4));
    assert_eq!(t.range.as_deref(), Some("A1:E5"));
}

/// A call log as spreadsheets keep it: a time of day, spans stored as Excel times
/// (`h:mm:ss` under a span's name, `[h]:mm:ss` past a day, `[mm]:ss`).
fn call_log() -> Vec<u8> {
    let mut wb = Workbook::new();
    let ws = wb.add_worksheet().set_name("Calls").unwrap();
    let clock = XFormat::new().set_num_format("hh:mm:ss");
    let time = XFormat::new().set_num_format("h:mm:ss");
    let elapsed = XFormat::new().set_num_format("[h]:mm:ss");
    let minutes = XFormat::new().set_num_format("[mm]:ss");
    for (c, h) in ["Start time", "Wait time", "Handling", "Elapsed", "Agent"]
        .iter()
        .enumerate()
    {
        ws.write_string(0, c as u16, *h).unwrap();
    }
    let day = 86_400.0;
    for i in 0..12u32 {
        let r = i + 1;
        let f = f64::from(i);
        ws.write_number_with_format(r, 0, (8.0 * 3600.0 + f * 1800.0) / day, &clock)
            .unwrap();
        ws.write_number_with_format(r, 1, (30.0 + f * 61.0) / day, &time)
            .unwrap();
        ws.write_number_with_format(r, 2, (3600.0 + f * 9000.0) / day, &elapsed)
            .unwrap();
        ws.write_number_with_format(r, 3, (15.0 + f * 20.0) / day, &minutes)
            .unwrap();
        ws.write_string(r, 4, ["Ann", "Bo", "Cy"][i as usize % 3])
            .unwrap();
    }
    wb.save_to_buffer().unwrap()
}

#[test]
fn durations_stored_as_excel_times() {
    let d = describe(&Source::from_bytes("calls.xlsx", call_log()));
    let t = &tables(d.content).tables[0];
    let kinds: Vec<ColumnType> = t.columns.iter().map(|c| c.kind).collect();
    // A time of day stays what it is without the rule: not a span.
    assert_ne!(kinds[0], ColumnType::Duration);
    assert_eq!(kinds[1..4], [ColumnType::Duration; 3], "{:?}", t.columns);
    let c = &t.columns[2];
    assert_eq!(
        (c.min.as_deref(), c.max.as_deref(), c.unit.as_deref()),
        (Some("3600"), Some("102600"), Some("s"))
    );
    assert_eq!(t.columns[1].max.as_deref(), Some("701"));
    let load = t.load.as_deref().unwrap_or_default();
    assert!(
        load.contains(r#""Wait time": lambda v: pd.to_timedelta(str(v), errors="coerce")"#)
            && !load.contains("\"Start time\":"),
        "{load}"
    );
}
