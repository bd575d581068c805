//! Collections: same-schema siblings grouped under one path template, kept up to date by
//! incremental runs.

use crate::common::*;
use serde_json::Value;
use std::fs;

fn collections(lake: &std::path::Path) -> Vec<Value> {
    run_ok(lake, &["collections", "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn siblings_are_grouped_and_follow_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    for i in 1..=6 {
        let dir = lake.join(format!("readings/station-{i:03}"));
        fs::create_dir_all(&dir).unwrap();
        for d in [1, 8] {
            fs::write(
                dir.join(format!("temp-201903{d:02}_to_201903{:02}.csv", d + 6)),
                format!(
                    "day,temp_c\n2019-03-{d:02},{i}.5\n2019-03-{:02},{i}.0\n",
                    d + 6
                ),
            )
            .unwrap();
        }
    }
    // Same template, other schema: not a member.
    fs::write(
        lake.join("readings/station-001/temp-20190401_to_20190407.csv"),
        "x,y,z\n1,2,3\n",
    )
    .unwrap();
    fs::write(lake.join("readme.md"), "# Readings\n").unwrap();
    index_json(&lake, &[]);
    let cs = collections(&lake);
    assert_eq!(cs.len(), 1, "{cs:?}");
    let c = &cs[0];
    assert_eq!(
        c["template"],
        "readings/station-{n}/temp-{date}_to_{date}.csv"
    );
    assert_eq!(c["members"], 12);
    assert_eq!(
        (c["time_start"].as_str(), c["time_end"].as_str()),
        (Some("2019-03-01"), Some("2019-03-14"))
    );
    assert_eq!(c["parts"][0]["distinct"], 6);

    let d: Value = serde_json::from_str(&run_ok(
        &lake,
        &[
            "describe",
            "readings/station-002/temp-20190301_to_20190307.csv",
            "--json",
        ],
    ))
    .unwrap();
    assert_eq!(d["collection"]["id"], c["id"]);
    let id = c["id"].as_str().unwrap();
    // The list shows the id that `collections ID` takes.
    let list = run_ok(&lake, &["collections"]);
    assert!(
        list.contains(&format!("collection {id} of 12 csv files")),
        "{list}"
    );
    let full = run_ok(&lake, &["collections", id]);
    assert!(
        full.contains(&format!("collection {id} of 12 csv files"))
            && full.contains("shared schema")
            && full.contains("temp_c"),
        "{full}"
    );

    // Deleting a member and adding one are reflected by the next run.
    fs::remove_file(lake.join("readings/station-006/temp-20190308_to_20190314.csv")).unwrap();
    fs::create_dir_all(lake.join("readings/station-007")).unwrap();
    fs::write(
        lake.join("readings/station-007/temp-20190315_to_20190321.csv"),
        "day,temp_c\n2019-03-15,1.0\n",
    )
    .unwrap();
    fs::write(
        lake.join("readings/station-007/temp-20190322_to_20190328.csv"),
        "day,temp_c\n2019-03-22,1.0\n",
    )
    .unwrap();
    index_json(&lake, &[]);
    let cs = collections(&lake);
    assert_eq!(cs[0]["members"], 13);
    assert_eq!(cs[0]["time_end"], "2019-03-22");
    // A no-change run leaves them alone.
    assert_counts(&index_json(&lake, &[]), &[("analyzed", 0)]);
    assert_eq!(collections(&lake), cs);
}

/// Names for generated members: the test's data, not a rule of the grouping.
const REGIONS: [&str; 12] = [
    "Ohio", "Utah", "Texas", "Maine", "Nevada", "Oregon", "Alaska", "Idaho", "Iowa", "Kansas",
    "Vermont", "Montana",
];

fn search(lake: &std::path::Path, q: &str, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["search", q, "--json"];
    if !extra.contains(&"-k") {
        args.extend(["-k", "3"]);
    }
    args.extend(extra);
    // Folding is what these tests look at: the hits before those filling the list.
    unfilled(json_lines(&crate::common::search_out(lake, &args)))
}

/// Per-state files of one schema beside national tables that name the same states in
/// their values: the states form one collection, found for a question naming three of
/// them or asking about each state.
#[test]
fn word_named_siblings_are_one_collection_found_by_their_names() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    let by_state = lake.join("by_state");
    fs::create_dir_all(&by_state).unwrap();
    for (i, s) in REGIONS.iter().enumerate() {
        fs::write(
            by_state.join(format!("{s}.csv")),
            format!("county,population,median_income\nA{i},{i}100,5{i}000\nB{i},{i}200,4{i}000\n"),
        )
        .unwrap();
    }
    let national = lake.join("national");
    fs::create_dir_all(&national).unwrap();
    let rows = |f: &dyn Fn(usize) -> String| -> String {
        REGIONS
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{s},{}\n", f(i)))
            .collect()
    };
    fs::write(
        national.join("gdp.csv"),
        format!("state,gdp_musd\n{}", rows(&|i| format!("{i}5000"))),
    )
    .unwrap();
    fs::write(
        national.join("unemployment.csv"),
        format!(
            "state,month,rate\n{}",
            rows(&|i| format!("2019-0{},{i}.1", i % 9 + 1))
        ),
    )
    .unwrap();
    fs::write(
        national.join("capitals.csv"),
        format!(
            "state,capital,founded\n{}",
            rows(&|i| format!("City{i},18{i}0"))
        ),
    )
    .unwrap();
    // Two same-schema files alone are not a collection.
    fs::create_dir_all(lake.join("reports")).unwrap();
    for r in ["east", "west"] {
        fs::write(lake.join(format!("reports/{r}.csv")), "item,amount\nx,1\n").unwrap();
    }
    // Numbered siblings stay a numeric collection.
    fs::create_dir_all(lake.join("daily")).unwrap();
    for d in 1..=4 {
        fs::write(
            lake.join(format!("daily/sales-2019030{d}.csv")),
            format!("store,sales\nx,{d}\n"),
        )
        .unwrap();
    }
    index_json(&lake, &[]);

    let cs = collections(&lake);
    let templates: Vec<&str> = cs.iter().map(|c| c["template"].as_str().unwrap()).collect();
    assert_eq!(templates.len(), 2, "{cs:#?}");
    assert!(
        templates.contains(&"daily/sales-{date}.csv"),
        "{templates:?}"
    );
    let c = cs
        .iter()
        .find(|c| c["template"] == "by_state/{word}.csv")
        .unwrap();
    assert_eq!(c["members"], 12);
    let mut sorted = REGIONS.to_vec();
    sorted.sort();
    assert_eq!(c["names"], serde_json::json!(sorted));
    let listed = run_ok(&lake, &["collections"]);
    assert!(listed.contains("{word}: Alaska, Idaho, Iowa"), "{listed}");

    // A question naming three members: those three, each a hit of its own (their own
    // names set them apart), the other members folded under the first.
    let hits = search(&lake, "compare Ohio, Utah and Texas", &[]);
    let named = [
        "by_state/Ohio.csv",
        "by_state/Utah.csv",
        "by_state/Texas.csv",
    ];
    let mut top: Vec<&str> = hits.iter().map(|h| h["path"].as_str().unwrap()).collect();
    top.sort();
    let mut want = named.to_vec();
    want.sort();
    assert_eq!(top, want, "{hits:#?}");
    let first = hits
        .iter()
        .find(|h| h["collection"]["matched"].as_u64().is_some_and(|m| m > 0))
        .unwrap_or_else(|| panic!("no hit folds the other members: {hits:#?}"));
    assert_eq!(first["collection"]["id"], c["id"]);
    assert!(first["collection"]["matching"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| !named.contains(&m.as_str().unwrap())));
    // Expanded, the three named members come first.
    let expanded = search(&lake, "compare Ohio, Utah and Texas", &["--expand"]);
    let mut top: Vec<&str> = expanded
        .iter()
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    top.sort();
    assert_eq!(top, want, "{expanded:#?}");

    // A question about each state, naming none: every member is asked for, so the
    // members are hits of their own (the rest named by the first).
    let hits = search(
        &lake,
        "median income of the counties for each state",
        &["-k", "8"],
    );
    let members = hits
        .iter()
        .filter(|h| h["collection"]["id"] == c["id"])
        .count();
    assert!(members >= 6, "{hits:#?}");
    // Without "each", one hit stands for them.
    let hits = search(&lake, "median income of the counties", &["-k", "8"]);
    let members = hits
        .iter()
        .filter(|h| h["collection"]["id"] == c["id"])
        .count();
    assert_eq!(members, 1, "{hits:#?}");

    // A new member joins, and the others' documents now name it: every member matches
    // its name in the text (not only by vector similarity).
    let text_matches = |q: &str| {
        search(&lake, q, &["--expand", "-k", "30"])
            .iter()
            .filter(|h| {
                h["path"].as_str().unwrap().starts_with("by_state/")
                    && h["reasons"][0]
                        .as_str()
                        .is_some_and(|r| r.starts_with("matches"))
            })
            .count()
    };
    assert_eq!(text_matches("Wyoming"), 0);
    fs::write(
        by_state.join("Wyoming.csv"),
        "county,population,median_income\nW,1,2\n",
    )
    .unwrap();
    index_json(&lake, &[]);
    let cs = collections(&lake);
    let c = cs
        .iter()
        .find(|c| c["template"] == "by_state/{word}.csv")
        .unwrap();
    assert_eq!(c["members"], 13);
    assert_eq!(text_matches("Wyoming"), 13);
}

/// A catalog whose collections were derived before word-named siblings regroups every
/// folder on its next run, and the members' search documents gain the names.
#[test]
fn an_older_catalog_derives_word_collections_on_its_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fs::create_dir_all(lake.join("regions")).unwrap();
    for r in ["north", "south", "east", "west"] {
        fs::write(
            lake.join(format!("regions/sales_{r}.csv")),
            "product,units\nx,1\n",
        )
        .unwrap();
    }
    index_json(&lake, &[]);
    assert_eq!(collections(&lake).len(), 1);
    // As an index made by the previous rule would be.
    let db = rusqlite::Connection::open(lake.join(".lakestar/catalog.sqlite")).unwrap();
    db.execute_batch(
        "DELETE FROM meta WHERE key = 'collections_version';
         DELETE FROM collections; UPDATE files SET collection = NULL;",
    )
    .unwrap();
    drop(db);
    index_json(&lake, &[]);
    let cs = collections(&lake);
    assert_eq!(cs.len(), 1, "{cs:?}");
    assert_eq!(cs[0]["template"], "regions/sales_{word}.csv");
    assert_eq!(
        cs[0]["names"],
        serde_json::json!(["east", "north", "south", "west"])
    );
    // Nothing changed since: the next run leaves them alone.
    index_json(&lake, &[]);
    assert_eq!(collections(&lake), cs);
}

/// A yearly collection (one file per year, 1995–2023, each covering its year) beside
/// other tables: a question over a range of years gets the members in that range as
/// hits of their own, a question about one day gets that day's member, and a question
/// naming no time gets the collection once.
#[test]
fn members_are_picked_by_the_days_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    let annual = lake.join("crime/annual");
    fs::create_dir_all(&annual).unwrap();
    for y in 1995..=2023 {
        let mut t = String::from("date,offense,district,reports\n");
        for (m, d) in [(1, 3), (5, 3), (8, 17), (12, 30)] {
            t.push_str(&format!(
                "{y}-{m:02}-{d:02},burglary,D{},{}\n",
                m % 4,
                y % 50
            ));
        }
        fs::write(annual.join(format!("crimes_{y}.csv")), t).unwrap();
    }
    fs::create_dir_all(lake.join("population")).unwrap();
    fs::write(
        lake.join("population/district_population.csv"),
        "district,population\nD0,1000\nD1,2000\n",
    )
    .unwrap();
    fs::write(
        lake.join("population/school_enrollment.csv"),
        "school,district,pupils\nA,D0,100\nB,D1,200\n",
    )
    .unwrap();
    index_json(&lake, &[]);
    let paths = |hits: &[Value]| -> Vec<String> {
        hits.iter()
            .map(|h| h["path"].as_str().unwrap().to_string())
            .collect()
    };

    // 2002–2023: every hit of the top 10 is a member in the range.
    let hits = search(
        &lake,
        "How many burglary offenses were reported each year from 2002 to 2023?",
        &["-k", "10"],
    );
    let top = paths(&hits);
    assert_eq!(top.len(), 10, "{top:?}");
    for p in &top {
        let year: u32 = p
            .trim_start_matches("crime/annual/crimes_")
            .trim_end_matches(".csv")
            .parse()
            .unwrap_or_else(|_| panic!("not a member: {p} in {top:?}"));
        assert!((2002..=2023).contains(&year), "{top:?}");
    }
    // The members in the range that did not fit are named by the first hit, before
    // the ones outside it (folded under it).
    let folded = &hits[0]["collection"];
    assert_eq!(folded["matched"], 12 + 7, "{hits:#?}");
    let first = folded["matching"][0].as_str().unwrap();
    assert!(
        ("crime/annual/crimes_2002.csv"..="crime/annual/crimes_2023.csv").contains(&first),
        "{hits:#?}"
    );

    // One day: that day's member first, and only it of the collection.
    let hits = search(
        &lake,
        "Which offenses were reported on 3 May 2012?",
        &["-k", "5"],
    );
    let top = paths(&hits);
    assert_eq!(top[0], "crime/annual/crimes_2012.csv", "{hits:#?}");
    assert_eq!(
        top.iter().filter(|p| p.starts_with("crime/")).count(),
        1,
        "{top:?}"
    );

    // A daily collection, with room for three candidates per retriever: the asked
    // day's member is not among them (its 30 siblings read the same), and is found
    // through its collection.
    let daily = lake.join("weather/daily");
    fs::create_dir_all(&daily).unwrap();
    for d in 1..=31 {
        fs::write(
            daily.join(format!("obs-201205{d:02}.csv")),
            format!(
                "time,temperature_c\n2012-05-{d:02}T06:00,1{}\n2012-05-{d:02}T18:00,2{}\n",
                d % 10,
                d % 7
            ),
        )
        .unwrap();
    }
    index_json(&lake, &[]);
    let q = "What was the temperature on 17 May 2012?";
    let hits = unfilled(json_lines(&run_ok_env(
        &lake,
        &["search", q, "-k", "5", "--json"],
        &[("LAKESTAR_CANDIDATES", "3")],
    )));
    let weather: Vec<&Value> = hits
        .iter()
        .filter(|h| h["path"].as_str().unwrap().starts_with("weather/"))
        .collect();
    assert_eq!(weather.len(), 1, "{hits:#?}");
    assert_eq!(
        weather[0]["path"], "weather/daily/obs-20120517.csv",
        "{hits:#?}"
    );
    assert!(
        weather[0]["reasons"]
            .to_string()
            .contains("member of collection"),
        "{hits:#?}"
    );
    // A bad ranking value is refused, naming the variable.
    let out = lakestar()
        .args(["search", q])
        .env("LAKESTAR_CANDIDATES", "none")
        .current_dir(&lake)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("LAKESTAR_CANDIDATES"),
        "{err}"
    );

    // No time named: the collection once, its other members folded.
    let hits = search(
        &lake,
        "Which district reports the most burglary offenses?",
        &["-k", "5"],
    );
    let crime: Vec<&Value> = hits
        .iter()
        .filter(|h| h["path"].as_str().unwrap().starts_with("crime/"))
        .collect();
    assert_eq!(crime.len(), 1, "{hits:#?}");
    assert_eq!(crime[0]["collection"]["matched"], 28, "{hits:#?}");
}

/// One file per incident, numbered: a question naming two incidents by a category of
/// their own files gets both as hits; a value every file holds sets none apart.
#[test]
fn members_named_by_their_own_categories_are_hits_of_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    let dir = lake.join("fires/incidents");
    fs::create_dir_all(&dir).unwrap();
    let names = [
        "Camp Fire",
        "Dixie Fire",
        "Creek Fire",
        "Caldor Fire",
        "Thomas Fire",
        "Carr Fire",
    ];
    for (i, n) in names.iter().enumerate() {
        let mut t = String::from("incident,day,acres_burned,cause\n");
        for d in 1..=6 {
            t.push_str(&format!(
                "{n},2018-0{}-1{d},{}00,lightning\n",
                1 + i,
                d * 7 + i
            ));
        }
        fs::write(dir.join(format!("incident_{}.csv", 101 + i)), t).unwrap();
    }
    index_json(&lake, &[]);
    let hits = search(
        &lake,
        "Compare the acres burned by the Dixie Fire and the Carr Fire",
        &["-k", "4"],
    );
    let mut top: Vec<&str> = hits
        .iter()
        .take(2)
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    top.sort();
    assert_eq!(
        top,
        [
            "fires/incidents/incident_102.csv",
            "fires/incidents/incident_106.csv"
        ],
        "{hits:#?}"
    );
    // Every file's cause is lightning: one hit stands for them.
    let hits = search(&lake, "acres burned by lightning fires", &["-k", "4"]);
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(hits[0]["collection"]["matched"], 5, "{hits:#?}");
}
