//! InfiAgent-DABench: its question and label files, and its grading.
//!
//! An answer holds `@name[value]` sub-answers (the question's `format`). Each gold
//! `(name, value)` is right when the answer has that name with an equal value: numbers
//! after rounding the answer to the gold's decimals, anything else compared without case
//! or whitespace. A name given twice counts by its last value, in the answer and in the
//! gold alike, as the benchmark's dictionaries do (a question's labels may repeat a name). Three scores, as the benchmark reports them:
//! ABQ (questions with every sub-answer right), PASQ (the mean over questions of the share
//! of their sub-answers right) and UASQ (all sub-answers pooled), each in percent.

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

    /// The answer guidelines: the format, and how sub-answers are written.
    pub fn guidelines(&self) -> String {
        format!(
            "Answer in this format, each value in the brackets of its @name[...]:\n{}",
            self.format.trim()
        )
    }
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
    /// Where the answer came from (`final_script`, `solution_output`, `filled_from_output`).
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
    /// The modes the records ran in.
    pub modes: Vec<String>,
    /// Every record.
    pub overall: Line,
    /// By level (easy, medium, hard).
    pub by_level: BTreeMap<String, Line>,
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
    BenchSummary {
        modes,
        overall: line(records),
        by_level: levels.into_iter().map(|(k, v)| (k, line(v))).collect(),
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
                .last()
                .unwrap()
                .starts_with("no answer after a sufficient verdict: 1"),
            "{t}"
        );
        let mut records = records;
        records[4].verdicts = vec!["insufficient".into()];
        let t = table(&summarize(&records));
        assert!(t.lines().last().unwrap().starts_with("all"), "{t}");
        // A line written before verdicts were recorded still reads.
        let old = r#"{"id":1,"level":"easy","mode":"ds-star","answer":null,"status":"no_answer","parts":[],"llm_calls":1,"prompt_tokens":1,"completion_tokens":1,"rounds":1,"iterated":false,"duration_ms":1,"files":[],"run_dir":"r","error":null}"#;
        let r: Record = serde_json::from_str(old).unwrap();
        assert!(r.verdicts.is_empty());
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
