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
