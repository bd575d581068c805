//! [`Content`] read by hand. serde's derive for an internally tagged enum buffers the
//! whole object into an intermediate tree before it knows the variant, then reads the
//! variant from that tree: every description a search ranks was decoded twice over
//! (`ContentVisitor::visit_map`/`visit_seq` and their allocations in its profile). Every
//! description lakestar writes has its tag first (the derive's `Serialize` writes it so),
//! and then the variant is read straight from the map; an object with `kind` elsewhere
//! (written by hand) takes the buffered path, so both read the same.

use super::{
    ArchiveSummary, ArraySet, Content, JsonSummary, MediaInfo, Opaque, Table, TableSet, TextSummary,
};
use serde::de::{self, value::MapAccessDeserializer, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// The derive's reading, for objects whose tag is not first.
#[derive(Deserialize)]
#[serde(remote = "Content", tag = "kind", rename_all = "lowercase")]
enum Buffered {
    Table(Table),
    Tables(TableSet),
    Json(JsonSummary),
    Text(TextSummary),
    Archive(ArchiveSummary),
    Arrays(ArraySet),
    Media(MediaInfo),
    Opaque(Opaque),
}

const KINDS: &[&str] = &[
    "table", "tables", "json", "text", "archive", "arrays", "media", "opaque",
];

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
            let mut all = serde_json::Map::new();
            all.insert(first, map.next_value()?);
            while let Some((k, v)) = map.next_entry::<String, serde_json::Value>()? {
                all.insert(k, v);
            }
            return Buffered::deserialize(serde_json::Value::Object(all))
                .map_err(de::Error::custom);
        }
        let kind: String = map.next_value()?;
        let rest = MapAccessDeserializer::new(map);
        match kind.as_str() {
            "table" => Table::deserialize(rest).map(Content::Table),
            "tables" => TableSet::deserialize(rest).map(Content::Tables),
            "json" => JsonSummary::deserialize(rest).map(Content::Json),
            "text" => TextSummary::deserialize(rest).map(Content::Text),
            "archive" => ArchiveSummary::deserialize(rest).map(Content::Archive),
            "arrays" => ArraySet::deserialize(rest).map(Content::Arrays),
            "media" => MediaInfo::deserialize(rest).map(Content::Media),
            "opaque" => Opaque::deserialize(rest).map(Content::Opaque),
            other => Err(de::Error::unknown_variant(other, KINDS)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Buffered;
    use crate::analyze::{describe, Content, Source};

    /// `json` read by the derive.
    fn derived(json: &str) -> Content {
        Buffered::deserialize(&mut serde_json::Deserializer::from_str(json)).unwrap()
    }

    #[test]
    fn every_kind_reads_as_the_derive_reads_it_whether_its_tag_comes_first_or_not() {
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
            assert_eq!(fast, derived(&json));
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
