//! Search keeps every needed file reachable: folding never shortens the list, the time
//! windows and clauses of a question each keep places near the top, and a question's
//! words find files that spell them otherwise. Each mechanism is switched off by its
//! ranking variable to show that it, and nothing else, makes the difference.

use crate::common::*;
use serde_json::Value;
use std::fs;
use std::path::Path;

fn search_env(lake: &Path, q: &str, k: usize, env: &[(&str, &str)]) -> Vec<Value> {
    let k = k.to_string();
    json_lines(&run_ok_env(lake, &["search", q, "-k", &k, "--json"], env))
}

fn reasons(h: &Value) -> String {
    h["reasons"].to_string()
}

/// Four folders of fifty same-schema members, every file sharing the question's word:
/// folded, they are four hits; asked for 100, the list has 100, the rest filling it
/// after the hits that hold them, labelled weak.
#[test]
fn folding_never_shortens_the_list() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    for (folder, column) in [
        ("north", "depth_m"),
        ("south", "flow_rate"),
        ("east", "turbidity"),
        ("west", "salinity"),
    ] {
        let dir = lake.join(folder);
        fs::create_dir_all(&dir).unwrap();
        for i in 0..50 {
            fs::write(
                dir.join(format!("gauge_reading_{i:03}.csv")),
                format!("gauge,reading_value,{column}\ng{i},{i}.5,{}\n", i * 2),
            )
            .unwrap();
        }
    }
    index_json(&lake, &[]);
    let q = "gauge reading values";

    let hits = search_env(&lake, q, 100, &[]);
    assert_eq!(hits.len(), 100, "{:#?}", &hits[..hits.len().min(6)]);
    let mut unique = paths(&hits);
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 100, "each file once");
    // The four collections' hits first, each naming all its other members in JSON.
    for h in &hits[..4] {
        assert_eq!(
            h["collection"]["matching"].as_array().unwrap().len(),
            49,
            "{h}"
        );
        assert!(!reasons(h).contains("fills the list"), "{h}");
    }
    for h in &hits[4..] {
        assert_eq!(h["relevance"], "weak", "{h}");
        assert!(reasons(h).contains("fills the list: with "), "{h}");
        assert!(h["collection"]["id"].is_string(), "{h}");
    }
    // Switched off, the list is the four folded hits.
    let folded = search_env(&lake, q, 100, &[("LAKESTAR_FILL", "0")]);
    assert_eq!(folded.len(), 4, "{folded:#?}");
    // A short list is not filled past what was asked.
    assert_eq!(search_env(&lake, q, 7, &[]).len(), 7);
}

/// A daily collection and a question asking a long window and a one-day window: the
/// day's file is among the first hits, not after the long window's members.
#[test]
fn two_windows_each_keep_places_in_the_top_ten() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    let dir = lake.join("readings");
    fs::create_dir_all(&dir).unwrap();
    let mut days: Vec<String> = (1..=28).map(|d| format!("2012-05-{d:02}")).collect();
    days.extend((1..=28).map(|d| format!("2016-08-{d:02}")));
    for (i, day) in days.iter().enumerate() {
        fs::write(
            dir.join(format!("readings_{day}.csv")),
            format!(
                "time,station,temperature_c\n{day} 08:00,north,{i}.5\n{day} 09:00,south,{i}.25\n"
            ),
        )
        .unwrap();
    }
    index_json(&lake, &[]);
    let q = "temperature readings from May 2nd to May 25th 2012 and on Aug 9, 2016";
    let day = "readings/readings_2016-08-09.csv";
    let rank = |env: &[(&str, &str)]| {
        paths(&search_env(&lake, q, 30, env))
            .iter()
            .position(|p| p == day)
    };
    let shared = rank(&[]);
    assert!(shared.is_some_and(|r| r < 3), "rank {shared:?}");
    let hits = search_env(&lake, q, 10, &[]);
    let may = paths(&hits)
        .iter()
        .filter(|p| p.contains("2012-05-"))
        .count();
    assert!(
        may >= 7,
        "the long window keeps the rest: {:?}",
        paths(&hits)
    );
    // Both moves are shown: the day took its window's turn, and the members rank with
    // their collection's best.
    let d = hits.iter().find(|h| h["path"] == day).unwrap();
    assert!(
        reasons(d).contains("takes the turn of the window asked 2016-08-09 … 2016-08-09"),
        "{d}"
    );
    assert!(
        hits.iter()
            .any(|h| reasons(h).contains("ranks with its collection's best, readings/")),
        "{hits:#?}"
    );
    // Without turns, the long window's members come first.
    let alone = rank(&[("LAKESTAR_WINDOW_SHARES", "0")]);
    assert!(alone.is_none_or(|r| r > shared.unwrap()), "rank {alone:?}");
}

/// Wide files holding a word of every clause of a long question crowd the whole
/// question's list (each matches five of its words, a clause's own table four);
/// searched clause by clause, each clause's table is in the first ten.
#[test]
fn a_five_clause_question_keeps_each_clauses_file() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fs::create_dir_all(&lake).unwrap();
    let clauses: [(&str, [&str; 4]); 5] = [
        ("alpha.csv", ["cargo", "tonnage", "vessel", "harbour"]),
        ("bravo.csv", ["pupils", "meals", "school", "lunch"]),
        ("charlie.csv", ["bridge", "inspection", "grade", "span"]),
        ("delta.csv", ["library", "loans", "branch", "opening"]),
        ("echo.csv", ["trunk", "diameter", "species", "ward"]),
    ];
    for (file, words) in &clauses {
        fs::write(
            lake.join(file),
            format!(
                "{}
1,2,3,4
5,6,7,8
",
                words.join(",")
            ),
        )
        .unwrap();
    }
    for h in 0..30 {
        let header: Vec<&str> = clauses.iter().map(|(_, w)| w[h % 4]).collect();
        fs::write(
            lake.join(format!("summary_{}.csv", (b'a' + h as u8) as char)),
            format!(
                "{},total
1,2,3,4,5,6
",
                header.join(",")
            ),
        )
        .unwrap();
    }
    index_json(&lake, &[]);
    let said = |i: usize| clauses[i].1.join(" ");
    let q = format!(
        "Report the {}; list the {}, and give the {}. Show the {}, then the {}",
        said(0),
        said(1),
        said(2),
        said(3),
        said(4)
    );
    let found = |env: &[(&str, &str)]| {
        let top = paths(&search_env(&lake, &q, 10, env));
        clauses
            .iter()
            .filter(|(f, _)| top.contains(&f.to_string()))
            .count()
    };
    let hits = search_env(&lake, &q, 10, &[]);
    assert_eq!(found(&[]), 5, "{:?}", paths(&hits));
    assert!(
        hits.iter()
            .any(|h| reasons(h).contains("found for the part “")),
        "{hits:#?}"
    );
    // The whole question alone loses clauses to the wide files.
    let alone = found(&[("LAKESTAR_PARTS", "1")]);
    assert!(alone < 5, "{alone}");
}

/// A question saying precipitation finds the rainfall table, and says why; a month's
/// abbreviation in a file name answers its full name.
#[test]
fn other_spellings_of_the_questions_words_find_their_files() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fs::create_dir_all(lake.join("weather")).unwrap();
    fs::create_dir_all(lake.join("shop")).unwrap();
    fs::write(
        lake.join("weather/rainfall_totals.csv"),
        "station,rainfall_mm\nAberdeen,12.5\nDover,3.0\n",
    )
    .unwrap();
    fs::write(
        lake.join("weather/wind_speeds.csv"),
        "station,wind_kmh\nAberdeen,30\nDover,12\n",
    )
    .unwrap();
    fs::write(
        lake.join("shop/sales_jun.csv"),
        "product,units\nwidget,3\ngadget,5\n",
    )
    .unwrap();
    fs::write(
        lake.join("shop/sales_feb.csv"),
        "product,units\nwidget,1\ngadget,2\n",
    )
    .unwrap();
    index_json(&lake, &[]);

    let hits = search_env(&lake, "precipitation at each station", 3, &[]);
    assert_eq!(hits[0]["path"], "weather/rainfall_totals.csv", "{hits:#?}");
    assert!(
        reasons(&hits[0]).contains("says rainfall for precipitation"),
        "{}",
        reasons(&hits[0])
    );
    let off = search_env(
        &lake,
        "precipitation at each station",
        3,
        &[("LAKESTAR_W_SYNONYMS", "0")],
    );
    assert!(
        off.iter().all(|h| !reasons(h).contains("says ")),
        "{off:#?}"
    );

    let hits = search_env(&lake, "units sold in June", 2, &[]);
    assert_eq!(hits[0]["path"], "shop/sales_jun.csv", "{hits:#?}");
}

/// One file per state, named by its two-letter code (`readings_NJ.csv`), with the
/// code in its rows: a question writing the code finds that state's file first and says
/// so; in lowercase, or switched off, the code names nothing. A pronoun the code spells
/// ("for ME") makes no README the file the question names.
#[test]
fn a_member_named_by_its_short_code_is_the_one_singled_out() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    let dir = lake.join("weather");
    fs::create_dir_all(&dir).unwrap();
    let codes = [
        "AL", "AK", "CA", "IN", "ME", "MS", "NJ", "NY", "OR", "TX", "UT", "WA",
    ];
    for (i, code) in codes.iter().enumerate() {
        let rows: String = (0..6)
            .map(|r| format!("{code},station {r},{}.{r},{}\n", 10 + i, 100 + r * i))
            .collect();
        fs::write(
            dir.join(format!("readings_{code}.csv")),
            format!("state,station_name,rainfall_mm,wet_days\n{rows}"),
        )
        .unwrap();
    }
    fs::write(
        dir.join("README.md"),
        "# Weather data\n\nStation files by state.\n",
    )
    .unwrap();
    index_json(&lake, &[]);

    for code in ["NJ", "ME", "OR"] {
        let q = format!("Station readings for {code}");
        let hits = search_env(&lake, &q, 5, &[]);
        let expected = format!("weather/readings_{code}.csv");
        assert_eq!(hits[0]["path"], expected.as_str(), "{q}: {hits:#?}");
        assert!(
            reasons(&hits[0]).contains(&format!("member {code}")),
            "{}",
            reasons(&hits[0])
        );
        for h in &hits {
            assert!(!reasons(h).contains("file readme.md"), "{q}: {h}");
        }
    }
    // Written in lowercase, "or" and "me" are words; switched off, codes name nothing.
    for (q, env) in [
        ("Station readings for nj", &[][..]),
        (
            "Station readings for NJ",
            &[("LAKESTAR_SHORT_CODES", "0")][..],
        ),
    ] {
        let hits = search_env(&lake, q, 5, env);
        assert!(
            hits.iter().all(|h| !reasons(h).contains("member ")),
            "{q}: {hits:#?}"
        );
    }
}

/// Four tables of one subject whose time is written in four forms the reader turns
/// into dates: a year column with missing-value markers, `YYYYMM` months, fractional
/// years and quarters. A question asking a year finds the table covering it first,
/// and says so.
#[test]
fn time_written_in_any_read_form_is_time_evidence() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fs::create_dir_all(&lake).unwrap();
    let table = |name: &str, column: &str, times: Vec<String>| {
        let rows: String = times
            .iter()
            .enumerate()
            .map(|(i, t)| format!("st{},{t},{}.{}\n", i % 4, 10 + i % 9, i % 10))
            .collect();
        fs::write(
            lake.join(name),
            format!("station,{column},reading_mm\n{rows}"),
        )
        .unwrap();
    };
    let markers = ["..", "n/a", "-"];
    table(
        "gauges_early.csv",
        "year",
        (0..120)
            .map(|i| {
                if i % 13 == 5 {
                    markers[i % 3].to_string()
                } else {
                    (1990 + i % 10).to_string()
                }
            })
            .collect(),
    );
    table(
        "gauges_monthly.csv",
        "period",
        (0..60)
            .map(|i| format!("{}{:02}", 2000 + i / 12, i % 12 + 1))
            .collect(),
    );
    table(
        "gauges_decimal.csv",
        "decimal_year",
        (0..50)
            .map(|i| format!("{:.2}", 2005.0 + f64::from(i) * 0.1))
            .collect(),
    );
    table(
        "gauges_quarterly.csv",
        "quarter",
        (0..20)
            .map(|i| format!("{} Q{}", 2010 + i / 4, i % 4 + 1))
            .collect(),
    );
    index_json(&lake, &[]);
    for (year, file) in [
        ("1995", "gauges_early.csv"),
        ("2002", "gauges_monthly.csv"),
        ("2007", "gauges_decimal.csv"),
        ("2012", "gauges_quarterly.csv"),
    ] {
        let q = format!("station gauge readings in {year}");
        let hits = search_env(&lake, &q, 4, &[]);
        assert_eq!(hits[0]["path"], file, "{q}: {hits:#?}");
        assert!(
            reasons(&hits[0]).contains(&format!("(asked {year}-01-01 … {year}-12-31)")),
            "{q}: {}",
            reasons(&hits[0])
        );
    }
}

/// A table named by its subject and year, with coded columns (`st`, `acgr_pct`), among
/// wide tables whose columns share the question's everyday words (`High`, `School`):
/// the question names the file's words, not its year, and finds it first.
#[test]
fn a_file_is_named_by_its_words_without_its_year() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fs::create_dir_all(lake.join("education")).unwrap();
    fs::create_dir_all(lake.join("markets")).unwrap();
    fs::create_dir_all(lake.join("sports")).unwrap();
    let states = ["AL", "AK", "NV", "OR", "TX", "UT"];
    let rows: String = states
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{s},{}.5,{}\n", 70 + i * 3, 9000 + i * 1000))
        .collect();
    fs::write(
        lake.join("education/graduation_rates_2022.csv"),
        format!("st,acgr_pct,cohort\n{rows}"),
    )
    .unwrap();
    for i in 0..6 {
        let rows: String = (0..8)
            .map(|d| {
                format!(
                    "2021-01-{:02},{}.1,{}.9,{}.0,{}\n",
                    d + 1,
                    10 + d,
                    12 + d,
                    9 + d,
                    1000 * d
                )
            })
            .collect();
        fs::write(
            lake.join(format!("markets/ticker_{i}_prices.csv")),
            format!("Date,Open,High,Low,Volume\n{rows}"),
        )
        .unwrap();
    }
    fs::write(
        lake.join("sports/league_table.csv"),
        "School,Wins,Losses,Points\nLincoln,5,1,12\nEastwood,3,3,7\n",
    )
    .unwrap();
    index_json(&lake, &[]);
    let q = "Compare the high school graduation rate of Oregon with Nevada";

    let hits = search_env(&lake, q, 5, &[]);
    assert_eq!(
        hits[0]["path"], "education/graduation_rates_2022.csv",
        "{hits:#?}"
    );
    assert!(
        reasons(&hits[0]).contains("file graduation_rates"),
        "{}",
        reasons(&hits[0])
    );
    let off = search_env(&lake, q, 5, &[("LAKESTAR_FILE_WORDS", "0")]);
    assert!(
        off.iter()
            .all(|h| !reasons(h).contains("file graduation_rates")),
        "{off:#?}"
    );
}
