//! Synthetic lakes for benchmarks and tests: N files of mixed formats with the kind of
//! names real lakes have (dates, station ids, quarters, regions), deterministic per seed;
//! [`messy`], one file per awkward layout real publishers use, with its facts; and
//! [`devset`], a lake of agency folders with retrieval questions grouped by mechanism.
//!
//! Two layouts of the same formats and contents: [`generate`], flat (`sales/{y}/{region}/`
//! holds thousands of files at 100k), kept byte for byte because the 10k and 100k
//! figures in BENCHMARKS.md come from it; and [`generate_scaled`], nested dated
//! folders with at most [`SCALED_MAX_PER_FOLDER`] files each whatever the size, for runs
//! of a million files and more.

pub mod devset;
pub mod messy;
mod scaled;

pub use scaled::{generate_scaled, Planned, ScaledLayout, SCALED_MAX_PER_FOLDER};

use std::fmt::Write as _;
use std::io;
use std::ops::Range;
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
const ENVS: [&str; 3] = ["prod", "staging", "dev"];
const TEAMS: [&str; 12] = [
    "finance",
    "marketing",
    "platform",
    "data-eng",
    "sales-ops",
    "research",
    "legal",
    "support",
    "hr",
    "security",
    "product",
    "analytics",
];
/// Sensor stations of the scaled layout, 35 to a site folder.
const STATIONS: u64 = 700;

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

/// Write `n` files under `root` (created if needed), deterministically from `seed`, in
/// the flat layout of [`file`]. Unchanged since the first benchmark figures: a test
/// pins its output.
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

/// The relative path and content of the `i`-th synthetic file of the flat layout.
pub fn file(rng: &mut fastrand::Rng, i: u64) -> (String, Vec<u8>) {
    let (y, m, d) = date(rng);
    match rng.u32(0..100) {
        0..=24 => {
            let region = REGIONS[rng.usize(..REGIONS.len())];
            let q = rng.u32(1..5);
            let path = format!("sales/{y}/{region}/sales_{y}_q{q}_{region}_{i}.csv");
            (path, sales_csv(rng, i, y, None))
        }
        25..=39 => {
            let station = rng.u32(1..700);
            let (y2, m2, d2) = (y, m, (d + 3).min(28));
            let path = format!("sensors/station-{station:04}/readings-{y}{m:02}{d:02}_to_{y2}{m2:02}{d2:02}_{i}.csv");
            (path, sensor_csv(rng, (y, m, d), 24..96))
        }
        40..=54 => {
            let path = format!("events/{y}/{m:02}/events-{y}{m:02}{d:02}-{i}.jsonl");
            (path, events_jsonl(rng, i, (y, m, d)))
        }
        55..=64 => {
            let svc = SERVICES[rng.usize(..SERVICES.len())];
            (format!("config/{svc}-{i}.json"), config_json(rng, svc))
        }
        65..=74 => {
            let topic = TOPICS[rng.usize(..TOPICS.len())];
            let path = format!("docs/{topic}-{i}.md");
            (path, doc_md(rng, topic, i, (y, m, d)))
        }
        75..=84 => {
            let svc = SERVICES[rng.usize(..SERVICES.len())];
            let path = format!("logs/{svc}/{y}-{m:02}-{d:02}-{i}.log");
            (path, log_text(rng, svc, (y, m, d)))
        }
        85..=94 => {
            let table = TABLES[rng.usize(..TABLES.len())];
            let path = format!("exports/{table}/{table}_{y}{m:02}{d:02}_{i}.tsv");
            (path, export_tsv(rng, table, (y, m, d)))
        }
        _ => {
            let path = format!("blobs/{:016x}.bin", rng.u64(..));
            (path, blob(rng))
        }
    }
}

/// Orders of year `y`: on the day `day` (month, day) when given, else on random days.
fn sales_csv(rng: &mut fastrand::Rng, i: u64, y: u32, day: Option<(u32, u32)>) -> Vec<u8> {
    let mut s =
        String::from("order_id,order_date,customer_id,sku,quantity,unit_price_eur,channel\n");
    for r in 0..rng.u32(20..120) {
        let (m, d) = day.unwrap_or_else(|| (rng.u32(1..13), rng.u32(1..29)));
        let _ = writeln!(
            s,
            "{},{y}-{m:02}-{d:02},C{:05},SKU-{:04},{},{}.{:02},{}",
            i * 1000 + r as u64,
            rng.u32(0..50000),
            rng.u32(0..3000),
            rng.u32(1..20),
            rng.u32(1..500),
            rng.u32(0..100),
            ["web", "store", "phone"][rng.usize(..3)]
        );
    }
    s.into_bytes()
}

/// Hourly readings from the start of day `(y, m, d)`, a number of hours in `hours`.
fn sensor_csv(rng: &mut fastrand::Rng, (y, m, d): (u32, u32, u32), hours: Range<u32>) -> Vec<u8> {
    let mut s = String::from("timestamp,temperature_c,humidity_pct,pressure_hpa,status\n");
    for h in 0..rng.u32(hours) {
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
    s.into_bytes()
}

fn events_jsonl(rng: &mut fastrand::Rng, i: u64, (y, m, d): (u32, u32, u32)) -> Vec<u8> {
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
    s.into_bytes()
}

fn config_json(rng: &mut fastrand::Rng, svc: &str) -> Vec<u8> {
    format!(
        r#"{{"service":"{svc}","version":"{}.{}.{}","replicas":{},"limits":{{"cpu":{},"memory_mb":{}}},"endpoints":[{{"path":"/v1/{svc}","timeout_ms":{}}}],"owner":"team-{}"}}"#,
        rng.u32(0..5),
        rng.u32(0..20),
        rng.u32(0..50),
        rng.u32(1..10),
        rng.u32(1..8),
        rng.u32(128..8192),
        rng.u32(100..5000),
        rng.u32(1..30)
    )
    .into_bytes()
}

fn doc_md(rng: &mut fastrand::Rng, topic: &str, i: u64, (y, m, d): (u32, u32, u32)) -> Vec<u8> {
    let mut s = format!("# {topic} {i}\n\nThis document describes the {topic} of dataset {i}, last revised {y}-{m:02}-{d:02}.\n\n");
    for sec in 1..=rng.u32(2..6) {
        let _ = write!(s, "## Section {sec}\n\nDetails about field group {sec}: values are reported monthly and revised quarterly.\n\n| field | unit | note |\n|---|---|---|\n| f{sec}a | eur | net |\n| f{sec}b | pct | gross |\n\n");
    }
    s.into_bytes()
}

fn log_text(rng: &mut fastrand::Rng, svc: &str, (y, m, d): (u32, u32, u32)) -> Vec<u8> {
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
    s.into_bytes()
}

fn export_tsv(rng: &mut fastrand::Rng, table: &str, (y, m, d): (u32, u32, u32)) -> Vec<u8> {
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
    s.into_bytes()
}

fn blob(rng: &mut fastrand::Rng) -> Vec<u8> {
    let mut b = vec![0u8; rng.usize(512..4096)];
    rng.fill(&mut b);
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, HashMap, HashSet};

    /// The flat layout's first files for seed 2025, the benches' seed: BENCHMARKS.md's
    /// 10k and 100k figures come from them.
    #[test]
    fn flat_layout_is_unchanged() {
        let mut rng = fastrand::Rng::with_seed(2025);
        let mut h = blake3::Hasher::new();
        for i in 0..3000 {
            let (path, body) = file(&mut rng, i);
            h.update(path.as_bytes());
            h.update(&body);
        }
        // Taken from the generator of the first figures (checked against a copy of it).
        assert_eq!(
            h.finalize().to_hex().as_str(),
            "b50a007da8324a924bb2f94488b266b0ec9f7de50738fae97ff749117f5ad94f"
        );
    }

    /// Every file's path and content hash under `root`.
    fn tree(root: &Path) -> BTreeMap<String, blake3::Hash> {
        let mut out = BTreeMap::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                    out.insert(rel, blake3::hash(&std::fs::read(&p).unwrap()));
                }
            }
        }
        out
    }

    #[test]
    fn scaled_is_deterministic_and_writes_what_it_plans() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            tmp.path().join("a"),
            tmp.path().join("b"),
            tmp.path().join("c"),
        );
        let made = generate_scaled(&a, 5000, 7).unwrap();
        generate_scaled(&b, 5000, 7).unwrap();
        generate_scaled(&c, 5000, 8).unwrap();
        let (ta, tb, tc) = (tree(&a), tree(&b), tree(&c));
        assert_eq!(made.files, 5000);
        assert_eq!(ta.len(), 5000, "names collide");
        assert_eq!(ta, tb, "same seed, same lake");
        assert_ne!(ta, tc, "another seed, another lake");
        let planned: Vec<String> = ScaledLayout::new(7).take(5000).map(|p| p.path()).collect();
        let written: Vec<&String> = ta.keys().collect();
        let mut planned_sorted: Vec<&String> = planned.iter().collect();
        planned_sorted.sort();
        assert_eq!(planned_sorted, written);
        let sum: u64 = ta
            .keys()
            .map(|k| std::fs::metadata(a.join(k)).unwrap().len())
            .sum();
        assert_eq!(sum, made.bytes);
    }

    #[test]
    fn scaled_folders_stay_small_dated_and_mixed() {
        let n = 20_000;
        let layout = ScaledLayout::new(2025);
        let plans: Vec<Planned> = layout.clone().take(n).collect();
        let mut per_dir: HashMap<&str, u32> = HashMap::new();
        let mut names = HashSet::new();
        let mut exts = HashSet::new();
        for p in &plans {
            *per_dir.entry(&p.dir).or_default() += 1;
            assert!(names.insert(p.path()), "{} twice", p.path());
            exts.insert(p.name.rsplit('.').next().unwrap().to_string());
        }
        let max = per_dir.values().max().copied().unwrap();
        assert!(max <= SCALED_MAX_PER_FOLDER, "{max} files in one folder");
        // Folders fill up rather than scatter (the flat layout, for contrast, has ~4,000
        // files in each sales/{y}/{region} folder at 1M).
        assert!(max > SCALED_MAX_PER_FOLDER / 2, "{max}");
        assert!(n / per_dir.len() >= 20, "{} folders", per_dir.len());
        // A folder is only started once: the next file of a kind never returns to it.
        assert_eq!(plans.iter().filter(|p| p.new_dir).count(), per_dir.len());
        for ext in ["csv", "jsonl", "json", "md", "log", "tsv", "bin"] {
            assert!(exts.contains(ext), "no .{ext}: {exts:?}");
        }
        // Nested dated folders: .../{yyyy}/{mm}/{dd}, the day in the file's name.
        let dated = |p: &&Planned| {
            let parts: Vec<&str> = p.dir.rsplit('/').take(3).collect();
            let [d, m, y] = parts[..] else { return false };
            let num = |s: &str, len| s.len() == len && s.bytes().all(|b| b.is_ascii_digit());
            num(y, 4)
                && num(m, 2)
                && num(d, 2)
                && (p.name.contains(&format!("{y}{m}{d}"))
                    || p.name.contains(&format!("{y}-{m}-{d}")))
        };
        let dated_count = plans.iter().filter(dated).count();
        assert!(dated_count > n / 2, "{dated_count} of {n} in dated folders");
        // Contents follow their folder's day: an events file's timestamps are its day's.
        let ev = plans.iter().find(|p| p.dir.starts_with("events/")).unwrap();
        let day = ev.dir["events/".len()..].replace('/', "-");
        let body = String::from_utf8(layout.body(ev)).unwrap();
        assert!(
            body.lines()
                .all(|l| l.contains(&format!("\"ts\":\"{day}T"))),
            "{body}"
        );
    }
}
