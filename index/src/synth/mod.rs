//! Synthetic lakes for benchmarks and tests: N files of mixed formats with the kind of
//! names real lakes have (dates, station ids, quarters, regions), deterministic per seed;
//! [`messy`], one file per awkward layout real publishers use, with its facts; and
//! [`devset`], a lake of agency folders with retrieval questions grouped by mechanism.

pub mod devset;
pub mod messy;

use std::fmt::Write as _;
use std::io;
use std::path::Path;

const REGIONS: [&str; 6] = ["emea", "apac", "latam", "na", "anz", "mena"];
const SERVICES: [&str; 5] = ["checkout", "billing", "search", "auth", "ingest"];
const TOPICS: [&str; 5] = [
    "methodology",
    "data-dictionary",
    "changelog",
    "runbook",
    "glossary",
];
const TABLES: [&str; 5] = ["customers", "orders", "products", "inventory", "shipments"];

/// What [`generate`] wrote.
#[derive(Debug, Clone, Copy, Default)]
pub struct SynthLake {
    /// Files written.
    pub files: u64,
    /// Bytes written.
    pub bytes: u64,
}

fn date(rng: &mut fastrand::Rng) -> (u32, u32, u32) {
    (rng.u32(2015..2025), rng.u32(1..13), rng.u32(1..29))
}

/// Write `n` files under `root` (created if needed), deterministically from `seed`.
pub fn generate(root: &Path, n: u64, seed: u64) -> io::Result<SynthLake> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = SynthLake::default();
    for i in 0..n {
        let (rel, body) = file(&mut rng, i);
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, &body)?;
        out.files += 1;
        out.bytes += body.len() as u64;
    }
    Ok(out)
}

/// The relative path and content of the `i`-th synthetic file.
pub fn file(rng: &mut fastrand::Rng, i: u64) -> (String, Vec<u8>) {
    let (y, m, d) = date(rng);
    match rng.u32(0..100) {
        0..=24 => {
            let region = REGIONS[rng.usize(..REGIONS.len())];
            let q = rng.u32(1..5);
            let path = format!("sales/{y}/{region}/sales_{y}_q{q}_{region}_{i}.csv");
            let mut s = String::from(
                "order_id,order_date,customer_id,sku,quantity,unit_price_eur,channel\n",
            );
            for r in 0..rng.u32(20..120) {
                let _ = writeln!(
                    s,
                    "{},{y}-{:02}-{:02},C{:05},SKU-{:04},{},{}.{:02},{}",
                    i * 1000 + r as u64,
                    rng.u32(1..13),
                    rng.u32(1..29),
                    rng.u32(0..50000),
                    rng.u32(0..3000),
                    rng.u32(1..20),
                    rng.u32(1..500),
                    rng.u32(0..100),
                    ["web", "store", "phone"][rng.usize(..3)]
                );
            }
            (path, s.into_bytes())
        }
        25..=39 => {
            let station = rng.u32(1..700);
            let (y2, m2, d2) = (y, m, (d + 3).min(28));
            let path = format!("sensors/station-{station:04}/readings-{y}{m:02}{d:02}_to_{y2}{m2:02}{d2:02}_{i}.csv");
            let mut s = String::from("timestamp,temperature_c,humidity_pct,pressure_hpa,status\n");
            for h in 0..rng.u32(24..96) {
                let _ = writeln!(
                    s,
                    "{y}-{m:02}-{:02}T{:02}:00:00,{:.1},{},{:.1},{}",
                    d + h / 24,
                    h % 24,
                    rng.f32() * 40.0 - 5.0,
                    rng.u32(10..100),
                    950.0 + rng.f32() * 100.0,
                    ["ok", "ok", "ok", "degraded", "offline"][rng.usize(..5)]
                );
            }
            (path, s.into_bytes())
        }
        40..=54 => {
            let path = format!("events/{y}/{m:02}/events-{y}{m:02}{d:02}-{i}.jsonl");
            let mut s = String::new();
            for e in 0..rng.u32(10..60) {
                let _ = writeln!(
                    s,
                    r#"{{"event_id":{},"ts":"{y}-{m:02}-{d:02}T{:02}:{:02}:00Z","user":"u{}","type":"{}","amount":{},"tags":["{}"]}}"#,
                    i * 100 + e as u64,
                    rng.u32(0..24),
                    rng.u32(0..60),
                    rng.u32(0..9999),
                    ["click", "view", "purchase", "refund"][rng.usize(..4)],
                    rng.u32(0..10000) as f64 / 100.0,
                    REGIONS[rng.usize(..REGIONS.len())]
                );
            }
            (path, s.into_bytes())
        }
        55..=64 => {
            let svc = SERVICES[rng.usize(..SERVICES.len())];
            let path = format!("config/{svc}-{i}.json");
            let s = format!(
                r#"{{"service":"{svc}","version":"{}.{}.{}","replicas":{},"limits":{{"cpu":{},"memory_mb":{}}},"endpoints":[{{"path":"/v1/{svc}","timeout_ms":{}}}],"owner":"team-{}"}}"#,
                rng.u32(0..5),
                rng.u32(0..20),
                rng.u32(0..50),
                rng.u32(1..10),
                rng.u32(1..8),
                rng.u32(128..8192),
                rng.u32(100..5000),
                rng.u32(1..30)
            );
            (path, s.into_bytes())
        }
        65..=74 => {
            let topic = TOPICS[rng.usize(..TOPICS.len())];
            let path = format!("docs/{topic}-{i}.md");
            let mut s = format!("# {topic} {i}\n\nThis document describes the {topic} of dataset {i}, last revised {y}-{m:02}-{d:02}.\n\n");
            for sec in 1..=rng.u32(2..6) {
                let _ = write!(s, "## Section {sec}\n\nDetails about field group {sec}: values are reported monthly and revised quarterly.\n\n| field | unit | note |\n|---|---|---|\n| f{sec}a | eur | net |\n| f{sec}b | pct | gross |\n\n");
            }
            (path, s.into_bytes())
        }
        75..=84 => {
            let svc = SERVICES[rng.usize(..SERVICES.len())];
            let path = format!("logs/{svc}/{y}-{m:02}-{d:02}-{i}.log");
            let mut s = String::new();
            for _ in 0..rng.u32(20..80) {
                let _ = writeln!(
                    s,
                    "{y}-{m:02}-{d:02} {:02}:{:02}:{:02} {} {svc}: request handled in {} ms",
                    rng.u32(0..24),
                    rng.u32(0..60),
                    rng.u32(0..60),
                    ["INFO", "INFO", "WARN", "ERROR"][rng.usize(..4)],
                    rng.u32(1..900)
                );
            }
            (path, s.into_bytes())
        }
        85..=94 => {
            let table = TABLES[rng.usize(..TABLES.len())];
            let path = format!("exports/{table}/{table}_{y}{m:02}{d:02}_{i}.tsv");
            let mut s = String::from("id\tname\tcountry\tcreated\tscore\n");
            for r in 0..rng.u32(20..100) {
                let _ = writeln!(
                    s,
                    "{}\t{table}-{}\t{}\t{y}-{m:02}-{d:02}\t{:.3}",
                    r,
                    rng.u32(0..100000),
                    ["NL", "DE", "FR", "US", "GB", "JP"][rng.usize(..6)],
                    rng.f64()
                );
            }
            (path, s.into_bytes())
        }
        _ => {
            let path = format!("blobs/{:016x}.bin", rng.u64(..));
            let mut b = vec![0u8; rng.usize(512..4096)];
            rng.fill(&mut b);
            (path, b)
        }
    }
}
