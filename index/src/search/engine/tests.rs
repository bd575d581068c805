//! Ranking by records is ranking by descriptions: the same hits, in the same order, with
//! the same scores, from the records, from the descriptions, and on a catalog made
//! before records. The retrievers run side by side and give what they give one after
//! the other.

use super::*;
use crate::analyze::fixtures::tar_of;
use std::io::Write;

fn write(lake: &Path, rel: &str, body: &[u8]) {
    let p = lake.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::File::create(p).unwrap().write_all(body).unwrap();
}

/// A lake of every kind of description ranking reads: a daily collection whose members
/// differ by a dominant category, two tables in one file, HTML, JSON, an archive, text,
/// and a headerless table whose columns its documentation names.
fn lake(dir: &Path) {
    for (day, incident) in [(1, "Camp Fire"), (2, "Dixie Fire"), (3, "Camp Fire")] {
        let mut csv = String::from("incident,cause,region,acres\n");
        for (i, cause) in ["lightning", "arson", "campfire", "arson"]
            .iter()
            .enumerate()
        {
            let region = ["North", "South"][i % 2];
            csv.push_str(&format!("{incident},{cause},{region},{}\n", 100 + i * day));
        }
        write(dir, &format!("fires/2018-11-0{day}.csv"), csv.as_bytes());
    }
    let mut two = String::from("Table 1: Complaints by Category,,,\nCategory,2019,2020,2021\n");
    for (i, c) in ["Noise", "Heat", "Water", "Parking"].iter().enumerate() {
        two.push_str(&format!("{c},{},{},{}\n", 10 + i, 20 + i, 30 + i));
    }
    two.push_str(",,,\nTable 2: Response times,,,\n,,,\nDistrict,Median days,Mean days,\n");
    for (i, d) in ["North", "South", "East"].iter().enumerate() {
        two.push_str(&format!("{d},{}.5,{}.25,\n", i + 1, i + 2));
    }
    write(dir, "city/complaints.csv", two.as_bytes());
    write(
        dir,
        "fleet/fleet.html",
        b"<html><body><table><caption>Vehicle list</caption>\
          <tr><th>plate</th><th>fuel</th></tr><tr><td>AB-1</td><td>diesel</td></tr>\
          <tr><td>AB-2</td><td>diesel</td></tr><tr><td>AB-3</td><td>petrol</td></tr></table>\
          <table><tr><th>driver</th><th>trips</th></tr><tr><td>Ann</td><td>3</td></tr>\
          </table></body></html>",
    );
    write(
        dir,
        "fees/fees.json",
        br#"[{"card_scheme":"NexPay","aci":["A"],"fee":{"fixed_amount":0.1}},
             {"card_scheme":"GlobalCard","aci":["B"],"fee":{"fixed_amount":0.2}}]"#,
    );
    let archive = tar_of(&[(
        "inner/stations.csv",
        "station,kind\nS1,wind\nS2,rain\nS3,wind\n",
    )]);
    write(dir, "archive/stations.tar", &archive);
    write(
        dir,
        "notes/stations.md",
        "# Stations\n\nWhere wind is measured.\n\n| station | elevation |\n|---|---|\n| Zurich | 408 |\n"
            .as_bytes(),
    );
    write(
        dir,
        "birds/survey.csv",
        b"north,12,31.5\nsouth,7,29.0\neast,3,33.2\nwest,9,30.1\nnorth,4,28.7\n",
    );
    write(
        dir,
        "birds/survey_variabledescrip.csv",
        b"Variable,Description,Units\nsite,Survey site,\nnest_count,Nests counted,nests\n\
          wingspan,Mean wingspan of adults,cm\n",
    );
}

const QUESTIONS: [&str; 8] = [
    "acres burned by the Camp Fire on 2018-11-03",
    "which cause of fires in the North region",
    "median days of response by district",
    "vehicles running on diesel",
    "fixed_amount fee of NexPay",
    "stations measuring wind",
    "mean wingspan and nest_count per site",
    "\"Dixie Fire\" acres",
];

/// The index of [`lake`] in `tmp`, searched.
fn indexed(tmp: &Path) -> Searcher {
    let (lake_dir, idx) = (tmp.join("lake"), tmp.join("idx"));
    lake(&lake_dir);
    crate::index(
        &lake_dir,
        &idx,
        &crate::IndexOptions::default(),
        &crate::indexer::NoProgress,
    )
    .unwrap();
    Searcher::open_recorded(&idx).unwrap()
}

fn hits(s: &Searcher) -> Vec<String> {
    QUESTIONS
        .iter()
        .map(|q| {
            let opts = SearchOptions {
                k: 5,
                nearest_anyway: true,
                ..SearchOptions::default()
            };
            serde_json::to_string(&s.search(q, &opts).unwrap()).unwrap()
        })
        .collect()
}

#[test]
fn records_rank_as_descriptions_do_and_descriptions_without_records_still_search() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = indexed(tmp.path());
    let idx = tmp.path().join("idx");
    assert!(s.records);
    let by_records = hits(&s);
    // Something was found for every question, and the documented names were used.
    assert!(by_records.iter().all(|h| h.contains("\"path\"")));
    assert!(
        by_records[6].contains("birds/survey.csv"),
        "{}",
        by_records[6]
    );

    // Ranked by records: no description decoded, but for the documented headerless
    // table (its link renames its columns) and hits.
    let mut q = Question {
        words: Vec::new(),
        matcher: NameMatcher::new("wingspan"),
        quotes: Vec::new(),
        asked: Vec::new(),
        links: true,
        expansions: Vec::new(),
    };
    let opts = SearchOptions::default();
    let candidate = |s: &Searcher, q: &mut Question, p: &str| {
        let found = vec![(p.to_string(), Evidence::default())];
        let mut c = s.candidates(found, q, &opts).unwrap();
        assert_eq!(c.len(), 1, "{p}");
        c.remove(0)
    };
    let table = candidate(&s, &mut q, "fires/2018-11-01.csv");
    assert!(!table.described && table.desc.is_none());
    let linked = candidate(&s, &mut q, "birds/survey.csv");
    assert!(linked.described && linked.desc.is_some());
    assert!(linked.evidence.named.iter().any(|n| n.key == "wingspan"));

    s.records = false;
    assert_eq!(hits(&s), by_records, "ranked by the descriptions");
    let table = candidate(&s, &mut q, "fires/2018-11-01.csv");
    assert!(table.described);

    // Descriptions without records (a version-2 catalog made before records, upgraded):
    // each is decoded instead.
    drop(s);
    let conn = rusqlite::Connection::open(idx.join(crate::catalog::CATALOG_FILE)).unwrap();
    conn.execute_batch("UPDATE descriptions SET record = NULL")
        .unwrap();
    drop(conn);
    let s = Searcher::open_recorded(&idx).unwrap();
    assert!(s.records);
    assert_eq!(hits(&s), by_records, "on a catalog without records");
    let table = candidate(&s, &mut q, "fires/2018-11-01.csv");
    assert!(table.described);
}

#[test]
fn the_retrievers_side_by_side_give_the_evidence_they_give_one_after_the_other() {
    let tmp = tempfile::tempdir().unwrap();
    let s = indexed(tmp.path());
    let links = s.catalog().has_companion_links().unwrap();
    let question = |query: &str| Question {
        words: evidence::question_words(query),
        matcher: NameMatcher::new(query),
        quotes: evidence::quoted(query),
        asked: evidence::asked_days(query),
        links,
        expansions: Vec::new(),
    };
    let opts = SearchOptions::default();
    let by_path = |cs: Vec<Candidate>| -> std::collections::BTreeMap<String, Evidence> {
        cs.into_iter().map(|c| (c.path, c.evidence)).collect()
    };
    let mut both = 0;
    for query in QUESTIONS {
        // One retriever after the other, every file read once: the sequential reference.
        let mut found: HashMap<String, Evidence> = HashMap::new();
        let cfg = &s.ranking;
        for (rank, hit) in s
            .text
            .search(query, cfg.candidates)
            .unwrap()
            .into_iter()
            .enumerate()
        {
            let fields = hit.fields.into_iter().map(String::from).collect();
            found.entry(hit.path).or_default().text = Some((rank, fields));
        }
        let v = s.embedder.embed(&[query]).unwrap().remove(0);
        let nearest = s.vectors.nearest(&s.catalog(), &v, cfg.candidates).unwrap();
        for (rank, (path, sim)) in nearest.into_iter().enumerate() {
            found.entry(path).or_default().vector = Some((rank, sim));
        }
        let found = found.into_iter().collect();
        let serial = by_path(s.candidates(found, &mut question(query), &opts).unwrap());
        let (_, side_by_side) = s.retrieve(query, question(query), &opts).unwrap();
        let side_by_side = by_path(side_by_side);
        both += serial
            .values()
            .filter(|e| e.text.is_some() && e.vector.is_some())
            .count();
        assert_eq!(side_by_side, serial, "{query}");
    }
    assert!(both > 0, "no file was found by both retrievers");
}

/// The vector side's rows read in two halves, on two connections, are the rows read at
/// once, in the order asked; and read at once when the second connection is busy.
#[test]
fn rows_read_in_halves_are_the_rows_read_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let s = indexed(tmp.path());
    let mut known: Vec<String> = s.catalog().load_files().unwrap().into_keys().collect();
    known.sort();
    assert!(known.len() >= 10, "{known:?}");
    // Paths the catalog has, between paths it does not, in an order of their own.
    let mut paths: Vec<String> = (0..SPLIT_ROWS_FROM)
        .map(|i| format!("gone/{i}.csv"))
        .collect();
    for (i, p) in known.iter().rev().enumerate() {
        paths.insert((i * 3) % paths.len(), p.clone());
    }
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    let read = |rows: Vec<Option<RankedFile>>| -> Vec<Option<(String, Option<String>)>> {
        rows.into_iter()
            .map(|r| r.map(|r| (r.row.path, r.collection)))
            .collect()
    };
    let catalog = s.catalog();
    let whole = read(catalog.ranked_files(&paths, s.records).unwrap());
    assert_eq!(whole.iter().flatten().count(), known.len());
    assert_eq!(read(s.rows_split(&catalog, &paths).unwrap()), whole);
    let busy = s.beside();
    assert_eq!(read(s.rows_split(&catalog, &paths).unwrap()), whole);
    drop(busy);
    // Too few to split: read here.
    let few = &paths[..5];
    assert_eq!(
        read(s.rows_split(&catalog, few).unwrap()),
        read(catalog.ranked_files(few, s.records).unwrap())
    );
}
