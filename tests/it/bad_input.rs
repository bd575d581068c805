//! Bad input, all in one lake: each file gets a per-file error or a degraded but true
//! description, nothing panics, and the good files next to them are described.

use crate::common::*;
use serde_json::Value;
use std::fs;
use std::io::Write;

#[test]
fn a_lake_of_bad_files_is_indexed_file_by_file() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fs::create_dir_all(&lake).unwrap();
    fs::write(lake.join("good.csv"), "id,v\n1,a\n2,b\n3,c\n").unwrap();

    // A gzip cut in half.
    let csv: String = (0..20_000)
        .map(|i| format!("{i},name {i},{}\n", i * 7))
        .collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"id,name,score\n").unwrap();
    gz.write_all(csv.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    fs::write(lake.join("cut.csv.gz"), &gz[..gz.len() / 2]).unwrap();

    // Invalid UTF-8 in a table, an empty file, garbage with a JSON name.
    fs::write(
        lake.join("broken-utf8.csv"),
        b"name,city\nJos\xe9,Li\xe8ge\nAnn,Gent\n",
    )
    .unwrap();
    fs::write(lake.join("empty.csv"), b"").unwrap();
    fs::write(
        lake.join("garbage.json"),
        (0..5000u32)
            .map(|i| (i * 31 % 256) as u8)
            .collect::<Vec<u8>>(),
    )
    .unwrap();

    // A 200 MB file on one line.
    let mut f = fs::File::create(lake.join("one-line.txt")).unwrap();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..200 {
        f.write_all(&chunk).unwrap();
    }
    f.write_all(b"\n").unwrap();
    drop(f);

    // A compression bomb: 512 MiB of zeros in a few KB.
    let mut z = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..512 {
        z.write_all(&zeros).unwrap();
    }
    fs::write(lake.join("bomb.csv.zst"), z.finish().unwrap()).unwrap();

    let v = index_json(&lake, &[]);
    assert_counts(&v, &[("files_seen", 7), ("added", 7)]);

    let st: Value = serde_json::from_str(&run_ok(&lake, &["status", "--json"])).unwrap();
    assert_eq!(st["files"], 7);
    let describe = |f: &str| -> Value {
        serde_json::from_str(&run_ok(&lake, &["describe", f, "--json"])).unwrap()
    };

    let good = describe("good.csv");
    assert_eq!(good["description"]["content"]["rows"], 3);

    let cut = describe("cut.csv.gz");
    let a = &cut["description"]["content"];
    assert_eq!(a["container"], "gzip");
    assert!(a["notes"].to_string().contains("trunc"), "{a}");
    let inner_rows = a["described"][0][1]["content"]["rows"].as_u64().unwrap();
    assert!(inner_rows > 1000 && inner_rows < 20_000, "{inner_rows}");

    let latin = describe("broken-utf8.csv");
    assert_eq!(
        latin["description"]["content"]["columns"][0]["examples"][0],
        "Jos\u{e9}"
    );

    assert_eq!(describe("empty.csv")["format"], "empty");
    assert_eq!(describe("garbage.json")["format"], "binary");

    let long = describe("one-line.txt");
    let t = &long["description"]["content"];
    assert_eq!(t["truncated"], true);
    assert_eq!(long["size"], 200 * (1 << 20) + 1);

    let bomb = describe("bomb.csv.zst");
    let notes = bomb["description"]["content"]["notes"].to_string();
    assert!(notes.contains("decompressed the first 67.1 MB"), "{notes}");

    // Nothing failed so hard that the run lost a file; the catalog is whole.
    check_catalog(&lake.join(".lakestar"));
}
