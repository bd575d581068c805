//! The answers a script records with `answer(name, value)` (see the module docs of
//! [`super`]): the file beside the script, read back in bounded memory, each line on
//! its own.
//!
//! Lines are parsed by hand rather than by `serde_json`: its default number parsing is
//! best-effort (a double may come back one unit in the last place off), and answers are
//! compared exactly. Numbers here go through the standard library's correctly rounded
//! parser, so a double the script recorded is the double read.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// One `answer(name, value)` call of a script.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answered {
    /// The name given, as text.
    pub name: String,
    /// The value in its JSON form (see the module docs of the sandbox); `null` when
    /// `error` is set.
    pub value: Value,
    /// Why no value was recorded (`value too large (N bytes)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Answered {
    /// A recorded value.
    pub fn new(name: impl Into<String>, value: Value) -> Answered {
        Answered {
            name: name.into(),
            value,
            error: None,
        }
    }
}

/// Bytes of the answers file read at most: a hostile script may write far more.
pub(crate) const MAX_FILE: u64 = 8 << 20;
/// Bytes of one line (its newline included) read at most: what the launcher writes.
pub(crate) const MAX_LINE: usize = 1 << 20;
/// Nesting parsed at most (the launcher writes 64 levels of a value at most, inside
/// its record and a table's rows).
const MAX_DEPTH: usize = 128;

/// The answers file of `script` (`NAME.py` → `NAME.answers.jsonl`, beside it): where
/// the launcher writes.
pub(crate) fn file_for(script: &Path) -> PathBuf {
    let name = script
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".py").unwrap_or(&name);
    script.with_file_name(format!("{stem}.answers.jsonl"))
}

/// The answers in `path` in the order written, and how many lines could not be read.
/// No file: none. Nothing is followed (a link or FIFO in its place counts as one
/// unreadable line); past [`MAX_FILE`] bytes the rest counts as one unreadable line.
pub(crate) fn read(path: &Path) -> (Vec<Answered>, usize) {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Vec::new(), 0),
        Err(_) => return (Vec::new(), 1),
    };
    let Ok(meta) = file.metadata() else {
        return (Vec::new(), 1);
    };
    if !meta.is_file() {
        return (Vec::new(), 1);
    }
    let mut data = Vec::new();
    if file.take(MAX_FILE).read_to_end(&mut data).is_err() {
        return (Vec::new(), 1);
    }
    let cut = meta.len() > data.len() as u64;
    parse_lines(&data, cut)
}

/// The records of `data`, lines of JSON; `cut`: `data` ends inside the file, so its
/// last piece is a line cut short.
fn parse_lines(data: &[u8], cut: bool) -> (Vec<Answered>, usize) {
    let mut answers = Vec::new();
    let mut unreadable = 0;
    let mut lines = data.split(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        let last = lines.peek().is_none();
        if line.iter().all(u8::is_ascii_whitespace) {
            if last && cut && !line.is_empty() {
                unreadable += 1;
            }
            continue;
        }
        let record = (!(last && cut) && line.len() < MAX_LINE)
            .then(|| parse_value(line))
            .flatten()
            .and_then(record);
        match record {
            Some(a) => answers.push(a),
            None => unreadable += 1,
        }
    }
    (answers, unreadable)
}

/// A line's record: an object with a string `name` and a `value`, or an `error` text.
fn record(v: Value) -> Option<Answered> {
    let Value::Object(mut m) = v else {
        return None;
    };
    let Some(Value::String(name)) = m.remove("name") else {
        return None;
    };
    if let Some(value) = m.remove("value") {
        return Some(Answered::new(name, value));
    }
    match m.remove("error") {
        Some(Value::String(error)) => Some(Answered {
            name,
            value: Value::Null,
            error: Some(error),
        }),
        _ => None,
    }
}

/// The value last recorded in `answers` under `name` ([`name_key`]); `None` when none
/// was, or when the last record under it is an error (a value too large).
pub fn last_answer<'a>(answers: &'a [Answered], name: &str) -> Option<&'a Value> {
    let key = name_key(name);
    let last = answers.iter().rev().find(|a| name_key(&a.name) == key)?;
    last.error.is_none().then_some(&last.value)
}

/// A name as names are compared: lower case, runs of `_`, `-`, `.` and white space as
/// one space, none at the ends ("Mean_Fare" and "mean fare" alike).
pub fn name_key(name: &str) -> String {
    let mut key = String::with_capacity(name.len());
    let mut gap = false;
    for c in name.chars() {
        if matches!(c, '_' | '-' | '.') || c.is_whitespace() {
            gap = !key.is_empty();
        } else {
            if gap {
                key.push(' ');
                gap = false;
            }
            key.extend(c.to_lowercase());
        }
    }
    key
}

/// The value `line` holds, all of it JSON, or `None`.
fn parse_value(line: &[u8]) -> Option<Value> {
    let mut p = Parser { b: line, i: 0 };
    let v = p.value(0)?;
    p.ws();
    (p.i == p.b.len()).then_some(v)
}

/// A strict JSON reader over one line.
struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i.checked_add(word.len())?;
        if self.b.get(self.i..end)? != word {
            return None;
        }
        self.i = end;
        Some(())
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match self.peek()? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string().map(Value::String),
            b't' => self.eat(b"true").map(|()| Value::Bool(true)),
            b'f' => self.eat(b"false").map(|()| Value::Bool(false)),
            b'n' => self.eat(b"null").map(|()| Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn object(&mut self, depth: usize) -> Option<Value> {
        self.i += 1;
        let mut map = Map::new();
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(Value::Object(map));
        }
        loop {
            self.ws();
            if self.peek()? != b'"' {
                return None;
            }
            let key = self.string()?;
            self.ws();
            self.eat(b":")?;
            let v = self.value(depth + 1)?;
            map.insert(key, v);
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(Value::Object(map));
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Value> {
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.peek()? == b']' {
            self.i += 1;
            return Some(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(Value::Array(items));
                }
                _ => return None,
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let end = self.i.checked_add(4)?;
        let digits = std::str::from_utf8(self.b.get(self.i..end)?).ok()?;
        if !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        self.i = end;
        u32::from_str_radix(digits, 16).ok()
    }

    fn string(&mut self) -> Option<String> {
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.peek()?;
            self.i += 1;
            match c {
                b'"' => return String::from_utf8(out).ok(),
                b'\\' => {
                    let e = self.peek()?;
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return None,
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                0..=0x1f => return None,
                _ => out.push(c),
            }
        }
    }

    /// After `\u`: the character, a surrogate pair joined; a lone surrogate (Python
    /// strings may hold one) as U+FFFD.
    fn unicode_escape(&mut self) -> Option<char> {
        let hi = self.hex4()?;
        if (0xD800..0xDC00).contains(&hi) {
            let save = self.i;
            if self.eat(b"\\u").is_some() {
                if let Some(lo) = self.hex4().filter(|lo| (0xDC00..0xE000).contains(lo)) {
                    let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    return char::from_u32(c);
                }
            }
            self.i = save;
            return Some(char::REPLACEMENT_CHARACTER);
        }
        Some(char::from_u32(hi).unwrap_or(char::REPLACEMENT_CHARACTER))
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        self.i - start
    }

    /// A JSON number: an integer that fits 64 bits as one, anything else as the
    /// nearest double (correctly rounded); out of a double's range, `None`.
    fn number(&mut self) -> Option<Value> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return None;
            }
            integer = false;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
            integer = false;
        }
        let text = std::str::from_utf8(&self.b[start..self.i]).ok()?;
        if integer {
            if let Ok(n) = text.parse::<i64>() {
                return Some(Value::Number(n.into()));
            }
            if let Ok(n) = text.parse::<u64>() {
                return Some(Value::Number(n.into()));
            }
        }
        let f: f64 = text.parse().ok()?;
        Number::from_f64(f).map(Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(s: &str) -> Option<Value> {
        parse_value(s.as_bytes())
    }

    #[test]
    fn doubles_read_back_exactly() {
        // serde_json's default parser is a unit off on about one double in five,
        // ordinary ones among them (the first three here).
        for f in [
            58.447122649893124,
            509.69554403602524,
            -4.0690670819916402e-25,
            0.1f64 + 0.2,
            1.0 / 3.0,
            2.2250738585072014e-308,
            5e-324,
            1.7976931348623157e308,
            9007199254740993.0,
            1.2345678901234567e-101,
            -0.0,
            123456.78901234567,
            1e23,
            8.98846567431158e307,
        ] {
            let text = format!("{f:?}");
            let v = parse(&text).unwrap();
            assert_eq!(v.as_f64().unwrap().to_bits(), f.to_bits(), "{text}");
        }
        for _ in 0..20_000 {
            let f = f64::from_bits(fastrand::u64(..));
            if f.is_finite() {
                let text = format!("{f:?}");
                let back = parse(&text).unwrap().as_f64().unwrap();
                assert_eq!(back.to_bits(), f.to_bits(), "{text}");
            }
        }
        assert_eq!(parse("1e999"), None);
    }

    #[test]
    fn integers_keep_64_bits_and_wider_ones_become_doubles() {
        assert_eq!(parse("18446744073709551615").unwrap(), json!(u64::MAX));
        assert_eq!(parse("-9223372036854775808").unwrap(), json!(i64::MIN));
        assert_eq!(parse("100000000000000000000").unwrap(), json!(1e20));
        assert!(parse("-0").unwrap().is_i64());
    }

    #[test]
    fn strict_json_is_read_and_anything_else_refused() {
        let v = parse(r#" {"a": [1, 2.5, "x\"\n\u00fc\ud83d\ude00", null, true, false, {}], "b": {"c": []}} "#)
            .unwrap();
        assert_eq!(
            v,
            json!({"a": [1, 2.5, "x\"\nü😀", null, true, false, {}], "b": {"c": []}})
        );
        assert_eq!(parse(r#""\ud800x""#).unwrap(), json!("\u{FFFD}x"));
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            ".5",
            "-",
            "1e",
            "NaN",
            "Infinity",
            "\"a\tb\"",
            "\"\\x\"",
            "{a:1}",
            "[1] x",
            "tru",
            "\"\\u12\"",
            "'s'",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
        assert_eq!(parse(&"[".repeat(100_000)), None);
        let deep = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&deep).is_some());
        assert!(parse_value(b"\"\xff\"").is_none());
    }

    #[test]
    fn lines_are_records_and_bad_lines_are_counted() {
        let data = concat!(
            "{\"name\": \"a\", \"value\": 1}\n",
            "\n",
            "garbage\n",
            "{\"name\": 3, \"value\": 1}\n",
            "{\"name\": \"b\"}\n",
            "[1]\n",
            "{\"name\": \"big\", \"error\": \"value too large (9 bytes)\"}\n",
            "{\"name\": \"a\", \"value\": [2]}",
        );
        let (answers, bad) = parse_lines(data.as_bytes(), false);
        assert_eq!(bad, 4);
        assert_eq!(
            answers,
            vec![
                Answered::new("a", json!(1)),
                Answered {
                    name: "big".into(),
                    value: Value::Null,
                    error: Some("value too large (9 bytes)".into()),
                },
                Answered::new("a", json!([2])),
            ]
        );
        // A file cut by the read cap: its last piece is not trusted.
        let (answers, bad) = parse_lines(
            b"{\"name\": \"a\", \"value\": 1}\n{\"name\": \"a\", \"value\": 12",
            true,
        );
        assert_eq!((answers.len(), bad), (1, 1));
        // A line past the cap is refused unread.
        let long = format!(
            "{{\"name\": \"a\", \"value\": \"{}\"}}\n",
            "x".repeat(MAX_LINE)
        );
        assert_eq!(parse_lines(long.as_bytes(), false), (Vec::new(), 1));
    }

    #[test]
    fn names_compare_without_case_and_separators() {
        assert_eq!(name_key("Mean_Fare"), "mean fare");
        assert_eq!(name_key(" mean--fare. "), "mean fare");
        assert_eq!(name_key("p.value"), name_key("P Value"));
        assert_ne!(name_key("meanfare"), name_key("mean fare"));
        assert_eq!(name_key("ÄRA"), "ära");
    }

    #[test]
    fn the_file_is_beside_the_script() {
        assert_eq!(
            file_for(Path::new("/w/round_1.py")),
            Path::new("/w/round_1.answers.jsonl")
        );
        assert_eq!(
            file_for(Path::new("/w/a.b.py")),
            Path::new("/w/a.b.answers.jsonl")
        );
    }

    #[test]
    fn a_missing_file_has_no_answers_and_a_link_or_fifo_is_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(read(&tmp.path().join("none.jsonl")), (Vec::new(), 0));
        let secret = tmp.path().join("secret");
        std::fs::write(&secret, "{\"name\": \"s\", \"value\": 1}\n").unwrap();
        let link = tmp.path().join("link.jsonl");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        assert_eq!(read(&link), (Vec::new(), 1));
        let fifo = tmp.path().join("fifo.jsonl");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert_eq!(read(&fifo), (Vec::new(), 1));
        assert_eq!(read(&secret).0, vec![Answered::new("s", json!(1))]);
    }
}
