//! Which embedder an index uses, as configuration: built into the index options and
//! the CLI, turned into an [`Embedder`] when needed.

#[cfg(feature = "neural")]
use crate::embed::{BertEmbedder, Model2VecEmbedder, WordsEmbedder, WordsOptions};
use crate::embed::{Embedder, HashEmbedder, OllamaEmbedder, OpenAiEmbedder};
use crate::error::{Result, UserError};
use crate::models;
use std::path::PathBuf;

/// An embedder choice.
#[derive(Debug, Clone, PartialEq)]
pub enum EmbedderSpec {
    /// The built-in hashed word and character n-gram embedder (no model, no download),
    /// with `dim` buckets (`hash:DIM`; [`HashEmbedder::DEFAULT_DIM`] for `hash`).
    Hash {
        /// Buckets: the vectors' dimension.
        dim: usize,
    },
    /// Static embeddings in the Model2Vec layout in this directory.
    Model2Vec(PathBuf),
    /// A BERT-family sentence encoder (config.json, model.safetensors, tokenizer.json)
    /// in this directory, run locally.
    Bert(PathBuf),
    /// Whole-word vectors of the BERT-family model in this directory, cached on disk,
    /// beside the hash embedder's vector ([`WordsEmbedder`]).
    Words(PathBuf),
    /// An OpenAI-compatible `/v1/embeddings` endpoint.
    OpenAi {
        /// Base URL, e.g. `https://api.openai.com` or `http://127.0.0.1:8080/v1`.
        base_url: String,
        /// Model name.
        model: String,
        /// Bearer token, if the server wants one.
        api_key: Option<String>,
    },
    /// An Ollama server's `/api/embed`.
    Ollama {
        /// Base URL, e.g. `http://127.0.0.1:11434`.
        base_url: String,
        /// Model name.
        model: String,
    },
}

impl Default for EmbedderSpec {
    fn default() -> Self {
        EmbedderSpec::Hash {
            dim: HashEmbedder::DEFAULT_DIM,
        }
    }
}

impl From<&models::Installed> for EmbedderSpec {
    /// The embedder spec that uses an installed model.
    fn from(m: &models::Installed) -> EmbedderSpec {
        match m.manifest.kind {
            models::ModelKind::Bert => EmbedderSpec::Bert(m.path.clone()),
            models::ModelKind::Static => EmbedderSpec::Model2Vec(m.path.clone()),
        }
    }
}

impl EmbedderSpec {
    /// Parse `hash` (`hash:DIM` for other than the default dimension), `model2vec:DIR`, `bert:DIR`, `words:DIR`, `openai:MODEL@URL`,
    /// `ollama:MODEL@URL`, or the name of an installed model (`minilm`, `minilm-static`),
    /// which resolves to its directory in the models directory; `NAME-words` (as
    /// `minilm-words`) is the words embedder of the installed BERT model `NAME`.
    pub fn parse(s: &str) -> std::result::Result<EmbedderSpec, String> {
        let (kind, rest) = s.split_once(':').unwrap_or((s, ""));
        let model_at = |rest: &str, default_url: &str| -> (String, String) {
            match rest.split_once('@') {
                Some((m, u)) => (m.to_string(), u.to_string()),
                None => (rest.to_string(), default_url.to_string()),
            }
        };
        match kind {
            "hash" if rest.is_empty() => Ok(EmbedderSpec::default()),
            "hash" => match rest.parse::<usize>() {
                Ok(dim) if dim >= HashEmbedder::MIN_DIM => Ok(EmbedderSpec::Hash { dim }),
                _ => Err(format!(
                    "hash:{rest}: the dimension must be a whole number of at least {} (the default is {})",
                    HashEmbedder::MIN_DIM,
                    HashEmbedder::DEFAULT_DIM
                )),
            },
            "model2vec" if !rest.is_empty() => Ok(EmbedderSpec::Model2Vec(PathBuf::from(rest))),
            "bert" if !rest.is_empty() => Ok(EmbedderSpec::Bert(PathBuf::from(rest))),
            "words" if !rest.is_empty() => Ok(EmbedderSpec::Words(PathBuf::from(rest))),
            name if !s.contains(':') && models::check_name(name).is_ok() => {
                let dir = models::models_dir().map_err(|e| e.to_string())?;
                let words_of = |base: &str| {
                    models::find(&dir, base)
                        .ok()
                        .filter(|m| m.manifest.kind == models::ModelKind::Bert)
                        .map(|m| EmbedderSpec::Words(m.path))
                };
                if let Some(spec) = name
                    .strip_suffix("-words")
                    .filter(|_| models::find(&dir, name).is_err())
                    .and_then(words_of)
                {
                    return Ok(spec);
                }
                models::find(&dir, name)
                    .map(|m| EmbedderSpec::from(&m))
                    .map_err(|e| format!("unknown embedder {s:?}: {e}; or use hash, model2vec:DIR, bert:DIR, words:DIR, openai:MODEL[@URL], ollama:MODEL[@URL]"))
            }
            "openai" if !rest.is_empty() => {
                let (model, base_url) = model_at(rest, "https://api.openai.com");
                Ok(EmbedderSpec::OpenAi { base_url, model, api_key: std::env::var("OPENAI_API_KEY").ok() })
            }
            "ollama" if !rest.is_empty() => {
                let (model, base_url) = model_at(rest, "http://127.0.0.1:11434");
                Ok(EmbedderSpec::Ollama { base_url, model })
            }
            _ => Err(format!(
                "unknown embedder {s:?}: use hash, model2vec:DIR, bert:DIR, words:DIR, openai:MODEL[@URL], ollama:MODEL[@URL] or the name of an installed model (`lakestar model list`; `NAME-words` for the word vectors of an installed BERT)"
            )),
        }
    }

    /// The spec an index records, read with the embedder id it records: a plain `hash`
    /// written before the default dimension changed means the dimension its id names.
    pub fn parse_recorded(
        spec: &str,
        id: Option<&str>,
    ) -> std::result::Result<EmbedderSpec, String> {
        let parsed = Self::parse(spec)?;
        match (&parsed, id.and_then(HashEmbedder::dim_in_id)) {
            (EmbedderSpec::Hash { .. }, Some(dim)) => Ok(EmbedderSpec::Hash { dim }),
            _ => Ok(parsed),
        }
    }

    /// The embedder the index whose catalog is `cat` records, if it records one.
    pub fn recorded(cat: &crate::catalog::CatalogReader) -> Result<Option<EmbedderSpec>> {
        use crate::catalog::MetaKey;
        Self::from_recorded(
            cat.meta(MetaKey::Embedder)?,
            cat.meta(MetaKey::EmbedderSpec)?,
        )
    }

    /// The embedder recorded as embedder `id` and `spec` in an index's meta.
    fn from_recorded(id: Option<String>, spec: Option<String>) -> Result<Option<EmbedderSpec>> {
        let Some(spec) = spec else {
            // Made before the spec was recorded: its id may still say.
            let dim = id.as_deref().and_then(HashEmbedder::dim_in_id);
            return Ok(dim.map(|dim| EmbedderSpec::Hash { dim }));
        };
        Self::parse_recorded(&spec, id.as_deref())
            .map(Some)
            .map_err(|e| {
                UserError::BadEmbedder(format!(
                    "the index records embedder {spec:?}, which no longer parses ({e}); pass --embedder"
                ))
                .into()
            })
    }

    /// The spec as [`EmbedderSpec::parse`] reads it (API keys are not written).
    pub fn to_spec_string(&self) -> String {
        match self {
            EmbedderSpec::Hash { dim } if *dim == HashEmbedder::DEFAULT_DIM => "hash".into(),
            EmbedderSpec::Hash { dim } => format!("hash:{dim}"),
            EmbedderSpec::Model2Vec(d) => format!("model2vec:{}", d.display()),
            EmbedderSpec::Bert(d) => format!("bert:{}", d.display()),
            EmbedderSpec::Words(d) => format!("words:{}", d.display()),
            EmbedderSpec::OpenAi {
                base_url, model, ..
            } => format!("openai:{model}@{base_url}"),
            EmbedderSpec::Ollama { base_url, model } => format!("ollama:{model}@{base_url}"),
        }
    }

    /// Build the embedder.
    pub fn build(&self) -> Result<Box<dyn Embedder>> {
        let bad = |e: String| UserError::BadEmbedder(e);
        let unusable = UserError::UnusableEmbedder;
        Ok(match self {
            EmbedderSpec::Hash { dim } => {
                Box::new(HashEmbedder::new(*dim).map_err(|e| bad(e.to_string()))?)
            }
            #[cfg(feature = "neural")]
            EmbedderSpec::Model2Vec(dir) => {
                Box::new(Model2VecEmbedder::load(dir).map_err(unusable)?)
            }
            #[cfg(feature = "neural")]
            EmbedderSpec::Bert(dir) => Box::new(BertEmbedder::load(dir).map_err(unusable)?),
            #[cfg(feature = "neural")]
            EmbedderSpec::Words(dir) => {
                let opts = words_options().map_err(bad)?;
                Box::new(WordsEmbedder::load_with(dir, &opts).map_err(unusable)?)
            }
            #[cfg(not(feature = "neural"))]
            EmbedderSpec::Model2Vec(_) | EmbedderSpec::Bert(_) | EmbedderSpec::Words(_) => {
                return Err(bad(format!(
                    "{}: this lakestar is built without the local neural embedders (cargo feature `neural`, on by default); use hash, openai:MODEL or ollama:MODEL, or install lakestar with its default features",
                    self.to_spec_string()
                ))
                .into())
            }
            // HTTP embedders learn their dimension from a first request: the id recorded
            // in the index must carry it.
            EmbedderSpec::OpenAi {
                base_url,
                model,
                api_key,
            } => {
                let e = OpenAiEmbedder::new(base_url, model, api_key.clone()).map_err(unusable)?;
                e.probe().map_err(unusable)?;
                Box::new(e)
            }
            EmbedderSpec::Ollama { base_url, model } => {
                let e = OllamaEmbedder::new(base_url, model).map_err(unusable)?;
                e.probe().map_err(unusable)?;
                Box::new(e)
            }
        })
    }
}

/// Environment variables overriding the words embedder's options for a tuning run: the
/// hash share (0 to 1), the SIF coefficient (above 0) and centring (0 or 1; on unless 0). They change
/// the embedder's id, so set them for indexing and searching alike.
pub const WORDS_HASH_ENV: &str = "LAKESTAR_WORDS_HASH";
/// See [`WORDS_HASH_ENV`].
pub const WORDS_SIF_ENV: &str = "LAKESTAR_WORDS_SIF";
/// See [`WORDS_HASH_ENV`].
pub const WORDS_CENTRE_ENV: &str = "LAKESTAR_WORDS_CENTRE";
/// See [`WORDS_HASH_ENV`]: 0 leaves words outside the vocabulary to the hash part.
pub const WORDS_OOV_ENV: &str = "LAKESTAR_WORDS_OOV";

/// The words embedder's options: the defaults, overridden by the `LAKESTAR_WORDS_*`
/// variables.
#[cfg(feature = "neural")]
fn words_options() -> std::result::Result<WordsOptions, String> {
    let mut o = WordsOptions::default();
    let var = |k: &str| std::env::var(k).ok().map(|v| v.trim().to_string());
    let bad = |k: &str, v: &str, want: &str| format!("{k}={v:?} is not {want}; unset it or fix it");
    if let Some(v) = var(WORDS_HASH_ENV) {
        o.hash_share = v
            .parse::<f32>()
            .ok()
            .filter(|x| (0.0..=1.0).contains(x))
            .ok_or_else(|| bad(WORDS_HASH_ENV, &v, "a number between 0 and 1"))?;
    }
    if let Some(v) = var(WORDS_SIF_ENV) {
        o.sif = v
            .parse::<f64>()
            .ok()
            .filter(|x| *x > 0.0 && x.is_finite())
            .ok_or_else(|| bad(WORDS_SIF_ENV, &v, "a number above 0"))?;
    }
    for (k, flag) in [
        (WORDS_CENTRE_ENV, &mut o.centre),
        (WORDS_OOV_ENV, &mut o.oov),
    ] {
        if let Some(v) = var(k) {
            *flag = match v.as_str() {
                "1" | "true" => true,
                "0" | "false" => false,
                _ => return Err(bad(k, &v, "0 or 1")),
            };
        }
    }
    Ok(o)
}

/// Where the embedder of an index run comes from when `--embedder` is not given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefaultChoice {
    /// The index exists: it keeps the embedder it records.
    Recorded,
    /// A new index: the preferred installed model, by name.
    Installed(String),
    /// A new index and no preferred model installed: the built-in hash embedder.
    Builtin,
}

/// The embedder for an index run at `index_dir` without an explicit choice: the one the
/// index records, else the first installed model of
/// [`DEFAULT_ORDER`](crate::models::DEFAULT_ORDER) in `models_dir`, else
/// [`EmbedderSpec::Hash`].
pub fn default_for(
    index_dir: &std::path::Path,
    models_dir: Option<&std::path::Path>,
) -> Result<(EmbedderSpec, DefaultChoice)> {
    // Read as a writer would, before the run's writer upgrades an older catalog (which
    // a reader refuses): an index of an older version keeps its embedder.
    use crate::catalog::{read_meta, MetaKey};
    let recorded = match (
        read_meta(index_dir, MetaKey::Embedder),
        read_meta(index_dir, MetaKey::EmbedderSpec),
    ) {
        (Ok(id), Ok(spec)) => EmbedderSpec::from_recorded(id, spec)?,
        _ => None,
    };
    if let Some(spec) = recorded {
        return Ok((spec, DefaultChoice::Recorded));
    }
    Ok(new_index_default(models_dir))
}

/// The embedder a new index gets without `--embedder`: the first installed model of
/// [`DEFAULT_ORDER`](crate::models::DEFAULT_ORDER) in `models_dir`, else
/// [`EmbedderSpec::Hash`].
pub fn new_index_default(models_dir: Option<&std::path::Path>) -> (EmbedderSpec, DefaultChoice) {
    // A build without the neural embedders could not run an installed model.
    let models_dir = models_dir.filter(|_| cfg!(feature = "neural"));
    match models_dir.and_then(models::preferred) {
        // A BERT runs as the whole encoder: on the real-lake retrieval set it ranks above
        // its word vectors and `hash` on both splits, at about ten times their index
        // time (BENCHMARKS.md, "Real-lake set"); `--embedder NAME-words` is the fast one.
        Some(m) => (
            EmbedderSpec::from(&m),
            DefaultChoice::Installed(m.manifest.name),
        ),
        None => (EmbedderSpec::default(), DefaultChoice::Builtin),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(feature = "neural")]
    use crate::models::{install, tiny};

    #[cfg(not(feature = "neural"))]
    #[test]
    fn without_the_neural_feature_local_models_say_what_to_use_instead() {
        for spec in ["bert:/m/y", "model2vec:/m/x", "words:/m/z"] {
            let err = EmbedderSpec::parse(spec).unwrap().build().err().unwrap();
            let msg = err.to_string();
            assert!(
                msg.contains(spec) && msg.contains("feature `neural`"),
                "{msg}"
            );
        }
        // An installed model is not the default of a build that cannot run it.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("minilm");
        std::fs::create_dir(&dir).unwrap();
        let manifest = r#"{"name":"minilm","model":"m","kind":"bert","dim":8,"source":"s"}"#;
        std::fs::write(dir.join(crate::embed::MANIFEST), manifest).unwrap();
        assert!(models::preferred(tmp.path()).is_some());
        assert_eq!(
            new_index_default(Some(tmp.path())),
            (EmbedderSpec::default(), DefaultChoice::Builtin)
        );
    }

    #[test]
    fn specs_round_trip_and_unknown_names_say_what_exists() {
        for s in [
            "hash",
            "hash:512",
            "model2vec:/m/x",
            "bert:/m/y",
            "words:/m/z",
            "ollama:e@http://h:1",
        ] {
            assert_eq!(EmbedderSpec::parse(s).unwrap().to_spec_string(), s);
        }
        let err = EmbedderSpec::parse("bert:").unwrap_err();
        assert!(err.contains("bert:DIR"), "{err}");
        assert_eq!(
            EmbedderSpec::parse(&format!("hash:{}", HashEmbedder::DEFAULT_DIM)).unwrap(),
            EmbedderSpec::default()
        );
        for bad in ["hash:8", "hash:x", "hash:-1"] {
            let err = EmbedderSpec::parse(bad).unwrap_err();
            assert!(err.contains("at least 16"), "{bad}: {err}");
        }
        let e = EmbedderSpec::parse("hash:512").unwrap().build().unwrap();
        assert_eq!((e.dim(), e.id().as_str()), (512, "hash-ngram-v1-512"));
    }

    #[test]
    fn a_plain_hash_recorded_before_the_default_changed_keeps_the_dimension_of_its_id() {
        let read = |spec, id| EmbedderSpec::parse_recorded(spec, id).unwrap();
        let hash = |dim| EmbedderSpec::Hash { dim };
        assert_eq!(read("hash", Some("hash-ngram-v1-512")), hash(512));
        assert_eq!(read("hash", None), EmbedderSpec::default());
        assert_eq!(read("hash:128", Some("hash-ngram-v1-128")), hash(128));
        // Another scheme's id says nothing of the dimension: the index re-embeds.
        assert_eq!(read("hash", Some("hash-v0-512")), EmbedderSpec::default());
        assert_eq!(
            read("words:/m/z", Some("hash-ngram-v1-512")),
            EmbedderSpec::Words("/m/z".into())
        );

        // Through the catalog, as search and `index` read it.
        let tmp = tempfile::tempdir().unwrap();
        let (lake, idx) = (tmp.path().join("lake"), tmp.path().join("idx"));
        std::fs::create_dir(&lake).unwrap();
        std::fs::write(lake.join("a.csv"), "x,y\n1,2\n").unwrap();
        let opts = crate::IndexOptions {
            embedder: hash(512),
            ..crate::IndexOptions::default()
        };
        crate::index(&lake, &idx, &opts, &crate::indexer::NoProgress).unwrap();
        {
            let lock = crate::lock::WriterLock::acquire(&idx).unwrap();
            let cat = crate::catalog::CatalogWriter::open(lock, &lake).unwrap();
            // What an index made before `hash:DIM` recorded.
            cat.set_meta(crate::catalog::MetaKey::EmbedderSpec, "hash")
                .unwrap();
        }
        let (spec, why) = default_for(&idx, None).unwrap();
        assert_eq!((spec, why), (hash(512), DefaultChoice::Recorded));
        let s = crate::search::engine::Searcher::open_recorded(&idx).unwrap();
        assert_eq!(s.len(), 1);
    }

    #[cfg(feature = "neural")]
    #[test]
    fn new_indexes_take_the_preferred_installed_model_existing_ones_keep_theirs() {
        let tmp = tempfile::tempdir().unwrap();
        let models = tmp.path().join("models");
        let idx = tmp.path().join("idx");
        let (spec, why) = default_for(&idx, Some(&models)).unwrap();
        assert_eq!(
            (spec, why),
            (EmbedderSpec::default(), DefaultChoice::Builtin)
        );
        let (spec, _) = default_for(&idx, None).unwrap();
        assert_eq!(spec, EmbedderSpec::default());

        let src = tmp.path().join("src");
        tiny::write(&src, 2).unwrap();
        install(&models, "minilm", Some(&src), "").unwrap();
        // A model outside DEFAULT_ORDER is used only when asked for.
        let opts = crate::models::distill::DistillOptions { dim: 8, batch: 64 };
        let np = crate::progress::NoProgress;
        crate::models::distill::distill(&models, "minilm", "minilm-static", &opts, &np).unwrap();
        if !crate::models::DEFAULT_ORDER.contains(&"minilm-static") {
            std::fs::rename(models.join("minilm"), tmp.path().join("away")).unwrap();
            let (spec, _) = default_for(&idx, Some(&models)).unwrap();
            assert_eq!(spec, EmbedderSpec::default());
            std::fs::rename(tmp.path().join("away"), models.join("minilm")).unwrap();
        }
        let (spec, why) = default_for(&idx, Some(&models)).unwrap();
        assert_eq!(spec, EmbedderSpec::Bert(models.join("minilm")));
        assert_eq!(why, DefaultChoice::Installed("minilm".into()));

        // An index that exists keeps what it records, whatever is installed.
        let lake = tmp.path().join("lake");
        std::fs::create_dir(&lake).unwrap();
        std::fs::write(lake.join("a.csv"), "x,y\n1,2\n").unwrap();
        let opts = crate::IndexOptions::default();
        crate::index(&lake, &idx, &opts, &crate::indexer::NoProgress).unwrap();
        let (spec, why) = default_for(&idx, Some(&models)).unwrap();
        assert_eq!(
            (spec, why),
            (EmbedderSpec::default(), DefaultChoice::Recorded)
        );
    }
}
