//! The writer lock: one `index` or `watch` per index directory at a time.
//!
//! An OS file lock (flock) on `DIR/lock`, released by the kernel when the process dies —
//! so a `kill -9` never leaves a stale lock. The holder writes its pid into the file so
//! that the second writer can say who holds it.

use crate::error::{Error, Result, UserError};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Name of the lock file inside the index directory.
pub const LOCK_FILE: &str = "lock";

/// Held writer lock; dropping it releases the lock.
#[derive(Debug)]
pub struct WriterLock {
    _file: File,
    dir: PathBuf,
    path: PathBuf,
}

impl WriterLock {
    /// Take the writer lock of the index at `dir` (created if missing), or fail at once
    /// with [`UserError::Locked`] naming the holder's pid.
    pub fn acquire(dir: &Path) -> Result<WriterLock> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut s = String::new();
                let _ = file.read_to_string(&mut s);
                return Err(UserError::Locked {
                    dir: dir.to_path_buf(),
                    pid: s.trim().parse().unwrap_or(0),
                }
                .into());
            }
            Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        let write_pid = |f: &mut File| -> std::io::Result<()> {
            f.set_len(0)?;
            f.rewind()?;
            write!(f, "{}", std::process::id())?;
            f.flush()
        };
        write_pid(&mut file).map_err(|e| Error::io(&path, e))?;
        Ok(WriterLock {
            _file: file,
            dir: dir.to_path_buf(),
            path,
        })
    }

    /// The index directory it locks.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_writer_is_refused_with_pid() {
        let d = tempfile::tempdir().unwrap();
        let held = WriterLock::acquire(d.path()).unwrap();
        let err = WriterLock::acquire(d.path()).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("locked by pid {}", std::process::id())),
            "{msg}"
        );
        drop(held);
        WriterLock::acquire(d.path()).unwrap();
    }
}
