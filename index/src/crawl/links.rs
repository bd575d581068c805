//! Where symbolic links may lead a walk that follows them.
//!
//! `index --follow` follows links only to targets inside the lake: a link to `/etc`
//! planted in a lake must not put `/etc`'s file names and values into an index that is
//! served over HTTP and MCP. `--follow-outside` lifts that rule, on purpose. Whatever it
//! says, the index directory (and any `.lakestar` directory) is never entered through a
//! link: it holds the catalog, and may hold a `lakestar.toml` with an API key.
//!
//! Targets are judged canonical (every link resolved, `.` and `..` gone) against the
//! canonical lake root, so links to links, relative links and links that leave the lake
//! and come back in are judged by where they finally lead. The walk checks each link
//! it meets; the indexer checks each file again just before reading it, since a file
//! may have been swapped for a link after the walk listed it.

use std::path::{Component, Path, PathBuf};

/// The name of the index directory inside a lake; never data, wherever it is met.
pub const INDEX_DIR_NAME: &str = ".lakestar";

/// The rule for one lake: its canonical root, whether links may leave it, and the
/// directories no link may lead into.
#[derive(Debug, Clone)]
pub struct Containment {
    root: PathBuf,
    outside: bool,
    exclude: Vec<PathBuf>,
    /// (device, inode) of each excluded directory that exists: under a followed link an
    /// excluded directory has another path, but not another identity.
    #[cfg(unix)]
    exclude_ids: Vec<(u64, u64)>,
}

impl Containment {
    /// The rule for the lake at `root` (canonical); `outside`: links may lead out of it;
    /// `exclude`: canonical directories never entered (the index directory).
    pub fn new(root: &Path, outside: bool, exclude: &[PathBuf]) -> Self {
        Containment {
            root: root.to_path_buf(),
            outside,
            exclude: exclude.to_vec(),
            #[cfg(unix)]
            exclude_ids: exclude.iter().filter_map(|d| dir_id(d)).collect(),
        }
    }

    /// Why the walk must not take the symbolic link at `link` (it is not indexed, nor
    /// entered); `None` when it may.
    pub fn refuse_link(&self, link: &Path) -> Option<String> {
        match link.canonicalize() {
            Ok(target) => self.refuse_target(&target),
            Err(e) => Some(format!("the link cannot be resolved: {e}")),
        }
    }

    /// Why no file may be read at the canonical path `target`; `None` when it may.
    pub fn refuse_target(&self, target: &Path) -> Option<String> {
        let inside = target.strip_prefix(&self.root).ok();
        // Inside the lake only a `.lakestar` below the root counts: the root's own
        // ancestors are none of the walk's business.
        let in_index = self.exclude.iter().any(|x| target.starts_with(x))
            || inside
                .unwrap_or(target)
                .components()
                .any(|c| c == Component::Normal(INDEX_DIR_NAME.as_ref()));
        if in_index {
            return Some(format!(
                "link target {} is inside an index directory; it is never indexed",
                target.display()
            ));
        }
        if inside.is_none() && !self.outside {
            return Some(format!(
                "link target {} is outside the lake; pass --follow-outside to index it",
                target.display()
            ));
        }
        None
    }

    /// The directory at `dir` is an excluded one, met under another path (below a
    /// followed link): one `stat`, made only for directories of walks that follow links.
    pub fn is_excluded_dir(&self, dir: &Path) -> bool {
        #[cfg(unix)]
        {
            dir_id(dir).is_some_and(|id| self.exclude_ids.contains(&id))
        }
        #[cfg(not(unix))]
        {
            let _ = dir;
            false
        }
    }
}

#[cfg(unix)]
fn dir_id(dir: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).ok().map(|m| (m.dev(), m.ino()))
}

/// Why the file the crawl listed at `abs` (the lake root joined with its relative path)
/// must not be read now: `links` is the rule when links are followed; without one the
/// file must resolve to itself, since the walk never went through a link. `None` when
/// it may be read, or when it cannot be resolved (the read then says why).
pub fn refuse_read(abs: &Path, links: Option<&Containment>) -> Option<String> {
    let target = abs.canonicalize().ok()?;
    match links {
        Some(c) => c.refuse_target(&target),
        None if target != abs => Some(format!(
            "it leads to {} through a symbolic link made after the crawl listed it; links are not followed (--follow)",
            target.display()
        )),
        None => None,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Fixture {
        _d: tempfile::TempDir,
        root: PathBuf,
        out: PathBuf,
        idx: PathBuf,
    }

    /// A lake `root` with `data/x.csv` and its index `root/idx`, beside a directory
    /// `out` with `y.csv`.
    fn fixture() -> Fixture {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().canonicalize().unwrap();
        let (root, out) = (base.join("lake"), base.join("out"));
        let idx = root.join("idx");
        for dir in [root.join("data"), out.clone(), idx.clone()] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(root.join("data/x.csv"), "a\n1\n").unwrap();
        std::fs::write(out.join("y.csv"), "a\n1\n").unwrap();
        Fixture {
            _d: d,
            root,
            out,
            idx,
        }
    }

    #[test]
    fn links_are_judged_by_their_final_canonical_target() {
        let f = fixture();
        let (root, out) = (&f.root, &f.out);
        let inside = Containment::new(root, false, std::slice::from_ref(&f.idx));
        // Relative, absolute, to a file, to a directory, link to a link.
        symlink("data", root.join("rel")).unwrap();
        symlink(root.join("data/x.csv"), root.join("abs.csv")).unwrap();
        symlink("../out", root.join("away")).unwrap();
        symlink(out.join("y.csv"), root.join("away.csv")).unwrap();
        symlink("away", root.join("via")).unwrap();
        // Out and back in: `out/back` leads to the lake's data.
        symlink(root.join("data"), out.join("back")).unwrap();
        symlink("../out/back", root.join("round")).unwrap();
        symlink("/etc", root.join("etc")).unwrap();
        symlink("idx", root.join("to-index")).unwrap();
        symlink("missing", root.join("dangling")).unwrap();
        for ok in ["rel", "abs.csv", "round"] {
            assert_eq!(inside.refuse_link(&root.join(ok)), None, "{ok}");
        }
        for out_link in ["away", "away.csv", "via", "etc"] {
            let why = inside.refuse_link(&root.join(out_link)).expect(out_link);
            assert!(
                why.contains("outside the lake") && why.contains("--follow-outside"),
                "{out_link}: {why}"
            );
        }
        // The target as it resolves (`/private/etc` on macOS).
        let etc = Path::new("/etc").canonicalize().unwrap();
        let why = inside.refuse_link(&root.join("etc")).unwrap();
        assert!(
            why.contains(&format!("link target {} ", etc.display())),
            "{why}"
        );
        assert!(inside
            .refuse_link(&root.join("dangling"))
            .unwrap()
            .contains("cannot be resolved"));

        let anywhere = Containment::new(root, true, std::slice::from_ref(&f.idx));
        for ok in ["rel", "away", "away.csv", "via", "etc", "round"] {
            assert_eq!(anywhere.refuse_link(&root.join(ok)), None, "{ok}");
        }
        // The index is never a link's target, whatever the rule.
        for c in [&inside, &anywhere] {
            let why = c.refuse_link(&root.join("to-index")).unwrap();
            assert!(why.contains("index directory"), "{why}");
        }
    }

    #[test]
    fn lakestar_directories_and_the_index_under_another_path_are_refused() {
        let f = fixture();
        let root = &f.root;
        std::fs::create_dir_all(root.join("sub/.lakestar")).unwrap();
        std::fs::write(root.join("sub/.lakestar/lakestar.toml"), "").unwrap();
        symlink("sub/.lakestar/lakestar.toml", root.join("conf.toml")).unwrap();
        symlink(&f.root, f.out.join("lake-again")).unwrap();
        let c = Containment::new(root, true, std::slice::from_ref(&f.idx));
        assert!(c.refuse_link(&root.join("conf.toml")).is_some());
        // A `.lakestar` among the root's own ancestors does not make everything refused.
        let nested = root.join("data");
        let c2 = Containment::new(&nested, false, &[]);
        assert_eq!(c2.refuse_target(&nested.join("x.csv")), None);
        // The index reached below a followed link: another path, the same directory.
        assert!(c.is_excluded_dir(&f.out.join("lake-again/idx")));
        assert!(!c.is_excluded_dir(&root.join("data")));
    }

    #[test]
    fn a_file_swapped_for_a_link_after_the_crawl_is_not_read() {
        let f = fixture();
        let root = &f.root;
        let abs = root.join("data/x.csv");
        assert_eq!(refuse_read(&abs, None), None);
        std::fs::remove_file(&abs).unwrap();
        symlink("/etc/passwd", &abs).unwrap();
        let why = refuse_read(&abs, None).unwrap();
        assert!(why.contains("/etc/passwd"), "{why}");
        let inside = Containment::new(root, false, &[]);
        assert!(refuse_read(&abs, Some(&inside))
            .unwrap()
            .contains("outside the lake"));
        let anywhere = Containment::new(root, true, &[]);
        assert_eq!(refuse_read(&abs, Some(&anywhere)), None);
        // An inside link is fine when links are followed, not when they are not.
        std::fs::remove_file(&abs).unwrap();
        std::fs::write(root.join("data/z.csv"), "a\n").unwrap();
        symlink("z.csv", &abs).unwrap();
        assert_eq!(refuse_read(&abs, Some(&inside)), None);
        assert!(refuse_read(&abs, None).is_some());
        // Gone: the read reports it.
        assert_eq!(refuse_read(&root.join("data/gone.csv"), None), None);
    }
}
