//! [`Content`] read by hand. serde's derive for an internally tagged enum buffers the
//! whole object into an intermediate tree before it knows the variant, then reads the
//! variant from that tree: every description a search ranks would be decoded twice over
//! (`ContentVisitor::visit_map`/`visit_seq` and their allocations in a profile). Every
//! description lakestar writes has its tag first (the derive's `Serialize` writes it so),
//! and then the variant is read straight from the map; an object with `kind` elsewhere
//! (written by hand) is gathered first, as the derive would, and read by the same match.

use super::{
    ArchiveSummary, ArraySet, Content, JsonSummary, MediaInfo, Opaque, Table, TableSet, TextSummary,
};
use serde::de::{self, value::MapAccessDeserializer, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;

const KINDS: &[&str] = &[
    "table", "tables", "json", "text", "archive", "arrays", "media", "opaque",
];

/// The content of `kind` read from `d`, the object without its tag: the one list of
/// kinds both readings share.
fn read_kind<'de, D: Deserializer<'de>>(kind: &str, d: D) -> Result<Content, D::Error> {
    match kind {
        "table" => Table::deserialize(d).map(Content::Table),
        "tables" => TableSet::deserialize(d).map(Content::Tables),
        "json" => JsonSummary::deserialize(d).map(Content::Json),
        "text" => TextSummary::deserialize(d).map(Content::Text),
        "archive" => ArchiveSummary::deserialize(d).map(Content::Archive),
        "arrays" => ArraySet::deserialize(d).map(Content::Arrays),
        "media" => MediaInfo::deserialize(d).map(Content::Media),
        "opaque" => Opaque::deserialize(d).map(Content::Opaque),
        other => Err(de::Error::unknown_variant(other, KINDS)),
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Content, D::Error> {
        d.deserialize_map(ContentVisitor)
    }
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a content object with its `kind`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Content, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Err(de::Error::missing_field("kind"));
        };
        if first != "kind" {
            // Tag elsewhere: the object is gathered first, as the derive would.
            let mut all = serde_json::Map::new();
            all.insert(first, map.next_value()?);
            while let Some((k, v)) = map.next_entry::<String, serde_json::Value>()? {
                all.insert(k, v);
            }
            let kind = match all.remove("kind") {
                Some(serde_json::Value::String(k)) => k,
                Some(_) => return Err(de::Error::custom("`kind` is not a string")),
                None => return Err(de::Error::missing_field("kind")),
            };
            return read_kind(&kind, serde_json::Value::Object(all)).map_err(de::Error::custom);
        }
        let kind: String = map.next_value()?;
        read_kind(&kind, MapAccessDeserializer::new(map))
    }
}

#[cfg(test)]
mod tests {
    use crate::analyze::{describe, Content, Source};

    #[test]
    fn every_kind_reads_back_whether_its_tag_comes_first_or_not() {
        let files: &[(&str, &[u8])] = &[
            ("a.csv", b"x,y\n1,2\n3,4\n"),
            ("b.json", br#"{"k": [1, 2], "m": {"n": "v"}}"#),
            ("c.md", b"# Title\n\nSome text.\n"),
            ("d.bin", &[0u8, 1, 2, 3, 255, 254, 0, 7]),
            (
                "e.html",
                b"<table><tr><th>a</th></tr><tr><td>1</td></tr></table>",
            ),
        ];
        let mut kinds = Vec::new();
        for (path, bytes) in files {
            let d = describe(&Source::from_bytes(path, bytes.to_vec()));
            let json = serde_json::to_string(&d.content).unwrap();
            assert!(json.starts_with(r#"{"kind":"#), "tag first: {json}");
            let fast: Content = serde_json::from_str(&json).unwrap();
            assert_eq!(serde_json::to_string(&fast).unwrap(), json);
            // The tag moved last: the buffered path reads the same.
            let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
            let obj = v.as_object_mut().unwrap();
            let kind = obj.remove("kind").unwrap();
            obj.insert("kind".into(), kind.clone());
            let moved = serde_json::to_string(&v).unwrap();
            assert!(!moved.starts_with(r#"{"kind":"#), "{moved}");
            assert_eq!(serde_json::from_str::<Content>(&moved).unwrap(), fast);
            kinds.push(kind.as_str().unwrap().to_string());
        }
        kinds.sort();
        kinds.dedup();
        assert!(kinds.len() >= 4, "{kinds:?}");
        for bad in [r#"{}"#, r#"{"kind":"nope"}"#, r#"{"rows":1}"#, r#"[1]"#] {
            assert!(serde_json::from_str::<Content>(bad).is_err(), "{bad}");
        }
    }
}
