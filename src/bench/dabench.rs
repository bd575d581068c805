//! InfiAgent-DABench: its question and label files, and its grading.
//!
//! An answer holds `@name[value]` sub-answers (the question's `format`). Each gold
//! `(name, value)` is right when the answer has that name with an equal value: numbers
//! after rounding the answer to the gold's decimals, anything else compared without case
//! or whitespace. A name given twice counts by its last value, in the answer and in the
//! gold alike, as the benchmark's dictionaries do (a question's labels may repeat a name). Three scores, as the benchmark reports them:
//! ABQ (questions with every sub-answer right), PASQ (the mean over questions of the share
//! of their sub-answers right) and UASQ (all sub-answers pooled), each in percent.
//!
//! The questions are split in two ([`Split`]): `dev`, the subset changes are measured on,
//! and `test`, a sample drawn once by a committed seed from the questions over tables no
//! dev question uses, run only to report. Both live in `benches/dabench-split.json`,
//! embedded here; [`draw_test`] draws the test sample again from the questions and seed.

use crate::agent::answer::Wanted;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// The benchmark's files could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is not what the file should hold.
    #[error("{} line {line}: {message}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// Its line number, from 1.
        line: usize,
        /// What is wrong and what the line needs.
        message: String,
    },
    /// The split file cannot be read or the split cannot be drawn.
    #[error("DABench split: {0}")]
    Split(String),
}

/// One question of `da-dev-questions.jsonl`.
#[derive(Debug, Clone, Deserialize)]
pub struct Question {
    /// Its id.
    pub id: u64,
    /// The question.
    pub question: String,
    /// How the answer must be computed.
    #[serde(default)]
    pub constraints: String,
    /// The `@name[value]` format of the answer.
    #[serde(default)]
    pub format: String,
    /// The table it is about (in the tables directory).
    pub file_name: String,
    /// easy, medium or hard.
    #[serde(default)]
    pub level: String,
}

impl Question {
    /// What the agent is asked: the question with its constraints.
    pub fn prompt(&self) -> String {
        if self.constraints.trim().is_empty() {
            self.question.clone()
        } else {
            format!(
                "{}\n\nConstraints:\n{}",
                self.question,
                self.constraints.trim()
            )
        }
    }

    /// The values its format asks for by name, in order: every `@name[what]` of the
    /// question and its format.
    pub fn wanted(&self) -> Vec<Wanted> {
        let mut out: Vec<Wanted> = Vec::new();
        for w in answer_names(&self.prompt())
            .into_iter()
            .chain(answer_names(&self.format))
        {
            if out.iter().all(|o| o.name != w.name) {
                out.push(w);
            }
        }
        out
    }

    /// The answer guidelines: the format, and how sub-answers are written.
    pub fn guidelines(&self) -> String {
        format!(
            "Answer in this format, each value in the brackets of its @name[...]:\n{}",
            self.format.trim()
        )
    }
}

/// Every `@name[what]` of `text`, in order: DABench's answer form, read here at the edge
/// so that the agent gets names, not syntax. `@name[...]` is how instructions write the
/// form itself, not a value.
pub fn answer_names(text: &str) -> Vec<Wanted> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        let after = &rest[at + 1..];
        let len = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let generic = ["[...]", "[…]"].iter().any(|g| after[len..].starts_with(g));
        if len > 0 && after[len..].starts_with('[') && !generic {
            let inside = &after[len + 1..];
            let what = inside.find(']').map_or("", |end| &inside[..end]);
            if let Ok(w) = Wanted::new(&after[..len], Some(what)) {
                names.push(w);
            }
        }
        rest = &after[len..];
    }
    names
}

#[derive(Deserialize)]
struct LabelLine {
    id: u64,
    common_answers: Vec<(String, String)>,
}

/// The gold sub-answers of each question id.
pub type Labels = BTreeMap<u64, Vec<(String, String)>>;

fn read_lines<T: for<'de> Deserialize<'de>>(path: &Path, what: &str) -> Result<Vec<T>, BenchError> {
    let text = std::fs::read_to_string(path).map_err(|source| BenchError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(line).map_err(|e| BenchError::Line {
            path: path.to_path_buf(),
            line: n + 1,
            message: format!("not a DABench {what} ({e})"),
        })?);
    }
    Ok(out)
}

/// The questions of a questions file, in file order.
pub fn read_questions(path: &Path) -> Result<Vec<Question>, BenchError> {
    read_lines(path, "question: it needs id, question, file_name")
}

/// The labels of a labels file.
pub fn read_labels(path: &Path) -> Result<Labels, BenchError> {
    Ok(
        read_lines::<LabelLine>(path, "label: it needs id and common_answers")?
            .into_iter()
            .map(|l| (l.id, l.common_answers))
            .collect(),
    )
}

/// A part of the questions: `dev` to measure changes on, `test` to report only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    /// The questions changes are measured on.
    Dev,
    /// The held-out questions, over tables no dev question uses.
    Test,
}

impl Split {
    /// Its name: `dev` or `test`.
    pub fn as_str(self) -> &'static str {
        match self {
            Split::Dev => "dev",
            Split::Test => "test",
        }
    }
}

impl std::fmt::Display for Split {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Split {
    type Err = BenchError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "dev" => Ok(Split::Dev),
            "test" => Ok(Split::Test),
            other => Err(BenchError::Split(format!(
                "no split {other:?}: it is dev or test"
            ))),
        }
    }
}

/// Question ids by level (easy, medium, hard), each list ascending.
pub type LevelIds = BTreeMap<String, Vec<u64>>;

/// `benches/dabench-split.json`: the dev subset and the test sample, with what draws it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitFile {
    /// The seed of the test draw.
    pub seed: u64,
    /// How the test sample is drawn, in one sentence.
    pub rule: String,
    /// How the dev subset was chosen.
    pub dev_rule: String,
    /// Test questions drawn per level.
    pub test_per_level: usize,
    /// The dev subset.
    pub dev: LevelIds,
    /// The test sample.
    pub test: LevelIds,
}

impl SplitFile {
    /// The ids of `split` by level.
    pub fn levels(&self, split: Split) -> &LevelIds {
        match split {
            Split::Dev => &self.dev,
            Split::Test => &self.test,
        }
    }

    /// The ids of `split`, ascending.
    pub fn ids(&self, split: Split) -> Vec<u64> {
        let mut ids: Vec<u64> = self.levels(split).values().flatten().copied().collect();
        ids.sort_unstable();
        ids
    }
}

/// The committed split; a data file beside the benchmarks, so that no question id is
/// written in the source.
const SPLIT_FILE: &str = include_str!("../../benches/dabench-split.json");

/// The committed split (`benches/dabench-split.json`).
pub fn split_file() -> Result<SplitFile, BenchError> {
    serde_json::from_str(SPLIT_FILE).map_err(|e| {
        BenchError::Split(format!(
            "benches/dabench-split.json is not a split file ({e})"
        ))
    })
}

/// The ids of `split` in the committed split file, ascending.
pub fn split_ids(split: Split) -> Result<Vec<u64>, BenchError> {
    Ok(split_file()?.ids(split))
}

/// The draw key of a question: the BLAKE3 hash of `<seed>:<id>`, both in decimal, so that
/// anyone can draw again with any BLAKE3 implementation (`printf 7:42 | b3sum`).
fn draw_key(seed: u64, id: u64) -> [u8; 32] {
    *blake3::hash(format!("{seed}:{id}").as_bytes()).as_bytes()
}

/// The test sample: of the questions whose `file_name` no `dev` question uses, the
/// `per_level` of each level of `dev` with the smallest draw key (see [`draw_key`]),
/// listed by id. A dev id missing from `questions`, or a level with fewer than `per_level`
/// candidates, is an error.
pub fn draw_test(
    questions: &[Question],
    dev: &LevelIds,
    seed: u64,
    per_level: usize,
) -> Result<LevelIds, BenchError> {
    let by_id: BTreeMap<u64, &Question> = questions.iter().map(|q| (q.id, q)).collect();
    let mut dev_files = HashSet::new();
    for id in dev.values().flatten() {
        let q = by_id.get(id).ok_or_else(|| {
            BenchError::Split(format!("dev question {id} is not among the questions"))
        })?;
        dev_files.insert(q.file_name.as_str());
    }
    let mut test = LevelIds::new();
    for level in dev.keys() {
        let mut candidates: Vec<([u8; 32], u64)> = questions
            .iter()
            .filter(|q| &q.level == level && !dev_files.contains(q.file_name.as_str()))
            .map(|q| (draw_key(seed, q.id), q.id))
            .collect();
        if candidates.len() < per_level {
            return Err(BenchError::Split(format!(
                "level {level} has {} question(s) over tables no dev question uses, fewer than {per_level}",
                candidates.len()
            )));
        }
        candidates.sort_unstable();
        let mut ids: Vec<u64> = candidates[..per_level].iter().map(|c| c.1).collect();
        ids.sort_unstable();
        test.insert(level.clone(), ids);
    }
    Ok(test)
}

static SUB_ANSWER: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"@(\w+)\[(.*?)\]").expect("a valid pattern"));

/// Every `@name[value]` of `answer`, in order (the benchmark's own pattern).
pub fn extract(answer: &str) -> Vec<(String, String)> {
    SUB_ANSWER
        .captures_iter(answer)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect()
}

/// Digits after the decimal point of a plain decimal number (`None` for `1e-5` and the
/// like, which are compared with a relative tolerance instead).
fn decimals(gold: &str) -> Option<usize> {
    let g = gold.trim().trim_start_matches(['-', '+']);
    if g.is_empty() || !g.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    Some(g.split_once('.').map_or(0, |(_, frac)| frac.len()))
}

/// Whether a given value equals the gold one: numbers after rounding the given value to
/// the gold's decimals, other text without regard to case or whitespace.
pub fn equal(given: &str, gold: &str) -> bool {
    if let (Ok(a), Ok(g)) = (given.trim().parse::<f64>(), gold.trim().parse::<f64>()) {
        if !a.is_finite() || !g.is_finite() {
            // A gold `nan` is matched by a `nan` answer.
            return a == g || (a.is_nan() && g.is_nan());
        }
        return match decimals(gold) {
            // Both formatted to the gold's decimals; parsing back makes -0.00 equal 0.00.
            Some(d) => {
                let round = |x: f64| format!("{x:.d$}").parse::<f64>().unwrap_or(x);
                round(a) == round(g)
            }
            None => (a - g).abs() <= 1e-9 * g.abs().max(1e-300),
        };
    }
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect()
    };
    norm(given) == norm(gold)
}

/// One gold sub-answer and what the answer gave for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// The sub-answer's name.
    pub name: String,
    /// The gold value.
    pub gold: String,
    /// The answer's value for that name, if it gave one.
    pub given: Option<String>,
    /// Whether it is right.
    pub right: bool,
}

/// Grade `answer` (none when the run gave no answer) against the gold sub-answers.
pub fn grade(answer: Option<&str>, gold: &[(String, String)]) -> Vec<Part> {
    let given: BTreeMap<String, String> = answer
        .map(extract)
        .unwrap_or_default()
        .into_iter()
        .collect();
    // A repeated gold name keeps its last value, at the place of its first.
    let mut names: Vec<&String> = Vec::new();
    let mut golds: BTreeMap<&String, &String> = BTreeMap::new();
    for (name, value) in gold {
        if golds.insert(name, value).is_none() {
            names.push(name);
        }
    }
    names
        .into_iter()
        .map(|name| (name, golds[name]))
        .map(|(name, value)| {
            let g = given.get(name).cloned();
            Part {
                right: g.as_deref().is_some_and(|g| equal(g, value)),
                name: name.clone(),
                gold: value.clone(),
                given: g,
            }
        })
        .collect()
}

/// One line of `results.jsonl`: a graded question and what its run cost.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// The question id.
    pub id: u64,
    /// Its level.
    pub level: String,
    /// The loop mode it ran in (`ds-star`, `single-shot`, `no-verifier`, `oracle-files`).
    pub mode: String,
    /// The split it was run as part of, if one was chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<Split>,
    /// The answer, if the run gave one.
    pub answer: Option<String>,
    /// How the run ended (the summary's status).
    pub status: String,
    /// The graded sub-answers.
    pub parts: Vec<Part>,
    /// LLM calls made.
    pub llm_calls: u64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Prompt tokens the server said it took from its prefix cache.
    #[serde(default)]
    pub cached_tokens: u64,
    /// Leading prompt tokens identical to the previous call's, summed: an estimate of
    /// what a single-slot prefix cache can reuse (the local llama-cpp-python server
    /// reports no cache figures).
    #[serde(default)]
    pub prefix_reused_estimate: u64,
    /// Where the answer came from (`answers`, `final_script`).
    #[serde(default)]
    pub answer_source: Option<String>,
    /// Rounds run.
    pub rounds: usize,
    /// Whether the loop iterated: more than one round, or a route taken.
    pub iterated: bool,
    /// The verifier's verdicts, round by round (`sufficient`, `insufficient`): a run that
    /// ends without an answer still shows whether a verdict had accepted its solution.
    #[serde(default)]
    pub verdicts: Vec<String>,
    /// Wall-clock milliseconds.
    pub duration_ms: u64,
    /// The files the run was given.
    pub files: Vec<String>,
    /// The run directory.
    pub run_dir: PathBuf,
    /// The error that stopped the run, if any.
    pub error: Option<String>,
    /// The rules on (`--rules`, spelled as it parses back; empty in records from before
    /// the rules were switchable).
    #[serde(default)]
    pub rules: String,
    /// How often each rule fired.
    #[serde(default)]
    pub rules_fired: BTreeMap<String, usize>,
}

impl Record {
    /// Grade the recorded answer again (the labels may have changed).
    pub fn regrade(&mut self, gold: &[(String, String)]) {
        self.parts = grade(self.answer.as_deref(), gold);
    }
}

/// Scores and costs of a set of questions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Line {
    /// Questions graded.
    pub questions: usize,
    /// Gold sub-answers over them.
    pub sub_answers: usize,
    /// Percent of questions with every sub-answer right.
    pub abq: f64,
    /// Mean over questions of the percent of their sub-answers right.
    pub pasq: f64,
    /// Percent of all sub-answers right.
    pub uasq: f64,
    /// Questions without an answer.
    pub no_answer: usize,
    /// Questions without an answer although a verdict had called the solution sufficient
    /// (the loop's finalizing should never lose a verified answer: the goal is none).
    pub lost_after_sufficient: usize,
    /// Runs that stopped on an error (LLM unreachable, a prompt the server refused): a
    /// `--resume` does not run them again; remove their lines to retry them.
    pub errors: usize,
    /// LLM calls in all.
    pub llm_calls: u64,
    /// Prompt tokens in all.
    pub prompt_tokens: u64,
    /// Completion tokens in all.
    pub completion_tokens: u64,
    /// Cached prompt tokens in all, as servers report them.
    pub cached_tokens: u64,
    /// Estimated reusable prefix tokens in all (see [`Record::prefix_reused_estimate`]).
    pub prefix_reused_estimate: u64,
    /// Mean rounds per question.
    pub rounds: f64,
    /// Percent of runs whose loop iterated.
    pub iterated: f64,
    /// Mean wall-clock seconds per question.
    pub seconds_per_question: f64,
}

fn percent(part: f64, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part / whole as f64
    }
}

/// The scores of `records`.
pub fn line<'a>(records: impl IntoIterator<Item = &'a Record>) -> Line {
    let mut l = Line::default();
    let (mut all_right, mut shares, mut right) = (0usize, 0.0f64, 0usize);
    let (mut rounds, mut iterated, mut ms) = (0usize, 0usize, 0u64);
    for r in records {
        l.questions += 1;
        l.sub_answers += r.parts.len();
        let ok = r.parts.iter().filter(|p| p.right).count();
        right += ok;
        if !r.parts.is_empty() {
            shares += ok as f64 / r.parts.len() as f64;
            all_right += usize::from(ok == r.parts.len());
        }
        l.no_answer += usize::from(r.answer.is_none());
        l.lost_after_sufficient +=
            usize::from(r.answer.is_none() && r.verdicts.iter().any(|v| v == "sufficient"));
        l.errors += usize::from(r.error.is_some());
        l.llm_calls += r.llm_calls;
        l.prompt_tokens += r.prompt_tokens;
        l.completion_tokens += r.completion_tokens;
        l.cached_tokens += r.cached_tokens;
        l.prefix_reused_estimate += r.prefix_reused_estimate;
        rounds += r.rounds;
        iterated += usize::from(r.iterated);
        ms += r.duration_ms;
    }
    l.abq = percent(all_right as f64, l.questions);
    l.pasq = percent(shares, l.questions);
    l.uasq = percent(right as f64, l.sub_answers);
    l.iterated = percent(iterated as f64, l.questions);
    if l.questions > 0 {
        l.rounds = rounds as f64 / l.questions as f64;
        l.seconds_per_question = ms as f64 / 1000.0 / l.questions as f64;
    }
    l
}

/// `summary.json`: the scores overall and by level.
#[derive(Debug, Clone, Serialize)]
pub struct BenchSummary {
    /// The split every record was run as part of (none when they were not run by split).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<Split>,
    /// The modes the records ran in.
    pub modes: Vec<String>,
    /// Every record.
    pub overall: Line,
    /// By level (easy, medium, hard).
    pub by_level: BTreeMap<String, Line>,
    /// The `--rules` settings the records ran with.
    pub rules: Vec<String>,
    /// Firings of each rule over every record.
    pub rules_fired: BTreeMap<String, usize>,
}

/// Scores of `records`, overall and by level.
pub fn summarize(records: &[Record]) -> BenchSummary {
    let mut levels: BTreeMap<String, Vec<&Record>> = BTreeMap::new();
    let mut modes = Vec::new();
    let mut seen = HashSet::new();
    for r in records {
        levels.entry(r.level.clone()).or_default().push(r);
        if seen.insert(r.mode.clone()) {
            modes.push(r.mode.clone());
        }
    }
    // One split only when every record names it: a summary never calls a mix a split.
    let split = records
        .first()
        .and_then(|r| r.split)
        .filter(|s| records.iter().all(|r| r.split == Some(*s)));
    let mut rules: Vec<String> = Vec::new();
    let mut rules_fired: BTreeMap<String, usize> = BTreeMap::new();
    for r in records {
        if !r.rules.is_empty() && !rules.contains(&r.rules) {
            rules.push(r.rules.clone());
        }
        for (name, n) in &r.rules_fired {
            *rules_fired.entry(name.clone()).or_default() += n;
        }
    }
    BenchSummary {
        split,
        modes,
        overall: line(records),
        by_level: levels.into_iter().map(|(k, v)| (k, line(v))).collect(),
        rules,
        rules_fired,
    }
}

/// The summary as a table for a terminal.
pub fn table(s: &BenchSummary) -> String {
    let mut out = format!(
        "{:<8} {:>4} {:>7} {:>7} {:>7} {:>9} {:>6} {:>7} {:>9} {:>11} {:>10} {:>10} {:>7}\n",
        "level",
        "n",
        "PASQ",
        "ABQ",
        "UASQ",
        "no_answer",
        "calls",
        "rounds",
        "iterated",
        "prompt_tok",
        "cached_tok",
        "compl_tok",
        "s/q"
    );
    let rows = s
        .by_level
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .chain(std::iter::once(("all", &s.overall)));
    for (name, l) in rows {
        out.push_str(&format!(
            "{:<8} {:>4} {:>7.2} {:>7.2} {:>7.2} {:>9} {:>6} {:>7.2} {:>8.1}% {:>11} {:>10} {:>10} {:>7.1}\n",
            name,
            l.questions,
            l.pasq,
            l.abq,
            l.uasq,
            l.no_answer,
            l.llm_calls,
            l.rounds,
            l.iterated,
            l.prompt_tokens,
            // The server's figure where it gives one, else lakestar's estimate (marked ~).
            if l.cached_tokens > 0 {
                l.cached_tokens.to_string()
            } else {
                format!("~{}", l.prefix_reused_estimate)
            },
            l.completion_tokens,
            l.seconds_per_question
        ));
    }
    if s.overall.lost_after_sufficient > 0 {
        out.push_str(&format!(
            "no answer after a sufficient verdict: {} question(s)\n",
            s.overall.lost_after_sufficient
        ));
    }
    if !s.rules.is_empty() {
        let fired: Vec<String> = s
            .rules_fired
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        out.push_str(&format!(
            "rules {}; fired: {}\n",
            s.rules.join(" | "),
            if fired.is_empty() {
                "none".to_string()
            } else {
                fired.join(", ")
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gold(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    fn record(id: u64, level: &str, answer: Option<&str>, g: &[(&str, &str)]) -> Record {
        Record {
            id,
            level: level.into(),
            mode: "ds-star".into(),
            split: None,
            answer: answer.map(str::to_string),
            status: "sufficient".into(),
            parts: grade(answer, &gold(g)),
            llm_calls: 4,
            prompt_tokens: 100,
            completion_tokens: 10,
            cached_tokens: 0,
            prefix_reused_estimate: 60,
            answer_source: answer.map(|_| "final_script".into()),
            rounds: id as usize % 2 + 1,
            iterated: id % 2 == 1,
            verdicts: vec!["sufficient".into()],
            duration_ms: 2000,
            files: Vec::new(),
            run_dir: PathBuf::new(),
            error: None,
            rules: "default".into(),
            rules_fired: BTreeMap::from([("missing-imports".to_string(), 1)]),
        }
    }

    #[test]
    fn numbers_are_rounded_to_the_gold_decimals_and_text_is_loose() {
        assert!(equal("570.6849", "570.68"));
        assert!(equal("570.675001", "570.68"));
        assert!(!equal("570.7", "570.68"));
        assert!(!equal("570.6", "570.68"));
        assert!(equal("5.0", "5"));
        assert!(equal("4.6", "5"));
        assert!(!equal("5.6", "5"));
        assert!(equal("-0.001", "0.00"));
        assert!(equal("1.0e-5", "1e-5"));
        assert!(equal(" Linear ", "linear"));
        assert!(equal("1,2, 3", "1, 2, 3"));
        assert!(!equal("no", "yes"));
    }

    #[test]
    fn extraction_uses_the_benchmark_pattern_and_the_last_value_of_a_name() {
        assert_eq!(
            extract("@a[1] text @b_2[x y] @bad [3]"),
            gold(&[("a", "1"), ("b_2", "x y")])
        );
        let parts = grade(Some("@a[1] @a[2]"), &gold(&[("a", "2")]));
        assert!(parts[0].right, "{parts:?}");
        // In the gold too: one sub-answer `a` = 3, in its first place.
        let parts = grade(
            Some("@a[3] @b[x]"),
            &gold(&[("a", "1"), ("b", "x"), ("a", "3")]),
        );
        assert_eq!(parts.len(), 2);
        assert!(
            parts[0].name == "a" && parts.iter().all(|p| p.right),
            "{parts:?}"
        );
        assert!(equal("nan", "nan") && !equal("1.0", "nan"));
    }

    /// Right, rounded, partially right, wrong name, padded format, no format at all and
    /// no answer, scored by hand:
    /// - q1 1/1 (rounded), q2 2/3, q3 0/1 (name `x`), q4 0/2 (no `@name[...]`), q5 0/1
    ///   (no answer), q6 1/1 (padding after the bracket ignored).
    /// - ABQ = 2 of 6 questions = 33.33; PASQ = (1 + 2/3 + 0 + 0 + 0 + 1) / 6 = 44.44;
    ///   UASQ = (1 + 2 + 1) of (1 + 3 + 1 + 2 + 1 + 1 = 9) = 44.44.
    /// - easy (q1, q3, q5): ABQ 33.33, PASQ 33.33, UASQ 1/3 = 33.33; hard (q2, q4, q6):
    ///   ABQ 33.33, PASQ (2/3 + 0 + 1)/3 = 55.56, UASQ 3/6 = 50.
    #[test]
    fn scores_match_a_hand_computation() {
        let records = vec![
            record(
                1,
                "easy",
                Some("@mean_fare[34.6512]"),
                &[("mean_fare", "34.65")],
            ),
            record(
                2,
                "hard",
                Some("@x[5.0] @y[ Yes ] @z[0.6]"),
                &[("x", "5"), ("y", "yes"), ("z", "0.50")],
            ),
            record(
                3,
                "easy",
                Some("@x[570.68], where 'mean_value' is a float"),
                &[("mean_close_price", "570.68")],
            ),
            record(
                4,
                "hard",
                Some("0.21 linear"),
                &[("r", "0.21"), ("kind", "linear")],
            ),
            record(5, "easy", None, &[("c", "3")]),
            record(
                6,
                "hard",
                Some("@mean_value[570.68], where 'mean_value' is a float"),
                &[("mean_value", "570.68")],
            ),
        ];
        let s = summarize(&records);
        let close = |a: f64, b: f64| (a - b).abs() < 0.01;
        let o = &s.overall;
        assert_eq!(
            (o.questions, o.sub_answers, o.no_answer, o.errors),
            (6, 9, 1, 0)
        );
        assert!(close(o.abq, 100.0 * 2.0 / 6.0), "{o:?}");
        assert!(
            close(o.pasq, 100.0 * (1.0 + 2.0 / 3.0 + 1.0) / 6.0),
            "{o:?}"
        );
        assert!(close(o.uasq, 100.0 * 4.0 / 9.0), "{o:?}");
        let easy = &s.by_level["easy"];
        assert!(close(easy.abq, 33.33) && close(easy.pasq, 33.33) && close(easy.uasq, 33.33));
        let hard = &s.by_level["hard"];
        assert!(close(hard.abq, 33.33) && close(hard.pasq, 55.56) && close(hard.uasq, 50.0));
        // Costs: 6 runs of 4 calls and 2 s; q1, q3, q5 iterated (2 rounds), the rest 1.
        assert_eq!((o.llm_calls, o.prompt_tokens), (24, 600));
        assert_eq!((o.cached_tokens, o.prefix_reused_estimate), (0, 360));
        assert!(table(&s).contains("~360"), "{}", table(&s));
        assert!(
            close(o.rounds, 1.5) && close(o.iterated, 50.0) && close(o.seconds_per_question, 2.0)
        );
        assert_eq!(s.modes, vec!["ds-star"]);
        // q5 has no answer after a sufficient verdict: counted and said under the table.
        assert_eq!(o.lost_after_sufficient, 1);
        let t = table(&s);
        assert!(t.contains("PASQ"), "{t}");
        assert!(
            t.lines()
                .any(|l| l.starts_with("no answer after a sufficient verdict: 1")),
            "{t}"
        );
        // The rules the records ran with, and their firings summed.
        assert_eq!(s.rules, ["default"]);
        assert_eq!(s.rules_fired["missing-imports"], 6);
        assert_eq!(
            t.lines().last().unwrap(),
            "rules default; fired: missing-imports 6"
        );
        let mut records = records;
        records[4].verdicts = vec!["insufficient".into()];
        let t = table(&summarize(&records));
        assert!(!t.contains("no answer after"), "{t}");
        // A line written before verdicts were recorded still reads.
        let old = r#"{"id":1,"level":"easy","mode":"ds-star","answer":null,"status":"no_answer","parts":[],"llm_calls":1,"prompt_tokens":1,"completion_tokens":1,"rounds":1,"iterated":false,"duration_ms":1,"files":[],"run_dir":"r","error":null}"#;
        let r: Record = serde_json::from_str(old).unwrap();
        assert!(r.verdicts.is_empty());
    }

    #[test]
    fn the_committed_split_has_ten_dev_questions_a_level_and_a_disjoint_test_sample() {
        let f = split_file().unwrap();
        let levels = ["easy", "hard", "medium"];
        assert_eq!(f.dev.keys().collect::<Vec<_>>(), levels);
        assert_eq!(f.test.keys().collect::<Vec<_>>(), levels);
        assert!(f.dev.values().all(|ids| ids.len() == 10), "{:?}", f.dev);
        assert!(f.test_per_level >= 8);
        assert!(
            f.test.values().all(|ids| ids.len() == f.test_per_level),
            "{:?}",
            f.test
        );
        let dev = f.ids(Split::Dev);
        let test = f.ids(Split::Test);
        assert_eq!(dev.len(), 30);
        assert_eq!(split_ids(Split::Test).unwrap(), test);
        // No id twice, in a split or across them.
        let all: HashSet<u64> = dev.iter().chain(&test).copied().collect();
        assert_eq!(all.len(), dev.len() + test.len());
        assert!(f.rule.contains("<seed>:<id>") && f.rule.contains("file_name"));
    }

    /// Sixty questions, a level by `id % 3`, a table by `id % 10`: the dev questions 0, 1
    /// and 2 take tables 0, 1 and 2, so no question over them is drawn.
    #[test]
    fn the_test_draw_leaves_out_the_dev_tables_and_takes_the_smallest_keys() {
        let levels = ["easy", "medium", "hard"];
        let questions: Vec<Question> = (0..60u64)
            .map(|id| Question {
                id,
                question: String::new(),
                constraints: String::new(),
                format: String::new(),
                file_name: format!("t{}.csv", id % 10),
                level: levels[id as usize % 3].to_string(),
            })
            .collect();
        let dev: LevelIds = levels
            .iter()
            .enumerate()
            .map(|(i, l)| (l.to_string(), vec![i as u64]))
            .collect();
        let test = draw_test(&questions, &dev, 7, 4).unwrap();
        assert_eq!(test, draw_test(&questions, &dev, 7, 4).unwrap());
        for (level, ids) in &test {
            assert_eq!(ids.len(), 4);
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
            let candidates: Vec<&Question> = questions
                .iter()
                .filter(|q| &q.level == level && q.id % 10 > 2)
                .collect();
            for q in &candidates {
                let drawn = ids.contains(&q.id);
                // Every drawn key is below every key left out.
                let beaten = ids
                    .iter()
                    .filter(|id| draw_key(7, **id) < draw_key(7, q.id))
                    .count();
                assert!(drawn || beaten == 4, "{level} {}", q.id);
            }
            assert!(
                ids.iter()
                    .all(|id| id % 10 > 2 && levels[*id as usize % 3] == level),
                "{level}: {ids:?}"
            );
        }
        assert_ne!(test, draw_test(&questions, &dev, 8, 4).unwrap());
        // 14 candidates a level: asking for more is an error, as is a dev id not there.
        let e = draw_test(&questions, &dev, 7, 15).unwrap_err().to_string();
        assert!(e.contains("fewer than 15"), "{e}");
        let mut missing = dev.clone();
        missing.get_mut("easy").unwrap().push(600);
        let e = draw_test(&questions, &missing, 7, 4)
            .unwrap_err()
            .to_string();
        assert!(e.contains("dev question 600"), "{e}");
    }

    #[test]
    fn the_split_is_named_in_records_and_in_a_summary_of_one_split_only() {
        assert_eq!("test".parse::<Split>().unwrap(), Split::Test);
        assert!("train".parse::<Split>().is_err());
        let mut records = vec![
            record(1, "easy", None, &[("a", "1")]),
            record(2, "hard", None, &[("a", "1")]),
        ];
        let s = serde_json::to_value(summarize(&records)).unwrap();
        assert!(s.get("split").is_none(), "{s}");
        assert!(!serde_json::to_string(&records[0])
            .unwrap()
            .contains("split"));
        for r in &mut records {
            r.split = Some(Split::Dev);
        }
        let s = serde_json::to_value(summarize(&records)).unwrap();
        assert_eq!(s["split"], "dev");
        let line = serde_json::to_string(&records[0]).unwrap();
        assert!(line.contains(r#""split":"dev""#), "{line}");
        let back: Record = serde_json::from_str(&line).unwrap();
        assert_eq!(back.split, Some(Split::Dev));
        records[1].split = Some(Split::Test);
        assert_eq!(summarize(&records).split, None);
    }

    #[test]
    fn question_prompt_carries_constraints_and_guidelines_the_format() {
        let q: Question = serde_json::from_str(
            r#"{"id": 3, "question": "Mean?", "constraints": "Round to 2.", "format": "@m[v]", "file_name": "a.csv", "level": "easy"}"#,
        )
        .unwrap();
        assert_eq!(q.prompt(), "Mean?\n\nConstraints:\nRound to 2.");
        assert!(q.guidelines().ends_with("@m[v]"));
    }
}
