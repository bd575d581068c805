//! Fixtures of every format the shared lakes lack, generated in code with real writers
//! (also used by `benches/describe.rs`, which includes this file by path).

#![allow(dead_code)]

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// Rows of the generated sales table.
pub const SALES_ROWS: usize = 1000;

fn sales_csv() -> String {
    let mut s = String::from("order_id,region,amount,order_date\n");
    for i in 0..SALES_ROWS {
        let region = ["emea", "apac", "na"][i % 3];
        s.push_str(&format!(
            "{i},{region},{}.{:02},2023-{:02}-{:02}\n",
            i % 500,
            i % 100,
            i % 12 + 1,
            i % 28 + 1
        ));
    }
    s
}

fn parquet(path: &Path) {
    use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    let schema = Arc::new(
        parquet::schema::parser::parse_message_type(
            "message sales { required int64 order_id; optional double amount; required binary region (UTF8); }",
        )
        .unwrap(),
    );
    let props = Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(fs::File::create(path).unwrap(), schema, props).unwrap();
    for group in 0..2 {
        let ids: Vec<i64> = (0..500).map(|i| group * 500 + i).collect();
        let amounts: Vec<f64> = (0..450).map(|i| i as f64 * 1.5).collect();
        let defs: Vec<i16> = (0..500).map(|i| if i % 10 == 0 { 0 } else { 1 }).collect();
        let regions: Vec<ByteArray> = (0..500)
            .map(|i| ByteArray::from(["emea", "apac", "na"][i % 3]))
            .collect();
        let mut rg = w.next_row_group().unwrap();
        let mut c = rg.next_column().unwrap().unwrap();
        c.typed::<Int64Type>()
            .write_batch(&ids, None, None)
            .unwrap();
        c.close().unwrap();
        let mut c = rg.next_column().unwrap().unwrap();
        c.typed::<DoubleType>()
            .write_batch(&amounts, Some(&defs), None)
            .unwrap();
        c.close().unwrap();
        let mut c = rg.next_column().unwrap().unwrap();
        c.typed::<ByteArrayType>()
            .write_batch(&regions, None, None)
            .unwrap();
        c.close().unwrap();
        rg.close().unwrap();
    }
    w.close().unwrap();
}

fn xlsx(path: &Path) {
    use rust_xlsxwriter::{Format, Workbook};
    let mut wb = Workbook::new();
    let s = wb.add_worksheet().set_name("Sales").unwrap();
    s.merge_range(0, 0, 0, 2, "Quarterly sales 2023", &Format::new())
        .unwrap();
    for (c, h) in ["region", "quarter", "revenue"].iter().enumerate() {
        s.write_string(2, c as u16, *h).unwrap();
    }
    for r in 0..40u32 {
        s.write_string(3 + r, 0, ["emea", "apac", "na", "latam"][r as usize % 4])
            .unwrap();
        s.write_number(3 + r, 1, (r % 4 + 1) as f64).unwrap();
        s.write_number(3 + r, 2, 1000.0 + r as f64 * 12.5).unwrap();
    }
    let t = wb.add_worksheet().set_name("Targets").unwrap();
    t.write_string(0, 0, "region").unwrap();
    t.write_string(0, 1, "target").unwrap();
    for r in 0..4u32 {
        t.write_string(1 + r, 0, ["emea", "apac", "na", "latam"][r as usize])
            .unwrap();
        t.write_number(1 + r, 1, 5000.0).unwrap();
    }
    wb.save(path).unwrap();
}

fn sqlite(path: &Path) {
    let db = rusqlite::Connection::open(path).unwrap();
    db.execute_batch(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT);
         CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, total DECIMAL(10,2), placed TEXT);
         CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 100;",
    )
    .unwrap();
    for i in 0..100i64 {
        db.execute(
            "INSERT INTO customers VALUES (?1, ?2, ?3)",
            rusqlite::params![i, format!("c{i}"), ["NL", "DE", "FR"][i as usize % 3]],
        )
        .unwrap();
    }
    for i in 0..250i64 {
        db.execute(
            "INSERT INTO orders VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![
                i,
                i % 100,
                (i * 3) as f64 + 0.5,
                format!("2022-{:02}-{:02}", i % 12 + 1, i % 28 + 1)
            ],
        )
        .unwrap();
    }
}

const HTML: &str = "<!doctype html><html><head><title>Rates 2024</title><style>p{}</style></head><body>
<h1>Exchange rates</h1><p>Daily reference rates.</p>
<table><caption>EUR rates</caption><tr><th>currency</th><th>rate</th></tr>
<tr><td>USD</td><td>1.08</td></tr><tr><td>GBP</td><td>0.85</td></tr><tr><td>JPY</td><td>161.2</td></tr></table>
<h2>Volumes</h2>
<table id=\"volumes\"><tr><td>day</td><td>volume</td></tr><tr><td>2024-01-02</td><td>120</td></tr><tr><td>2024-01-03</td><td>95</td></tr></table>
<script>var x = 1;</script></body></html>";

fn npy_bytes(descr: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let shape_s = match shape {
        [n] => format!("({n},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_s}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

const STATION: &str = "# Station: De Bilt (260)
# Source: daily observations

YYYYMMDD    TG    RH  STATUS
            degC  mm
20190301   6.5   0.0  ok
20190302   8.1   2.3  ok
20190303   7.9  12.0  rain
20190304   5.0   0.1  ok
";

/// Write one fixture of every generated format into `dir`.
pub fn write_all(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    let csv = sales_csv();
    parquet(&dir.join("sales.parquet"));
    xlsx(&dir.join("report.xlsx"));
    sqlite(&dir.join("shop.sqlite"));
    fs::write(dir.join("rates.html"), HTML).unwrap();

    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(csv.as_bytes()).unwrap();
    fs::write(dir.join("sales.csv.gz"), gz.finish().unwrap()).unwrap();
    fs::write(
        dir.join("sales.csv.zst"),
        zstd::encode_all(csv.as_bytes(), 3).unwrap(),
    )
    .unwrap();

    let mut zw = zip::ZipWriter::new(fs::File::create(dir.join("bundle.zip")).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zw.add_directory("data/", opts).unwrap();
    zw.start_file("data/sales.csv", opts).unwrap();
    zw.write_all(csv.as_bytes()).unwrap();
    zw.start_file("meta.json", opts).unwrap();
    zw.write_all(br#"[{"k":1},{"k":2}]"#).unwrap();
    zw.finish().unwrap();

    let tgz = flate2::write::GzEncoder::new(
        fs::File::create(dir.join("bundle.tar.gz")).unwrap(),
        flate2::Compression::fast(),
    );
    let mut tb = tar::Builder::new(tgz);
    for (name, body) in [
        ("a/sales.csv", csv.as_bytes()),
        ("a/notes.md", b"# Notes\n\nText.\n".as_slice()),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(body.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        tb.append_data(&mut h, name, body).unwrap();
    }
    tb.into_inner().unwrap().finish().unwrap();

    let floats: Vec<u8> = (0..6).flat_map(|i| (i as f64).to_le_bytes()).collect();
    fs::write(dir.join("weights.npy"), npy_bytes("<f8", &[2, 3], &floats)).unwrap();
    let ints: Vec<u8> = (0..5i32).flat_map(|i| i.to_le_bytes()).collect();
    let mut zw = zip::ZipWriter::new(fs::File::create(dir.join("arrays.npz")).unwrap());
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zw.start_file("x.npy", stored).unwrap();
    zw.write_all(&npy_bytes("<i4", &[5], &ints)).unwrap();
    zw.start_file("w.npy", stored).unwrap();
    zw.write_all(&npy_bytes("<f8", &[2, 3], &floats)).unwrap();
    zw.finish().unwrap();

    fs::write(dir.join("station.txt"), STATION).unwrap();
    let mut utf16 = vec![0xFF, 0xFE];
    for u in "city,pop\nLi\u{e8}ge,197000\nGent,265000\n".encode_utf16() {
        utf16.extend_from_slice(&u.to_le_bytes());
    }
    fs::write(dir.join("cities-utf16.csv"), utf16).unwrap();
    fs::write(
        dir.join("cities-latin1.csv"),
        b"city,pop\nLi\xe8ge,197000\nGen\xe8ve,203000\n",
    )
    .unwrap();
    fs::write(
        dir.join("with-preamble.csv"),
        format!("Sales export\nGenerated 2024-01-05\n\n{csv}"),
    )
    .unwrap();
    fs::write(dir.join("config.yaml"), "service: api\nreplicas: 3\nlimits:\n  cpu: 2\n  memory_mb: 512\nendpoints:\n  - path: /v1\n  - path: /v2\n").unwrap();
    fs::write(dir.join("settings.toml"), "title = \"lake\"\n[[source]]\nname = \"a\"\nrows = 10\n[[source]]\nname = \"b\"\nrows = 20\n").unwrap();
    fs::write(dir.join("catalog.xml"), "<?xml version=\"1.0\"?><catalog><book id=\"b1\"><title>A</title></book><book id=\"b2\"><title>B</title></book></catalog>").unwrap();
    // A PNG header: signature and IHDR (width 640, height 480).
    let mut png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR".to_vec();
    png.extend_from_slice(&640u32.to_be_bytes());
    png.extend_from_slice(&480u32.to_be_bytes());
    png.extend_from_slice(&[8, 2, 0, 0, 0, 0, 0, 0, 0]);
    fs::write(dir.join("chart.png"), png).unwrap();
}
