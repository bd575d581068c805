//! The indexer's step: recompute the companion-documentation and lookup links
//! ([`crate::companion`]) of every folder in which a file changed. Here rather than in
//! `companion`, which the catalog uses: the matching is pure, this step writes the catalog.

use super::IN_MEMORY_LIMIT;
use crate::analyze::{ColumnProfile, Content, Description, Format};
use crate::analyze::{Source, DEFAULT_BUDGET};
use crate::catalog::{folder_of, CatalogReader, CatalogWriter, FileRow, FileState, MetaKey};
use crate::companion::lookup::{self, DataFile, LookupLink, LookupTable, SampledColumn};
use crate::companion::matcher::{self, match_folder, FolderFile};
use crate::companion::{fit, headerless_columns, parse, Link, DOC_MAX_BYTES};
use crate::error::Result;
use crate::store::ObjectLake;
use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Folders with more files than this are not examined: every change in a folder
/// decodes the descriptions of its tables again, and documentation beside tens of
/// thousands of files is rarer than the cost is certain.
const MAX_FOLDER_FILES: usize = 20_000;

/// Folders below a changed lookup candidate relinked at most: past this, a lookup high
/// in a large lake is linked to the folders below it as they change, not all at once.
const MAX_FOLDERS_BELOW: usize = 5_000;

/// Extensions of files read as possible documentation (any name with a documentation
/// word in it is read too).
const DOC_EXTENSIONS: [&str; 8] = ["txt", "text", "fmt", "md", "csv", "tsv", "desc", "def"];

/// Whether a file may document others: small, described, and text by its name.
fn doc_candidate(row: &FileRow) -> bool {
    if row.state != FileState::Ok || row.size > DOC_MAX_BYTES || row.size == 0 {
        return false;
    }
    let name = row
        .path
        .rsplit('/')
        .next()
        .unwrap_or(&row.path)
        .to_lowercase();
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    DOC_EXTENSIONS.contains(&ext) || matcher::has_doc_word(&name)
}

/// Formats whose description can be a headerless table.
fn data_candidate(row: &FileRow) -> bool {
    row.state == FileState::Ok
        && matches!(row.format, Format::Csv | Format::Tsv | Format::FixedWidth)
}

/// Where the step reads a file's first bytes: the lake's folder, or its object store
/// (one ranged GET), so that documentation in a bucket is linked as it is on disk.
#[derive(Clone, Copy)]
pub(super) enum LakeReader<'a> {
    /// A lake on disk, its root.
    Dir(&'a Path),
    /// A lake in an object store.
    Objects(&'a Arc<ObjectLake>),
}

impl LakeReader<'_> {
    /// At most `max` first bytes of the file of `row`; `None` when it cannot be read now
    /// (the next change redoes it).
    fn head(self, row: &FileRow, max: u64) -> Option<Vec<u8>> {
        match self {
            LakeReader::Dir(lake) => {
                let mut buf = Vec::new();
                std::fs::File::open(lake.join(&row.path))
                    .ok()?
                    .take(max)
                    .read_to_end(&mut buf)
                    .ok()?;
                Some(buf)
            }
            LakeReader::Objects(o) => match o.kept(&row.path) {
                // Read whole by this run's analysis.
                Some(b) => Some(b[..b.len().min(max as usize)].to_vec()),
                None => o
                    .object(&row.path, row.size)
                    .read_exact_range(0, max)
                    .ok()
                    .map(|b| b.to_vec()),
            },
        }
    }
}

/// The text of a documentation candidate, read from the lake (at most
/// [`DOC_MAX_BYTES`]); `None` when it cannot be read now (the next change redoes it).
fn read_doc(lake: LakeReader<'_>, row: &FileRow) -> Option<String> {
    let buf = lake.head(row, DOC_MAX_BYTES)?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// The links of the files directly in `folder`.
fn folder_links(cat: &CatalogReader, lake: LakeReader<'_>, folder: &str) -> Result<Vec<Link>> {
    // One past the bound tells a folder too large, without reading all of it.
    let rows = cat.folder_files(folder, MAX_FOLDER_FILES + 1)?;
    if rows.len() > MAX_FOLDER_FILES || !rows.iter().any(doc_candidate) {
        return Ok(Vec::new());
    }
    let mut files = Vec::with_capacity(rows.len());
    // Per file: whether to read it from disk as possible documentation.
    let mut read = Vec::with_capacity(rows.len());
    // Per file: the lines its table starts after, for a fixed-width headerless table.
    let mut block = Vec::with_capacity(rows.len());
    for row in &rows {
        let desc = match (&row.hash, &row.analyzer) {
            (Some(h), Some(a)) if data_candidate(row) => cat.description(h, a)?,
            _ => None,
        };
        let headerless = desc.as_ref().and_then(headerless_columns);
        block.push(match desc.as_ref().map(|d| &d.content) {
            Some(Content::Table(t)) if headerless.is_some() && row.format == Format::FixedWidth => {
                Some(t.skipped_lines as usize)
            }
            _ => None,
        });
        // A delimited file documents columns only with a header naming a column of
        // names (`Variable`, `Name`…): the others are not read again. A format text is
        // often itself read as a headerless table (its lines are aligned columns), so a
        // fixed-width file is read whatever its description.
        let delimited = matches!(row.format, Format::Csv | Format::Tsv);
        read.push(
            doc_candidate(row) && (!delimited || desc.as_ref().is_some_and(parse::names_header)),
        );
        files.push(FolderFile {
            path: row.path.clone(),
            headerless,
            documents: None,
            lines: None,
        });
    }
    if files.iter().all(|f| f.headerless.is_none()) {
        return Ok(Vec::new());
    }
    for ((f, row), read) in files.iter_mut().zip(&rows).zip(read) {
        if read {
            f.documents = read_doc(lake, row).and_then(|t| parse::listing(&t));
        }
    }
    // A field list with positions is matched by content: the first lines of the
    // fixed-width tables are read (only then).
    if files
        .iter()
        .any(|f| f.documents.as_ref().is_some_and(|l| l.spans.is_some()))
    {
        for ((f, row), b) in files.iter_mut().zip(&rows).zip(&block) {
            if b.is_some() && f.documents.is_none() {
                f.lines = lake
                    .head(row, fit::FIT_BYTES)
                    .map(|buf| complete_lines(&buf));
            }
        }
    }
    let mut links = match_folder(&files);
    // A link by content whose positions split the lines otherwise than the description
    // (fields written without a blank between them) carries the table read at them.
    for l in &mut links {
        let Some(i) = rows.iter().position(|r| r.path == l.data) else {
            continue;
        };
        let (Some(fit), Some(b)) = (l.fit.as_mut(), block[i]) else {
            continue;
        };
        if files[i].headerless == Some(l.columns.len()) {
            continue;
        }
        fit.table = table_at(lake, &rows[i], b, &fit.spans).map(Box::new);
    }
    // One that cannot be read at its positions names nothing.
    links.retain(|l| {
        l.fit.as_ref().is_none_or(|f| f.table.is_some())
            || rows
                .iter()
                .zip(&files)
                .any(|(r, f)| r.path == l.data && f.headerless == Some(l.columns.len()))
    });
    Ok(links)
}

/// The lines of a file's first bytes that end within them.
fn complete_lines(buf: &[u8]) -> String {
    let end = memchr::memrchr(b'\n', buf).map_or(0, |i| i + 1);
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The table of the file of `row` read at `spans` below its first `block` lines; `None`
/// when it cannot be read now (the next change of its folder redoes it).
fn table_at(
    lake: LakeReader<'_>,
    row: &FileRow,
    block: usize,
    spans: &[(usize, usize)],
) -> Option<crate::analyze::Table> {
    let src = match lake {
        LakeReader::Dir(root) => Source::open(root.join(&row.path), IN_MEMORY_LIMIT)
            .ok()?
            .with_budget(Some(DEFAULT_BUDGET)),
        // An object is read once, up to the read budget, as the analysis reads it.
        LakeReader::Objects(_) => {
            let mut buf = lake.head(row, DEFAULT_BUDGET)?;
            buf.truncate(memchr::memrchr(b'\n', &buf).map_or(0, |i| i + 1));
            Source::from_bytes(&row.path, buf)
        }
    };
    crate::analyze::fixed::table_at(&src, block, spans).ok()
}

/// A lookup candidate's table read from the lake: small, delimited, with a header and
/// a key column; `None` otherwise (or when it cannot be read now).
fn lookup_table(lake: LakeReader<'_>, row: &FileRow, d: &Description) -> Option<LookupTable> {
    let Content::Table(t) = &d.content else {
        return None;
    };
    let small = t.header && t.rows_exact && t.rows <= lookup::LOOKUP_MAX_ROWS;
    let delimiter = match t.delimiter.as_bytes() {
        [b] => *b,
        _ => return None,
    };
    if !small || t.columns.len() < 2 || !t.columns.iter().any(|c| c.is_unique(t.rows)) {
        return None;
    }
    let buf = lake.head(row, lookup::LOOKUP_MAX_BYTES)?;
    let text = String::from_utf8_lossy(&buf);
    let (columns, values) = lookup::read_columns(&text, delimiter, t.skipped_lines as usize)?;
    LookupTable::from_read(row.path.clone(), columns, values)
}

/// The columns of a described table with the values the description keeps.
fn sampled_columns(d: &Description) -> Vec<SampledColumn> {
    let one = |c: &ColumnProfile| {
        let mut values: Vec<String> = c.top.iter().map(|(v, _)| v.clone()).collect();
        values.extend(c.examples.iter().cloned());
        SampledColumn {
            name: c.name.clone(),
            values,
            distinct: c.distinct_exact.then_some(c.distinct),
        }
    };
    d.content.profiled_columns().map(|(_, c)| one(c)).collect()
}

/// Whether a row may be a lookup table: a small delimited file.
fn small_delimited(r: &FileRow) -> bool {
    r.state == FileState::Ok
        && matches!(r.format, Format::Csv | Format::Tsv)
        && r.size > 0
        && r.size <= lookup::LOOKUP_MAX_BYTES
}

/// Bytes of lookup tables ([`LookupTable::heap_bytes`]) a linking thread keeps for the
/// folders it links next: the tables of the folders above them. A folder whose tables
/// do not fit beside those kept is not kept, but read again, a batch of at most this
/// many bytes at a time, for each folder it serves; so a thread holds about twice this
/// at most, however many small keyed tables a folder has: a bench lake's folders of
/// thousands of small keyed TSVs then cost a fraction of the memory in the same wall
/// time (BENCHMARKS.md, "Indexing"). Large enough for a `reference/`
/// folder high in a lake, whose tables would otherwise be read again for every folder
/// below it.
pub(super) const LOOKUP_BYTES: usize = 16 << 20;

/// A folder's lookup tables, as a linking thread keeps them.
enum Held {
    /// All of them (perhaps none), and their bytes.
    Tables(Vec<LookupTable>, usize),
    /// More than fit: read a batch at a time whenever they are needed.
    TooMany,
}

/// The tables a linking thread keeps, by folder, within a budget of bytes.
struct TableCache {
    folders: HashMap<String, Held>,
    bytes: usize,
    budget: usize,
}

impl TableCache {
    fn new(budget: usize) -> TableCache {
        TableCache {
            folders: HashMap::new(),
            bytes: 0,
            budget,
        }
    }

    /// Keep only the folders in `wanted`.
    fn retain(&mut self, wanted: &[&str]) {
        self.folders.retain(|f, _| wanted.contains(&f.as_str()));
        self.bytes = self
            .folders
            .values()
            .map(|h| match h {
                Held::Tables(_, bytes) => *bytes,
                Held::TooMany => 0,
            })
            .sum();
    }

    /// Room left for another folder's tables.
    fn room(&self) -> usize {
        self.budget.saturating_sub(self.bytes)
    }

    fn insert(&mut self, folder: &str, held: Held) {
        if let Held::Tables(_, bytes) = &held {
            self.bytes += bytes;
        }
        self.folders.insert(folder.to_string(), held);
    }
}

/// A folder's tables as they are read: kept while they fit in `room` bytes.
struct Filling {
    tables: Vec<LookupTable>,
    bytes: usize,
    room: usize,
    too_many: bool,
}

impl Filling {
    fn new(room: usize) -> Filling {
        Filling {
            tables: Vec::new(),
            bytes: 0,
            room,
            too_many: false,
        }
    }

    /// Keep `row`'s table, if it is a lookup and the folder's still fit.
    fn push_from(&mut self, lake: LakeReader<'_>, row: &FileRow, d: &Description) {
        if !self.too_many {
            if let Some(t) = lookup_table(lake, row, d) {
                self.push(t);
            }
        }
    }

    fn push(&mut self, t: LookupTable) {
        if self.too_many {
            return;
        }
        self.bytes += t.heap_bytes();
        if self.bytes > self.room {
            // It will be read a batch at a time instead; what was read goes now.
            self.too_many = true;
            self.tables = Vec::new();
        } else {
            self.tables.push(t);
        }
    }

    fn held(self) -> Held {
        if self.too_many {
            Held::TooMany
        } else {
            Held::Tables(self.tables, self.bytes)
        }
    }
}

/// Read the lookup tables directly in `folder` into `cache` unless they are there (or,
/// when they do not fit in its room, mark them [`Held::TooMany`]): a folder's lookups
/// serve the data of every folder below it too.
fn load_folder_tables(
    cat: &CatalogReader,
    lake: LakeReader<'_>,
    folder: &str,
    cache: &mut TableCache,
) -> Result<()> {
    if cache.folders.contains_key(folder) {
        return Ok(());
    }
    let mut filling = Filling::new(cache.room());
    each_table(cat, lake, folder, |t| {
        filling.push(t);
        !filling.too_many
    })?;
    cache.insert(folder, filling.held());
    Ok(())
}

/// Call `f` on each lookup table directly in `folder`, in path order, while it returns
/// `true`.
fn each_table(
    cat: &CatalogReader,
    lake: LakeReader<'_>,
    folder: &str,
    mut f: impl FnMut(LookupTable) -> bool,
) -> Result<()> {
    for row in cat
        .folder_files(folder, usize::MAX)?
        .iter()
        .filter(|r| small_delimited(r))
    {
        if let Some(d) = cat.file_description(row)? {
            if let Some(t) = lookup_table(lake, row, &d) {
                if !f(t) {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// Call `f` on the lookup tables directly in `folder`, in batches of about `budget`
/// bytes: a folder whose tables are too many to keep.
fn table_batches(
    cat: &CatalogReader,
    lake: LakeReader<'_>,
    folder: &str,
    budget: usize,
    mut f: impl FnMut(&[LookupTable]),
) -> Result<()> {
    let (mut batch, mut bytes) = (Vec::new(), 0);
    each_table(cat, lake, folder, |t| {
        bytes += t.heap_bytes();
        batch.push(t);
        if bytes >= budget {
            f(&batch);
            batch.clear();
            bytes = 0;
        }
        true
    })?;
    if !batch.is_empty() {
        f(&batch);
    }
    Ok(())
}

/// The folders above `folder`, nearest first, the root last (none for the root).
fn ancestors(folder: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut f = folder;
    while !f.is_empty() {
        f = folder_of(f);
        out.push(f);
    }
    out
}

/// The lookup links of the files directly in `folder`, to lookup tables in it or in a
/// folder above it (a `reference/` table at the lake's root serves every folder): the
/// descriptions of its other files are read only when there is such a table, and each
/// file's once (a small table is both a possible lookup and data). A link depends on
/// its data file and its table alone, so the tables of a folder too large to keep are
/// matched a batch at a time, with the same links.
fn folder_lookups(
    cat: &CatalogReader,
    lake: LakeReader<'_>,
    folder: &str,
    cache: &mut TableCache,
) -> Result<Vec<LookupLink>> {
    let mut wanted = vec![folder];
    wanted.extend(ancestors(folder));
    // Only this folder's tables and those above it serve it. Folders come in path
    // order, so the ones above are mostly those the next folders need too; the rest
    // are dropped, which keeps the cache to one path's worth of tables (and within its
    // budget) instead of every table of the lake (gigabytes at 100k files). One needed
    // again later is read again.
    cache.retain(&wanted);
    // The root first: the higher a folder, the more folders its tables serve, so
    // those are the ones kept when not all fit.
    for f in wanted[1..].iter().rev() {
        load_folder_tables(cat, lake, f, cache)?;
    }
    let rows = cat.folder_files(folder, MAX_FOLDER_FILES + 1)?;
    if rows.len() > MAX_FOLDER_FILES {
        // Too many for its files to be matched (its tables, which serve the folders
        // below, are read as any folder's above).
        return Ok(Vec::new());
    }
    // Per file, once decoded: its columns as data (`None`: not decoded yet).
    let mut columns: Vec<Option<Vec<SampledColumn>>> = vec![None; rows.len()];
    if !cache.folders.contains_key(folder) {
        let mut filling = Filling::new(cache.room());
        for (row, cols) in rows.iter().zip(&mut columns) {
            if !small_delimited(row) {
                continue;
            }
            let d = cat.file_description(row)?;
            if let Some(d) = &d {
                filling.push_from(lake, row, d);
            }
            *cols = Some(d.as_ref().map(sampled_columns).unwrap_or_default());
        }
        cache.insert(folder, filling.held());
    }
    let mut kept: Vec<&LookupTable> = Vec::new();
    let mut too_many: Vec<&str> = Vec::new();
    for f in &wanted {
        match &cache.folders[*f] {
            Held::Tables(tables, _) => kept.extend(tables),
            Held::TooMany => too_many.push(f),
        }
    }
    if kept.is_empty() && too_many.is_empty() {
        return Ok(Vec::new());
    }
    let mut data = Vec::new();
    for (row, cols) in rows.iter().zip(columns) {
        if row.state != FileState::Ok {
            continue;
        }
        let columns = match cols {
            Some(c) => c,
            None => cat
                .file_description(row)?
                .as_ref()
                .map(sampled_columns)
                .unwrap_or_default(),
        };
        if !columns.is_empty() {
            data.push(DataFile {
                path: row.path.clone(),
                columns,
            });
        }
    }
    let mut links = lookup::match_lookups(&kept, &data);
    if too_many.is_empty() {
        return Ok(links);
    }
    for f in too_many {
        table_batches(cat, lake, f, cache.budget, |batch| {
            links.extend(lookup::match_lookups(batch, &data))
        })?;
    }
    lookup::sort_links(&mut links);
    Ok(links)
}

/// Folders a lookup worker takes at a time: neighbours in path order, so that the
/// folders above them, which its cache keeps, are mostly the same.
const LOOKUP_TASK: usize = if cfg!(test) { 2 } else { 64 };

/// The lookup links of `folders`, computed by `jobs` threads, each reading the catalog
/// through a reader of its own (what they read, the files, their descriptions and the
/// companion links, is committed by now), and written by this one. At a first index
/// every folder's are (a tenth of the run at a million files on one thread); the
/// results wait in a bounded channel, so memory does not grow with the lake.
fn lookups_in_parallel(
    cat: &mut CatalogWriter,
    lake: LakeReader<'_>,
    folders: &[String],
    jobs: usize,
    budget: usize,
) -> Result<()> {
    if folders.is_empty() {
        return Ok(());
    }
    let tasks: Vec<&[String]> = folders.chunks(LOOKUP_TASK).collect();
    let next = AtomicUsize::new(0);
    let dir = cat.dir().to_path_buf();
    let jobs = jobs.clamp(1, tasks.len());
    std::thread::scope(|s| {
        let (tx, rx) =
            std::sync::mpsc::sync_channel::<Result<Vec<(&str, Vec<LookupLink>)>>>(2 * jobs);
        for _ in 0..jobs {
            let (tx, dir, tasks, next) = (tx.clone(), &dir, &tasks, &next);
            s.spawn(move || {
                let reader = match CatalogReader::open_for_pass(dir) {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                let mut cache = TableCache::new(budget);
                while let Some(task) = tasks.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let done = task
                        .iter()
                        .map(|f| Ok((f.as_str(), folder_lookups(&reader, lake, f, &mut cache)?)))
                        .collect();
                    if tx.send(done).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        // Returning early drops the receiver: each worker's next send fails, and it
        // stops after the task in hand.
        for done in rx {
            for (folder, links) in done? {
                cat.replace_lookups(folder, &links)?;
            }
        }
        Ok(())
    })
}

/// Recompute the companion links of the folders of the run's changed paths (those
/// added, modified, renamed or deleted since the search side last caught up, as
/// [`CatalogWriter::snapshot_changed`] took them, read a chunk at a time): a link depends
/// on both files, so a change to either redoes its folder. Lookup links of every folder
/// are recomputed once when the catalog's were made by an older rule.
/// Returns how many documentation links appeared, went or changed. A data file whose
/// lookup links changed is marked stale for search: its document carries their labels.
/// The lookup links are computed by `jobs` threads.
pub fn relink(cat: &mut CatalogWriter, lake: LakeReader<'_>, jobs: usize) -> Result<usize> {
    relink_within(cat, lake, jobs, LOOKUP_BYTES)
}

/// [`relink`], each lookup thread keeping `budget` bytes of tables ([`LOOKUP_BYTES`]).
pub(super) fn relink_within(
    cat: &mut CatalogWriter,
    lake: LakeReader<'_>,
    jobs: usize,
    budget: usize,
) -> Result<usize> {
    // Sets of folders, not of paths: a folder holds many files, and these are far
    // fewer than the changed paths (every path of the lake at a first index).
    let mut folders: BTreeSet<String> = BTreeSet::new();
    // Folders of a changed table that may be a lookup: the folders below may use it.
    let mut above: BTreeSet<String> = BTreeSet::new();
    super::in_chunks(
        |after, limit| cat.changed_after(after, limit),
        |chunk| {
            for p in chunk {
                let f = folder_of(p);
                if !folders.contains(f) {
                    folders.insert(f.to_string());
                }
                if (p.ends_with(".csv") || p.ends_with(".tsv")) && !above.contains(f) {
                    above.insert(f.to_string());
                }
            }
            Ok(())
        },
    )?;
    let mut touched = 0;
    for folder in &folders {
        let links = folder_links(cat, lake, folder)?;
        // Of the changed paths, replacing a folder's links needs only its links' data
        // files (few: a folder of more than `MAX_FOLDER_FILES` files has none).
        let mut fresh = Vec::new();
        for l in &links {
            if cat.is_changed(&l.data)? {
                fresh.push(l.data.clone());
            }
        }
        fresh.sort();
        touched += cat.replace_companions(folder, &links, &fresh)?;
    }
    let every = cat.meta(MetaKey::LookupsVersion)?.as_deref() != Some(lookup::LOOKUP_RULE);
    let mut lookup_folders = folders;
    if every {
        lookup_folders.extend(cat.folders()?);
    } else {
        for f in &above {
            lookup_folders.extend(cat.folders_below(f, MAX_FOLDERS_BELOW)?);
        }
    }
    let folders: Vec<String> = lookup_folders.into_iter().collect();
    lookups_in_parallel(cat, lake, &folders, jobs, budget)?;
    if every {
        cat.set_meta(MetaKey::LookupsVersion, lookup::LOOKUP_RULE)?;
    }
    Ok(touched)
}
