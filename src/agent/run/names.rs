//! Names no given file has. A question or step that names a column or key none of the
//! files holds (the model was given the wrong file) sends the run to retrieval for more
//! files; when there is no retriever (pinned files) or it finds nothing, the name is kept
//! to be said in the answer, instead of letting the coder silently use another column.
//!
//! Read conservatively: a name counts only when the text marks it as a column (a quoted
//! name beside "column", "key", "field"…, `the Close Price column`), or a KeyError names
//! something the question or plan asked for; and it is unknown only when it is neither a
//! file's column (compared normalized: case, spaces, `_`, `-`) nor anywhere in the
//! descriptions (values, sheet names).

use super::{Loop, State};
use crate::agent::context::{descriptions, normalize_name, FileContext};
use crate::agent::record::Event;
use crate::agent::rules::Rule;
use crate::agent::AgentError;
use std::path::PathBuf;

/// Words that mark a neighbouring name as a column or key.
const MARKERS: &[&str] = &[
    "column",
    "columns",
    "col",
    "field",
    "fields",
    "key",
    "keys",
    "attribute",
    "variable",
    "feature",
    "header",
];

/// Characters around a quoted name searched for a marker.
const MARKER_WINDOW: usize = 24;

impl Loop<'_> {
    /// Check the names `texts` (the question, a step) mark as columns.
    pub(super) async fn check_step(
        &self,
        round: usize,
        st: &mut State,
        texts: &[&str],
    ) -> Result<(), AgentError> {
        for t in texts {
            st.created
                .extend(created_names(t).iter().map(|n| normalize_name(n)));
        }
        let names: Vec<String> = texts
            .iter()
            .flat_map(|t| marked_names(t))
            .filter(|n| !st.created.contains(&normalize_name(n)))
            .collect();
        self.resolve(round, st, names).await
    }

    /// Check the key of a KeyError in `stderr`, when the question or plan named it.
    pub(super) async fn check_key_error(
        &self,
        round: usize,
        st: &mut State,
        stderr: &str,
        plan: &[String],
    ) -> Result<(), AgentError> {
        let Some(key) = key_error(stderr) else {
            return Ok(());
        };
        if made_by_analysis(&st.created, &key) {
            // The script's bug, not a missing file.
            return Ok(());
        }
        let asked = std::iter::once(self.question)
            .chain(plan.iter().map(String::as_str))
            .any(|t| normalize_name(t).contains(&normalize_name(&key)));
        if asked {
            self.resolve(round, st, vec![key]).await?;
        }
        Ok(())
    }

    /// Names of `names` no file has (and not checked before): ask the retriever for
    /// files holding them; those still unknown are kept for the answer.
    async fn resolve(
        &self,
        round: usize,
        st: &mut State,
        names: Vec<String>,
    ) -> Result<(), AgentError> {
        let mut unknown = Vec::new();
        for n in names {
            let key = normalize_name(&n);
            if key.is_empty() || st.checked.contains(&key) {
                continue;
            }
            st.checked.push(key);
            if !known(&n, &st.files, &st.desc) {
                unknown.push(n);
            }
        }
        if unknown.is_empty() {
            return Ok(());
        }
        let listed = unknown
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        let added = match self.retriever {
            Some(r) => {
                let have: Vec<PathBuf> = st.files.iter().map(|f| f.path.clone()).collect();
                let query = format!("{} {}", self.question, unknown.join(" "));
                r.more(&query, &have)?
            }
            None => Vec::new(),
        };
        let added: Vec<FileContext> = added
            .into_iter()
            .filter(|f| !st.files.iter().any(|g| g.path == f.path))
            .collect();
        if !added.is_empty() {
            st.files.extend(added.iter().cloned());
            st.desc = descriptions(&st.files);
            self.prefix.set_files(&st.files).await;
        }
        let still: Vec<String> = unknown
            .into_iter()
            .filter(|n| !known(n, &st.files, &st.desc))
            .collect();
        self.record.event(&Event::Files {
            round,
            names: listed.clone(),
            added: added.iter().map(|f| f.path.display().to_string()).collect(),
            unknown: still.clone(),
        })?;
        if added.is_empty() {
            self.fired(
                Rule::UnknownNames,
                Some(round),
                format!(
                    "no given file has {listed}{}",
                    if self.retriever.is_some() {
                        "; retrieval found no other file"
                    } else {
                        " (files pinned: no retrieval)"
                    }
                ),
            )?;
        } else {
            self.fired(
                Rule::UnknownNames,
                Some(round),
                format!(
                    "no given file had {listed}; retrieval added {}",
                    added
                        .iter()
                        .map(|f| f.rel.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )?;
        }
        st.unknown.extend(still);
        Ok(())
    }
}

/// Whether some file has `name`: one of its columns, or (when a file's columns are
/// unknown, or the name is a value or a sheet) anywhere in the descriptions.
fn known(name: &str, files: &[FileContext], desc: &str) -> bool {
    let key = normalize_name(name);
    files
        .iter()
        .any(|f| f.columns.iter().any(|c| normalize_name(c) == key))
        || normalize_name(desc).contains(&key)
}

/// The names `text` marks as columns or keys: a quoted name with a marker word next to
/// it, and the capitalized words just before "column" (`the Close Price column`).
pub fn marked_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lower = text.to_lowercase();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (start, q) = chars[i];
        if matches!(q, '\'' | '"' | '`' | '“' | '‘') {
            let close = match q {
                '“' => '”',
                '‘' => '’',
                c => c,
            };
            if let Some(j) = (i + 1..chars.len()).find(|&j| chars[j].1 == close) {
                let inner = &text[start + q.len_utf8()..chars[j].0];
                let end = chars[j].0 + close.len_utf8();
                if plausible(inner) && has_marker(&lower, start, end) {
                    out.push(inner.trim().to_string());
                }
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    // `the Close Price column`: capitalized words right before the marker.
    let words: Vec<&str> = text.split_whitespace().collect();
    for (k, w) in words.iter().enumerate() {
        let bare = w
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if !(bare == "column" || bare == "columns") || k == 0 {
            continue;
        }
        let mut from = k;
        while from > 0 && from + 4 > k {
            let p = words[from - 1];
            let starts_upper = p.chars().next().is_some_and(char::is_uppercase);
            let plain = p.chars().all(|c| c.is_alphanumeric() || c == '_');
            if !(starts_upper && plain) {
                break;
            }
            from -= 1;
        }
        // A capitalized first word of a sentence ("Compute the …") is not a name.
        if from < k && !(from == 0 || words[from - 1].ends_with(['.', '?', '!'])) {
            out.push(words[from..k].join(" "));
        }
    }
    out
}

/// A quoted text that may be a column name: short, not a number, not a path or file.
fn plausible(s: &str) -> bool {
    let s = s.trim();
    !s.is_empty()
        && s.chars().count() <= 40
        && s.split_whitespace().count() <= 4
        && s.parse::<f64>().is_err()
        && !s.contains('/')
        && !s.contains('\\')
        // Code, not a name: `scipy.stats.shapiro()`, `df['a']`.
        && !s.contains('(')
        && !s.contains('[')
        && !s.rsplit_once('.').is_some_and(|(_, ext)| {
            (2..=5).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphabetic())
        })
}

/// A marker word within [`MARKER_WINDOW`] bytes before `start` or after `end`.
fn has_marker(lower: &str, start: usize, end: usize) -> bool {
    let mut from = start.saturating_sub(MARKER_WINDOW);
    while !lower.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = (end + MARKER_WINDOW).min(lower.len());
    while !lower.is_char_boundary(to) {
        to += 1;
    }
    let around = format!("{} {}", &lower[from..start], &lower[end..to]);
    around
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| MARKERS.contains(&w))
}

/// Words that, just before a quoted name, say the analysis makes it (`a new feature
/// called "FamilySize"`, `create a column 'AgeGroup'`): no file is expected to have it.
const CREATING: &[&str] = &[
    "called", "named", "new", "create", "creates", "creating", "generate", "add", "adds", "derive",
    "define", "as",
];

/// Characters before a quoted name searched for a [`CREATING`] word.
const CREATING_WINDOW: usize = 32;

/// Whether `key` is a column the analysis makes itself, or a piece of one's name (a
/// script building `A_B_RATIO` may read `A_B`): `created` holds normalized names.
fn made_by_analysis(created: &[String], key: &str) -> bool {
    let key = normalize_name(key);
    !key.is_empty() && created.iter().any(|c| c.contains(&key))
}

/// The quoted names `text` says the analysis creates.
pub fn created_names(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    let mut rest = 0;
    while let Some(off) = text[rest..].find(['\'', '"', '`', '“']) {
        let start = rest + off;
        let q = text[start..].chars().next().expect("found a char");
        let close = if q == '“' { '”' } else { q };
        let inner_start = start + q.len_utf8();
        let Some(len) = text[inner_start..].find(close) else {
            break;
        };
        let inner = &text[inner_start..inner_start + len];
        // Only the text since the previous quoted name: `create 'X' from 'Y'` creates X.
        let mut from = start.saturating_sub(CREATING_WINDOW).max(rest);
        while !lower.is_char_boundary(from) {
            from -= 1;
        }
        let before: Vec<&str> = lower[from..start]
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        // The word right before the name, or "new"/"create" a little earlier.
        let creates = before.last().is_some_and(|w| CREATING.contains(w))
            || before
                .iter()
                .any(|w| matches!(*w, "new" | "create" | "creates" | "generate"));
        if creates && plausible(inner) {
            out.push(inner.trim().to_string());
        }
        rest = inner_start + len + close.len_utf8();
    }
    out
}

/// The key of the last `KeyError: 'x'` in a traceback.
pub fn key_error(stderr: &str) -> Option<String> {
    let line = stderr.lines().rev().find(|l| l.contains("KeyError: "))?;
    let rest = line[line.find("KeyError: ")? + "KeyError: ".len()..].trim();
    let q = rest.chars().next()?;
    if !matches!(q, '\'' | '"') {
        return None;
    }
    let inner = &rest[1..];
    let end = inner.find(q)?;
    let key = &inner[..end];
    (!key.is_empty()).then(|| key.to_string())
}

/// For a KeyError naming a column that some given files do have (the script read the
/// wrong file): the line telling the debugger which. `None` for other errors, or when no
/// file has the key (that case goes to retrieval instead).
pub(super) fn key_holders(stderr: &str, files: &[FileContext]) -> Option<String> {
    let key = key_error(stderr)?;
    let norm = normalize_name(&key);
    // Each file that has the column, with the column as the file writes it where that
    // differs from the key (`"num. calls abandoned "` for "num. calls abandoned": the
    // script read the right file but not the exact name).
    let holders: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let c = f.columns.iter().find(|c| normalize_name(c) == norm)?;
            Some(if *c == key {
                format!("`{}`", f.path.display())
            } else {
                format!(
                    "`{}` (written {c:?}: use that exact name)",
                    f.path.display()
                )
            })
        })
        .collect();
    (!holders.is_empty()).then(|| {
        format!(
            "Note: the column {key:?} is in {}; load the file that has it, as its `load:` line says.",
            holders.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_marked_as_columns_are_read() {
        assert_eq!(
            marked_names("What is the mean of the \"Close Price\" column?"),
            ["Close Price"]
        );
        assert_eq!(
            marked_names("Use column 'Fare' and the `Age` field. Then keep the rows where the city is 'north'."),
            ["Fare", "Age"]
        );
        assert_eq!(
            marked_names("Compute the average of the Close Price column."),
            ["Close Price"]
        );
        assert!(marked_names("Load 'sales.csv' and use the IQR method 'iqr'.").is_empty());
        assert!(marked_names("Column sums are needed.").is_empty());
    }

    #[test]
    fn names_the_analysis_creates_are_read() {
        let q = "Generate a new feature called \"FamilySize\" by summing the \"SibSp\" and \"Parch\" columns. Create a column 'AgeGroup' from the 'Age' column.";
        assert_eq!(created_names(q), ["FamilySize", "AgeGroup"]);
        assert!(created_names("What is the mean of the \"Close Price\" column?").is_empty());
        assert_eq!(created_names("Create a new column 'X' from 'Y'."), ["X"]);
    }

    #[test]
    fn a_key_error_names_the_files_that_have_the_key() {
        let file = |p: &str, cols: &[&str]| FileContext {
            path: p.into(),
            rel: p.trim_start_matches('/').into(),
            description: String::new(),
            columns: cols.iter().map(|c| c.to_string()).collect(),
            staged: None,
        };
        let files = [
            file("/l/houses.csv", &["MedInc", "HouseAge"]),
            file("/l/passengers.csv", &["Pclass", "Age"]),
        ];
        let tb = "Traceback (most recent call last):\nKeyError: 'age'\n";
        assert_eq!(
            key_holders(tb, &files).as_deref(),
            Some("Note: the column \"age\" is in `/l/passengers.csv` (written \"Age\": use that exact name); load the file that has it, as its `load:` line says.")
        );
        assert_eq!(key_holders("KeyError: 'Fare'", &files), None);
        let padded = [file(
            "/l/calls.csv",
            &["timestamp", "num. calls abandoned "],
        )];
        assert_eq!(
            key_holders("KeyError: 'num. calls abandoned'", &padded).as_deref(),
            Some("Note: the column \"num. calls abandoned\" is in `/l/calls.csv` (written \"num. calls abandoned \": use that exact name); load the file that has it, as its `load:` line says.")
        );
        assert_eq!(key_holders("NameError: name 'pd'", &files), None);
    }

    #[test]
    fn a_piece_of_a_created_name_is_made_by_the_analysis() {
        // A question's feature to create, and the KeyError of its script.
        let created: Vec<String> = created_names(
            "Create a new feature named \"TOTUSJZ_TOTUSJH_RATIO\" by dividing TOTUSJZ by TOTUSJH.",
        )
        .iter()
        .map(|n| normalize_name(n))
        .collect();
        assert!(made_by_analysis(&created, "TOTUSJZ_TOTUSJH"));
        assert!(made_by_analysis(&created, "totusjz_totusjh_ratio"));
        assert!(!made_by_analysis(&created, "MEANGAM"));
        assert!(!made_by_analysis(&created, ""));
    }

    #[test]
    fn code_beside_a_marker_is_no_column_name() {
        // As the local model wrote a step.
        assert_eq!(
            marked_names("Compute the Shapiro-Wilk test of the `MEANPOT` column using the `scipy.stats.shapiro()` function."),
            ["MEANPOT"]
        );
    }

    #[test]
    fn key_errors_give_their_key() {
        let tb = "Traceback (most recent call last):\n  File \"x.py\", line 2\nKeyError: 'Close Price'\n";
        assert_eq!(key_error(tb).as_deref(), Some("Close Price"));
        assert_eq!(key_error("KeyError: 3"), None);
        assert_eq!(key_error("ValueError: x"), None);
    }

    #[test]
    fn a_name_is_known_by_column_or_description() {
        let f = FileContext {
            path: "/l/a.csv".into(),
            rel: "a.csv".into(),
            description: "a.csv — CSV\n  region: text, top \"north\"".into(),
            columns: vec!["close_price".into(), "region".into()],
            staged: None,
        };
        let desc = descriptions(std::slice::from_ref(&f));
        assert!(known("Close Price", std::slice::from_ref(&f), &desc));
        assert!(known("north", std::slice::from_ref(&f), &desc));
        assert!(!known("Open Price", std::slice::from_ref(&f), &desc));
    }
}
