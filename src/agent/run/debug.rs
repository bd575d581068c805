//! Running a script and debugging it. Small models often hand back the failing script
//! unchanged, or a "fix" that fails the same way; the debugger here notices (a script
//! identical, comments and whitespace aside, to an earlier attempt, or the same error
//! again), changes course once (its earlier attempts and their errors in the prompt,
//! another temperature), and if it still repeats itself gives the failure back to the
//! router. A script identical to one that already failed is never run again.

use super::{Loop, Ran, State, CHANGE_COURSE_TEMPERATURE, CHANGE_COURSE_TEMPERATURE_ALT};
use super::{Template, SUMMARIZE_ABOVE};
use crate::agent::llm::{CallOptions, Role};
use crate::agent::record::Event;
use crate::agent::rules::Rule;
use crate::agent::sandbox::Execution;
use crate::agent::{AgentError, Progress};

/// One failed attempt, as the debugger is reminded of it.
struct Attempt {
    code: String,
    /// [`normalize_code`] of `code`.
    key: String,
    /// What the debugger was told.
    error: String,
    /// [`error_signature`] of its stderr.
    signature: String,
}

impl Loop<'_> {
    /// Run a solution script (with debugging).
    pub(in crate::agent) async fn execute(
        &self,
        round: usize,
        st: &mut State,
        code: String,
        plan: &[String],
    ) -> Result<Ran, AgentError> {
        self.execute_as(round, st, code, "solution", plan).await
    }

    /// Run `code`; while it fails and attempts remain, have the debugger fix the latest
    /// attempt (not the original) from its summarized error and the descriptions. A
    /// KeyError naming a column the question or plan asked for and no file has sends
    /// the run to retrieval first (see `names.rs`).
    pub(in crate::agent) async fn execute_as(
        &self,
        round: usize,
        st: &mut State,
        mut code: String,
        purpose: &str,
        plan: &[String],
    ) -> Result<Ran, AgentError> {
        let mut exec = self.run_script(round, st, &code, purpose).await?;
        let mut tried: Vec<Attempt> = Vec::new();
        let mut changed_course = false;
        for attempt in 1..=self.options.debug_attempts {
            if exec.success() {
                break;
            }
            if self.on(Rule::UnknownNames) {
                self.check_key_error(round, st, &exec.stderr, plan).await?;
            }
            let mut error = self.error_report(round, &exec).await?;
            if let Some(hint) = super::names::key_holders(&exec.stderr, &st.files)
                .filter(|_| self.on(Rule::KeyHolders))
            {
                self.fired(
                    Rule::KeyHolders,
                    Some(round),
                    format!("{purpose}: the debugger is told {hint}"),
                )?;
                error = format!("{error}\n\n{hint}");
            }
            if let Some(cure) =
                super::remedy::remedy(&exec.stderr).filter(|_| self.on(Rule::Remedies))
            {
                self.fired(
                    Rule::Remedies,
                    Some(round),
                    format!("{purpose}: the debugger is told how to fix it: {cure}"),
                )?;
                error = format!("{error}\n\nHow to fix it: {cure}");
            }
            if !self.on(Rule::ChangeCourse) {
                // Algorithm 1's debugger: the latest attempt and its error, every time.
                code = self
                    .ask_debugger(round, st, &code, &error, &[], false)
                    .await?;
                exec = self
                    .run_script(round, st, &code, &format!("{purpose} debug {attempt}"))
                    .await?;
                continue;
            }
            let signature = error_signature(&exec.stderr);
            let same_error = tried.iter().any(|a| a.signature == signature);
            tried.push(Attempt {
                key: normalize_code(&code),
                code: code.clone(),
                error: error.clone(),
                signature,
            });
            let change = |m: String| self.fired(Rule::ChangeCourse, Some(round), m);
            if same_error {
                if changed_course {
                    change(format!(
                        "{purpose}: the same error again after changing course; debugging stops"
                    ))?;
                    break;
                }
                change(format!(
                    "{purpose}: debug attempt {} failed with the same error as an earlier attempt; changing course",
                    attempt - 1
                ))?;
                changed_course = true;
            }
            let mut next = self
                .ask_debugger(round, st, &code, &error, &tried, changed_course)
                .await?;
            if let Some(i) = repeated(&tried, &next) {
                if changed_course {
                    change(format!(
                        "{purpose}: the debugger returned attempt {}'s script again (not run); debugging stops",
                        i + 1
                    ))?;
                    break;
                }
                change(format!(
                    "{purpose}: the debugger returned attempt {}'s script again (not run); changing course",
                    i + 1
                ))?;
                changed_course = true;
                next = self
                    .ask_debugger(round, st, &code, &error, &tried, true)
                    .await?;
                if let Some(i) = repeated(&tried, &next) {
                    change(format!(
                        "{purpose}: the debugger returned attempt {}'s script again after changing course (not run); debugging stops",
                        i + 1
                    ))?;
                    break;
                }
            }
            code = next;
            exec = self
                .run_script(round, st, &code, &format!("{purpose} debug {attempt}"))
                .await?;
        }
        Ok(Ran { code, exec })
    }

    /// One debugger call; `change` shows the earlier attempts and asks at another
    /// temperature.
    async fn ask_debugger(
        &self,
        round: usize,
        st: &State,
        code: &str,
        error: &str,
        tried: &[Attempt],
        change: bool,
    ) -> Result<String, AgentError> {
        let (attempts, call) = if change {
            let configured = self.llm.config().temperature;
            (
                attempts_text(tried),
                CallOptions {
                    temperature: Some(other_temperature(configured)),
                },
            )
        } else {
            (
                "(none: this is the first fix of this script)".to_string(),
                CallOptions::default(),
            )
        };
        let reply = self
            .ask_with(
                round,
                Role::Debugger,
                Template::DebuggerSolution,
                &[
                    ("descriptions", &st.desc),
                    ("code", code),
                    ("error", error),
                    ("attempts", &attempts),
                ],
                &call,
            )
            .await?;
        self.code(&reply)
    }

    pub(in crate::agent) async fn run_script(
        &self,
        round: usize,
        st: &mut State,
        code: &str,
        purpose: &str,
    ) -> Result<Execution, AgentError> {
        st.execs += 1;
        let dir = self.record.exec_dir(st.execs, purpose);
        (self.progress)(Progress::Exec {
            round,
            purpose: purpose.to_string(),
        });
        let data: Vec<std::path::PathBuf> = st.paths().into_iter().map(Into::into).collect();
        let exec = self.sandbox.run(&dir, "script", code, &data).await?;
        self.record.event(&Event::Exec {
            round,
            purpose: purpose.to_string(),
            script: exec.script.display().to_string(),
            code: code.to_string(),
            exit_code: exec.exit_code,
            signal: exec.signal,
            timed_out: exec.timed_out,
            limit_hit: exec.limit_hit.clone(),
            stdout: exec.stdout.clone(),
            stderr: exec.stderr.clone(),
            duration_ms: exec.duration.as_millis() as u64,
        })?;
        (self.progress)(Progress::Executed {
            round,
            ok: exec.success(),
        });
        Ok(exec)
    }

    /// What the debugger is told about a failure: the traceback, through the summarizer
    /// when it is long; a limit or timeout in words.
    async fn error_report(&self, round: usize, exec: &Execution) -> Result<String, AgentError> {
        let mut error = exec.stderr.trim().to_string();
        if let Some(limit) = &exec.limit_hit {
            error = format!("The script was stopped: {limit}.\n{error}");
        }
        if error.len() > SUMMARIZE_ABOVE {
            error = self
                .ask(
                    round,
                    Role::Summarizer,
                    Template::Summarizer,
                    &[("error", &error)],
                )
                .await?;
        }
        if error.is_empty() {
            error = format!(
                "The script exited with status {} and printed nothing on stderr.",
                exec.exit_code
                    .map_or("(killed)".to_string(), |c| c.to_string())
            );
        }
        Ok(error)
    }
}

/// The index of the earlier attempt `code` repeats, if any.
fn repeated(tried: &[Attempt], code: &str) -> Option<usize> {
    let key = normalize_code(code);
    tried.iter().position(|a| a.key == key)
}

/// The `{{attempts}}` block when the debugger must change course.
fn attempts_text(tried: &[Attempt]) -> String {
    let mut s = String::from(
        "These scripts were tried and failed. Do NOT return any of them again, not even with small changes: take a different approach to the failing line.\n",
    );
    for (i, a) in tried.iter().enumerate() {
        s.push_str(&format!(
            "\n## Attempt {}\n```python\n{}\n```\nError:\n{}\n",
            i + 1,
            a.code.trim_end(),
            a.error.trim_end()
        ));
    }
    s
}

/// A temperature other than the configured one.
pub(super) fn other_temperature(configured: Option<f32>) -> f32 {
    match configured {
        Some(t) if (t - CHANGE_COURSE_TEMPERATURE).abs() < 0.2 => CHANGE_COURSE_TEMPERATURE_ALT,
        _ => CHANGE_COURSE_TEMPERATURE,
    }
}

/// A script as compared for repeats: comments, blank lines and whitespace runs dropped.
pub fn normalize_code(code: &str) -> String {
    code.lines()
        .map(strip_comment)
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `line` without a `#` comment (a `#` inside a string literal is kept).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(_), '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (Some(q), c) if c == q && !escaped => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') => return &line[..i],
            _ => {}
        }
        escaped = false;
    }
    line
}

/// What identifies an error across attempts: the exception line of a traceback (its
/// last line naming an exception), else the last line of stderr.
pub fn error_signature(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .rev()
        .find(|l| {
            l.split_once(':').is_some_and(|(head, _)| {
                let name = head.rsplit('.').next().unwrap_or(head);
                name.ends_with("Error") || name.ends_with("Exception") || name == "SystemExit"
            })
        })
        .or(lines.last())
        .map(|l| l.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_compare_without_comments_and_whitespace() {
        let a =
            "import pandas as pd\n\n# load\ndf = pd.read_csv('a#b.csv')  # the file\nprint( df )\n";
        let b = "import pandas as pd\ndf = pd.read_csv('a#b.csv')\nprint(  df )   # show";
        assert_eq!(normalize_code(a), normalize_code(b));
        assert_ne!(normalize_code(a), normalize_code("print(df.head())"));
        assert_eq!(
            strip_comment(r#"s = "it\"s # not" # yes"#),
            r#"s = "it\"s # not" "#
        );
    }

    #[test]
    fn errors_compare_by_their_exception_line() {
        let tb = "Traceback (most recent call last):\n  File \"s.py\", line 3, in <module>\n    c, p = s.corr(t)\nTypeError: cannot unpack non-iterable float object\n";
        assert_eq!(
            error_signature(tb),
            "TypeError: cannot unpack non-iterable float object"
        );
        assert_eq!(
            error_signature("pandas.errors.ParserError: bad line\nnote: x"),
            "pandas.errors.ParserError: bad line"
        );
        assert_eq!(error_signature("killed"), "killed");
    }

    #[test]
    fn the_new_temperature_differs_from_the_configured_one() {
        assert_eq!(other_temperature(None), CHANGE_COURSE_TEMPERATURE);
        assert_eq!(other_temperature(Some(0.2)), CHANGE_COURSE_TEMPERATURE);
        assert_eq!(
            other_temperature(Some(CHANGE_COURSE_TEMPERATURE)),
            CHANGE_COURSE_TEMPERATURE_ALT
        );
    }
}
