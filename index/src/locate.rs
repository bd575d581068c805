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

/// The index directory to use: `explicit` when given (it must hold a catalog), else the
/// nearest one above `start`, as git finds its repository.
pub fn find_index(explicit: Option<&Path>, start: &Path) -> Result<PathBuf> {
    match explicit {
        Some(dir) => {
            if dir.join(CATALOG_FILE).is_file() {
                Ok(dir.to_path_buf())
            } else {
                Err(UserError::NoIndex {
                    searched: format!("at {}", dir.display()),
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
