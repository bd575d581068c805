//! Methods a question names, and their calls: `prompts/methods.md` (overridable like the
//! role prompts) lists methods (a Shapiro–Wilk test, a Pearson correlation, the IQR rule)
//! with the Python that computes them and how its results unpack; the entries whose names
//! the question says go into the prefix every role shares.
//!
//! Why: with a small local model the calls, not the names, are what fail. The traces of
//! `bench dabench` show `correlation, p = s.corr(t)` ("cannot unpack") debugged into the
//! same line three times, and a Shapiro–Wilk p-value read from `describe()`; the planner,
//! coder and debugger all see the question, so all see its methods' calls.

/// The names of an entry and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    /// The names that select it, normalized by [`normalize`].
    names: Vec<String>,
    /// Its heading's first name, as written.
    title: String,
    /// Its lines, as written.
    body: String,
}

/// A parsed methods file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Methods {
    entries: Vec<Entry>,
}

/// At most this many entries go into one prompt: a question naming more is rare, and
/// each entry costs every call of the run its tokens.
pub const MAX_SHOWN: usize = 5;

impl Methods {
    /// The built-in file.
    pub fn builtin() -> Methods {
        Methods::parse(include_str!("../../prompts/methods.md"))
            .expect("the built-in methods file parses (a unit test checks it)")
    }

    /// Parse a methods file: `## name | name…` headings, each followed by its lines; what
    /// comes before the first heading is documentation. A heading without a name or
    /// without lines is refused with what is wrong.
    pub fn parse(text: &str) -> Result<Methods, String> {
        let mut entries: Vec<Entry> = Vec::new();
        let mut open: Option<(usize, Entry)> = None;
        let close = |open: Option<(usize, Entry)>, entries: &mut Vec<Entry>| match open {
            Some((line, mut e)) => {
                e.body = e.body.trim_end().to_string();
                if e.body.trim().is_empty() {
                    return Err(format!(
                        "line {line}: the entry `{}` has no lines under its heading",
                        e.title
                    ));
                }
                entries.push(e);
                Ok(())
            }
            None => Ok(()),
        };
        for (i, line) in text.lines().enumerate() {
            if let Some(head) = line.strip_prefix("## ") {
                close(open.take(), &mut entries)?;
                let written: Vec<&str> = head
                    .split('|')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .collect();
                let names: Vec<String> = written
                    .iter()
                    .map(|n| normalize(n))
                    .filter(|n| !n.is_empty())
                    .collect();
                if names.is_empty() {
                    return Err(format!(
                        "line {}: a `## ` heading names no method (write `## name | other name`)",
                        i + 1
                    ));
                }
                open = Some((
                    i + 1,
                    Entry {
                        names,
                        title: written[0].to_string(),
                        body: String::new(),
                    },
                ));
            } else if let Some((_, e)) = open.as_mut() {
                if !(e.body.is_empty() && line.trim().is_empty()) {
                    e.body.push_str(line);
                    e.body.push('\n');
                }
            }
        }
        close(open, &mut entries)?;
        Ok(Methods { entries })
    }

    /// The entries whose names `question` says, in the file's order, at most
    /// [`MAX_SHOWN`].
    fn named(&self, question: &str) -> Vec<&Entry> {
        let said = format!(" {} ", normalize(question));
        self.entries
            .iter()
            .filter(|e| e.names.iter().any(|n| said.contains(&format!(" {n} "))))
            .take(MAX_SHOWN)
            .collect()
    }

    /// The prefix's section for `question`: its methods' calls, or nothing when it names
    /// none.
    pub fn section(&self, question: &str) -> String {
        let named = self.named(question);
        if named.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "# Methods the question names\nHow each is computed in Python (the names are placeholders; use the files' own columns):\n",
        );
        for e in named {
            out.push_str(&format!("\n{}:\n```python\n{}\n```\n", e.title, e.body));
        }
        out.push('\n');
        out
    }
}

/// Lowercase words separated by single spaces: `-`, `_`, `/`, `'s` and punctuation
/// read as word breaks, so that "Shapiro-Wilk", "shapiro wilk" and "Shapiro–Wilk's" match.
fn normalize(s: &str) -> String {
    let lower = s.to_lowercase().replace("'s", " ").replace("’s", " ");
    lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_file_parses_and_every_entry_has_names_and_lines() {
        let m = Methods::parse(include_str!("../../prompts/methods.md")).unwrap();
        assert!(m.entries.len() >= 20, "{}", m.entries.len());
        for e in &m.entries {
            assert!(!e.names.is_empty() && !e.body.trim().is_empty(), "{e:?}");
            // Every entry's code is Python a reader can paste: no heading inside.
            assert!(!e.body.contains("## "), "{e:?}");
        }
    }

    #[test]
    fn a_question_gets_the_entries_it_names_as_whole_words_in_any_spelling() {
        let m = Methods::builtin();
        let q = "Is WINDSPEED normally distributed?\n\nConstraints:\nUse the Shapiro–Wilk test; \
                 then the Pearson correlation coefficient (r) of A and B.";
        let s = m.section(q);
        assert!(s.contains("stats.shapiro(df[\"col\"].dropna())"), "{s}");
        assert!(s.contains("r, p = stats.pearsonr("), "{s}");
        assert!(!s.contains("spearmanr"), "{s}");
        // In the file's order, each once though two of its names are said.
        assert_eq!(s.matches("stats.shapiro(").count(), 1, "{s}");
        assert!(
            s.find("Shapiro-Wilk:").unwrap() < s.find("Pearson:").unwrap(),
            "{s}"
        );
        // Whole words only: "skewer" is not "skew", "tested" not "t test".
        assert_eq!(m.section("Which skewer sold best? It was tested."), "");
        assert!(m
            .section("Student's t-test between groups")
            .contains("ttest_ind"));
        assert!(m
            .section("compute the z-scores of Fare")
            .contains("stats.zscore"));
    }

    #[test]
    fn at_most_max_shown_entries_go_into_a_prompt() {
        let m = Methods::builtin();
        let q = "shapiro pearson spearman kendall t-test chi-square anova iqr z-score skew";
        let s = m.section(q);
        assert_eq!(s.matches("```python").count(), MAX_SHOWN, "{s}");
    }

    #[test]
    fn malformed_files_are_refused_with_the_line() {
        let e = Methods::parse("# doc\n## \nx = 1\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("names no method"), "{e}");
        let e = Methods::parse("## Foo | bar\n\n## Baz\ny()\n").unwrap_err();
        assert!(e.contains("line 1") && e.contains("`Foo`"), "{e}");
        let m = Methods::parse("intro\n## Foo bar | baz\n\nfoo()\n").unwrap();
        assert_eq!(m.section("use BAZ here"), "# Methods the question names\nHow each is computed in Python (the names are placeholders; use the files' own columns):\n\nFoo bar:\n```python\nfoo()\n```\n\n");
        assert_eq!(Methods::default().section("shapiro"), "");
    }
}
