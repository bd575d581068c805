//! The scaled layout: nested dated folders of bounded size, for lakes of a million
//! files and more (see the parent module).

use super::*;
use rayon::prelude::*;

/// Files per folder at most in the scaled layout: each leaf folder takes between half
/// this and this many files (as real daily partitions vary), then the next day or
/// partition starts, so the bound holds at any size.
pub const SCALED_MAX_PER_FOLDER: u32 = 256;

/// The kinds of file, with their share (percent) of a lake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sales,
    Sensors,
    Events,
    Config,
    Docs,
    Logs,
    Exports,
    Blobs,
}

impl Kind {
    /// The same shares as the flat layout.
    fn pick(roll: u32) -> Kind {
        match roll {
            0..=24 => Kind::Sales,
            25..=39 => Kind::Sensors,
            40..=54 => Kind::Events,
            55..=64 => Kind::Config,
            65..=74 => Kind::Docs,
            75..=84 => Kind::Logs,
            85..=94 => Kind::Exports,
            _ => Kind::Blobs,
        }
    }

    /// Leaf folders per day (per month for sensors, per quarter for docs): regions,
    /// stations, environments × services, teams, services, tables.
    fn partitions(self) -> u64 {
        match self {
            Kind::Sales => REGIONS.len() as u64,
            Kind::Sensors => STATIONS,
            Kind::Config => (ENVS.len() * SERVICES.len()) as u64,
            Kind::Docs => TEAMS.len() as u64,
            Kind::Logs => SERVICES.len() as u64,
            Kind::Exports => TABLES.len() as u64,
            Kind::Events | Kind::Blobs => 1,
        }
    }
}

/// SplitMix64's finalizer: a bijection of u64, so distinct inputs give distinct names.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The date `days` after 2015-01-01.
fn day_date(days: u64) -> (u32, u32, u32) {
    use chrono::Datelike;
    let start = chrono::NaiveDate::from_ymd_opt(2015, 1, 1).expect("valid date");
    let d = start
        .checked_add_days(chrono::Days::new(days))
        .unwrap_or(start);
    (d.year() as u32, d.month(), d.day())
}

fn month_days(y: u32, m: u32) -> u32 {
    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    let first = |y: u32, m: u32| chrono::NaiveDate::from_ymd_opt(y as i32, m, 1);
    match (first(y, m), first(ny, nm)) {
        (Some(a), Some(b)) => (b - a).num_days() as u32,
        _ => 28,
    }
}

/// The leaf folder a kind is filling and how many files it takes.
#[derive(Debug, Clone, Copy, Default)]
struct Fill {
    leaf: u64,
    used: u32,
    size: u32,
}

/// One file of the scaled layout, planned: where it goes, without its content, so that
/// the layout can be walked (and tested) without writing or generating anything.
#[derive(Debug, Clone)]
pub struct Planned {
    /// Folder, relative to the lake's root, `/`-separated.
    pub dir: String,
    /// File name.
    pub name: String,
    /// The first file of its folder (which must be created).
    pub new_dir: bool,
    i: u64,
    kind: Kind,
    date: (u32, u32, u32),
    pick: usize,
}

impl Planned {
    /// Path relative to the lake's root.
    pub fn path(&self) -> String {
        format!("{}/{}", self.dir, self.name)
    }
}

/// The scaled layout: an endless, deterministic sequence of [`Planned`] files (take as
/// many as wanted) and their contents by [`ScaledLayout::body`]. Each kind fills its
/// folders in date order, as a lake written day after day: `sales/{region}/{y}/{m}/{d}/`,
/// `sensors/site-{s}/station-{id}/{y}/{m}/` (one file a day), `events/{y}/{m}/{d}/`,
/// `config/{env}/{service}/{y}/{m}/{d}/`, `docs/{team}/{y}/Q{q}/`,
/// `logs/{service}/{y}/{m}/{d}/`, `exports/{table}/{y}/{m}/{d}/`, and content-addressed
/// `blobs/{aa}/{bb}/`. A bigger lake is a longer history, not fuller folders. Memory is
/// one counter per kind.
#[derive(Debug, Clone)]
pub struct ScaledLayout {
    seed: u64,
    layout: fastrand::Rng,
    next: u64,
    fills: [Option<Fill>; 8],
}

impl ScaledLayout {
    /// The layout for `seed`.
    pub fn new(seed: u64) -> ScaledLayout {
        ScaledLayout {
            seed,
            layout: fastrand::Rng::with_seed(seed),
            next: 0,
            fills: [None; 8],
        }
    }

    /// Files a leaf folder takes: a month's days for a station, else between half of
    /// [`SCALED_MAX_PER_FOLDER`] and all of it, from the seed.
    fn leaf_size(&self, kind: Kind, leaf: u64) -> u32 {
        if kind == Kind::Sensors {
            let (y, m, _) = day_date(self.month_start(leaf / STATIONS));
            return month_days(y, m);
        }
        let half = SCALED_MAX_PER_FOLDER / 2;
        let h = mix(self.seed ^ ((kind as u64) << 56) ^ leaf);
        half + (h % (half as u64 + 1)) as u32
    }

    /// Days from 2015-01-01 to the first of the `months`-th month.
    fn month_start(&self, months: u64) -> u64 {
        let (y, m) = (2015 + months / 12, months % 12 + 1);
        let d = chrono::NaiveDate::from_ymd_opt(y as i32, m as u32, 1)
            .zip(chrono::NaiveDate::from_ymd_opt(2015, 1, 1))
            .map_or(0, |(a, b)| (a - b).num_days());
        d as u64
    }

    /// The content of a planned file: a function of the seed and the plan alone, so
    /// bodies can be made in any order or in parallel.
    pub fn body(&self, p: &Planned) -> Vec<u8> {
        let mut rng = fastrand::Rng::with_seed(mix(self.seed ^ mix(p.i)));
        let (y, m, d) = p.date;
        match p.kind {
            Kind::Sales => sales_csv(&mut rng, p.i, y, Some((m, d))),
            Kind::Sensors => sensor_csv(&mut rng, p.date, 24..25),
            Kind::Events => events_jsonl(&mut rng, p.i, p.date),
            Kind::Config => config_json(&mut rng, SERVICES[p.pick % SERVICES.len()]),
            Kind::Docs => doc_md(&mut rng, TOPICS[p.pick], p.i, p.date),
            Kind::Logs => log_text(&mut rng, SERVICES[p.pick], p.date),
            Kind::Exports => export_tsv(&mut rng, TABLES[p.pick], p.date),
            Kind::Blobs => blob(&mut rng),
        }
    }
}

impl Iterator for ScaledLayout {
    type Item = Planned;

    fn next(&mut self) -> Option<Planned> {
        let i = self.next;
        self.next += 1;
        let kind = Kind::pick(self.layout.u32(0..100));
        let topic = self.layout.usize(..TOPICS.len());
        let k = kind as usize;
        let (fill, new_dir) = match self.fills[k] {
            Some(f) if f.used < f.size => (f, false),
            prev => {
                let leaf = prev.map_or(0, |f| f.leaf + 1);
                let size = self.leaf_size(kind, leaf);
                (
                    Fill {
                        leaf,
                        used: 0,
                        size,
                    },
                    true,
                )
            }
        };
        self.fills[k] = Some(Fill {
            used: fill.used + 1,
            ..fill
        });
        let slot = fill.used;
        let (part, period) = (fill.leaf % kind.partitions(), fill.leaf / kind.partitions());
        // Each kind's history starts on its own day of 2015-2016.
        let day0 = mix(self.seed ^ k as u64) % 730;
        let (y, m, d) = day_date(day0 + period);
        let (dir, name, date, pick) = match kind {
            Kind::Sales => {
                let r = REGIONS[part as usize];
                (
                    format!("sales/{r}/{y}/{m:02}/{d:02}"),
                    format!("orders_{r}_{y}-{m:02}-{d:02}_store-{:03}.csv", slot + 1),
                    (y, m, d),
                    0,
                )
            }
            Kind::Sensors => {
                let (y, m, _) = day_date(self.month_start(period));
                let station = part + 1;
                let site = part / 35 + 1;
                let d = slot + 1;
                (
                    format!("sensors/site-{site:02}/station-{station:04}/{y}/{m:02}"),
                    format!("station-{station:04}_{y}{m:02}{d:02}.csv"),
                    (y, m, d),
                    0,
                )
            }
            Kind::Events => (
                format!("events/{y}/{m:02}/{d:02}"),
                format!("events-{y}{m:02}{d:02}-part-{slot:04}.jsonl"),
                (y, m, d),
                0,
            ),
            Kind::Config => {
                let (env, svc) = (
                    ENVS[part as usize / SERVICES.len()],
                    part as usize % SERVICES.len(),
                );
                let name = SERVICES[svc];
                (
                    format!("config/{env}/{name}/{y}/{m:02}/{d:02}"),
                    format!("{name}.{env}.deploy-{:03}.json", slot + 1),
                    (y, m, d),
                    svc,
                )
            }
            Kind::Docs => {
                let team = TEAMS[part as usize];
                let y = 2015 + (period / 4) as u32;
                let q = (period % 4) as u32 + 1;
                let topic_name = TOPICS[topic];
                (
                    format!("docs/{team}/{y}/Q{q}"),
                    format!("{topic_name}_{team}_{y}Q{q}_r{:03}.md", slot + 1),
                    (y, 3 * q - 2 + slot % 3, slot % 28 + 1),
                    topic,
                )
            }
            Kind::Logs => {
                let svc = SERVICES[part as usize];
                (
                    format!("logs/{svc}/{y}/{m:02}/{d:02}"),
                    format!(
                        "{svc}-node{:02}-{y}{m:02}{d:02}T{:02}.log",
                        slot / 24 + 1,
                        slot % 24
                    ),
                    (y, m, d),
                    part as usize,
                )
            }
            Kind::Exports => {
                let table = TABLES[part as usize];
                (
                    format!("exports/{table}/{y}/{m:02}/{d:02}"),
                    format!("{table}_{y}{m:02}{d:02}_part{slot:04}.tsv"),
                    (y, m, d),
                    part as usize,
                )
            }
            Kind::Blobs => (
                format!("blobs/{:02x}/{:02x}", fill.leaf / 256, fill.leaf % 256),
                format!("{:016x}.bin", mix(self.seed ^ 0xb10b ^ i)),
                (y, m, d),
                0,
            ),
        };
        Some(Planned {
            dir,
            name,
            new_dir,
            i,
            kind,
            date,
            pick,
        })
    }
}

/// Write `n` files under `root` (created if needed) in the scaled layout
/// ([`ScaledLayout`]), deterministically from `seed`. Streams: files are planned 4096 at
/// a time and written in parallel (rayon's pool), so memory does not grow with `n`.
pub fn generate_scaled(root: &Path, n: u64, seed: u64) -> io::Result<SynthLake> {
    const CHUNK: u64 = 4096;
    let mut layout = ScaledLayout::new(seed);
    let mut out = SynthLake::default();
    std::fs::create_dir_all(root)?;
    let mut done = 0;
    while done < n {
        let chunk: Vec<Planned> = layout.by_ref().take(CHUNK.min(n - done) as usize).collect();
        for p in chunk.iter().filter(|p| p.new_dir) {
            std::fs::create_dir_all(root.join(&p.dir))?;
        }
        let layout = &layout;
        out.bytes += chunk
            .par_iter()
            .map(|p| {
                let body = layout.body(p);
                std::fs::write(root.join(&p.dir).join(&p.name), &body)?;
                Ok::<u64, io::Error>(body.len() as u64)
            })
            .try_reduce(|| 0, |a, b| Ok(a + b))?;
        out.files += chunk.len() as u64;
        done += chunk.len() as u64;
    }
    Ok(out)
}
