//! Companion documentation: a format text beside a headerless `.dat` and a
//! `_variabledescrip.csv` beside a headerless `.csv` name their columns — in `describe`,
//! in search — and keep naming them as the documentation changes or goes.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// A headerless fixed-width file of monthly observations (its columns named by
/// [`station_doc`]).
pub(crate) const STATION_DAT: &str = "\
1999   1  12.5   3.2
1999   2  13.1   4.0
1999   3  -2.0   1.5
2000   1  11.0   6.1
2000   2   9.5   2.2
2000   3   8.0   0.9
";

/// The documentation of [`STATION_DAT`], naming its third column `temp`.
pub(crate) fn station_doc(temp: &str) -> String {
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

/// Twelve states: code and full name.
const STATES: [(&str, &str); 12] = [
    ("AL", "Alabama"),
    ("AK", "Alaska"),
    ("AZ", "Arizona"),
    ("CA", "California"),
    ("CO", "Colorado"),
    ("FL", "Florida"),
    ("GA", "Georgia"),
    ("NY", "New York"),
    ("OH", "Ohio"),
    ("PA", "Pennsylvania"),
    ("TX", "Texas"),
    ("WA", "Washington"),
];

/// A lake where `labor/unemployment.csv` names states by two-letter code and
/// `labor/state_codes.csv` maps the codes to full names, beside unrelated files (one of
/// them a small table with a unique column of its own).
pub(crate) fn lookup_lake() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    let mut codes = String::from("abbrev,state_name\n");
    let mut rates = String::from("year,state,unemployment_rate\n");
    for (c, n) in STATES {
        codes.push_str(&format!("{c},{n}\n"));
    }
    for y in 2001..=2020 {
        for (i, (c, _)) in STATES.iter().enumerate() {
            rates.push_str(&format!(
                "{y},{c},{}.{}\n",
                3 + (i + y as usize) % 6,
                i % 10
            ));
        }
    }
    write(&lake, "labor/state_codes.csv", &codes);
    write(&lake, "labor/unemployment.csv", &rates);
    write(
        &lake,
        "labor/occupations.csv",
        "occupation,median_wage\nnurse,77600\nwelder,47010\nbaker,31880\n",
    );
    write(
        &lake,
        "geo/volcanoes.csv",
        "volcano,country,elevation_m\nEtna,Italy,3357\nFuji,Japan,3776\nRainier,USA,4392\n",
    );
    write(&lake, "notes.md", "# Notes\n\nLabor market figures.\n");
    (tmp, lake)
}

#[test]
fn a_lookup_table_is_returned_with_the_data_whose_codes_it_names() {
    let (_tmp, lake) = lookup_lake();
    index_json(&lake, &[]);
    let q = "unemployment rate in California, Texas and New York";
    let hits = json_lines(&run_ok(&lake, &["search", q, "--json"]));
    assert_eq!(hits[0]["path"], "labor/unemployment.csv", "{hits:?}");
    assert_eq!(
        hits[0]["companions"],
        serde_json::json!([{"path": "labor/state_codes.csv", "why": "lookup: state → state_name"}])
    );
    // Reachable as a hit of its own too, below the data it goes with (at its own
    // score, or filling the list); no hit below names it again.
    let all = paths(&hits);
    let at = all
        .iter()
        .position(|p| p == "labor/state_codes.csv")
        .expect("the lookup is a hit of its own");
    assert!(at > 0, "{all:?}");
    for h in &hits[1..] {
        assert!(h.get("companions").is_none(), "{h}");
    }
    let text = run_ok(&lake, &["search", q]);
    assert!(
        text.contains("labor/unemployment.csv  ")
            && text.contains("    with: labor/state_codes.csv (lookup: state → state_name)\n"),
        "{text}"
    );

    // The lookup as the best hit: named as a hit, not repeated as a companion below.
    let hits = json_lines(&run_ok(
        &lake,
        &["search", "state_codes abbrev state_name", "--json"],
    ));
    assert_eq!(hits[0]["path"], "labor/state_codes.csv", "{hits:?}");
    let data = hits
        .iter()
        .find(|h| h["path"] == "labor/unemployment.csv")
        .expect("the data file matches too");
    assert!(data.get("companions").is_none(), "{data}");

    // Over HTTP, the same hits.
    let server = crate::serve::Server::start(&lake.join(".lakestar"), &[]);
    let http = crate::serve::Http::new(&server);
    let (st, found) = http.get("/search?q=unemployment%20rate%20in%20California&k=3");
    assert_eq!(st, 200, "{found}");
    assert_eq!(
        found["hits"][0]["companions"][0]["path"], "labor/state_codes.csv",
        "{found}"
    );
    drop(http);
    server.stop();

    // An index made before lookups: the next run, with nothing changed, links them.
    let db = rusqlite::Connection::open(lake.join(".lakestar/catalog.sqlite")).unwrap();
    db.execute_batch("DROP TABLE lookups; DELETE FROM meta WHERE key = 'lookups_version';")
        .unwrap();
    drop(db);
    let hits = json_lines(&run_ok(&lake, &["search", q, "--json"]));
    assert!(hits[0].get("companions").is_none(), "{}", hits[0]);
    index_json(&lake, &[]);
    let hits = json_lines(&run_ok(&lake, &["search", q, "--json"]));
    assert_eq!(
        hits[0]["companions"][0]["path"], "labor/state_codes.csv",
        "{}",
        hits[0]
    );

    // The lookup gone (or no longer holding the codes), the link goes with it.
    write(
        &lake,
        "labor/state_codes.csv",
        "abbrev,state_name\nON,Ontario\nQC,Quebec\nBC,British Columbia\n",
    );
    index_json(&lake, &[]);
    let hits = json_lines(&run_ok(&lake, &["search", q, "--json"]));
    assert_eq!(hits[0]["path"], "labor/unemployment.csv", "{hits:?}");
    assert!(hits[0].get("companions").is_none(), "{}", hits[0]);
    std::fs::remove_file(lake.join("labor/state_codes.csv")).unwrap();
    index_json(&lake, &[]);
    let hits = json_lines(&run_ok(&lake, &["search", q, "--json"]));
    assert!(hits[0].get("companions").is_none(), "{}", hits[0]);
}

/// A data file's documentation is its companion in search, and a hit of its own below
/// the data.
#[test]
fn documentation_is_returned_with_the_data_it_documents() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    write(&lake, "birds/survey.csv", SURVEY_CSV);
    write(&lake, "birds/survey_variabledescrip.csv", SURVEY_DOC);
    write(&lake, "notes.md", "# Notes\n\nNothing about birds.\n");
    index_json(&lake, &[]);
    let hits = json_lines(&run_ok(&lake, &["search", "nest_count wingspan", "--json"]));
    assert_eq!(hits[0]["path"], "birds/survey.csv", "{hits:?}");
    assert_eq!(
        hits[0]["companions"],
        serde_json::json!([{"path": "birds/survey_variabledescrip.csv", "why": "documents it"}])
    );
    // A hit of its own once, below the data it documents.
    let at: Vec<usize> = paths(&hits)
        .iter()
        .enumerate()
        .filter(|(_, p)| p.contains("variabledescrip"))
        .map(|(i, _)| i)
        .collect();
    assert!(at.len() == 1 && at[0] > 0, "{hits:#?}");
}

/// The data file is searched by what its lookup says its codes mean: a question in
/// full state names finds the file that holds only the abbreviations, matching its
/// values, with the lookup beside it.
#[test]
fn a_data_file_is_found_by_its_lookups_labels() {
    let (_tmp, lake) = lookup_lake();
    index_json(&lake, &[]);
    let hits = json_lines(&run_ok(
        &lake,
        &["search", "Colorado and Arizona", "--json"],
    ));
    let data = hits
        .iter()
        .find(|h| h["path"] == "labor/unemployment.csv")
        .unwrap_or_else(|| panic!("{hits:#?}"));
    assert!(
        data["reasons"][0].as_str().unwrap().contains("values"),
        "{data}"
    );
    // The labels are the lookup's, kept with the link: replaced, they follow.
    write(
        &lake,
        "labor/state_codes.csv",
        &STATES
            .iter()
            .fold(String::from("abbrev,state_name\n"), |mut t, (c, n)| {
                t.push_str(&format!("{c},State of {n}land\n"));
                t
            }),
    );
    index_json(&lake, &[]);
    let hits = json_lines(&run_ok(&lake, &["search", "Coloradoland", "--json"]));
    assert!(
        hits.iter().any(|h| h["path"] == "labor/unemployment.csv"
            && h["reasons"][0].as_str().unwrap().contains("values")),
        "{hits:#?}"
    );
}

/// A lookup in a folder above the data (a `reference/`-style table at the lake root)
/// serves the data below it; replaced by a table that no longer holds the codes, the
/// links below go on the next run, though nothing below changed.
#[test]
fn a_lookup_above_the_data_serves_the_folders_below() {
    let (_tmp, lake) = lookup_lake();
    std::fs::rename(
        lake.join("labor/state_codes.csv"),
        lake.join("state_codes.csv"),
    )
    .unwrap();
    write(
        &lake,
        "labor/regional/2020/rates.csv",
        &STATES
            .iter()
            .fold(String::from("state,rate\n"), |mut t, (c, _)| {
                t.push_str(&format!("{c},4.{}\n", c.len()));
                t
            }),
    );
    index_json(&lake, &[]);
    let q = "unemployment rate in California, Texas and New York";
    // Each data file on its own (a companion is returned once per search).
    for (data, glob) in [
        ("labor/unemployment.csv", "labor/*.csv"),
        ("labor/regional/2020/rates.csv", "labor/regional/**"),
    ] {
        let args = ["search", q, "--json", "-k", "4", "--glob", glob];
        let hits = json_lines(&run_ok(&lake, &args));
        let hit = hits
            .iter()
            .find(|h| h["path"] == data)
            .unwrap_or_else(|| panic!("{data}: {hits:#?}"));
        assert_eq!(hit["companions"][0]["path"], "state_codes.csv", "{hits:#?}");
    }
    write(
        &lake,
        "state_codes.csv",
        "abbrev,state_name\nON,Ontario\nQC,Quebec\nBC,British Columbia\n",
    );
    index_json(&lake, &[]);
    let hits = json_lines(&run_ok(&lake, &["search", q, "--json", "-k", "4"]));
    assert!(
        hits.iter().all(|h| h.get("companions").is_none()),
        "{hits:#?}"
    );
}

/// A table with a row per member of a collection (the states of `by_state/{word}.csv`,
/// the years of `annual/crimes_{year}.csv`), beside it or a folder up, goes with the
/// collection's hit as its summary.
#[test]
fn a_collections_summary_table_goes_with_its_hit() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    let states = ["Ohio", "Utah", "Texas", "Iowa", "Idaho", "Maine"];
    let mut totals = String::from("state,population,counties\n");
    for (i, s) in states.iter().enumerate() {
        write(
            &lake,
            &format!("census/by_state/{s}.csv"),
            &format!("county,population\n{s} County A,{i}1537\n{s} County B,{i}2948\n"),
        );
        totals.push_str(&format!("{s},{i}000000,{}\n", 10 + i));
    }
    write(&lake, "census/state_totals.csv", &totals);
    write(
        &lake,
        "census/regions.csv",
        "region,division\nMidwest,East North Central\nWest,Mountain\nSouth,West South Central\n",
    );
    for y in 2010..=2015 {
        write(
            &lake,
            &format!("police/annual/crimes_{y}.csv"),
            &format!("date,offense\n{y}-03-01,theft\n{y}-07-04,assault\n"),
        );
    }
    write(
        &lake,
        "police/crime_totals_by_year.csv",
        "year,incidents,arrests\n2010,100,10\n2011,120,12\n2012,90,9\n2013,80,8\n2014,95,7\n2015,99,6\n",
    );
    index_json(&lake, &[]);
    let hits = json_lines(&run_ok(
        &lake,
        &[
            "search",
            "What share of the population lives in Ohio counties?",
            "-k",
            "5",
            "--json",
        ],
    ));
    let ohio = hits
        .iter()
        .find(|h| h["path"] == "census/by_state/Ohio.csv")
        .unwrap_or_else(|| panic!("{hits:#?}"));
    let with: Vec<(&str, &str)> = ohio["companions"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| (c["path"].as_str().unwrap(), c["why"].as_str().unwrap()))
                .collect()
        })
        .unwrap_or_default();
    assert!(
        with.contains(&(
            "census/state_totals.csv",
            "summary: a row per member (state)"
        )),
        "{hits:#?}"
    );
    // Named with the collection's hit, and a hit of its own once at most, below it.
    assert!(
        hits.iter()
            .filter(|h| h["path"] == "census/state_totals.csv")
            .count()
            <= 1
    );
    assert_ne!(hits[0]["path"], "census/state_totals.csv");
    let text = run_ok(
        &lake,
        &[
            "search",
            "Which offenses were reported on 4 July 2012?",
            "-k",
            "5",
        ],
    );
    assert!(
        text.contains("with: police/crime_totals_by_year.csv (summary: a row per member (year))"),
        "{text}"
    );
}
