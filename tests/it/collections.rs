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
