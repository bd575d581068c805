//! Reading the LLM's replies. The prompts ask for strict answers; models do not always
//! give them, so each reader accepts the usual variations and has a documented fallback
//! for anything else. Every fallback is reported (`fallback: true`) so the run record
//! shows where the agent guessed.
//!
//! | reply | accepted | fallback |
//! |---|---|---|
//! | code | the first ```` ```python ```` (or `py`, `python3`) block, else the first fenced block | the whole reply, as code |
//! | verdict | `sufficient` / `insufficient`, `not sufficient`, yes/no, true/false, in any case, with markdown or punctuation around; JSON `{"verdict": …}` or `{"sufficient": true}` — the first verdict word wins | insufficient |
//! | route | `Add Step` (any case, `add_step`, `add a step`), `Step N`, `N` alone, JSON `{"step": N}` / `{"decision": "…"}` — the first decision wins | Add Step; also for a step number outside 1…len(plan) |

use serde::Serialize;

/// The code of a coder, debugger, finalyzer or analyzer reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code {
    /// The script.
    pub code: String,
    /// No fenced block was found: the whole reply was taken as code.
    pub fallback: bool,
}

/// Extract the script from a reply.
pub fn code(reply: &str) -> Code {
    let blocks = fenced_blocks(reply);
    let python = blocks
        .iter()
        .find(|(lang, _)| matches!(lang.as_str(), "python" | "py" | "python3"));
    match python.or(blocks.first()) {
        Some((_, body)) => Code {
            code: body.clone(),
            fallback: false,
        },
        None => Code {
            code: reply.trim().to_string(),
            fallback: true,
        },
    }
}

/// Fenced blocks as (lowercased info string, body). An unterminated last fence runs to
/// the end of the reply (replies cut by a token limit).
fn fenced_blocks(reply: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, usize, Vec<&str>)> = None;
    for line in reply.lines() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|c| *c == '`').count();
        match &mut open {
            None if ticks >= 3 => {
                let lang = trimmed[ticks..].trim().to_ascii_lowercase();
                open = Some((lang, ticks, Vec::new()));
            }
            None => {}
            Some((_, n, _)) if ticks >= *n && trimmed[ticks..].trim().is_empty() => {
                let (lang, _, body) = open.take().unwrap();
                blocks.push((lang, body.join("\n")));
            }
            Some((_, _, body)) => body.push(line),
        }
    }
    if let Some((lang, _, body)) = open {
        if !body.is_empty() {
            blocks.push((lang, body.join("\n")));
        }
    }
    blocks
}

/// The verifier's judgement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The plan answers the question.
    Sufficient,
    /// It does not yet.
    Insufficient,
}

/// A parsed reply and whether the fallback was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parsed<T> {
    /// What the reply was read as.
    pub value: T,
    /// Nothing readable was found; `value` is the documented fallback.
    pub fallback: bool,
}

/// Read a verifier reply.
pub fn verdict(reply: &str) -> Parsed<Verdict> {
    if let Some(v) = json_value(reply) {
        let from_json = ["verdict", "decision", "answer", "result"]
            .iter()
            .find_map(|k| v.get(k).and_then(|x| x.as_str()).and_then(verdict_word))
            .or_else(|| {
                v.get("sufficient").and_then(|x| x.as_bool()).map(|b| {
                    if b {
                        Verdict::Sufficient
                    } else {
                        Verdict::Insufficient
                    }
                })
            });
        if let Some(value) = from_json {
            return Parsed {
                value,
                fallback: false,
            };
        }
    }
    match verdict_word(reply) {
        Some(value) => Parsed {
            value,
            fallback: false,
        },
        None => Parsed {
            value: Verdict::Insufficient,
            fallback: true,
        },
    }
}

/// The first verdict word of `text`.
fn verdict_word(text: &str) -> Option<Verdict> {
    let w = words(text);
    for (i, word) in w.iter().enumerate() {
        let v = match word.as_str() {
            "insufficient" | "no" | "false" | "unsufficient" => Verdict::Insufficient,
            "not" if w.get(i + 1).is_some_and(|n| n == "sufficient") => Verdict::Insufficient,
            "sufficient" | "yes" | "true" => Verdict::Sufficient,
            _ => continue,
        };
        return Some(v);
    }
    None
}

/// The router's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "decision", content = "step")]
pub enum Route {
    /// The plan is right but incomplete.
    AddStep,
    /// Step N (from 1) is the first wrong one.
    Step(usize),
}

/// Read a router reply for a plan of `steps` steps.
pub fn route(reply: &str, steps: usize) -> Parsed<Route> {
    let found = json_value(reply)
        .and_then(|v| {
            if let Some(n) = v.get("step").and_then(|x| x.as_u64()) {
                return Some(Route::Step(n as usize));
            }
            ["decision", "route", "action", "answer"]
                .iter()
                .find_map(|k| v.get(k).and_then(|x| x.as_str()).and_then(route_words))
        })
        .or_else(|| route_words(reply));
    match found {
        Some(Route::Step(n)) if n == 0 || n > steps => Parsed {
            value: Route::AddStep,
            fallback: true,
        },
        Some(value) => Parsed {
            value,
            fallback: false,
        },
        None => Parsed {
            value: Route::AddStep,
            fallback: true,
        },
    }
}

/// The first decision in `text`: `add step` or `step N` or a bare number.
fn route_words(text: &str) -> Option<Route> {
    let w = words(text);
    for (i, word) in w.iter().enumerate() {
        match word.as_str() {
            "add" | "addstep" | "add_step" => return Some(Route::AddStep),
            "step" => {
                if let Some(n) = w.get(i + 1).and_then(|n| n.parse().ok()) {
                    return Some(Route::Step(n));
                }
            }
            _ => {
                // A bare number only as the whole reply: in a sentence it is too often
                // a count ("the 3 steps are fine; add step").
                if w.len() == 1 {
                    if let Ok(n) = word.parse() {
                        return Some(Route::Step(n));
                    }
                }
                if let Some(n) = word.strip_prefix("step").and_then(|n| n.parse().ok()) {
                    return Some(Route::Step(n));
                }
            }
        }
    }
    None
}

/// Lowercased words: letters, digits and `_`; everything else separates.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// A JSON object in the reply: the whole reply, or a fenced block of it.
fn json_value(reply: &str) -> Option<serde_json::Value> {
    let candidates = std::iter::once(reply.trim().to_string())
        .chain(fenced_blocks(reply).into_iter().map(|(_, b)| b));
    candidates
        .filter_map(|c| serde_json::from_str::<serde_json::Value>(c.trim()).ok())
        .find(|v| v.is_object())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_prefers_the_python_block() {
        let r =
            "Here:\n```text\nnot this\n```\n```python\nimport pandas as pd\nprint(1)\n```\nDone.";
        assert_eq!(code(r).code, "import pandas as pd\nprint(1)");
        assert!(!code(r).fallback);
        assert_eq!(code("```\nprint(2)\n```").code, "print(2)");
        let cut = code("```python\nprint(3)\nprint(4)");
        assert_eq!(cut.code, "print(3)\nprint(4)");
        let bare = code("print(5)\n");
        assert_eq!((bare.code.as_str(), bare.fallback), ("print(5)", true));
        // A longer fence holds inner triple backticks (a docstring showing markdown).
        let nested = code("````python\ns = '''\n```\n'''\nprint(s)\n````");
        assert_eq!(nested.code, "s = '''\n```\n'''\nprint(s)");
    }

    #[test]
    fn verdicts_in_their_usual_disguises() {
        use Verdict::*;
        for (reply, want) in [
            ("sufficient", Sufficient),
            ("Insufficient.", Insufficient),
            ("**SUFFICIENT**", Sufficient),
            ("`insufficient`", Insufficient),
            ("The plan is not sufficient yet.", Insufficient),
            ("Yes", Sufficient),
            ("No.", Insufficient),
            ("{\"verdict\": \"sufficient\"}", Sufficient),
            ("```json\n{\"sufficient\": false}\n```", Insufficient),
            (
                "Insufficient: the output lacks the mean, so it is not sufficient",
                Insufficient,
            ),
        ] {
            assert_eq!(
                verdict(reply),
                Parsed {
                    value: want,
                    fallback: false
                },
                "{reply}"
            );
        }
        assert_eq!(
            verdict("I cannot tell."),
            Parsed {
                value: Insufficient,
                fallback: true
            }
        );
    }

    #[test]
    fn routes_in_their_usual_disguises() {
        for (reply, want) in [
            ("Add Step", Route::AddStep),
            ("add_step", Route::AddStep),
            ("**Add a step.**", Route::AddStep),
            ("Step 2", Route::Step(2)),
            ("step 3.", Route::Step(3)),
            ("Step2", Route::Step(2)),
            ("2", Route::Step(2)),
            ("{\"step\": 1}", Route::Step(1)),
            ("{\"decision\": \"Add Step\"}", Route::AddStep),
            ("Step 1 is wrong; add step later", Route::Step(1)),
            ("The 3 steps are right; Add Step", Route::AddStep),
        ] {
            assert_eq!(
                route(reply, 3),
                Parsed {
                    value: want,
                    fallback: false
                },
                "{reply}"
            );
        }
        for reply in ["Step 4", "Step 0", "hmm", ""] {
            assert_eq!(
                route(reply, 3),
                Parsed {
                    value: Route::AddStep,
                    fallback: true
                },
                "{reply}"
            );
        }
    }
}
