//! Lookup tables: a small table beside a data file whose key column holds the values of
//! one of the data file's columns (`states.csv`, `code,name`, beside a file whose `state`
//! column holds `CA`, `TX`…). A person opens both: the data file's codes mean what the
//! lookup says, and a question naming `California` needs the lookup to find `CA`.
//!
//! The lookup's key values are read whole from the file (it is small); the data file's
//! values are only those its description keeps — the most frequent values (`top`) and
//! the first distinct examples — so a link says that a *sample* of the column's values
//! is covered by the key, not that every value is.

use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::collections::{HashMap, HashSet};

/// The rule lookup links are made by, recorded in the catalog (meta
/// [`crate::catalog::MetaKey::LookupsVersion`]): a catalog recording another (or none)
/// has every folder's links made again. Bump when [`match_lookups`] or what it is given changes (3: links carry the
/// lookup's labels; 4: lookups in the folders above the data's).
pub const LOOKUP_RULE: &str = "4";

/// Tables with more data rows than this are not lookups.
pub const LOOKUP_MAX_ROWS: u64 = 1000;
/// Files larger than this are not read as lookups.
pub const LOOKUP_MAX_BYTES: u64 = 256 * 1024;
/// Columns of the lookup a link names as what the key translates to.
const VALUES_NAMED: usize = 3;
/// Labels a link keeps of its lookup (distinct values of the columns it names).
pub const LABELS_KEPT: usize = 300;
/// Characters of one label at most: longer cells are notes, not names.
const LABEL_CHARS: usize = 80;
/// Share of the data column's sampled values the key must hold.
const COVERAGE: f64 = 0.8;

/// A lookup table and the data file whose column it translates (lake-relative paths).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LookupLink {
    /// The data file.
    pub data: String,
    /// The lookup table.
    pub lookup: String,
    /// The data file's column whose values the key holds.
    pub column: String,
    /// The lookup's key column.
    pub key: String,
    /// The lookup's other columns (the first few): what a key translates to.
    pub values: Vec<String>,
    /// What the keys translate to: the distinct words-bearing values of those columns
    /// (at most [`LABELS_KEPT`]). The data file is searched by them: a question saying
    /// "construction" finds the file whose `industry_code` column holds `23`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
}

impl LookupLink {
    /// Why the lookup goes with the data file: `lookup: state → name`.
    pub fn why(&self) -> String {
        if self.values.is_empty() {
            format!("lookup: {} → {}", self.column, self.key)
        } else {
            format!("lookup: {} → {}", self.column, self.values.join(", "))
        }
    }
}

/// A key column of a lookup table: every value distinct, all of them read.
#[derive(Debug, Clone)]
pub struct KeyColumn {
    /// Column name.
    pub name: String,
    /// Its values, normalized ([`norm`]).
    pub values: HashSet<String>,
}

/// A small table that may be a lookup.
#[derive(Debug, Clone)]
pub struct LookupTable {
    /// Lake-relative path.
    pub path: String,
    /// All its column names, in order.
    pub columns: Vec<String>,
    /// Its key columns (unique values).
    pub keys: Vec<KeyColumn>,
    /// Every column's values, as read, in column order.
    pub cells: Vec<Vec<String>>,
}

impl LookupTable {
    /// The lookup of a table read whole ([`read_columns`]) at `path`, when it has a key
    /// column. Only the cells its links can name are kept (those of its first
    /// [`VALUES_NAMED`] + 1 columns: a link names the first [`VALUES_NAMED`] other than
    /// its key): each thread linking lookups holds up to its budget of these.
    pub fn from_read(
        path: String,
        columns: Vec<String>,
        mut cells: Vec<Vec<String>>,
    ) -> Option<LookupTable> {
        let keys = key_columns(&columns, &cells);
        if keys.is_empty() {
            return None;
        }
        cells.truncate(VALUES_NAMED + 1);
        Some(LookupTable {
            path,
            columns,
            keys,
            cells,
        })
    }

    /// About the bytes it holds: its strings' lengths and headers (a key value's set
    /// entry counted as one more word). What a linking thread's budget counts.
    pub fn heap_bytes(&self) -> usize {
        const WORD: usize = std::mem::size_of::<usize>();
        let s = |v: &String| v.len() + std::mem::size_of::<String>();
        let keys: usize = self
            .keys
            .iter()
            .map(|k| s(&k.name) + k.values.iter().map(|v| s(v) + WORD).sum::<usize>())
            .sum();
        s(&self.path)
            + self.columns.iter().map(s).sum::<usize>()
            + self.cells.iter().flatten().map(s).sum::<usize>()
            + keys
    }

    /// The distinct values with letters of the columns other than `key` that a link
    /// names (the first [`VALUES_NAMED`]), in file order, at most [`LABELS_KEPT`].
    fn labels(&self, key: &str) -> Vec<String> {
        let mut seen = HashSet::new();
        self.columns
            .iter()
            .zip(&self.cells)
            .filter(|(c, _)| *c != key)
            .take(VALUES_NAMED)
            .flat_map(|(_, vals)| vals.iter())
            .map(|v| v.trim())
            .filter(|v| v.chars().any(char::is_alphabetic) && v.chars().count() <= LABEL_CHARS)
            .filter(|v| seen.insert(v.to_lowercase()))
            .take(LABELS_KEPT)
            .map(str::to_string)
            .collect()
    }
}

/// A column of a data file with the values its description keeps.
#[derive(Debug, Clone)]
pub struct SampledColumn {
    /// Column name.
    pub name: String,
    /// Sampled distinct values: the most frequent and the first examples.
    pub values: Vec<String>,
    /// Distinct values in the column, when exactly known.
    pub distinct: Option<u64>,
}

/// A data file's columns.
#[derive(Debug, Clone)]
pub struct DataFile {
    /// Lake-relative path.
    pub path: String,
    /// Its columns (of every table it holds).
    pub columns: Vec<SampledColumn>,
}

/// How a value is compared: trimmed, lowercased.
pub fn norm(v: &str) -> String {
    v.trim().to_lowercase()
}

/// A column name compared: lowercase letters and digits only.
fn name_key(n: &str) -> String {
    n.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether two column names say the same thing (`state_fips` and `FIPS`).
fn related_names(a: &str, b: &str) -> bool {
    let (a, b) = (name_key(a), name_key(b));
    !a.is_empty() && !b.is_empty() && (a == b || a.contains(&b) || b.contains(&a))
}

/// A data column as [`coverage`] compares it, prepared once per column rather than
/// once per (column, key) pair: a folder of N tables that may all be lookups compares
/// N² pairs (redoing this per pair would be a third of a 100k-file first index's CPU).
struct Sampled<'a> {
    col: &'a SampledColumn,
    /// [`name_key`] of its name.
    name: String,
    /// Its sampled values, [`norm`]ed, blanks dropped.
    values: HashSet<String>,
    /// Every value is a number.
    numeric: bool,
    /// Some value has a decimal point.
    fraction: bool,
}

impl<'a> Sampled<'a> {
    fn new(col: &'a SampledColumn) -> Sampled<'a> {
        let values: HashSet<String> = col
            .values
            .iter()
            .map(|v| norm(v))
            .filter(|v| !v.is_empty())
            .collect();
        Sampled {
            col,
            name: name_key(&col.name),
            numeric: values.iter().all(|v| v.parse::<f64>().is_ok()),
            fraction: values.iter().any(|v| v.contains('.')),
            values,
        }
    }
}

/// How well `key` holds the sampled values of a column: the number of values covered,
/// or `None` when it is not a match. Numbers (codes like FIPS, but also any count) match
/// only between columns of related names: small integers are in every numeric key.
fn coverage(s: &Sampled, key: &KeyColumn) -> Option<usize> {
    if s.values.len() < 2 {
        return None;
    }
    // More distinct values than the key has cannot be mostly translated.
    if s.col
        .distinct
        .is_some_and(|d| d as f64 * COVERAGE > key.values.len() as f64)
    {
        return None;
    }
    let covered = s.values.iter().filter(|v| key.values.contains(*v)).count();
    if (covered as f64) < COVERAGE * s.values.len() as f64 || covered < 2 {
        return None;
    }
    // Codes are whole numbers: fractions are measurements.
    if s.numeric && (s.fraction || !related_names(&s.col.name, &key.name)) {
        return None;
    }
    Some(covered)
}

/// The lookup links among the files of one folder: per (data file, lookup table), the
/// data column and key whose match covers most sampled values (a name shared by both
/// breaks ties). A file is never its own lookup, nor is a table more than half of whose
/// columns the data file has too: a lookup adds what the data lacks (`code → name`),
/// while a sibling of (nearly) the same schema — daily files of two stations sharing
/// their `station` values, two wide exports sharing a `period` column — translates
/// nothing.
pub fn match_lookups<L: Borrow<LookupTable>>(lookups: &[L], data: &[DataFile]) -> Vec<LookupLink> {
    let mut links = Vec::new();
    // Column names as numbers, so that counting the names a (data, lookup) pair shares,
    // asked of every pair, compares sorted numbers rather than hashing names (hashing
    // would be a quarter of a first index's linking).
    let mut ids: HashMap<String, u32> = HashMap::new();
    let lookups: Vec<(&LookupTable, Vec<u32>)> = lookups
        .iter()
        .map(Borrow::borrow)
        .map(|l| {
            let mut names: Vec<u32> = l
                .columns
                .iter()
                .map(|c| {
                    let n = ids.len() as u32;
                    *ids.entry(name_key(c)).or_insert(n)
                })
                .collect();
            names.sort_unstable();
            (l, names)
        })
        .collect();
    for d in data {
        let cols: Vec<Sampled> = d.columns.iter().map(Sampled::new).collect();
        // The data's names that some lookup has, each once.
        let mut names: Vec<u32> = cols
            .iter()
            .filter_map(|c| ids.get(&c.name).copied())
            .collect();
        names.sort_unstable();
        names.dedup();
        for (l, l_names) in &lookups {
            let shared = l_names
                .iter()
                .filter(|c| names.binary_search(c).is_ok())
                .count();
            if l.path == d.path || shared * 2 > l.columns.len() {
                continue;
            }
            let mut best: Option<((usize, bool), &SampledColumn, &KeyColumn)> = None;
            for col in &cols {
                for key in &l.keys {
                    let Some(covered) = coverage(col, key) else {
                        continue;
                    };
                    let rank = (covered, col.name == name_key(&key.name));
                    if best.as_ref().is_none_or(|(r, _, _)| rank > *r) {
                        best = Some((rank, col.col, key));
                    }
                }
            }
            if let Some((_, col, key)) = best {
                links.push(LookupLink {
                    data: d.path.clone(),
                    lookup: l.path.clone(),
                    column: col.name.clone(),
                    key: key.name.clone(),
                    values: l
                        .columns
                        .iter()
                        .filter(|c| **c != key.name)
                        .take(VALUES_NAMED)
                        .cloned()
                        .collect(),
                    labels: l.labels(&key.name),
                });
            }
        }
    }
    sort_links(&mut links);
    links
}

/// Links in the order [`match_lookups`] gives them: by data file, then lookup.
pub fn sort_links(links: &mut [LookupLink]) {
    links.sort_by(|a, b| (&a.data, &a.lookup).cmp(&(&b.data, &b.lookup)));
}

/// The columns of a small delimited table read whole: its header and per column every
/// value, or `None` when it cannot be read as one table of at most
/// [`LOOKUP_MAX_ROWS`] rows. `skip` lines above the header are skipped.
pub fn read_columns(
    text: &str,
    delimiter: u8,
    skip: usize,
) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let mut body = text;
    for _ in 0..skip {
        body = body.split_once('\n').map_or("", |(_, rest)| rest);
    }
    let mut r = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .from_reader(body.as_bytes());
    let header: Vec<String> = r
        .headers()
        .ok()?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let mut cols = vec![Vec::new(); header.len()];
    for (i, rec) in r.records().enumerate() {
        if i as u64 >= LOOKUP_MAX_ROWS {
            return None;
        }
        let rec = rec.ok()?;
        for (c, v) in cols.iter_mut().zip(rec.iter()) {
            c.push(v.to_string());
        }
    }
    Some((header, cols))
}

/// The key columns of a read table: those whose values are all present and distinct
/// (after [`norm`]), over at least two rows.
pub fn key_columns(header: &[String], cols: &[Vec<String>]) -> Vec<KeyColumn> {
    header
        .iter()
        .zip(cols)
        .filter_map(|(name, vals)| {
            if vals.len() < 2 {
                return None;
            }
            // Given up at the first blank or repeated value: most columns are no key.
            let mut set = HashSet::with_capacity(vals.len());
            for v in vals {
                let v = norm(v);
                if v.is_empty() || !set.insert(v) {
                    return None;
                }
            }
            Some(KeyColumn {
                name: name.clone(),
                values: set,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn states() -> LookupTable {
        let text = "code,name,region\nCA,California,West\nTX,Texas,South\nNY,New York,Northeast\nWA,Washington,West\nFL,Florida,South\n";
        let (header, cols) = read_columns(text, b',', 0).unwrap();
        LookupTable {
            path: "states.csv".into(),
            keys: key_columns(&header, &cols),
            columns: header,
            cells: cols,
        }
    }

    #[test]
    fn a_lookup_keeps_the_cells_its_links_name() {
        let text = "region,name,id,abbr,code,note\n\
                    West,California,1,CA,06,sunny\n\
                    South,Texas,2,TX,48,big\n\
                    Northeast,New York,3,NY,36,city\n\
                    West,Washington,4,WA,53,rain\n";
        let (header, cols) = read_columns(text, b',', 0).unwrap();
        let whole = LookupTable {
            path: "s.csv".into(),
            keys: key_columns(&header, &cols),
            columns: header.clone(),
            cells: cols.clone(),
        };
        let kept = LookupTable::from_read("s.csv".into(), header, cols).unwrap();
        assert_eq!(kept.cells.len(), VALUES_NAMED + 1);
        let keys: Vec<&str> = kept.keys.iter().map(|k| k.name.as_str()).collect();
        // Keys before the last cells kept, at its edge, and past it.
        assert_eq!(keys, ["name", "id", "abbr", "code", "note"]);
        for k in keys {
            assert_eq!(kept.labels(k), whole.labels(k), "{k}");
            assert!(!kept.labels(k).is_empty(), "{k}");
        }
        assert!(LookupTable::from_read(
            "n.csv".into(),
            vec!["a".into()],
            vec![vec!["x".into(), "x".into()]]
        )
        .is_none());
    }

    fn col(name: &str, values: &[&str], distinct: Option<u64>) -> SampledColumn {
        SampledColumn {
            name: name.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
            distinct,
        }
    }

    #[test]
    fn keys_are_the_unique_columns_read_whole() {
        let l = states();
        let names: Vec<&str> = l.keys.iter().map(|k| k.name.as_str()).collect();
        // `region` repeats: not a key.
        assert_eq!(names, ["code", "name"]);
        assert!(l.keys[0].values.contains("ca"));
        assert!(read_columns("k,v\n", b',', 0).is_some());
        let big = format!("k,v\n{}", "a,b\n".repeat(LOOKUP_MAX_ROWS as usize + 1));
        assert!(read_columns(&big, b',', 0).is_none());
        let titled = "Table 1: states\ncode;name\nCA;California\nTX;Texas\n";
        let (h, c) = read_columns(titled, b';', 1).unwrap();
        assert_eq!(h, ["code", "name"]);
        assert_eq!(key_columns(&h, &c).len(), 2);
    }

    #[test]
    fn a_column_of_codes_links_to_the_lookup_that_names_them() {
        let data = DataFile {
            path: "sales.csv".into(),
            columns: vec![
                col("month", &["2020-01", "2020-02"], None),
                col("state", &["CA", "TX", "ny", "WA"], Some(5)),
                col("units", &["3", "5", "9"], None),
            ],
        };
        let links = match_lookups(&[states()], &[data]);
        assert_eq!(links.len(), 1);
        let l = &links[0];
        assert_eq!(
            (l.data.as_str(), l.lookup.as_str()),
            ("sales.csv", "states.csv")
        );
        assert_eq!((l.column.as_str(), l.key.as_str()), ("state", "code"));
        assert_eq!(l.why(), "lookup: state → name, region");
    }

    #[test]
    fn weak_or_wrong_matches_link_nothing() {
        let lookups = [states()];
        let none = |c: SampledColumn| {
            match_lookups(
                &lookups,
                &[DataFile {
                    path: "d.csv".into(),
                    columns: vec![c],
                }],
            )
            .is_empty()
        };
        // One value is no evidence.
        assert!(none(col("state", &["CA"], None)));
        // Mostly other values.
        assert!(none(col("state", &["CA", "ON", "QC", "BC"], None)));
        // Far more distinct values than the key holds.
        assert!(none(col("state", &["CA", "TX", "NY"], Some(40))));
        // A sibling of the same columns is not a lookup.
        assert!(match_lookups(
            &lookups,
            &[DataFile {
                path: "states_2.csv".into(),
                columns: vec![
                    col("code", &["CA", "TX"], Some(5)),
                    col("name", &["California", "Texas"], Some(5)),
                    col("region", &["West", "South"], Some(3)),
                ],
            }]
        )
        .is_empty());
        // Nor is a near-sibling that shares most of the lookup's columns and adds one
        // (two wide exports with the same `code` key).
        assert!(match_lookups(
            &lookups,
            &[DataFile {
                path: "states_extra.csv".into(),
                columns: vec![
                    col("code", &["CA", "TX"], Some(5)),
                    col("name", &["California", "Texas"], Some(5)),
                    col("population", &["39", "30"], Some(5)),
                ],
            }]
        )
        .is_empty());
        // A file is not its own lookup.
        assert!(match_lookups(
            &lookups,
            &[DataFile {
                path: "states.csv".into(),
                columns: vec![col("code", &["CA", "TX"], Some(5))],
            }]
        )
        .is_empty());
        // Numbers match only between related names.
        let ids = {
            let (h, c) =
                read_columns("fips,county\n1,Autauga\n2,Baldwin\n3,Barbour\n", b',', 0).unwrap();
            LookupTable {
                path: "counties.csv".into(),
                keys: key_columns(&h, &c),
                columns: h,
                cells: c,
            }
        };
        let counts = DataFile {
            path: "d.csv".into(),
            columns: vec![col("children", &["1", "2", "3"], None)],
        };
        assert!(match_lookups(std::slice::from_ref(&ids), &[counts]).is_empty());
        let coded = DataFile {
            path: "d.csv".into(),
            columns: vec![col("county_fips", &["1", "3"], None)],
        };
        let links = match_lookups(&[ids], &[coded]);
        assert_eq!(links[0].why(), "lookup: county_fips → county");
    }
}
