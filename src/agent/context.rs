//! The files a run works on and how they are shown to the LLM: retrieved from the index
//! for the question (as many as fit a token budget), or pinned by the user.

use super::llm::tokens;
use super::staging::{Located, Locator};
use super::AgentError;
use lakestar_index::analyze::{Content, Description, RenderOptions};
use lakestar_index::search::engine::{SearchOptions, Searcher};
use lakestar_index::search::written_exactly;
use lakestar_index::{crawl, dataset, render, CatalogReader};
use std::path::{Path, PathBuf};

/// Bytes of one file's description in a prompt.
pub const DESCRIPTION_BYTES: usize = 4096;

/// Files considered when K is chosen by the budget.
const MAX_RETRIEVED: usize = 20;

/// One data file as the agent shows it.
#[derive(Debug, Clone)]
pub struct FileContext {
    /// Absolute path, as the generated code must use it.
    pub path: PathBuf,
    /// Relative to the lake root (or as given).
    pub rel: String,
    /// The description shown in prompts.
    pub description: String,
    /// The names of its columns (all tables) or keys, from the index's description;
    /// empty when unknown (an LLM analyzer's text, a file the index could not read).
    pub columns: Vec<String>,
    /// For a lake in an object store, the staged copy `path` names, held for the run.
    pub staged: Option<std::sync::Arc<lakestar_index::store::stage::Staged>>,
}

/// More files for a run whose step names a column or key no given file has; provided
/// by the caller (an index-backed one is [`IndexRetriever`]).
pub trait Retriever: Send + Sync {
    /// Files for `query` other than `have` (absolute paths); empty when there are none.
    fn more(&self, query: &str, have: &[PathBuf]) -> Result<Vec<FileContext>, AgentError>;
}

/// Files the index at `dir` retrieves; the searcher is opened at most once per run, and
/// only when a step first needs more files (most runs never do).
pub struct IndexRetriever {
    searcher: std::sync::OnceLock<Searcher>,
    dir: PathBuf,
    count: FileCount,
}

impl IndexRetriever {
    /// A retriever over the index at `dir`, giving up to `count` files a query, with its
    /// searcher open now (an index that cannot be searched fails here).
    pub fn open(dir: &Path, count: FileCount) -> Result<IndexRetriever, AgentError> {
        let r = IndexRetriever::lazy(dir, count);
        let _ = r.searcher.set(Searcher::open_recorded(dir)?);
        Ok(r)
    }

    /// A retriever over the index at `dir` that opens its searcher on first use.
    pub fn lazy(dir: &Path, count: FileCount) -> IndexRetriever {
        IndexRetriever {
            searcher: std::sync::OnceLock::new(),
            dir: dir.to_path_buf(),
            count,
        }
    }

    fn searcher(&self) -> Result<&Searcher, AgentError> {
        if let Some(s) = self.searcher.get() {
            return Ok(s);
        }
        let s = Searcher::open_recorded(&self.dir)?;
        Ok(self.searcher.get_or_init(|| s))
    }
}

impl Retriever for IndexRetriever {
    fn more(&self, query: &str, have: &[PathBuf]) -> Result<Vec<FileContext>, AgentError> {
        let found = match retrieve_with(self.searcher()?, &self.dir, query, self.count) {
            Ok(f) => f,
            Err(AgentError::NoFiles(_)) => Vec::new(),
            Err(e) => return Err(e),
        };
        Ok(found
            .into_iter()
            .filter(|f| !have.contains(&f.path))
            .collect())
    }
}

/// A column, key or table name as compared: lowercase, without spaces, `_` or `-`
/// (`Close Price`, `close_price` and `ClosePrice` are one name).
pub fn normalize_name(name: &str) -> String {
    name.chars()
        .filter(|c| !(c.is_whitespace() || matches!(c, '_' | '-')))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The column and key names a description holds (tables' columns, JSON key paths' last
/// parts, arrays' names, text tables' headers, archive members' own descriptions).
pub fn column_names(d: &Description) -> Vec<String> {
    let mut out = Vec::new();
    collect_names(&d.content, &mut out);
    out
}

fn collect_names(c: &Content, out: &mut Vec<String>) {
    match c {
        Content::Table(t) => out.extend(t.columns.iter().map(|c| c.name.clone())),
        Content::Tables(ts) => {
            for t in &ts.tables {
                out.push(t.name.clone());
                out.extend(t.columns.iter().map(|c| c.name.clone()));
            }
        }
        Content::Json(j) => {
            for p in &j.paths {
                let parts = p.path.split(['.', '[', ']', '$']).filter(|s| !s.is_empty());
                out.extend(parts.map(str::to_string));
            }
        }
        Content::Text(t) => {
            for tb in &t.tables {
                out.extend(tb.columns.iter().cloned());
            }
        }
        Content::Arrays(a) => out.extend(a.arrays.iter().map(|x| x.name.clone())),
        Content::Archive(a) => {
            for (_, d) in &a.described {
                collect_names(&d.content, out);
            }
        }
        Content::Media(_) | Content::Opaque(_) => {}
    }
}

/// How many files to give the agent.
#[derive(Debug, Clone, Copy)]
pub enum FileCount {
    /// Exactly this many (fewer if the index has fewer).
    Fixed(usize),
    /// As many as fit this many tokens of descriptions (at least one).
    Budget(usize),
}

/// The best files for `question` from the index at `index_dir`.
pub fn retrieve(
    index_dir: &Path,
    question: &str,
    count: FileCount,
) -> Result<Vec<FileContext>, AgentError> {
    retrieve_with(
        &Searcher::open_recorded(index_dir)?,
        index_dir,
        question,
        count,
    )
}

/// [`retrieve`] with a searcher already open on the index at `index_dir` (a server's
/// shared one).
pub fn retrieve_with(
    searcher: &Searcher,
    index_dir: &Path,
    question: &str,
    count: FileCount,
) -> Result<Vec<FileContext>, AgentError> {
    let mut groups = retrieve_groups(searcher, index_dir, question, count)?;
    narrow_to_exact(question, &mut groups);
    let files: Vec<FileContext> = groups.into_iter().flatten().collect();
    if files.is_empty() {
        return Err(AgentError::NoFiles(format!(
            "the index at {} returned no file for this question; index the lake first, or pin files with --files",
            index_dir.display()
        )));
    }
    Ok(files)
}

/// The retrieved files for `question` within `count`, each hit with its companions.
fn retrieve_groups(
    searcher: &Searcher,
    index_dir: &Path,
    question: &str,
    count: FileCount,
) -> Result<Vec<Vec<FileContext>>, AgentError> {
    let catalog = CatalogReader::open(index_dir)?;
    let locator = Locator::open(&catalog, index_dir)?;
    let k = match count {
        FileCount::Fixed(k) => k,
        FileCount::Budget(_) => MAX_RETRIEVED,
    };
    let hits = searcher.search(
        question,
        &SearchOptions {
            k,
            nearest_anyway: true,
            ..Default::default()
        },
    )?;
    let mut groups: Vec<Vec<FileContext>> = Vec::new();
    let mut used = 0;
    let mut unstaged = Vec::new();
    'hits: for hit in hits {
        // A hit that cannot be staged (too large for the cache, changed since it was
        // indexed) is left out of the run with a warning, never read stale.
        let at = |rel: &str, unstaged: &mut Vec<String>| match locator.locate(&catalog, rel) {
            Ok(at) => Ok(Some(at)),
            Err(e) if locator.is_staged() && e.is_user_error() => {
                tracing::warn!("{e}; the run goes on without it");
                unstaged.push(e.to_string());
                Ok(None)
            }
            Err(e) => Err(e),
        };
        let Some(located) = at(&hit.path, &mut unstaged)? else {
            continue;
        };
        let mut file = from_catalog(&catalog, &hit.path, located)?;
        if let Some(c) = &hit.collection {
            file.description.push_str(&format!(
                "  One of {} files with the same layout, named like {} under {}.\n",
                c.members,
                c.template,
                locator.lake()
            ));
        }
        // Its companions (documentation, lookup tables) right after it, within the
        // same budget.
        let mut group = vec![file];
        for m in &hit.companions {
            let Some(located) = at(&m.path, &mut unstaged)? else {
                continue;
            };
            let mut f = from_catalog(&catalog, &m.path, located)?;
            f.description
                .push_str(&format!("  Goes with {} ({}).\n", hit.path, m.why));
            group.push(f);
        }
        let mut kept = Vec::new();
        for file in group {
            if let FileCount::Budget(tokens) = count {
                // The estimate, not the server's tokenizer: retrieval runs before any
                // LLM call and must give the same files with or without a server.
                let cost = tokens::estimate(&file.description);
                if (!groups.is_empty() || !kept.is_empty()) && used + cost > tokens {
                    if !kept.is_empty() {
                        groups.push(kept);
                    }
                    break 'hits;
                }
                used += cost;
            }
            kept.push(file);
        }
        groups.push(kept);
    }
    if groups.is_empty() && !unstaged.is_empty() {
        return Err(AgentError::NoFiles(format!(
            "no retrieved file could be staged from {}: {}",
            locator.lake(),
            unstaged.join("; ")
        )));
    }
    Ok(groups)
}

/// Keep the retrieved groups (a hit with its companions) that have a column the question
/// writes exactly ([`exact_names`]) when any does: a file that has none of the columns
/// the question spells out is another table with similar words, and the small model
/// reads it anyway (`importance.score` of the one file that has it, then of
/// `diamonds.csv` too, concatenated: a KeyError). Companions stay with their hit. A
/// step that needs a column no file kept has still goes back to retrieval.
fn narrow_to_exact(question: &str, groups: &mut Vec<Vec<FileContext>>) {
    let names: Vec<String> = written_names(question, groups.iter().flatten())
        .into_iter()
        .map(str::to_string)
        .collect();
    if names.is_empty() {
        return;
    }
    groups.retain(|g| {
        g.iter()
            .any(|f| f.columns.iter().any(|c| names.contains(c)))
    });
}

/// The column names of `files` that `question` writes exactly ([`written_exactly`]).
fn written_names<'f>(
    question: &str,
    files: impl IntoIterator<Item = &'f FileContext>,
) -> Vec<&'f str> {
    let all = files
        .into_iter()
        .flat_map(|f| f.columns.iter().map(String::as_str));
    written_exactly(question, all)
}

/// The description of `rel` as the index holds it: the LLM analyzer's when the index
/// records an `index --llm-analyzer` run and that run described this content, else the
/// native one. The rendering names `abs`, so that its `load:` line is the call the
/// generated code can use as it is.
fn from_catalog(
    catalog: &CatalogReader,
    rel: &str,
    located: Located,
) -> Result<FileContext, AgentError> {
    let Located { path: abs, staged } = located;
    let abs = abs.as_path();
    let row = catalog.file(rel)?;
    if row.is_none() {
        // A table that spans many files (a search hit `sales/`): the table, its load
        // line reading it where the code runs.
        if let Some(t) = catalog.table(rel)? {
            let text = dataset::render::render_or_error(
                &t.root,
                t.kind,
                t.table.as_ref(),
                t.error.as_deref(),
            );
            let to = abs.to_string_lossy();
            return Ok(FileContext {
                path: abs.to_path_buf(),
                rel: rel.to_string(),
                description: dataset::render::load_at(&text, &t.root, to.trim_end_matches('/')),
                columns: t
                    .table
                    .map(|d| d.columns.into_iter().map(|c| c.name).collect())
                    .unwrap_or_default(),
                staged,
            });
        }
    }
    let opts = RenderOptions {
        max_bytes: DESCRIPTION_BYTES,
    };
    let llm_text = match row.as_ref().and_then(|r| r.hash.as_ref()) {
        Some(h) => catalog.recorded_llm_text(h)?,
        None => None,
    };
    let shown = abs.to_string_lossy();
    let native = match row.as_ref() {
        Some(row) if row.hash.is_some() && row.analyzer.is_some() => {
            catalog.file_description(row)?
        }
        _ => None,
    };
    let columns = native.as_ref().map(column_names).unwrap_or_default();
    let description = match (row.as_ref(), llm_text) {
        // `index --llm-analyzer` described it: that text, marked as such.
        (Some(_), Some(text)) => llm_description(rel, &text),
        (Some(row), None) => match (&row.hash, &row.analyzer) {
            (Some(_), Some(_)) => match &native {
                Some(d) => render(&shown, d, opts),
                None => format!("{rel} — no description stored\n"),
            },
            _ => format!(
                "{rel} — {}\n",
                row.error.as_deref().unwrap_or("no description stored")
            ),
        },
        (None, _) => format!("{rel} — not in the index\n"),
    };
    Ok(FileContext {
        path: abs.to_path_buf(),
        rel: rel.to_string(),
        description,
        columns,
        staged,
    })
}

/// An LLM analyzer's description as a prompt shows it: a first line saying where it
/// comes from, then the script's output within [`DESCRIPTION_BYTES`].
fn llm_description(rel: &str, text: &str) -> String {
    let mut out = format!("{rel} — described by an LLM-written script\n");
    let mut end = text.len().min(DESCRIPTION_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    out.push_str(text[..end].trim_end());
    if end < text.len() {
        out.push_str("\n[… cut]");
    }
    out.push('\n');
    out
}

/// Files the user named: described from the index when it lists them, else analyzed on
/// the spot. Paths are taken relative to `cwd`; with an index of an object-store lake,
/// a path that is no local file is an object's key (as search shows it, or the whole
/// URL), staged for the run.
pub fn pinned(
    paths: &[PathBuf],
    index_dir: Option<&Path>,
    cwd: &Path,
) -> Result<Vec<FileContext>, AgentError> {
    let indexed = match index_dir {
        Some(dir) => {
            let catalog = CatalogReader::open(dir)?;
            let locator = Locator::open(&catalog, dir)?;
            Some((catalog, locator))
        }
        None => None,
    };
    let mut files = Vec::new();
    for p in paths {
        let abs = if p.is_absolute() {
            p.clone()
        } else {
            cwd.join(p)
        };
        if let Some((catalog, locator @ Locator::Objects(stage))) = &indexed {
            if !abs.is_file() {
                let given = p.to_string_lossy();
                let url = stage.lake().url();
                let key = given
                    .strip_prefix(url)
                    .unwrap_or(&given)
                    .trim_start_matches("./")
                    .trim_matches('/');
                let known = catalog.file(key)?.is_some() || catalog.table(key)?.is_some();
                if !known {
                    return Err(AgentError::NoFiles(format!(
                        "--files {given}: no object of {url} the index lists by that key; name objects as `lakestar search` shows them"
                    )));
                }
                files.push(from_catalog(catalog, key, locator.locate(catalog, key)?)?);
                continue;
            }
        }
        let abs = abs
            .canonicalize()
            .map_err(|e| AgentError::NoFiles(format!("--files {}: {e}", p.display())))?;
        if !abs.is_file() {
            return Err(AgentError::NoFiles(format!(
                "--files {}: not a file",
                p.display()
            )));
        }
        if let Some((catalog, Locator::Dir(lake))) = &indexed {
            if let Some(rel) = crawl::relative(lake, &abs) {
                if catalog.file(&rel)?.is_some() {
                    let at = Located {
                        path: abs.clone(),
                        staged: None,
                    };
                    files.push(from_catalog(catalog, &rel, at)?);
                    continue;
                }
            }
        }
        let shown = abs.to_string_lossy().into_owned();
        let d = lakestar_index::describe_file(&abs)?;
        files.push(FileContext {
            columns: column_names(&d),
            description: render(
                &shown,
                &d,
                RenderOptions {
                    max_bytes: DESCRIPTION_BYTES,
                },
            ),
            rel: p.to_string_lossy().into_owned(),
            path: abs,
            staged: None,
        });
    }
    Ok(files)
}

/// The `{{descriptions}}` block: each file under its absolute path.
pub fn descriptions(files: &[FileContext]) -> String {
    files
        .iter()
        .map(description_block)
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The column names the question writes exactly as a file has them (as code or quoted:
/// `WINDSPEED`, `'Fare'`), each with the files that have it, in file order. A small model
/// given three weather files for "wind speeds (WINDSPEED)" plans on the first one listed,
/// whose `wind_speed` may be another station's.
pub fn exact_names<'f>(
    question: &str,
    files: &'f [FileContext],
) -> Vec<(String, Vec<&'f FileContext>)> {
    // One reading of the question for every file's names.
    written_names(question, files)
        .into_iter()
        .map(|name| {
            let holders = files
                .iter()
                .filter(|f| f.columns.iter().any(|c| c == name))
                .collect();
            (name.to_string(), holders)
        })
        .collect()
}

/// Retrieved files with the most columns the question writes exactly ([`exact_names`])
/// first; the rest keep their order. Models lean on the first file listed.
pub fn prefer_exact(question: &str, files: &mut [FileContext]) {
    let names: Vec<String> = written_names(question, files.iter())
        .into_iter()
        .map(str::to_string)
        .collect();
    if names.is_empty() {
        return;
    }
    // A stable sort: equal counts keep the retrieval order (and companions their place).
    files.sort_by_cached_key(|f| {
        std::cmp::Reverse(names.iter().filter(|n| f.columns.contains(n)).count())
    });
}

/// The line above the descriptions that says which files have the columns the question
/// writes exactly; `None` when it writes none of their names so.
pub fn exact_note(question: &str, files: &[FileContext]) -> Option<String> {
    let names = exact_names(question, files);
    if names.is_empty() {
        return None;
    }
    let said: Vec<String> = names
        .iter()
        .map(|(n, holders)| {
            let paths: Vec<String> = holders
                .iter()
                .map(|f| f.path.display().to_string())
                .collect();
            format!("`{n}` is a column of {}", paths.join(", "))
        })
        .collect();
    Some(format!(
        "The question writes these column names exactly as a file has them: {}.",
        said.join("; ")
    ))
}

/// One file of the `{{descriptions}}` block: its absolute path as a heading, then its
/// description.
pub fn description_block(f: &FileContext) -> String {
    format!("## {}\n{}", f.path.display(), f.description.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(rel: &str, columns: &[&str]) -> FileContext {
        FileContext {
            path: PathBuf::from("/lake").join(rel),
            rel: rel.into(),
            description: format!("{rel} — CSV\n"),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            staged: None,
        }
    }

    #[test]
    fn groups_without_a_column_the_question_writes_exactly_are_dropped() {
        let q = "Calculate the mean of the \"importance.score\" column.";
        let groups = || {
            vec![
                vec![file("imp.csv", &["name", "importance.score"])],
                vec![file("diamonds.csv", &["carat", "price"])],
                // A hit without the column whose companion has it: kept, companion too.
                vec![
                    file("codes.csv", &["code"]),
                    file("codes_scores.csv", &["code", "importance.score"]),
                ],
            ]
        };
        let mut g = groups();
        narrow_to_exact(q, &mut g);
        let kept: Vec<&str> = g.iter().flatten().map(|f| f.rel.as_str()).collect();
        assert_eq!(kept, ["imp.csv", "codes.csv", "codes_scores.csv"]);
        // A question that writes no name exactly keeps everything.
        let mut g = groups();
        narrow_to_exact("the mean importance score", &mut g);
        assert_eq!(g.len(), 3);
    }

    #[test]
    fn files_with_the_columns_the_question_writes_exactly_come_first_and_are_named() {
        let q = "What is the distribution of wind speeds (WINDSPEED)? Is it normal?";
        let mut files = vec![
            file("ravenna.csv", &["temp", "wind_speed"]),
            file("weather.csv", &["time", "wind speed"]),
            file("baro.csv", &["DATE TIME", "WINDSPEED", "AT"]),
            file("bikes.csv", &["windspeed"]),
        ];
        prefer_exact(q, &mut files);
        let order: Vec<&str> = files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(
            order,
            ["baro.csv", "ravenna.csv", "weather.csv", "bikes.csv"]
        );
        assert_eq!(
            exact_note(q, &files).unwrap(),
            "The question writes these column names exactly as a file has them: `WINDSPEED` is a column of /lake/baro.csv."
        );
        // A question that writes no name so changes nothing and says nothing.
        let plain = "What is the mean wind speed?";
        let before: Vec<String> = files.iter().map(|f| f.rel.clone()).collect();
        prefer_exact(plain, &mut files);
        let after: Vec<String> = files.iter().map(|f| f.rel.clone()).collect();
        assert_eq!(before, after);
        assert_eq!(exact_note(plain, &files), None);
    }
}
