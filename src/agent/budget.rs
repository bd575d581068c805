//! Fitting every prompt of the loop into the model's context window.
//!
//! Room for a prompt = the model's window − the reply reserve (`max_output_tokens`) −
//! a few tokens of chat template per message. The shared prefix (instructions, question,
//! descriptions; see [`Template::Common`]) is built once per run for the smallest window
//! of the loop's roles, its descriptions cut so that the largest role template and a
//! [`BudgetConfig::variable_share`] of the room stay free for what changes; then each
//! call's own part is fitted into what the prefix leaves: observations (`result`,
//! `error`) cut head + tail first, then code, each marked with how much was left out and
//! never below its minimum. If even that does not fit, the call is not sent: the error
//! names the role and the overflow. Tokens are counted by the LLM client (the server's
//! tokenizer, else an estimate that errs high).

use super::context::{description_block, exact_note, FileContext};
use super::llm::{LlmClient, Role};
use super::prompts::{Prompts, Template};
use super::AgentError;

/// The tuning of prompt budgets.
#[derive(Debug, Clone, Copy)]
pub struct BudgetConfig {
    /// Tokens a chat template adds around one message (role markers, separators; about
    /// five for ChatML, more for other templates).
    pub message_overhead: usize,
    /// Share of the room kept free of descriptions for the parts that change between
    /// calls (plan, code, output, error): the descriptions take at most the rest.
    pub variable_share: f64,
    /// Tokens an observation (a script's output or error) is never cut below.
    pub min_observation: usize,
    /// Tokens a script is never cut below.
    pub min_code: usize,
    /// Share of a cut observation or script kept from its head; the rest comes from its
    /// tail, where results are printed last and tracebacks end.
    pub head_share: f64,
    /// Tokens of one file's description kept at least (its path line comes first).
    pub min_description: usize,
}

/// The budgets of the agent.
pub const BUDGET: BudgetConfig = BudgetConfig {
    message_overhead: 8,
    variable_share: 0.5,
    min_observation: 200,
    min_code: 300,
    head_share: 0.4,
    min_description: 48,
};

/// The roles whose prompts start with the shared prefix.
const PREFIX_ROLES: [Role; 7] = [
    Role::Planner,
    Role::Coder,
    Role::Verifier,
    Role::Router,
    Role::Debugger,
    Role::Summarizer,
    Role::Finalyzer,
];

/// What a call may use: the window, and what of it the reply keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Room {
    /// The model's context window.
    pub context: usize,
    /// Tokens kept for the reply.
    pub reserve: usize,
}

impl Room {
    /// The room of `role`'s model.
    pub async fn of(llm: &LlmClient, role: Role) -> Room {
        Room {
            context: llm.context_tokens(role).await,
            reserve: llm.max_output_tokens(),
        }
    }

    /// The smallest room of the roles that share the prefix.
    pub async fn shared(llm: &LlmClient) -> Room {
        let mut room = Room::of(llm, PREFIX_ROLES[0]).await;
        for r in &PREFIX_ROLES[1..] {
            room.context = room.context.min(llm.context_tokens(*r).await);
        }
        room
    }

    /// Tokens a whole prompt may take.
    pub fn available(&self) -> usize {
        self.context.saturating_sub(self.reserve)
    }
}

/// The system message shared by the roles of a run, and its size.
#[derive(Debug, Clone)]
pub struct Prefix {
    /// The text.
    pub text: String,
    /// Its tokens.
    pub tokens: usize,
    /// The room it was cut for.
    pub room: Room,
}

/// The prefix of one run, built on first use and kept while the window and the files
/// stay the same (a window learned from a refusal, or files added by retrieval during
/// the run, rebuild it).
#[derive(Default)]
pub struct SharedPrefix {
    built: tokio::sync::Mutex<Option<Prefix>>,
    /// The run's files once retrieval changed them (else the ones `get` is given).
    files: std::sync::Mutex<Option<Vec<FileContext>>>,
}

impl SharedPrefix {
    /// The run's prefix for `question` over `files` (or over the files last given to
    /// [`SharedPrefix::set_files`]).
    pub async fn get(
        &self,
        llm: &LlmClient,
        prompts: &Prompts,
        question: &str,
        files: &[FileContext],
    ) -> Prefix {
        let room = Room::shared(llm).await;
        let mut cell = self.built.lock().await;
        match &*cell {
            Some(p) if p.room == room => p.clone(),
            _ => {
                let changed = self.files.lock().unwrap_or_else(|p| p.into_inner()).clone();
                let files = changed.as_deref().unwrap_or(files);
                let p = prefix(llm, prompts, question, files, room).await;
                *cell = Some(p.clone());
                p
            }
        }
    }

    /// The run's files changed (retrieval added some): later prompts describe these.
    pub async fn set_files(&self, files: &[FileContext]) {
        *self.files.lock().unwrap_or_else(|p| p.into_inner()) = Some(files.to_vec());
        *self.built.lock().await = None;
    }
}

/// Builds the prefix: the descriptions whole when they fit their share of `room`, else
/// each file's cut (water-filling: short descriptions stay whole, long ones share the
/// rest equally), never below its path line and [`BudgetConfig::min_description`].
pub async fn prefix(
    llm: &LlmClient,
    prompts: &Prompts,
    question: &str,
    files: &[FileContext],
    room: Room,
) -> Prefix {
    let role = PREFIX_ROLES[0];
    // The methods the question names are part of the frame, like the question.
    let methods = prompts.methods().section(question);
    let render = |d: &str| {
        prompts.render(
            Template::Common,
            &[
                ("question", question),
                ("methods", &methods),
                ("descriptions", d),
            ],
        )
    };
    // The note of exactly written names stays whole: it is part of the frame.
    let note = exact_note(question, files);
    let frame = llm
        .count_tokens(role, &render(note.as_deref().unwrap_or("")))
        .await;
    let mut largest_role = 0;
    for t in Template::ALL.iter().filter(|t| t.after_common()) {
        largest_role = largest_role.max(llm.count_tokens(role, &prompts.render(*t, &[])).await);
    }
    let variable = (room.available() as f64 * BUDGET.variable_share) as usize;
    let share = room
        .available()
        .saturating_sub(variable + largest_role + frame + 2 * BUDGET.message_overhead);

    let mut blocks: Vec<(String, usize)> = Vec::new();
    for f in files {
        let b = description_block(f);
        let n = llm.count_tokens(role, &b).await;
        blocks.push((b, n));
    }
    if blocks.iter().map(|b| b.1).sum::<usize>() > share {
        let mut order: Vec<usize> = (0..blocks.len()).collect();
        order.sort_by_key(|&i| blocks[i].1);
        let mut left = share;
        for (k, &i) in order.iter().enumerate() {
            let fair = left / (order.len() - k);
            let n = blocks[i].1;
            if n <= fair {
                left -= n;
                continue;
            }
            // The path line stays whole: code must use it exactly.
            let (path, body) = blocks[i].0.split_once('\n').unwrap_or((&blocks[i].0, ""));
            let path_tokens = llm.count_tokens(role, path).await + 1;
            let target = fair.max(BUDGET.min_description).saturating_sub(path_tokens);
            let cut = format!("{path}\n{}", cut(llm, role, body, target, Keep::Head).await);
            let n = llm.count_tokens(role, &cut).await;
            left = left.saturating_sub(n);
            blocks[i] = (cut, n);
        }
    }
    let mut shown: Vec<String> = note.into_iter().collect();
    shown.extend(blocks.into_iter().map(|b| b.0));
    let descriptions = shown.join("\n\n");
    let text = render(&descriptions);
    let tokens = llm.count_tokens(role, &text).await;
    Prefix { text, tokens, room }
}

/// What a placeholder's value is, for cutting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// A script's output or error, or the debugger's earlier attempts: cut head + tail.
    Observation,
    /// A script: shown whole when it fits, else cut head + tail with a comment.
    Code,
}

fn part(name: &str) -> Option<Part> {
    match name {
        "result" | "error" | "attempts" => Some(Part::Observation),
        "code" => Some(Part::Code),
        _ => None,
    }
}

/// `template` filled with `values`, its observations and code cut so that, after
/// `prefix`, it fits `room`; [`AgentError::PromptTooLarge`] when even their minimum
/// does not.
pub async fn fit(
    llm: &LlmClient,
    role: Role,
    prompts: &Prompts,
    template: Template,
    values: &[(&str, &str)],
    prefix: Option<&Prefix>,
    room: Room,
) -> Result<String, AgentError> {
    let (fixed, messages) = match prefix {
        Some(p) => (p.tokens, 2),
        None => (0, 1),
    };
    let fixed = fixed + messages * BUDGET.message_overhead;
    let budget = room.available().saturating_sub(fixed);
    let mut owned: Vec<(&str, String)> = values.iter().map(|(k, v)| (*k, v.to_string())).collect();
    let render = |vals: &[(&str, String)]| {
        let refs: Vec<(&str, &str)> = vals.iter().map(|(k, v)| (*k, v.as_str())).collect();
        prompts.render(template, &refs)
    };
    let mut user = render(&owned);
    let mut tokens = llm.count_tokens(role, &user).await;
    for kind in [Part::Observation, Part::Code] {
        for i in 0..owned.len() {
            if tokens <= budget {
                return Ok(user);
            }
            if part(owned[i].0) != Some(kind) {
                continue;
            }
            let n = llm.count_tokens(role, &owned[i].1).await;
            let min = match kind {
                Part::Observation => BUDGET.min_observation,
                Part::Code => BUDGET.min_code,
            };
            let target = n.saturating_sub(tokens - budget).max(min);
            if target >= n {
                continue;
            }
            let keep = match kind {
                Part::Observation => Keep::HeadTail(""),
                Part::Code => Keep::HeadTail("# "),
            };
            owned[i].1 = cut(llm, role, &owned[i].1, target, keep).await;
            user = render(&owned);
            tokens = llm.count_tokens(role, &user).await;
        }
    }
    if tokens <= budget {
        return Ok(user);
    }
    Err(AgentError::PromptTooLarge {
        role,
        needed: tokens + fixed,
        available: room.available(),
        context: room.context,
        reserve: room.reserve,
    })
}

/// Which ends of a text a cut keeps.
#[derive(Debug, Clone, Copy)]
enum Keep {
    /// The beginning.
    Head,
    /// Both ends; the marker line starts with this (a comment sign in code).
    HeadTail(&'static str),
}

/// `text` cut to at most `target` tokens, at line ends where one is near, with a marker
/// line saying how many lines and characters were left out.
async fn cut(llm: &LlmClient, role: Role, text: &str, target: usize, keep: Keep) -> String {
    let n = llm.count_tokens(role, text).await.max(1);
    if n <= target {
        return text.to_string();
    }
    // Bytes per token of this text, from its own count; shrunk until the count agrees.
    let mut bytes = text.len() * target / n;
    for _ in 0..12 {
        let candidate = cut_bytes(text, bytes, keep);
        if llm.count_tokens(role, &candidate).await <= target {
            return candidate;
        }
        bytes = bytes * 4 / 5;
    }
    cut_bytes(text, 0, keep)
}

/// `text` keeping about `bytes` bytes, as `keep` says, with the marker.
fn cut_bytes(text: &str, bytes: usize, keep: Keep) -> String {
    let (head_bytes, tail_bytes, prefix) = match keep {
        Keep::Head => (bytes, 0, ""),
        Keep::HeadTail(p) => {
            let head = (bytes as f64 * BUDGET.head_share) as usize;
            (head, bytes - head, p)
        }
    };
    let head_end = snap_back(text, floor_boundary(text, head_bytes));
    let tail_start = snap_forward(
        text,
        ceil_boundary(text, text.len().saturating_sub(tail_bytes)).max(head_end),
    );
    let omitted = &text[head_end..tail_start];
    let lines = omitted.matches('\n').count();
    let chars = omitted.chars().count();
    let what = match keep {
        Keep::Head => format!("[… {lines} more lines ({chars} characters) of this description left out to fit the model's context]"),
        Keep::HeadTail(_) => format!("[… {lines} lines ({chars} characters) left out here to fit the model's context …]"),
    };
    let mut out = text[..head_end].to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(prefix);
    out.push_str(&what);
    let tail = &text[tail_start..];
    if !tail.is_empty() {
        out.push('\n');
        out.push_str(tail);
    }
    out
}

/// `at` moved back to just after a line break, if one is within the last fifth.
fn snap_back(text: &str, at: usize) -> usize {
    match text[..at].rfind('\n') {
        Some(nl) if nl + 1 >= at - at / 5 => nl + 1,
        _ => at,
    }
}

/// `at` moved forward to just after a line break, if one is within the first fifth of
/// what follows.
fn snap_forward(text: &str, at: usize) -> usize {
    let rest = text.len() - at;
    match text[at..].find('\n') {
        Some(nl) if nl < rest / 5 => at + nl + 1,
        _ => at,
    }
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::llm::{Cassette, LlmConfig};

    fn client(context: usize) -> LlmClient {
        let config = LlmConfig {
            // Nothing listens there: the probe fails at once and the estimate counts.
            base_url: "http://127.0.0.1:9/v1".into(),
            context_tokens: Some(context),
            max_output_tokens: 256,
            model: Some("m".into()),
            ..LlmConfig::default()
        };
        LlmClient::new(config, Cassette::Off).unwrap()
    }

    fn numbers(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("{i:>5}  {}\n", i * 7919 % 100_003))
            .collect()
    }

    #[tokio::test]
    async fn observations_are_cut_head_and_tail_with_a_marker() {
        let llm = client(100_000);
        let text = numbers(2000);
        let out = cut(&llm, Role::Verifier, &text, 500, Keep::HeadTail("")).await;
        assert!(llm.count_tokens(Role::Verifier, &out).await <= 500);
        assert!(out.starts_with("    0  0\n"), "{}", &out[..50]);
        assert!(out.ends_with(&format!("{}\n", text.lines().last().unwrap())));
        let marker = out.lines().find(|l| l.starts_with("[…")).unwrap();
        let left: usize = marker["[… ".len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(left + out.lines().count() - 1, 2000, "{marker}");
        // One long line is cut inside it.
        let line = "1,".repeat(5000);
        let out = cut(&llm, Role::Verifier, &line, 300, Keep::HeadTail("# ")).await;
        assert!(out.contains("\n# [… 0 lines ("), "{out}");
        assert!(out.len() < line.len());
    }

    #[tokio::test]
    async fn descriptions_are_cut_once_per_run_keeping_paths_and_short_ones_whole() {
        let llm = client(4096);
        let file = |name: &str, description: String| FileContext {
            path: format!("/lake/{name}").into(),
            rel: name.into(),
            description,
            columns: Vec::new(),
            staged: None,
        };
        let files = [
            file("big.csv", numbers(800)),
            file("small.csv", "small.csv — CSV, 2 columns: a, b\n".into()),
            file("other.csv", numbers(600)),
        ];
        let prompts = Prompts::builtin();
        let shared = SharedPrefix::default();
        let p = shared.get(&llm, &prompts, "q?", &files).await;
        assert!(p.tokens < (p.room.available() as f64 * (1.0 - BUDGET.variable_share)) as usize);
        assert!(p.text.contains("## /lake/big.csv\n    0  0\n"));
        assert!(p
            .text
            .contains("## /lake/small.csv\nsmall.csv — CSV, 2 columns: a, b"));
        assert!(p.text.contains("## /lake/other.csv\n"));
        let at = |name: &str| p.text.find(&format!("## /lake/{name}")).unwrap();
        assert!(at("big.csv") < at("small.csv") && at("small.csv") < at("other.csv"));
        assert_eq!(p.text.matches("of this description left out").count(), 2);
        // Built once: the same text on every later call.
        let again = shared.get(&llm, &prompts, "q?", &files).await;
        assert_eq!(again.text, p.text);
    }

    #[tokio::test]
    async fn the_methods_a_question_names_are_in_the_prefix_between_question_and_files() {
        let llm = client(8192);
        let files = [FileContext {
            path: "/lake/baro.csv".into(),
            rel: "baro.csv".into(),
            description: "baro.csv — CSV, 2 columns: WINDSPEED, DATE\n".into(),
            columns: vec!["WINDSPEED".into(), "DATE".into()],
            staged: None,
        }];
        let prompts = Prompts::builtin();
        let q = "Is WINDSPEED normally distributed? Use the Shapiro-Wilk test.";
        let p = prefix(
            &llm,
            &prompts,
            q,
            &files,
            Room::of(&llm, Role::Planner).await,
        )
        .await;
        let (question, methods, data) = (
            p.text.find("# Question").unwrap(),
            p.text.find("# Methods the question names").unwrap(),
            p.text.find("# Data files").unwrap(),
        );
        assert!(question < methods && methods < data, "{}", p.text);
        assert!(p.text.contains("stat, p = stats.shapiro("), "{}", p.text);
        assert_eq!(p.tokens, llm.count_tokens(Role::Planner, &p.text).await);
        // A question naming no method has no such section, and no gap where it would be.
        let p = prefix(&llm, &prompts, "mean of WINDSPEED?", &files, p.room).await;
        assert!(!p.text.contains("# Methods"), "{}", p.text);
        assert!(
            p.text.contains("mean of WINDSPEED?\n\n# Data files"),
            "{}",
            p.text
        );
    }

    #[tokio::test]
    async fn a_prompt_is_fitted_or_refused_naming_role_and_overflow() {
        let prompts = Prompts::builtin();
        let result = numbers(3000);
        let values = [
            ("plan", "1. print it"),
            ("code", "print(1)"),
            ("result", result.as_str()),
        ];
        let room = Room {
            context: 2048,
            reserve: 256,
        };
        let llm = client(2048);
        let user = fit(
            &llm,
            Role::Verifier,
            &prompts,
            Template::Verifier,
            &values,
            None,
            room,
        )
        .await
        .unwrap();
        let n = llm.count_tokens(Role::Verifier, &user).await;
        assert!(n + BUDGET.message_overhead <= room.available(), "{n}");
        assert!(user.contains("left out here to fit"));
        assert!(user.contains("print(1)"));

        let tiny = Room {
            context: 600,
            reserve: 256,
        };
        let big_code = numbers(400).replace("  ", " = ");
        let values = [
            ("plan", "1. x"),
            ("code", big_code.as_str()),
            ("result", result.as_str()),
        ];
        let err = fit(
            &llm,
            Role::Verifier,
            &prompts,
            Template::Verifier,
            &values,
            None,
            tiny,
        )
        .await
        .unwrap_err();
        let AgentError::PromptTooLarge {
            role,
            needed,
            available,
            ..
        } = &err
        else {
            panic!("{err}")
        };
        assert_eq!((*role, *available), (Role::Verifier, 344));
        // Both parts at their minimum, and still over.
        let floor = BUDGET.min_code + BUDGET.min_observation;
        assert!(*needed > 344 && *needed >= floor, "{needed}");
        let msg = err.to_string();
        assert!(
            msg.contains("verifier") && msg.contains("context_tokens"),
            "{msg}"
        );
        assert!(err.is_user_error());
    }
}
