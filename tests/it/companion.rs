//! Companion documentation: a format text beside a headerless `.dat` and a
//! `_variabledescrip.csv` beside a headerless `.csv` name their columns — in `describe`,
//! in search — and keep naming them as the documentation changes or goes.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

const STATION_DAT: &str = "\
1999   1  12.5   3.2
1999   2  13.1   4.0
1999   3  -2.0   1.5
2000   1  11.0   6.1
2000   2   9.5   2.2
2000   3   8.0   0.9
";

fn station_doc(temp: &str) -> String {
    format!(
        "Format of station.dat, one line per observation\n\n\
         Col  Name   Format  Units  Description\n\
         1    YEAR   I4             year\n\
         2    MONTH  I2             month of year\n\
         3    {temp}   F6.1    degC   air temperature\n\
         4    WSPD   F5.1    m/s    mean wind speed\n"
    )
}

const SURVEY_CSV: &str = "north,12,31.5\nsouth,7,29.0\neast,3,33.2\nwest,9,30.1\nnorth,4,28.7\n";
const SURVEY_DOC: &str = "Variable,Description,Units\n\
site,Survey site,\n\
nest_count,Nests counted,nests\n\
wingspan,Mean wingspan of adults,cm\n";

fn write(lake: &Path, rel: &str, body: &str) {
    let p = lake.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

fn describe(lake: &Path, rel: &str) -> Value {
    serde_json::from_str(&run_ok(lake, &["describe", rel, "--json"])).unwrap()
}

fn names(v: &Value) -> Vec<String> {
    v["description"]["content"]["columns"]
        .as_array()
        .unwrap_or_else(|| panic!("no columns: {v}"))
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

fn units(v: &Value) -> Vec<Option<String>> {
    v["description"]["content"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["unit"].as_str().map(str::to_string))
        .collect()
}

fn notes(v: &Value) -> Vec<String> {
    v["description"]["notes"]
        .as_array()
        .map(|a| a.iter().map(|n| n.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// The `load` line, when the table has one, names the columns as described.
fn assert_load_names(v: &Value) {
    if let Some(load) = v["description"]["content"]["load"].as_str() {
        let list = names(v)
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", ");
        assert!(load.contains(&format!("names=[{list}]")), "{load}");
    }
}

fn search(lake: &Path, q: &str) -> Vec<String> {
    paths(&json_lines(&run_ok(
        lake,
        &["search", q, "-k", "3", "--json"],
    )))
}

fn opt(v: &[Option<&str>]) -> Vec<Option<String>> {
    v.iter().map(|u| u.map(str::to_string)).collect()
}

#[test]
fn documentation_beside_headerless_files_names_their_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    write(&lake, "obs/station.dat", STATION_DAT);
    write(&lake, "obs/station_dat.text", &station_doc("TAIR"));
    write(&lake, "birds/survey.csv", SURVEY_CSV);
    write(&lake, "birds/survey_variabledescrip.csv", SURVEY_DOC);
    // Other files, headered, that search must rank below.
    write(
        &lake,
        "sales/orders.csv",
        "region,amount,product\nemea,10,tea\napac,12,coffee\n",
    );
    write(
        &lake,
        "sales/stock.csv",
        "product,count,warehouse\ntea,3,a\ncoffee,4,b\n",
    );
    write(
        &lake,
        "notes.md",
        "# Notes\n\nThe lake holds observations and sales.\n",
    );
    index_json(&lake, &[]);

    let st = describe(&lake, "obs/station.dat");
    assert_eq!(names(&st), ["YEAR", "MONTH", "TAIR", "WSPD"]);
    assert_eq!(units(&st), opt(&[None, None, Some("degC"), Some("m/s")]));
    assert_eq!(notes(&st)[0], "columns named by obs/station_dat.text");
    assert!(
        st["text"].as_str().unwrap().contains("TAIR"),
        "{}",
        st["text"]
    );
    assert_load_names(&st);
    let doc = describe(&lake, "obs/station_dat.text");
    assert_eq!(notes(&doc), ["documents obs/station.dat"]);
    assert!(doc["text"]
        .as_str()
        .unwrap()
        .contains("note: documents obs/station.dat"));

    let sv = describe(&lake, "birds/survey.csv");
    assert_eq!(names(&sv), ["site", "nest_count", "wingspan"]);
    assert_eq!(units(&sv), opt(&[None, Some("nests"), Some("cm")]));
    assert_eq!(
        notes(&sv),
        [
            "columns named by birds/survey_variabledescrip.csv",
            "column meanings: site = Survey site; nest_count = Nests counted; wingspan = Mean wingspan of adults"
        ]
    );
    assert_load_names(&sv);
    let sd = describe(&lake, "birds/survey_variabledescrip.csv");
    assert_eq!(notes(&sd), ["documents birds/survey.csv"]);

    // Search finds the data files by their documented column names.
    let hits = search(&lake, "nest_count");
    assert!(
        hits[..2].contains(&"birds/survey.csv".to_string()),
        "{hits:?}"
    );
    let hits = search(&lake, "WSPD");
    assert!(
        hits[..2].contains(&"obs/station.dat".to_string()),
        "{hits:?}"
    );

    // The documentation renames a column: the data file, unchanged, follows.
    write(&lake, "obs/station_dat.text", &station_doc("TDRY"));
    let r = index_json(&lake, &[]);
    assert_eq!((n(&r, "modified"), n(&r, "analyzed")), (1, 1), "{r}");
    let st = describe(&lake, "obs/station.dat");
    assert_eq!(names(&st), ["YEAR", "MONTH", "TDRY", "WSPD"]);
    assert_load_names(&st);
    let hits = search(&lake, "TDRY");
    assert!(
        hits[..2].contains(&"obs/station.dat".to_string()),
        "{hits:?}"
    );

    // The documentation goes: the names revert, and no note names it.
    std::fs::remove_file(lake.join("birds/survey_variabledescrip.csv")).unwrap();
    index_json(&lake, &[]);
    let sv = describe(&lake, "birds/survey.csv");
    assert_eq!(names(&sv), ["column_1", "column_2", "column_3"]);
    assert_eq!(units(&sv), opt(&[None, None, None]));
    assert!(notes(&sv).is_empty(), "{:?}", notes(&sv));
    assert_load_names(&sv);

    // New documentation appears for the existing data file, under a readme-like name.
    write(
        &lake,
        "birds/readme.txt",
        "Columns of the survey files\nColumn 1: site\nColumn 2: nests\nColumn 3: span (cm)\n",
    );
    index_json(&lake, &[]);
    let sv = describe(&lake, "birds/survey.csv");
    assert_eq!(names(&sv), ["site", "nests", "span"]);
    assert_eq!(units(&sv), opt(&[None, None, Some("cm")]));
    assert_eq!(notes(&sv), ["columns named by birds/readme.txt"]);
    assert_eq!(
        notes(&describe(&lake, "birds/readme.txt")),
        ["documents birds/survey.csv"]
    );

    // The data file gains a column: the documentation no longer fits it.
    write(&lake, "birds/survey.csv", &SURVEY_CSV.replace('\n', ",1\n"));
    index_json(&lake, &[]);
    let sv = describe(&lake, "birds/survey.csv");
    assert_eq!(names(&sv), ["column_1", "column_2", "column_3", "column_4"]);
    assert!(notes(&sv).is_empty(), "{:?}", notes(&sv));
    assert!(notes(&describe(&lake, "birds/readme.txt")).is_empty());
}
