//! A retrieval development set of our own: one lake of public-agency folders (police,
//! transport, census, health, schools, weather, wildfire, labor, energy) with the files
//! such agencies publish, and questions grouped by the retrieval mechanism each one
//! exercises ([`Mechanism`]), each naming the files that answer it. Deterministic: the
//! same bytes on every run, written in well under a second.
//!
//! `lakestar bench devset OUT` writes it; `lakestar eval retrieval` measures it.

mod companions;
mod states;
mod tables;
mod yearly;

use serde::Serialize;
use std::io;
use std::path::{Path, PathBuf};

/// The retrieval mechanism a question exercises: the tasks' groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    /// A year range over a yearly collection: every member in the range.
    YearRange,
    /// One day: the member of a yearly collection whose dates cover it.
    OneDay,
    /// Files named by state: the named states' files (or every state's).
    ByState,
    /// A code column and its lookup table: the question names labels, not codes.
    Lookup,
    /// What a variable means: the data file and its codebook.
    Codebook,
    /// Shares and rates: the totals table (with the member the question names).
    Totals,
    /// Wide files with `period`, `value`, `type`, `file` columns must not win.
    CommonWords,
    /// The question's word is not the file's (`rainfall` for `precipitation`).
    Synonyms,
}

impl Mechanism {
    /// Every mechanism, in report order.
    pub const ALL: [Mechanism; 8] = [
        Mechanism::YearRange,
        Mechanism::OneDay,
        Mechanism::ByState,
        Mechanism::Lookup,
        Mechanism::Codebook,
        Mechanism::Totals,
        Mechanism::CommonWords,
        Mechanism::Synonyms,
    ];

    /// Its name in the task file (`year_range`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Mechanism::YearRange => "year_range",
            Mechanism::OneDay => "one_day",
            Mechanism::ByState => "by_state",
            Mechanism::Lookup => "lookup",
            Mechanism::Codebook => "codebook",
            Mechanism::Totals => "totals",
            Mechanism::CommonWords => "common_words",
            Mechanism::Synonyms => "synonyms",
        }
    }
}

/// One question and the files that answer it (paths relative to the lake).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DevTask {
    /// The question.
    pub query: String,
    /// The files that answer it.
    pub relevant: Vec<String>,
    /// The mechanism it exercises.
    pub mechanism: Mechanism,
}

/// What [`generate`] wrote.
#[derive(Debug, Clone)]
pub struct DevSet {
    /// The lake: `dir/lake`.
    pub lake: PathBuf,
    /// The task file: `dir/tasks.jsonl`, one `{"query", "relevant", "mechanism"}` a line.
    pub tasks_file: PathBuf,
    /// The tasks, in file order.
    pub tasks: Vec<DevTask>,
    /// Files written to the lake.
    pub files: u64,
    /// Bytes written to the lake.
    pub bytes: u64,
}

/// Write the lake under `dir/lake` and its tasks to `dir/tasks.jsonl`. A set written
/// before is replaced; any other existing `dir/lake` is refused, never deleted.
pub fn generate(dir: &Path) -> io::Result<DevSet> {
    let lake = dir.join("lake");
    let tasks_file = dir.join("tasks.jsonl");
    if lake.exists() {
        // Ours when the task file beside it is: a first line naming a mechanism.
        let ours = std::fs::read_to_string(&tasks_file).is_ok_and(|t| {
            t.lines()
                .next()
                .is_some_and(|l| l.contains("\"mechanism\":"))
        });
        if !ours {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} exists and is not a development set written before; remove it or choose another directory",
                    lake.display()
                ),
            ));
        }
        std::fs::remove_dir_all(&lake)?;
    }
    let mut b = Builder {
        root: lake.clone(),
        rng: fastrand::Rng::with_seed(16),
        written: Default::default(),
        bytes: 0,
        tasks: Vec::new(),
    };
    yearly::write(&mut b)?;
    states::write(&mut b)?;
    companions::write(&mut b)?;
    tables::write(&mut b)?;
    for t in &b.tasks {
        if let Some(p) = t.relevant.iter().find(|p| !b.written.contains(*p)) {
            return Err(io::Error::other(format!(
                "devset: {:?} names {p}, which was not written",
                t.query
            )));
        }
    }
    let mut jsonl = String::new();
    for t in &b.tasks {
        jsonl += &serde_json::to_string(t).map_err(io::Error::other)?;
        jsonl.push('\n');
    }
    std::fs::write(&tasks_file, jsonl)?;
    Ok(DevSet {
        lake,
        tasks_file,
        files: b.written.len() as u64,
        bytes: b.bytes,
        tasks: b.tasks,
    })
}

/// Writes files under the lake and records the questions about them.
struct Builder {
    root: PathBuf,
    rng: fastrand::Rng,
    written: std::collections::BTreeSet<String>,
    bytes: u64,
    tasks: Vec<DevTask>,
}

impl Builder {
    /// Write `body` at `rel` (folders created).
    fn write(&mut self, rel: &str, body: &str) -> io::Result<()> {
        let path = self.root.join(rel);
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        std::fs::write(&path, body)?;
        self.bytes += body.len() as u64;
        self.written.insert(rel.to_string());
        Ok(())
    }

    /// Write a CSV of `header` and `rows` lines at `rel`.
    fn csv(
        &mut self,
        rel: &str,
        header: &str,
        rows: impl IntoIterator<Item = String>,
    ) -> io::Result<()> {
        let mut s = format!("{header}\n");
        for r in rows {
            s += &r;
            s.push('\n');
        }
        self.write(rel, &s)
    }

    /// Record a question answered by `relevant`.
    fn ask(&mut self, mechanism: Mechanism, query: &str, relevant: &[&str]) {
        self.tasks.push(DevTask {
            query: query.to_string(),
            relevant: relevant.iter().map(|s| s.to_string()).collect(),
            mechanism,
        });
    }

    /// A number in `lo..hi`.
    fn int(&mut self, lo: u32, hi: u32) -> u32 {
        self.rng.u32(lo..hi)
    }

    /// A number in `lo..hi` with one decimal.
    fn dec(&mut self, lo: f64, hi: f64) -> String {
        format!("{:.1}", lo + self.rng.f64() * (hi - lo))
    }

    /// One of `items`.
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.rng.usize(..items.len())]
    }
}

/// `YYYY-MM-DD` of day `n` (0-based) of `year`.
fn day_of_year(year: i32, n: u32) -> String {
    let d = chrono::NaiveDate::from_yo_opt(year, 1).expect("valid year")
        + chrono::Duration::days(n as i64);
    d.format("%Y-%m-%d").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                    out.insert(rel, std::fs::read(&p).unwrap());
                }
            }
        }
        out
    }

    #[test]
    fn deterministic_complete_and_grouped() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let t0 = std::time::Instant::now();
        let set = generate(a.path()).unwrap();
        assert!(t0.elapsed().as_secs_f64() < 2.0, "{:?}", t0.elapsed());
        generate(b.path()).unwrap();
        // A rerun into the same directory replaces, not adds.
        let again = generate(a.path()).unwrap();
        assert_eq!(tree(a.path()), tree(b.path()));
        assert_eq!(again.files, set.files);
        // Someone else's `lake` is left alone.
        let c = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(c.path().join("lake")).unwrap();
        let e = generate(c.path()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert!(c.path().join("lake").is_dir());

        assert!(set.tasks.len() >= 50, "{} tasks", set.tasks.len());
        assert!(set.files >= 200, "{} files", set.files);
        for m in Mechanism::ALL {
            let n = set.tasks.iter().filter(|t| t.mechanism == m).count();
            assert!(n >= 4, "{} has {n} tasks", m.as_str());
        }
        for t in &set.tasks {
            assert!(!t.relevant.is_empty(), "{}", t.query);
            for p in &t.relevant {
                assert!(set.lake.join(p).is_file(), "{}: {p} missing", t.query);
            }
        }
        let mut queries: Vec<_> = set.tasks.iter().map(|t| &t.query).collect();
        queries.sort();
        queries.dedup();
        assert_eq!(queries.len(), set.tasks.len(), "a question asked twice");
    }

    #[test]
    fn the_task_file_reads_as_eval_tasks() {
        let dir = tempfile::tempdir().unwrap();
        let set = generate(dir.path()).unwrap();
        let text = std::fs::read_to_string(&set.tasks_file).unwrap();
        let tasks = crate::search::eval::read_tasks(&text).unwrap();
        assert_eq!(tasks.len(), set.tasks.len());
        assert_eq!(
            tasks[0].group.as_deref(),
            Some(set.tasks[0].mechanism.as_str())
        );
    }
}
