//! Object-store lakes: a lake given as a URL (`s3://bucket/prefix`, `gs://…`, `az://…`)
//! is listed and read through the `object_store` crate instead of walked and opened.
//!
//! - [`ObjectLake::open`] builds the store from the cloud's environment (`AWS_*`,
//!   `GOOGLE_*`, `AZURE_*`: keys, session tokens, instance metadata; for S3 without keys
//!   in the environment, the [`profile`] `AWS_PROFILE` names in the shared files) and
//!   an optional endpoint override (`--endpoint`, else `AWS_ENDPOINT_URL`, else the
//!   profile's `endpoint_url`), with the retry and timeout settings below.
//! - [`ObjectLake::list`] lists the prefix once: every object becomes a [`Listed`] with
//!   its key relative to the prefix, size, last-modified time and ETag.
//! - [`content_identity`] turns (ETag, size) into the 32 bytes the catalog stores where a
//!   local file's BLAKE3 goes, so an unchanged listing costs no read and a copy under a
//!   new key with the same ETag is a rename.
//! - [`reader::RemoteObject`] reads an object by ranged GETs through a small block cache,
//!   as `Read + Seek` or exact ranges, and counts what it fetched ([`Fetched`]).
//!
//! The store's API is async; the analyzers run on rayon threads, which block on the
//! lake's own tokio runtime. Concurrency is therefore the indexer's `--jobs`: one request
//! in flight per worker at most.

pub mod profile;
pub mod reader;
pub mod stage;

use object_store::path::Path as ObjectPath;
use object_store::{ClientOptions, ObjectStore, RetryConfig};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use reader::RemoteObject;

/// Bytes one ranged GET of the block reader fetches (the unit of its cache).
pub const BLOCK_SIZE: u64 = 1024 * 1024;
/// Blocks an object's reader keeps (the Parquet footer, the zip directory and the page
/// being read stay cached together).
pub const CACHED_BLOCKS: usize = 8;
/// Times a failed request is retried (with exponential backoff) before the read fails.
pub const MAX_RETRIES: usize = 3;
/// Longest time a request is retried for.
pub const RETRY_TIMEOUT: Duration = Duration::from_secs(60);
/// Connecting to the endpoint gives up after this long (an unreachable endpoint).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// One request (a block, a listing page) gives up after this long.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Bytes of small objects a run keeps after reading them, for a later step of the same
/// run to read again without a request ([`ObjectLake::keep`]).
pub const KEPT_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Threads of the runtime the requests run on (the waiting is done by the callers).
const RUNTIME_THREADS: usize = 2;

/// Errors of an object-store lake; every one says what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL names no store this build reads.
    #[error("lake URL {url}: {reason}")]
    BadUrl {
        /// The URL given.
        url: String,
        /// Why it was refused.
        reason: String,
    },
    /// The store could not be configured (missing region, bucket, credentials…).
    #[error("cannot open {url}: {source}; set the store's credentials in the environment (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_REGION or AWS_PROFILE, GOOGLE_SERVICE_ACCOUNT, AZURE_STORAGE_ACCOUNT_NAME/AZURE_STORAGE_ACCOUNT_KEY) and, for an S3-compatible store, --endpoint or AWS_ENDPOINT_URL")]
    Build {
        /// The lake URL.
        url: String,
        /// The store's error.
        source: object_store::Error,
    },
    /// Listing the prefix failed (no such bucket, refused credentials, no network).
    #[error("cannot list {url}: {source}; {hint}")]
    List {
        /// The lake URL.
        url: String,
        /// What to check, from the kind of failure.
        hint: &'static str,
        /// The store's error.
        source: object_store::Error,
    },
    /// The runtime the requests run on could not be started.
    #[error("cannot start the object-store runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The AWS profile to read keys from could not be used ([`profile`]).
    #[error("AWS profile {profile:?}: {reason}")]
    Profile {
        /// The profile's name.
        profile: String,
        /// Why, and what to do.
        reason: String,
    },
    /// Objects a run needs could not be staged ([`stage`]).
    #[error("cannot stage {what}: {reason}")]
    Stage {
        /// The lake-relative path (or setting) concerned.
        what: String,
        /// Why, and what to do.
        reason: String,
    },
}

/// Whether `lake` is given as a URL (`scheme://…`) rather than a directory.
pub fn is_url(lake: &str) -> bool {
    lake.split_once("://")
        .is_some_and(|(s, _)| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// The directory a `file://` URL names, `None` for any other string.
pub fn file_url_path(lake: &str) -> Option<std::path::PathBuf> {
    lake.strip_prefix("file://").map(std::path::PathBuf::from)
}

/// What a lake's reads fetched from the store: bytes and requests, since it was opened.
#[derive(Debug, Default)]
pub struct Fetched {
    bytes: AtomicU64,
    requests: AtomicU64,
}

impl Fetched {
    fn add(&self, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// (bytes, requests) so far.
    pub fn get(&self) -> (u64, u64) {
        (
            self.bytes.load(Ordering::Relaxed),
            self.requests.load(Ordering::Relaxed),
        )
    }
}

/// One object of a listing.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// The key relative to the lake's prefix, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Last-modified time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// The ETag, quotes and all, when the store gives one.
    pub etag: Option<String>,
}

/// The content identity of an object, from its listing: BLAKE3 of `etag:ETAG:SIZE`.
///
/// It stands where a local file's BLAKE3 goes. An ETag identifies content for single-part
/// uploads (their MD5) and changes whenever an object is written; a multipart upload's
/// ETag is a hash of the parts' hashes, so the same bytes uploaded in other parts get
/// another identity: re-described, never wrongly reused.
pub fn content_identity(etag: &str, size: u64) -> [u8; 32] {
    *blake3::hash(format!("etag:{etag}:{size}").as_bytes()).as_bytes()
}

/// A lake in an object store: the store, the prefix, the runtime its requests run on and
/// what they fetched.
pub struct ObjectLake {
    url: String,
    endpoint: Option<String>,
    store: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
    /// Always `Some` but while dropping (see [`Drop`]).
    runtime: Option<tokio::runtime::Runtime>,
    fetched: Fetched,
    /// Whole small objects read by this run, by path, and their total size.
    kept: std::sync::Mutex<(std::collections::HashMap<String, bytes::Bytes>, u64)>,
}

impl Drop for ObjectLake {
    fn drop(&mut self) {
        // A runtime dropped inside another one's async context panics; an `ask` run
        // may drop its lake there. Its tasks are requests of finished reads.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl std::fmt::Debug for ObjectLake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectLake")
            .field("url", &self.url)
            .finish()
    }
}

/// A loopback endpoint (`http://127.0.0.1:9000`, `http://localhost`): plain HTTP is
/// allowed to it, and to nothing else.
fn is_loopback(endpoint: &str) -> bool {
    let rest = endpoint
        .strip_prefix("http://")
        .or_else(|| endpoint.strip_prefix("https://"))
        .unwrap_or(endpoint);
    let authority = rest.split('/').next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl ObjectLake {
    /// Open the lake at `url` (`s3://bucket/prefix`, `gs://bucket/prefix`,
    /// `az://container/prefix`), reading credentials from the environment; `endpoint`
    /// overrides the S3 endpoint (else `AWS_ENDPOINT_URL`). Nothing is requested yet.
    pub fn open(url: &str, endpoint: Option<&str>) -> Result<ObjectLake, StoreError> {
        let bad = |reason: &str| StoreError::BadUrl {
            url: url.to_string(),
            reason: reason.to_string(),
        };
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("no scheme"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad("no bucket; write s3://BUCKET/PREFIX"));
        }
        let prefix = prefix.trim_matches('/');
        let normalized = if prefix.is_empty() {
            format!("{scheme}://{bucket}")
        } else {
            format!("{scheme}://{bucket}/{prefix}")
        };
        let retry = RetryConfig {
            max_retries: MAX_RETRIES,
            retry_timeout: RETRY_TIMEOUT,
            ..Default::default()
        };
        let client = ClientOptions::new()
            .with_connect_timeout(CONNECT_TIMEOUT)
            .with_timeout(REQUEST_TIMEOUT);
        let mut resolved_endpoint = None;
        let build = |source| StoreError::Build {
            url: normalized.clone(),
            source,
        };
        let store: Arc<dyn ObjectStore> =
            match scheme {
                "s3" | "s3a" => {
                    let mut b = object_store::aws::AmazonS3Builder::from_env()
                        .with_bucket_name(bucket)
                        .with_retry(retry);
                    // Keys in the environment come first; then a profile's.
                    let profile = match std::env::var_os("AWS_ACCESS_KEY_ID") {
                        Some(_) => None,
                        None => profile::load()?,
                    };
                    let mut region = None;
                    let mut profile_endpoint = None;
                    if let Some(p) = profile {
                        if let (Some(k), Some(s)) = (p.access_key_id, p.secret_access_key) {
                            b = b.with_access_key_id(k).with_secret_access_key(s);
                            if let Some(t) = p.session_token {
                                b = b.with_token(t);
                            }
                        }
                        region = p.region;
                        profile_endpoint = p.endpoint_url;
                    }
                    let endpoint = endpoint
                        .map(str::to_string)
                        .or_else(|| std::env::var("AWS_ENDPOINT_URL").ok())
                        .or(profile_endpoint);
                    let mut client = client;
                    if let Some(e) = &endpoint {
                        resolved_endpoint = Some(e.clone());
                        b = b.with_endpoint(e);
                        if is_loopback(e) {
                            client = client.with_allow_http(true);
                        }
                    }
                    if std::env::var_os("AWS_REGION").is_none()
                        && std::env::var_os("AWS_DEFAULT_REGION").is_none()
                    {
                        b = b.with_region(region.as_deref().unwrap_or("us-east-1"));
                    }
                    Arc::new(b.with_client_options(client).build().map_err(build)?)
                }
                "gs" | "gcs" => Arc::new(
                    object_store::gcp::GoogleCloudStorageBuilder::from_env()
                        .with_bucket_name(bucket)
                        .with_retry(retry)
                        .with_client_options(client)
                        .build()
                        .map_err(build)?,
                ),
                "az" | "azure" | "abfs" | "abfss" => Arc::new(
                    object_store::azure::MicrosoftAzureBuilder::from_env()
                        .with_container_name(bucket)
                        .with_retry(retry)
                        .with_client_options(client)
                        .build()
                        .map_err(build)?,
                ),
                _ => return Err(bad(
                    "unknown scheme; lakes are directories, file://, s3://, gs:// or az:// URLs",
                )),
            };
        let mut lake = Self::with_store(normalized, store, prefix)?;
        lake.endpoint = resolved_endpoint;
        Ok(lake)
    }

    /// The lake `url` over `store`, its objects under `prefix`.
    pub(crate) fn with_store(
        url: String,
        store: Arc<dyn ObjectStore>,
        prefix: &str,
    ) -> Result<ObjectLake, StoreError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(RUNTIME_THREADS)
            .thread_name("lakestar-store")
            .enable_all()
            .build()
            .map_err(StoreError::Runtime)?;
        Ok(ObjectLake {
            url,
            endpoint: None,
            store,
            prefix: ObjectPath::from(prefix),
            runtime: Some(runtime),
            fetched: Fetched::default(),
            kept: Default::default(),
        })
    }

    /// The lake's URL, normalized (no trailing `/`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The S3 endpoint override in effect (`--endpoint` or `AWS_ENDPOINT_URL`), which an
    /// index records so that readers of the index reach the same store.
    pub fn endpoint(&self) -> Option<&str> {
        self.endpoint.as_deref()
    }

    /// Run `f` to completion on the lake's runtime. From inside another runtime's async
    /// context (an `ask` run's steps), where blocking on a runtime panics, it runs on a
    /// thread of its own.
    fn block<F: std::future::Future + Send>(&self, f: F) -> F::Output
    where
        F::Output: Send,
    {
        let rt = self
            .runtime
            .as_ref()
            .expect("the runtime is taken only when the lake is dropped");
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| {
                s.spawn(|| rt.block_on(f))
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
            })
        } else {
            rt.block_on(f)
        }
    }

    /// What the lake's reads fetched so far.
    pub fn fetched(&self) -> &Fetched {
        &self.fetched
    }

    /// Keep the whole content of the small object at `path`, read by this run, for a
    /// later step of the run (the lookup step reads small tables again); within
    /// [`KEPT_MAX_BYTES`] in all, past which nothing more is kept.
    pub fn keep(&self, path: &str, bytes: bytes::Bytes) {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let size = bytes.len() as u64;
        if kept.1 + size <= KEPT_MAX_BYTES && kept.0.insert(path.to_string(), bytes).is_none() {
            kept.1 += size;
        }
    }

    /// The content kept for `path` ([`ObjectLake::keep`]), if any.
    pub fn kept(&self, path: &str) -> Option<bytes::Bytes> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.0.get(path).cloned()
    }

    /// Drop what was kept: at the end of a run, whose reads a next run must not reuse.
    pub fn forget_kept(&self) {
        *self.kept.lock().unwrap_or_else(|p| p.into_inner()) = Default::default();
    }

    /// Every object under the prefix, sorted by path. Keys ending in `/` (folder markers)
    /// are left out.
    pub fn list(&self) -> Result<Vec<Listed>, StoreError> {
        use futures::TryStreamExt;
        let prefix = (!self.prefix.as_ref().is_empty()).then_some(&self.prefix);
        let metas: Vec<object_store::ObjectMeta> = self
            .block(self.store.list(prefix).try_collect())
            .map_err(|source| StoreError::List {
                url: self.url.clone(),
                hint: hint(&source),
                source,
            })?;
        let strip = self.prefix.as_ref();
        let mut out: Vec<Listed> = metas
            .into_iter()
            .filter_map(|m| {
                let key = m.location.as_ref();
                let rel = if strip.is_empty() {
                    key
                } else {
                    key.strip_prefix(strip)?.strip_prefix('/')?
                };
                (!rel.is_empty() && !rel.ends_with('/')).then(|| Listed {
                    path: rel.to_string(),
                    size: m.size,
                    mtime_ns: m.last_modified.timestamp_nanos_opt().unwrap_or(0),
                    etag: m.e_tag,
                })
            })
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    /// The object at `rel` (relative to the prefix), of `size` bytes, to read.
    pub fn object(self: &Arc<Self>, rel: &str, size: u64) -> RemoteObject {
        RemoteObject::new(self.clone(), self.location(rel), size)
    }

    /// GET `range` of `location`, counted in [`Fetched`].
    fn get_range(
        &self,
        location: &ObjectPath,
        range: std::ops::Range<u64>,
    ) -> std::io::Result<bytes::Bytes> {
        let b = self
            .block(self.store.get_range(location, range))
            .map_err(|e| match e {
                object_store::Error::NotFound { .. } => {
                    std::io::Error::new(std::io::ErrorKind::NotFound, e)
                }
                e => std::io::Error::other(e),
            })?;
        self.fetched.add(b.len() as u64);
        Ok(b)
    }
}

/// What to check when a listing fails, from the kind of failure.
fn hint(e: &object_store::Error) -> &'static str {
    let text = format!("{e:?}");
    match e {
        object_store::Error::NotFound { .. } => "check the bucket's name",
        _ if text.contains("NoSuchBucket") => "check the bucket's name",
        object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. } => {
            "check the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, a profile's keys or the instance's role)"
        }
        _ if text.contains("AccessDenied")
            || text.contains("InvalidAccessKeyId")
            || text.contains("SignatureDoesNotMatch") =>
        {
            "check the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, a profile's keys or the instance's role)"
        }
        _ if text.contains("onnect") || text.contains("dns") || text.contains("timed out") => {
            "the endpoint did not answer: check --endpoint / AWS_ENDPOINT_URL and the network"
        }
        _ => "check the URL, the endpoint and the credentials",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_loopback_endpoints_are_told_apart() {
        assert!(is_url("s3://b/p"));
        assert!(is_url("file:///tmp/x"));
        assert!(!is_url("/tmp/s3://x"));
        assert!(!is_url("lake"));
        assert_eq!(
            file_url_path("file:///tmp/x"),
            Some(std::path::PathBuf::from("/tmp/x"))
        );
        assert!(is_loopback("http://127.0.0.1:9000"));
        assert!(is_loopback("http://localhost:9000/"));
        assert!(!is_loopback("http://s3.example.com"));
        assert!(!is_loopback("http://127.0.0.1.evil.com"));
        assert!(is_loopback("http://[::1]:9000"));
        assert!(!is_loopback("http://10.0.0.1:9000"));
    }

    #[test]
    fn identity_changes_with_etag_and_size() {
        let a = content_identity("\"abc\"", 10);
        assert_eq!(a, content_identity("\"abc\"", 10));
        assert_ne!(a, content_identity("\"abd\"", 10));
        assert_ne!(a, content_identity("\"abc\"", 11));
    }

    #[test]
    fn kept_objects_are_bounded_and_forgotten() {
        let store = Arc::new(object_store::memory::InMemory::new());
        let lake = ObjectLake::with_store("memory://b".into(), store, "").unwrap();
        lake.keep("a.csv", bytes::Bytes::from_static(b"x\n1\n"));
        assert_eq!(lake.kept("a.csv").as_deref(), Some(&b"x\n1\n"[..]));
        let big = bytes::Bytes::from(vec![0u8; KEPT_MAX_BYTES as usize]);
        lake.keep("big.csv", big);
        assert_eq!(
            lake.kept("big.csv"),
            None,
            "past the bound nothing more is kept"
        );
        lake.forget_kept();
        assert_eq!(lake.kept("a.csv"), None);
    }

    #[test]
    fn a_bad_url_says_what_to_write() {
        let e = ObjectLake::open("s3:///x", None).unwrap_err().to_string();
        assert!(e.contains("no bucket"), "{e}");
        let e = ObjectLake::open("ftp://b/x", None).unwrap_err().to_string();
        assert!(e.contains("unknown scheme"), "{e}");
    }
}
