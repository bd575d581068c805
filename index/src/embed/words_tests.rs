use super::*;
use crate::embed::cosine;
use crate::models::tiny;

/// The tiny BERT with one synonym pair: "weather" gets the word-embedding row of "rain".
fn tiny_with_synonym(dir: &Path) {
    tiny::write(dir, 5).unwrap();
    tiny::tie(dir, &[("rain", "weather")]).unwrap();
}

fn unit(v: &[f32]) -> bool {
    (v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5
}

#[test]
fn synonyms_are_close_unrelated_words_are_not() {
    let dir = tempfile::tempdir().unwrap();
    tiny_with_synonym(dir.path());
    let e = WordsEmbedder::load(dir.path(), 0.0).unwrap();
    assert_eq!(e.dim(), tiny::HIDDEN);
    let v = e
        .embed(&[
            "rain",
            "weather",
            "sales",
            "daily rain by station",
            "Daily_Weather by station",
            "monthly sales per store",
        ])
        .unwrap();
    assert!(v.iter().all(|x| unit(x)));
    assert!(cosine(&v[0], &v[1]) > 0.9999, "{}", cosine(&v[0], &v[1]));
    // (The random tiny encoder puts all single words close; the gap is what counts.)
    let (near, far) = (cosine(&v[0], &v[1]), cosine(&v[0], &v[2]));
    assert!(far < near - 0.005, "synonym {near}, unrelated {far}");
    // A text saying the same with the synonym is closer than one on another topic (not
    // the same vector: the two words weigh by their own ranks).
    let (near, far) = (cosine(&v[3], &v[4]), cosine(&v[3], &v[5]));
    assert!(far < near - 0.005, "synonym text {near}, other topic {far}");

    // With the hash share the cosine is the weighted sum of the two.
    let m = WordsEmbedder::load(dir.path(), 0.5).unwrap();
    assert_eq!(m.dim(), tiny::HIDDEN + 512);
    assert_ne!(m.id(), e.id());
    let texts = ["daily rain by station", "Daily_Weather by station"];
    let mixed = m.embed(&texts).unwrap();
    let hash = HashEmbedder::new(512).unwrap().embed(&texts).unwrap();
    let want = 0.5 * cosine(&hash[0], &hash[1]) + 0.5 * cosine(&v[3], &v[4]);
    assert!((cosine(&mixed[0], &mixed[1]) - want).abs() < 1e-4);
}

#[test]
fn deterministic_unit_vectors_that_match_the_encoder_and_are_cached() {
    let dir = tempfile::tempdir().unwrap();
    tiny::write(dir.path(), 9).unwrap();
    // Uncentred, so that a word's vector is the encoder's own.
    let opts = WordsOptions {
        hash_share: 0.0,
        centre: false,
        ..WordsOptions::default()
    };
    let e = WordsEmbedder::load_with(dir.path(), &opts).unwrap();
    let texts = [
        "gdpPerCapita by country and year",
        "sales",
        "",
        "2019, 42 ; 7",
    ];
    let a = e.embed(&texts).unwrap();
    assert!(unit(&a[0]) && unit(&a[1]));
    // Nothing but digits and punctuation: nothing to embed.
    assert_eq!(a[2], vec![0.0; tiny::HIDDEN]);
    assert_eq!(a[3], vec![0.0; tiny::HIDDEN]);
    // A single word is the encoder's own sentence vector of it.
    let bert = BertEmbedder::load(dir.path()).unwrap();
    let b = bert.embed(&["sales"]).unwrap();
    assert!(cosine(&a[1], &b[0]) > 0.99999);

    // One at a time, in another order, or by a new embedder reading the cache: the same.
    assert_eq!(
        e.embed(&[texts[1], texts[0]]).unwrap(),
        vec![a[1].clone(), a[0].clone()]
    );
    let cached = std::fs::metadata(dir.path().join(FILE)).unwrap().len();
    assert!(cached > 0);
    let again = WordsEmbedder::load_with(dir.path(), &opts).unwrap();
    assert_eq!(
        again.vectors.read().unwrap().len(),
        5,
        "gdp capita country year sales"
    );
    assert_eq!(again.embed(&texts).unwrap(), a);
    assert!(
        again.bert.lock().unwrap().is_none(),
        "all words cached: no model load"
    );
    assert_eq!(again.id(), e.id());
    // Known words add nothing to the file.
    assert_eq!(
        std::fs::metadata(dir.path().join(FILE)).unwrap().len(),
        cached
    );
}

#[test]
fn frequent_words_weigh_less_and_bad_settings_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    tiny::write(dir.path(), 9).unwrap();
    let e = WordsEmbedder::load(dir.path(), 0.0).unwrap();
    // "the" comes first in the tiny vocabulary, "scheme" last; other words are not in it.
    assert!(e.weight("the") < e.weight("scheme"));
    assert!(e.weight("scheme") < e.weight("precipitation"));
    let err = WordsEmbedder::load(dir.path(), 1.5)
        .unwrap_err()
        .to_string();
    assert!(err.contains("between 0 and 1"), "{err}");
    std::fs::remove_file(dir.path().join("config.json")).unwrap();
    let err = WordsEmbedder::load(dir.path(), 0.5)
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot read config.json"), "{err}");
}

#[test]
fn centring_takes_out_what_all_words_share() {
    let dir = tempfile::tempdir().unwrap();
    tiny_with_synonym(dir.path());
    let opts = WordsOptions {
        hash_share: 0.0,
        centre: false,
        ..WordsOptions::default()
    };
    let plain = WordsEmbedder::load_with(dir.path(), &opts).unwrap();
    assert!(plain.id().contains("-h0.00-nc-"), "{}", plain.id());
    let centred = WordsEmbedder::load(dir.path(), 0.0).unwrap();
    assert!(centred.id().contains("-h0.00-"), "{}", centred.id());
    let texts = ["rain", "weather", "sales", "daily rain by station"];
    let (p, c) = (plain.embed(&texts).unwrap(), centred.embed(&texts).unwrap());
    assert!(c.iter().all(|v| unit(v)));
    assert!(cosine(&c[0], &c[1]) > 0.9999);
    // The random tiny encoder's words all share one direction (cosine ~0.98): without
    // it they are far apart.
    assert!(cosine(&c[0], &c[2]) < cosine(&p[0], &p[2]) - 0.2);
    let sif = WordsOptions { sif: 0.0, ..opts };
    let err = WordsEmbedder::load_with(dir.path(), &sif)
        .unwrap_err()
        .to_string();
    assert!(err.contains("above 0"), "{err}");
}

#[test]
fn the_digest_samples_large_weights_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w");
    let mut bytes = vec![7u8; 10 << 20];
    std::fs::write(&path, &bytes).unwrap();
    let a = sample(&path).unwrap();
    assert_eq!(a.len(), 8 + SAMPLES as usize * SAMPLE_BYTES);
    // The first and the last byte are in it, and so is the length.
    for at in [0, bytes.len() - 1] {
        bytes[at] = 8;
        std::fs::write(&path, &bytes).unwrap();
        assert_ne!(sample(&path).unwrap(), a);
        bytes[at] = 7;
    }
    bytes.push(7);
    std::fs::write(&path, &bytes).unwrap();
    assert_ne!(sample(&path).unwrap(), a);
    // A small file is read whole.
    std::fs::write(&path, b"tiny").unwrap();
    assert_eq!(
        sample(&path).unwrap(),
        [&4u64.to_le_bytes()[..], b"tiny"].concat()
    );
}

#[test]
fn words_outside_the_vocabulary_can_be_left_to_the_hash_part() {
    let dir = tempfile::tempdir().unwrap();
    tiny::write(dir.path(), 9).unwrap();
    let opts = WordsOptions {
        hash_share: 0.0,
        oov: false,
        ..WordsOptions::default()
    };
    let e = WordsEmbedder::load_with(dir.path(), &opts).unwrap();
    assert!(e.id().contains("-v-"), "{}", e.id());
    // "rainfall" and "zzz" are not whole words of the tiny vocabulary.
    let v = e
        .embed(&["rainfall station zzz", "station", "rainfall"])
        .unwrap();
    assert!(cosine(&v[0], &v[1]) > 0.99999);
    assert_eq!(v[2], vec![0.0; tiny::HIDDEN]);
    assert!(!e.vectors.read().unwrap().contains_key("rainfall"));
}

#[test]
fn many_threads_meeting_the_same_new_words_neither_block_nor_disagree() {
    let dir = tempfile::tempdir().unwrap();
    tiny::write(dir.path(), 9).unwrap();
    let words = tiny::vocab();
    let texts: Vec<String> = (0..400)
        .map(|i| {
            let w = |k: usize| words[7 + (i * k + k) % 40].clone();
            format!("{} {}_{} z{}q", w(3), w(5), w(7), i % 23)
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let e = WordsEmbedder::load(dir.path(), 0.5).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(8)
        .build()
        .unwrap();
    // Batches of texts in parallel, as an index run embeds them.
    let parallel: Vec<Vec<f32>> = pool.install(|| {
        refs.par_chunks(8)
            .map(|c| e.embed(c).unwrap())
            .collect::<Vec<_>>()
            .concat()
    });
    let again = WordsEmbedder::load(dir.path(), 0.5).unwrap();
    let one_by_one: Vec<Vec<f32>> = refs
        .iter()
        .map(|t| again.embed(&[t]).unwrap().remove(0))
        .collect();
    for (a, b) in parallel.iter().zip(&one_by_one) {
        assert!(cosine(a, b) > 0.9999);
    }
    // Each word is in the cache file once: its size is the header and one record each.
    assert!(
        again.bert.lock().unwrap().is_none(),
        "all words were cached"
    );
    let known = again.vectors.read().unwrap();
    let records: usize = known.keys().map(|w| 1 + w.len() + 4 * tiny::HIDDEN).sum();
    let size = std::fs::metadata(dir.path().join(FILE)).unwrap().len();
    assert_eq!(size as usize, 8 + 64 + 4 + records);
}
