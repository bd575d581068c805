//! An object read by ranged requests (`Source::from_remote`) is described exactly as the
//! same bytes on disk, and costs what the analyzer reads, not the object's size (an
//! in-memory store).

use crate::analyze::{describe, Source};
use crate::store::{ObjectLake, BLOCK_SIZE};
use object_store::memory::InMemory;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutPayload};
use std::sync::Arc;

/// A lake over an in-memory store holding `objects` under `p/`.
fn lake(objects: &[(&str, Vec<u8>)]) -> Arc<ObjectLake> {
    let store = Arc::new(InMemory::new());
    let lake = ObjectLake::with_store("mem://b/p".into(), store.clone(), "p").unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for (key, body) in objects {
        let at = ObjectPath::from(format!("p/{key}"));
        rt.block_on(store.put(&at, PutPayload::from(body.clone())))
            .unwrap();
    }
    Arc::new(lake)
}

/// The description of `body` read from a file on disk, and read from `lake` by ranged
/// requests (never whole), as JSON; and the bytes that second read fetched.
fn both(lake: &Arc<ObjectLake>, key: &str, body: &[u8], budget: u64) -> (String, String, u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(key);
    std::fs::write(&path, body).unwrap();
    let local = Source::from_file(&path, body.len() as u64)
        .unwrap()
        .with_budget(Some(budget));
    let before = lake.fetched().get().0;
    let obj = Arc::new(lake.object(key, body.len() as u64));
    let remote = Source::from_remote(key, obj, 0)
        .unwrap()
        .with_budget(Some(budget));
    let json = |src: &Source| serde_json::to_string(&describe(src)).unwrap();
    let (l, r) = (json(&local), json(&remote));
    (l, r, lake.fetched().get().0 - before)
}

#[test]
fn listing_gives_keys_below_the_prefix_with_sizes_and_etags() {
    let lake = lake(&[("a.csv", b"x\n1\n".to_vec()), ("d/b.txt", b"hi\n".to_vec())]);
    let listed = lake.list().unwrap();
    let paths: Vec<_> = listed.iter().map(|l| (l.path.as_str(), l.size)).collect();
    assert_eq!(paths, [("a.csv", 4), ("d/b.txt", 3)]);
    assert!(listed.iter().all(|l| l.etag.is_some()));
}

#[test]
fn a_large_csv_object_is_described_as_on_disk_from_about_the_budget() {
    let body: String = (0..200_000)
        .map(|i| format!("{i},{},name-{}\n", i as f64 * 0.25, i % 13))
        .collect();
    let body = format!("id,value,name\n{body}").into_bytes();
    let lake = lake(&[("big.csv", body.clone())]);
    let budget = 256 * 1024;
    let (local, remote, fetched) = both(&lake, "big.csv", &body, budget);
    assert_eq!(local, remote);
    assert!(remote.contains("\"sampled_bytes\""), "sampled: {remote}");
    // The head, the budget's sample and the tail's block.
    assert!(
        fetched < budget + BLOCK_SIZE + 128 * 1024,
        "{fetched} of {}",
        body.len()
    );
}

#[test]
fn a_parquet_object_costs_its_footer_and_the_pages_read() {
    use parquet::data_type::Int64Type;
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    let schema = Arc::new(parse_message_type("message m { required int64 n; }").unwrap());
    let props = Arc::new(
        WriterProperties::builder()
            .set_dictionary_enabled(false)
            .build(),
    );
    let mut w = SerializedFileWriter::new(Vec::new(), schema, props).unwrap();
    for g in 0..4 {
        let mut rg = w.next_row_group().unwrap();
        let mut col = rg.next_column().unwrap().unwrap();
        let v: Vec<i64> = (0..1_000_000).map(|i| (i * 7919 + g) % 1_000_003).collect();
        col.typed::<Int64Type>()
            .write_batch(&v, None, None)
            .unwrap();
        col.close().unwrap();
        rg.close().unwrap();
    }
    let body = w.into_inner().unwrap();
    let lake = lake(&[("n.parquet", body.clone())]);
    // A budget below the decoded data: the footer and a record sample.
    let (local, remote, fetched) = both(&lake, "n.parquet", &body, 8 * 1024 * 1024);
    assert_eq!(local, remote);
    assert!(
        fetched < body.len() as u64 / 4,
        "{fetched} of {}",
        body.len()
    );
}
