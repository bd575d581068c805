//! Using the index of a lake in an object store (moto's S3 server on 127.0.0.1):
//! `ask` stages the files a run needs into the index's cache, where the sandboxed code
//! reads them and the next run finds them; too large or stale objects are refused with
//! what to do. `serve` and `mcp` search, describe and read rows; companion
//! documentation and lookup tables in the bucket are linked as on disk.

use crate::agent::fenced;
use crate::common::{lakestar, n, test_python};
use crate::llm_server::ScriptedLlm;
use crate::object_store::Moto;
use std::path::Path;
use std::process::Output;

/// `lakestar ask ARGS` against `llm`, with the test's S3 credentials but no endpoint in
/// the environment: the endpoint must come from the index.
fn ask(llm: &ScriptedLlm, cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    lakestar()
        .env("OPENAI_BASE_URL", llm.base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .env("LAKESTAR_MODEL", "scripted-model")
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .env_remove("AWS_ENDPOINT_URL")
        .envs(env.iter().copied())
        .arg("ask")
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn succeeded(out: &Output) -> String {
    crate::agent::ok(out).trim().to_string()
}

/// The run record's note on staging.
fn staging_note(run: &Path) -> String {
    crate::agent::trace(run)
        .into_iter()
        .filter(|e| e["kind"] == "note")
        .map(|e| e["message"].as_str().unwrap().to_string())
        .find(|m| m.starts_with("staged from the object store"))
        .unwrap_or_else(|| panic!("no staging note in {}", run.display()))
}

/// Script one sufficient round whose code (and final code) is `code`.
fn one_round(llm: &ScriptedLlm, code: &str) {
    llm.say("planner", "Compute it from the file.")
        .say("coder", &fenced(code))
        .say("verifier", "**Sufficient.**")
        .say("finalyzer", &fenced(code));
}

#[test]
fn ask_stages_the_objects_it_reads_and_reuses_them() {
    let moto = Moto::start();
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    // A CSV and a Delta table of two versions (written by the `deltalake` package).
    crate::common::run_python(
        cwd,
            "import deltalake, pandas as pd, os\n\
             os.makedirs('lake', exist_ok=True)\n\
             open('lake/units.csv', 'w').write('region,units\\nnorth,3\\nsouth,4\\nnorth,4\\n')\n\
             deltalake.write_deltalake('lake/orders', pd.DataFrame({'id': [1, 2, 3], 'qty': [5, 6, 7]}))\n\
             deltalake.write_deltalake('lake/orders', pd.DataFrame({'id': [4], 'qty': [8]}), mode='append')\n",
        &[],
    );
    moto.upload_dir(cwd, "lake", "bkt", "p/", true);
    let idx = cwd.join("idx");
    let report = moto.index(cwd, "s3://bkt/p", &idx, &["--endpoint", &moto.endpoint]);
    assert_eq!(n(&report, "errors"), 0, "{report}");
    let staged = idx.join("staged");
    let idx_s = idx.to_str().unwrap();

    // Retrieved: the best file for the question is staged and its local path is the one
    // the prompts give; the code reads that copy in the sandbox.
    let llm = ScriptedLlm::start();
    let units = format!(
        "import csv, glob\n\
         path = glob.glob({:?})[0]\n\
         print(sum(int(r['units']) for r in csv.DictReader(open(path)) if r['region'] == 'north'))",
        format!("{}/*/units.csv", staged.display())
    );
    one_round(&llm, &units);
    let run1 = cwd.join("run1");
    let args = |q: &'static str, run: &Path, more: &[&'static str]| -> Vec<String> {
        let mut v: Vec<String> = [q, "--index", idx_s, "--python"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.push(test_python().display().to_string());
        v.push("--out".into());
        v.push(run.display().to_string());
        v.extend(more.iter().map(|s| s.to_string()));
        v
    };
    let a = args(
        "How many units did the north region sell?",
        &run1,
        &["-k", "1"],
    );
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    assert_eq!(succeeded(&ask(&llm, cwd, &[], &a)), "7");
    let note = staging_note(&run1);
    assert!(
        note.contains("units.csv at ") && note.contains("bytes fetched"),
        "{note}"
    );
    let planner = &llm.prompts("planner")[0];
    let local = planner
        .split_whitespace()
        .find(|w| w.starts_with(&staged.display().to_string()) && w.ends_with("units.csv"))
        .unwrap_or_else(|| panic!("no staged path in the planner's prompt:\n{planner}"));
    assert!(Path::new(local).is_file(), "{local}");
    assert!(!planner.contains("s3://bkt/p/units.csv"), "{planner}");

    // Pinned by its key, the Delta table is staged whole (log and data files), and
    // `deltalake` reads its current version from the copy.
    let llm = ScriptedLlm::start();
    let orders = format!(
        "import deltalake, glob\n\
         t = deltalake.DeltaTable(glob.glob({:?})[0])\n\
         print(t.version(), len(t.to_pandas()))",
        format!("{}/*/orders", staged.display())
    );
    one_round(&llm, &orders);
    let run2 = cwd.join("run2");
    let a = args(
        "Version and rows of orders?",
        &run2,
        &["--files", "orders/"],
    );
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    assert_eq!(succeeded(&ask(&llm, cwd, &[], &a)), "1 4");
    assert!(
        staging_note(&run2).contains("orders at "),
        "{}",
        staging_note(&run2)
    );

    // Again, by its URL: from the cache, no request.
    let llm = ScriptedLlm::start();
    one_round(&llm, &units);
    let run3 = cwd.join("run3");
    let a = args("North units?", &run3, &["--files", "s3://bkt/p/units.csv"]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    assert_eq!(succeeded(&ask(&llm, cwd, &[], &a)), "7");
    assert!(
        staging_note(&run3).contains("from the staging cache"),
        "{}",
        staging_note(&run3)
    );

    // The object changed after the index was built, and the cache lost its copy: the
    // run refuses to read content the index does not describe.
    moto.py(
        cwd,
        "s3.put_object(Bucket='bkt', Key='p/units.csv', Body=b'region,units\\nnorth,100\\n')",
    );
    std::fs::remove_dir_all(&staged).unwrap();
    let llm = ScriptedLlm::start();
    let run4 = cwd.join("run4");
    let a = args("North units?", &run4, &["--files", "units.csv"]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let out = ask(&llm, cwd, &[], &a);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("units.csv") && err.contains("run `lakestar index`"),
        "{err}"
    );
    assert!(
        llm.requests().is_empty(),
        "no LLM call for a run with no file"
    );

    // A cache too small for the retrieved file: the run has no file and says how to
    // give it one.
    let llm = ScriptedLlm::start();
    let run5 = cwd.join("run5");
    let a = args("Version and rows of orders?", &run5, &["-k", "1"]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let out = ask(&llm, cwd, &[("LAKESTAR_STAGE_BYTES", "10")], &a);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("could be staged") && err.contains("LAKESTAR_STAGE_BYTES"),
        "{err}"
    );
}

/// `serve` and `mcp` over an index of a bucket: search, describe and the first rows
/// (read by ranged requests), `serve --watch` listing the bucket again, MCP `reindex`.
#[test]
fn serve_and_mcp_read_a_bucket_lake() {
    use crate::mcp::{hit_paths, Session};
    use crate::serve::{Http, Server};
    use serde_json::json;
    let moto = Moto::start();
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    moto.py(
        cwd,
        "s3.create_bucket(Bucket='srv')\n\
         s3.put_object(Bucket='srv', Key='l/units.csv', Body=b'region,units\\nnorth,3\\nsouth,4\\n')\n\
         s3.put_object(Bucket='srv', Key='l/notes.md', Body=b'# Notes\\n\\nUnits per region.\\n')",
    );
    let idx = cwd.join("idx");
    let report = moto.index(cwd, "s3://srv/l", &idx, &["--endpoint", &moto.endpoint]);
    assert_eq!(n(&report, "files_seen"), 2, "{report}");
    let creds = [
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_REGION", "us-east-1"),
    ];

    let mut cmd = lakestar();
    cmd.envs(creds).env_remove("AWS_ENDPOINT_URL");
    let server = Server::start_cmd(cmd, &idx, &["--watch", "--interval", "1"]);
    server.wait_line("watch · reconcile");
    let http = Http::new(&server);
    let (st, found) = http.get("/search?q=units%20per%20region&k=1");
    assert_eq!(
        (st, &found["hits"][0]["path"]),
        (200, &json!("units.csv")),
        "{found}"
    );
    let (st, file) = http.get("/files/units.csv");
    assert_eq!((st, file["format"].as_str()), (200, Some("csv")), "{file}");
    let (st, rows) = http.get("/files/units.csv/rows?n=1");
    assert_eq!(st, 200, "{rows}");
    assert_eq!(rows["columns"], json!(["region", "units"]));
    assert_eq!(rows["rows"], json!([["north", "3"]]));
    assert_eq!(rows["more"], true);
    crate::serve::assert_error(&http.get("/files/missing.csv/rows"), 404, "not_found");
    // A new object: the watcher's next listing indexes it.
    moto.py(
        cwd,
        "s3.put_object(Bucket='srv', Key='l/quokkas.csv', Body=b'quokka_sightings,island\\n12,Rottnest\\n')",
    );
    let start = std::time::Instant::now();
    loop {
        let (_, found) = http.get("/search?q=quokka%20sightings&k=1");
        if found["hits"][0]["path"] == "quokkas.csv" {
            break;
        }
        // A hang guard, not a measurement: the listing runs every second.
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "the new object never became searchable: {found}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(server.stop().success(), "serve --watch exits 0 on SIGTERM");

    let mut s = Session::start(&idx, &[], &creds);
    let q = json!({"query": "quokka sightings island", "k": 1});
    assert_eq!(hit_paths(&s.ok("search_files", q)), ["quokkas.csv"]);
    let head = s.ok("head", json!({"path": "quokkas.csv", "n": 5}));
    assert_eq!(head["rows"], json!([["12", "Rottnest"]]), "{head}");
    let d = s.ok("describe_file", json!({"path": "units.csv"}));
    assert!(d["description"].as_str().unwrap().contains("region"), "{d}");
    moto.py(cwd, "s3.delete_object(Bucket='srv', Key='l/notes.md')");
    let r = s.ok("reindex", json!({}));
    assert_eq!((n(&r, "deleted"), n(&r, "unchanged")), (1, 2), "{r}");
    s.close();
}

/// Documentation beside a headerless file, and a lookup table beside the data whose
/// codes it names, are linked in a bucket as on disk (read by ranged GETs).
#[test]
fn companions_in_a_bucket_are_linked() {
    use crate::companion::{lookup_lake, station_doc, STATION_DAT};
    let moto = Moto::start();
    let (tmp, lake) = lookup_lake();
    let cwd = tmp.path();
    std::fs::create_dir_all(lake.join("obs")).unwrap();
    std::fs::write(lake.join("obs/station.dat"), STATION_DAT).unwrap();
    std::fs::write(lake.join("obs/station_dat.text"), station_doc("TAIR")).unwrap();
    moto.upload_dir(cwd, "lake", "comp", "", true);
    let idx = cwd.join("idx");
    let report = moto.index(cwd, "s3://comp", &idx, &[]);
    assert_eq!(n(&report, "errors"), 0, "{report}");
    let idx_s = idx.to_str().unwrap();
    let d: serde_json::Value = serde_json::from_str(&moto.ok(
        cwd,
        &["describe", "obs/station.dat", "--index", idx_s, "--json"],
    ))
    .unwrap();
    let names: Vec<&str> = d["description"]["content"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["YEAR", "MONTH", "TAIR", "WSPD"], "{d}");
    // `doctor` takes a URL lake for what it is, not for a directory that is gone.
    let out = lakestar()
        .args(["doctor", "--json", "--index", idx_s])
        .current_dir(cwd)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let index = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "index")
        .unwrap();
    assert_eq!(index["status"], "ok", "{index}");
    assert!(
        index["detail"].as_str().unwrap().contains("s3://comp"),
        "{index}"
    );
    let q = "unemployment rate in California, Texas and New York";
    let hits = crate::common::json_lines(&moto.ok(cwd, &["search", q, "--index", idx_s, "--json"]));
    assert_eq!(hits[0]["path"], "labor/unemployment.csv", "{hits:?}");
    assert_eq!(
        hits[0]["companions"],
        serde_json::json!([{"path": "labor/state_codes.csv", "why": "lookup: state → state_name"}])
    );
}
