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

    /// The titles of the methods `question` names, in the file's order.
    pub fn titles(&self, question: &str) -> Vec<String> {
        self.named(question)
            .into_iter()
            .map(|e| e.title.clone())
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

impl Methods {
    /// `text` with every method name it says blanked out (with a "test" or "tests" that
    /// follows it), for retrieval: a method's name describes the computation, not the
    /// data, and its words match files by accident ("Shapiro-Wilk test" ranks
    /// any `*_test.csv` above the table asked about); blanking them raises recall@1 on
    /// benchmark questions (BENCHMARKS.md, Retrieval quality).
    pub fn without_names(&self, text: &str) -> String {
        let words = words(text);
        let lower: Vec<String> = words
            .iter()
            .map(|&(s, e)| text[s..e].to_lowercase())
            .collect();
        let mut names: Vec<Vec<&str>> = self
            .entries
            .iter()
            .flat_map(|e| e.names.iter().map(|n| n.split(' ').collect()))
            .collect();
        // The longest name first: "t test" before "t", "linear regression" before
        // "regression".
        names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        let mut cut: Vec<(usize, usize)> = Vec::new();
        let mut i = 0;
        while i < lower.len() {
            let found = names.iter().find(|n| {
                i + n.len() <= lower.len() && n.iter().zip(&lower[i..]).all(|(a, b)| a == b)
            });
            match found {
                Some(n) => {
                    let mut last = i + n.len() - 1;
                    if lower
                        .get(last + 1)
                        .is_some_and(|w| w == "test" || w == "tests")
                    {
                        last += 1;
                    }
                    let (s, e) = (words[i].0, words[last].1);
                    // Names side by side ("a Pearson correlation") are one gap.
                    match cut.last_mut() {
                        Some(prev) if text[prev.1..s].trim().is_empty() => prev.1 = e,
                        _ => cut.push((s, e)),
                    }
                    i = last + 1;
                }
                None => i += 1,
            }
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (s, e) in cut {
            out.push_str(&text[at..s]);
            out.push(' ');
            at = e;
        }
        out.push_str(&text[at..]);
        out
    }
}

/// The byte spans of `text`'s words as [`normalize`] splits them (runs of alphanumerics;
/// the `s` of a possessive `'s` is no word).
fn words(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        if c.is_alphanumeric() {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            let possessive =
                &text[s..i] == "s" && matches!(text[..s].chars().next_back(), Some('\'' | '’'));
            if !possessive {
                out.push((s, i));
            }
        }
    }
    out
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
        // The strongest of several pairs without the matrix's diagonal (a column's r = 1
        // with itself is no pair).
        assert!(
            s.contains("c.where(~np.eye(len(c), dtype=bool)).stack()"),
            "{s}"
        );
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
        // A question asking which columns lack values gets the call that lists them,
        // not only the count of one column (a 1.5B planner counted `neg` five rounds).
        let s = m.section("Which column(s) contain missing values in the dataset?");
        assert!(s.contains("df.columns[df.isna().any()]"), "{s}");
    }

    #[test]
    fn method_names_are_blanked_for_retrieval_and_the_rest_kept_as_written() {
        let m = Methods::builtin();
        let q = "Is the Age of passengers normal?\n\nConstraints:\nUse the Shapiro-Wilk test, \
                 then Student's t-test and a Pearson correlation of 'Fare' with SibSp.";
        let out = m.without_names(q);
        assert_eq!(
            out,
            "Is the Age of passengers normal?\n\nConstraints:\nUse the  , \
                 then   and a   of 'Fare' with SibSp."
        );
        // Whole words only, and a text naming none is unchanged.
        let plain = "Which skewer was tested on the test_x.csv table?";
        assert_eq!(m.without_names(plain), plain);
        // The longest name wins: "linear regression", not a dangling "linear".
        assert_eq!(
            m.without_names("fit a linear regression model"),
            "fit a   model"
        );
        assert_eq!(
            Methods::default().without_names("shapiro test"),
            "shapiro test"
        );
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
