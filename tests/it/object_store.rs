//! Object-store lakes: `lakestar index s3://…` against a real S3-compatible server (moto's
//! server mode) started on 127.0.0.1 by the test, driven over real HTTP.

use crate::common::{lakestar, n, run_ok_env, test_python};
use serde_json::Value;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// moto's S3 server on a free loopback port; killed when dropped.
pub(crate) struct Moto {
    child: Child,
    pub(crate) endpoint: String,
}

impl Moto {
    pub(crate) fn start() -> Moto {
        let python = test_python();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(&python)
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto's server starts (moto[server] in the test venv)");
        let moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "moto did not answer in 60 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        moto
    }

    /// Run `body` in Python with `s3`, a boto3 client of this server, in scope.
    pub(crate) fn py(&self, cwd: &Path, body: &str) {
        let script = format!(
            "import boto3, os\n\
             s3 = boto3.client('s3', endpoint_url='{}', aws_access_key_id='testing', \
             aws_secret_access_key='testing', region_name='us-east-1')\n{body}\n",
            self.endpoint
        );
        let out = Command::new(test_python())
            .args(["-c", &script])
            .current_dir(cwd)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "python failed:\n{script}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Create `bucket` (unless `create` is false) and upload the folder `dir` (relative
    /// to `cwd`) into it under `prefix` (`""` or ending in `/`).
    pub(crate) fn upload_dir(
        &self,
        cwd: &Path,
        dir: &str,
        bucket: &str,
        prefix: &str,
        create: bool,
    ) {
        let make = if create {
            format!("s3.create_bucket(Bucket='{bucket}')\n")
        } else {
            String::new()
        };
        self.py(
            cwd,
            &format!(
                "{make}for root, _, names in os.walk('{dir}'):\n\
                 \x20   for name in names:\n\
                 \x20       p = os.path.join(root, name)\n\
                 \x20       s3.upload_file(p, '{bucket}', '{prefix}' + os.path.relpath(p, '{dir}'))"
            ),
        )
    }

    /// `lakestar ARGS` with the server's endpoint and test credentials in the environment;
    /// its stdout (it must succeed).
    pub(crate) fn ok(&self, cwd: &Path, args: &[&str]) -> String {
        run_ok_env(
            cwd,
            args,
            &[
                ("AWS_ACCESS_KEY_ID", "testing"),
                ("AWS_SECRET_ACCESS_KEY", "testing"),
                ("AWS_REGION", "us-east-1"),
                ("AWS_ENDPOINT_URL", &self.endpoint),
            ],
        )
    }

    /// `index URL --index DIR --json ARGS`, parsed.
    pub(crate) fn index(&self, cwd: &Path, url: &str, index: &Path, extra: &[&str]) -> Value {
        let mut args = vec!["index", url, "--index", index.to_str().unwrap(), "--json"];
        args.extend_from_slice(extra);
        serde_json::from_str(self.ok(cwd, &args).trim()).unwrap()
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Check `v`'s counts, and return the bytes it fetched.
fn counts(v: &Value, expected: &[(&str, u64)]) -> u64 {
    for (k, want) in expected {
        assert_eq!(n(v, k), *want, "{k} in {v}");
    }
    n(&v["fetched"], "bytes")
}

/// A small lake: tables, JSON, text; uploaded under `lake/data/`.
const UPLOAD: &str = r#"
s3.create_bucket(Bucket='lake')
put = lambda k, b: s3.put_object(Bucket='lake', Key='data/' + k, Body=b)
put('sales.csv', b'region,units,price\nnorth,3,2.5\nsouth,4,3.5\neast,5,1.25\n')
put('customers.csv', b'id,name,city\n1,Ann,Oslo\n2,Bob,Rome\n')
put('fees/rules.json', b'[{"card_scheme":"visa","fee":0.1},{"card_scheme":"amex","fee":0.2}]')
put('notes.md', b'# Notes\n\nThe merchant fee rules per card scheme are in fees/rules.json.\n')
put('old.txt', b'a note that will be deleted\n')
s3.put_object(Bucket='lake', Key='elsewhere/not-in-lake.csv', Body=b'x\n1\n')
listed = s3.list_objects_v2(Bucket='lake', Prefix='data/')['Contents']
open('total', 'w').write(str(sum(o['Size'] for o in listed)))
"#;

#[test]
fn an_s3_lake_is_indexed_kept_incrementally_and_searched() {
    let moto = Moto::start();
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let index = cwd.join("idx");
    moto.py(cwd, UPLOAD);
    let url = "s3://lake/data";

    let first = moto.index(cwd, url, &index, &[]);
    let fetched = counts(
        &first,
        &[
            ("files_seen", 5),
            ("added", 5),
            ("analyzed", 5),
            ("errors", 0),
        ],
    );
    // Small objects are read whole, once each: the lookup step, which reads the small
    // tables with a unique column again, gets them from what the analysis read.
    let total: u64 = std::fs::read_to_string(cwd.join("total"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(fetched, total, "{first}");
    assert_eq!(n(&first["fetched"], "requests"), 5, "{first}");

    // No change: listed only, nothing read.
    let again = moto.index(cwd, url, &index, &[]);
    assert_eq!(
        counts(
            &again,
            &[
                ("unchanged", 5),
                ("analyzed", 0),
                ("added", 0),
                ("modified", 0)
            ]
        ),
        0,
        "{again}"
    );

    // Modify one object (a new ETag), delete one, rename one (copy + delete).
    moto.py(
        cwd,
        "s3.put_object(Bucket='lake', Key='data/sales.csv', \
         Body=b'region,units,price\\nnorth,3,2.5\\nsouth,4,3.5\\neast,5,1.25\\nwest,6,4.0\\n')",
    );
    let m = moto.index(cwd, url, &index, &[]);
    counts(
        &m,
        &[
            ("modified", 1),
            ("analyzed", 1),
            ("unchanged", 4),
            ("added", 0),
        ],
    );

    moto.py(cwd, "s3.delete_object(Bucket='lake', Key='data/old.txt')");
    let d = moto.index(cwd, url, &index, &[]);
    let fetched = counts(
        &d,
        &[
            ("deleted", 1),
            ("files_seen", 4),
            ("analyzed", 0),
            ("unchanged", 4),
        ],
    );
    // Nothing of the deleted object's; the folder's links are made again, and its two
    // lookup candidates (sales.csv, now 66 bytes; customers.csv, 35) read for them.
    assert_eq!(fetched, 66 + 35, "{d}");

    moto.py(
        cwd,
        "s3.copy_object(Bucket='lake', Key='data/people.csv', \
         CopySource={'Bucket': 'lake', 'Key': 'data/customers.csv'})\n\
         s3.delete_object(Bucket='lake', Key='data/customers.csv')",
    );
    let r = moto.index(cwd, url, &index, &[]);
    let fetched = counts(
        &r,
        &[
            ("renamed", 1),
            ("analyzed", 0),
            ("added", 0),
            ("deleted", 0),
            ("unchanged", 3),
        ],
    );
    // The renamed object is not analyzed again: only the folder's lookup candidates
    // are read for its links (sales.csv and people.csv, the renamed customers.csv).
    assert_eq!(fetched, 66 + 35, "a rename reads no analysis: {r}");

    // The same bytes written again: a new last-modified, the same ETag: not read.
    moto.py(
        cwd,
        "s3.put_object(Bucket='lake', Key='data/notes.md', \
         Body=b'# Notes\\n\\nThe merchant fee rules per card scheme are in fees/rules.json.\\n')",
    );
    std::thread::sleep(Duration::from_millis(1100));
    let t = moto.index(cwd, url, &index, &[]);
    assert_eq!(
        counts(&t, &[("analyzed", 0), ("modified", 0), ("unchanged", 4)]),
        0,
        "{t}"
    );

    // Search and describe read the index only (the server is not needed for them).
    let idx = index.to_str().unwrap();
    let hits = moto.ok(
        cwd,
        &["search", "card scheme fee rules", "--index", idx, "--json"],
    );
    let first_hit: Value = serde_json::from_str(hits.lines().next().unwrap()).unwrap();
    assert!(
        ["fees/rules.json", "notes.md"].contains(&first_hit["path"].as_str().unwrap()),
        "{hits}"
    );
    let described = moto.ok(cwd, &["describe", "people.csv", "--index", idx]);
    assert!(
        described.contains("id") && described.contains("city"),
        "{described}"
    );
    let sales = moto.ok(cwd, &["describe", "sales.csv", "--index", idx]);
    assert!(sales.contains("4 rows × 3 columns"), "{sales}");
    let status = moto.ok(cwd, &["status", "--index", idx]);
    assert!(status.contains("s3://lake/data"), "{status}");
}

#[test]
fn large_objects_cost_their_footer_and_samples_not_their_size() {
    let moto = Moto::start();
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    // A Parquet object of ~500 MB of incompressible doubles (16 row groups), and a CSV of
    // ~40 MB; multipart uploads, as real tools do.
    moto.py(
        cwd,
        r#"
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
rng = np.random.default_rng(7)
rows = 16_000_000
t = pa.table({'a': rng.random(rows), 'b': rng.random(rows), 'c': rng.random(rows),
              'id': np.arange(rows)})
pq.write_table(t, 'big.parquet', row_group_size=1_000_000, compression='none')
with open('big.csv', 'w') as f:
    f.write('id,value,label\n')
    for i in range(1_300_000):
        f.write(f'{i},{i * 0.5},label-{i % 97}\n')
s3.create_bucket(Bucket='lake')
s3.upload_file('big.parquet', 'lake', 'pq/big.parquet')
s3.upload_file('big.csv', 'lake', 'csv/big.csv')
print(os.path.getsize('big.parquet'), os.path.getsize('big.csv'))
"#,
    );
    let pq_size = std::fs::metadata(cwd.join("big.parquet")).unwrap().len();
    let csv_size = std::fs::metadata(cwd.join("big.csv")).unwrap().len();
    assert!(
        pq_size > 500_000_000 && csv_size > 30_000_000,
        "{pq_size} {csv_size}"
    );

    let v = moto.index(cwd, "s3://lake/pq", &cwd.join("idx-pq"), &[]);
    let fetched = counts(&v, &[("added", 1), ("analyzed", 1), ("errors", 0)]);
    eprintln!(
        "parquet object of {pq_size} bytes: fetched {fetched} bytes ({})",
        v["fetched"]
    );
    // The footer and the first pages of each column (a dictionary page and a data page
    // per column here): a fixed cost, whatever the object's size.
    assert!(
        fetched < 24 * 1024 * 1024 && fetched < pq_size / 5,
        "a {pq_size}-byte Parquet object costs its footer and a sample, not {fetched} bytes"
    );
    let d = moto.ok(
        cwd,
        &[
            "describe",
            "big.parquet",
            "--index",
            cwd.join("idx-pq").to_str().unwrap(),
        ],
    );
    assert!(d.contains("16,000,000") || d.contains("16000000"), "{d}");

    let budget: u64 = 4 * 1024 * 1024;
    let v = moto.index(
        cwd,
        "s3://lake/csv",
        &cwd.join("idx-csv"),
        &["--read-budget", &budget.to_string()],
    );
    let fetched = counts(&v, &[("added", 1), ("analyzed", 1), ("errors", 0)]);
    eprintln!(
        "CSV object of {csv_size} bytes, budget {budget}: fetched {fetched} bytes ({})",
        v["fetched"]
    );
    assert!(
        fetched >= budget / 2 && fetched <= budget + 3 * 1024 * 1024,
        "a {csv_size}-byte CSV costs about the read budget ({budget}), not {fetched} bytes"
    );
}

#[test]
fn object_store_errors_say_what_to_do() {
    let moto = Moto::start();
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let idx = cwd.join("idx");
    let idx = idx.to_str().unwrap();
    let fails = |args: &[&str], env: &[(&str, &str)], needle: &str| {
        let mut c = lakestar();
        c.env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", "us-east-1")
            .envs(env.iter().copied())
            .args(args)
            .current_dir(cwd);
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    };
    // No such bucket.
    fails(
        &[
            "index",
            "s3://no-such-bucket/x",
            "--index",
            idx,
            "--endpoint",
            &moto.endpoint,
        ],
        &[],
        "check the bucket",
    );
    // Nothing listening.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_port = dead.local_addr().unwrap().port();
    drop(dead);
    fails(
        &[
            "index",
            "s3://lake/x",
            "--index",
            idx,
            "--endpoint",
            &format!("http://127.0.0.1:{dead_port}"),
        ],
        &[],
        "endpoint did not answer",
    );
    // No index directory given.
    fails(&["index", "s3://lake/x"], &[], "pass --index DIR");
    // An unknown scheme.
    fails(
        &["index", "ftp://lake/x", "--index", idx],
        &[],
        "unknown scheme",
    );
    // Azure without an account: refused before any request, naming the variables.
    fails(
        &["index", "az://container/x", "--index", idx],
        &[],
        "AZURE_STORAGE_ACCOUNT_NAME",
    );
    // None of the failures left an index behind.
    assert!(!cwd.join("idx").exists());
}

#[test]
fn watch_lists_an_object_store_again_on_its_interval() {
    use std::io::BufRead;
    let moto = Moto::start();
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    moto.py(
        cwd,
        "s3.create_bucket(Bucket='lake')\n\
         s3.put_object(Bucket='lake', Key='w/a.csv', Body=b'x,y\\n1,2\\n')",
    );
    let idx = cwd.join("idx");
    let mut child = lakestar()
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_ENDPOINT_URL", &moto.endpoint)
        .args(["watch", "s3://lake/w", "--index", idx.to_str().unwrap()])
        .args(["--interval", "1", "--json"])
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || -> Value { serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap() };
    let first = next();
    assert_eq!(
        (first["kind"].as_str(), n(&first, "added")),
        (Some("reconcile"), 1),
        "{first}"
    );
    moto.py(
        cwd,
        "s3.put_object(Bucket='lake', Key='w/b.csv', Body=b'p,q\\n3,4\\n')",
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let b = next();
        assert_eq!(b["kind"].as_str(), Some("rescan"), "{b}");
        if n(&b, "added") == 1 {
            assert_eq!(n(&b, "unchanged"), 1, "{b}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the new object was never indexed"
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Tables that span many files, in a bucket: the Hive, Delta and Iceberg fixtures of
/// `datasets.rs` uploaded to the server, each described as one table from its log,
/// checkpoints, metadata and manifests or members read through the store; a 4th Delta
/// commit uploaded is read by the next run.
#[test]
fn tables_in_a_bucket_are_each_one_described_table() {
    let moto = Moto::start();
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let (lake, scratch) = (cwd.join("lake"), cwd.join("scratch"));
    std::fs::create_dir_all(&lake).unwrap();
    std::fs::create_dir_all(&scratch).unwrap();
    let made: Value = serde_json::from_str(&crate::common::run_python(
        cwd,
        include_str!("datasets/make_tables.py"),
        &[lake.to_str().unwrap(), scratch.to_str().unwrap()],
    ))
    .unwrap();
    moto.upload_dir(cwd, "lake", "tables", "wh/", true);
    let idx = cwd.join("idx");
    let first = moto.index(cwd, "s3://tables/wh", &idx, &[]);
    assert_eq!(n(&first, "errors"), 0, "{first}");
    let idx_s = idx.to_str().unwrap();
    let describe = |path: &str| -> Value {
        serde_json::from_str(&moto.ok(cwd, &["describe", path, "--index", idx_s, "--json"]))
            .unwrap()
    };

    let t = describe("sales/")["table"]["description"].clone();
    assert_eq!(
        (t["kind"].as_str(), t["rows"].as_u64()),
        (Some("hive"), Some(5)),
        "{t}"
    );
    assert_eq!(t["data_files"], 5);
    let t = describe("orders/")["table"]["description"].clone();
    assert_eq!(
        (
            t["kind"].as_str(),
            t["version"].as_str(),
            t["rows"].as_u64()
        ),
        (Some("delta"), Some("2"), Some(4)),
        "{t}"
    );
    assert_eq!(t["data_files"], 3);
    let t = describe("warehouse/shop/visits")["table"]["description"].clone();
    assert_eq!(
        (
            t["kind"].as_str(),
            t["rows"].as_u64(),
            t["data_files"].as_u64()
        ),
        (Some("iceberg"), Some(5), Some(4)),
        "{t}"
    );
    assert_eq!(t["version"], made["snapshot"]);
    // Manifests, checkpoint parts, a V2 checkpoint's sidecar: all read by GETs.
    let t = describe("warehouse/shop/prices")["table"]["description"].clone();
    assert_eq!(
        (
            t["rows"].as_u64(),
            t["data_files"].as_u64(),
            t["columns"][2]["max"].as_str()
        ),
        (Some(2), Some(1), Some("8")),
        "{t}"
    );
    for (table, rows) in [("events/", 6), ("clicks/", 6), ("returns/", 5)] {
        let t = describe(table)["table"]["description"].clone();
        assert_eq!(t["rows"].as_u64(), Some(rows), "{table}: {t}");
    }

    // A 4th Delta commit, written locally and uploaded: the next run reads it.
    let append = "import deltalake, pandas as pd, sys\n\
        deltalake.write_deltalake(sys.argv[1], pd.DataFrame({'order_id': [10], 'country': ['IS'], 'qty': [7]}), mode='append')";
    crate::common::run_python(cwd, append, &[lake.join("orders").to_str().unwrap()]);
    moto.upload_dir(cwd, "lake/orders", "tables", "wh/orders/", false);
    let again = moto.index(cwd, "s3://tables/wh", &idx, &[]);
    assert_eq!(n(&again, "errors"), 0, "{again}");
    let t = describe("orders/")["table"]["description"].clone();
    assert_eq!(
        (t["version"].as_str(), t["rows"].as_u64()),
        (Some("3"), Some(5)),
        "{t}"
    );
}

/// Without keys in the environment, an S3 lake takes the keys, region and endpoint of
/// the profile `AWS_PROFILE` names in the shared credentials and config files; a profile
/// that is not there, or that needs SSO, is refused saying what to do.
#[test]
fn an_aws_profile_gives_the_keys_region_and_endpoint() {
    let moto = Moto::start();
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    moto.py(
        cwd,
        "s3.create_bucket(Bucket='prof')\n\
         s3.put_object(Bucket='prof', Key='d/a.csv', Body=b'x,y\\n1,2\\n')",
    );
    std::fs::write(
        cwd.join("credentials"),
        "[default]\naws_access_key_id = nope\n\n[lake]\naws_access_key_id = testing\naws_secret_access_key = testing\n",
    )
    .unwrap();
    std::fs::write(
        cwd.join("config"),
        format!(
            "[profile lake]\nregion = us-east-1\nendpoint_url = {}\n\n[profile corp]\nsso_session = corp\n",
            moto.endpoint
        ),
    )
    .unwrap();
    let index = |profile: &str, idx: &str| {
        lakestar()
            .env_remove("AWS_ACCESS_KEY_ID")
            .env_remove("AWS_SECRET_ACCESS_KEY")
            .env_remove("AWS_SESSION_TOKEN")
            .env_remove("AWS_REGION")
            .env_remove("AWS_DEFAULT_REGION")
            .env_remove("AWS_ENDPOINT_URL")
            .env("AWS_SHARED_CREDENTIALS_FILE", cwd.join("credentials"))
            .env("AWS_CONFIG_FILE", cwd.join("config"))
            .env("AWS_PROFILE", profile)
            .args(["index", "s3://prof/d", "--index", idx, "--json"])
            .current_dir(cwd)
            .output()
            .unwrap()
    };
    let out = index("lake", "idx");
    let v: Value = serde_json::from_str(&crate::common::stdout_of_success(out, "index")).unwrap();
    assert_eq!((n(&v, "added"), n(&v, "errors")), (1, 0), "{v}");
    for (profile, says) in [
        ("missing", "no such profile"),
        ("corp", "export-credentials --profile corp"),
    ] {
        let out = index(profile, "idx2");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{profile}: {err}"
        );
        assert!(!cwd.join("idx2").join("catalog.sqlite").exists());
    }
}
