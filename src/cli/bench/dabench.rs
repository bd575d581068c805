//! `lakestar bench dabench`: InfiAgent-DABench questions through the agent, in one of the
//! loop's modes, graded by `bench::dabench`. Each graded question is appended to
//! `OUT/results.jsonl` as soon as it ends, so an interrupted run resumes (`--resume`);
//! `OUT/summary.json` and the printed table always cover the whole of `results.jsonl`.
//! `--split dev|test` runs a part of the committed split (`bench::dabench::Split`), which
//! each record and the summary name.

use super::{prepare_index, run_one};
use crate::agent::answer::adapt::Form;
use crate::agent::parse::Verdict;
use crate::agent::run::Mode;
use crate::bench::dabench::{self, Labels, Question, Record, Split};
use crate::cli::ask::{runtime, AgentArgs};
use crate::cli::UsageError;
use anyhow::{Context, Result};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Which loop answers, and how its files are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum BenchMode {
    /// DS-STAR's Algorithm 1 over retrieved files.
    DsStar,
    /// One coder call writes one script; it runs once; its output is the answer.
    SingleShot,
    /// Plan, code and run a few steps without verifier or router, then the finalyzer.
    NoVerifier,
    /// DS-STAR with the question's own file given instead of retrieved.
    OracleFiles,
}

impl BenchMode {
    fn loop_mode(self) -> Mode {
        match self {
            BenchMode::DsStar | BenchMode::OracleFiles => Mode::DsStar,
            BenchMode::SingleShot => Mode::SingleShot,
            BenchMode::NoVerifier => Mode::NoVerifier,
        }
    }

    fn name(self) -> &'static str {
        match self {
            BenchMode::OracleFiles => "oracle-files",
            m => m.loop_mode().as_str(),
        }
    }
}

/// `lakestar bench dabench`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct DabenchArgs {
    /// The DABench directory: da-dev-questions.jsonl, da-dev-labels.jsonl, da-dev-tables/.
    #[arg(long, value_name = "DIR", required_unless_present_all = ["questions", "labels", "tables"])]
    dabench: Option<PathBuf>,
    /// The questions file [default: DABENCH/da-dev-questions.jsonl].
    #[arg(long, value_name = "FILE")]
    questions: Option<PathBuf>,
    /// The labels file [default: DABENCH/da-dev-labels.jsonl].
    #[arg(long, value_name = "FILE")]
    labels: Option<PathBuf>,
    /// The tables directory, the lake [default: DABENCH/da-dev-tables].
    #[arg(long, value_name = "DIR")]
    tables: Option<PathBuf>,
    /// Output directory: runs/ID/, results.jsonl, summary.json.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Index of the tables [default: TABLES/.lakestar if present, else OUT/index, built
    /// on first use].
    #[arg(long, value_name = "DIR")]
    index: Option<PathBuf>,
    /// Only these question ids (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    ids: Vec<u64>,
    /// Only this split's questions (benches/dabench-split.json): dev to measure changes on,
    /// test to report.
    #[arg(long, value_parser = ["dev", "test"], conflicts_with_all = ["ids", "grade_only"])]
    split: Option<String>,
    /// Only questions of this level.
    #[arg(long, value_parser = ["easy", "medium", "hard"])]
    level: Option<String>,
    /// Run at most N questions (after --ids, --level and --resume).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Keep OUT/results.jsonl and skip the questions it already holds.
    #[arg(long)]
    resume: bool,
    /// Re-grade OUT/results.jsonl against the labels and summarize; run nothing.
    #[arg(long, conflicts_with_all = ["resume", "limit"])]
    grade_only: bool,
    /// The loop: DS-STAR or an ablation of it.
    #[arg(long, value_enum, default_value = "ds-star")]
    mode: BenchMode,
    #[command(flatten)]
    agent: AgentArgs,
}

/// The three inputs, from --dabench or given one by one.
fn inputs(a: &DabenchArgs) -> Result<(PathBuf, PathBuf, PathBuf)> {
    let pick = |given: &Option<PathBuf>, name: &str, flag: &str| -> Result<PathBuf> {
        given
            .clone()
            .or_else(|| a.dabench.as_ref().map(|d| d.join(name)))
            .ok_or_else(|| user(format!("pass --dabench DIR or --{flag}")))
    };
    Ok((
        pick(&a.questions, "da-dev-questions.jsonl", "questions")?,
        pick(&a.labels, "da-dev-labels.jsonl", "labels")?,
        pick(&a.tables, "da-dev-tables", "tables")?,
    ))
}

fn user<E: std::fmt::Display>(e: E) -> anyhow::Error {
    UsageError(e.to_string()).into()
}

/// The records of `results.jsonl` (none when it does not exist).
fn read_results(path: &Path) -> Result<Vec<Record>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(user(format!("cannot read {}: {e}", path.display()))),
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(l).map_err(|e| {
                user(format!(
                    "{} line {}: not a results line ({e}); remove the line or the file",
                    path.display(),
                    n + 1
                ))
            })
        })
        .collect()
}

/// Write `summary.json` over `records` and print the table.
fn summarize(out: &Path, records: &[Record]) -> Result<()> {
    let s = dabench::summarize(records);
    let path = out.join("summary.json");
    std::fs::write(&path, serde_json::to_string_pretty(&s)? + "\n")
        .with_context(|| format!("writing {}", path.display()))?;
    print!("{}", dabench::table(&s));
    let split = s
        .split
        .map(|s| format!(" of the {s} split"))
        .unwrap_or_default();
    eprintln!(
        "{} question(s){split} graded; results: {}",
        records.len(),
        out.join("results.jsonl").display()
    );
    Ok(())
}

pub(crate) fn run(a: DabenchArgs) -> Result<()> {
    let (questions_path, labels_path, tables) = inputs(&a)?;
    let labels = dabench::read_labels(&labels_path).map_err(user)?;
    let results = a.out.join("results.jsonl");
    if a.grade_only {
        let mut records = read_results(&results)?;
        if records.is_empty() {
            return Err(user(format!(
                "nothing to grade: {} holds no results",
                results.display()
            )));
        }
        for r in &mut records {
            let gold = labels.get(&r.id).ok_or_else(|| {
                user(format!(
                    "question {} has no label in {}",
                    r.id,
                    labels_path.display()
                ))
            })?;
            r.regrade(gold);
        }
        let mut text = String::new();
        for r in &records {
            text.push_str(&serde_json::to_string(r)?);
            text.push('\n');
        }
        std::fs::write(&results, text).with_context(|| format!("writing {}", results.display()))?;
        return summarize(&a.out, &records);
    }

    let split = a
        .split
        .as_deref()
        .map(str::parse::<Split>)
        .transpose()
        .map_err(user)?;
    let chosen = choose(&a, split, &questions_path, &labels, &results)?;
    if !tables.is_dir() {
        return Err(user(format!(
            "the tables directory {} is not a directory",
            tables.display()
        )));
    }
    std::fs::create_dir_all(&a.out)
        .map_err(|e| user(format!("cannot create --out {}: {e}", a.out.display())))?;
    let index_dir = prepare_index(&tables, a.index.clone(), &a.out.join("index"))?;
    let mut sink = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&results)
        .map_err(|e| user(format!("cannot write {}: {e}", results.display())))?;
    let rt = runtime()?;
    for q in &chosen {
        let run_dir = a.out.join("runs").join(q.id.to_string());
        eprintln!("question {} ({}): {}", q.id, q.level, q.question);
        let pinned = match a.mode {
            BenchMode::OracleFiles => vec![tables.join(&q.file_name)],
            _ => Vec::new(),
        };
        let mut request = a.agent.request(&q.prompt(), Some(q.guidelines()), pinned)?;
        request.limits.mode = a.mode.loop_mode();
        request.wanted = q.wanted();
        request.form = Form::Tagged;
        let (summary, stopped) = run_one(&rt, &a.agent, &index_dir, &request, &run_dir)?;
        let record = Record {
            id: q.id,
            level: q.level.clone(),
            mode: a.mode.name().to_string(),
            split,
            parts: dabench::grade(summary.answer.as_deref(), &labels[&q.id]),
            answer: summary.answer.clone(),
            status: serde_json::to_value(summary.status)?
                .as_str()
                .unwrap_or_default()
                .to_string(),
            llm_calls: summary.llm.calls,
            prompt_tokens: summary.llm.usage.prompt_tokens,
            completion_tokens: summary.llm.usage.completion_tokens,
            cached_tokens: summary.llm.usage.cached_tokens,
            prefix_reused_estimate: summary.llm.prefix_reused_estimate,
            answer_source: summary
                .answer_source
                .and_then(|s| serde_json::to_value(s).ok())
                .and_then(|v| v.as_str().map(str::to_string)),
            rounds: summary.rounds,
            iterated: summary.rounds > 1 || summary.verdicts.contains(&Verdict::Insufficient),
            verdicts: summary
                .verdicts
                .iter()
                .filter_map(|v| serde_json::to_value(v).ok())
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            duration_ms: summary.duration_ms,
            files: summary.files.clone(),
            run_dir: run_dir.clone(),
            error: stopped.as_ref().map(ToString::to_string),
            rules: summary.rules.on.spec(),
            rules_fired: summary
                .rules
                .fired
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
        };
        let right = record.parts.iter().filter(|p| p.right).count();
        eprintln!(
            "question {}: {right}/{} right; answer: {}",
            q.id,
            record.parts.len(),
            record.answer.as_deref().unwrap_or("(none)")
        );
        if let Some(e) = &stopped {
            eprintln!("question {}: stopped: {e}", q.id);
        }
        writeln!(sink, "{}", serde_json::to_string(&record)?)
            .and_then(|_| sink.flush())
            .with_context(|| format!("writing {}", results.display()))?;
    }
    summarize(&a.out, &read_results(&results)?)
}

/// The questions to run: by --ids or --split, and --level, less those already in
/// `results` with --resume, at most --limit. Without --resume, an existing
/// `results.jsonl` is refused rather than silently mixed with or replaced by the new run;
/// with it, one run by another split (or by none) is refused too, so that a summary covers
/// one split.
fn choose(
    a: &DabenchArgs,
    split: Option<Split>,
    path: &Path,
    labels: &Labels,
    results: &Path,
) -> Result<Vec<Question>> {
    let done: HashSet<u64> = if a.resume {
        let records = read_results(results)?;
        if let Some(r) = records.iter().find(|r| r.split != split) {
            let name = |s: Option<Split>| s.map_or("no".to_string(), |s| format!("the {s}"));
            return Err(user(format!(
                "{} holds question {} run by {} split, and this run is by {} split: choose another --out",
                results.display(),
                r.id,
                name(r.split),
                name(split)
            )));
        }
        records.iter().map(|r| r.id).collect()
    } else if results.exists() {
        return Err(user(format!(
            "{} exists: pass --resume to continue it, --grade-only to re-grade it, or choose another --out",
            results.display()
        )));
    } else {
        HashSet::new()
    };
    let all = dabench::read_questions(path).map_err(user)?;
    let (ids, flag) = match split {
        Some(s) => (
            dabench::split_ids(s).map_err(user)?,
            format!("--split {s} (benches/dabench-split.json, of DABench's questions)"),
        ),
        None => (a.ids.clone(), "--ids".to_string()),
    };
    if let Some(id) = ids.iter().find(|id| !all.iter().any(|q| q.id == **id)) {
        return Err(user(format!(
            "{flag}: no question {id} in {}",
            path.display()
        )));
    }
    let every_id = split.is_none() && a.ids.is_empty();
    let chosen: Vec<Question> = all
        .into_iter()
        .filter(|q| every_id || ids.contains(&q.id))
        .filter(|q| a.level.as_ref().is_none_or(|l| &q.level == l))
        .filter(|q| !done.contains(&q.id))
        .take(a.limit.unwrap_or(usize::MAX))
        .collect();
    if let Some(q) = chosen.iter().find(|q| !labels.contains_key(&q.id)) {
        return Err(user(format!(
            "question {} has no label in the labels file",
            q.id
        )));
    }
    if chosen.is_empty() && done.is_empty() {
        return Err(user(format!(
            "no question to run in {} with these filters",
            path.display()
        )));
    }
    Ok(chosen)
}
