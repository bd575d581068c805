//! Where the files of an index are for the code a run generates: the lake's directory,
//! or, for a lake in an object store, local copies staged into the index's cache
//! ([`lakestar_index::store::stage`]) — the sandbox has no network, and generated code
//! reads files.

use super::AgentError;
use lakestar_index::store;
use lakestar_index::store::stage::{Stage, StageObject, StageOptions, Staged};
use lakestar_index::{CatalogReader, UserError};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The local place of an indexed path, and the staged unit that keeps it there (for an
/// object-store lake) as long as the run holds it.
pub struct Located {
    /// The absolute local path (a file, or a table's folder).
    pub path: PathBuf,
    /// Held while the run uses the file; `None` for a lake on disk.
    pub staged: Option<Arc<Staged>>,
}

/// How an index's paths become local paths.
pub enum Locator {
    /// A lake on disk: paths under its root.
    Dir(PathBuf),
    /// A lake in an object store: staged copies.
    Objects(Box<Stage>),
}

impl Locator {
    /// The locator of the index at `index_dir`, whose `catalog` is open: for an
    /// object-store lake, the store opened with the endpoint the index recorded (else
    /// `AWS_ENDPOINT_URL`) and the credentials of the environment. Nothing is requested
    /// until a path is staged.
    pub fn open(catalog: &CatalogReader, index_dir: &Path) -> Result<Locator, AgentError> {
        let Some(lake) = catalog.object_lake()? else {
            return Ok(Locator::Dir(catalog.lake_root()?));
        };
        let opts =
            StageOptions::from_env().map_err(|e| AgentError::Index(UserError::from(e).into()))?;
        Ok(Locator::Objects(Box::new(Stage::new(
            Arc::new(lake),
            index_dir,
            opts,
        ))))
    }

    /// Whether paths are staged from an object store.
    pub fn is_staged(&self) -> bool {
        matches!(self, Locator::Objects(_))
    }

    /// The lake as the user knows it (its directory or URL), for messages.
    pub fn lake(&self) -> String {
        match self {
            Locator::Dir(d) => d.display().to_string(),
            Locator::Objects(s) => s.lake().url().to_string(),
        }
    }

    /// The local place of the indexed path `rel` (a file, or a table folder the index
    /// describes): under the lake's directory, or staged (downloaded unless the cache
    /// has it). An object-store path the index cannot account for, or that cannot be
    /// staged, is an error that says why.
    pub fn locate(&self, catalog: &CatalogReader, rel: &str) -> Result<Located, AgentError> {
        let stage = match self {
            Locator::Dir(root) => {
                return Ok(Located {
                    path: root.join(rel),
                    staged: None,
                })
            }
            Locator::Objects(s) => s,
        };
        let refuse = |reason: String| {
            AgentError::Index(
                UserError::from(store::StoreError::Stage {
                    what: rel.to_string(),
                    reason,
                })
                .into(),
            )
        };
        let rows = match catalog.file(rel)? {
            Some(row) => vec![row],
            None if catalog.table(rel)?.is_some() => {
                catalog.files_under(rel.trim_end_matches('/'))?
            }
            None => {
                return Err(refuse(format!(
                    "not in the index of {}; run `lakestar index` on it again",
                    stage.lake().url()
                )))
            }
        };
        let mut objects = Vec::with_capacity(rows.len());
        for row in rows {
            let Some(identity) = row.hash else {
                return Err(refuse(format!(
                    "{} was not listed with an ETag the index could record; run `lakestar index` on the lake again",
                    row.path
                )));
            };
            objects.push(StageObject {
                path: row.path,
                size: row.size,
                identity,
            });
        }
        let staged = stage
            .stage(rel, &objects)
            .map_err(|e| AgentError::Index(UserError::from(e).into()))?;
        if staged.fetched > 0 {
            tracing::info!("staged {rel}: {} bytes fetched", staged.fetched);
        }
        Ok(Located {
            path: staged.path.clone(),
            staged: Some(Arc::new(staged)),
        })
    }
}

/// What the run record says of `files` staged from an object store: each path, where
/// its copy is and what it cost; `None` when none was staged.
pub fn note(files: &[super::context::FileContext]) -> Option<String> {
    let staged: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let s = f.staged.as_ref()?;
            let how = if s.fetched > 0 {
                format!("{} bytes fetched", s.fetched)
            } else {
                "from the staging cache".to_string()
            };
            Some(format!("{} at {} ({how})", f.rel, f.path.display()))
        })
        .collect();
    (!staged.is_empty()).then(|| format!("staged from the object store: {}", staged.join("; ")))
}
