//! `lakestar model distill`: a static Model2Vec-layout model from an installed BERT, as
//! Model2Vec distills one. Every vocabulary token (special and `[unused…]` ones skipped)
//! runs through the transformer as `[CLS] token [SEP]`, its hidden states mean-pooled;
//! the vectors are reduced to `dim` principal components and each row is scaled by
//! `ln(rank + e)` of its token's rank in the vocabulary (a Zipf-style weight: BERT
//! vocabularies are roughly frequency-ordered, so frequent pieces weigh less in a mean).
//! A text's vector is then a weighted mean of rows — the transformer's knowledge of each
//! word, at the cost of a table lookup.

use std::path::Path;

use candle_core::{Device, Tensor};
use rayon::prelude::*;
use safetensors::tensor::TensorView;
use safetensors::Dtype;

use super::install::check_embeds;
use super::{find, io_err, pca, publish, staging, write_manifest, Installed};
use super::{Manifest, ModelError, ModelKind};
use crate::embed::{BertEmbedder, EmbedError, Embedder, Model2VecEmbedder};
use crate::indexer::Progress;

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
/// directory `models`. `progress` counts tokens. The recipe is the default unless
/// `LAKESTAR_DISTILL_RECIPE` names another (experiments; see [`Recipe::parse`]).
pub fn distill(
    models: &Path,
    source: &str,
    out: &str,
    opts: &DistillOptions,
    progress: &dyn Progress,
) -> Result<Installed, ModelError> {
    let recipe = Recipe::parse(&std::env::var("LAKESTAR_DISTILL_RECIPE").unwrap_or_default());
    distill_with(models, source, out, opts, recipe, progress)
}

fn distill_with(
    models: &Path,
    source: &str,
    out: &str,
    opts: &DistillOptions,
    recipe: Recipe,
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

    tracing::info!(?recipe, "recipe");
    let (rows, kept) = tokens(&bert);
    progress.start(kept.len() as u64);
    let started = std::time::Instant::now();
    let vectors = token_vectors(
        &bert,
        &kept,
        opts.batch.max(1),
        recipe.own,
        recipe.rev,
        progress,
    )?;
    tracing::info!(tokens = kept.len(), elapsed = ?started.elapsed(), "token vectors");
    let dim = if recipe.pca { opts.dim } else { hidden };
    let reduced = if recipe.pca {
        reduce(&vectors, kept.len(), hidden, dim)?
    } else {
        vectors
    };
    tracing::info!(elapsed = ?started.elapsed(), "reduced");

    let vocab = bert.tokenizer.get_vocab(true);
    let names: std::collections::HashMap<u32, &str> =
        vocab.iter().map(|(t, &id)| (id, t.as_str())).collect();
    // Weights by rank among the kept tokens; skipped tokens keep zero rows.
    let weights = recipe.weights(kept.len());
    let mut reduced = reduced;
    if recipe.norm {
        for row in reduced.chunks_mut(dim) {
            crate::embed::l2_normalize(row);
        }
    }
    let mut matrix = vec![0.0f32; rows * dim];
    for ((&id, row), &w) in kept.iter().zip(reduced.chunks(dim)).zip(&weights) {
        let dropped = recipe.no_numeric && names.get(&id).is_some_and(|t| numeric_or_punct(t));
        let w = if dropped { 0.0 } else { w as f32 };
        let start = id as usize * dim;
        for (m, &x) in matrix[start..start + dim].iter_mut().zip(row) {
            *m = w * x;
        }
    }
    let opts = &DistillOptions { dim, ..*opts };

    let stage = staging(models, out)?;
    write_model(stage.path(), out, &src, &bert, &matrix, opts.dim, recipe)?;
    drop(bert);
    let check = Model2VecEmbedder::load(stage.path())?;
    check_embeds(&check)?;
    drop(check);
    progress.finish();
    publish(stage, models, out)?;
    find(models, out)
}

/// Model2Vec's SIF coefficient (`sif_coefficient`, default 1e-4).
const SIF: f64 = 1e-4;

/// How a token's row is weighted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Weight {
    /// `ln(rank + e)`: Model2Vec's first `apply_zipf`.
    Zipf,
    /// `a / (a + p)` with `p` a Zipf probability of the rank: Model2Vec's SIF weighting.
    Sif,
    /// No weighting.
    Flat,
}

/// A distillation recipe. Only the default is used unless `LAKESTAR_DISTILL_RECIPE` asks
/// for another: the variants measured in BENCHMARKS.md ("Embedders") stay reproducible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Recipe {
    weight: Weight,
    /// Reduce to the asked dimension by PCA (else keep the hidden size).
    pca: bool,
    /// The token's own hidden state instead of the mean over `[CLS] token [SEP]`.
    own: bool,
    /// Zero the rows of tokens made only of digits or punctuation.
    no_numeric: bool,
    /// Scale every reduced row to unit length before weighting.
    norm: bool,
    /// Frame the token as `[SEP] token [CLS]` (Model2Vec's current order).
    rev: bool,
}

impl Recipe {
    const DEFAULT: Recipe = Recipe {
        weight: Weight::Zipf,
        pca: true,
        own: false,
        no_numeric: false,
        norm: false,
        rev: false,
    };

    /// The default changed by comma-separated words: `zipf`, `sif`, `flat` (weights),
    /// `nopca`, `own`, `nonumeric`. Unknown words are reported and ignored.
    fn parse(words: &str) -> Recipe {
        let mut r = Recipe::DEFAULT;
        for w in words.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match w {
                "zipf" => r.weight = Weight::Zipf,
                "sif" => r.weight = Weight::Sif,
                "flat" => r.weight = Weight::Flat,
                "nopca" => r.pca = false,
                "own" => r.own = true,
                "nonumeric" => r.no_numeric = true,
                "norm" => r.norm = true,
                "rev" => r.rev = true,
                _ => tracing::warn!(
                    word = w,
                    "unknown LAKESTAR_DISTILL_RECIPE word, ignored; use zipf, sif, flat, nopca, own, nonumeric"
                ),
            }
        }
        r
    }

    /// The row weights of `n` kept tokens, by rank.
    fn weights(&self, n: usize) -> Vec<f64> {
        // Model2Vec's SIF estimate: Zipf probabilities 1/(rank + 2), normalized.
        let harmonic: f64 = (0..n).map(|r| 1.0 / (r as f64 + 2.0)).sum();
        (0..n)
            .map(|rank| match self.weight {
                Weight::Zipf => (rank as f64 + std::f64::consts::E).ln(),
                Weight::Sif => SIF / (SIF + 1.0 / (rank as f64 + 2.0) / harmonic),
                Weight::Flat => 1.0,
            })
            .collect()
    }
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

/// Mean-pooled hidden states of `[CLS] token [SEP]` for each token (with `own`, the
/// token's own position's), row-major.
fn token_vectors(
    bert: &BertEmbedder,
    kept: &[u32],
    batch: usize,
    own: bool,
    rev: bool,
    progress: &dyn Progress,
) -> Result<Vec<f32>, ModelError> {
    // The frame the tokenizer puts around any text ([CLS] … [SEP] for BERT).
    let mut frame = bert.encode("")?;
    if rev {
        frame.reverse();
    }
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
            let pooled = if own {
                own_states(bert, &seqs, usize::from(!frame.is_empty()))?
            } else {
                bert.pooled(&seqs)?
            };
            progress.inc(chunk.len() as u64);
            Ok(pooled.into_iter().flatten().collect())
        })
        .collect::<Result<_, EmbedError>>()?;
    Ok(parts.concat())
}

/// The last hidden states at position `at` (the token itself) of equally long sequences.
fn own_states(
    bert: &BertEmbedder,
    seqs: &[Vec<u32>],
    at: usize,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    use candle_core::IndexOp;
    let err = |e: candle_core::Error| EmbedError::Inference(e.to_string());
    let len = seqs.first().map_or(0, Vec::len);
    let ids: Vec<u32> = seqs.iter().flatten().copied().collect();
    let ids = Tensor::from_vec(ids, (seqs.len(), len), &Device::Cpu).map_err(err)?;
    let types = ids.zeros_like().map_err(err)?;
    let mask = ids.ones_like().map_err(err)?;
    bert.model
        .forward(&ids, &types, Some(&mask))
        .and_then(|h| h.i((.., at, ..)))
        .and_then(|h| h.to_vec2::<f32>())
        .map_err(err)
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
    recipe: Recipe,
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
        "apply_pca": if recipe.pca { Some(dim) } else { None },
        "apply_zipf": recipe.weight == Weight::Zipf,
        "sif_coefficient": if recipe.weight == Weight::Sif { Some(SIF) } else { None },
        "lakestar_recipe": format!("{recipe:?}"),
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
    use crate::indexer::NoProgress;
    use crate::models::{install, tiny};

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
    fn recipes_parse_from_words_and_unknown_words_change_nothing() {
        assert_eq!(Recipe::parse(""), Recipe::DEFAULT);
        assert_eq!(Recipe::parse("bogus, ,"), Recipe::DEFAULT);
        let r = Recipe::parse("sif, nopca,own,nonumeric");
        assert_eq!(
            r,
            Recipe {
                weight: Weight::Sif,
                pca: false,
                own: true,
                no_numeric: true,
                norm: false,
                rev: false,
            }
        );
        assert_eq!(Recipe::parse("sif,flat").weight, Weight::Flat);
    }

    #[test]
    fn weights_fall_for_frequent_ranks() {
        for recipe in [Recipe::DEFAULT, Recipe::parse("sif")] {
            let w = recipe.weights(1000);
            assert!(w.windows(2).all(|p| p[0] < p[1]), "{recipe:?}");
            assert!(w[0] > 0.0 && w[999].is_finite());
        }
        // The default recipe's weights are what minilm-static was distilled with.
        assert!((Recipe::DEFAULT.weights(3)[2] - (2.0 + std::f64::consts::E).ln()).abs() < 1e-12);
        // SIF: near zero for the most frequent piece, near one for a rare one.
        let sif = Recipe::parse("sif").weights(30_000);
        assert!(
            sif[0] < 0.01 && sif[29_999] > 0.9,
            "{} {}",
            sif[0],
            sif[29_999]
        );
        assert!(Recipe::parse("flat").weights(4).iter().all(|&w| w == 1.0));
    }

    #[test]
    fn every_recipe_distills_a_loadable_model() {
        let models = installed();
        for (i, words) in ["sif,nopca", "own,nonumeric", "flat,own"]
            .iter()
            .enumerate()
        {
            let recipe = Recipe::parse(words);
            let opts = DistillOptions { dim: 8, batch: 64 };
            let out = format!("r{i}");
            let m =
                distill_with(models.path(), "minilm", &out, &opts, recipe, &NoProgress).unwrap();
            let want = if recipe.pca { 8 } else { tiny::HIDDEN };
            assert_eq!(m.manifest.dim, want, "{words}");
            let e = Model2VecEmbedder::load(&m.path).unwrap();
            let v = e
                .embed(&["daily rainfall per station", "7, 42 ; 2019"])
                .unwrap();
            assert!((v[0].iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
            // Only digits and punctuation: nothing left to embed without their rows.
            let zero = v[1].iter().all(|&x| x == 0.0);
            assert_eq!(zero, recipe.no_numeric, "{words}: {:?}", v[1]);
        }
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
