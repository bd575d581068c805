//! `ask`, written once: the request every surface builds (CLI `ask`, `bench`, HTTP
//! `POST /ask`, the MCP `ask` tool), its defaults and bounds in one place, the choice of
//! pinned or retrieved files, the run directory, and the call into [`Agent::ask`]. The
//! surfaces only parse their input into an [`AskRequest`] and present the summary.

use super::{ServiceError, MAX_QUERY_BYTES};
use crate::agent::answer::{adapt::Form, Wanted};
use crate::agent::context::{self, FileContext, FileCount, IndexRetriever, Retriever};
use crate::agent::methods::Methods;
use crate::agent::rules::RuleSet;
use crate::agent::run::{LoopOptions, Mode};
use crate::agent::{Agent, AgentError, Progress, Summary};
use lakestar_index::search::engine::Searcher;
use std::path::{Path, PathBuf};

/// Tokens of file descriptions a retrieved run fills when no `k` is given.
pub const DEFAULT_BUDGET: usize = 8000;
/// Verifier rounds when the request does not say.
pub const DEFAULT_ROUNDS: usize = 20;
/// Debugger attempts per failing script when the request does not say.
pub const DEFAULT_DEBUG_ATTEMPTS: usize = 3;
/// Rounds a run may ask for at most: each costs LLM calls and a script run.
pub const MAX_ROUNDS: usize = 100;
/// Debugger attempts a run may ask for at most.
pub const MAX_DEBUG_ATTEMPTS: usize = 20;
/// Files a run may work on at most, retrieved (`k`) or pinned: more would not fit any
/// model's prompt.
pub const MAX_FILES: usize = 100;

/// Answer names one request may give at most.
pub const MAX_WANTED: usize = 32;

/// Which files a run sees.
#[derive(Debug, Clone)]
pub enum Selection {
    /// These files (absolute, or relative to the caller's directory): the oracle setting.
    Pinned(Vec<PathBuf>),
    /// Retrieved from the index for the question: exactly `k`, or as many as fit
    /// `budget` tokens of descriptions ([`DEFAULT_BUDGET`] when neither is given).
    Retrieved {
        /// Exactly this many files.
        k: Option<usize>,
        /// Tokens of descriptions to fill when `k` is not given.
        budget: Option<usize>,
    },
}

/// How long a run may go on.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Verifier rounds at most.
    pub max_rounds: usize,
    /// Debugger attempts per failing script.
    pub debug_attempts: usize,
    /// The loop: DS-STAR or an ablation.
    pub mode: Mode,
    /// The rules on (`--rules`; every rule by default).
    pub rules: RuleSet,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_rounds: DEFAULT_ROUNDS,
            debug_attempts: DEFAULT_DEBUG_ATTEMPTS,
            mode: Mode::DsStar,
            rules: RuleSet::all(),
        }
    }
}

/// One question for the agent.
#[derive(Debug, Clone)]
pub struct AskRequest {
    /// The question.
    pub question: String,
    /// Answer-format guidelines (blank means none).
    pub guidelines: Option<String>,
    /// Values the answer must give, by name, in order.
    pub wanted: Vec<Wanted>,
    /// How the named values are written.
    pub form: Form,
    /// Which files.
    pub selection: Selection,
    /// How long.
    pub limits: Limits,
}

/// The answer names and form of a JSON request (HTTP, MCP), spelled as `ask --answer` and
/// `--answer-form` spell them; the message names the field.
pub fn answer_fields(
    names: Option<&[String]>,
    form: Option<&str>,
) -> Result<(Vec<Wanted>, Form), ServiceError> {
    let wanted = names
        .unwrap_or_default()
        .iter()
        .map(|n| n.parse::<Wanted>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ServiceError::BadRequest(format!("answer_names: {e}")))?;
    let form = form
        .map(str::parse::<Form>)
        .transpose()
        .map_err(|e| ServiceError::BadRequest(format!("answer_form: {e}")))?
        .unwrap_or_default();
    Ok((wanted, form))
}

impl AskRequest {
    /// A question over retrieved files, with every default.
    pub fn new(question: impl Into<String>) -> Self {
        AskRequest {
            question: question.into(),
            guidelines: None,
            wanted: Vec::new(),
            form: Form::Plain,
            selection: Selection::Retrieved {
                k: None,
                budget: None,
            },
            limits: Limits::default(),
        }
    }

    /// The bounds every surface enforces; the message names the field and its range.
    pub fn validate(&self) -> Result<(), ServiceError> {
        let bad = |m: String| Err(ServiceError::BadRequest(m));
        if self.question.trim().is_empty() {
            return bad("the question is empty".into());
        }
        if self.question.len() > MAX_QUERY_BYTES {
            return bad(format!(
                "the question is {} bytes; at most {MAX_QUERY_BYTES} are accepted",
                self.question.len()
            ));
        }
        if self.wanted.len() > MAX_WANTED {
            return bad(format!(
                "at most {MAX_WANTED} answer names are accepted (got {})",
                self.wanted.len()
            ));
        }
        if let Some(w) = self
            .wanted
            .iter()
            .enumerate()
            .find(|(i, w)| self.wanted[..*i].iter().any(|o| o.name == w.name))
        {
            return bad(format!("the answer name {:?} is given twice", w.1.name));
        }
        if self.limits.max_rounds > MAX_ROUNDS {
            return bad(format!(
                "max_rounds must be between 0 and {MAX_ROUNDS} (got {})",
                self.limits.max_rounds
            ));
        }
        if self.limits.debug_attempts > MAX_DEBUG_ATTEMPTS {
            return bad(format!(
                "debug_attempts must be between 0 and {MAX_DEBUG_ATTEMPTS} (got {})",
                self.limits.debug_attempts
            ));
        }
        match &self.selection {
            Selection::Pinned(f) if f.is_empty() => {
                bad("no file pinned; pin at least one, or retrieve files for the question".into())
            }
            Selection::Pinned(f) if f.len() > MAX_FILES => bad(format!(
                "at most {MAX_FILES} files may be pinned (got {})",
                f.len()
            )),
            Selection::Retrieved { k: Some(k), .. } if *k == 0 || *k > MAX_FILES => {
                bad(format!("k must be between 1 and {MAX_FILES} (got {k})"))
            }
            Selection::Retrieved {
                budget: Some(0), ..
            } => bad("budget must be at least 1 token".into()),
            _ => Ok(()),
        }
    }

    /// The loop settings of this request.
    pub fn loop_options(&self) -> LoopOptions {
        LoopOptions {
            max_rounds: self.limits.max_rounds,
            debug_attempts: self.limits.debug_attempts,
            guidelines: self.guidelines.clone().filter(|g| !g.trim().is_empty()),
            wanted: self.wanted.clone(),
            form: self.form,
            mode: self.limits.mode,
            rules: self.limits.rules,
        }
    }

    /// How many files retrieval gives (pinned runs: the default budget, for files added
    /// later).
    fn count(&self) -> FileCount {
        match &self.selection {
            Selection::Retrieved { k: Some(k), .. } => FileCount::Fixed(*k),
            Selection::Retrieved { budget, .. } => {
                FileCount::Budget(budget.unwrap_or(DEFAULT_BUDGET).max(1))
            }
            Selection::Pinned(_) => FileCount::Budget(DEFAULT_BUDGET),
        }
    }

    /// The files of the run and how they were chosen ("pinned" or "retrieved"): pinned
    /// files described from the index at `index_dir` when it lists them (relative paths
    /// taken from `cwd`), else retrieved with `searcher` (a server's shared one) or a
    /// searcher opened on `index_dir`, for the question without the names of the
    /// `methods` it says ([`Methods::without_names`]). Blocking: it reads the index.
    pub fn files(
        &self,
        index_dir: Option<&Path>,
        searcher: Option<&Searcher>,
        cwd: &Path,
        methods: &Methods,
    ) -> Result<(Vec<FileContext>, &'static str), AgentError> {
        match &self.selection {
            Selection::Pinned(paths) => Ok((context::pinned(paths, index_dir, cwd)?, "pinned")),
            Selection::Retrieved { .. } => {
                let count = self.count();
                let dir = index_dir.ok_or_else(|| {
                    AgentError::NoFiles(
                        "no index to retrieve files from: run `lakestar index LAKE`, pass --index DIR, or pin files with --files".into(),
                    )
                })?;
                let query = methods.without_names(&self.question);
                let mut files = match searcher {
                    Some(s) => context::retrieve_with(s, dir, &query, count)?,
                    None => context::retrieve(dir, &query, count)?,
                };
                context::prefer_exact(&self.question, &mut files);
                Ok((files, "retrieved"))
            }
        }
    }

    /// Run the agent on `files` into `run_dir` (which must not hold a run): the summary,
    /// and the error that stopped the run if one did (see [`Agent::ask`]). Retrieved
    /// runs may go back to the index at `index_dir` for more files when a step names a
    /// column none of theirs has; pinned runs say so in the answer instead.
    pub async fn run(
        &self,
        agent: &Agent,
        files: &[FileContext],
        index_dir: Option<&Path>,
        run_dir: &Path,
        progress: &(dyn Fn(Progress) + Send + Sync),
    ) -> Result<(Summary, Option<AgentError>), AgentError> {
        let (selection, retriever) = match (&self.selection, index_dir) {
            (Selection::Pinned(_), _) => ("pinned", None),
            (Selection::Retrieved { .. }, Some(dir)) => {
                ("retrieved", Some(IndexRetriever::lazy(dir, self.count())))
            }
            (Selection::Retrieved { .. }, None) => ("retrieved", None),
        };
        agent
            .ask(
                &self.question,
                files,
                selection,
                retriever.as_ref().map(|r| r as &dyn Retriever),
                &self.loop_options(),
                run_dir,
                progress,
            )
            .await
    }
}

/// Where a run goes when the caller does not say: `INDEX/runs/ID`, or without an index
/// `$XDG_DATA_HOME/lakestar/runs/ID`.
pub fn default_run_dir(index_dir: Option<&Path>) -> PathBuf {
    runs_dir(index_dir).join(crate::agent::run_id())
}

/// The directory runs are recorded under.
pub fn runs_dir(index_dir: Option<&Path>) -> PathBuf {
    match index_dir {
        Some(d) => d.join("runs"),
        None => std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .unwrap_or_else(std::env::temp_dir)
            .join("lakestar/runs"),
    }
}

/// A fresh run directory under `runs`, created so that no concurrent run takes its id.
pub fn reserve_run_dir(runs: &Path) -> std::io::Result<(String, PathBuf)> {
    std::fs::create_dir_all(runs)?;
    loop {
        let id = crate::agent::run_id();
        let path = runs.join(&id);
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok((id, path)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_documented_ones_and_blank_guidelines_are_none() {
        let mut r = AskRequest::new("q?");
        r.guidelines = Some("  ".into());
        let o = r.loop_options();
        assert_eq!((o.max_rounds, o.debug_attempts), (20, 3));
        assert_eq!((o.guidelines, o.mode), (None, Mode::DsStar));
        assert!(r.validate().is_ok());
    }

    #[test]
    fn out_of_bounds_requests_are_refused_with_the_range() {
        let refused = |f: &dyn Fn(&mut AskRequest)| {
            let mut r = AskRequest::new("q?");
            f(&mut r);
            r.validate().unwrap_err().to_string()
        };
        assert_eq!(
            refused(&|r| r.question = " ".into()),
            "the question is empty"
        );
        assert!(refused(&|r| r.limits.max_rounds = 101).contains("between 0 and 100"));
        assert!(refused(&|r| r.limits.debug_attempts = 21).contains("between 0 and 20"));
        let k = |k| {
            move |r: &mut AskRequest| {
                r.selection = Selection::Retrieved {
                    k: Some(k),
                    budget: None,
                }
            }
        };
        assert!(refused(&k(0)).contains("k must be between 1 and 100 (got 0)"));
        assert!(refused(&k(101)).contains("(got 101)"));
        assert!(
            refused(&|r| r.selection = Selection::Pinned(Vec::new())).contains("no file pinned")
        );
        assert!(refused(&|r| r.selection = Selection::Retrieved {
            k: None,
            budget: Some(0)
        })
        .contains("budget"));
    }
}
