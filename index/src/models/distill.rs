//! `lakestar model distill`: a static Model2Vec-layout model from an installed BERT, as
//! Model2Vec distills one. Every vocabulary token (special and `[unused…]` ones skipped)
//! runs through the transformer as `[SEP] token [CLS]` (the order Model2Vec found to work
//! better), its hidden states mean-pooled; the vectors are reduced to `dim` principal
//! components and each row is scaled by its SIF weight `a / (a + p)`, `p` the token's
//! Zipf probability by rank (BERT vocabularies are roughly frequency-ordered, so frequent
//! pieces such as "the" or "of" weigh almost nothing in a mean). Pieces made only of digits
//! or punctuation get zero rows: in descriptions of data files they are the commas between
//! column names and the digits of example values, shared by every file and naming none.
//! A text's vector is then a weighted mean of rows — the transformer's knowledge of each
//! word, at the cost of a table lookup. BENCHMARKS.md ("Embedders") has the measured
//! alternatives.

use std::path::Path;

use candle_core::{Device, Tensor};
use rayon::prelude::*;
use safetensors::tensor::TensorView;
use safetensors::Dtype;

use super::install::check_embeds;
use super::{find, io_err, pca, publish, staging, write_manifest, Installed};
use super::{Manifest, ModelError, ModelKind};
use crate::embed::{BertEmbedder, EmbedError, Embedder, Model2VecEmbedder};
use crate::progress::Progress;

/// Dimension of a distilled model unless told otherwise (Model2Vec's default).
pub const DEFAULT_DIM: usize = 256;
/// Tokens per forward pass: every sequence is 3 long, so there is no padding to waste.
pub const DEFAULT_BATCH: usize = 512;

/// How to distill.
#[derive(Debug, Clone, Copy)]
pub struct DistillOptions {
    /// Dimension of the static vectors (at most the model's hidden size).
    pub dim: usize,
    /// Tokens per forward pass.
    pub batch: usize,
}

impl Default for DistillOptions {
    fn default() -> Self {
        DistillOptions {
            dim: DEFAULT_DIM,
            batch: DEFAULT_BATCH,
        }
    }
}

/// Distills the installed BERT model `source` into the static model `out` in the models
/// directory `models`. `progress` counts tokens.
pub fn distill(
    models: &Path,
    source: &str,
    out: &str,
    opts: &DistillOptions,
    progress: &dyn Progress,
) -> Result<Installed, ModelError> {
    let src = find(models, source)?;
    if src.manifest.kind != ModelKind::Bert {
        return Err(ModelError::NotBert(source.to_string()));
    }
    super::check_name(out)?;
    let bert = BertEmbedder::load(&src.path)?;
    let hidden = bert.dim();
    if opts.dim == 0 || opts.dim > hidden {
        return Err(ModelError::BadDim {
            dim: opts.dim,
            hidden,
        });
    }

    let (rows, kept) = tokens(&bert);
    progress.start(kept.len() as u64);
    let started = std::time::Instant::now();
    let vectors = token_vectors(&bert, &kept, opts.batch.max(1), progress)?;
    tracing::info!(tokens = kept.len(), elapsed = ?started.elapsed(), "token vectors");
    let reduced = reduce(&vectors, kept.len(), hidden, opts.dim)?;
    tracing::info!(elapsed = ?started.elapsed(), "reduced");

    // SIF weights by rank among the kept tokens; skipped tokens keep zero rows, and so do
    // digit and punctuation pieces (their vectors still shaped the PCA).
    let vocab = bert.tokenizer.get_vocab(true);
    let names: std::collections::HashMap<u32, &str> =
        vocab.iter().map(|(t, &id)| (id, t.as_str())).collect();
    let weights = sif_weights(kept.len());
    let mut matrix = vec![0.0f32; rows * opts.dim];
    for ((&id, row), &w) in kept.iter().zip(reduced.chunks(opts.dim)).zip(&weights) {
        if names.get(&id).is_some_and(|t| numeric_or_punct(t)) {
            continue;
        }
        let start = id as usize * opts.dim;
        for (m, &x) in matrix[start..start + opts.dim].iter_mut().zip(row) {
            *m = w as f32 * x;
        }
    }

    let stage = staging(models, out)?;
    write_model(stage.path(), out, &src, &bert, &matrix, opts.dim)?;
    drop(bert);
    let check = Model2VecEmbedder::load(stage.path())?;
    check_embeds(&check)?;
    drop(check);
    progress.finish();
    publish(stage, models, out)?;
    find(models, out)
}

/// Model2Vec's SIF coefficient (`sif_coefficient`, its default).
const SIF: f64 = 1e-4;

/// SIF weights of `n` tokens by rank, as Model2Vec estimates them: `a / (a + p)` with `p`
/// the Zipf probability `1/(rank + 2)`, normalized over the vocabulary.
fn sif_weights(n: usize) -> Vec<f64> {
    let harmonic: f64 = (0..n).map(|r| 1.0 / (r as f64 + 2.0)).sum();
    (0..n)
        .map(|rank| SIF / (SIF + 1.0 / (rank as f64 + 2.0) / harmonic))
        .collect()
}

/// A vocabulary piece made only of digits or punctuation (`##` continuation marks aside).
fn numeric_or_punct(token: &str) -> bool {
    let t = token.strip_prefix("##").unwrap_or(token);
    !t.is_empty() && t.chars().all(|c| !c.is_alphabetic())
}

/// The vocabulary's size (rows of the output) and the ids of the tokens to distill, in
/// id order: all but special tokens and BERT's `[unused…]` placeholders.
fn tokens(bert: &BertEmbedder) -> (usize, Vec<u32>) {
    let special: std::collections::HashSet<u32> = bert
        .tokenizer
        .get_added_tokens_decoder()
        .into_iter()
        .filter(|(_, t)| t.special)
        .map(|(id, _)| id)
        .collect();
    let vocab = bert.tokenizer.get_vocab(true);
    let rows = vocab.values().map(|&id| id as usize + 1).max().unwrap_or(0);
    let mut kept: Vec<u32> = vocab
        .into_iter()
        .filter(|(tok, id)| !special.contains(id) && !is_placeholder(tok))
        .map(|(_, id)| id)
        .collect();
    kept.sort_unstable();
    (rows, kept)
}

/// `[unused12]`, `[PAD]`-like bracketed names: slots that never occur in text.
fn is_placeholder(tok: &str) -> bool {
    tok.len() > 2 && tok.starts_with('[') && tok.ends_with(']')
}

/// Mean-pooled hidden states of `[SEP] token [CLS]` for each token, row-major.
fn token_vectors(
    bert: &BertEmbedder,
    kept: &[u32],
    batch: usize,
    progress: &dyn Progress,
) -> Result<Vec<f32>, ModelError> {
    // The frame the tokenizer puts around any text ([CLS] … [SEP] for BERT), reversed as
    // Model2Vec does: the reversed frame ranks better, in its measurements and ours
    // (BENCHMARKS.md).
    let mut frame = bert.encode("")?;
    frame.reverse();
    let wrap = |id: u32| -> Vec<u32> {
        match frame.split_first() {
            Some((first, rest)) => std::iter::once(*first)
                .chain(std::iter::once(id))
                .chain(rest.iter().copied())
                .collect(),
            None => vec![id],
        }
    };
    // Batches run in parallel as well: one 3-token batch does not keep both cores busy
    // inside candle's matrix products.
    let parts: Vec<Vec<f32>> = kept
        .par_chunks(batch)
        .map(|chunk| {
            let seqs: Vec<Vec<u32>> = chunk.iter().map(|&id| wrap(id)).collect();
            let pooled = bert.pooled(&seqs)?;
            progress.inc(chunk.len() as u64);
            Ok(pooled.into_iter().flatten().collect())
        })
        .collect::<Result<_, EmbedError>>()?;
    Ok(parts.concat())
}

/// The `n × hidden` rows centred and projected on their `dim` principal components.
fn reduce(x: &[f32], n: usize, hidden: usize, dim: usize) -> Result<Vec<f32>, ModelError> {
    let err = |e: candle_core::Error| ModelError::from(EmbedError::Inference(e.to_string()));
    let t = Tensor::from_slice(x, (n, hidden), &Device::Cpu).map_err(err)?;
    let centred = t
        .mean_keepdim(0)
        .and_then(|m| t.broadcast_sub(&m))
        .map_err(err)?;
    let cov: Vec<f32> = centred
        .t()
        .and_then(|ct| ct.matmul(&centred))
        .and_then(|c| c.flatten_all())
        .and_then(|c| c.to_vec1())
        .map_err(err)?;
    let cov: Vec<f64> = cov.into_iter().map(f64::from).collect();
    let (vecs, _) = pca::top_eigenvectors(&cov, hidden, dim);
    // hidden × dim projection, column j = component j.
    let proj: Vec<f32> = (0..hidden)
        .flat_map(|r| vecs.iter().map(move |v| v[r] as f32))
        .collect();
    let proj = Tensor::from_vec(proj, (hidden, dim), &Device::Cpu).map_err(err)?;
    centred
        .matmul(&proj)
        .and_then(|y| y.flatten_all())
        .and_then(|y| y.to_vec1())
        .map_err(err)
}

/// Writes the Model2Vec layout: `model.safetensors` (tensor `embeddings`), the BERT's
/// `tokenizer.json` without its window settings, a Model2Vec `config.json` and the
/// manifest.
fn write_model(
    dir: &Path,
    name: &str,
    src: &Installed,
    bert: &BertEmbedder,
    matrix: &[f32],
    dim: usize,
) -> Result<(), ModelError> {
    let rows = matrix.len() / dim;
    let bytes: Vec<u8> = matrix.iter().flat_map(|x| x.to_le_bytes()).collect();
    let view = TensorView::new(Dtype::F32, vec![rows, dim], &bytes)
        .map_err(|e| ModelError::from(EmbedError::Inference(format!("embeddings tensor: {e}"))))?;
    let path = dir.join("model.safetensors");
    safetensors::serialize_to_file([("embeddings", view)], None, &path)
        .map_err(|e| io_err(&path)(std::io::Error::other(e)))?;

    let tok_path = src.path.join("tokenizer.json");
    let mut tok: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&tok_path).map_err(io_err(&tok_path))?)
            .map_err(|e| io_err(&tok_path)(std::io::Error::other(e)))?;
    tok["truncation"] = serde_json::Value::Null;
    tok["padding"] = serde_json::Value::Null;
    let path = dir.join("tokenizer.json");
    std::fs::write(&path, tok.to_string()).map_err(io_err(&path))?;

    let config = serde_json::json!({
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "hidden_dim": dim,
        "normalize": true,
        "apply_pca": dim,
        "sif_coefficient": SIF,
        "base_model": src.manifest.model,
        "base_embedder": bert.id(),
    });
    let path = dir.join("config.json");
    std::fs::write(&path, config.to_string()).map_err(io_err(&path))?;
    write_manifest(
        dir,
        &Manifest {
            name: name.to_string(),
            kind: ModelKind::Static,
            model: format!("{}-static{dim}", src.manifest.model),
            dim,
            source: format!("distilled from {} ({})", src.manifest.name, bert.id()),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::cosine;
    use crate::models::{install, tiny};
    use crate::progress::NoProgress;

    fn installed() -> tempfile::TempDir {
        let src = tempfile::tempdir().unwrap();
        tiny::write(src.path(), 11).unwrap();
        let models = tempfile::tempdir().unwrap();
        install(models.path(), "minilm", Some(src.path()), "").unwrap();
        models
    }

    /// Pearson correlation.
    fn pearson(a: &[f64], b: &[f64]) -> f64 {
        let n = a.len() as f64;
        let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
        let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
        let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
        let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
        cov / (va * vb).sqrt()
    }

    #[test]
    fn distilled_token_vectors_keep_the_berts_similarities() {
        let models = installed();
        let opts = DistillOptions {
            dim: tiny::HIDDEN,
            batch: 7,
        };
        let m = distill(models.path(), "minilm", "minilm-static", &opts, &NoProgress).unwrap();
        assert_eq!(m.manifest.kind, ModelKind::Static);
        assert_eq!(m.manifest.name, "minilm-static");
        assert_eq!(m.manifest.dim, tiny::HIDDEN);
        assert!(m.manifest.source.contains("distilled from minilm"));

        let bert = BertEmbedder::load(&models.path().join("minilm")).unwrap();
        let stat = Model2VecEmbedder::load(&m.path).unwrap();
        assert_eq!(stat.dim(), tiny::HIDDEN);
        let words = [
            "rain", "station", "daily", "sales", "year", "country", "gdp", "store", "price",
            "city", "weather", "revenue", "product", "card", "fee", "data",
        ];
        let b = bert.embed(&words).unwrap();
        let s = stat.embed(&words).unwrap();
        let (mut sb, mut ss) = (Vec::new(), Vec::new());
        for i in 0..words.len() {
            for j in i + 1..words.len() {
                sb.push(f64::from(cosine(&b[i], &b[j])));
                ss.push(f64::from(cosine(&s[i], &s[j])));
            }
        }
        // Centring moves every similarity, the structure stays: pairs close for the BERT
        // are close for the static model.
        let r = pearson(&sb, &ss);
        assert!(r > 0.6, "correlation of pairwise similarities {r}");

        // Reduced: fewer dimensions, still loadable; special tokens have no row weight.
        let opts = DistillOptions { dim: 8, batch: 64 };
        let small = distill(models.path(), "minilm", "small", &opts, &NoProgress).unwrap();
        let e = Model2VecEmbedder::load(&small.path).unwrap();
        assert_eq!(e.dim(), 8);
        let v = e.embed(&["daily rainfall per station"]).unwrap();
        assert!((v[0].iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
    }

    #[test]
    fn wrong_inputs_are_clear_errors() {
        let models = installed();
        let o = DistillOptions::default();
        let err = distill(models.path(), "nope", "x", &o, &NoProgress).unwrap_err();
        assert!(matches!(err, ModelError::NotInstalled { .. }), "{err}");
        let err = distill(models.path(), "minilm", "x", &o, &NoProgress).unwrap_err();
        assert!(
            err.to_string().contains("--dim 256 is out of range"),
            "{err}"
        );
        let o = DistillOptions { dim: 4, batch: 512 };
        distill(models.path(), "minilm", "s", &o, &NoProgress).unwrap();
        let err = distill(models.path(), "s", "x", &o, &NoProgress).unwrap_err();
        assert!(matches!(err, ModelError::NotBert(_)), "{err}");
    }

    #[test]
    fn sif_weights_fall_for_frequent_ranks() {
        let w = sif_weights(30_000);
        assert!(w.windows(2).all(|p| p[0] < p[1]));
        // Near zero for the most frequent piece, near one for a rare one.
        assert!(w[0] < 0.01 && w[29_999] > 0.9, "{} {}", w[0], w[29_999]);
        // Model2Vec's formula: p = (1/(rank + 2)) / Σ 1/(r + 2).
        let w = sif_weights(2);
        let p0 = 0.5 / (0.5 + 1.0 / 3.0);
        assert!((w[0] - SIF / (SIF + p0)).abs() < 1e-15);
    }

    #[test]
    fn digit_and_punctuation_pieces_have_no_weight() {
        let models = installed();
        let opts = DistillOptions { dim: 8, batch: 64 };
        let m = distill(models.path(), "minilm", "s", &opts, &NoProgress).unwrap();
        let e = Model2VecEmbedder::load(&m.path).unwrap();
        let v = e
            .embed(&["daily rainfall", "7, 42 ; 2019", "daily, 7 ; rainfall 42"])
            .unwrap();
        assert!((v[0].iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
        // Only digits and punctuation: nothing left to embed.
        assert!(v[1].iter().all(|&x| x == 0.0), "{:?}", v[1]);
        // Numbers and commas between the words change nothing.
        assert!(cosine(&v[0], &v[2]) > 0.9999, "{}", cosine(&v[0], &v[2]));
    }

    #[test]
    fn numeric_and_punctuation_pieces() {
        for t in ["7", "##42", "1999", ",", "##.", "%"] {
            assert!(numeric_or_punct(t), "{t}");
        }
        for t in ["rain", "##fall", "q3", "##", "é"] {
            assert!(!numeric_or_punct(t), "{t}");
        }
    }

    #[test]
    fn placeholders() {
        assert!(is_placeholder("[unused7]") && is_placeholder("[MASK]"));
        assert!(!is_placeholder("[") && !is_placeholder("[]") && !is_placeholder("rain"));
    }
}
