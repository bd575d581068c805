//! XML to a JSON value, so that an XML document is described by the JSON summarizer.
//!
//! The mapping, chosen so that key paths are predictable:
//!
//! - The document is an object with one key, the root element's tag: `catalog`. Several
//!   top-level elements (not well-formed, but seen in concatenated files) are its keys.
//! - An element with neither attributes nor child elements is its text
//!   (`<title>Rust</title>` → `"Rust"`), or `null` when it has none (`<br/>`).
//! - Any other element is an object: each attribute under `@name`, each child element
//!   under its tag, and its own text, if any, under `#text`.
//! - Siblings with the same tag become an array under that tag, so three `<book>` give
//!   `catalog.book[]` and its fields `catalog.book[].@id`, `catalog.book[].title`; a lone
//!   `<book>` gives `catalog.book` (an object), as in other XML-to-JSON conventions.
//! - Text and attribute values are typed the way a reader would: `true`/`false` become
//!   booleans, integers without leading zeros (`42`, `-7`, not `007`) and decimals
//!   (`3.25`, `1e-3`) numbers, everything else stays a string.
//! - Tags keep their namespace prefix (`gml:pos`); comments, processing instructions and
//!   the DOCTYPE are skipped. Character references and the five predefined entities are
//!   resolved; other entities are kept as written (`&nbsp;`), never expanded.
//! - Text segments around child elements are trimmed and joined by one space.
//!
//! The declared encoding (`<?xml … encoding="ISO-8859-1"?>`) or a byte order mark is
//! honoured; undecodable bytes become U+FFFD. Elements nested deeper than
//! [`MAX_DEPTH`] and documents of more than [`MAX_ELEMENTS`] elements are errors.

use super::{AnalyzeError, MAX_DEPTH};
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use serde_json::{Map, Number, Value};

/// Most elements converted: each becomes a JSON node, and a 16 MiB file of tiny elements
/// would otherwise build a tree of several GiB.
pub const MAX_ELEMENTS: usize = 1_000_000;

fn malformed(msg: impl std::fmt::Display) -> AnalyzeError {
    AnalyzeError::Malformed(format!("invalid XML: {msg}"))
}

/// An element being read.
struct Open {
    tag: String,
    attrs: Vec<(String, String)>,
    children: Vec<(String, Value)>,
    /// Finished text segments, trimmed.
    text: String,
    /// The segment being read (since the last child element).
    seg: String,
}

impl Open {
    fn new(tag: String, attrs: Vec<(String, String)>) -> Self {
        Open {
            tag,
            attrs,
            children: Vec::new(),
            text: String::new(),
            seg: String::new(),
        }
    }

    fn flush_text(&mut self) {
        let t = self.seg.trim();
        if !t.is_empty() {
            if !self.text.is_empty() {
                self.text.push(' ');
            }
            self.text.push_str(t);
        }
        self.seg.clear();
    }

    fn into_value(mut self) -> Value {
        self.flush_text();
        if self.attrs.is_empty() && self.children.is_empty() {
            return if self.text.is_empty() {
                Value::Null
            } else {
                scalar(&self.text)
            };
        }
        let mut m = Map::new();
        for (k, v) in self.attrs {
            m.insert(format!("@{k}"), scalar(&v));
        }
        for (tag, v) in self.children {
            // Element values are never arrays, so an array here is a group of siblings.
            match m.get_mut(&tag) {
                None => {
                    m.insert(tag, v);
                }
                Some(Value::Array(group)) => group.push(v),
                Some(first) => {
                    let first = std::mem::take(first);
                    m.insert(tag, Value::Array(vec![first, v]));
                }
            }
        }
        if !self.text.is_empty() {
            m.insert("#text".into(), scalar(&self.text));
        }
        Value::Object(m)
    }
}

/// `true`, `false`, integers and decimals as JSON scalars; anything else as a string.
fn scalar(s: &str) -> Value {
    match s {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    let digits = s.strip_prefix('-').unwrap_or(s);
    let int_len = digits.bytes().take_while(u8::is_ascii_digit).count();
    // Leading zeros mark codes (zip codes, identifiers), not quantities.
    let int_ok = int_len > 0 && !(int_len > 1 && digits.starts_with('0'));
    if !int_ok {
        return Value::String(s.to_string());
    }
    let rest = &digits[int_len..];
    if rest.is_empty() {
        if let Ok(i) = s.parse::<i64>() {
            return Value::from(i);
        }
    } else if is_fraction_or_exponent(rest) {
        if let Some(n) = s.parse::<f64>().ok().and_then(Number::from_f64) {
            return Value::Number(n);
        }
    }
    Value::String(s.to_string())
}

/// `.5`, `.5e3`, `e-3`: what may follow the integer part of a decimal.
fn is_fraction_or_exponent(rest: &str) -> bool {
    let mut r = rest;
    if let Some(f) = r.strip_prefix('.') {
        let n = f.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        r = &f[n..];
    }
    if let Some(e) = r.strip_prefix(['e', 'E']) {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        return !e.is_empty() && e.bytes().all(|c| c.is_ascii_digit());
    }
    r.is_empty()
}

/// The encoding named in the XML declaration, if any.
fn declared_encoding(bytes: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    let head = &bytes[..bytes.len().min(256)];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    if !head.starts_with(b"<?xml") {
        return None;
    }
    let end = memchr::memmem::find(head, b"?>")?;
    let decl = &head[..end];
    let at = memchr::memmem::find(decl, b"encoding")?;
    let rest = decl[at + b"encoding".len()..].trim_ascii_start();
    let rest = rest.strip_prefix(b"=")?.trim_ascii_start();
    let quote = *rest.first()?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let label = rest.get(1..)?;
    let len = memchr::memchr(quote, label)?;
    encoding_rs::Encoding::for_label(&label[..len])
}

/// Decode by byte order mark, else declaration, else UTF-8. A declared UTF-16 on bytes
/// that reached here (no NUL bytes) is a wrong declaration: read them as UTF-8.
fn decode(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    let declared = declared_encoding(bytes).map_or(encoding_rs::UTF_8, |e| e.output_encoding());
    declared.decode(bytes).0
}

fn start(e: &BytesStart<'_>) -> Result<Open, AnalyzeError> {
    let tag = e.name().as_ref().to_string();
    let mut attrs = Vec::new();
    for a in e.attributes() {
        let a = a.map_err(malformed)?;
        let v = a
            .normalized_value(XmlVersion::Implicit1_0)
            .map_or_else(|_| a.value.to_string(), |v| v.into_owned());
        attrs.push((a.key.as_ref().to_string(), v));
    }
    Ok(Open::new(tag, attrs))
}

/// Parse `bytes` as XML and convert it as the module doc says.
pub fn to_value(bytes: &[u8]) -> Result<Value, AnalyzeError> {
    let text = decode(bytes);
    let mut reader = Reader::from_str(&text);
    // The document itself is the bottom of the stack: its children are the root elements.
    let mut stack = vec![Open::new(String::new(), Vec::new())];
    let mut elements = 0usize;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| malformed(format_args!("{e} (at byte {})", reader.error_position())))?;
        // The document pseudo-element is never popped: the stack is never empty.
        let depth = stack.len();
        let Some(top) = stack.last_mut() else {
            return Err(malformed("unbalanced elements"));
        };
        match event {
            Event::Start(e) => {
                elements += 1;
                if depth > MAX_DEPTH {
                    return Err(AnalyzeError::Malformed(format!(
                        "XML elements nested deeper than {MAX_DEPTH} levels"
                    )));
                }
                top.flush_text();
                stack.push(start(&e)?);
            }
            Event::Empty(e) => {
                elements += 1;
                top.flush_text();
                let el = start(&e)?;
                top.children.push((el.tag.clone(), el.into_value()));
            }
            Event::End(_) => {
                // quick-xml checks that each end tag matches its start tag.
                if stack.len() < 2 {
                    return Err(malformed("end tag without a start tag"));
                }
                if let Some(el) = stack.pop() {
                    let tag = el.tag.clone();
                    let v = el.into_value();
                    if let Some(parent) = stack.last_mut() {
                        parent.children.push((tag, v));
                    }
                }
            }
            Event::Text(t) => {
                if depth == 1 {
                    if !t.trim().is_empty() {
                        return Err(malformed("text outside the root element"));
                    }
                } else {
                    top.seg.push_str(&t.xml10_content());
                }
            }
            Event::CData(t) => {
                if depth == 1 {
                    return Err(malformed("CDATA outside the root element"));
                }
                top.seg.push_str(&t.xml10_content());
            }
            Event::GeneralRef(r) => {
                if depth == 1 {
                    return Err(malformed("entity reference outside the root element"));
                }
                let name: &str = &r;
                match r.resolve_char_ref() {
                    Ok(Some(c)) => top.seg.push(c),
                    Ok(None) => match quick_xml::escape::resolve_predefined_entity(name) {
                        Some(s) => top.seg.push_str(s),
                        None => {
                            top.seg.push('&');
                            top.seg.push_str(name);
                            top.seg.push(';');
                        }
                    },
                    Err(e) => return Err(malformed(e)),
                }
            }
            Event::Eof => break,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
        if elements > MAX_ELEMENTS {
            return Err(AnalyzeError::Malformed(format!(
                "XML document of more than {MAX_ELEMENTS} elements"
            )));
        }
    }
    if stack.len() > 1 {
        let tag = stack.last().map_or("", |o| o.tag.as_str());
        return Err(malformed(format_args!("document ends inside <{tag}>")));
    }
    let doc = stack.pop().map(Open::into_value);
    match doc {
        Some(v @ Value::Object(_)) => Ok(v),
        _ => Err(malformed("no element found")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{error, path, summary};
    use super::*;
    use crate::analyze::Format;

    const CATALOG: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE catalog>
<!-- a library -->
<catalog xmlns:dc="http://purl.org/dc/elements/1.1/" updated="2024-05-01">
  <book id="bk101" available="true">
    <author>Gambardella, Matthew</author>
    <title>XML Developer's Guide</title>
    <price currency="USD">44.95</price>
    <dc:subject>Computer</dc:subject>
    <isbn>0123456789</isbn>
  </book>
  <book id="bk102" available="false">
    <author>Ralls, Kim</author>
    <title>Midnight Rain &amp; Snow &#x263A;</title>
    <price currency="EUR">5</price>
    <note>Mixed <b>bold</b> text <![CDATA[<raw>]]></note>
    <empty/>
  </book>
  <book id="bk103">
    <title>Maeve Ascendant</title>
  </book>
</catalog>
"#;

    #[test]
    fn attributes_repeated_elements_and_text() {
        let s = summary("books.xml", CATALOG, Format::Xml);
        assert_eq!(s.root, "object with 1 keys");
        assert_eq!(path(&s, "catalog.@updated").examples, ["\"2024-05-01\""]);
        assert_eq!(path(&s, "catalog.book").array_len, Some((3, 3)));
        let id = path(&s, "catalog.book[].@id");
        assert_eq!(id.count, 3);
        assert_eq!(id.examples, ["\"bk101\"", "\"bk102\"", "\"bk103\""]);
        let avail = path(&s, "catalog.book[].@available");
        assert_eq!((avail.count, avail.types[0].0.as_str()), (2, "boolean"));
        assert_eq!(path(&s, "catalog.book[].title").count, 3);
        assert_eq!(
            path(&s, "catalog.book[].title").examples[1],
            "\"Midnight Rain & Snow ☺\""
        );
        // An element with attributes is an object with its text under #text.
        let price = path(&s, "catalog.book[].price.#text");
        assert_eq!(
            price.types,
            [("float".to_string(), 1), ("integer".to_string(), 1)]
        );
        assert_eq!(price.range, Some((5.0, 44.95)));
        assert_eq!(path(&s, "catalog.book[].price.@currency").distinct, 2);
        // Codes with leading zeros stay strings; prefixes stay in tags.
        assert_eq!(path(&s, "catalog.book[].isbn").types[0].0, "string");
        assert_eq!(path(&s, "catalog.book[].dc:subject").count, 1);
        // Mixed content: text segments joined, CDATA kept verbatim.
        let note = path(&s, "catalog.book[].note.#text");
        assert_eq!(note.examples, ["\"Mixed text <raw>\""]);
        assert_eq!(path(&s, "catalog.book[].note.b").examples, ["\"bold\""]);
        assert_eq!(path(&s, "catalog.book[].empty").types[0].0, "null");
    }

    #[test]
    fn declared_latin1_is_decoded() {
        let mut bytes = b"<?xml version='1.0' encoding='ISO-8859-1'?><r><city>".to_vec();
        bytes.extend(b"M\xfcnchen</city></r>");
        let v = to_value(&bytes).unwrap();
        assert_eq!(v["r"]["city"], "München");
    }

    #[test]
    fn scalars_are_typed_conservatively() {
        assert_eq!(scalar("42"), Value::from(42));
        assert_eq!(scalar("-7"), Value::from(-7));
        assert_eq!(scalar("3.25"), Value::from(3.25));
        assert_eq!(scalar("1e-3"), Value::from(0.001));
        assert_eq!(scalar("007"), Value::from("007"));
        assert_eq!(scalar("1."), Value::from("1."));
        assert_eq!(scalar("12 kg"), Value::from("12 kg"));
        assert_eq!(
            scalar("99999999999999999999"),
            Value::from("99999999999999999999")
        );
        assert_eq!(scalar("True"), Value::from("True"));
    }

    #[test]
    fn malformed_xml_is_an_error() {
        for (bad, why) in [
            ("<a><b></a>", "invalid XML"),
            ("<a><b>text</b>", "ends inside <a>"),
            ("just some words", "outside the root"),
            ("<a x=1/>", "invalid XML"),
            ("<!-- only a comment -->", "no element"),
            ("</a>", "invalid XML"),
        ] {
            let e = error("bad.xml", bad.as_bytes(), Format::Xml);
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = "<a>".repeat(10_000) + &"</a>".repeat(10_000);
        let e = error("deep.xml", deep.as_bytes(), Format::Xml);
        assert!(e.contains("nested deeper than 128"), "{e}");
        let ok = "<a>".repeat(100) + "1" + &"</a>".repeat(100);
        let s = summary("ok.xml", &ok, Format::Xml);
        assert_eq!(s.paths.len(), 100);
    }

    #[test]
    fn every_prefix_of_a_document_is_handled_without_panic() {
        use crate::analyze::{Analyzer, Content, Source};
        let docs = [
            ("a.xml", CATALOG, Format::Xml),
            ("a.yaml", super::super::tests::CONFIG, Format::Yaml),
            ("a.toml", super::super::tests::INVENTORY, Format::Toml),
        ];
        for (name, text, format) in docs {
            let (mut ok, mut err) = (0, 0);
            for end in 0..=text.len() {
                let src = Source::from_bytes(name, text.as_bytes()[..end].to_vec());
                match super::super::StructuredAnalyzer.analyze(&src, format) {
                    Ok(Content::Json(_)) => ok += 1,
                    Ok(c) => panic!("{c:?}"),
                    Err(_) => err += 1,
                }
            }
            // Both outcomes occur: cut documents are refused, some prefixes still parse.
            assert!(ok > 0 && err > 0, "{name}: {ok} ok, {err} errors");
        }
    }
}
