use super::*;

fn col(name: &str, unit: Option<&str>, desc: Option<&str>) -> DocColumn {
    DocColumn {
        name: name.into(),
        unit: unit.map(Into::into),
        description: desc.map(Into::into),
    }
}

#[test]
fn a_variable_description_csv() {
    let text = "Variable,Description,Units\nsite,Site code,\ncount,Number of birds,birds\n\"mass\",\"Mean body mass, adults\",g\n";
    assert_eq!(
        parse(text).unwrap(),
        [
            col("site", None, Some("Site code")),
            col("count", Some("birds"), Some("Number of birds")),
            col("mass", Some("g"), Some("Mean body mass, adults")),
        ]
    );
    // A `Column` of positions beside a `Name` column: the names are taken.
    let text = "Column\tName\tLabel\n1\tYEAR\tYear\n2\tQ\tDischarge\n";
    assert_eq!(
        parse(text).unwrap(),
        [
            col("YEAR", None, Some("Year")),
            col("Q", None, Some("Discharge"))
        ]
    );
    // A title line above the header.
    let text = "Survey variables,,\n,,\nName,Label,Unit\nsite,Site,\nmass,Mass,g\n";
    assert_eq!(
        parse(text).unwrap(),
        [
            col("site", None, Some("Site")),
            col("mass", Some("g"), Some("Mass"))
        ]
    );
    // A table without a column of names documents nothing.
    assert_eq!(parse("a,b,c\n1,2,3\n"), None);
}

#[test]
fn format_texts_in_the_usual_layouts() {
    let text = "Format of station.dat (one line per observation)\n\n  1  YEAR   I4    year of observation\n  2  MONTH  I2    month\n  3  TEMP   F6.1  degC  air temperature\n  4  WIND   I3    m/s   wind speed\n";
    assert_eq!(
        parse(text).unwrap(),
        [
            col("YEAR", None, Some("year of observation")),
            col("MONTH", None, Some("month")),
            col("TEMP", Some("degC"), Some("air temperature")),
            col("WIND", Some("m/s"), Some("wind speed")),
        ]
    );
    let text = "Data columns:\nColumn 2: Station\nColumn 1: Date\nColumn 3: Temperature (deg C)\n";
    assert_eq!(
        parse(text).unwrap(),
        [
            col("Date", None, None),
            col("Station", None, None),
            col("Temperature", Some("deg C"), None),
        ]
    );
    let text = "Byte  Format  Field\n1-2   A2      Flag\n3-6   A4      Station ID\n7-12  F6.1    Rainfall (mm)\n";
    assert_eq!(
        parse(text).unwrap(),
        [
            col("Flag", None, None),
            col("Station ID", None, None),
            col("Rainfall", Some("mm"), None),
        ]
    );
    let text = "TEMP   F6.1  degC  air temperature\nPRES   F7.1  hPa   station pressure\nNAME   A20   station name\n";
    assert_eq!(
        parse(text).unwrap(),
        [
            col("TEMP", Some("degC"), Some("air temperature")),
            col("PRES", Some("hPa"), Some("station pressure")),
            col("NAME", None, Some("station name")),
        ]
    );
    let text = "Columns\n1. YEAR  calendar year\n2. DOY - day of year\n3. Q: discharge (m3/s)\n4. Water level (m)\n";
    assert_eq!(
        parse(text).unwrap(),
        [
            col("YEAR", None, Some("calendar year")),
            col("DOY", None, Some("day of year")),
            col("Q", Some("m3/s"), Some("discharge")),
            col("Water level", Some("m"), None),
        ]
    );
}

#[test]
fn an_aligned_text_table_of_fields() {
    let text = "SNOTEL Daily Summary - File Format\n\nOne record per day, no header line.\n\n\
Field  Name        Units  Description\n\
1      station_id  -      NRCS station number\n\
2      date        -      Observation date (YYYY-MM-DD)\n\
3      swe         in     Snow water equivalent\n\
4      tavg        degF   Mean air temperature\n\nMissing values are -99.9.\n";
    assert_eq!(
        parse(text).unwrap(),
        vec![
            col("station_id", None, Some("NRCS station number")),
            col("date", None, Some("Observation date (YYYY-MM-DD)")),
            col("swe", Some("in"), Some("Snow water equivalent")),
            col("tavg", Some("degF"), Some("Mean air temperature")),
        ]
    );
    assert_eq!(
        aligned_cells(" a  b c\td "),
        [(1, "a"), (4, "b c"), (8, "d")]
    );
    // A blank unit leaves its column empty rather than shifting the rest.
    let text = "Col  Name   Format  Units  Description\n\
1    YEAR   I4             year\n\
2    TEMP   F6.1    degC   air temperature\n\
3    WIND   I3      m/s    wind speed\n";
    assert_eq!(
        parse(text).unwrap(),
        vec![
            col("YEAR", None, Some("year")),
            col("TEMP", Some("degC"), Some("air temperature")),
            col("WIND", Some("m/s"), Some("wind speed")),
        ]
    );
}

#[test]
fn prose_and_lists_document_nothing() {
    assert_eq!(
        parse("This file holds daily values.\nSee the website.\n"),
        None
    );
    // A numbered list of steps.
    assert_eq!(
        parse("How to use\n1. Download the data\n2. Run the script\n"),
        None
    );
    // Numbered lines that do not count 1, 2, 3.
    assert_eq!(parse("2019 was dry\n2020 was wet\n"), None);
    // One matching line only.
    assert_eq!(parse("Column 1: Date\nThe rest is free text.\n"), None);
    // A name given twice.
    assert_eq!(parse("Column 1: A\nColumn 2: a\n"), None);
}

/// Names and spans (counted from 1, end included, as listings write them) of a listing.
fn placed(text: &str) -> Option<(Vec<String>, Vec<crate::companion::Span>)> {
    let l = listing(text)?;
    let names = l.columns.iter().map(|c| c.name.clone()).collect();
    let spans = l.spans?.iter().map(|&(a, b)| (a + 1, b)).collect();
    Some((names, spans))
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_fortran_format_statement_places_the_names_beside_it() {
    // A line of names under the statement; blanks, repeats and a group applied.
    let text = "Fields of the obs files\nFORMAT(I4,2I2,1X,F6.1,2(F5.1),A5)\nyear month day tair precip snow stn\n";
    let l = listing(text).unwrap();
    assert_eq!(
        placed(text).unwrap(),
        (
            strings(&["year", "month", "day", "tair", "precip", "snow", "stn"]),
            vec![
                (1, 4),
                (5, 6),
                (7, 8),
                (10, 15),
                (16, 20),
                (21, 25),
                (26, 30)
            ]
        )
    );
    assert_eq!(l.numeric[0], Some(true));
    assert_eq!(l.numeric[6], Some(false));
    assert!(!l.count_ok, "a bare line of names links by content only");
    // Names from a numbered listing of the same count, which keeps its standing.
    let text = "format: (I4,1X,F6.1,2X,A10)\n\n1  year   calendar year\n2  temp   air temperature (degC)\n3  site   station name\n";
    let l = listing(text).unwrap();
    assert_eq!(
        placed(text).unwrap(),
        (
            strings(&["year", "temp", "site"]),
            vec![(1, 4), (6, 11), (14, 23)]
        )
    );
    assert_eq!(l.columns[1].unit.as_deref(), Some("degC"));
    assert!(l.count_ok);
    // A tab to a column.
    let text = "(I4,T8,F6.1)\nyear temp\n";
    assert_eq!(placed(text).unwrap().1, vec![(1, 4), (8, 13)]);
}

#[test]
fn one_field_per_line_with_codes_ranges_starts_or_widths() {
    // Number, code, name: the widths laid end to end.
    let text = "Daily file format\n\n  1  I4    year\n  2  I2    month\n  3  F6.1  temp\n  4  A8    site\n";
    let l = listing(text).unwrap();
    assert_eq!(
        placed(text).unwrap(),
        (
            strings(&["year", "month", "temp", "site"]),
            vec![(1, 4), (5, 6), (7, 12), (13, 20)]
        )
    );
    assert_eq!(l.numeric, [Some(true), Some(true), Some(true), Some(false)]);
    // Number, code, name, and after two blanks what it means.
    let text = " 1  I4    year      calendar year
 2  F6.1  sst       sea surface temperature (degC)
";
    assert_eq!(
        listing(text).unwrap().columns,
        [
            col("year", None, Some("calendar year")),
            col("sst", Some("degC"), Some("sea surface temperature")),
        ]
    );
    // Number, range, code, name.
    let text = "1  1-4    I4    year\n2  6-7    I2    month\n3  9-14   F6.1  temp\n";
    assert_eq!(placed(text).unwrap().1, vec![(1, 4), (6, 7), (9, 14)]);
    // Number, start, end, code, name.
    let text = "1  1  4  I4  year\n2  6  7  I2  month\n";
    assert_eq!(placed(text).unwrap().1, vec![(1, 4), (6, 7)]);
    // Name and range; range and name; start and end before the name.
    for text in [
        "Record layout\nyear    1-4\nmonth   6-7\ntair   11-17   air temperature (degC)\n",
        "1-4    year\n6-7    month\n11-17  tair\n",
        "  1   4  year\n  6   7  month\n 11  17  tair\n",
        "1  1  4  year\n2  6  7  month\n3 11 17  tair\n",
    ] {
        assert_eq!(
            placed(text).unwrap(),
            (
                strings(&["year", "month", "tair"]),
                vec![(1, 4), (6, 7), (11, 17)]
            ),
            "{text}"
        );
    }
    // Name and width; number, name, width: laid end to end.
    for text in [
        "year 4\nmonth 2\nday 2\ntair 6\n",
        "1  year  4\n2  month  2\n3  day  2\n4  tair  6\n",
    ] {
        assert_eq!(
            placed(text).unwrap(),
            (
                strings(&["year", "month", "day", "tair"]),
                vec![(1, 4), (5, 6), (7, 8), (9, 14)]
            ),
            "{text}"
        );
    }
    // Name, start, width (the second number is not an end).
    let text = "year 1 4\nmonth 5 2\nday 7 2\n";
    assert_eq!(placed(text).unwrap().1, vec![(1, 4), (5, 6), (7, 8)]);
    // A header table with start, end and format columns.
    let text = "Name,Start,End,Format\nyear,1,4,I4\nmonth,5,6,I2\nsite,7,14,A8\n";
    let l = listing(text).unwrap();
    assert_eq!(placed(text).unwrap().1, vec![(1, 4), (5, 6), (7, 14)]);
    assert_eq!(l.numeric, [Some(true), Some(true), Some(false)]);
}

#[test]
fn a_sas_input_statement() {
    let text = "data obs;\n  infile 'obs.dat';\n  input year 1-4 month 6-7 site $ 9-16 tair 17-22;\nrun;\n";
    assert_eq!(
        placed(text).unwrap(),
        (
            strings(&["year", "month", "site", "tair"]),
            vec![(1, 4), (6, 7), (9, 16), (17, 22)]
        )
    );
}

#[test]
fn numbered_notes_and_inconsistent_positions_place_nothing() {
    // Release notes: numbered items, not fields.
    let text = "Release notes\n1 Fixed bug in the reader\n2 Added export\n3 Faster start\n";
    assert_eq!(listing(text), None);
    // Overlapping ranges.
    assert_eq!(placed("year 1-4\nmonth 3-6\nday 5-8\n"), None);
    // Numbers that neither count 1, 2, 3 nor make ranges.
    assert_eq!(placed("2019 was dry\n2020 was wet\n"), None);
    // A statement with a record break reads as no statement.
    assert_eq!(placed("(I4,/,F6.1)\nyear temp\n"), None);
    // A statement whose names are not given: nothing.
    assert_eq!(listing("(I4,I2,F6.1)\n\nSee the manual.\n"), None);
    // Years of a copyright notice are no character ranges (the first field would
    // start far into the line).
    let text = "Copyright:\n           2004-2006 Wolfgang Hoschek\n           2006-2008 Varun Kumar\n           2012-2016 Emmanuel Bourg\n";
    assert_eq!(placed(text), None);
    // `g10` is no format code; names that read as sentences take no positions.
    let text = "Copyright: 2003, g10 Code GmbH\nCopyright: 2004, 2005, g10 Code GmbH\n";
    assert_eq!(placed(text), None);
    // Widths in two sentences are no layout.
    assert_eq!(placed("exceed 3 times\ncurrent 9 of them\n"), None);
}
