//! Reading the LLM's replies. The prompts ask for strict answers; models do not always
//! give them, so each reader accepts the usual variations and has a documented fallback
//! for anything else. Every fallback is reported (`fallback: true`) so the run record
//! shows where the agent guessed.
//!
//! | reply | accepted | fallback |
//! |---|---|---|
//! | code | the longest ```` ```python ```` block (`py`, `python3`, any case, words after the language ignored), else the longest unlabeled block that reads as code, else the first fenced block | the reply from its first to its last line of code (prose around dropped) |
//! | verdict | `sufficient` / `insufficient`, `not sufficient`, yes/no, true/false, in any case, with markdown or punctuation around; JSON `{"verdict": …}` or `{"sufficient": true}`; after a walk-through, the last `Verdict: …`, else the last line naming sufficient/insufficient; else the first verdict word | insufficient |
//! | step | the reply without a `Step N:` / `1.` / `Next step:` prefix or markdown emphasis; of a numbered list, the first item | — |
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
    let lang = |l: &str| l.split_whitespace().next().unwrap_or("").to_string();
    let longest = |pick: &dyn Fn(&(String, String)) -> bool| {
        blocks
            .iter()
            .filter(|b| pick(b))
            .max_by_key(|(_, body)| body.trim().len())
    };
    let python = longest(&|(l, _)| matches!(lang(l).as_str(), "python" | "py" | "python3"));
    let unlabeled = longest(&|(l, body)| l.is_empty() && body.lines().any(looks_like_code));
    match python.or(unlabeled).or(blocks.first()) {
        Some((_, body)) => Code {
            code: body.clone(),
            fallback: false,
        },
        None => {
            let lines: Vec<&str> = reply.lines().collect();
            let first = lines.iter().position(|l| looks_like_code(l));
            let last = lines.iter().rposition(|l| looks_like_code(l));
            let code = match (first, last) {
                (Some(a), Some(b)) => lines[a..=b].join("\n"),
                _ => reply.trim().to_string(),
            };
            Code {
                code,
                fallback: true,
            }
        }
    }
}

/// Whether a line reads as Python rather than prose.
fn looks_like_code(line: &str) -> bool {
    let t = line.trim_start();
    const STARTS: &[&str] = &[
        "import ", "from ", "def ", "class ", "print(", "for ", "while ", "if ", "elif ", "else:",
        "with ", "return ", "try:", "except", "#",
    ];
    if STARTS.iter().any(|s| t.starts_with(s)) {
        return true;
    }
    // `name = …`, `df['x'] = …`, `name(…` with no space before the first `=` or `(`.
    let head: String = t
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '[' | ']' | '\'' | '"'))
        .collect();
    let rest = t[head.len()..].trim_start();
    !head.is_empty()
        && head
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
        && (rest.starts_with('(') || (rest.starts_with('=') && !rest.starts_with("==")))
}

/// The step of a planner reply: without numbering, labels and emphasis; of a list of
/// steps, the first.
pub fn step(reply: &str) -> String {
    let text = reply.trim();
    let mut items: Vec<Vec<&str>> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in text.lines() {
        if strip_number(line.trim()).is_some() && !current.is_empty() {
            items.push(std::mem::take(&mut current));
        }
        current.push(line.trim());
    }
    items.push(current);
    let numbered_list = items.len() > 1 && items.iter().all(|i| strip_number(i[0]).is_some());
    let chosen = if numbered_list {
        &items[0]
    } else {
        &items.concat()
    };
    let joined = chosen.join("\n");
    let mut s = joined.trim().trim_matches('*').trim().to_string();
    loop {
        let before = s.clone();
        if let Some(rest) = strip_number(&s) {
            s = rest.to_string();
        }
        for label in ["next step", "first step", "step"] {
            if s.get(..label.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(label))
            {
                let rest = s[label.len()..].trim_start();
                if let Some(r) = rest.strip_prefix(':') {
                    s = r.to_string();
                }
            }
        }
        s = s.trim().trim_matches('*').trim().to_string();
        if s == before {
            break;
        }
    }
    if s.is_empty() {
        text.to_string()
    } else {
        s
    }
}

/// `rest` of `1. rest`, `1) rest`, `- rest` or `Step 1: rest`.
fn strip_number(line: &str) -> Option<&str> {
    let l = line.trim_start_matches('*').trim_start();
    let after_step = if l.len() > 5 && l[..5].eq_ignore_ascii_case("step ") {
        &l[5..]
    } else {
        l
    };
    let digits = after_step.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 {
        let rest = &after_step[digits..];
        for sep in [".", ")", ":"] {
            if let Some(r) = rest.strip_prefix(sep) {
                return Some(r.trim_start_matches('*').trim());
            }
        }
    }
    l.strip_prefix("- ").map(str::trim)
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
    // A walk-through names quantities as found or not before its verdict: the labelled
    // verdict, else the last line that says sufficient or insufficient, decides.
    let labelled = reply.lines().rev().find_map(|l| {
        let lower = l.to_lowercase();
        let at = lower.find("verdict")?;
        verdict_word(&lower[at + "verdict".len()..])
    });
    let last_line = || {
        reply.lines().rev().find_map(|l| {
            let w = words(l);
            w.iter()
                .any(|x| x == "sufficient" || x == "insufficient")
                .then(|| verdict_word(l))
                .flatten()
        })
    };
    match labelled.or_else(last_line).or_else(|| verdict_word(reply)) {
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

/// The numbers (1-based, at most `count`) of the constraints a verifier's walk-through
/// marks `not applied` (or `applied: no`), each once, in order. Only a line that starts
/// with the constraint's number (after a bullet or the word "constraint") counts: a
/// quantity's line may well say "no" as its value.
pub fn unapplied(reply: &str, count: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for line in reply.lines() {
        let lower = line.to_lowercase();
        let not = lower.contains("not applied")
            || lower.contains("applied: no")
            || lower.contains("applied? no");
        if !not {
            continue;
        }
        let head = lower
            .trim_start()
            .trim_start_matches(['-', '*', '#', ' '])
            .trim_start_matches("constraint")
            .trim_start();
        let digits: String = head.chars().take_while(char::is_ascii_digit).collect();
        match digits.parse::<usize>() {
            Ok(n) if (1..=count).contains(&n) && !out.contains(&n) => out.push(n),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraints_marked_not_applied_are_read_by_their_number() {
        let reply = "1. max_wind_speed: 165.11\n2. normal: no\nConstraints:\n1. Identify the storm with the highest category: applied\n2. Choose the one that appears first: not applied\n- Constraint 3: applied: no\n9. not applied\nVerdict: sufficient";
        assert_eq!(unapplied(reply, 3), vec![2, 3]);
        assert!(unapplied("Verdict: insufficient", 3).is_empty());
    }

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
    fn code_from_small_models_replies() {
        let two = "Load first:\n```py\nimport pandas as pd\n```\nThen the whole script:\n```Python\nimport pandas as pd\ndf = pd.read_csv('a.csv')\nprint(df['x'].mean())\n```\nOutput:\n```\n3.5\n```";
        assert_eq!(
            code(two).code,
            "import pandas as pd\ndf = pd.read_csv('a.csv')\nprint(df['x'].mean())"
        );
        let unlabeled = "```text\nthe plan\n```\n```\nx = 1\nprint(x)\n```";
        assert_eq!(code(unlabeled).code, "x = 1\nprint(x)");
        let prose = "Sure! Here is the script you asked for.\nimport pandas as pd\ndf = pd.read_csv('a.csv')\nprint(df.shape)\nThis prints the shape.";
        let c = code(prose);
        assert!(c.fallback);
        assert_eq!(
            c.code,
            "import pandas as pd\ndf = pd.read_csv('a.csv')\nprint(df.shape)"
        );
    }

    #[test]
    fn steps_without_their_numbering() {
        assert_eq!(step("Load the file."), "Load the file.");
        assert_eq!(step("**Step 2:** Compute the mean."), "Compute the mean.");
        assert_eq!(step("Next step: Filter rows."), "Filter rows.");
        assert_eq!(step("1. Load it.\n2. Average it."), "Load it.");
        assert_eq!(step("3) Sum the column"), "Sum the column");
    }

    #[test]
    fn verdicts_after_a_walk_through() {
        use Verdict::*;
        for (reply, want) in [
            ("- mean_fare: yes, 32.2 printed\n- p_value: no, not printed\n\n**Verdict:** Insufficient.", Insufficient),
            ("1. mean: found (no filter missing)\n**Verdict:** Sufficient.", Sufficient),
            ("mean: not printed\nSo the plan is insufficient", Insufficient),
            ("Everything asked for is there.\nFinal answer: sufficient", Sufficient),
        ] {
            assert_eq!(verdict(reply).value, want, "{reply}");
        }
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
