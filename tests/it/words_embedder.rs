//! The words embedder (`NAME-words`, `words:DIR`): whole-word vectors of an installed
//! BERT, cached beside the model, in index and search. A tiny random BERT stands in for
//! all-MiniLM-L6-v2, with "rain" and "weather" made synonyms so that meaning can be seen.

use crate::common::*;
use lakestar::index::catalog::MetaKey;
use lakestar::index::models::{tiny, MODELS_ENV};
use lakestar::index::CatalogReader;
use serde_json::Value;
use std::path::Path;

fn ok_in(models: &Path, cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> String {
    let out = lakestar()
        .env(MODELS_ENV, models)
        .envs(env.iter().copied())
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "lakestar {args:?}: {o}\n{e}");
    o
}

fn meta(idx: &Path, key: MetaKey) -> String {
    CatalogReader::open(idx)
        .unwrap()
        .meta(key)
        .unwrap()
        .unwrap_or_default()
}

#[test]
fn words_embedder_indexes_searches_by_meaning_and_caches_words() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("tiny-bert");
    tiny::write(&src, 3).unwrap();
    tiny::tie(&src, &[("rain", "weather")]).unwrap();
    let models = tmp.path().join("models");
    let lake = tmp.path().join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    std::fs::write(
        lake.join("readings.csv"),
        "station,date,rain\nalpha,2020-01-01,3.5\nbeta,2020-01-02,0.0\n",
    )
    .unwrap();
    std::fs::write(
        lake.join("shop.csv"),
        "store,product,price,revenue\n1,tea,2.5,100\n2,coffee,3.0,250\n",
    )
    .unwrap();
    std::fs::write(
        lake.join("gdp.json"),
        r#"[{"country": "fr", "year": 2020, "gdp_per_capita": 40000}]"#,
    )
    .unwrap();
    let l = lake.to_str().unwrap();
    ok_in(
        &models,
        &lake,
        &[],
        &[
            "model",
            "install",
            "minilm",
            "--from",
            src.to_str().unwrap(),
        ],
    );
    // Installing embeds the vocabulary's whole words into the cache at once.
    let cache = models.join("minilm/words-cache.bin");
    let at_install = std::fs::metadata(&cache).unwrap().len();
    assert!(at_install > 0);

    let idx = tmp.path().join("idx");
    let i = idx.to_str().unwrap();
    ok_in(
        &models,
        &lake,
        &[],
        &["index", l, "--index", i, "--embedder", "minilm-words"],
    );
    let id = meta(&idx, MetaKey::Embedder);
    assert!(id.starts_with("words-v1-all-MiniLM-L6-v2-"), "{id}");
    assert!(id.ends_with(&format!("-{}", tiny::HIDDEN + 512)), "{id}");
    let spec = meta(&idx, MetaKey::EmbedderSpec);
    assert!(
        spec.starts_with("words:") && spec.ends_with("minilm"),
        "{spec}"
    );

    let top = |idx: &Path, env: &[(&str, &str)], q: &str| -> String {
        let i = idx.to_str().unwrap();
        let out = ok_in(&models, &lake, env, &["search", q, "--index", i, "--json"]);
        let first: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        first["path"].as_str().unwrap().to_string()
    };
    assert_eq!(top(&idx, &[], "rain per station"), "readings.csv");

    // "weather" is in no file: BM25 and the hashed n-grams find nothing, the words'
    // meaning finds the file with the synonym (word vectors alone, over files of one
    // column each: the random tiny encoder puts all words close, its meaning is too faint
    // to outweigh the hash part's noise in longer texts).
    let narrow = tmp.path().join("narrow");
    std::fs::create_dir_all(&narrow).unwrap();
    for (file, column) in [("a.csv", "sales"), ("b.csv", "rain"), ("c.csv", "price")] {
        std::fs::write(narrow.join(file), format!("{column}\n1.5\n2.5\n")).unwrap();
    }
    let words_only = tmp.path().join("idx-words-only");
    let env = [("LAKESTAR_WORDS_HASH", "0"), ("LAKESTAR_W_TEXT", "0")];
    let (n, w) = (narrow.to_str().unwrap(), words_only.to_str().unwrap());
    ok_in(
        &models,
        &lake,
        &env,
        &["index", n, "--index", w, "--embedder", "minilm-words"],
    );
    assert!(meta(&words_only, MetaKey::Embedder).ends_with(&format!("-h0.00-{}", tiny::HIDDEN)));
    assert_eq!(top(&words_only, &env, "weather"), "b.csv");

    // A second index of the same lake embeds no word again: the cache does not grow.
    let cached = std::fs::metadata(&cache).unwrap().len();
    let idx2 = tmp.path().join("idx2");
    ok_in(
        &models,
        &lake,
        &[],
        &[
            "index",
            l,
            "--index",
            idx2.to_str().unwrap(),
            "--embedder",
            &format!("words:{}", models.join("minilm").display()),
        ],
    );
    assert_eq!(meta(&idx2, MetaKey::Embedder), id);
    assert_eq!(std::fs::metadata(&cache).unwrap().len(), cached);

    // A bad hash share is a clear error when the embedder is built.
    let out = lakestar()
        .env(MODELS_ENV, &models)
        .env("LAKESTAR_WORDS_HASH", "2")
        .args(["search", "rain", "--index", i])
        .current_dir(&lake)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("LAKESTAR_WORDS_HASH"), "{err}");
}
