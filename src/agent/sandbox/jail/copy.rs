//! Moving the working directory's files into the jail's quota tmpfs before the script
//! runs and back out after, through `/proc/OUTER/root` (the jail's root as the parent
//! sees it).
//!
//! Copying out reads a tree the script wrote, so nothing is followed: only directories
//! and regular files are taken, symbolic links, sockets and FIFOs are left behind.
//! Every process of the jail is dead by then, so the tree cannot change under the walk.

use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// What a copy moved and left.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Copied {
    pub(crate) files: u64,
    pub(crate) bytes: u64,
    /// Entries not copied (links, sockets…), by relative path.
    pub(crate) skipped: Vec<String>,
}

/// Copy the tree at `from` into `to` (which exists): directories and regular files,
/// nothing followed. `owner` becomes the owner of what is made (the sandbox uid, so that
/// the script may overwrite its inputs), when given. `skip` names top-level entries
/// left alone.
pub(crate) fn copy_tree(
    from: &Path,
    to: &Path,
    owner: Option<(u32, u32)>,
    skip: &[&str],
) -> io::Result<Copied> {
    let mut out = Copied::default();
    let walk = walkdir::WalkDir::new(from)
        .follow_links(false)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            !(e.depth() == 1
                && skip
                    .iter()
                    .any(|s| e.file_name() == std::ffi::OsStr::new(s)))
        });
    for entry in walk {
        let entry = entry.map_err(|e| io::Error::other(e.to_string()))?;
        let rel = entry.path().strip_prefix(from).map_err(io::Error::other)?;
        let dst = to.join(rel);
        let kind = entry.file_type();
        if kind.is_dir() {
            match std::fs::symlink_metadata(&dst) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    out.skipped.push(rel.display().to_string());
                    continue;
                }
                Err(_) => std::fs::create_dir(&dst)?,
            }
        } else if kind.is_file() {
            if std::fs::symlink_metadata(&dst).is_ok_and(|m| !m.is_file()) {
                out.skipped.push(rel.display().to_string());
                continue;
            }
            let mut src = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(entry.path())?;
            let mode = src.metadata()?.mode() & 0o777;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(mode)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&dst)?;
            out.bytes += io::copy(&mut src, &mut file)?;
            out.files += 1;
        } else {
            out.skipped.push(rel.display().to_string());
            continue;
        }
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::lchown(&dst, Some(uid), Some(gid))?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_directories_are_copied_and_links_left_behind() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(a.path().join("out/deep")).unwrap();
        std::fs::write(a.path().join("out/deep/r.csv"), "x\n1\n").unwrap();
        std::fs::write(a.path().join("script.py"), "print(1)").unwrap();
        std::os::unix::fs::symlink("/etc/shadow", a.path().join("steal")).unwrap();
        std::fs::create_dir(a.path().join(".tmp")).unwrap();
        std::fs::write(a.path().join(".tmp/junk"), "j").unwrap();
        let c = copy_tree(a.path(), b.path(), None, &[".tmp"]).unwrap();
        assert_eq!(c.files, 2);
        assert_eq!(c.skipped, vec!["steal".to_string()]);
        assert_eq!(
            std::fs::read_to_string(b.path().join("out/deep/r.csv")).unwrap(),
            "x\n1\n"
        );
        assert!(std::fs::symlink_metadata(b.path().join("steal")).is_err());
        assert!(!b.path().join(".tmp").exists());
    }

    #[test]
    fn a_link_at_the_destination_is_not_written_through() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let victim = b.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::fs::write(a.path().join("x"), "new").unwrap();
        std::os::unix::fs::symlink(&victim, b.path().join("x")).unwrap();
        let c = copy_tree(a.path(), b.path(), None, &[]).unwrap();
        assert_eq!(c.skipped, vec!["x".to_string()]);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    }
}
