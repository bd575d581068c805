//! The role prompts: built in from `prompts/`, overridable from a directory, rendered by
//! `{{name}}` substitution.
//!
//! The loop's roles share one prefix, [`Template::Common`] (instructions common to all
//! roles, the question, the descriptions), sent as the system message and byte-identical
//! for every call of a run, so that a server's prefix cache is reused; each role's
//! template holds only what is its own and what changes (plan, code, output, error),
//! sent last as the user message. The analyzer and its debugger have no question and keep
//! a single prompt.
//!
//! Substitution is written by hand: a template engine (minijinja, tera) would bring loops,
//! filters and escaping that prompts do not need, and its syntax errors would surface only
//! at render time. Here every placeholder of an override is checked against what its role
//! provides when the directory is loaded.

use super::methods::Methods;
use super::AgentError;
use std::collections::BTreeMap;
use std::path::Path;

/// One prompt template: which file it comes from and which placeholders it may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Template {
    /// The prefix shared by the loop's roles: instructions, question, descriptions.
    Common,
    /// Analyzer: a describer script for one file (`index --llm-analyzer`).
    Analyzer,
    /// Planner, first step.
    PlannerFirst,
    /// Planner, every later step.
    PlannerNext,
    /// Coder, first script.
    CoderFirst,
    /// Coder, extending the base script by one step.
    CoderNext,
    /// Verifier: sufficient or insufficient.
    Verifier,
    /// Verifier asked again, for the verdict line alone, after a reply without one.
    VerifierVerdict,
    /// Router: `Add Step` or `Step N`.
    Router,
    /// Debugger of a failing describer script (traceback only).
    DebuggerAnalyzer,
    /// Debugger of a failing solution script (traceback and descriptions).
    DebuggerSolution,
    /// Summarizer of a long traceback.
    Summarizer,
    /// Finalyzer: the script that prints the answer in the requested format.
    Finalyzer,
    /// The single-shot ablation: one script that answers the question outright.
    SingleShot,
}

impl Template {
    /// Every template.
    pub const ALL: [Template; 14] = [
        Template::Common,
        Template::Analyzer,
        Template::PlannerFirst,
        Template::PlannerNext,
        Template::CoderFirst,
        Template::CoderNext,
        Template::Verifier,
        Template::VerifierVerdict,
        Template::Router,
        Template::DebuggerAnalyzer,
        Template::DebuggerSolution,
        Template::Summarizer,
        Template::Finalyzer,
        Template::SingleShot,
    ];

    /// The file name in `prompts/`.
    pub fn file_name(self) -> &'static str {
        match self {
            Template::Common => "common.md",
            Template::Analyzer => "analyzer.md",
            Template::PlannerFirst => "planner_first.md",
            Template::PlannerNext => "planner_next.md",
            Template::CoderFirst => "coder_first.md",
            Template::CoderNext => "coder_next.md",
            Template::Verifier => "verifier.md",
            Template::VerifierVerdict => "verifier_verdict.md",
            Template::Router => "router.md",
            Template::DebuggerAnalyzer => "debugger_analyzer.md",
            Template::DebuggerSolution => "debugger_solution.md",
            Template::Summarizer => "summarizer.md",
            Template::Finalyzer => "finalyzer.md",
            Template::SingleShot => "single_shot.md",
        }
    }

    /// The placeholders the agent fills for this template.
    pub fn placeholders(self) -> &'static [&'static str] {
        match self {
            Template::Common => &["question", "methods", "descriptions"],
            Template::Analyzer => &["file"],
            Template::PlannerFirst => &[],
            Template::PlannerNext => &["plan", "result", "missing"],
            Template::CoderFirst => &["step"],
            Template::CoderNext => &["plan", "code", "previous", "number", "step"],
            Template::Verifier | Template::VerifierVerdict => &[
                "guidelines",
                "quantities",
                "constraints",
                "plan",
                "code",
                "result",
            ],
            Template::Router => &["plan", "count", "result", "missing"],
            Template::DebuggerAnalyzer => &["code", "error"],
            Template::DebuggerSolution => &["code", "error", "attempts"],
            Template::Summarizer => &["error"],
            Template::Finalyzer => &["guidelines", "quantities", "plan", "code", "result"],
            Template::SingleShot => &["guidelines"],
        }
    }

    /// Whether the prompt comes after the shared prefix of [`Template::Common`]. The
    /// summarizer does too, though it needs no question: a single-slot server's prompt
    /// cache holds the last prompt only, and a call without the prefix makes the next
    /// role read the descriptions again (measured with `benches/prefix_reuse.py`).
    pub fn after_common(self) -> bool {
        !matches!(
            self,
            Template::Common | Template::Analyzer | Template::DebuggerAnalyzer
        )
    }

    fn builtin(self) -> &'static str {
        match self {
            Template::Common => include_str!("../../prompts/common.md"),
            Template::Analyzer => include_str!("../../prompts/analyzer.md"),
            Template::PlannerFirst => include_str!("../../prompts/planner_first.md"),
            Template::PlannerNext => include_str!("../../prompts/planner_next.md"),
            Template::CoderFirst => include_str!("../../prompts/coder_first.md"),
            Template::CoderNext => include_str!("../../prompts/coder_next.md"),
            Template::Verifier => include_str!("../../prompts/verifier.md"),
            Template::VerifierVerdict => include_str!("../../prompts/verifier_verdict.md"),
            Template::Router => include_str!("../../prompts/router.md"),
            Template::DebuggerAnalyzer => include_str!("../../prompts/debugger_analyzer.md"),
            Template::DebuggerSolution => include_str!("../../prompts/debugger_solution.md"),
            Template::Summarizer => include_str!("../../prompts/summarizer.md"),
            Template::Finalyzer => include_str!("../../prompts/finalyzer.md"),
            Template::SingleShot => include_str!("../../prompts/single_shot.md"),
        }
    }
}

/// The prompt set of a run: the role templates and the methods a question may name
/// ([`Methods`], `methods.md`).
#[derive(Debug, Clone)]
pub struct Prompts {
    texts: BTreeMap<Template, String>,
    methods: Methods,
}

/// The file of [`Methods`] in `prompts/` and in an override directory.
pub const METHODS_FILE: &str = "methods.md";

impl Default for Prompts {
    fn default() -> Self {
        Prompts::builtin()
    }
}

impl Prompts {
    /// The prompts compiled into the binary.
    pub fn builtin() -> Prompts {
        Prompts {
            texts: Template::ALL
                .iter()
                .map(|t| (*t, t.builtin().to_string()))
                .collect(),
            methods: Methods::builtin(),
        }
    }

    /// The built-in prompts with every file of `dir` replacing the one of the same name.
    /// A file whose name is not a template, or a template using a placeholder its role
    /// does not provide, is refused.
    pub fn load(dir: &Path) -> Result<Prompts, AgentError> {
        let mut prompts = Prompts::builtin();
        let entries = std::fs::read_dir(dir).map_err(|e| AgentError::Prompts {
            path: dir.to_path_buf(),
            message: format!("cannot read the directory: {e}"),
        })?;
        for entry in entries {
            let entry = entry.map_err(|e| AgentError::Prompts {
                path: dir.to_path_buf(),
                message: e.to_string(),
            })?;
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name.eq_ignore_ascii_case("README.md") || path.is_dir() {
                continue;
            }
            if name == METHODS_FILE {
                let text = std::fs::read_to_string(&path).map_err(|e| AgentError::Prompts {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                prompts.methods = Methods::parse(&text)
                    .map_err(|message| AgentError::Prompts { path, message })?;
                continue;
            }
            let Some(t) = Template::ALL.iter().find(|t| t.file_name() == name) else {
                let mut known: Vec<_> = Template::ALL.iter().map(|t| t.file_name()).collect();
                known.push(METHODS_FILE);
                return Err(AgentError::Prompts {
                    path,
                    message: format!("not a prompt name; the names are {}", known.join(", ")),
                });
            };
            let text = std::fs::read_to_string(&path).map_err(|e| AgentError::Prompts {
                path: path.clone(),
                message: e.to_string(),
            })?;
            for p in placeholders(&text) {
                if !t.placeholders().contains(&p) {
                    let gets = match t.placeholders() {
                        [] => "nothing".to_string(),
                        names => names.join(", "),
                    };
                    let moved = if t.after_common() && Template::Common.placeholders().contains(&p)
                    {
                        " ({{question}}, {{methods}} and {{descriptions}} are shown once, in common.md, before every role's prompt)"
                    } else {
                        ""
                    };
                    return Err(AgentError::Prompts {
                        path,
                        message: format!(
                            "uses {{{{{p}}}}}, which this prompt does not get; it gets {gets}{moved}"
                        ),
                    });
                }
            }
            prompts.texts.insert(*t, text);
        }
        Ok(prompts)
    }

    /// A short content hash of one template (part of the LLM analyzer's cache key).
    pub fn hash(&self, t: Template) -> String {
        blake3::hash(self.texts[&t].as_bytes()).to_hex()[..16].to_string()
    }

    /// The methods a question may name.
    pub fn methods(&self) -> &Methods {
        &self.methods
    }

    /// These prompts without any method's calls (the `method-calls` rule off).
    pub fn without_methods(&self) -> Prompts {
        Prompts {
            texts: self.texts.clone(),
            methods: Methods::default(),
        }
    }

    /// Fill `t` with `values`. Placeholders without a value are left as they are written.
    pub fn render(&self, t: Template, values: &[(&str, &str)]) -> String {
        render(&self.texts[&t], values)
    }
}

/// The `{{name}}` placeholders of `text`, in order.
fn placeholders(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let name = after[..end].trim();
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push(name);
        }
        rest = &after[end + 2..];
    }
    out
}

/// One pass over `text`, so that a value containing `{{x}}` (code, data) is never
/// substituted again.
fn render(text: &str, values: &[(&str, &str)]) -> String {
    let mut out =
        String::with_capacity(text.len() + values.iter().map(|v| v.1.len()).sum::<usize>());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let value = after.find("}}").and_then(|end| {
            let name = after[..end].trim();
            values
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v, end))
        });
        match value {
            Some((v, end)) => {
                out.push_str(v);
                rest = &after[end + 2..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_prompts_use_only_their_placeholders_and_all_of_them() {
        let p = Prompts::builtin();
        for t in Template::ALL {
            let used = placeholders(&p.texts[&t]);
            for u in &used {
                assert!(t.placeholders().contains(u), "{t:?} uses {u}");
            }
            for given in t.placeholders() {
                assert!(used.contains(given), "{t:?} never shows {given}");
            }
        }
    }

    #[test]
    fn render_substitutes_once_and_keeps_unknown_braces() {
        let out = render(
            "Q: {{question}} / {{ code }} / {{other}} / {{",
            &[("question", "what is {{code}}?"), ("code", "x = {1: 2}")],
        );
        assert_eq!(out, "Q: what is {{code}}? / x = {1: 2} / {{other}} / {{");
    }

    #[test]
    fn a_methods_file_in_the_directory_replaces_the_builtin_one_or_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(METHODS_FILE),
            "## Gini | gini coefficient\ngini(x)\n",
        )
        .unwrap();
        let p = Prompts::load(dir.path()).unwrap();
        assert!(p
            .methods()
            .section("the Gini of incomes")
            .contains("gini(x)"));
        assert_eq!(p.methods().section("a Shapiro-Wilk test"), "");
        assert!(Prompts::builtin()
            .methods()
            .section("a Shapiro-Wilk test")
            .contains("stats.shapiro"));
        std::fs::write(dir.path().join(METHODS_FILE), "## | \nx\n").unwrap();
        let e = Prompts::load(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("methods.md") && e.contains("names no method"),
            "{e}"
        );
    }

    #[test]
    fn overrides_replace_by_name_and_refuse_typos() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("verifier.md"), "V {{plan}} {{result}}").unwrap();
        std::fs::write(dir.path().join("common.md"), "C {{question}}").unwrap();
        let p = Prompts::load(dir.path()).unwrap();
        assert_eq!(
            p.render(Template::Verifier, &[("plan", "q"), ("result", "r")]),
            "V q r"
        );
        assert_eq!(p.render(Template::Common, &[("question", "q")]), "C q");

        std::fs::write(dir.path().join("verifier.md"), "V {{question}}").unwrap();
        let e = Prompts::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("common.md"), "{e}");
        std::fs::write(dir.path().join("verifier.md"), "V {{plan}} {{result}}").unwrap();
        assert_eq!(
            p.render(Template::Router, &[]),
            Prompts::builtin().render(Template::Router, &[])
        );

        std::fs::write(dir.path().join("verifier.md"), "V {{reslut}}").unwrap();
        let e = Prompts::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("reslut") && e.contains("result"), "{e}");

        std::fs::remove_file(dir.path().join("verifier.md")).unwrap();
        std::fs::write(dir.path().join("verfier.md"), "x").unwrap();
        let e = Prompts::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("not a prompt name"), "{e}");
    }
}
