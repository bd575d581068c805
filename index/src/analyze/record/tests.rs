use super::*;
use crate::analyze::fixtures::{tar_of, two_tables_csv};
use crate::analyze::{describe, Source};

fn described(name: &str, bytes: &[u8]) -> Description {
    describe(&Source::from_bytes(name, bytes.to_vec()))
}

/// A table of one incident (its `incident` column all one value), a mixed `cause`.
fn incidents_csv() -> String {
    let mut csv = String::from("incident,cause,region,acres\n");
    for (i, cause) in [
        "lightning",
        "arson",
        "lightning",
        "campfire",
        "arson",
        "arson",
    ]
    .iter()
    .enumerate()
    {
        let region = ["North", "South"][i % 2];
        csv.push_str(&format!("Camp Fire,{cause},{region},{}\n", 100 + i * 7));
    }
    csv
}

/// Descriptions of every kind ranking reads names or categories of.
fn varied() -> Vec<(&'static str, Description)> {
    let html = "<html><body><table><caption>Vehicle list</caption>\
        <tr><th>plate</th><th>fuel</th></tr><tr><td>AB-1</td><td>diesel</td></tr>\
        <tr><td>AB-2</td><td>diesel</td></tr><tr><td>AB-3</td><td>petrol</td></tr></table>\
        <table><tr><th>driver</th><th>trips</th></tr><tr><td>Ann</td><td>3</td></tr>\
        <tr><td>Bob</td><td>5</td></tr></table></body></html>";
    let headerless: String = (0..20)
        .map(|i| format!("{i},{}.5,{}\n", i * 3, i % 4))
        .collect();
    let markdown = "# Stations\n\nThe stations we keep.\n\n| station | élévation |\n|---|---|\n\
        | Zürich | 408 |\n| Genève | 375 |\n";
    let archive = tar_of(&[
        ("data/incidents.csv", incidents_csv().as_bytes()),
        ("data/meta.json", br#"{"source": "CAL FIRE", "rows": 6}"#),
    ]);
    vec![
        (
            "table",
            described("incidents.csv", incidents_csv().as_bytes()),
        ),
        (
            "two tables",
            described("two.csv", two_tables_csv().as_bytes()),
        ),
        ("html tables", described("fleet.html", html.as_bytes())),
        (
            "headerless",
            described("readings.csv", headerless.as_bytes()),
        ),
        (
            "json",
            described(
                "t.json",
                br#"[{"card_scheme":"NexPay","aci":["A"],"fee":{"fixed_amount":0.1}},
                    {"card_scheme":"NexPay","aci":["B"],"fee":{"fixed_amount":0.2}}]"#,
            ),
        ),
        ("archive", described("fires.tar", &archive)),
        ("text", described("stations.md", markdown.as_bytes())),
        (
            "opaque",
            described("x.bin", &[0u8, 159, 146, 150, 0, 1, 2, 3]),
        ),
    ]
}

#[test]
fn a_record_holds_what_ranking_reads_of_each_kind_of_description() {
    for (kind, d) in varied() {
        let r = RankRecord::of(&d);
        assert_eq!(r.names, names(&d), "{kind}");
        let values: Vec<String> = r.categories.iter().map(|(v, _)| v.clone()).collect();
        assert_eq!(values, categories(&d), "{kind}");
        let dominant = dominant_categories(&d);
        for (v, dom) in &r.categories {
            assert_eq!(*dom, dominant.contains(v), "{kind}: {v}");
        }
        assert!(
            dominant.iter().all(|v| values.contains(v)),
            "{kind}: a dominant category the record cannot flag"
        );
        assert_eq!(r.headerless, kind == "headerless", "{kind}");
        assert_eq!(RankRecord::decode(&r.encode()).unwrap(), Some(r), "{kind}");
    }
}

#[test]
fn the_varied_descriptions_exercise_names_and_categories() {
    // The test above compares empty lists unless the fixtures have something to say.
    let all = varied();
    let of = |k: &str| RankRecord::of(&all.iter().find(|(n, _)| *n == k).unwrap().1);
    let table = of("table");
    assert_eq!(table.names, ["incident", "cause", "region", "acres"]);
    assert!(table.categories.contains(&("Camp Fire".to_string(), true)));
    assert!(table.categories.contains(&("lightning".to_string(), false)));
    assert!(of("two tables").names.len() > 4);
    assert!(of("html tables").names.iter().any(|n| n == "driver"));
    assert!(of("json").names.iter().any(|n| n == "fixed_amount"));
    assert!(of("archive").names.iter().any(|n| n == "incident"));
    assert!(of("text").names.iter().any(|n| n == "élévation"));
}

#[test]
fn records_round_trip_long_and_unusual_strings() {
    let long = "x".repeat(70_000);
    let r = RankRecord {
        names: vec![
            String::new(),
            "ünïcødé 名前".into(),
            long.clone(),
            "a\0b".into(),
        ],
        categories: (0..300).map(|i| (format!("v{i}"), i % 3 == 0)).collect(),
        headerless: true,
    };
    let bytes = r.encode();
    assert_eq!(RankRecord::decode(&bytes).unwrap(), Some(r));
    let empty = RankRecord::default();
    assert_eq!(empty.encode(), [RECORD_VERSION, 0, 0, 0]);
    assert_eq!(RankRecord::decode(&empty.encode()).unwrap(), Some(empty));
}

#[test]
fn damaged_records_are_errors_and_other_versions_are_not_used() {
    let r = RankRecord::of(&described("incidents.csv", incidents_csv().as_bytes()));
    let bytes = r.encode();
    // Every cut is an error, never a panic nor a shorter record.
    for cut in 0..bytes.len() {
        assert!(RankRecord::decode(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        RankRecord::decode(&longer),
        Err(RecordError::Trailing(1))
    ));
    let mut other = bytes.clone();
    other[0] = RECORD_VERSION.wrapping_add(1);
    assert_eq!(RankRecord::decode(&other).unwrap(), None);
    // A count far beyond the bytes left is refused without allocating for it.
    let huge = [RECORD_VERSION, 0, 0xff, 0xff, 0xff, 0xff, 0x0f];
    assert!(RankRecord::decode(&huge).is_err());
    let bad_utf8 = [RECORD_VERSION, 0, 1, 2, 0xc3, 0x28, 0];
    assert!(matches!(
        RankRecord::decode(&bad_utf8),
        Err(RecordError::Utf8(_))
    ));
}

/// The records of the varied descriptions, digested, for each [`RECORD_VERSION`]: a
/// change to what a record holds or how it is derived changes the digest, and this test
/// fails until the version is bumped (and its digest added) — a catalog's records of the
/// old derivation must not be used as if they were of the new. (A change of the fixtures'
/// descriptions moves the digest too; bumping then costs one re-derivation, no harm.)
const PINNED: &[(u8, &str)] = &[(
    1,
    "5a14cb3eb6024b6a88d7b648e913664209ff5b539a531958af50e6b63e26d5ae",
)];

#[test]
fn a_change_to_the_records_comes_with_a_new_record_version() {
    let mut h = blake3::Hasher::new();
    for (kind, d) in varied() {
        h.update(kind.as_bytes());
        h.update(&RankRecord::of(&d).encode());
    }
    let digest = h.finalize().to_hex().to_string();
    let pinned = PINNED.iter().find(|(v, _)| *v == RECORD_VERSION);
    assert_eq!(
        pinned.map(|(_, d)| *d),
        Some(digest.as_str()),
        "the ranking records changed: bump RECORD_VERSION and pin ({}, {digest:?}) in PINNED",
        RECORD_VERSION + 1
    );
}
