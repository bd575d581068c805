//! Finding the index: `--index DIR`, or the nearest `.lakestar/` above a directory.

use crate::catalog::CATALOG_FILE;
use crate::error::{Result, UserError};
use std::path::{Path, PathBuf};

/// Name of the index directory inside a lake.
pub const INDEX_DIR_NAME: &str = ".lakestar";

/// The default index directory of `lake`.
pub fn default_index_dir(lake: &Path) -> PathBuf {
    lake.join(INDEX_DIR_NAME)
}

/// The nearest `.lakestar/` holding a catalog in `start` or one of its parents.
pub fn find_upwards(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(default_index_dir)
        .find(|d| d.join(CATALOG_FILE).is_file())
}

/// The index directory to use: `explicit` when given (an index, or a lake whose
/// `.lakestar/` holds one), else the nearest one above `start`, as git finds its
/// repository.
pub fn find_index(explicit: Option<&Path>, start: &Path) -> Result<PathBuf> {
    match explicit {
        Some(dir) => {
            if dir.join(CATALOG_FILE).is_file() {
                Ok(dir.to_path_buf())
            } else if default_index_dir(dir).join(CATALOG_FILE).is_file() {
                // People name the lake they indexed more often than its index.
                Ok(default_index_dir(dir))
            } else {
                Err(UserError::NoIndex {
                    searched: format!(
                        "at {} or {}",
                        dir.display(),
                        default_index_dir(dir).display()
                    ),
                }
                .into())
            }
        }
        None => find_upwards(start).ok_or_else(|| {
            UserError::NoIndex {
                searched: format!("in {} or any parent directory", start.display()),
            }
            .into()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_lake_means_its_index() {
        let tmp = tempfile::tempdir().unwrap();
        let idx = default_index_dir(tmp.path());
        std::fs::create_dir_all(&idx).unwrap();
        let none = find_index(Some(tmp.path()), tmp.path()).unwrap_err();
        assert!(none.to_string().contains(".lakestar"), "{none}");
        std::fs::write(idx.join(CATALOG_FILE), b"").unwrap();
        assert_eq!(find_index(Some(tmp.path()), Path::new("/")).unwrap(), idx);
        assert_eq!(find_index(Some(&idx), Path::new("/")).unwrap(), idx);
    }
}
