//! Tables that span many files (`dataset`), derived after the files of a run are
//! described: the folders the run's changed paths claim as table roots, and the tables
//! above a changed path, are each derived again from their log, metadata or members,
//! and their rows replaced in one transaction. A run that changed nothing derives
//! nothing; a catalog that records another table rule (or none) derives every table.

use crate::catalog::{CatalogWriter, TableRow};
use crate::dataset::{self, Member, TableFiles, TableKind, TABLES_RULE};
use crate::error::Result;
use crate::store::ObjectLake;
use std::collections::{BTreeSet, HashSet};
use std::io;
use std::path::Path;
use std::sync::Arc;

/// A table's log or metadata file larger than this is not read from an object store (a
/// Delta checkpoint of a huge table): that table gets the error.
const MAX_TABLE_FILE: u64 = crate::analyze::DEFAULT_BUDGET;

/// An object-store lake's table files: listed from the catalog, which this run's
/// listing has just brought up to date (no second LIST), and read by GETs.
struct StoreFiles<'a> {
    cat: &'a CatalogWriter,
    objects: &'a Arc<ObjectLake>,
}

impl TableFiles for StoreFiles<'_> {
    fn list(&self, dir: &str) -> io::Result<Vec<String>> {
        let rows = self.cat.files_under(dir).map_err(io::Error::other)?;
        Ok(rows
            .into_iter()
            .filter_map(|f| {
                let name = f.path.strip_prefix(dir)?.strip_prefix('/')?;
                (!name.contains('/')).then(|| name.to_string())
            })
            .collect())
    }

    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        let row = self
            .cat
            .file(path)
            .map_err(io::Error::other)?
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "not in the listing"))?;
        if row.size > MAX_TABLE_FILE {
            return Err(io::Error::other(format!(
                "{} bytes, more than the {MAX_TABLE_FILE} read from an object store",
                row.size
            )));
        }
        Ok(self
            .objects
            .object(path, row.size)
            .read_at(0, row.size as usize)?
            .to_vec())
    }
}

/// Derive the tables the run's changed paths ([`CatalogWriter::snapshot_changed`],
/// changed since the last derivation) may have touched; every table when the catalog's
/// were derived by another rule. Returns how many table rows changed.
/// `objects` is the lake's store when the lake is a URL (the tables' logs and metadata
/// are then read from it).
pub fn retable(
    cat: &mut CatalogWriter,
    lake: &Path,
    objects: Option<&Arc<ObjectLake>>,
) -> Result<usize> {
    let every = cat.tables_version()? != Some(TABLES_RULE);
    if !every && cat.changed_after(None, 1)?.is_empty() {
        return Ok(0);
    }
    // Sets of table folders, not of paths: far fewer than the files (every path is
    // examined at a first index, or by another rule), read a chunk at a time.
    let existing: HashSet<String> = cat.table_roots()?.into_iter().collect();
    let mut examined: BTreeSet<String> = BTreeSet::new();
    let each = |chunk: &[String]| {
        examined.extend(dataset::roots_of(chunk.iter().map(String::as_str)));
        for p in chunk {
            for (i, _) in p.match_indices('/') {
                if existing.contains(&p[..i]) && !examined.contains(&p[..i]) {
                    examined.insert(p[..i].to_string());
                }
            }
        }
        Ok(())
    };
    if every {
        super::in_chunks(|after, limit| cat.paths_after(after, limit), each)?;
    } else {
        super::in_chunks(|after, limit| cat.changed_after(after, limit), each)?;
    }
    // A claimed folder inside a Delta or Iceberg table (`ice/data/city=Oslo/…`) is
    // that table's.
    let mut roots: BTreeSet<(String, TableKind)> = BTreeSet::new();
    for r in &examined {
        let mut kind = (r.clone(), TableKind::Hive);
        let outer = r
            .match_indices('/')
            .map(|(i, _)| &r[..i])
            .chain(std::iter::once(r.as_str()));
        for a in outer {
            if let Some(k) = log_kind(cat, a)? {
                kind = (a.to_string(), k);
                break;
            }
        }
        roots.insert(kind);
    }
    examined.extend(roots.iter().map(|(r, _)| r.clone()));
    let mut found: Vec<TableRow> = Vec::new();
    for (root, kind) in &roots {
        // The outermost table wins: a Hive layout inside a found table is its members'.
        if found.iter().any(|t| dataset::is_under(root, &t.root)) {
            continue;
        }
        let row = match objects {
            Some(objects) => derive(cat, &StoreFiles { cat, objects }, root, *kind)?,
            None => derive(cat, &dataset::LocalFiles(lake), root, *kind)?,
        };
        if let Some(row) = row {
            found.push(row);
        }
    }
    let examined: Vec<String> = examined.into_iter().collect();
    let n = cat.replace_tables(&examined, &found)?;
    tracing::debug!(
        examined = examined.len(),
        tables = found.len(),
        changed = n,
        "tables derived"
    );
    Ok(n)
}

/// Whether the folder `dir` holds a Delta log or Iceberg metadata, as indexed.
fn log_kind(cat: &CatalogWriter, dir: &str) -> Result<Option<TableKind>> {
    if cat.has_files_under(&format!("{dir}/_delta_log"))? {
        return Ok(Some(TableKind::Delta));
    }
    let meta = cat.files_under(&format!("{dir}/metadata"))?;
    Ok(meta
        .iter()
        .any(|f| {
            let name = f.path.rsplit('/').next().unwrap_or_default();
            dataset::iceberg::metadata_version(name).is_some()
        })
        .then_some(TableKind::Iceberg))
}

/// The table in the folder `root`, if it is one (a malformed one: its error).
fn derive(
    cat: &CatalogWriter,
    files: &dyn TableFiles,
    root: &str,
    kind: TableKind,
) -> Result<Option<TableRow>> {
    // Only a Hive table is described from its members: Delta and Iceberg from their log
    // and manifests.
    let mut members = Vec::new();
    if kind == TableKind::Hive {
        for f in cat.files_under(root)? {
            let path = f.path[root.len() + 1..].to_string();
            let description = if dataset::hive::is_data_member(&path) {
                cat.file_description(&f)?
            } else {
                None
            };
            members.push(Member {
                path,
                size: f.size,
                description,
            });
        }
    }
    let described = match kind {
        TableKind::Delta => dataset::delta::describe(files, root).map(Some),
        TableKind::Iceberg => dataset::iceberg::describe(files, root).map(Some),
        TableKind::Hive => dataset::hive::describe(root, &members),
    };
    Ok(match described {
        Ok(None) => None,
        Ok(Some(t)) => Some(TableRow {
            root: root.to_string(),
            kind,
            version: t.version.clone(),
            error: None,
            table: Some(t),
        }),
        Err(e) => {
            tracing::debug!(root, error = %e, "table not described");
            Some(TableRow {
                root: root.to_string(),
                kind,
                version: None,
                error: Some(e.to_string()),
                table: None,
            })
        }
    })
}
