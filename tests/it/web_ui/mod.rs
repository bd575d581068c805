//! The web UI in a real browser: headless Chromium driven over WebDriver (chromedriver,
//! with fantoccini) against `lakestar serve` on 127.0.0.1.
//!
//! Chromium and chromedriver come from Debian (`chromium`, `chromium-driver`); when they
//! are missing and the tests run as root with apt-get, they are installed first. With
//! `LAKESTAR_UI_SCREENSHOTS=DIR` the tests write the screenshots of `docs/` there.

mod browser;

use crate::common::{index_into, index_shared};
use crate::llm_server::ScriptedLlm;
use crate::serve::ask::{sales_lake, serve_with};
use crate::serve::{Http, Server};
use browser::Browser;
use serde_json::{json, Value};
use std::path::Path;

/// The first rows of `path` as the API gives them, or None while the server has no
/// rows route.
fn api_rows(http: &Http, path: &str) -> Option<Value> {
    let (st, rows) = http.get(&format!("/files/{path}/rows?n=20"));
    (st == 200).then_some(rows)
}

/// Check the file page's row preview against the API: the same cells, or the note
/// that this server has no preview.
fn check_preview(b: &Browser, http: &Http, path: &str) {
    b.until("return !!document.querySelector('#preview table, #preview .note-box')");
    match api_rows(http, path) {
        Some(rows) => {
            let cells = b.texts("#preview table.rows tbody tr:first-child td");
            let first: Vec<String> = rows["rows"][0]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap_or("null").to_string())
                .collect();
            assert_eq!(cells[1..], first[..], "{rows}");
            let shown = b.all("#preview table.rows tbody tr").len();
            assert_eq!(shown, rows["rows"].as_array().unwrap().len());
        }
        None => assert!(
            b.text("#preview .note-box").contains("no row preview"),
            "{}",
            b.body_text()
        ),
    }
}

#[test]
fn the_pages_show_the_lake_a_search_and_a_file() {
    let (_tmp, idx) = index_shared("dabstep/context");
    let server = Server::start(&idx, &[]);
    let http = Http::new(&server);
    let b = Browser::start();

    // The overview: the real counts and formats.
    b.goto(&format!("{}/", server.base));
    let figures = b.text("#figures");
    assert!(figures.contains("FILES\n7"), "{figures}");
    assert!(figures.contains("csv, json, markdown"), "{figures}");
    let formats: Vec<String> = b
        .texts("table.formats tbody tr")
        .iter()
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        formats,
        ["csv 3 35.7 KB", "json 2 538.0 KB", "markdown 2 23.8 KB"],
        "{formats:?}"
    );
    let listed = b.texts("table.files tbody td.path");
    assert_eq!(listed.len(), 7);
    assert!(listed.contains(&"merchant_category_codes.csv".to_string()));
    // The time coverage the files state (payments_sample.csv from its year and
    // day-of-year columns, manual.md).
    assert!(
        b.body_text().contains("2023-01-05 → 2024-11-01"),
        "{}",
        b.body_text()
    );
    b.screenshot("overview");

    // A search typed into the header's form, then refined on the search page.
    let quick = b.wait("form.quick input[name=q]");
    b.rt.block_on(quick.send_keys("merchant category codes\n"))
        .unwrap();
    b.wait("#result-count");
    assert!(b.url().contains("/ui/search?q=merchant+category+codes"));
    let hits: Vec<String> = b
        .all("ol.hits > li")
        .iter()
        .map(|e| b.attr(e, "data-path").unwrap())
        .collect();
    let api = http.get("/search?q=merchant%20category%20codes&k=20").1["hits"].clone();
    let api = api.as_array().unwrap();
    let ranked: Vec<&str> = api.iter().map(|h| h["path"].as_str().unwrap()).collect();
    assert_eq!(hits, ranked, "the page shows the API's ranking");
    let rank = hits
        .iter()
        .position(|p| p == "merchant_category_codes.csv")
        .expect("the codes file is a hit");
    assert!(rank < 3, "{hits:?}");
    // Its evidence highlighted: the query's words marked in its path and reasons.
    let hit = r#"ol.hits > li[data-path="merchant_category_codes.csv"]"#;
    let marks = b.texts(&format!("{hit} mark"));
    for w in ["merchant", "category", "codes"] {
        assert!(
            marks.iter().any(|m| m.eq_ignore_ascii_case(w)),
            "{w} not marked: {marks:?}"
        );
    }
    assert!(!b.texts(&format!("{hit} ul.reasons li")).is_empty());
    // Its relevance: the server's label and its share of the best hit's score.
    let codes = &api[rank];
    let percent = (codes["share"].as_f64().unwrap() * 100.0).round();
    let shown = b.text(&format!("{hit} .relevance"));
    assert_eq!(
        shown.split_whitespace().collect::<Vec<_>>(),
        [codes["relevance"].as_str().unwrap(), &format!("{percent}%")],
    );
    b.screenshot("search");

    // The hit opens the file page: its description and its first rows.
    b.wait(&format!("{hit} a.path"));
    let link = b.all(&format!("{hit} a.path")).remove(0);
    b.rt.block_on(link.click()).unwrap();
    assert_eq!(b.text("#file-path"), "merchant_category_codes.csv");
    let columns = b.texts("table.columns tbody td:first-child");
    assert_eq!(columns, ["Unnamed: 0", "mcc", "description"]);
    assert!(b.text("#description").contains("769 rows × 3 columns"));
    check_preview(&b, &http, "merchant_category_codes.csv");
    b.screenshot("file");
}

/// A lake whose names and cells are markup.
const HOSTILE_NAME: &str = "<img src=x onerror=alert(1)>.csv";
const HOSTILE_CELL: &str = "<script>window.pwned=1</script>";

#[test]
fn the_token_guards_the_pages_and_lake_content_shows_as_text() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    std::fs::create_dir(&lake).unwrap();
    std::fs::write(
        lake.join(HOSTILE_NAME),
        format!("label,note\n\"{HOSTILE_CELL}\",<b>bold</b>\nplain,<i>x</i>\n"),
    )
    .unwrap();
    two_sheets(&lake.join("book.xlsx"));
    // A collection: one schema, dated names.
    daily_readings(&lake.join("daily"), 6);
    let idx = index_into(tmp.path(), &lake);
    let server = Server::start(&idx, &["--token", "s3cret"]);
    let http = Http::new(&server);
    let b = Browser::start();

    // Without the token: the 401 page says how to get in; the API answers JSON.
    b.goto(&format!("{}/", server.base));
    assert_eq!(b.text("h1"), "This server needs its token");
    assert!(b.body_text().contains("/?token=TOKEN"));
    for page in ["/", "/ui/search?q=x", "/ui/file?path=a.csv", "/ui/ask"] {
        let (st, body) = crate::serve::raw_get(&server.addr, page, &["Accept: text/html"]);
        assert_eq!(st, 401, "{page}");
        assert!(body.contains("needs its token") && !body.contains("s3cret"));
    }
    assert_eq!(Http::new(&server).get("/overview").0, 401);
    b.goto(&format!("{}/?token=wrong", server.base));
    assert!(b.body_text().contains("wrong token"));

    // The assets are open (the 401 page needs its stylesheet), each with its type, and
    // every answer carries the policy that forbids any script but the UI's own.
    for (path, token, status, content_type) in [
        ("/ui/assets/app.css", None, 200, "text/css; charset=utf-8"),
        (
            "/ui/assets/common.js",
            None,
            200,
            "text/javascript; charset=utf-8",
        ),
        ("/ui/assets/icon.svg", None, 200, "image/svg+xml"),
        ("/ui/search", None, 401, "application/json"),
        (
            "/ui/search",
            Some("s3cret"),
            200,
            "text/html; charset=utf-8",
        ),
        ("/overview", Some("s3cret"), 200, "application/json"),
    ] {
        let mut req = http.client.get(format!("{}{path}", http.base));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let r = http.rt.block_on(req.send()).unwrap();
        assert_eq!(r.status().as_u16(), status, "{path}");
        assert_eq!(r.headers()["content-type"], content_type, "{path}");
        assert_eq!(
            r.headers()["content-security-policy"],
            lakestar::serve::ui::CSP,
            "{path}"
        );
        assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    }

    // With it once: redirected to the page without it, a cookie scripts cannot read.
    b.goto(&format!("{}/?token=s3cret", server.base));
    b.wait("#figures");
    assert_eq!(b.url(), format!("{}/", server.base));
    assert_eq!(b.js("return document.cookie"), json!(""));
    let cookies = b.rt.block_on(b.client().get_all_cookies()).unwrap();
    let c = cookies
        .iter()
        .find(|c| c.name() == "lakestar_token")
        .unwrap();
    assert_eq!(c.http_only(), Some(true));
    assert_eq!(format!("{:?}", c.same_site()), "Some(Strict)");
    // The header still works for API clients, the cookie for the browser's fetches.
    assert_eq!(http.get("/overview").0, 401);
    assert_eq!(
        Http::new(&server).with_token("s3cret").get("/overview").0,
        200
    );

    // The hostile name and cells are text everywhere, and no markup of theirs ran.
    let listed = b.texts("table.files tbody td.path");
    assert_eq!(listed[..2], [HOSTILE_NAME, "book.xlsx"]);
    assert_eq!(listed.len(), 8);
    let collections: Vec<String> = b
        .texts("table.collections tbody tr")
        .iter()
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(collections.len(), 1, "{collections:?}");
    assert!(
        collections[0].starts_with("daily/{year}-{n}-{n}.csv csv 6 ")
            && collections[0].contains("2024-01-01 → 2024-01-06"),
        "{collections:?}"
    );
    // A search folds the collection into its best member and says so.
    b.goto(&format!("{}/ui/search?q=station+temperature", server.base));
    b.wait("#result-count");
    let folded = b.text("ol.hits > li:first-child .collection");
    assert!(
        folded.contains("daily/{year}-{n}-{n}.csv") && folded.contains("6 members"),
        "{folded}"
    );
    b.goto(&format!("{}/ui/search?q=note+label", server.base));
    b.wait("#result-count");
    assert_eq!(b.text("ol.hits > li a.path"), HOSTILE_NAME);
    b.rt.block_on(b.wait("ol.hits > li a.path").click())
        .unwrap();
    assert_eq!(b.text("#file-path"), HOSTILE_NAME);
    assert!(b.text("#description").contains(HOSTILE_CELL));
    let http = Http::new(&server).with_token("s3cret");
    check_preview(&b, &http, &urlencode(HOSTILE_NAME));
    if api_rows(&http, &urlencode(HOSTILE_NAME)).is_some() {
        assert_eq!(
            b.text("#preview tbody tr:first-child td:nth-child(2)"),
            HOSTILE_CELL
        );
    }
    assert_eq!(
        b.js(
            "return document.querySelectorAll('#main img, #main script, #main b, #main i').length"
        ),
        json!(0)
    );
    assert_eq!(b.js("return typeof window.pwned"), json!("undefined"));

    // A file of several tables: the preview offers them all.
    b.goto(&format!("{}/ui/file?path=book.xlsx", server.base));
    assert_eq!(b.text("#file-path"), "book.xlsx");
    assert_eq!(b.texts("#main h3 code"), ["Sales", "Targets"]);
    let columns = b.texts("table.columns tbody td:first-child");
    assert_eq!(columns, ["region", "amount", "region", "target"]);
    check_preview(&b, &http, "book.xlsx");
    if api_rows(&http, "book.xlsx").is_some() {
        assert_eq!(b.texts("#table-picker option"), ["Sales", "Targets"]);
        assert_eq!(b.texts("#preview thead th"), ["#", "region", "amount"]);
        let pick = b.wait("#table-picker");
        b.rt.block_on(pick.select_by_value("Targets")).unwrap();
        b.until("return document.querySelector('#preview thead th:nth-child(2)')?.nextSibling?.textContent === 'target'");
        assert_eq!(
            b.text("#preview tbody tr:first-child td:nth-child(2)"),
            "emea"
        );
    }
}

/// A workbook of two sheets.
fn two_sheets(path: &Path) {
    let mut wb = rust_xlsxwriter::Workbook::new();
    for (name, header, row) in [
        ("Sales", ["region", "amount"], ("north", 10.0)),
        ("Targets", ["region", "target"], ("emea", 5000.0)),
    ] {
        let s = wb.add_worksheet().set_name(name).unwrap();
        s.write_string(0, 0, header[0]).unwrap();
        s.write_string(0, 1, header[1]).unwrap();
        s.write_string(1, 0, row.0).unwrap();
        s.write_number(1, 1, row.1).unwrap();
    }
    wb.save(path).unwrap();
}

/// Percent-encode a path segment as the page's `encodeURIComponent` does.
fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn the_ask_page_follows_a_run_live_and_shows_the_answer() {
    let (_tmp, _lake, idx) = sales_lake();
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the amount of the north region.")
        .say(
            "coder",
            // The `load:` label in a path string: the load-label rule fires.
            &crate::agent::fenced("import time\nsource = 'load:/nowhere/sales.csv'\namounts = {'north': [10, 5], 'south': [20]}\ntime.sleep(3)\nprint('north', sum(amounts['north']))"),
        )
        .say("verifier", "sufficient")
        .say("finalyzer", &crate::agent::fenced("print(15)"));
    let server = serve_with(&llm, &idx, &[]);
    let b = Browser::start();

    b.goto(&format!("{}/ui/ask", server.base));
    let q = b.wait("#question");
    b.rt.block_on(q.send_keys("How much did the north region sell?"))
        .unwrap();
    let f = b.wait("#files");
    b.rt.block_on(f.send_keys("sales.csv")).unwrap();
    b.rt.block_on(b.wait("#ask-button").click()).unwrap();

    // Live: the plan shows while the script still sleeps, before any answer.
    b.wait("#trace > li[data-kind=plan]");
    assert_eq!(
        b.js("return [!!document.querySelector('#run-live'), !!document.querySelector('#answer')]"),
        json!([true, false])
    );

    assert_eq!(b.text("#answer-text"), "15");
    let kinds: Vec<String> = b
        .all("#trace > li")
        .iter()
        .map(|e| b.attr(e, "data-kind").unwrap())
        .collect();
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("start"),
        "{kinds:?}"
    );
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("finish"),
        "{kinds:?}"
    );
    for k in ["llm", "exec", "verdict"] {
        assert!(kinds.iter().any(|x| x == k), "{k} missing: {kinds:?}");
    }
    let exec = b.text("#trace > li[data-kind=exec] pre.code");
    assert!(exec.contains("sum(amounts['north'])"), "{exec}");
    assert_eq!(b.text("#trace > li[data-kind=exec] pre.stdout"), "north 15");
    assert!(b
        .text("#trace > li[data-kind=verdict]")
        .contains("sufficient"));
    assert!(b
        .text("#trace > li[data-kind=start]")
        .contains("north region"));
    // A rule's firing is in the trace and said with the answer.
    let rule = b.text("#trace > li[data-kind=rule]");
    assert!(rule.to_lowercase().contains("rule load-label"), "{rule}");
    assert!(
        b.text("#answer").contains("rules load-label ×1"),
        "{}",
        b.text("#answer")
    );
    // The run's address stays: reloading shows it again.
    assert!(b.url().contains("/ui/ask?run="), "{}", b.url());
    b.screenshot("ask");
    b.goto(&b.url());
    assert_eq!(b.text("#answer-text"), "15");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
}

/// `days` files of one schema in `dir`, named by their day in January 2024: a
/// collection.
fn daily_readings(dir: &Path, days: u32) {
    std::fs::create_dir_all(dir).unwrap();
    for day in 1..=days {
        std::fs::write(
            dir.join(format!("2024-01-0{day}.csv")),
            format!(
                "station,temperature_c\nnorth,{day}.5\nsouth,{}.0\n",
                day + 10
            ),
        )
        .unwrap();
    }
}

/// A lake for the search page's presentation: a collection deep in folders, a report
/// with a title, a table whose numbers carry their notation.
fn presentation_lake(lake: &Path) {
    daily_readings(&lake.join("readings/by_station/station_north/daily"), 8);
    std::fs::write(
        lake.join("guide.md"),
        "# Field Guide to the Station Readings\n\nHow the stations measure temperature.\n\n\
         ## Sensors\n\nEach station reads every hour.\n\n## Files\n\nOne file a day.\n",
    )
    .unwrap();
    std::fs::write(
        lake.join("budget.csv"),
        "agency,revenue,growth\nParks,\"$3,100M\",12.5%\nRoads,$950M,3%\nPorts,$12M,100%\n",
    )
    .unwrap();
}

#[test]
fn hits_show_titles_members_compactly_bars_that_differ_and_ask_needs_an_llm() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    presentation_lake(&lake);
    let idx = index_into(tmp.path(), &lake);
    let server = Server::start(&idx, &[]);
    let http = Http::new(&server);
    let b = Browser::start();

    // The collection's other members: their folder once, their names, all on opening.
    b.goto(&format!(
        "{}/ui/search?q=station+temperature+readings",
        server.base
    ));
    b.wait("#result-count");
    let api = http
        .get("/search?q=station%20temperature%20readings&k=20")
        .1["hits"]
        .clone();
    let api = api.as_array().unwrap().clone();
    let folded = api
        .iter()
        .position(|h| h["collection"]["matched"].as_u64().unwrap_or(0) > 0)
        .expect("a folded collection hit");
    let c = &api[folded]["collection"];
    let li = format!("ol.hits > li:nth-child({})", folded + 1);
    let summary = b.text(&format!("{li} details.members > summary"));
    let dir = "readings/by_station/station_north/daily/";
    assert_eq!(summary.matches(dir).count(), 1, "{summary}");
    assert!(
        summary.starts_with(&format!(
            "{} other members match in {dir}: 2024-01-0",
            c["matched"]
        )),
        "{summary}"
    );
    // Closed, the list is not shown.
    assert_eq!(b.texts(&format!("{li} ul.member-list a")).concat(), "");
    b.rt.block_on(b.wait(&format!("{li} details.members > summary")).click())
        .unwrap();
    let open = b.text(&format!("{li} details.members > summary"));
    assert_eq!(
        open,
        format!("{} other members match in {dir}", c["matched"])
    );
    let names = b.texts(&format!("{li} ul.member-list a"));
    let matching: Vec<String> = c["matching"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().strip_prefix(dir).unwrap().to_string())
        .collect();
    assert_eq!(names, matching);
    let first = b.all(&format!("{li} ul.member-list a")).remove(0);
    assert_eq!(
        b.attr(&first, "href").unwrap(),
        format!(
            "/ui/file?path={}",
            urlencode(&format!("{dir}{}", matching[0]))
        )
    );

    // The bars span the scores shown: the best full, the last empty, one between as
    // its score falls; the tooltip says so.
    assert!(api.len() >= 3, "{api:?}");
    let widths: Vec<f64> = b
        .all("ol.hits > li .relevance .fill")
        .iter()
        .map(|e| {
            let w = b.attr(e, "style").unwrap();
            w.trim_start_matches("width: ")
                .trim_end_matches("%;")
                .parse()
                .unwrap()
        })
        .collect();
    let scores: Vec<f64> = api.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    // Filling hits may score above the hits before them: the bars span the scores shown.
    let top = scores.iter().copied().fold(f64::MIN, f64::max);
    let low = scores.iter().copied().fold(f64::MAX, f64::min);
    assert!(top > low, "{scores:?}");
    for (w, s) in widths.iter().zip(&scores) {
        let expected = (100.0 * (s - low) / (top - low)).round().max(2.0);
        assert_eq!(*w, expected, "{widths:?} for {scores:?}");
    }
    let tip = b.attr(&b.wait("ol.hits > li .relevance"), "title").unwrap();
    assert!(
        tip.contains("between the last hit's score") && tip.contains("% of the best hit's"),
        "{tip}"
    );
    assert!(b.text("#result-count").contains("each bar spans"));

    // A document's own title, in the API's hit and on the page.
    let guide = http
        .get("/search?q=field%20guide%20station%20readings&k=5")
        .1["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["path"] == "guide.md")
        .cloned()
        .expect("guide.md is a hit");
    assert_eq!(guide["title"], "Field Guide to the Station Readings");
    b.goto(&format!(
        "{}/ui/search?q=field+guide+station+readings",
        server.base
    ));
    b.wait("#result-count");
    let shown = b.text(r#"ol.hits > li[data-path="guide.md"] .summary"#);
    assert!(
        shown.starts_with("“Field Guide to the Station Readings” — Markdown"),
        "{shown}"
    );

    // Ranges as the column writes its numbers.
    b.goto(&format!("{}/ui/file?path=budget.csv", server.base));
    b.wait("table.columns tbody tr");
    let rows = b.texts("table.columns tbody tr");
    let range = |col: &str| {
        rows.iter()
            .find(|r| r.starts_with(col))
            .unwrap_or_else(|| panic!("{col} in {rows:?}"))
            .clone()
    };
    assert!(range("revenue").contains("$12M … $3,100M"), "{rows:?}");
    assert!(range("growth").contains("3% … 100%"), "{rows:?}");

    // Without an LLM the Ask page says so, and how to configure one, before any typing.
    let (st, ready) = http.get("/ask");
    assert_eq!(st, 200);
    assert_eq!(ready["ready"], false);
    let why = ready["why"].as_str().unwrap();
    assert!(
        why.contains("LAKESTAR_MODEL") && !why.contains("--replay"),
        "{why}"
    );
    b.goto(&format!("{}/ui/ask", server.base));
    let note = b.text("#no-llm");
    assert!(
        note.starts_with("Asking is unavailable: no LLM is configured")
            && note.contains("LAKESTAR_MODEL")
            && note.contains("lakestar.toml"),
        "{note}"
    );
    assert_eq!(
        b.js("return ['question', 'guidelines', 'files', 'ask-button'].map((id) => document.getElementById(id).disabled)"),
        json!([true, true, true, true])
    );
}
