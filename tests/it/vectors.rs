//! The HNSW vector index through the binary: forced on small lakes with
//! `LAKESTAR_EXACT_BELOW=0`, it follows modifications, deletions and renames, rebuilds
//! past the tombstone threshold, survives damage and a killed index run.

use crate::common::*;
use crate::companion;
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// `lakestar ARGS` in `cwd` with the graph forced on; stdout on success.
fn run_hnsw(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut all = vec![("LAKESTAR_EXACT_BELOW", "0"), ("LAKESTAR_SCAN_UP_TO", "0")];
    all.extend_from_slice(env);
    run_ok_env(cwd, args, &all)
}

fn index(lake: &Path) -> Value {
    let out = run_hnsw(
        lake,
        &["index", lake.to_str().unwrap(), "--graph", "--json"],
        &[],
    );
    serde_json::from_str(out.trim()).unwrap()
}

fn vectors(lake: &Path) -> Value {
    let out = run_hnsw(lake, &["status", "--json"], &[]);
    let v: Value = serde_json::from_str(&out).unwrap();
    v["vectors"].clone()
}

/// Search with the vector ranking alone deciding (`LAKESTAR_W_TEXT=0`), every file on
/// its own (`--expand`: collection members are not folded).
fn search(lake: &Path, q: &str, k: usize, vectors_only: bool) -> Vec<Value> {
    let k = k.to_string();
    let env: &[(&str, &str)] = if vectors_only {
        &[("LAKESTAR_W_TEXT", "0")]
    } else {
        &[]
    };
    json_lines(&run_hnsw(
        lake,
        &["search", q, "-k", &k, "--json", "--expand"],
        env,
    ))
}

fn similar(hit: &Value) -> bool {
    hit["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r.as_str().unwrap().starts_with("similar description"))
}

const PENGUINS: &str = "penguin_species,flipper_length_mm,bill_depth_mm,island\nAdelie,181,18.7,Torgersen\nGentoo,217,14.3,Biscoe\nChinstrap,195,17.9,Dream\n";
const GLACIERS: &str =
    "# Glacier survey\n\nIce thickness measurements of alpine glaciers, by glacier and year.\n";

#[test]
fn the_graph_follows_changes_and_rebuilds_past_the_tombstone_threshold() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    lakestar::index::synth::generate(&lake, 100, 7).unwrap();
    fs::create_dir_all(lake.join("special")).unwrap();
    fs::write(lake.join("special/penguins.csv"), PENGUINS).unwrap();
    fs::write(lake.join("special/notes.md"), "# Notes\n\nNothing yet.\n").unwrap();
    index(&lake);
    let v = vectors(&lake);
    let files = v["files"].as_u64().unwrap();
    assert_eq!(v["kind"], "hnsw", "{v}");
    assert_eq!(v["generation"], 1, "{v}");
    assert!(files > 90, "{v}");
    assert!(v["points"].as_u64().unwrap() <= files, "{v}");
    assert_eq!(
        (v["tombstones"].as_u64(), v["delta"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(v["live"].as_u64(), Some(files));

    // Modify, delete, rename, add: tombstones and delta, same generation.
    let all = paths(&search(&lake, "sales orders", 500, false));
    let deleted = all
        .iter()
        .find(|p| p.starts_with("sales/"))
        .unwrap()
        .clone();
    fs::remove_file(lake.join(&deleted)).unwrap();
    fs::create_dir_all(lake.join("zoo")).unwrap();
    fs::rename(
        lake.join("special/penguins.csv"),
        lake.join("zoo/antarctic_birds.csv"),
    )
    .unwrap();
    fs::write(lake.join("special/notes.md"), GLACIERS).unwrap();
    fs::write(
        lake.join("special/added.md"),
        "# Tide tables\n\nHigh and low water.\n",
    )
    .unwrap();
    let r = index(&lake);
    assert_counts(
        &r,
        &[
            ("deleted", 1),
            ("renamed", 1),
            ("modified", 1),
            ("added", 1),
        ],
    );
    let v = vectors(&lake);
    assert_eq!(v["generation"], 1, "{v}");
    assert_eq!(
        (v["tombstones"].as_u64(), v["delta"].as_u64()),
        (Some(3), Some(3)),
        "{v}"
    );
    assert_eq!(v["live"].as_u64(), Some(files), "one deleted, one added");

    let every = paths(&search(&lake, "sales orders customers", 500, true));
    assert_eq!(every.len() as u64, files, "every live file, once");
    for gone in [&deleted, &"special/penguins.csv".to_string()] {
        assert!(!every.contains(gone), "{gone} returned");
    }
    let birds = search(&lake, "penguin species flipper length bill depth", 3, true);
    assert_eq!(paths(&birds)[0], "zoo/antarctic_birds.csv");
    assert!(similar(&birds[0]), "{}", birds[0]);
    let ice = search(&lake, "glacier ice thickness survey", 3, true);
    assert_eq!(paths(&ice)[0], "special/notes.md");
    assert!(similar(&ice[0]), "{}", ice[0]);

    // Delete a quarter of the files: past the threshold, a new generation without them.
    let victims: Vec<String> = every.iter().step_by(4).cloned().collect();
    for p in &victims {
        fs::remove_file(lake.join(p)).unwrap();
    }
    index(&lake);
    let v = vectors(&lake);
    assert_eq!(v["generation"], 2, "{v}");
    assert_eq!(
        (v["tombstones"].as_u64(), v["delta"].as_u64()),
        (Some(0), Some(0)),
        "{v}"
    );
    let left = files - victims.len() as u64;
    assert_eq!(v["files"].as_u64(), Some(left), "{v}");
    let dirs: Vec<String> = fs::read_dir(lake.join(".lakestar/vectors"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(dirs, vec!["gen-2"]);
    let now = paths(&search(&lake, "sales orders customers", 500, true));
    assert_eq!(now.len() as u64, left);
    assert!(victims.iter().all(|p| !now.contains(p)));

    // Without the override the same index is small enough for exact search.
    let out = run(&lake, &["status", "--json"]);
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["vectors"]["kind"], "exact", "{s}");
}

/// Rows of the catalog's `embeddings` that hold a point of the generation instead of
/// their vector (`catalog::held`), and rows in all.
fn held_rows(idx: &Path) -> (i64, i64) {
    let db = rusqlite::Connection::open_with_flags(
        idx.join("catalog.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    db.query_row(
        "SELECT SUM(length(vector) = 5 AND substr(vector, 1, 1) = x'B0'), COUNT(*) FROM embeddings",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

/// A generated lake of 60 files and `penguins.csv`, indexed with the graph forced:
/// its temporary directory, the lake, and its every file as the vectors rank them for
/// the penguin question. The generation holds every vector; the catalog keeps points.
fn penguin_lake(seed: u64) -> (tempfile::TempDir, std::path::PathBuf, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    lakestar::index::synth::generate(&lake, 60, seed).unwrap();
    fs::write(lake.join("penguins.csv"), PENGUINS).unwrap();
    index(&lake);
    let before = paths(&search(&lake, "penguin species flipper length", 500, true));
    assert_eq!(before[0], "penguins.csv");
    assert_eq!(before.len(), 61);
    let (held, rows) = held_rows(&lake.join(".lakestar"));
    assert_eq!(held, rows, "every vector held by the generation");
    (tmp, lake, before)
}

/// The run rebuilt the graph as generation `g`: the rows' points handed over (`held`)
/// and the penguin question ranked as `before`.
fn assert_rebuilt(lake: &Path, g: u64, held: (i64, i64), before: &[String]) {
    let v = vectors(lake);
    assert_eq!(
        (v["kind"].as_str(), v["generation"].as_u64()),
        (Some("hnsw"), Some(g)),
        "{v}"
    );
    assert_eq!(held_rows(&lake.join(".lakestar")), held);
    assert_eq!(
        paths(&search(lake, "penguin species flipper length", 500, true)),
        before
    );
}

#[test]
fn a_damaged_graph_falls_back_to_exact_search_and_the_next_run_rebuilds_it() {
    let (_tmp, lake, before) = penguin_lake(11);
    let idx = lake.join(".lakestar");
    let (held, rows) = held_rows(&idx);

    // The graph damaged, its codes sound: a one-off search scans the codes and never
    // reads the graph; nothing is lost.
    let data = idx.join("vectors/gen-1/ann.hnsw.data");
    let bytes = fs::read(&data).unwrap();
    fs::write(&data, &bytes[..bytes.len() / 2]).unwrap();
    assert_eq!(
        paths(&search(&lake, "penguin species flipper length", 500, true)),
        before
    );

    // Nothing changed in the lake, but the graph is damaged: the run rebuilds it from
    // the codes, and embeds nothing again.
    let r = index(&lake);
    assert_counts(&r, &[("analyzed", 0), ("errors", 0)]);
    assert_rebuilt(&lake, 2, (held, rows), &before);
    assert!(!idx.join("vectors/gen-1").exists());
}

/// A catalog of format 3 kept the graph's members in `vector_points`; its generation
/// has none. A reader is told to run `lakestar index`; the run upgrades the catalog,
/// rebuilds the generation with its members (embedding nothing again), and searches
/// answer as before. A generation whose members are cut short is searched exactly, and
/// the next run rebuilds it too.
#[test]
fn a_format_3_index_is_upgraded_and_damaged_members_fall_back_to_exact_search() {
    let (_tmp, lake, before) = penguin_lake(13);
    let idx = lake.join(".lakestar");
    let (held, rows) = held_rows(&idx);
    let gen1 = idx.join("vectors/gen-1");
    assert!(gen1.join("members.bin").exists());
    let manifest = gen1.join("manifest.json");
    let mut m: Value = serde_json::from_slice(&fs::read(&manifest).unwrap()).unwrap();
    m.as_object_mut().unwrap().remove("members");
    fs::write(&manifest, serde_json::to_vec(&m).unwrap()).unwrap();
    fs::remove_file(gen1.join("members.bin")).unwrap();
    rusqlite::Connection::open(idx.join("catalog.sqlite"))
        .unwrap()
        .execute_batch(
            "CREATE TABLE vector_points (path TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
             INSERT INTO vector_points SELECT path, 0 FROM files;
             CREATE INDEX vector_points_id ON vector_points(id);
             DELETE FROM meta WHERE key = 'vector_graph';
             UPDATE meta SET value = '3' WHERE key = 'format_version';",
        )
        .unwrap();
    let out = run(&lake, &["search", "penguin species", "--json"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("run `lakestar index` once"), "{err}");

    let r = index(&lake);
    assert_counts(&r, &[("analyzed", 0), ("errors", 0)]);
    assert_rebuilt(&lake, 2, (held, rows), &before);
    assert!(idx.join("vectors/gen-2/members.bin").exists());
    let c = rusqlite::Connection::open(idx.join("catalog.sqlite")).unwrap();
    let (tables, version): (i64, String) = c
        .query_row(
            "SELECT (SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'vector_points%'),
                    (SELECT value FROM meta WHERE key = 'format_version')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let current = lakestar::index::catalog::FORMAT_VERSION.to_string();
    assert_eq!((tables, version.as_str()), (0, current.as_str()));
    drop(c);

    // Members cut short: the generation is not used, and searches are exact.
    let members = idx.join("vectors/gen-2/members.bin");
    let bytes = fs::read(&members).unwrap();
    fs::write(&members, &bytes[..bytes.len() - 9]).unwrap();
    assert_eq!(
        paths(&search(&lake, "penguin species flipper length", 500, true)),
        before
    );
    assert_eq!(vectors(&lake)["kind"], "exact");
    index(&lake);
    assert_rebuilt(&lake, 3, (held, rows), &before);
}

/// A headerless file whose documentation changes is relinked (its description's vector
/// dropped and embedded again) without a change of its own: with a graph, its point is
/// then a tombstone and its new vector in the delta, like the documentation's own.
#[test]
fn a_relinked_data_file_leaves_the_graph_for_the_delta() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    lakestar::index::synth::generate(&lake, 60, 3).unwrap();
    fs::create_dir_all(lake.join("wx")).unwrap();
    fs::write(lake.join("wx/station.dat"), companion::STATION_DAT).unwrap();
    fs::write(
        lake.join("wx/station_dat.text"),
        companion::station_doc("TEMP"),
    )
    .unwrap();
    index(&lake);
    let v = vectors(&lake);
    assert_eq!(
        (v["kind"].as_str(), v["tombstones"].as_u64()),
        (Some("hnsw"), Some(0))
    );

    fs::write(
        lake.join("wx/station_dat.text"),
        companion::station_doc("TAIR"),
    )
    .unwrap();
    let r = index(&lake);
    assert_counts(&r, &[("analyzed", 1), ("errors", 0)]);
    let v = vectors(&lake);
    // The documentation changed, and the data file was relinked: two of each.
    assert_eq!(
        (
            v["kind"].as_str(),
            v["tombstones"].as_u64(),
            v["delta"].as_u64()
        ),
        (Some("hnsw"), Some(2), Some(2)),
        "{v}"
    );
}

/// The vectors a lost generation held are embedded again by the next run: searches
/// answer meanwhile (without them) and afterwards as before.
#[test]
fn a_lost_generation_s_vectors_are_embedded_again_by_the_next_run() {
    let (_tmp, lake, before) = penguin_lake(5);
    let idx = lake.join(".lakestar");
    let status = vectors(&lake);
    let (held, rows) = held_rows(&idx);

    for damage in ["truncated codes", "no vectors directory"] {
        if damage == "truncated codes" {
            let codes = idx.join("vectors/gen-1/codes.bin");
            let bytes = fs::read(&codes).unwrap();
            fs::write(&codes, &bytes[..bytes.len() - 7]).unwrap();
        } else {
            fs::remove_dir_all(idx.join("vectors")).unwrap();
        }
        let hits = paths(&search(&lake, "penguin species flipper length", 500, false));
        assert!(!hits.is_empty(), "{damage}: the text index still answers");
        let r = index(&lake);
        assert_counts(&r, &[("analyzed", 0), ("errors", 0)]);
        let v = vectors(&lake);
        assert_eq!(v["kind"], "hnsw", "{damage}: {v}");
        for k in ["files", "points", "live", "tombstones", "delta"] {
            assert_eq!(v[k], status[k], "{damage}: {k}");
        }
        assert_eq!(held_rows(&idx), (held, rows), "{damage}");
        assert_eq!(
            paths(&search(&lake, "penguin species flipper length", 500, true)),
            before,
            "{damage}"
        );
    }
}

fn dirty_marks(idx: &Path) -> i64 {
    rusqlite::Connection::open_with_flags(
        idx.join("catalog.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .and_then(|db| db.query_row("SELECT COUNT(*) FROM search_dirty", [], |r| r.get(0)))
    .unwrap_or(0)
}

#[test]
fn kill_9_midway_with_a_graph_then_search_is_consistent_and_the_rerun_catches_up() {
    const FILES: u64 = 1500;
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    lakestar::index::synth::generate(&lake, FILES, 5).unwrap();
    index(&lake);
    let idx = lake.join(".lakestar");
    let before = vectors(&lake);
    assert_eq!(before["generation"], 1, "{before}");

    // Rewrite every file, then kill the run once some of the changes are committed.
    for e in walkdir::WalkDir::new(&lake)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".lakestar")
    {
        let e = e.unwrap();
        if e.file_type().is_file() {
            let mut body = fs::read(e.path()).unwrap();
            body.extend_from_slice(b"\n");
            fs::write(e.path(), body).unwrap();
        }
    }
    let mut child = lakestar()
        .env("LAKESTAR_EXACT_BELOW", "0")
        .env("LAKESTAR_SCAN_UP_TO", "0")
        .args([
            "index",
            lake.to_str().unwrap(),
            "--graph",
            "--jobs",
            "1",
            "--batch-size",
            "25",
            "--json",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("index finished ({status}) before it could be killed; make the lake bigger");
        }
        if dirty_marks(&idx) >= 100 {
            break;
        }
        assert!(Instant::now() < deadline, "no batch committed within 120 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    // The catalog moved on, the graph did not: its changed points are tombstones, and
    // search answers from what is consistent.
    let mid = vectors(&lake);
    assert_eq!(mid["generation"], 1, "{mid}");
    let t = mid["tombstones"].as_u64().unwrap();
    assert!(t >= 100, "{mid}");
    let hits = search(&lake, "sensor readings temperature humidity", 50, true);
    assert_eq!(hits.len(), 50);
    for h in &hits {
        assert!(lake.join(h["path"].as_str().unwrap()).is_file(), "{h}");
    }

    let r = index(&lake);
    assert_eq!(n(&r, "errors"), 0, "{r}");
    let after = vectors(&lake);
    assert_eq!(
        (after["tombstones"].as_u64(), after["delta"].as_u64()),
        (Some(0), Some(0)),
        "{after}"
    );
    assert_eq!(after["generation"], 2, "{after}");
    assert_eq!(after["files"], before["files"], "{after}");
    assert_eq!(dirty_marks(&idx), 0);
}

/// A catalog whose search documents were written by another version of them (here:
/// embeddings zeroed and the version set back, as an older lakestar would leave them)
/// rewrites every document and re-embeds every description on its next run, instead of
/// searching a mix of old and new.
#[test]
fn another_search_docs_version_redoes_the_search_side() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    std::fs::write(lake.join("rainfall.csv"), "station,rain_mm\nA,1.5\nB,2.0\n").unwrap();
    std::fs::write(lake.join("sales.csv"), "store,revenue\nX,10\nY,20\n").unwrap();
    index_json(&lake, &[]);
    let db = rusqlite::Connection::open(lake.join(".lakestar/catalog.sqlite")).unwrap();
    let version = |db: &rusqlite::Connection| -> String {
        db.query_row(
            "SELECT value FROM meta WHERE key = 'search_docs_version'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    let current = version(&db);
    let zeroed = |db: &rusqlite::Connection| -> i64 {
        db.query_row(
            "SELECT COUNT(*) FROM embeddings WHERE vector = zeroblob(length(vector))",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    db.execute_batch(
        "UPDATE embeddings SET vector = zeroblob(length(vector));
         UPDATE meta SET value = '0' WHERE key = 'search_docs_version';",
    )
    .unwrap();
    assert_eq!(zeroed(&db), 2);
    index_json(&lake, &[]);
    assert_eq!(version(&db), current);
    assert_eq!(zeroed(&db), 0, "the stale embeddings were kept");
    let hits = json_lines(&run_ok(&lake, &["search", "rain_mm by station", "--json"]));
    assert_eq!(hits[0]["path"], "rainfall.csv");
    // Once done, a run leaves the search side alone.
    db.execute(
        "UPDATE embeddings SET vector = zeroblob(length(vector))",
        [],
    )
    .unwrap();
    index_json(&lake, &[]);
    assert_eq!(zeroed(&db), 2);
}

/// The kill -9 tests' lake under `dir`: 200 generated files and the penguins, with its
/// index directory.
fn kill_test_lake(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let lake = dir.join("lake");
    lakestar::index::synth::generate(&lake, 200, 3).unwrap();
    fs::write(lake.join("penguins.csv"), PENGUINS).unwrap();
    let idx = lake.join(".lakestar");
    (lake, idx)
}

/// No generation serves `lake` (a first one was killed before it landed), and the
/// penguins are found, exactly, by the vector ranking alone.
fn assert_searched_exactly(lake: &Path) {
    let v = vectors(lake);
    assert_eq!(
        (v["kind"].as_str(), &v["generation"]),
        (Some("exact"), &Value::Null),
        "{v}"
    );
    assert_eq!(
        search(lake, "penguin species flipper length", 1, true)[0]["path"],
        "penguins.csv"
    );
}

/// Start `lakestar index` on `lake` held at test pause point `place`, and kill -9 it
/// there.
fn index_killed_at(lake: &Path, place: &str) {
    index_killed_at_env(lake, place, &[]);
}

/// [`index_killed_at`] with more environment.
fn index_killed_at_env(lake: &Path, place: &str, env: &[(&str, &str)]) {
    let idx = lake.join(".lakestar");
    let marker = idx.join(format!("paused-{place}"));
    let _ = fs::remove_file(&marker);
    let mut child = lakestar()
        .env("LAKESTAR_EXACT_BELOW", "0")
        .env("LAKESTAR_SCAN_UP_TO", "0")
        .env("LAKESTAR_PAUSE_AT", place)
        .envs(env.iter().copied())
        .args(["index", lake.to_str().unwrap(), "--graph", "--json"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !marker.is_file() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("index finished ({status}) without reaching {place}");
        }
        assert!(
            Instant::now() < deadline,
            "{place} not reached within 120 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

/// kill -9 while a first graph is being written, and while a rebuilt one waits for its
/// swap: what the catalog committed is searched consistently meanwhile (exactly, or
/// from the old graph), and the next run removes the leftover and finishes the job.
#[test]
fn kill_9_during_the_graph_build_or_its_swap_is_caught_up() {
    let tmp = tempfile::tempdir().unwrap();
    let (lake, idx) = kill_test_lake(tmp.path());

    // A first index killed while its graph is being written: searchable, exactly.
    index_killed_at(&lake, "graph-build");
    assert!(idx.join("vectors/gen-1.tmp").is_dir());
    assert_searched_exactly(&lake);
    let r = index(&lake);
    assert_counts(&r, &[("analyzed", 0), ("errors", 0)]);
    let v = vectors(&lake);
    assert_eq!(
        (v["kind"].as_str(), v["generation"].as_u64()),
        (Some("hnsw"), Some(2)),
        "{v}"
    );
    assert!(!idx.join("vectors/gen-1.tmp").exists());

    // A third of the files deleted: the rebuild's generation lands, the kill comes
    // before the catalog swaps it in. The old graph stands, its tombstones filtered.
    let mut gone = Vec::new();
    for e in walkdir::WalkDir::new(&lake)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".lakestar")
    {
        let e = e.unwrap();
        if e.file_type().is_file() && e.file_name() != "penguins.csv" && gone.len() < 70 {
            gone.push(
                e.path()
                    .strip_prefix(&lake)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    for p in &gone {
        fs::remove_file(lake.join(p)).unwrap();
    }
    index_killed_at(&lake, "graph-swap");
    assert!(idx.join("vectors/gen-3").is_dir() && idx.join("vectors/gen-2").is_dir());
    let v = vectors(&lake);
    assert_eq!(
        (v["generation"].as_u64(), v["tombstones"].as_u64()),
        (Some(2), Some(70)),
        "{v}"
    );
    let hits = paths(&search(&lake, "sales orders customers", 500, true));
    assert_eq!(hits.len(), 201 - 70);
    assert!(
        gone.iter().all(|p| !hits.contains(p)),
        "a deleted file came back"
    );

    let r = index(&lake);
    assert_counts(&r, &[("errors", 0)]);
    let v = vectors(&lake);
    assert_eq!(
        (
            v["generation"].as_u64(),
            v["tombstones"].as_u64(),
            v["files"].as_u64()
        ),
        (Some(4), Some(0), Some(131)),
        "{v}"
    );
    let dirs: Vec<String> = fs::read_dir(idx.join("vectors"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(dirs, vec!["gen-4"]);
}

/// kill -9 halfway through writing the codes' 4-bit copy (`nibbles.bin`, forced here
/// by `LAKESTAR_NIBBLES_ABOVE=0`): the half-written generation is not read, searches
/// are exact meanwhile, and the next run writes the generation whole, copy included.
/// Searched from the copy, the vector ranking is the 8-bit codes' own (the pool holds
/// every point of so small a lake), and a copy gone missing falls back to the codes.
#[test]
fn kill_9_while_the_4bit_copy_is_written_is_caught_up() {
    let tmp = tempfile::tempdir().unwrap();
    let (lake, idx) = kill_test_lake(tmp.path());
    let copy = [("LAKESTAR_NIBBLES_ABOVE", "0")];

    index_killed_at_env(&lake, "nibbles-write", &copy);
    let half = idx.join("vectors/gen-1.tmp/nibbles.bin");
    assert!(half.is_file() && !idx.join("vectors/gen-1").exists());
    assert_searched_exactly(&lake);

    let r: Value = serde_json::from_str(
        run_hnsw(
            &lake,
            &["index", lake.to_str().unwrap(), "--graph", "--json"],
            &copy,
        )
        .trim(),
    )
    .unwrap();
    assert_counts(&r, &[("analyzed", 0), ("errors", 0)]);
    let v = vectors(&lake);
    assert_eq!(v["generation"].as_u64(), Some(2), "{v}");
    assert!(!idx.join("vectors/gen-1.tmp").exists());
    let manifest: Value =
        serde_json::from_slice(&fs::read(idx.join("vectors/gen-2/manifest.json")).unwrap())
            .unwrap();
    let (points, dim) = (
        manifest["points"].as_u64().unwrap(),
        manifest["dim"].as_u64().unwrap(),
    );
    // Files whose vectors are identical share a point.
    assert!((100..=201).contains(&points), "{manifest}");
    let nibbles = idx.join("vectors/gen-2/nibbles.bin");
    assert_eq!(
        manifest["nibbles"]["bytes"].as_u64(),
        Some(points * (4 + dim / 2))
    );
    assert_eq!(
        fs::metadata(&nibbles).unwrap().len(),
        points * (4 + dim / 2)
    );

    let ranked = |q: &str| -> Vec<(String, String)> {
        search(&lake, q, 60, true)
            .iter()
            .map(|h| {
                (
                    h["path"].as_str().unwrap().to_string(),
                    h["score"].to_string(),
                )
            })
            .collect()
    };
    let questions = [
        "penguin species flipper length",
        "sales orders customers",
        "sensor events",
    ];
    let from_copy: Vec<_> = questions.iter().map(|q| ranked(q)).collect();
    assert_eq!(from_copy[0][0].0, "penguins.csv");
    fs::remove_file(&nibbles).unwrap();
    let from_codes: Vec<_> = questions.iter().map(|q| ranked(q)).collect();
    assert_eq!(from_copy, from_codes);
}

/// Below the size where a long-lived process would load the graph
/// (`LAKESTAR_SCAN_UP_TO`), a generation holds the codes alone: no graph is built or
/// stored, every search scans them, and a run under another threshold rebuilds the
/// generation in the shape it asks for (an index from before keeps no useless graph).
#[test]
fn a_generation_below_the_scan_threshold_holds_codes_alone_and_follows_the_threshold() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    lakestar::index::synth::generate(&lake, 60, 3).unwrap();
    fs::create_dir_all(lake.join("special")).unwrap();
    fs::write(lake.join("special/penguins.csv"), PENGUINS).unwrap();
    let lake_arg = lake.to_str().unwrap();
    let scanned = [("LAKESTAR_EXACT_BELOW", "0")];
    let graphed = [("LAKESTAR_EXACT_BELOW", "0"), ("LAKESTAR_SCAN_UP_TO", "0")];
    let shape = |env: &[(&str, &str)]| -> (Value, Vec<String>) {
        let out = run_ok_env(&lake, &["status", "--json"], env);
        let v: Value = serde_json::from_str(&out).unwrap();
        let g = v["vectors"]["generation"].as_u64().unwrap();
        let mut files: Vec<String> = fs::read_dir(lake.join(format!(".lakestar/vectors/gen-{g}")))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        files.sort();
        (v["vectors"].clone(), files)
    };
    let top = |env: &[(&str, &str)]| -> String {
        let mut env = env.to_vec();
        env.push(("LAKESTAR_W_TEXT", "0"));
        let out = run_ok_env(
            &lake,
            &[
                "search",
                "penguin species flipper length",
                "-k",
                "3",
                "--json",
                "--expand",
            ],
            &env,
        );
        json_lines(&out)[0]["path"].as_str().unwrap().to_string()
    };

    run_ok_env(&lake, &["index", lake_arg, "--json"], &scanned);
    let (v, files) = shape(&scanned);
    assert_eq!(
        (v["kind"].as_str(), v["generation"].as_u64()),
        (Some("codes"), Some(1)),
        "{v}"
    );
    assert_eq!(files, ["codes.bin", "manifest.json", "members.bin"]);
    assert_eq!(top(&scanned), "special/penguins.csv");
    assert_eq!(
        top(&graphed),
        "special/penguins.csv",
        "a server-style threshold scans too"
    );
    let text = run_ok_env(&lake, &["status"], &scanned);
    assert!(text.contains("scanned (codes only) generation 1"), "{text}");

    // A graph is wanted at this size now, but a plain `index` writes codes alone: the
    // generation stays, and status says what would build the graph.
    run_ok_env(&lake, &["index", lake_arg, "--json"], &graphed);
    let (v, files) = shape(&graphed);
    assert_eq!(
        (v["kind"].as_str(), v["generation"].as_u64()),
        (Some("codes"), Some(1)),
        "{v}"
    );
    assert_eq!(v["graph_wanted"], Value::Bool(true), "{v}");
    assert_eq!(files, ["codes.bin", "manifest.json", "members.bin"]);
    let text = run_ok_env(&lake, &["status"], &graphed);
    assert!(text.contains("`lakestar index --graph`"), "{text}");

    // Nothing changed in the lake; `--graph` rebuilds the generation with one.
    run_ok_env(&lake, &["index", lake_arg, "--graph", "--json"], &graphed);
    let (v, files) = shape(&graphed);
    assert_eq!(
        (v["kind"].as_str(), v["generation"].as_u64()),
        (Some("hnsw"), Some(2)),
        "{v}"
    );
    assert_eq!(
        files,
        [
            "ann.hnsw.data",
            "ann.hnsw.graph",
            "codes.bin",
            "manifest.json",
            "members.bin"
        ]
    );
    assert_eq!(top(&graphed), "special/penguins.csv");
    assert_eq!(v["graph_wanted"], Value::Bool(false), "{v}");

    // A plain `index` keeps the graph built where one is wanted, after a change too.
    fs::write(
        lake.join("special/krill.csv"),
        "krill,depth\n1,200\n2,300\n",
    )
    .unwrap();
    run_ok_env(&lake, &["index", lake_arg, "--json"], &graphed);
    let (v, _) = shape(&graphed);
    assert_eq!(
        (
            v["kind"].as_str(),
            v["generation"].as_u64(),
            v["delta"].as_u64()
        ),
        (Some("hnsw"), Some(2), Some(1)),
        "{v}"
    );

    // And back: under the default threshold the graph is dropped.
    run_ok_env(&lake, &["index", lake_arg, "--json"], &scanned);
    let (v, files) = shape(&scanned);
    assert_eq!(
        (v["kind"].as_str(), v["generation"].as_u64()),
        (Some("codes"), Some(3)),
        "{v}"
    );
    assert_eq!(files, ["codes.bin", "manifest.json", "members.bin"]);
    let gens: Vec<_> = fs::read_dir(lake.join(".lakestar/vectors"))
        .unwrap()
        .collect();
    assert_eq!(gens.len(), 1, "the older generations are removed");
}
