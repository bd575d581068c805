//! One index as a long-lived service: what `serve` (HTTP) and `mcp` answer from, and
//! what the CLI's `status` and `describe` print.
//!
//! A [`Lake`] keeps one [`Searcher`] and shares it among concurrent requests. Every call
//! first reads the catalog's `last_index_finished_at` (written after the search side
//! has committed, by `index` and by every `watch` batch); when it moved, the searcher is
//! reopened — keeping the embedder and, while its generation stands, the vector graph —
//! so that a server sees what the writer committed without loading the index again.

pub mod ask;
pub mod describe;
pub mod overview;
pub mod paths;
pub mod rows;
pub mod status;

use lakestar_index::catalog::MetaKey;
use lakestar_index::search::engine::{Hit, SearchOptions, Searcher};
use lakestar_index::CatalogReader;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

pub use describe::Described;
pub use overview::Overview;
pub use rows::Rows;
pub use status::Status;

/// What a service call can fail with. User errors are the client's to fix (HTTP 4xx,
/// MCP tool errors); the rest are faults of the server.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// A path that names nothing inside the lake.
    #[error("{path}: {reason}")]
    Forbidden {
        /// The path given (cut to 200 characters).
        path: String,
        /// Why it was refused.
        reason: String,
    },
    /// A path inside the lake that the index does not list.
    #[error("{path} is not in the index; `search` finds indexed files, and `index` or `watch` adds new ones")]
    NotFound {
        /// The lake-relative path.
        path: String,
    },
    /// A request out of bounds (empty question, k too large, ...).
    #[error("{0}")]
    BadRequest(String),
    /// The index refused or failed.
    #[error(transparent)]
    Index(#[from] lakestar_index::Error),
    /// A file without the table asked for (not tabular, no such table, unreadable).
    #[error(transparent)]
    Preview(#[from] lakestar_index::preview::PreviewError),
}

impl ServiceError {
    /// True when the client can fix it.
    pub fn is_user_error(&self) -> bool {
        match self {
            ServiceError::Index(e) => e.is_user_error(),
            _ => true,
        }
    }

    /// A stable, machine-readable name of the error kind.
    pub fn code(&self) -> &'static str {
        match self {
            ServiceError::Forbidden { .. } => "forbidden_path",
            ServiceError::NotFound { .. } => "not_found",
            ServiceError::BadRequest(_) => "bad_request",
            ServiceError::Index(e) if e.is_user_error() => "index_unavailable",
            ServiceError::Index(_) => "internal",
            ServiceError::Preview(e) => rows::code(e),
        }
    }
}

/// Results a search may ask for at most.
pub const MAX_K: usize = 1000;
/// Bytes of a question or query at most.
pub const MAX_QUERY_BYTES: usize = 8192;

/// One index, served.
pub struct Lake {
    dir: PathBuf,
    root: PathBuf,
    /// Reads the stamp; its own connection, so that checking never waits on a search.
    stamp_reader: Mutex<CatalogReader>,
    /// The shared searcher and the stamp it was opened at.
    searcher: RwLock<Option<(Option<String>, Arc<Searcher>)>>,
    /// Load the vector graph (a server), or scan the generation's codes (one command).
    resident: bool,
    /// The object store of a lake in one, opened on the first read of a file's rows.
    objects: std::sync::OnceLock<Option<Arc<lakestar_index::store::ObjectLake>>>,
}

impl Lake {
    /// Serve the index at `dir` (which must exist: `lakestar index` makes it) to a
    /// long-lived process: the vector graph is loaded on the first search and kept
    /// while its generation stands.
    pub fn open(dir: &Path) -> Result<Lake, ServiceError> {
        Ok(Lake {
            resident: true,
            ..Self::open_once(dir)?
        })
    }

    /// [`Lake::open`] for one command: nothing is loaded that its searches do not read
    /// (the vector generation's codes are mapped and scanned, not the graph loaded).
    pub fn open_once(dir: &Path) -> Result<Lake, ServiceError> {
        let cat = CatalogReader::open(dir)?;
        let root = cat.lake_root()?;
        let root = root.canonicalize().unwrap_or(root);
        Ok(Lake {
            dir: dir.to_path_buf(),
            root,
            stamp_reader: Mutex::new(cat),
            searcher: RwLock::new(None),
            resident: false,
            objects: std::sync::OnceLock::new(),
        })
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The lake's root (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What changes when a searcher must be reopened: an index run finished, or a
    /// vector graph built apart was swapped in.
    fn stamp(&self) -> Result<Option<String>, ServiceError> {
        let cat = self.stamp_reader.lock().unwrap_or_else(|p| p.into_inner());
        let finished = cat.meta(MetaKey::LastIndexFinishedAt)?;
        let vectors = cat.meta(MetaKey::VectorIndex)?;
        Ok(finished.map(|f| format!("{f} {}", vectors.unwrap_or_default())))
    }

    /// The searcher at the index's latest committed state.
    pub fn searcher(&self) -> Result<Arc<Searcher>, ServiceError> {
        let stamp = self.stamp()?;
        if let Some((at, s)) = &*self.searcher.read().unwrap_or_else(|p| p.into_inner()) {
            if *at == stamp {
                return Ok(s.clone());
            }
        }
        let mut slot = self.searcher.write().unwrap_or_else(|p| p.into_inner());
        // Another request may have reopened it while this one waited.
        if let Some((at, s)) = &*slot {
            if *at == stamp {
                return Ok(s.clone());
            }
        }
        let fresh = match &*slot {
            Some((_, s)) => s.reopen()?,
            None if self.resident => Searcher::open_resident(&self.dir)?,
            None => Searcher::open_recorded(&self.dir)?,
        };
        let fresh = Arc::new(fresh);
        *slot = Some((stamp, fresh.clone()));
        Ok(fresh)
    }

    /// The top files for `query`.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>, ServiceError> {
        if query.trim().is_empty() {
            return Err(ServiceError::BadRequest("the query is empty".into()));
        }
        if query.len() > MAX_QUERY_BYTES {
            return Err(ServiceError::BadRequest(format!(
                "the query is {} bytes; at most {MAX_QUERY_BYTES} are accepted",
                query.len()
            )));
        }
        if opts.k == 0 || opts.k > MAX_K {
            return Err(ServiceError::BadRequest(format!(
                "k must be between 1 and {MAX_K}"
            )));
        }
        Ok(self.searcher()?.search(query, opts)?)
    }

    /// What the index holds.
    pub fn status(&self) -> Result<Status, ServiceError> {
        Ok(status::status(&self.dir)?)
    }

    /// The lake at a glance: formats, time span, collections, largest files, listing.
    pub fn overview(&self) -> Result<Overview, ServiceError> {
        Ok(overview::overview(&self.dir)?)
    }

    /// The description of the indexed file at lake-relative `path` (confined to the
    /// lake: see [`paths::confine`]).
    pub fn describe(
        &self,
        path: &str,
        max_bytes: usize,
        llm: bool,
    ) -> Result<Described, ServiceError> {
        let rel = paths::confine(&self.root, path)?;
        let cat = CatalogReader::open(&self.dir)?;
        let Some(row) = cat.file(&rel)? else {
            // A table's folder (`sales/`) describes the table.
            return describe::described_table(&cat, &rel)?
                .ok_or(ServiceError::NotFound { path: rel.clone() });
        };
        Ok(describe::described(&cat, &self.root, &row, max_bytes, llm)?)
    }

    /// Whether lake-relative `path` names a file inside the lake (for a lake in an
    /// object store: a file the index lists).
    pub fn is_file(&self, path: &str) -> bool {
        let Ok(rel) = paths::confine(&self.root, path) else {
            return false;
        };
        if self.in_object_store() {
            return CatalogReader::open(&self.dir)
                .and_then(|c| c.file(&rel))
                .is_ok_and(|r| r.is_some());
        }
        self.root.join(rel).is_file()
    }

    /// Whether the lake is in an object store (its root is a URL).
    fn in_object_store(&self) -> bool {
        lakestar_index::store::is_url(&self.root.to_string_lossy())
    }

    /// The first `n` rows of a table of the indexed file at lake-relative `path`
    /// (confined to the lake: see [`paths::confine`]); in an object store, read by
    /// ranged requests.
    pub fn rows(&self, path: &str, table: Option<&str>, n: usize) -> Result<Rows, ServiceError> {
        let rel = paths::confine(&self.root, path)?;
        let cat = CatalogReader::open(&self.dir)?;
        let row = cat.file(&rel)?;
        let objects = if self.in_object_store() {
            if self.objects.get().is_none() {
                let opened = cat.object_lake()?.map(Arc::new);
                let _ = self.objects.set(opened);
            }
            self.objects.get().and_then(Option::as_ref)
        } else {
            None
        };
        match row {
            Some(row) if objects.is_some() || self.root.join(&rel).is_file() => {
                rows::indexed(&self.root, objects, &row, table, n)
            }
            _ => Err(ServiceError::NotFound { path: rel }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_shareable<T: Send + Sync>() {}

    #[test]
    fn a_lake_is_shared_across_threads() {
        assert_shareable::<Lake>();
        assert_shareable::<Searcher>();
    }

    fn index(lake: &Path, dir: &Path) {
        lakestar_index::index(
            lake,
            dir,
            &lakestar_index::IndexOptions::default(),
            &lakestar_index::indexer::NoProgress,
        )
        .unwrap();
    }

    fn top(l: &Lake, q: &str) -> Vec<String> {
        let opts = SearchOptions {
            k: 3,
            ..Default::default()
        };
        l.search(q, &opts)
            .unwrap()
            .into_iter()
            .map(|h| h.path)
            .collect()
    }

    /// HTTP `/files/{path}` and MCP `describe_file` describe through [`Lake::describe`]:
    /// a table's folder gives the table, a member names it.
    #[test]
    fn describe_of_a_table_folder_gives_the_table_and_of_a_member_names_it() {
        let tmp = tempfile::tempdir().unwrap();
        let (lake, dir) = (tmp.path().join("lake"), tmp.path().join("idx"));
        std::fs::create_dir_all(lake.join("t/_delta_log")).unwrap();
        let schema = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}"#;
        let commit =
            serde_json::json!({"metaData": {"schemaString": schema, "partitionColumns": []}})
                .to_string()
                + "\n"
                + &serde_json::json!({"add": {"path": "part-0.csv", "size": 9,
                "stats": "{\"numRecords\":2}"}})
                .to_string();
        std::fs::write(lake.join("t/_delta_log/00000000000000000000.json"), commit).unwrap();
        std::fs::write(lake.join("t/part-0.csv"), "id\n1\n2\n").unwrap();
        index(&lake, &dir);
        let l = Lake::open(&dir).unwrap();
        let d = l.describe("t/", 2048, false).unwrap();
        assert_eq!((d.path.as_str(), d.format.as_str()), ("t/", "delta"));
        let t = d.table.unwrap();
        assert_eq!(t.description.unwrap().rows, Some(2));
        assert!(d.text.starts_with("t/ — Delta table: 2 rows"), "{}", d.text);
        let m = l.describe("t/part-0.csv", 2048, false).unwrap();
        assert_eq!(m.table.unwrap().root, "t/");
        assert!(
            m.text.ends_with("member of Delta table t/ (version 0)\n"),
            "{}",
            m.text
        );
    }

    #[test]
    fn a_served_lake_sees_what_the_writer_commits_and_keeps_its_searcher_otherwise() {
        let tmp = tempfile::tempdir().unwrap();
        let lake = tmp.path().join("lake");
        let dir = tmp.path().join("idx");
        std::fs::create_dir(&lake).unwrap();
        std::fs::write(
            lake.join("penguins.csv"),
            "species,flipper_mm\nAdelie,181\n",
        )
        .unwrap();
        index(&lake, &dir);
        let l = Lake::open(&dir).unwrap();
        assert_eq!(top(&l, "penguin flipper length")[0], "penguins.csv");
        let before = l.searcher().unwrap();
        assert!(Arc::ptr_eq(&before, &l.searcher().unwrap()));

        std::fs::write(
            lake.join("volcanoes.csv"),
            "volcano,elevation_m\nEtna,3357\n",
        )
        .unwrap();
        assert!(top(&l, "volcano elevation")
            .iter()
            .all(|p| p != "volcanoes.csv"));
        index(&lake, &dir);
        assert_eq!(top(&l, "volcano elevation")[0], "volcanoes.csv");
        assert!(!Arc::ptr_eq(&before, &l.searcher().unwrap()));

        assert_eq!(
            l.describe("./volcanoes.csv", 2048, false).unwrap().path,
            "volcanoes.csv"
        );
        assert!(matches!(
            l.describe("nope.csv", 2048, false),
            Err(ServiceError::NotFound { .. })
        ));
        assert!(matches!(
            l.describe("../idx/catalog.sqlite", 2048, false),
            Err(ServiceError::Forbidden { .. })
        ));
        assert_eq!(l.status().unwrap().files, 2);
        let o = l.overview().unwrap();
        assert_eq!(o.formats.len(), 1);
        assert_eq!(
            (o.formats[0].format.as_str(), o.formats[0].files),
            ("csv", 2)
        );
        let listed: Vec<&str> = o.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(listed, ["penguins.csv", "volcanoes.csv"]);
        assert_eq!(o.largest.len(), 2);
        assert!(o.largest[0].size >= o.largest[1].size);
        for (q, k) in [("", 3), ("x", 0), ("x", MAX_K + 1)] {
            let opts = SearchOptions {
                k,
                ..Default::default()
            };
            assert!(matches!(
                l.search(q, &opts),
                Err(ServiceError::BadRequest(_))
            ));
        }
    }
}
