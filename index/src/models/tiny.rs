//! A tiny random BERT in the sentence-transformers layout, for tests and examples: the
//! real all-MiniLM-L6-v2 is 90 MB and cannot be downloaded where tests run. Its vectors
//! mean nothing, but it exercises every path a real model takes (config, tensor names,
//! WordPiece tokenizer, padding, truncation, pooling).

use std::path::Path;

use safetensors::tensor::TensorView;
use safetensors::Dtype;
use serde_json::json;

/// Hidden size of the tiny model.
pub const HIDDEN: usize = 32;
/// Transformer layers of the tiny model.
pub const LAYERS: usize = 2;
/// Position embeddings of the tiny model (its longest input).
pub const POSITIONS: usize = 64;
const HEADS: usize = 2;
const INTERMEDIATE: usize = 37;

/// Special and unused tokens, as in BERT's vocabulary (ids 0…6).
const SPECIAL: [&str; 7] = [
    "[PAD]",
    "[unused0]",
    "[unused1]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
];
/// Whole words of the vocabulary; other words are spelled with letter pieces.
const WORDS: [&str; 40] = [
    "the",
    "of",
    "and",
    "per",
    "by",
    "rain",
    "station",
    "daily",
    "total",
    "sales",
    "year",
    "country",
    "gdp",
    "capita",
    "monthly",
    "store",
    "temperature",
    "price",
    "customer",
    "order",
    "date",
    "city",
    "population",
    "weather",
    "revenue",
    "product",
    "id",
    "name",
    "value",
    "count",
    "file",
    "csv",
    "json",
    "table",
    "column",
    "rows",
    "data",
    "fee",
    "card",
    "scheme",
];

/// The tiny model's vocabulary in id order: special tokens, words, characters, `##`
/// pieces of characters (so that every lowercase word can be spelled).
pub fn vocab() -> Vec<String> {
    let chars: Vec<char> = ('a'..='z').chain('0'..='9').collect();
    let mut v: Vec<String> = SPECIAL.iter().map(|s| s.to_string()).collect();
    v.extend(WORDS.iter().map(|s| s.to_string()));
    v.extend(chars.iter().map(|c| c.to_string()));
    v.extend(
        [
            ".", ",", "-", "_", "/", ":", "(", ")", "#", "%", "=", "'", "\"",
        ]
        .map(String::from),
    );
    v.extend(chars.iter().map(|c| format!("##{c}")));
    v.push("##s".into());
    v.dedup();
    v
}

/// Writes `config.json`, `tokenizer.json`, `modules.json` and a random
/// `model.safetensors` (deterministic in `seed`) into `dir`.
pub fn write(dir: &Path, seed: u64) -> std::io::Result<()> {
    let vocab = vocab();
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("config.json"), config(vocab.len()).to_string())?;
    std::fs::write(dir.join("tokenizer.json"), tokenizer(&vocab).to_string())?;
    std::fs::write(
        dir.join("modules.json"),
        r#"[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}]"#,
    )?;
    let tensors = weights(vocab.len(), seed);
    let views: Vec<(String, TensorView<'_>)> = tensors
        .iter()
        .map(|(name, shape, data)| {
            TensorView::new(Dtype::F32, shape.clone(), data)
                .map(|v| (name.clone(), v))
                .map_err(std::io::Error::other)
        })
        .collect::<std::io::Result<_>>()?;
    safetensors::serialize_to_file(views, None, &dir.join("model.safetensors"))
        .map_err(std::io::Error::other)
}

/// Makes each pair's words synonyms for the model in `dir` (written by [`write`]): the
/// second word gets the first's word-embedding row, so that the encoder cannot tell them
/// apart — what a real model nearly does for "rainfall" and "precipitation". Words must
/// be whole words of [`vocab`].
pub fn tie(dir: &Path, pairs: &[(&str, &str)]) -> std::io::Result<()> {
    let path = dir.join("model.safetensors");
    let bytes = std::fs::read(&path)?;
    let st = safetensors::SafeTensors::deserialize(&bytes).map_err(std::io::Error::other)?;
    let vocab = vocab();
    let id = |w: &str| {
        vocab.iter().position(|v| v == w).ok_or_else(|| {
            std::io::Error::other(format!("{w:?} is not a word of the tiny vocabulary"))
        })
    };
    let mut owned: Vec<(String, Vec<usize>, Vec<u8>)> = st
        .tensors()
        .into_iter()
        .map(|(n, t)| (n, t.shape().to_vec(), t.data().to_vec()))
        .collect();
    let row = 4 * HIDDEN;
    for (name, _, data) in &mut owned {
        if name == "embeddings.word_embeddings.weight" {
            for &(a, b) in pairs {
                let (a, b) = (id(a)?, id(b)?);
                let src = data[a * row..(a + 1) * row].to_vec();
                data[b * row..(b + 1) * row].copy_from_slice(&src);
            }
        }
    }
    let views: Vec<(String, TensorView<'_>)> = owned
        .iter()
        .map(|(n, s, d)| {
            TensorView::new(Dtype::F32, s.clone(), d)
                .map(|v| (n.clone(), v))
                .map_err(std::io::Error::other)
        })
        .collect::<std::io::Result<_>>()?;
    safetensors::serialize_to_file(views, None, &path).map_err(std::io::Error::other)
}

fn config(vocab_size: usize) -> serde_json::Value {
    json!({
        "architectures": ["BertModel"],
        "attention_probs_dropout_prob": 0.1,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "hidden_size": HIDDEN,
        "initializer_range": 0.02,
        "intermediate_size": INTERMEDIATE,
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": POSITIONS,
        "model_type": "bert",
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "type_vocab_size": 2,
        "vocab_size": vocab_size
    })
}

/// A BERT WordPiece tokenizer.json as `transformers` writes it for uncased BERT.
fn tokenizer(vocab: &[String]) -> serde_json::Value {
    let special = |content: &str| {
        let id = vocab.iter().position(|v| v == content).unwrap_or(0);
        json!({"id": id, "content": content, "single_word": false, "lstrip": false,
               "rstrip": false, "normalized": false, "special": true})
    };
    let ids: serde_json::Map<String, serde_json::Value> = vocab
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), json!(i)))
        .collect();
    let id = |t: &str| vocab.iter().position(|v| v == t).unwrap_or(0);
    let added: Vec<serde_json::Value> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .into_iter()
        .map(special)
        .collect();
    json!({
        "version": "1.0",
        "truncation": {"direction": "Right", "max_length": 128, "strategy": "LongestFirst", "stride": 0},
        "padding": null,
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true,
                       "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [id("[CLS]")], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [id("[SEP]")], "tokens": ["[SEP]"]}}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": ids}
    })
}

/// Every tensor candle's `BertModel` loads, with sentence-transformers names (no `bert.`
/// prefix), filled with seeded uniform noise of standard deviation about 1/√fan-in.
fn weights(vocab_size: usize, seed: u64) -> Vec<(String, Vec<usize>, Vec<u8>)> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = Vec::new();
    let mut put = |name: String, shape: Vec<usize>, scale: f32, offset: f32| {
        let n: usize = shape.iter().product();
        let data: Vec<u8> = (0..n)
            .map(|_| offset + scale * (rng.f32() * 2.0 - 1.0))
            .flat_map(f32::to_le_bytes)
            .collect();
        out.push((name, shape, data));
    };
    let fan = |n: usize| (3.0 / n as f32).sqrt();
    let e = "embeddings";
    put(
        format!("{e}.word_embeddings.weight"),
        vec![vocab_size, HIDDEN],
        1.0,
        0.0,
    );
    put(
        format!("{e}.position_embeddings.weight"),
        vec![POSITIONS, HIDDEN],
        0.3,
        0.0,
    );
    put(
        format!("{e}.token_type_embeddings.weight"),
        vec![2, HIDDEN],
        0.1,
        0.0,
    );
    put(format!("{e}.LayerNorm.weight"), vec![HIDDEN], 0.1, 1.0);
    put(format!("{e}.LayerNorm.bias"), vec![HIDDEN], 0.1, 0.0);
    for l in 0..LAYERS {
        let p = format!("encoder.layer.{l}");
        for m in ["query", "key", "value"] {
            put(
                format!("{p}.attention.self.{m}.weight"),
                vec![HIDDEN, HIDDEN],
                fan(HIDDEN),
                0.0,
            );
            put(
                format!("{p}.attention.self.{m}.bias"),
                vec![HIDDEN],
                0.05,
                0.0,
            );
        }
        let dense = |p: &str, o: usize, i: usize| (format!("{p}.dense.weight"), vec![o, i], fan(i));
        for (prefix, o, i) in [
            (format!("{p}.attention.output"), HIDDEN, HIDDEN),
            (format!("{p}.intermediate"), INTERMEDIATE, HIDDEN),
            (format!("{p}.output"), HIDDEN, INTERMEDIATE),
        ] {
            let (name, shape, scale) = dense(&prefix, o, i);
            put(name, shape, scale, 0.0);
            put(format!("{prefix}.dense.bias"), vec![o], 0.05, 0.0);
            if o == HIDDEN {
                put(format!("{prefix}.LayerNorm.weight"), vec![HIDDEN], 0.1, 1.0);
                put(format!("{prefix}.LayerNorm.bias"), vec![HIDDEN], 0.1, 0.0);
            }
        }
    }
    out
}
