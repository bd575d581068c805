//! Staging: the objects an `ask` run reads, copied from the store into a local cache,
//! because generated code runs in a sandbox without network and reads files.
//!
//! A *unit* is what one path of a run needs: one object, or every object of a table
//! folder (its data files and its log or metadata). A unit is keyed by its objects'
//! paths and content identities ([`super::content_identity`], from the ETag), so an
//! object that changed is a new unit and an unchanged one is read from the cache again
//! without a request. The cache lives at `INDEX/staged/`:
//!
//! - `KEY/` — the unit's objects at their lake-relative paths (so a table folder is a
//!   folder and `pd.read_parquet(dir)` works on it); complete when it exists, because it
//!   is downloaded into `.partial-…` and renamed.
//! - `KEY.lock` — held shared by every process that uses the unit (through
//!   [`Staged`]), exclusively by one that evicts it: a unit in use is never removed.
//!
//! The cache is bounded by [`StageOptions::max_bytes`]: a unit larger than that is
//! refused with the size, and before a download the least recently used units no one
//! holds are evicted until the new one fits.

use super::{ObjectLake, StoreError};
use object_store::path::Path as ObjectPath;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// Name of the cache's directory inside the index directory.
pub const STAGE_DIR: &str = "staged";
/// The cache's bound when the environment does not set one: 4 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 4 << 30;
/// The environment variable that sets the cache's bound in bytes.
pub const MAX_BYTES_ENV: &str = "LAKESTAR_STAGE_BYTES";

/// How staging is bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StageOptions {
    /// Bytes the cache may hold; a unit larger than this is refused.
    pub max_bytes: u64,
}

impl StageOptions {
    /// The options from the environment ([`MAX_BYTES_ENV`]), else the defaults; a value
    /// that is no number of bytes is an error that says so.
    pub fn from_env() -> Result<StageOptions, StoreError> {
        match std::env::var(MAX_BYTES_ENV) {
            Ok(v) => v
                .trim()
                .parse()
                .map(|max_bytes| StageOptions { max_bytes })
                .map_err(|_| StoreError::Stage {
                    what: format!("{MAX_BYTES_ENV}={v:?}"),
                    reason: "not a number of bytes; set it to the staging cache's size in bytes, e.g. 4294967296".into(),
                }),
            Err(_) => Ok(StageOptions {
                max_bytes: DEFAULT_MAX_BYTES,
            }),
        }
    }
}

/// One object of a unit: its lake-relative path, size and content identity as the index
/// recorded them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageObject {
    /// The key relative to the lake's prefix.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// [`super::content_identity`] of its ETag and size.
    pub identity: [u8; 32],
}

/// A staged unit, held: its files stay in the cache while this (or a clone of the `Arc`
/// a caller keeps it in) lives.
#[derive(Debug)]
pub struct Staged {
    /// The local path of the unit's path (a file, or a table's folder).
    pub path: PathBuf,
    /// Bytes downloaded for it now (0 when the cache had it).
    pub fetched: u64,
    _lock: File,
}

/// The staging cache of one index for one object-store lake.
#[derive(Debug)]
pub struct Stage {
    lake: Arc<ObjectLake>,
    dir: PathBuf,
    opts: StageOptions,
}

impl Stage {
    /// The cache of the index at `index_dir` for `lake`.
    pub fn new(lake: Arc<ObjectLake>, index_dir: &Path, opts: StageOptions) -> Stage {
        Stage {
            lake,
            dir: index_dir.join(STAGE_DIR),
            opts,
        }
    }

    /// The lake it stages from.
    pub fn lake(&self) -> &ObjectLake {
        &self.lake
    }

    /// Stage the unit of `path` (a file, or a table folder) made of `objects`: from the
    /// cache when it holds them, else downloaded whole. An object whose ETag or size no
    /// longer matches the index is refused (the index is stale: run `lakestar index`).
    pub fn stage(&self, path: &str, objects: &[StageObject]) -> Result<Staged, StoreError> {
        let fail = |reason: String| StoreError::Stage {
            what: path.to_string(),
            reason,
        };
        let io =
            |what: &str, p: &Path, e: std::io::Error| fail(format!("{what} {}: {e}", p.display()));
        let bytes: u64 = objects.iter().map(|o| o.size).sum();
        if bytes > self.opts.max_bytes {
            return Err(fail(format!(
                "{} in {} object(s), more than the staging cache holds ({}); stage it by raising {MAX_BYTES_ENV}, or ask about a smaller part of it",
                human(bytes),
                objects.len(),
                human(self.opts.max_bytes)
            )));
        }
        for o in objects {
            if !safe_relative(&o.path) {
                return Err(fail(format!(
                    "the key {:?} is no relative path a file can have",
                    o.path
                )));
            }
        }
        std::fs::create_dir_all(&self.dir).map_err(|e| io("creating", &self.dir, e))?;
        let key = unit_key(objects);
        let unit = self.dir.join(&key);
        let lock = lock_unit(&self.dir, &key, false).map_err(|e| io("locking", &unit, e))?;
        let local = unit.join(path.trim_end_matches('/'));
        if unit.is_dir() {
            touch(&unit);
            return Ok(Staged {
                path: local,
                fetched: 0,
                _lock: lock,
            });
        }
        self.evict(bytes, &key)
            .map_err(|e| io("evicting from", &self.dir, e))?;
        let partial = self.dir.join(format!(
            ".partial-{key}-{}-{}",
            std::process::id(),
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        let fetched = match self.download(objects, &partial) {
            Ok(n) => n,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&partial);
                return Err(fail(e));
            }
        };
        if let Err(e) = std::fs::rename(&partial, &unit) {
            // Another process staged the same unit meanwhile: theirs is as good.
            let _ = std::fs::remove_dir_all(&partial);
            if !unit.is_dir() {
                return Err(io("placing", &unit, e));
            }
        }
        Ok(Staged {
            path: local,
            fetched,
            _lock: lock,
        })
    }

    /// Download every object into `into` at its path; the bytes fetched. Each object's
    /// ETag and size are checked against the identity the index recorded.
    fn download(&self, objects: &[StageObject], into: &Path) -> Result<u64, String> {
        let mut total = 0;
        for o in objects {
            let to = into.join(&o.path);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("creating {}: {e}", parent.display()))?;
            }
            total += self.lake.download(&self.location(&o.path), o, &to)?;
        }
        Ok(total)
    }

    fn location(&self, rel: &str) -> ObjectPath {
        self.lake.location(rel)
    }

    /// Remove least recently used units no process holds until `incoming` more bytes
    /// fit within the bound (never the unit `keep`). Units in use stay even if that
    /// leaves the cache over its bound for a while: they are removed by a later run.
    fn evict(&self, incoming: u64, keep: &str) -> std::io::Result<()> {
        let mut units = Vec::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == keep || !entry.file_type()?.is_dir() {
                continue;
            }
            let used = entry
                .metadata()?
                .modified()
                .unwrap_or(SystemTime::UNIX_EPOCH);
            units.push((used, name, dir_bytes(&entry.path())));
        }
        let mut held: u64 = units.iter().map(|u| u.2).sum();
        units.sort();
        for (_, name, bytes) in units {
            if held + incoming <= self.opts.max_bytes {
                break;
            }
            // Held by a run (shared lock): skip it.
            let Ok(_lock) = lock_unit(&self.dir, &name, true) else {
                continue;
            };
            let gone = self
                .dir
                .join(format!(".evicted-{name}-{}", std::process::id()));
            if std::fs::rename(self.dir.join(&name), &gone).is_ok() {
                let _ = std::fs::remove_dir_all(&gone);
                held = held.saturating_sub(bytes);
            }
        }
        Ok(())
    }
}

impl ObjectLake {
    /// The object path of `rel` (relative to the prefix).
    pub(super) fn location(&self, rel: &str) -> ObjectPath {
        if self.prefix.as_ref().is_empty() {
            ObjectPath::from(rel)
        } else {
            ObjectPath::from(format!("{}/{rel}", self.prefix.as_ref()))
        }
    }

    /// GET the whole object `o` at `location` into the new file `to`, checking that its
    /// ETag and size are the ones the index recorded; the bytes fetched.
    fn download(&self, location: &ObjectPath, o: &StageObject, to: &Path) -> Result<u64, String> {
        use futures::StreamExt;
        let stale = "it changed since the index was built; run `lakestar index` on the lake again";
        self.block(async {
            let got = self
                .store
                .get(location)
                .await
                .map_err(|e| format!("GET {location}: {e}"))?;
            let etag = got.meta.e_tag.clone().unwrap_or_default();
            if got.meta.size != o.size
                || super::content_identity(&etag, got.meta.size) != o.identity
            {
                return Err(format!("{location}: {stale}"));
            }
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(to)
                .map_err(|e| format!("creating {}: {e}", to.display()))?;
            let mut stream = got.into_stream();
            let mut n = 0u64;
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|e| format!("reading {location}: {e}"))?;
                file.write_all(&chunk)
                    .map_err(|e| format!("writing {}: {e}", to.display()))?;
                n += chunk.len() as u64;
            }
            self.fetched.add(n);
            if n != o.size {
                return Err(format!("{location}: {n} bytes read of {}; {stale}", o.size));
            }
            file.sync_all()
                .map_err(|e| format!("writing {}: {e}", to.display()))?;
            Ok(n)
        })
    }
}

/// The unit's key: BLAKE3 of its objects' paths and identities, sorted (32 hex digits).
fn unit_key(objects: &[StageObject]) -> String {
    let mut parts: Vec<(&str, &[u8; 32])> = objects
        .iter()
        .map(|o| (o.path.as_str(), &o.identity))
        .collect();
    parts.sort();
    let mut h = blake3::Hasher::new();
    for (p, id) in parts {
        h.update(p.as_bytes());
        h.update(&[0]);
        h.update(id);
    }
    h.finalize().to_hex()[..32].to_string()
}

/// Lock `DIR/KEY.lock`: shared (a user of the unit, waiting for an evictor to finish)
/// or exclusive without waiting (an evictor, failing when anyone holds it). The file
/// is never removed, so every process locks the same inode.
fn lock_unit(dir: &Path, key: &str, exclusive: bool) -> std::io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join(format!("{key}.lock")))?;
    if exclusive {
        f.try_lock().map_err(std::io::Error::other)?;
    } else {
        f.lock_shared()?;
    }
    Ok(f)
}

/// Mark the unit used now (its folder's modification time orders eviction).
fn touch(unit: &Path) {
    if let Ok(f) = File::open(unit) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// Bytes of the files under `dir` (symbolic links are not followed; the cache makes none).
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

/// Whether `rel` is a relative path of plain components: an object key such as
/// `../x` or `/etc/x` must not place a file outside its unit.
fn safe_relative(rel: &str) -> bool {
    !rel.is_empty()
        && Path::new(rel)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;
    use object_store::{ObjectStore, PutPayload};

    fn lake(objects: &[(&str, &[u8])]) -> (Arc<ObjectLake>, Vec<StageObject>) {
        let store = Arc::new(InMemory::new());
        let lake = ObjectLake::with_store("memory://b/p".into(), store.clone(), "p").unwrap();
        let mut out = Vec::new();
        for (path, bytes) in objects {
            let meta = lake.block(async {
                let loc = ObjectPath::from(format!("p/{path}"));
                store
                    .put(&loc, PutPayload::from(bytes.to_vec()))
                    .await
                    .unwrap();
                store.head(&loc).await.unwrap()
            });
            out.push(StageObject {
                path: path.to_string(),
                size: meta.size,
                identity: crate::store::content_identity(
                    meta.e_tag.as_deref().unwrap_or(""),
                    meta.size,
                ),
            });
        }
        (Arc::new(lake), out)
    }

    #[test]
    fn a_unit_is_downloaded_once_then_read_from_the_cache() {
        let index = tempfile::tempdir().unwrap();
        let (lake, objs) = lake(&[("t/a.csv", b"x,y\n1,2\n"), ("t/b.csv", b"x,y\n3,4\n")]);
        let stage = Stage::new(
            lake.clone(),
            index.path(),
            StageOptions { max_bytes: 1 << 20 },
        );
        let s = stage.stage("t/", &objs).unwrap();
        assert_eq!(s.fetched, 16);
        assert!(s.path.ends_with("t"));
        assert_eq!(std::fs::read(s.path.join("b.csv")).unwrap(), b"x,y\n3,4\n");
        drop(s);
        let again = stage.stage("t/", &objs).unwrap();
        assert_eq!(again.fetched, 0);
        assert_eq!(lake.fetched().get(), (16, 2));
    }

    #[test]
    fn too_large_stale_and_unsafe_units_are_refused_with_what_to_do() {
        let index = tempfile::tempdir().unwrap();
        let (lake, mut objs) = lake(&[("a.csv", b"0123456789")]);
        let small = Stage::new(lake.clone(), index.path(), StageOptions { max_bytes: 5 });
        let e = small.stage("a.csv", &objs).unwrap_err().to_string();
        assert!(e.contains("10 B") && e.contains(MAX_BYTES_ENV), "{e}");
        let stage = Stage::new(lake, index.path(), StageOptions { max_bytes: 100 });
        let mut stale = objs.clone();
        stale[0].identity = crate::store::content_identity("\"other\"", 10);
        let e = stage.stage("a.csv", &stale).unwrap_err().to_string();
        assert!(e.contains("run `lakestar index`"), "{e}");
        // Nothing half-written is left to be taken for a staged unit.
        let left: Vec<_> = std::fs::read_dir(index.path().join(STAGE_DIR))
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().unwrap().is_dir())
            .collect();
        assert!(left.is_empty(), "{left:?}");
        objs[0].path = "../a.csv".into();
        let e = stage.stage("../a.csv", &objs).unwrap_err().to_string();
        assert!(e.contains("no relative path"), "{e}");
    }

    #[test]
    fn least_recently_used_units_no_one_holds_are_evicted_to_fit() {
        let index = tempfile::tempdir().unwrap();
        let (lake, objs) = lake(&[("a", &[1; 40]), ("b", &[2; 40]), ("c", &[3; 40])]);
        let stage = Stage::new(lake, index.path(), StageOptions { max_bytes: 100 });
        let a = stage.stage("a", &objs[0..1]).unwrap();
        let b = stage.stage("b", &objs[1..2]).unwrap();
        drop(b);
        // `a` is held, so `b` goes to make room for `c`.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let c = stage.stage("c", &objs[2..3]).unwrap();
        assert!(a.path.is_file() && c.path.is_file());
        let units = std::fs::read_dir(index.path().join(STAGE_DIR))
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().unwrap().is_dir())
            .count();
        assert_eq!(units, 2);
        let b = stage.stage("b", &objs[1..2]).unwrap();
        assert_eq!(b.fetched, 40, "b was evicted and is fetched again");
    }
}
