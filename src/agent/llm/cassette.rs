//! Cassettes: every call of a run written to a JSONL file, and runs answered from one
//! without a network, for deterministic reruns and tests.
//!
//! One line per successful call:
//!
//! ```json
//! {"role":"planner","model":"gpt-4o-mini","messages":[{"role":"user","content":"…"}],
//!  "temperature":0.2,"reply":{"text":"…","model":"gpt-4o-mini-2024-07-18",
//!  "usage":{"prompt_tokens":12,"completion_tokens":3},"cost":0.0000036,
//!  "latency_ms":812,"attempts":1}}
//! ```
//!
//! Two optional fields make a replay fit prompts as the recorded run did without asking a
//! server: `context_tokens`, the window the call was fitted into, and `counts`, the token
//! counts the client made since the previous call (by a short hash of the text), which
//! the server's tokenizer may have given.
//!
//! Recording truncates the file, then appends each call's line as soon as the call
//! succeeds (one unbuffered write, so a killed run keeps every call it finished).
//! Failed calls are not recorded: a replay never needs them.
//!
//! Replaying answers a request with the first not yet replayed entry of the same role
//! and the same messages. The model and temperature are not compared (a replay needs no
//! model configured; the recorded model is reported), and the order across roles does
//! not matter, so runs whose roles interleave differently (concurrent analyzers) still
//! replay; identical requests are answered in recorded order. A request with no such
//! entry is a user error showing where it differs from the nearest recorded one.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::error::{LlmInternalError, LlmUserError};
use super::wire::excerpt;
use super::{Message, Role, Usage};

/// Whether a client records its calls, answers from recorded ones, or neither.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Cassette {
    /// Talk to the server, record nothing.
    #[default]
    Off,
    /// Talk to the server and write every successful call to this file (truncated first).
    Record(PathBuf),
    /// Answer from this file; no network, no key or model needed.
    Replay(PathBuf),
}

/// One recorded call.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub role: Role,
    /// The model asked for.
    pub model: String,
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    pub reply: RecordedReply,
    /// The context window the call was fitted into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<usize>,
    /// Token counts made since the previous call: [`text_key`] → tokens.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counts: BTreeMap<String, usize>,
}

/// The key of a counted text in a cassette: a short content hash (the texts themselves
/// are in the messages, or were parts of them).
pub(crate) fn text_key(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex()[..16].to_string()
}

/// The answer of a recorded call.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct RecordedReply {
    pub text: String,
    /// The model that answered.
    pub model: String,
    pub usage: Usage,
    #[serde(default)]
    pub cost: Option<f64>,
    #[serde(default)]
    pub latency_ms: u64,
    #[serde(default = "one")]
    pub attempts: u32,
}

fn one() -> u32 {
    1
}

/// An open cassette.
pub(crate) enum Tape {
    Off,
    Record(Recorder),
    Replay(Player),
}

impl Tape {
    /// Opens (or creates) the cassette's file.
    pub fn open(cassette: Cassette) -> Result<Tape, LlmUserError> {
        Ok(match cassette {
            Cassette::Off => Tape::Off,
            Cassette::Record(path) => Tape::Record(Recorder::create(path)?),
            Cassette::Replay(path) => Tape::Replay(Player::load(path)?),
        })
    }
}

/// Appends calls to a cassette file.
pub(crate) struct Recorder {
    path: PathBuf,
    file: Mutex<File>,
}

impl Recorder {
    fn create(path: PathBuf) -> Result<Self, LlmUserError> {
        match File::create(&path) {
            Ok(file) => Ok(Recorder {
                path,
                file: Mutex::new(file),
            }),
            Err(source) => Err(LlmUserError::CassetteOpen { path, source }),
        }
    }

    /// Writes one call's line. The write is blocking but one short line per LLM call,
    /// which takes seconds anyway; an async file would only add a thread hop.
    pub fn append(&self, entry: &Entry) -> Result<(), LlmInternalError> {
        let mut line = serde_json::to_string(entry).expect("a cassette entry always serializes");
        line.push('\n');
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(line.as_bytes())
            .map_err(|source| LlmInternalError::CassetteWrite {
                path: self.path.clone(),
                source,
            })
    }
}

/// Answers requests from a loaded cassette.
pub(crate) struct Player {
    path: PathBuf,
    /// Entries in recorded order, and whether each was replayed.
    entries: Mutex<Vec<(Entry, bool)>>,
    /// Every recorded token count.
    counts: HashMap<String, usize>,
}

impl Player {
    fn load(path: PathBuf) -> Result<Self, LlmUserError> {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(source) => return Err(LlmUserError::CassetteOpen { path, source }),
        };
        let entries = Self::parse(&text, &path)?;
        Ok(Self::new(path, entries))
    }

    fn new(path: PathBuf, entries: Vec<Entry>) -> Self {
        let counts = entries
            .iter()
            .flat_map(|e| e.counts.iter().map(|(k, n)| (k.clone(), *n)))
            .collect();
        Player {
            path,
            entries: Mutex::new(entries.into_iter().map(|e| (e, false)).collect()),
            counts,
        }
    }

    /// The recorded count of `text`, if the recording counted it.
    pub fn count(&self, text: &str) -> Option<usize> {
        self.counts.get(&text_key(text)).copied()
    }

    /// The window of the next `role` call: the one its next unreplayed entry was fitted
    /// into, else the last one of that role.
    pub fn context_for(&self, role: Role) -> Option<usize> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let of_role = || entries.iter().filter(|(e, _)| e.role == role);
        of_role()
            .find(|(_, used)| !used)
            .or_else(|| of_role().next_back())
            .and_then(|(e, _)| e.context_tokens)
    }

    fn parse(text: &str, path: &Path) -> Result<Vec<Entry>, LlmUserError> {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l).map_err(|e| LlmUserError::CassetteMalformed {
                    path: path.to_path_buf(),
                    line: i + 1,
                    detail: e.to_string(),
                })
            })
            .collect()
    }

    /// The model the first recorded `role` request asked for.
    pub fn model_for(&self, role: Role) -> Option<String> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .iter()
            .find(|(e, _)| e.role == role)
            .map(|(e, _)| e.model.clone())
    }

    /// The first unreplayed entry for `role` with these messages, now marked replayed.
    pub fn take(&self, role: Role, messages: &[Message]) -> Result<Entry, LlmUserError> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((entry, used)) = entries
            .iter_mut()
            .find(|(e, used)| !used && e.role == role && e.messages == messages)
        {
            *used = true;
            return Ok(entry.clone());
        }
        let same_role = entries.iter().filter(|(e, _)| e.role == role).count();
        let nearest = entries.iter().find(|(e, used)| !used && e.role == role);
        let detail = match nearest {
            None => format!(
                "the cassette holds no more {role} requests ({same_role} recorded, all replayed)"
            ),
            Some((e, _)) => difference(messages, &e.messages),
        };
        Err(LlmUserError::ReplayDiverged {
            path: self.path.clone(),
            role,
            detail,
        })
    }
}

/// Where the run's messages first differ from the recorded ones, in words.
fn difference(run: &[Message], recorded: &[Message]) -> String {
    let first = run.iter().zip(recorded).position(|(a, b)| a != b);
    let Some(i) = first else {
        return format!(
            "the run sent {} messages, the next recorded request of this role has {}",
            run.len(),
            recorded.len()
        );
    };
    let (a, b) = (&run[i], &recorded[i]);
    if a.role != b.role {
        return format!(
            "message {} is a {} message, the recorded one a {} message",
            i + 1,
            a.role,
            b.role
        );
    }
    // Show both texts from a little before the first differing character.
    let common = a
        .content
        .chars()
        .zip(b.content.chars())
        .take_while(|(x, y)| x == y)
        .count();
    let from = common.saturating_sub(20);
    let tail = |s: &str| {
        let rest: String = s.chars().skip(from).collect();
        let prefix = if from > 0 { "…" } else { "" };
        format!("{prefix}{}", excerpt(&rest, 80))
    };
    format!(
        "message {} ({}) differs at character {}: the run has {:?}, the cassette {:?}",
        i + 1,
        a.role,
        common + 1,
        tail(&a.content),
        tail(&b.content)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(role: Role, q: &str, a: &str) -> Entry {
        Entry {
            role,
            model: "m".into(),
            messages: vec![Message::system("be brief"), Message::user(q)],
            temperature: None,
            reply: RecordedReply {
                text: a.into(),
                model: "m".into(),
                usage: Usage::default(),
                cost: None,
                latency_ms: 0,
                attempts: 1,
            },
            context_tokens: None,
            counts: BTreeMap::new(),
        }
    }

    fn player(entries: Vec<Entry>) -> Player {
        Player::new("c.jsonl".into(), entries)
    }

    #[test]
    fn recorded_windows_and_counts_are_served() {
        let mut a = entry(Role::Coder, "q", "a");
        a.context_tokens = Some(100_000);
        a.counts.insert(text_key("some text"), 7);
        let mut b = entry(Role::Coder, "q", "b");
        b.context_tokens = Some(4096);
        let p = player(vec![a, b]);
        assert_eq!(p.count("some text"), Some(7));
        assert_eq!(p.count("other text"), None);
        assert_eq!(p.context_for(Role::Coder), Some(100_000));
        let msgs = entry(Role::Coder, "q", "").messages;
        p.take(Role::Coder, &msgs).unwrap();
        assert_eq!(p.context_for(Role::Coder), Some(4096));
        p.take(Role::Coder, &msgs).unwrap();
        assert_eq!(p.context_for(Role::Coder), Some(4096));
        assert_eq!(p.context_for(Role::Planner), None);
        // Old cassettes, without the fields, still read.
        let line = r#"{"role":"coder","model":"m","messages":[],"reply":{"text":"x","model":"m","usage":{"prompt_tokens":1,"completion_tokens":1}}}"#;
        let e = &Player::parse(line, Path::new("c")).unwrap()[0];
        assert_eq!((e.context_tokens, e.counts.len()), (None, 0));
    }

    #[test]
    fn identical_requests_replay_in_order_and_roles_in_any_order() {
        let p = player(vec![
            entry(Role::Planner, "q", "first"),
            entry(Role::Coder, "q", "code"),
            entry(Role::Planner, "q", "second"),
        ]);
        let msgs = entry(Role::Coder, "q", "").messages;
        assert_eq!(p.take(Role::Coder, &msgs).unwrap().reply.text, "code");
        assert_eq!(p.take(Role::Planner, &msgs).unwrap().reply.text, "first");
        assert_eq!(p.take(Role::Planner, &msgs).unwrap().reply.text, "second");
        let err = p.take(Role::Planner, &msgs).unwrap_err().to_string();
        assert!(
            err.contains("no more planner requests (2 recorded"),
            "{err}"
        );
    }

    #[test]
    fn divergence_shows_the_first_differing_message() {
        let p = player(vec![entry(Role::Verifier, "is the mean 4.2?", "yes")]);
        let msgs = entry(Role::Verifier, "is the mean 4.3?", "").messages;
        let err = p.take(Role::Verifier, &msgs).unwrap_err().to_string();
        assert!(err.contains("verifier request"), "{err}");
        assert!(
            err.contains("message 2 (user) differs at character 15"),
            "{err}"
        );
        assert!(err.contains("4.3?") && err.contains("4.2?"), "{err}");

        let long = format!("{}tail A", "x".repeat(200));
        let p2 = player(vec![entry(Role::Coder, &long, "ok")]);
        let msgs = entry(Role::Coder, &long.replace('A', "B"), "").messages;
        let err = p2.take(Role::Coder, &msgs).unwrap_err().to_string();
        let shown = format!("\"…{}tail B\"", "x".repeat(15));
        assert!(err.contains(&shown), "{err}");

        let short = vec![Message::system("be brief")];
        let err = p.take(Role::Verifier, &short).unwrap_err().to_string();
        assert!(
            err.contains("sent 1 messages") && err.contains("has 2"),
            "{err}"
        );
    }

    #[test]
    fn malformed_lines_are_named() {
        let good = serde_json::to_string(&entry(Role::Coder, "q", "a")).unwrap();
        let text = format!("{good}\n\n{{\"role\":\"coder\"}}\n");
        let err = Player::parse(&text, Path::new("c.jsonl"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("c.jsonl is malformed at line 3"), "{err}");
        assert_eq!(Player::parse(&good, Path::new("c")).unwrap().len(), 1);
        let bad_role = good.replace("\"coder\"", "\"boss\"");
        assert!(Player::parse(&bad_role, Path::new("c")).is_err());
    }
}
