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
