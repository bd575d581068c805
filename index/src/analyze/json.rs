//! JSON documents and JSON lines: a structure summary of key paths with their types,
//! counts, array lengths, ranges and examples.

use super::dates::{self, Day};
use super::{AnalyzeError, Analyzer, Content, Format, Source};
use crate::text_util::cut_chars;
use foldhash::{HashMap, HashSet};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::BufRead;

/// Largest JSON document parsed whole; JSON lines are streamed and have no limit.
const MAX_DOCUMENT: u64 = 256 * 1024 * 1024;
/// Key paths recorded at most; further paths are only counted.
const MAX_PATHS: usize = 300;
const EXAMPLES: usize = 3;
const DISTINCT_CAP: usize = 1000;
const VALUE_MAX_CHARS: usize = 60;

/// The structure of a JSON document or of a JSON-lines file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonSummary {
    /// JSON lines (one value per line) rather than one document.
    pub lines: bool,
    /// Values in the file: 1 for a document, the number of good lines for JSON lines.
    pub records: u64,
    /// The shape of the top level, e.g. "array of 1000 objects".
    pub root: String,
    /// Key paths in order of first appearance. `[]` stands for "every element of an
    /// array"; for JSON lines, paths are relative to each line's value.
    pub paths: Vec<JsonPath>,
    /// Distinct paths beyond the recorded ones.
    #[serde(default)]
    pub paths_truncated: u64,
    /// Lines that are not valid JSON (JSON lines only).
    #[serde(default)]
    pub bad_lines: u64,
    /// The first parse error of a bad line, with its line number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_bad_line: Option<String>,
    /// Bytes profiled, when JSON lines past the read budget were sampled: `records` is
    /// then an estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled_bytes: Option<u64>,
    /// What the document is, when it follows a known convention (GeoJSON).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Statistics of one key path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonPath {
    /// The path, e.g. `[].merchant_category_code[]`.
    pub path: String,
    /// Values seen at this path.
    pub count: u64,
    /// Value types with their counts, most frequent first.
    pub types: Vec<(String, u64)>,
    /// Shortest and longest array at this path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_len: Option<(u64, u64)>,
    /// Smallest and largest number at this path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<(f64, f64)>,
    /// Distinct scalar values (a floor when `distinct_exact` is false).
    pub distinct: u64,
    /// Whether `distinct` is exact.
    pub distinct_exact: bool,
    /// Up to three distinct scalar examples, as JSON text.
    pub examples: Vec<String>,
    /// First and last day, when every string at this path is a date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dates: Option<(String, String)>,
}

pub(crate) struct JsonAnalyzer;

impl Analyzer for JsonAnalyzer {
    fn name(&self) -> &'static str {
        "json"
    }
    fn version(&self) -> u32 {
        4
    }
    fn analyze(&self, src: &Source, format: Format) -> Result<Content, AnalyzeError> {
        let summary = if format == Format::Jsonl {
            summarize_lines(src)?
        } else {
            summarize_document(src)?
        };
        Ok(Content::Json(summary))
    }
}

#[derive(Default)]
struct PathAcc {
    count: u64,
    types: HashMap<&'static str, u64>,
    array_len: Option<(u64, u64)>,
    range: Option<(f64, f64)>,
    distinct: HashSet<String>,
    distinct_overflow: bool,
    examples: Vec<String>,
    strings: u64,
    /// Range of the date strings; None once a string that is not a date was seen.
    days: Option<(Day, Day)>,
    not_dates: bool,
}

#[derive(Default)]
struct Walker {
    order: Vec<String>,
    paths: HashMap<String, PathAcc>,
    truncated: HashSet<String>,
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn scalar_text(v: &Value) -> String {
    cut_chars(&v.to_string(), VALUE_MAX_CHARS)
}

impl Walker {
    fn visit(&mut self, path: &mut String, v: &Value) {
        if !path.is_empty() {
            self.record(path, v);
        }
        match v {
            Value::Array(items) => {
                let len = path.len();
                path.push_str("[]");
                for item in items {
                    self.visit(path, item);
                }
                path.truncate(len);
            }
            Value::Object(map) => {
                let len = path.len();
                for (k, item) in map {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(k);
                    self.visit(path, item);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }

    fn record(&mut self, path: &str, v: &Value) {
        if !self.paths.contains_key(path) {
            if self.paths.len() >= MAX_PATHS {
                if self.truncated.len() < 100_000 {
                    self.truncated.insert(path.to_string());
                }
                return;
            }
            self.order.push(path.to_string());
            self.paths.insert(path.to_string(), PathAcc::default());
        }
        let acc = self.paths.get_mut(path).expect("inserted above");
        acc.count += 1;
        *acc.types.entry(type_name(v)).or_default() += 1;
        match v {
            Value::Array(a) => {
                let n = a.len() as u64;
                acc.array_len = Some(
                    acc.array_len
                        .map_or((n, n), |(lo, hi)| (lo.min(n), hi.max(n))),
                );
            }
            Value::Object(_) | Value::Null => {}
            Value::String(text) if !acc.not_dates => {
                acc.strings += 1;
                match dates::parse(text) {
                    Some(p) => {
                        let d = p.day;
                        acc.days = Some(acc.days.map_or((d, d), |(lo, hi)| (lo.min(d), hi.max(d))));
                    }
                    None => acc.not_dates = true,
                }
                Self::scalar(acc, v);
            }
            scalar => Self::scalar(acc, scalar),
        }
    }

    fn scalar(acc: &mut PathAcc, scalar: &Value) {
        if let Some(x) = scalar.as_f64() {
            acc.range = Some(acc.range.map_or((x, x), |(lo, hi)| (lo.min(x), hi.max(x))));
        }
        let text = scalar_text(scalar);
        if acc.distinct.len() < DISTINCT_CAP {
            if acc.distinct.insert(text.clone()) && acc.examples.len() < EXAMPLES {
                acc.examples.push(text);
            }
        } else if !acc.distinct.contains(&text) {
            acc.distinct_overflow = true;
        }
    }

    fn finish(mut self) -> (Vec<JsonPath>, u64) {
        // Children right after their parent, siblings in order of first appearance.
        let first: HashMap<&str, usize> = self
            .order
            .iter()
            .enumerate()
            .map(|(i, p)| (p.as_str(), i))
            .collect();
        let tree_key = |p: &str| -> Vec<usize> {
            let mut key = Vec::new();
            let mut cur = p;
            while let Some(&i) = first.get(cur) {
                key.push(i);
                cur = parent(cur);
            }
            key.reverse();
            key
        };
        let mut keyed: Vec<(Vec<usize>, String)> = self
            .order
            .iter()
            .map(|p| (tree_key(p), p.clone()))
            .collect();
        keyed.sort();
        let paths = keyed
            .into_iter()
            .map(|(_, p)| p)
            .map(|p| {
                let acc = self.paths.remove(&p).expect("ordered paths are present");
                let mut types: Vec<(String, u64)> = acc
                    .types
                    .into_iter()
                    .map(|(t, c)| (t.to_string(), c))
                    .collect();
                types.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                JsonPath {
                    path: p,
                    count: acc.count,
                    types,
                    array_len: acc.array_len,
                    range: acc.range,
                    distinct: acc.distinct.len() as u64,
                    distinct_exact: !acc.distinct_overflow,
                    examples: acc.examples,
                    dates: match (acc.not_dates, acc.days) {
                        (false, Some((lo, hi))) => Some((lo.iso(), hi.iso())),
                        _ => None,
                    },
                }
            })
            .collect();
        (paths, self.truncated.len() as u64)
    }
}

/// The path one level up: `a[].b` → `a[]`, `a[]` → `a`, `a` → ``.
fn parent(p: &str) -> &str {
    if let Some(q) = p.strip_suffix("[]") {
        q
    } else {
        p.rfind('.').map_or("", |i| &p[..i])
    }
}

/// "array of 1000 objects", "object with 4 keys", "string".
fn root_shape(v: &Value) -> String {
    match v {
        Value::Array(items) => {
            let mut kinds: Vec<&str> = items.iter().map(type_name).collect();
            kinds.sort_unstable();
            kinds.dedup();
            let what = match kinds.as_slice() {
                [] => "values".to_string(),
                [one] => plural(one),
                many => format!("values ({})", many.join(", ")),
            };
            format!("array of {} {}", items.len(), what)
        }
        Value::Object(m) => format!("object with {} keys", m.len()),
        other => type_name(other).to_string(),
    }
}

fn plural(t: &str) -> String {
    match t {
        "boolean" => "booleans".into(),
        "null" => "nulls".into(),
        "array" => "arrays".into(),
        "object" => "objects".into(),
        "string" => "strings".into(),
        "integer" => "integers".into(),
        "float" => "floats".into(),
        t => t.into(),
    }
}

fn summarize_document(src: &Source) -> Result<JsonSummary, AnalyzeError> {
    if src.size() > MAX_DOCUMENT {
        return Err(AnalyzeError::Malformed(format!(
            "JSON document of {} bytes is over the {} MiB whole-document limit; store it as JSON lines to have it profiled",
            src.size(),
            MAX_DOCUMENT >> 20
        )));
    }
    let value: Value = match src.bytes() {
        Some(b) => serde_json::from_slice(b.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(b)),
        None => serde_json::from_reader(src.reader()?),
    }
    .map_err(|e| AnalyzeError::Malformed(format!("invalid JSON: {e}")))?;
    Ok(summarize_value(&value))
}

/// The structure summary of one parsed document; YAML, TOML and XML analyzers convert
/// their documents to a JSON value and describe them through this.
pub(crate) fn summarize_value(value: &Value) -> JsonSummary {
    let mut w = Walker::default();
    w.visit(&mut String::new(), value);
    let (paths, truncated) = w.finish();
    JsonSummary {
        lines: false,
        records: 1,
        root: root_shape(value),
        paths,
        paths_truncated: truncated,
        bad_lines: 0,
        first_bad_line: None,
        sampled_bytes: None,
        notes: geojson_notes(value),
    }
}

/// A GeoJSON FeatureCollection: feature count, geometry types, property names, bbox.
fn geojson_notes(v: &Value) -> Vec<String> {
    let Some(obj) = v.as_object() else {
        return Vec::new();
    };
    if obj.get("type").and_then(Value::as_str) != Some("FeatureCollection") {
        return Vec::new();
    }
    let Some(features) = obj.get("features").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut geometries: std::collections::BTreeMap<&str, u64> = Default::default();
    let mut props: Vec<&str> = Vec::new();
    for f in features {
        let g = f
            .pointer("/geometry/type")
            .and_then(Value::as_str)
            .unwrap_or("null");
        *geometries.entry(g).or_default() += 1;
        if let Some(p) = f.get("properties").and_then(Value::as_object) {
            for k in p.keys() {
                if !props.contains(&k.as_str()) && props.len() < 30 {
                    props.push(k);
                }
            }
        }
    }
    let geoms: Vec<String> = geometries.iter().map(|(g, n)| format!("{g} {n}")).collect();
    let mut notes = vec![format!(
        "GeoJSON FeatureCollection: {} features ({})",
        features.len(),
        geoms.join(", ")
    )];
    if !props.is_empty() {
        notes.push(format!("properties: {}", props.join(", ")));
    }
    if let Some(b) = obj.get("bbox").and_then(Value::as_array) {
        notes.push(format!("bbox: {}", Value::Array(b.clone())));
    }
    notes
}

fn summarize_lines(src: &Source) -> Result<JsonSummary, AnalyzeError> {
    let mut w = Walker::default();
    let mut records = 0u64;
    let mut bad = 0u64;
    let mut first_bad = None;
    let mut kinds: Vec<&'static str> = Vec::new();
    // Past the read budget, a sample of whole lines stands for the file.
    let sample = src.sample()?;
    let inner: Box<dyn std::io::Read + Send + '_> = match &sample {
        Some(s) => Box::new(std::io::Cursor::new(&s.bytes[..])),
        None => src.reader()?,
    };
    let reader = std::io::BufReader::new(inner);
    for (i, line) in reader.split(b'\n').enumerate() {
        let line = line?;
        let t = line.trim_ascii();
        if t.is_empty() {
            continue;
        }
        match serde_json::from_slice::<Value>(t) {
            Ok(v) => {
                records += 1;
                let k = type_name(&v);
                if !kinds.contains(&k) {
                    kinds.push(k);
                }
                w.visit(&mut String::new(), &v);
            }
            Err(e) => {
                bad += 1;
                if first_bad.is_none() {
                    first_bad = Some(format!("line {}: {e}", i + 1));
                }
            }
        }
    }
    if records == 0 {
        return Err(AnalyzeError::Malformed(format!(
            "no valid JSON line ({})",
            first_bad.unwrap_or_else(|| "file is blank".into())
        )));
    }
    kinds.sort_unstable();
    let (mut paths, truncated) = w.finish();
    let sampled_bytes = sample.as_ref().map(|s| s.bytes.len() as u64);
    if let Some(read) = sampled_bytes {
        let ratio = src.size() as f64 / read.max(1) as f64;
        let scale = |n: u64| (n as f64 * ratio).round() as u64;
        records = scale(records);
        bad = scale(bad);
        // Per-path figures come from the sample too: counts scaled, distinct counts floors.
        for p in &mut paths {
            p.count = scale(p.count);
            for t in &mut p.types {
                t.1 = scale(t.1);
            }
            p.distinct_exact = false;
        }
    }
    Ok(JsonSummary {
        lines: true,
        records,
        root: format!(
            "{}{records} lines of {}",
            if sampled_bytes.is_some() { "~" } else { "" },
            kinds
                .iter()
                .map(|k| plural(k))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        paths,
        paths_truncated: truncated,
        bad_lines: bad,
        first_bad_line: first_bad,
        sampled_bytes,
        notes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str, format: Format) -> JsonSummary {
        let src = Source::from_bytes("x.json", text.as_bytes().to_vec());
        match JsonAnalyzer.analyze(&src, format).unwrap() {
            Content::Json(s) => s,
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn paths_types_and_lengths() {
        let s = summary(
            r#"[{"id":1,"tags":["a","b"],"x":null},{"id":2,"tags":[],"x":1.5}]"#,
            Format::Json,
        );
        assert_eq!(s.root, "array of 2 objects");
        let p: Vec<&str> = s.paths.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(p, ["[]", "[].id", "[].tags", "[].tags[]", "[].x"]);
        let tags = &s.paths[2];
        assert_eq!(tags.array_len, Some((0, 2)));
        let x = &s.paths[4];
        assert_eq!(x.types, vec![("float".into(), 1), ("null".into(), 1)]);
        assert_eq!(s.paths[1].range, Some((1.0, 2.0)));
    }

    #[test]
    fn date_valued_keys_have_a_range() {
        let s = summary(
            r#"[{"ts":"2019-03-01T10:00:00Z","v":"x"},{"ts":"2019-03-04T00:00:00Z","v":"2019-01-01"}]"#,
            Format::Json,
        );
        let ts = s.paths.iter().find(|p| p.path == "[].ts").unwrap();
        assert_eq!(ts.dates, Some(("2019-03-01".into(), "2019-03-04".into())));
        let v = s.paths.iter().find(|p| p.path == "[].v").unwrap();
        assert_eq!(v.dates, None);
    }

    #[test]
    fn large_json_lines_are_sampled() {
        let text: String = (0..50_000)
            .map(|i| format!("{{\"id\":{i},\"ok\":true}}\n"))
            .collect();
        let src = Source::from_bytes("e.jsonl", text.into_bytes()).with_budget(Some(64 * 1024));
        let Content::Json(s) = JsonAnalyzer.analyze(&src, Format::Jsonl).unwrap() else {
            panic!()
        };
        assert!(s.sampled_bytes.is_some());
        let err = (s.records as f64 - 50_000.0).abs() / 50_000.0;
        assert!(err < 0.05, "{}", s.records);
        // Per-path counts are scaled from the sample, distinct counts are floors.
        let id = s.paths.iter().find(|p| p.path == "id").unwrap();
        assert!(!id.distinct_exact);
        assert!(
            (id.count as f64 - 50_000.0).abs() / 50_000.0 < 0.05,
            "{}",
            id.count
        );
        let text = crate::analyze::render::render(
            "e.jsonl",
            &crate::analyze::Description {
                format: Format::Jsonl,
                size: 0,
                analyzer: String::new(),
                content: Content::Json(s.clone()),
                time_coverage: None,
                notes: Vec::new(),
                error: None,
                rules: Default::default(),
            },
            Default::default(),
        );
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("id "))
            .unwrap();
        assert!(line.contains("×~") && line.contains("~0 … ~"), "{line}");
        let Content::Json(s) = JsonAnalyzer
            .analyze(&src.with_budget(None), Format::Jsonl)
            .unwrap()
        else {
            panic!()
        };
        assert_eq!((s.records, s.sampled_bytes), (50_000, None));
    }

    #[test]
    fn geojson_feature_collections_are_named() {
        let s = summary(
            r#"{"type":"FeatureCollection","features":[
                {"type":"Feature","geometry":{"type":"Point","coordinates":[4.9,52.4]},"properties":{"name":"a","pop":1}},
                {"type":"Feature","geometry":{"type":"Point","coordinates":[5.1,52.1]},"properties":{"name":"b"}},
                {"type":"Feature","geometry":{"type":"Polygon","coordinates":[]},"properties":{"name":"c"}}]}"#,
            Format::Json,
        );
        assert_eq!(
            s.notes[0],
            "GeoJSON FeatureCollection: 3 features (Point 2, Polygon 1)"
        );
        assert_eq!(s.notes[1], "properties: name, pop");
        assert!(s
            .paths
            .iter()
            .any(|p| p.path == "features[].properties.name"));
    }

    #[test]
    fn json_lines_count_bad_lines() {
        let s = summary("{\"a\":1}\n{\"a\":\"x\"}\nnot json\n", Format::Jsonl);
        assert_eq!(s.records, 2);
        assert_eq!(s.bad_lines, 1);
        assert!(s.first_bad_line.unwrap().starts_with("line 3"));
    }

    #[test]
    fn malformed_document_is_an_error() {
        let src = Source::from_bytes("x.json", b"{\"a\": [1, 2".to_vec());
        assert!(JsonAnalyzer.analyze(&src, Format::Json).is_err());
    }
}
