//! What a newcomer reads first: a hit's title and reasons, a description cut to its
//! budget, a table picked by its number. On the shared lakes.

use crate::common::{index_shared, run, run_ok, shared_lakes};
use serde_json::Value;

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_hit_shows_its_files_title_and_no_similarity_that_says_nothing() {
    let (tmp, idx) = index_shared("dabstep/context");
    let q = "merchant guide payment fees";
    let hits = json_lines(&run_ok(
        tmp.path(),
        &[
            "search",
            q,
            "--index",
            idx.to_str().unwrap(),
            "-k",
            "10",
            "--json",
        ],
    ));
    let title = "Merchant Guide to Optimizing Payment Processing and Minimizing Fees";
    let manual = hits
        .iter()
        .find(|h| h["path"] == "manual.md")
        .expect("manual.md is a hit");
    assert_eq!(manual["title"], title);
    assert!(
        manual["summary"]
            .as_str()
            .unwrap()
            .starts_with(&format!("manual.md — “{title}” — Markdown")),
        "{manual}"
    );
    // A CSV without a title line has none.
    let codes = hits.iter().find(|h| h["path"] == "payments_sample.csv");
    assert!(codes.is_none_or(|h| h.get("title").is_none()), "{codes:?}");
    // A neighbour no nearer than unrelated text is no reason.
    let mut similar = 0;
    for h in &hits {
        for r in h["reasons"].as_array().unwrap() {
            if let Some(sim) = r.as_str().unwrap().strip_prefix("similar description (") {
                let sim: f32 = sim.trim_end_matches(')').parse().unwrap();
                assert!(sim >= 0.15, "{r} in {h}");
                similar += 1;
            }
        }
    }
    assert!(similar > 0, "no similarity shown at all: {hits:?}");
    // The text form: the title on the hit's second line.
    let text = run_ok(
        tmp.path(),
        &["search", q, "--index", idx.to_str().unwrap(), "-k", "10"],
    );
    let mut lines = text.lines();
    lines.find(|l| l.contains("manual.md")).unwrap();
    assert_eq!(
        lines.next().unwrap().trim(),
        format!("“{title}” — Markdown, 22.1 KB, 338 lines, 3,196 words")
    );
}

#[test]
fn describe_cuts_at_whole_lines_and_says_what_it_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let file = shared_lakes().join("messytables/horror/sparse_with_column_errors.csv");
    let file = file.to_str().unwrap();
    let cut = run_ok(tmp.path(), &["describe", file]);
    assert!(cut.len() <= 2048, "{} bytes", cut.len());
    let (body, note) = cut.trim_end().rsplit_once('\n').unwrap();
    // Every line whole: none ends in the mark of a cut inside it.
    assert!(!body.lines().any(|l| l.ends_with(" …")), "{body}");
    let rest = note
        .strip_prefix("  … ")
        .unwrap_or_else(|| panic!("{note}"));
    let (what, all) = rest.split_once(" left out; --max-bytes ").unwrap();
    assert!(
        what.contains("more lines (") && what.contains("columns' profiles"),
        "{note}"
    );
    let all: usize = all.strip_suffix(" shows all").unwrap().parse().unwrap();
    // That budget shows it all, as --max-bytes 0 does.
    let whole = run_ok(
        tmp.path(),
        &["describe", file, "--max-bytes", &all.to_string()],
    );
    assert!(!whole.contains("left out") && whole.len() <= all, "{whole}");
    assert_eq!(
        whole,
        run_ok(tmp.path(), &["describe", file, "--max-bytes", "0"])
    );
    assert!(whole.lines().count() > cut.lines().count());
}

#[test]
fn a_table_is_picked_by_its_number_as_by_its_name() {
    let tmp = tempfile::tempdir().unwrap();
    let book = shared_lakes().join("messytables/horror/large.xlsx");
    let book = book.to_str().unwrap();
    let head = |table: &str| {
        let out = run_ok(tmp.path(), &["head", book, "--table", table, "--json"]);
        serde_json::from_str::<Value>(&out).unwrap()
    };
    let by_name = head("data");
    // Two sheets hold two tables each: the first keeps the sheet's name.
    assert_eq!(
        by_name["tables"],
        serde_json::json!(["Report", "Report (2)", "data", "mudData", "criteria"])
    );
    assert_eq!(head("3"), by_name);
    // The text form says a number picks one too, and numbers them.
    let text = run_ok(tmp.path(), &["head", book, "--table", "3"]);
    assert!(
        text.lines().next().unwrap().contains(
            r#"sheet "data" (3 of 5; --table NAME or --table N picks another: 1 "Report", 2 "Report (2)", 3 "data", 4 "mudData", 5 "criteria")"#
        ),
        "{text}"
    );
    let listed = r#"error: no table 6: the file has 5 tables, 1 "Report", 2 "Report (2)", 3 "data", 4 "mudData", 5 "criteria"; pass a name or a number"#;
    for cmd in ["head", "describe"] {
        let out = run(tmp.path(), &[cmd, book, "--table", "6"]);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        assert_eq!(String::from_utf8_lossy(&out.stderr).trim(), listed, "{cmd}");
    }

    // describe shows that table alone, picked alike by name and by number.
    let described = run_ok(tmp.path(), &["describe", book, "--table", "3"]);
    assert_eq!(
        described,
        run_ok(tmp.path(), &["describe", book, "--table", "data"])
    );
    assert!(
        described.contains(r#"sheet "data""#)
            && !described.contains(r#"sheet "Report""#)
            && described.contains("sheet 3 of the file's 5, alone"),
        "{described}"
    );
    let csv = shared_lakes().join("dabstep/context/acquirer_countries.csv");
    let out = run(
        tmp.path(),
        &["describe", csv.to_str().unwrap(), "--table", "1"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a file of several tables"));
}
