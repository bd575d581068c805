//! YAML, TOML and XML: each document is parsed, converted to a JSON value and described
//! like a JSON document ([`json::summarize_value`]), so key paths read the same in every
//! structure format.
//!
//! The conversions:
//!
//! - **YAML**: mappings become objects, sequences arrays, scalars keep their YAML type.
//!   Anchors and aliases are expanded and `<<` merge keys applied; tags (`!Ref x`) are
//!   dropped for the tagged value. Keys that are not strings are written as their JSON
//!   text (`1`, `true`, `["a","b"]`). Non-finite floats become the strings `.nan`, `.inf`,
//!   `-.inf`. A file of several documents (`---`) is described as an array of documents
//!   (paths start with `[]`), with `records` the number of documents.
//! - **TOML**: tables become objects, arrays (and arrays of tables) arrays; dates and
//!   times become strings in TOML's own notation.
//! - **XML**: see [`xml`]: the document is an object keyed by the root element's tag,
//!   e.g. `catalog.book[].@id`, `catalog.book[].title`.
//!
//! Limits: input above [`MAX_INPUT`] is refused with an error naming the limit, and
//! nesting deeper than [`MAX_DEPTH`] is an error (YAML's parser stops at the same
//! depth), so deeply nested input never exhausts the stack.

mod xml;

use super::json::summarize_value;
use super::{AnalyzeError, Analyzer, Content, Format, Source};
use serde::Deserialize;
use serde_json::{Map, Number, Value};

/// Largest YAML, TOML or XML file parsed: the whole document is held as a tree.
pub const MAX_INPUT: u64 = 16 * 1024 * 1024;
/// Deepest nesting accepted, in objects and arrays (XML: elements).
pub const MAX_DEPTH: usize = 128;

/// Describes YAML, TOML and XML documents as JSON structure summaries.
pub(crate) struct StructuredAnalyzer;

impl Analyzer for StructuredAnalyzer {
    fn name(&self) -> &'static str {
        "structured"
    }
    fn version(&self) -> u32 {
        2
    }
    fn analyze(&self, src: &Source, format: Format) -> Result<Content, AnalyzeError> {
        let bytes = read_capped(src, format)?;
        let summary = match format {
            Format::Yaml => {
                let docs = yaml_documents(utf8(&bytes, format)?)?;
                let n = docs.len();
                if n > 1 {
                    let mut s = summarize_value(&Value::Array(docs));
                    s.records = n as u64;
                    s.root = format!("{n} documents, read as an {}", s.root);
                    s
                } else {
                    summarize_value(&docs.into_iter().next().unwrap_or(Value::Null))
                }
            }
            Format::Toml => summarize_value(&toml_value(utf8(&bytes, format)?)?),
            Format::Xml => summarize_value(&xml::to_value(&bytes)?),
            other => {
                return Err(AnalyzeError::Malformed(format!(
                    "{} is not a structure format (YAML, TOML, XML)",
                    other.human()
                )))
            }
        };
        Ok(Content::Json(summary))
    }
}

fn too_large(format: Format, size: u64) -> AnalyzeError {
    AnalyzeError::Malformed(format!(
        "{} file of {size} bytes is over the {} MiB limit for structure formats",
        format.human(),
        MAX_INPUT >> 20
    ))
}

/// The whole content, refusing files over [`MAX_INPUT`].
fn read_capped(src: &Source, format: Format) -> Result<Vec<u8>, AnalyzeError> {
    if src.size() > MAX_INPUT {
        return Err(too_large(format, src.size()));
    }
    // The file may have grown since it was listed: the cap holds whatever the size said.
    let (bytes, cut) = src.read_up_to(MAX_INPUT as usize)?;
    if cut {
        return Err(too_large(format, src.size().max(MAX_INPUT + 1)));
    }
    Ok(bytes)
}

/// YAML and TOML are UTF-8 text (TOML by definition; UTF-16 YAML is detected as binary).
fn utf8(bytes: &[u8], format: Format) -> Result<&str, AnalyzeError> {
    let b = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(b).map_err(|e| {
        AnalyzeError::Malformed(format!(
            "{} is not valid UTF-8 (byte {})",
            format.human(),
            e.valid_up_to()
        ))
    })
}

/// A parser message on one line: TOML errors carry a multi-line source excerpt.
fn one_line(msg: &str) -> String {
    let mut lines = msg.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("").to_string();
    // The excerpt lines start with a line number or a gutter; the explanation does not.
    let last = lines.rfind(|l| {
        !l.starts_with('|')
            && !l.starts_with('^')
            && !l.split('|').next().is_some_and(|n| {
                let n = n.trim();
                !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit())
            })
    });
    match last {
        Some(l) if l != first => format!("{first}: {l}"),
        _ => first,
    }
}

// YAML: `serde_yaml` is deprecated; `yaml_serde` is its continuation maintained by the YAML
// organization (same parser, API and safety limits: recursion depth 128, alias expansion
// budget against "billion laughs"), where `serde_norway` and `serde_yaml_ng` have had no
// release for a long time and `yaml-rust2` has no serde layer nor alias budget.

/// Every document of a YAML stream, converted to JSON values.
fn yaml_documents(text: &str) -> Result<Vec<Value>, AnalyzeError> {
    let bad = |e: yaml_serde::Error| AnalyzeError::Malformed(format!("invalid YAML: {e}"));
    let mut docs = Vec::new();
    for de in yaml_serde::Deserializer::from_str(text) {
        let mut v = yaml_serde::Value::deserialize(de).map_err(bad)?;
        v.apply_merge().map_err(bad)?;
        docs.push(yaml_to_json(v, 0)?);
    }
    Ok(docs)
}

fn too_deep() -> AnalyzeError {
    AnalyzeError::Malformed(format!("nesting deeper than {MAX_DEPTH} levels"))
}

/// The parser already stops at 128 levels; the depth check keeps this recursion bounded
/// whatever the parser allows.
fn yaml_to_json(v: yaml_serde::Value, depth: usize) -> Result<Value, AnalyzeError> {
    use yaml_serde::Value as Y;
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    Ok(match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                n.as_f64()
                    .and_then(Number::from_f64)
                    .map_or_else(|| Value::String(n.to_string()), Value::Number)
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(
            items
                .into_iter()
                .map(|i| yaml_to_json(i, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Y::Mapping(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let key = match k {
                    Y::String(s) => s,
                    other => match yaml_to_json(other, depth + 1)? {
                        Value::String(s) => s,
                        j => j.to_string(),
                    },
                };
                out.insert(key, yaml_to_json(v, depth + 1)?);
            }
            Value::Object(out)
        }
        Y::Tagged(t) => yaml_to_json(t.value, depth)?,
    })
}

/// A TOML document as a JSON object.
fn toml_value(text: &str) -> Result<Value, AnalyzeError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        AnalyzeError::Malformed(format!("invalid TOML: {}", one_line(&e.to_string())))
    })?;
    toml_table(table, 0)
}

fn toml_table(t: toml::Table, depth: usize) -> Result<Value, AnalyzeError> {
    let mut out = Map::new();
    for (k, v) in t {
        out.insert(k, toml_to_json(v, depth + 1)?);
    }
    Ok(Value::Object(out))
}

fn toml_to_json(v: toml::Value, depth: usize) -> Result<Value, AnalyzeError> {
    use toml::Value as T;
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    Ok(match v {
        T::String(s) => Value::String(s),
        T::Integer(i) => Value::from(i),
        T::Float(f) => {
            Number::from_f64(f).map_or_else(|| Value::String(f.to_string()), Value::Number)
        }
        T::Boolean(b) => Value::Bool(b),
        T::Datetime(d) => Value::String(d.to_string()),
        T::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|i| toml_to_json(i, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        T::Table(t) => toml_table(t, depth)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{describe, JsonPath, JsonSummary};

    pub(super) fn summary(name: &str, text: &str, format: Format) -> JsonSummary {
        let src = Source::from_bytes(name, text.as_bytes().to_vec());
        match StructuredAnalyzer.analyze(&src, format) {
            Ok(Content::Json(s)) => s,
            other => panic!("{other:?}"),
        }
    }

    pub(super) fn path<'a>(s: &'a JsonSummary, p: &str) -> &'a JsonPath {
        s.paths
            .iter()
            .find(|x| x.path == p)
            .unwrap_or_else(|| panic!("no path {p} in {:?}", s.paths))
    }

    pub(super) fn error(name: &str, bytes: &[u8], format: Format) -> String {
        let src = Source::from_bytes(name, bytes.to_vec());
        match StructuredAnalyzer.analyze(&src, format) {
            Err(e) => e.to_string(),
            Ok(c) => panic!("expected an error, got {c:?}"),
        }
    }

    pub(super) const CONFIG: &str = "\
service: billing
version: 3
debug: false
ratio: 0.25
defaults: &defaults
  retries: 3
  timeout_s: 30
databases:
  - name: main
    port: 5432
    replicas: [db1, db2]
    <<: *defaults
  - name: audit
    port: 5433
    replicas: []
    timeout_s: 60
";

    #[test]
    fn yaml_config_paths_types_and_merges() {
        let s = summary("c.yaml", CONFIG, Format::Yaml);
        assert_eq!(s.records, 1);
        assert_eq!(s.root, "object with 6 keys");
        assert_eq!(path(&s, "service").examples, ["\"billing\""]);
        assert_eq!(path(&s, "version").types, [("integer".to_string(), 1)]);
        assert_eq!(path(&s, "debug").types, [("boolean".to_string(), 1)]);
        assert_eq!(path(&s, "ratio").types, [("float".to_string(), 1)]);
        let dbs = path(&s, "databases");
        assert_eq!(dbs.array_len, Some((2, 2)));
        let port = path(&s, "databases[].port");
        assert_eq!(port.count, 2);
        assert_eq!(port.range, Some((5432.0, 5433.0)));
        assert_eq!(path(&s, "databases[].replicas").array_len, Some((0, 2)));
        assert_eq!(
            path(&s, "databases[].replicas[]").examples,
            ["\"db1\"", "\"db2\""]
        );
        // The merge key brought `retries` into the first database only; the alias
        // target itself is still described at its own place.
        assert_eq!(path(&s, "databases[].retries").count, 1);
        assert_eq!(path(&s, "databases[].timeout_s").range, Some((30.0, 60.0)));
        assert_eq!(path(&s, "defaults.retries").count, 1);
        assert!(!s.paths.iter().any(|p| p.path.contains("<<")));
    }

    #[test]
    fn yaml_multi_document_is_an_array_of_documents() {
        let text = "---\nkind: Service\nname: a\n---\nkind: Deployment\nname: b\nreplicas: 2\n...\n---\nkind: Service\nname: c\n";
        let s = summary("k8s.yml", text, Format::Yaml);
        assert_eq!(s.records, 3);
        assert_eq!(s.root, "3 documents, read as an array of 3 objects");
        let kind = path(&s, "[].kind");
        assert_eq!(kind.count, 3);
        assert_eq!(kind.distinct, 2);
        assert_eq!(path(&s, "[].replicas").count, 1);
    }

    #[test]
    fn yaml_odd_keys_and_values() {
        let s = summary(
            "x.yaml",
            "1: one\ntrue: yes\n[a, b]: pair\nnan: .nan\nref: !Ref other\n",
            Format::Yaml,
        );
        let p: Vec<&str> = s.paths.iter().map(|p| p.path.as_str()).collect();
        assert!(p.contains(&"1") && p.contains(&"true") && p.contains(&"[\"a\",\"b\"]"));
        assert_eq!(path(&s, "nan").examples, ["\".nan\""]);
        assert_eq!(path(&s, "ref").examples, ["\"other\""]);
    }

    #[test]
    fn yaml_malformed_is_an_error() {
        let e = error("bad.yaml", b"a: [1, 2\nb: {c\n", Format::Yaml);
        assert!(e.starts_with("invalid YAML"), "{e}");
        let e = error("bad.yaml", b"a: 1\n\xFF\xFEb: 2\n", Format::Yaml);
        assert!(e.contains("not valid UTF-8"), "{e}");
        let e = error("bad.yaml", b"a: &x 1\nb: *y\n", Format::Yaml);
        assert!(e.contains("unknown anchor"), "{e}");
    }

    #[test]
    fn yaml_alias_bomb_is_refused() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let prev = (b'a' + i - 1) as char;
            let cur = (b'a' + i) as char;
            let refs = vec![format!("*{prev}"); 10].join(", ");
            text.push_str(&format!("{cur}: &{cur} [{refs}]\n"));
        }
        let e = error("bomb.yaml", text.as_bytes(), Format::Yaml);
        assert!(e.contains("repetition limit"), "{e}");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        let e = error("deep.yaml", deep.as_bytes(), Format::Yaml);
        assert!(e.contains("recursion limit"), "{e}");
        let deep = format!("a = {}{}", "[".repeat(10_000), "]".repeat(10_000));
        let e = error("deep.toml", deep.as_bytes(), Format::Toml);
        assert!(e.starts_with("invalid TOML"), "{e}");
        // Within the limit, nesting is fine.
        let ok = format!("a = {}1{}", "[".repeat(50), "]".repeat(50));
        let s = summary("ok.toml", &ok, Format::Toml);
        assert_eq!(s.paths.len(), 51);
    }

    pub(super) const INVENTORY: &str = r#"
title = "inventory"
updated = 2024-03-01T10:00:00Z

[owner]
name = "Ada"
dob = 1815-12-10

[[item]]
sku = "A-1"
price = 9.5
tags = ["new", "sale"]

[[item]]
sku = "B-2"
price = 12
tags = []

[item.dimensions]
w = 3
h = 4
"#;

    #[test]
    fn toml_tables_and_arrays_of_tables() {
        let s = summary("inv.toml", INVENTORY, Format::Toml);
        assert_eq!(s.root, "object with 4 keys");
        assert_eq!(path(&s, "owner").types, [("object".to_string(), 1)]);
        assert_eq!(path(&s, "owner.dob").examples, ["\"1815-12-10\""]);
        assert_eq!(path(&s, "updated").examples, ["\"2024-03-01T10:00:00Z\""]);
        assert_eq!(path(&s, "item").array_len, Some((2, 2)));
        let sku = path(&s, "item[].sku");
        assert_eq!(sku.count, 2);
        assert_eq!(sku.examples, ["\"A-1\"", "\"B-2\""]);
        let price = path(&s, "item[].price");
        assert_eq!(
            price.types,
            [("float".to_string(), 1), ("integer".to_string(), 1)]
        );
        assert_eq!(price.range, Some((9.5, 12.0)));
        // The sub-table belongs to the last array element only.
        assert_eq!(path(&s, "item[].dimensions.w").count, 1);
        assert_eq!(path(&s, "item[].tags[]").count, 2);
    }

    #[test]
    fn toml_malformed_is_an_error_on_one_line() {
        let e = error("bad.toml", b"a = 1\nb = \n", Format::Toml);
        assert!(e.starts_with("invalid TOML"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = error("dup.toml", b"a = 1\na = 2\n", Format::Toml);
        assert!(e.starts_with("invalid TOML"), "{e}");
    }

    #[test]
    fn oversized_input_is_refused_with_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.yaml");
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(MAX_INPUT + 1).unwrap();
        let src = Source::from_file(&p, MAX_INPUT + 1).unwrap();
        let e = StructuredAnalyzer
            .analyze(&src, Format::Yaml)
            .unwrap_err()
            .to_string();
        assert!(e.contains("16 MiB limit"), "{e}");
    }

    #[test]
    fn detection_and_registry_route_here() {
        for (name, text, format) in [
            ("c.yaml", "a: 1\n", Format::Yaml),
            ("c.yml", "{a: 1}\n", Format::Yaml),
            ("c.toml", "[a]\nb = 1\n", Format::Toml),
            ("c.xml", "<a><b>1</b></a>", Format::Xml),
            ("feed", "<?xml version=\"1.0\"?>\n<a/>", Format::Xml),
        ] {
            let d = describe(&Source::from_bytes(name, text.as_bytes().to_vec()));
            assert_eq!(d.format, format, "{name}");
            assert_eq!(d.analyzer, "structured@2", "{name}");
            assert!(d.error.is_none(), "{name}: {:?}", d.error);
            assert!(matches!(d.content, Content::Json(_)), "{name}");
        }
    }
}
