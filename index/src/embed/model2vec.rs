//! Static token embeddings in the Model2Vec layout: a directory with `model.safetensors`
//! (a vocab × dim matrix) and the HuggingFace `tokenizer.json` that produced its rows.
//! A text's vector is the mean of its tokens' rows — no neural network runs, so it is
//! nearly as cheap as the hash embedder while knowing that "rainfall" and "precipitation"
//! are close.
//!
//! Besides the plain matrix (named `embeddings`, `0`, `embedding.weight`, or the one 2-D
//! tensor), the optional tensors of newer Model2Vec exports are read: `weights` (one
//! scale per token) and `mapping` (token id → row, for vocabulary-quantized models).
//! Nothing is downloaded: the directory must already be on disk.

use std::collections::HashSet;
use std::path::Path;

use rayon::prelude::*;
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use tokenizers::Tokenizer;

use super::{l2_normalize, EmbedError, Embedder};

/// A Model2Vec static embedding model loaded in memory. See the module documentation.
pub struct Model2VecEmbedder {
    id: String,
    tokenizer: Tokenizer,
    /// Row-major `rows × dim`.
    embeddings: Vec<f32>,
    dim: usize,
    /// Per-token scale, indexed by token id.
    weights: Option<Vec<f32>>,
    /// Token id → row, for vocabulary-quantized models.
    mapping: Option<Vec<usize>>,
    /// Ids never averaged in: special tokens (`[CLS]`, `[PAD]`…) and the unknown token,
    /// which carry no meaning of the text.
    skip: HashSet<u32>,
}

impl std::fmt::Debug for Model2VecEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model2VecEmbedder")
            .field("id", &self.id)
            .field("rows", &(self.embeddings.len() / self.dim))
            .field("dim", &self.dim)
            .finish_non_exhaustive()
    }
}

impl Model2VecEmbedder {
    /// Loads the model in `dir` (`model.safetensors` and `tokenizer.json`), checking that
    /// every token the tokenizer can produce has a row.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let fail = |detail: String| EmbedError::Model {
            dir: dir.to_path_buf(),
            detail,
        };
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| fail(format!("cannot read {name}: {e}")))
        };
        let tok_bytes = read("tokenizer.json")?;
        let model_bytes = read("model.safetensors")?;

        let mut tokenizer = Tokenizer::from_bytes(&tok_bytes).map_err(|e| {
            fail(format!(
                "tokenizer.json is not a tokenizer this build reads: {e}"
            ))
        })?;
        // The mean covers the whole text: a truncation or padding setting meant for a
        // transformer's fixed window would cut or dilute it.
        tokenizer
            .with_truncation(None)
            .map_err(|e| fail(format!("cannot turn off truncation: {e}")))?;
        tokenizer.with_padding(None);

        let tensors = SafeTensors::deserialize(&model_bytes)
            .map_err(|e| fail(format!("model.safetensors is not a safetensors file: {e}")))?;
        let matrix = embeddings_tensor(&tensors).map_err(&fail)?;
        let (rows, dim) = match matrix.shape() {
            [r, d] if *r > 0 && *d > 0 => (*r, *d),
            shape => {
                return Err(fail(format!(
                    "the embeddings tensor has shape {shape:?}, expected [vocab, dim]"
                )))
            }
        };
        let embeddings = to_f32(&matrix).map_err(|e| fail(format!("embeddings: {e}")))?;
        let weights = match tensors.tensor("weights") {
            Ok(t) => Some(to_f32(&t).map_err(|e| fail(format!("weights: {e}")))?),
            Err(_) => None,
        };
        let mapping = match tensors.tensor("mapping") {
            Ok(t) => Some(to_index(&t).map_err(|e| fail(format!("mapping: {e}")))?),
            Err(_) => None,
        };

        let mut skip: HashSet<u32> = tokenizer
            .get_added_tokens_decoder()
            .into_iter()
            .filter(|(_, tok)| tok.special)
            .map(|(id, _)| id)
            .collect();
        if let Some(unk) = unk_id(&tok_bytes, &tokenizer) {
            skip.insert(unk);
        }

        // Every id the tokenizer can emit (special ones are skipped, so they need no row)
        // must resolve to a row and, with weights, to a scale: checked once here so that
        // a mismatched tokenizer and matrix is a load error, not wrong vectors later.
        for (token, id) in tokenizer.get_vocab(true) {
            if skip.contains(&id) {
                continue;
            }
            let i = id as usize;
            let row = match &mapping {
                Some(m) => *m.get(i).ok_or_else(|| {
                    fail(format!("token {token:?} (id {id}) is past the end of the mapping ({} entries); tokenizer.json does not belong to this model", m.len()))
                })?,
                None => i,
            };
            if row >= rows {
                return Err(fail(format!("token {token:?} (id {id}) has no row: the matrix has {rows} rows; tokenizer.json does not belong to this model")));
            }
            if weights.as_ref().is_some_and(|w| i >= w.len()) {
                return Err(fail(format!(
                    "token {token:?} (id {id}) has no entry in the weights tensor"
                )));
            }
        }

        let name = dir
            .canonicalize()
            .unwrap_or_else(|_| dir.to_path_buf())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        // The directory name says which model it is to a person; the content digest makes
        // the id change whenever the files do, even under the same name.
        let mut h = blake3::Hasher::new();
        h.update(&(tok_bytes.len() as u64).to_le_bytes());
        h.update(&tok_bytes);
        h.update(&model_bytes);
        let digest = h.finalize().to_hex();
        let id = format!("model2vec-{name}-{}-{dim}", &digest[..8]);

        Ok(Self {
            id,
            tokenizer,
            embeddings,
            dim,
            weights,
            mapping,
            skip,
        })
    }

    /// Embeds one text: the mean of its tokens' rows (scaled by the token weights when
    /// the model has them), L2-normalized; the zero vector when no token is left.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let encoding = self
            .tokenizer
            .encode_fast(text, false)
            .map_err(|e| EmbedError::Tokenize(e.to_string()))?;
        let mut sum = vec![0.0f64; self.dim];
        let mut count = 0usize;
        for &id in encoding.get_ids() {
            if self.skip.contains(&id) {
                continue;
            }
            let i = id as usize;
            let row = match &self.mapping {
                Some(m) => m.get(i).copied(),
                None => Some(i),
            };
            // Rows were checked at load for every vocabulary id; anything else is skipped.
            let Some(vals) =
                row.and_then(|r| self.embeddings.get(r * self.dim..(r + 1) * self.dim))
            else {
                continue;
            };
            let scale = self
                .weights
                .as_ref()
                .and_then(|w| w.get(i))
                .map_or(1.0, |&s| f64::from(s));
            for (s, &v) in sum.iter_mut().zip(vals) {
                *s += scale * f64::from(v);
            }
            count += 1;
        }
        // Dividing by the count does not change the direction, but keeps the pre-norm
        // values what Model2Vec's own `encode` computes (its mean).
        let n = count.max(1) as f64;
        let mut v: Vec<f32> = sum.into_iter().map(|s| (s / n) as f32).collect();
        l2_normalize(&mut v);
        Ok(v)
    }
}

impl Embedder for Model2VecEmbedder {
    /// `model2vec-DIRNAME-DIGEST-DIM`: the directory's name, the first 8 hex digits of a
    /// BLAKE3 digest of both files, and the dimension.
    fn id(&self) -> String {
        self.id.clone()
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        texts.par_iter().map(|t| self.embed_one(t)).collect()
    }
}

/// The embedding matrix: a tensor under one of Model2Vec's names, else the only 2-D one.
fn embeddings_tensor<'a>(tensors: &SafeTensors<'a>) -> Result<TensorView<'a>, String> {
    for name in ["embeddings", "0", "embedding.weight"] {
        if let Ok(t) = tensors.tensor(name) {
            return Ok(t);
        }
    }
    let mut matrices: Vec<(String, TensorView<'a>)> = tensors
        .tensors()
        .into_iter()
        .filter(|(_, t)| t.shape().len() == 2)
        .collect();
    match matrices.len() {
        1 => Ok(matrices.remove(0).1),
        0 => Err("model.safetensors holds no 2-D tensor".into()),
        _ => {
            let mut names: Vec<String> = matrices.into_iter().map(|(n, _)| n).collect();
            names.sort();
            Err(format!(
                "model.safetensors holds several 2-D tensors ({}) and none is named \"embeddings\"",
                names.join(", ")
            ))
        }
    }
}

/// A float (or int8-quantized) tensor's values as f32.
fn to_f32(t: &TensorView<'_>) -> Result<Vec<f32>, String> {
    let raw = t.data();
    Ok(match t.dtype() {
        Dtype::F32 => raw
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        Dtype::F64 => raw
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as f32)
            .collect(),
        Dtype::F16 => raw
            .chunks_exact(2)
            .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
            .collect(),
        Dtype::BF16 => raw
            .chunks_exact(2)
            .map(|b| f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16))
            .collect(),
        // Model2Vec's int8 export stores rows without a scale; the common factor does
        // not change a normalized mean.
        Dtype::I8 => raw.iter().map(|&b| f32::from(b as i8)).collect(),
        other => {
            return Err(format!(
                "unsupported dtype {other:?} (F32, F16, BF16, F64 or I8 expected)"
            ))
        }
    })
}

/// An integer tensor's values as row indexes.
fn to_index(t: &TensorView<'_>) -> Result<Vec<usize>, String> {
    let raw = t.data();
    let vals: Vec<i64> = match t.dtype() {
        Dtype::I32 => raw
            .chunks_exact(4)
            .map(|b| i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            .collect(),
        Dtype::I64 => raw
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            .collect(),
        other => return Err(format!("unsupported dtype {other:?} (I32 or I64 expected)")),
    };
    vals.into_iter()
        .map(|v| usize::try_from(v).map_err(|_| format!("negative row index {v}")))
        .collect()
}

/// IEEE half precision to single (exact: every f16 is an f32).
fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        // Subnormal: value = frac × 2^-24, exactly representable as a normal f32.
        (0, _) => {
            let magnitude = frac as f32 * f32::powi(2.0, -24);
            return if sign != 0 { -magnitude } else { magnitude };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, _) => sign | 0x7fc0_0000,
        _ => sign | ((exp + 127 - 15) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

/// The tokenizer's unknown token, from the model section of tokenizer.json
/// (`unk_token` for WordPiece, WordLevel and BPE; `unk_id` for Unigram).
fn unk_id(tok_bytes: &[u8], tokenizer: &Tokenizer) -> Option<u32> {
    let json: serde_json::Value = serde_json::from_slice(tok_bytes).ok()?;
    let model = json.get("model")?;
    if let Some(tok) = model.get("unk_token").and_then(|v| v.as_str()) {
        return tokenizer.token_to_id(tok);
    }
    model
        .get("unk_id")
        .and_then(|v| v.as_u64())
        .and_then(|v| u32::try_from(v).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::cosine;
    use safetensors::serialize_to_file;
    use serde_json::json;

    /// The hand-written vocabulary: BERT's special tokens, then words and `##` pieces.
    const VOCAB: [&str; 20] = [
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "gdp", "per", "capita", "country", "year", "rain",
        "##fall", "station", "daily", "##s", "total", ".", ",", "data", "file", "csv",
    ];

    fn tokenizer_json(vocab: &[&str]) -> String {
        let special = |id: usize, content: &str| {
            json!({"id": id, "content": content, "single_word": false, "lstrip": false,
                   "rstrip": false, "normalized": false, "special": true})
        };
        let vocab_map: serde_json::Map<String, serde_json::Value> = vocab
            .iter()
            .enumerate()
            .map(|(i, t)| (t.to_string(), json!(i)))
            .collect();
        json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": [special(0, "[PAD]"), special(1, "[UNK]"), special(2, "[CLS]"), special(3, "[SEP]")],
            "normalizer": {"type": "BertNormalizer", "clean_text": true,
                           "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100, "vocab": vocab_map}
        })
        .to_string()
    }

    /// Row `i` of the test matrix: values all exact in f16, so the F16 copy is the same.
    fn row(i: usize) -> [f32; 3] {
        const V: [f32; 6] = [-1.0, -0.5, 0.0, 0.5, 1.0, 2.0];
        [V[i % 6], V[(i / 2) % 6], V[(i * 5 + 1) % 6]]
    }

    fn f16_bits(x: f32) -> u16 {
        match x {
            -1.0 => 0xBC00,
            -0.5 => 0xB800,
            0.0 => 0x0000,
            0.5 => 0x3800,
            1.0 => 0x3C00,
            2.0 => 0x4000,
            _ => unreachable!("{x}"),
        }
    }

    /// Writes a model directory: tokenizer.json and a safetensors file with `tensors`.
    fn write_model(dir: &Path, vocab: &[&str], tensors: Vec<(&str, Dtype, Vec<usize>, Vec<u8>)>) {
        std::fs::write(dir.join("tokenizer.json"), tokenizer_json(vocab)).unwrap();
        let views: Vec<(&str, TensorView<'_>)> = tensors
            .iter()
            .map(|(name, dtype, shape, data)| {
                (*name, TensorView::new(*dtype, shape.clone(), data).unwrap())
            })
            .collect();
        serialize_to_file(views, None, &dir.join("model.safetensors")).unwrap();
    }

    fn f32_matrix(rows: usize) -> Vec<u8> {
        (0..rows).flat_map(row).flat_map(f32::to_le_bytes).collect()
    }

    /// L2-normalized mean of the rows of `ids`.
    fn expected(ids: &[usize]) -> Vec<f32> {
        let mut mean = [0.0f32; 3];
        for &i in ids {
            for (m, v) in mean.iter_mut().zip(row(i)) {
                *m += v / ids.len() as f32;
            }
        }
        let n = mean.iter().map(|x| x * x).sum::<f32>().sqrt();
        mean.iter().map(|x| x / n).collect()
    }

    fn assert_close(a: &[f32], b: &[f32]) {
        assert_eq!(a.len(), b.len());
        assert!(
            a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6),
            "{a:?} vs {b:?}"
        );
    }

    #[test]
    fn mean_of_known_token_rows_skipping_special_and_unknown_tokens() {
        let dir = tempfile::tempdir().unwrap();
        write_model(
            dir.path(),
            &VOCAB,
            vec![("embeddings", Dtype::F32, vec![20, 3], f32_matrix(20))],
        );
        let m = Model2VecEmbedder::load(dir.path()).unwrap();
        assert_eq!(m.dim(), 3);
        let v = m
            .embed(&[
                "GDP per country",      // gdp per country
                "Rainfall stations",    // rain ##fall station ##s
                "[CLS] gdp zzzz [SEP]", // [CLS] and [SEP] special, zzzz → [UNK]: only gdp
                "zzzz qqqq",            // nothing known
                "",
            ])
            .unwrap();
        assert_close(&v[0], &expected(&[4, 5, 7]));
        assert_close(&v[1], &expected(&[9, 10, 11, 13]));
        assert_close(&v[2], &expected(&[4]));
        assert_eq!(v[3], vec![0.0; 3]);
        assert_eq!(v[4], vec![0.0; 3]);
        assert_eq!(cosine(&v[3], &v[0]), 0.0);

        // The id names the directory, a digest of the files and the dimension, and is
        // stable across loads.
        let id = m.id();
        let name = dir.path().canonicalize().unwrap();
        let name = name.file_name().unwrap().to_string_lossy();
        assert!(
            id.starts_with(&format!("model2vec-{name}-")) && id.ends_with("-3"),
            "{id}"
        );
        assert_eq!(Model2VecEmbedder::load(dir.path()).unwrap().id(), id);
    }

    #[test]
    fn f16_weights_mapping_and_token_weights() {
        let dir = tempfile::tempdir().unwrap();
        // F16 copy of the matrix: same vectors, but a different file, so another id.
        let f16: Vec<u8> = (0..20)
            .flat_map(row)
            .flat_map(|x| f16_bits(x).to_le_bytes())
            .collect();
        write_model(
            dir.path(),
            &VOCAB,
            vec![("embeddings", Dtype::F16, vec![20, 3], f16)],
        );
        let m = Model2VecEmbedder::load(dir.path()).unwrap();
        assert_close(
            &m.embed_one("rainfall per year").unwrap(),
            &expected(&[9, 10, 5, 8]),
        );

        // Vocabulary-quantized: 4 rows, token i → row i % 4, token i weighted (i + 1).
        let mapping: Vec<u8> = (0..20i32).flat_map(|i| (i % 4).to_le_bytes()).collect();
        let weights: Vec<u8> = (0..20)
            .flat_map(|i| (i as f32 + 1.0).to_le_bytes())
            .collect();
        write_model(
            dir.path(),
            &VOCAB,
            vec![
                ("embeddings", Dtype::F32, vec![4, 3], f32_matrix(4)),
                ("mapping", Dtype::I32, vec![20], mapping),
                ("weights", Dtype::F32, vec![20], weights),
            ],
        );
        let q = Model2VecEmbedder::load(dir.path()).unwrap();
        assert_ne!(q.id(), m.id());
        // gdp (4 → row 0, ×5) and country (7 → row 3, ×8).
        let mut want: Vec<f32> = (0..3).map(|k| 5.0 * row(0)[k] + 8.0 * row(3)[k]).collect();
        crate::embed::l2_normalize(&mut want);
        assert_close(&q.embed_one("gdp country").unwrap(), &want);
    }

    #[test]
    fn mismatched_or_missing_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let err = Model2VecEmbedder::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("cannot read tokenizer.json"), "{err}");

        // 20 tokens but only 12 rows.
        write_model(
            dir.path(),
            &VOCAB,
            vec![("embeddings", Dtype::F32, vec![12, 3], f32_matrix(12))],
        );
        let err = Model2VecEmbedder::load(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("has no row") && err.contains("does not belong"),
            "{err}"
        );

        // Two unnamed matrices: which one is meant is not guessed.
        write_model(
            dir.path(),
            &VOCAB,
            vec![
                ("a", Dtype::F32, vec![20, 3], f32_matrix(20)),
                ("b", Dtype::F32, vec![20, 3], f32_matrix(20)),
            ],
        );
        let err = Model2VecEmbedder::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("several 2-D tensors (a, b)"), "{err}");

        // The one 2-D tensor is taken whatever its name.
        write_model(
            dir.path(),
            &VOCAB,
            vec![("emb", Dtype::F32, vec![20, 3], f32_matrix(20))],
        );
        assert!(Model2VecEmbedder::load(dir.path()).is_ok());

        std::fs::write(dir.path().join("tokenizer.json"), "{\"model\": 1}").unwrap();
        let err = Model2VecEmbedder::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("tokenizer.json is not a tokenizer"), "{err}");
    }

    #[test]
    fn half_precision_conversion() {
        assert_eq!(f16_to_f32(0x3C00), 1.0);
        assert_eq!(f16_to_f32(0xC000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f16_to_f32(0x7BFF), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x8200), -(2f32.powi(-15)));
        assert_eq!(f16_to_f32(0x7C00), f32::INFINITY);
        assert!(f16_to_f32(0x7E00).is_nan());
        assert_eq!(f16_to_f32(0x8000).to_bits(), (-0.0f32).to_bits());
    }
}
