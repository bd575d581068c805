//! The LLM analyzer (DS-STAR §3.1, `lakestar index --llm-analyzer`): per file, the
//! analyzer prompt yields a Python describer script; it runs in the sandbox, and while
//! it fails the debugger fixes it from its code and traceback alone (no descriptions:
//! describing the file is the point). The successful run's output is the description.

use super::llm::{Message, Role};
use super::parse;
use super::prompts::Template;
use super::sandbox::Execution;
use super::{Agent, AgentError};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes of a description kept (the prompt asks for about 80 lines; a script that
/// prints a whole table must not fill the catalog).
pub const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;

/// Bytes of a traceback shown to the debugger: its end, where the exception is.
const MAX_ERROR_BYTES: usize = 4000;

/// Files described at once: the time goes into waiting for the LLM, not the CPU.
pub const CONCURRENCY: usize = 4;

/// How the describer of one file ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The last script succeeded; its output, trimmed and capped.
    Described(String),
    /// It still failed after the debugger's attempts; why (its traceback).
    Failed(String),
}

/// The result of [`describe_file`].
#[derive(Debug, Clone)]
pub struct LlmDescribed {
    /// The description or the failure.
    pub outcome: Outcome,
    /// The last script that ran.
    pub script: String,
    /// Scripts run: the analyzer's and each debugger fix.
    pub attempts: u32,
}

/// Describe the file at `path` (absolute, as the script must use it): one analyzer
/// call, then up to `debug_attempts` debugger calls, each fixing the latest attempt.
/// Scripts run with `work_dir` as their working directory. A script that keeps failing
/// is an [`Outcome::Failed`]; errors are for an LLM that cannot be reached or a
/// sandbox that cannot start.
pub async fn describe_file(
    agent: &Agent,
    path: &Path,
    work_dir: &Path,
    debug_attempts: usize,
) -> Result<LlmDescribed, AgentError> {
    let file = path.to_string_lossy();
    let prompt = agent
        .prompts
        .render(Template::Analyzer, &[("file", file.as_ref())]);
    let reply = agent
        .llm
        .chat(Role::Analyzer, &[Message::user(prompt)])
        .await?;
    let mut code = parse::code(&reply.text).code;
    let data = [path.to_path_buf()];
    let mut exec = agent
        .sandbox
        .run(work_dir, "describe", &code, &data)
        .await?;
    let mut attempts = 1;
    for attempt in 1..=debug_attempts {
        let Err(error) = result(&exec) else { break };
        // The script's own path says nothing the debugger needs, and would tie the
        // prompt (and a recorded cassette) to where the index lives.
        let error = error.replace(&format!("{}/", work_dir.display()), "");
        let prompt = agent.prompts.render(
            Template::DebuggerAnalyzer,
            &[("code", &code), ("error", &error)],
        );
        let reply = agent
            .llm
            .chat(Role::Debugger, &[Message::user(prompt)])
            .await?;
        code = parse::code(&reply.text).code;
        exec = agent
            .sandbox
            .run(work_dir, &format!("describe-debug-{attempt}"), &code, &data)
            .await?;
        attempts += 1;
    }
    let outcome = match result(&exec) {
        Ok(text) => Outcome::Described(text),
        Err(error) => Outcome::Failed(error.replace(&format!("{}/", work_dir.display()), "")),
    };
    Ok(LlmDescribed {
        outcome,
        script: code,
        attempts,
    })
}

/// The description a run printed, or what the debugger is told about its failure. A
/// script that exits 0 but prints nothing has not described anything: a failure too.
fn result(exec: &Execution) -> Result<String, String> {
    if exec.success() {
        let out = exec.stdout.trim();
        if out.is_empty() {
            return Err("The script exited without error but printed nothing; it must print the description on stdout.".into());
        }
        return Ok(cap_head(out, MAX_DESCRIPTION_BYTES));
    }
    let mut error = cap_tail(exec.stderr.trim(), MAX_ERROR_BYTES);
    if let Some(limit) = &exec.limit_hit {
        error = format!("The script was stopped: {limit}.\n{error}");
    }
    if error.trim().is_empty() {
        error = format!(
            "The script exited with status {} and printed nothing on stderr.",
            exec.exit_code
                .map_or("(killed)".to_string(), |c| c.to_string())
        );
    }
    Err(error)
}

/// The first `max` bytes of `s`, cut on a character boundary, with a marker.
fn cap_head(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[… {} bytes cut]", &s[..end], s.len() - end)
}

/// The last `max` bytes of `s`, cut on a character boundary, with a marker.
fn cap_tail(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    format!("[… {start} bytes cut]\n{}", &s[start..])
}

/// One file to describe.
#[derive(Debug, Clone)]
pub struct Job {
    /// Absolute path.
    pub path: PathBuf,
    /// Its own working directory (created; removed when the file is done: the script
    /// and its output are kept in the catalog, not there).
    pub work_dir: PathBuf,
}

/// Describe `jobs`, `concurrency` at a time (see [`CONCURRENCY`]), calling `done` with each job's index in
/// `jobs` and its result as it finishes (in completion order), so that results are
/// stored as they come and a stopped run keeps them. The first error — from a job or
/// from `done` — stops the others and is returned.
pub async fn describe_all(
    agent: Arc<Agent>,
    jobs: &[Job],
    concurrency: usize,
    debug_attempts: usize,
    mut done: impl FnMut(usize, LlmDescribed) -> Result<(), AgentError>,
) -> Result<(), AgentError> {
    // Jobs start in their order, `concurrency` at a time, the next when one finishes (a
    // semaphore taken inside spawned tasks would let the scheduler pick the order).
    let start = |set: &mut tokio::task::JoinSet<_>, (i, job): (usize, Job)| {
        let agent = agent.clone();
        set.spawn(async move {
            let described = describe_file(&agent, &job.path, &job.work_dir, debug_attempts).await;
            // Best effort: a leftover directory holds only scratch output.
            let _ = tokio::fs::remove_dir_all(&job.work_dir).await;
            (i, described)
        });
    };
    let mut queue = jobs.iter().cloned().enumerate();
    let mut set = tokio::task::JoinSet::new();
    for job in queue.by_ref().take(concurrency.max(1)) {
        start(&mut set, job);
    }
    while let Some(joined) = set.join_next().await {
        let (i, described) = joined.map_err(|e| AgentError::Task(e.to_string()))?;
        done(i, described?)?;
        if let Some(job) = queue.next() {
            start(&mut set, job);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_cut_on_character_boundaries() {
        assert_eq!(cap_head("abc", 3), "abc");
        assert_eq!(cap_head("aé", 2), "a\n[… 2 bytes cut]");
        assert_eq!(cap_tail("éa", 2), "[… 2 bytes cut]\na");
        assert_eq!(cap_tail("xyz", 5), "xyz");
    }
}
