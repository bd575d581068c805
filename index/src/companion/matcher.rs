//! Pairing the documentation files of one folder with its headerless data files.
//!
//! A data file with N columns takes a documentation file listing N columns, preferring,
//! in order:
//! 1. one whose name, less generic documentation words, is the data file's
//!    (`station_dat.text` ↔ `station.dat`, `x_variabledescrip.csv` ↔ `x.csv`);
//! 2. the one whose name is only documentation words (`readme.txt`, `format.txt`);
//! 3. the only one of the folder not named after another file.
//!
//! Two candidates at the best level leave the data file unlinked: a guess would put wrong
//! names on every column.
//!
//! Before counts, content: a field list whose positions fit the data file's lines
//! ([`super::fit::fits`]) names its columns whatever the file's name and column count
//! as described (fields written without blanks between them read as one); several
//! that fit are told apart by the same name levels.

use super::fit::fits;
use super::{Fit, Link, Listing};

/// Words that make a file name say "documentation" (a name token containing one is
/// dropped when comparing names).
const DOC_WORDS: [&str; 12] = [
    "variable",
    "descrip",
    "format",
    "readme",
    "dictionar",
    "codebook",
    "layout",
    "schema",
    "column",
    "field",
    "metadata",
    "definition",
];
/// Short name tokens that say "documentation" only as whole tokens.
const DOC_TOKENS: [&str; 9] = [
    "dict", "fmt", "doc", "docs", "var", "vars", "info", "meta", "desc",
];

/// A file of one folder, as the matcher sees it.
#[derive(Debug, Clone)]
pub struct FolderFile {
    /// Lake-relative path.
    pub path: String,
    /// Column count of its headerless table, when it is a headerless data file.
    pub headerless: Option<usize>,
    /// The columns it documents, when it reads as documentation.
    pub documents: Option<Listing>,
    /// Its first data lines, read when a field list with positions may fit them.
    pub lines: Option<String>,
}

/// The file name of a path, lowercased, split into stem tokens and extension.
fn name_parts(path: &str) -> (Vec<String>, String) {
    let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s.to_string(), e.to_string()),
        _ => (name.clone(), String::new()),
    };
    let tokens = stem
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect();
    (tokens, ext)
}

fn is_doc_word(token: &str) -> bool {
    DOC_WORDS.iter().any(|w| token.contains(w)) || DOC_TOKENS.contains(&token)
}

/// Whether a file name (lowercased) has a documentation word in it.
pub fn has_doc_word(name: &str) -> bool {
    let (tokens, _) = name_parts(name);
    tokens.iter().any(|t| is_doc_word(t))
}

/// A documentation file's name tokens without the documentation words.
fn doc_key(path: &str) -> Vec<String> {
    let (mut tokens, _) = name_parts(path);
    tokens.retain(|t| !is_doc_word(t));
    tokens
}

/// Whether a documentation key names this data file: its stem, optionally followed by
/// its extension (`station_dat` for `station.dat`).
fn names_file(key: &[String], data: &str) -> bool {
    let (stem, ext) = name_parts(data);
    !key.is_empty()
        && (key == stem.as_slice()
            || (key.len() == stem.len() + 1
                && key[..stem.len()] == stem[..]
                && key[stem.len()] == ext))
}

/// Whether a documentation key names some file of the folder other than `except`.
fn names_other(key: &[String], files: &[FolderFile], except: &str, doc: &str) -> bool {
    files
        .iter()
        .any(|f| f.path != except && f.path != doc && names_file(key, &f.path))
}

/// The only candidate at the best of the name levels, if one.
fn pick<'a>(
    cands: &[&'a (&'a FolderFile, &'a Listing, Vec<String>)],
    data: &FolderFile,
    files: &[FolderFile],
) -> Option<&'a (&'a FolderFile, &'a Listing, Vec<String>)> {
    let levels: [Vec<_>; 3] = [
        cands
            .iter()
            .filter(|(_, _, k)| names_file(k, &data.path))
            .collect(),
        cands.iter().filter(|(_, _, k)| k.is_empty()).collect(),
        cands
            .iter()
            .filter(|(f, _, k)| !names_other(k, files, &data.path, &f.path))
            .collect(),
    ];
    match levels.iter().find(|l| !l.is_empty())?.as_slice() {
        [one] => Some(**one),
        _ => None,
    }
}

/// The links of one folder's files, by data path.
pub fn match_folder(files: &[FolderFile]) -> Vec<Link> {
    let docs: Vec<(&FolderFile, &Listing, Vec<String>)> = files
        .iter()
        .filter_map(|f| Some((f, f.documents.as_ref()?, doc_key(&f.path))))
        .collect();
    let mut links = Vec::new();
    for data in files {
        // A file that reads as documentation is documentation, even when its aligned
        // lines also make a headerless table.
        let (Some(n), None) = (data.headerless, &data.documents) else {
            continue;
        };
        let lines = data.lines.as_deref().map(super::fit::data_lines);
        let fitting: Vec<_> = docs
            .iter()
            .filter(|(f, l, _)| {
                f.path != data.path && lines.as_ref().is_some_and(|lines| fits(l, lines))
            })
            .collect();
        if !fitting.is_empty() {
            if let Some((doc, l, _)) = pick(&fitting, data, files) {
                links.push(Link {
                    data: data.path.clone(),
                    doc: doc.path.clone(),
                    columns: l.columns.clone(),
                    fit: l.spans.clone().map(|spans| Fit { spans, table: None }),
                });
            }
            continue;
        }
        // By count, as long as the codes agree with what the lines hold.
        let cands: Vec<_> = docs
            .iter()
            .filter(|(f, l, _)| {
                f.path != data.path
                    && l.count_ok
                    && l.columns.len() == n
                    && lines
                        .as_ref()
                        .is_none_or(|lines| super::fit::tokens_agree(l, lines))
            })
            .collect();
        if let Some((doc, l, _)) = pick(&cands, data, files) {
            links.push(Link {
                data: data.path.clone(),
                doc: doc.path.clone(),
                columns: l.columns.clone(),
                fit: None,
            });
        }
    }
    links
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::companion::DocColumn;

    fn cols(n: usize) -> Listing {
        Listing {
            columns: (0..n)
                .map(|i| DocColumn {
                    name: format!("c{i}"),
                    unit: None,
                    description: None,
                })
                .collect(),
            spans: None,
            numeric: vec![None; n],
            count_ok: true,
        }
    }
    fn data(path: &str, n: usize) -> FolderFile {
        FolderFile {
            path: path.into(),
            headerless: Some(n),
            documents: None,
            lines: None,
        }
    }
    fn doc(path: &str, n: usize) -> FolderFile {
        FolderFile {
            path: path.into(),
            headerless: None,
            documents: Some(cols(n)),
            lines: None,
        }
    }
    fn pairs(files: &[FolderFile]) -> Vec<(String, String)> {
        match_folder(files)
            .into_iter()
            .map(|l| (l.data, l.doc))
            .collect()
    }
    fn p(a: &str, b: &str) -> (String, String) {
        (a.into(), b.into())
    }

    #[test]
    fn names_that_match_win_over_the_rest() {
        let files = [
            data("d/station.dat", 4),
            data("d/other.dat", 4),
            doc("d/station_dat.text", 4),
            doc("d/other_format.txt", 4),
            data("d/x.csv", 3),
            doc("d/x_variabledescrip.csv", 3),
            doc("d/readme.txt", 3),
        ];
        assert_eq!(
            pairs(&files),
            [
                p("d/station.dat", "d/station_dat.text"),
                p("d/other.dat", "d/other_format.txt"),
                p("d/x.csv", "d/x_variabledescrip.csv"),
            ]
        );
    }

    #[test]
    fn a_readme_or_a_single_candidate_when_no_name_matches() {
        // A readme documents every data file of its column count.
        let files = [
            data("a/1999.dat", 2),
            data("a/2000.dat", 2),
            doc("a/README.txt", 2),
            doc("a/notes.txt", 2),
        ];
        assert_eq!(
            pairs(&files),
            [
                p("a/1999.dat", "a/README.txt"),
                p("a/2000.dat", "a/README.txt")
            ]
        );
        // One candidate with the right count, named after nothing else.
        let files = [
            data("b/obs.dat", 3),
            doc("b/columns.txt", 2),
            doc("b/legend.txt", 3),
        ];
        assert_eq!(pairs(&files), [p("b/obs.dat", "b/legend.txt")]);
    }

    /// A field list placing `n` fields `w` characters wide, end to end.
    fn placed(path: &str, n: usize, w: usize) -> FolderFile {
        let mut l = cols(n);
        l.spans = Some((0..n).map(|i| (i * w, i * w + w)).collect());
        l.numeric = vec![Some(true); n];
        l.count_ok = false;
        FolderFile {
            path: path.into(),
            headerless: None,
            documents: Some(l),
            lines: None,
        }
    }
    fn lines(path: &str, n: usize, text: &str) -> FolderFile {
        FolderFile {
            lines: Some(text.into()),
            ..data(path, n)
        }
    }

    #[test]
    fn a_field_list_that_fits_the_lines_names_them_whatever_the_names() {
        // Six two-digit fields that touch: described as one column.
        let text = "010203040506
111213141516
212223242526
";
        let files = [
            lines("e/1998.dat", 1, text),
            lines("e/1999.dat", 1, text),
            placed("e/station_layout.txt", 6, 2),
            placed("e/other.txt", 4, 2),
        ];
        let links = match_folder(&files);
        assert_eq!(
            links
                .iter()
                .map(|l| (l.data.as_str(), l.doc.as_str()))
                .collect::<Vec<_>>(),
            [
                ("e/1998.dat", "e/station_layout.txt"),
                ("e/1999.dat", "e/station_layout.txt")
            ]
        );
        assert_eq!(links[0].fit.as_ref().unwrap().spans.len(), 6);
        // Two lists that fit, neither preferred by name: nothing.
        let files = [
            lines("e/1998.dat", 1, text),
            placed("e/a.txt", 6, 2),
            placed("e/b.txt", 3, 4),
        ];
        assert!(match_folder(&files).is_empty());
        // A bare list of positions does not name by count alone.
        let files = [data("e/1998.dat", 6), placed("e/a.txt", 6, 2)];
        assert!(match_folder(&files).is_empty());
    }

    #[test]
    fn ambiguity_or_a_wrong_count_links_nothing() {
        // Two unrelated candidates of the right count.
        let files = [data("c/obs.dat", 3), doc("c/a.txt", 3), doc("c/b.txt", 3)];
        assert!(pairs(&files).is_empty());
        // The matching name lists another number of columns.
        let files = [data("c/obs.dat", 3), doc("c/obs_format.txt", 4)];
        assert!(pairs(&files).is_empty());
        // Documentation named after another file is not taken for this one.
        let files = [
            data("c/obs.dat", 3),
            data("c/else.csv", 5),
            doc("c/else_fmt.txt", 3),
        ];
        assert!(pairs(&files).is_empty());
    }
}
