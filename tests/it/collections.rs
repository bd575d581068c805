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
    let full = run_ok(&lake, &["collections", c["id"].as_str().unwrap()]);
    assert!(
        full.contains("collection of 12 csv files")
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
    json_lines(&run_ok(lake, &args))
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

    // A question naming three members: the collection's hit, with the other two named
    // members first among the ones it folds.
    let hits = search(&lake, "compare Ohio, Utah and Texas", &[]);
    let hit = hits
        .iter()
        .find(|h| h["collection"]["id"] == c["id"])
        .unwrap_or_else(|| panic!("collection not in the top 3: {hits:#?}"));
    let named = [
        "by_state/Ohio.csv",
        "by_state/Utah.csv",
        "by_state/Texas.csv",
    ];
    assert!(named.contains(&hit["path"].as_str().unwrap()), "{hit:#}");
    let matching: Vec<&str> = hit["collection"]["matching"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(
        matching[..2].iter().all(|m| named.contains(m)),
        "{matching:?}"
    );
    // Expanded, the three named members come first.
    let expanded = search(&lake, "compare Ohio, Utah and Texas", &["--expand"]);
    let mut top: Vec<&str> = expanded
        .iter()
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    top.sort();
    let mut want = named.to_vec();
    want.sort();
    assert_eq!(top, want, "{expanded:#?}");

    // A question about each state, naming none: the collection too.
    let hits = search(&lake, "median income of the counties for each state", &[]);
    assert!(
        hits.iter().any(|h| h["collection"]["id"] == c["id"]),
        "{hits:#?}"
    );

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
