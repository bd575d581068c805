//! The `.npy` header: magic, version, and a Python dict literal with `descr`,
//! `fortran_order` and `shape`.
//!
//! Parsed by hand: `npyz`, the maintained crate, allocates the header length the file
//! states (up to 4 GiB) before reading it and multiplies the shape without overflow
//! checks (a panic in debug builds), and the literal subset numpy writes is small.

use std::io::{self, Read};

/// Largest header accepted. numpy refuses headers over 10,000 bytes by default; structured
/// dtypes with many fields can need more, so this leaves room.
const MAX_HEADER: usize = 1024 * 1024;
/// Nesting accepted in the header literal (structured dtypes nest a few levels).
const MAX_NESTING: usize = 32;

/// What an `.npy` header states.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Header {
    /// The dtype as numpy spells it: `<f8`, or a structured list.
    pub dtype: String,
    /// Bytes per element, when fixed (not for object arrays).
    pub item_size: Option<u64>,
    /// Column-major layout.
    pub fortran_order: bool,
    /// Length of each axis; empty for a scalar.
    pub shape: Vec<u64>,
    /// Bytes from the start of the file to the data.
    pub data_offset: u64,
}

impl Header {
    /// Bytes of data the header announces, when known and representable.
    pub(crate) fn data_bytes(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(self.item_size?, |acc, &n| acc.checked_mul(n))
    }
}

/// Read the header from the start of an `.npy` stream.
pub(crate) fn read_header(r: &mut dyn Read) -> Result<Header, String> {
    let mut pre = [0u8; 10];
    r.read_exact(&mut pre).map_err(|e| short(&e))?;
    if !pre.starts_with(b"\x93NUMPY") {
        return Err("no NumPy magic".into());
    }
    let major = pre[6];
    let (len, offset) = match major {
        1 => (usize::from(u16::from_le_bytes([pre[8], pre[9]])), 10),
        2 | 3 => {
            let mut rest = [0u8; 2];
            r.read_exact(&mut rest).map_err(|e| short(&e))?;
            let n = u32::from_le_bytes([pre[8], pre[9], rest[0], rest[1]]);
            (usize::try_from(n).unwrap_or(usize::MAX), 12)
        }
        v => return Err(format!("unknown .npy version {v}")),
    };
    if len > MAX_HEADER {
        return Err(format!("header of {len} bytes is too large"));
    }
    let mut text = vec![0u8; len];
    r.read_exact(&mut text).map_err(|e| short(&e))?;
    // Versions 1 and 2 are latin-1, version 3 is UTF-8.
    let text: String = if major == 3 {
        String::from_utf8_lossy(&text).into_owned()
    } else {
        text.iter().map(|&b| char::from(b)).collect()
    };
    let dict = Parser::new(&text).document()?;
    let Py::Dict(items) = dict else {
        return Err("header is not a dict".into());
    };
    let get = |key: &str| {
        items
            .iter()
            .find(|(k, _)| matches!(k, Py::Str(s) if s == key))
            .map(|(_, v)| v)
            .ok_or_else(|| format!("header has no '{key}'"))
    };
    let descr = get("descr")?;
    let fortran_order = match get("fortran_order")? {
        Py::Bool(b) => *b,
        _ => return Err("'fortran_order' is not a bool".into()),
    };
    let shape = match get("shape")? {
        Py::Seq(dims, _) => dims
            .iter()
            .map(|d| match d {
                Py::Int(n) => u64::try_from(*n).map_err(|_| "negative dimension".to_string()),
                _ => Err("'shape' holds a non-integer".to_string()),
            })
            .collect::<Result<Vec<u64>, String>>()?,
        _ => return Err("'shape' is not a tuple".into()),
    };
    let dtype = match descr {
        Py::Str(s) => s.clone(),
        other => other.repr(),
    };
    Ok(Header {
        dtype,
        item_size: item_size(descr),
        fortran_order,
        shape,
        data_offset: (offset + len) as u64,
    })
}

fn short(e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        "header is truncated".into()
    } else {
        e.to_string()
    }
}

/// Bytes per element of a descr: a type string, or a structured list of
/// `(name, type[, shape])` fields. `None` for objects and anything unrecognised.
fn item_size(descr: &Py) -> Option<u64> {
    match descr {
        Py::Str(s) => type_size(s),
        Py::Seq(fields, _) => fields.iter().try_fold(0u64, |acc, f| {
            let Py::Seq(parts, _) = f else { return None };
            let mut size = item_size(parts.get(1)?)?;
            if let Some(Py::Seq(dims, _)) = parts.get(2) {
                for d in dims {
                    let Py::Int(n) = d else { return None };
                    size = size.checked_mul(u64::try_from(*n).ok()?)?;
                }
            }
            acc.checked_add(size)
        }),
        _ => None,
    }
}

/// Bytes of one element of a type string such as `<f8`, `|S10`, `<U5`, `<M8[ns]`.
fn type_size(s: &str) -> Option<u64> {
    let s = s.trim_start_matches(['<', '>', '|', '=']);
    let mut chars = s.chars();
    let kind = chars.next()?;
    let digits: String = chars.take_while(char::is_ascii_digit).collect();
    let n = digits.parse::<u64>().ok();
    match kind {
        '?' => Some(1),
        'b' | 'i' | 'u' | 'f' | 'c' | 'S' | 'a' | 'V' | 'M' | 'm' => n,
        'U' => n?.checked_mul(4),
        _ => None,
    }
}

/// A Python literal, as far as numpy headers use them.
#[derive(Debug, Clone, PartialEq)]
enum Py {
    Str(String),
    Int(i64),
    Bool(bool),
    None,
    /// Tuple (`false`) or list (`true`).
    Seq(Vec<Py>, bool),
    Dict(Vec<(Py, Py)>),
}

impl Py {
    /// Python-like text of the value, for dtypes that are not a plain type string.
    fn repr(&self) -> String {
        match self {
            Py::Str(s) => format!("'{s}'"),
            Py::Int(n) => n.to_string(),
            Py::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            Py::None => "None".to_string(),
            Py::Seq(items, list) => {
                let inner: Vec<String> = items.iter().map(Py::repr).collect();
                match (list, inner.len()) {
                    (true, _) => format!("[{}]", inner.join(", ")),
                    (false, 1) => format!("({},)", inner.join("")),
                    (false, _) => format!("({})", inner.join(", ")),
                }
            }
            Py::Dict(items) => {
                let inner: Vec<String> = items
                    .iter()
                    .map(|(k, v)| format!("{}: {}", k.repr(), v.repr()))
                    .collect();
                format!("{{{}}}", inner.join(", "))
            }
        }
    }
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(s: &'a str) -> Self {
        Parser { s, pos: 0 }
    }

    /// The one value of the header; trailing padding (spaces, newline) is allowed.
    fn document(&mut self) -> Result<Py, String> {
        let v = self.value(0)?;
        self.skip_ws();
        if self.pos != self.s.len() {
            return Err(format!("unexpected text at byte {}", self.pos));
        }
        Ok(v)
    }

    fn peek(&self) -> Option<char> {
        self.s[self.pos..].chars().next()
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if !c.is_whitespace() {
                break;
            }
            self.pos += c.len_utf8();
        }
    }

    fn value(&mut self, depth: usize) -> Result<Py, String> {
        if depth > MAX_NESTING {
            return Err("header nests too deeply".into());
        }
        self.skip_ws();
        match self.peek() {
            Some('\'' | '"') => self.string().map(Py::Str),
            Some('(') => self.seq(')', depth).map(|v| Py::Seq(v, false)),
            Some('[') => self.seq(']', depth).map(|v| Py::Seq(v, true)),
            Some('{') => self.dict(depth),
            Some(c) if c == '-' || c.is_ascii_digit() => self.int(),
            Some(_) => {
                let word: String = self.s[self.pos..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .collect();
                self.pos += word.len();
                match word.as_str() {
                    "True" => Ok(Py::Bool(true)),
                    "False" => Ok(Py::Bool(false)),
                    "None" => Ok(Py::None),
                    _ => Err(format!("unexpected text at byte {}", self.pos)),
                }
            }
            None => Err("header ends early".into()),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let quote = self.peek().ok_or("header ends early")?;
        self.pos += 1;
        let mut out = String::new();
        let mut chars = self.s[self.pos..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                c if c == quote => {
                    self.pos += i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, e)) => out.push(e),
                    None => break,
                },
                c => out.push(c),
            }
        }
        Err("unterminated string in header".into())
    }

    fn int(&mut self) -> Result<Py, String> {
        let start = self.pos;
        if self.peek() == Some('-') {
            self.pos += 1;
        }
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let n = self.s[start..self.pos]
            .parse::<i64>()
            .map_err(|_| format!("bad integer at byte {start}"))?;
        // Python 2 wrote long integers with an L suffix.
        if matches!(self.peek(), Some('L' | 'l')) {
            self.pos += 1;
        }
        Ok(Py::Int(n))
    }

    fn seq(&mut self, close: char, depth: usize) -> Result<Vec<Py>, String> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok(items);
            }
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(c) if c == close => {}
                _ => return Err(format!("expected ',' or '{close}' at byte {}", self.pos)),
            }
        }
    }

    fn dict(&mut self, depth: usize) -> Result<Py, String> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some('}') {
                self.pos += 1;
                return Ok(Py::Dict(items));
            }
            let key = self.value(depth + 1)?;
            self.skip_ws();
            if self.peek() != Some(':') {
                return Err(format!("expected ':' at byte {}", self.pos));
            }
            self.pos += 1;
            let value = self.value(depth + 1)?;
            items.push((key, value));
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {}
                _ => return Err(format!("expected ',' or '}}' at byte {}", self.pos)),
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// An .npy file as numpy writes it: version 1, header padded to 64 bytes.
    pub(crate) fn npy(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut header = dict.to_string();
        while !(10 + header.len() + 1).is_multiple_of(64) {
            header.push(' ');
        }
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((header.len() as u16).to_le_bytes());
        out.extend(header.as_bytes());
        out.extend(data);
        out
    }

    #[test]
    fn parses_numpy_headers() {
        let f = npy(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }",
            &[0; 96],
        );
        let h = read_header(&mut &f[..]).unwrap();
        assert_eq!(h.dtype, "<f8");
        assert_eq!(h.shape, [3, 4]);
        assert!(!h.fortran_order);
        assert_eq!(h.data_offset, 128);
        assert_eq!(h.data_bytes(), Some(96));

        let f = npy(
            "{'descr': [('id', '<i4'), ('pos', '<f4', (3,)), ('name', '|S5')], \
             'fortran_order': True, 'shape': (10L,), }",
            &[],
        );
        let h = read_header(&mut &f[..]).unwrap();
        assert_eq!(
            h.dtype,
            "[('id', '<i4'), ('pos', '<f4', (3,)), ('name', '|S5')]"
        );
        assert_eq!(h.item_size, Some(4 + 12 + 5));
        assert!(h.fortran_order);
        assert_eq!(h.shape, [10]);

        let f = npy(
            "{'descr': '|O', 'fortran_order': False, 'shape': (), }",
            &[],
        );
        let h = read_header(&mut &f[..]).unwrap();
        assert_eq!((h.item_size, h.shape.len()), (None, 0));
        assert_eq!(type_size("<U7"), Some(28));
        assert_eq!(type_size("<M8[ns]"), Some(8));
    }

    #[test]
    fn rejects_bad_headers_without_panicking() {
        let ok = npy(
            "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }",
            &[],
        );
        for cut in 0..ok.len() - 1 {
            assert!(read_header(&mut &ok[..cut]).is_err(), "cut at {cut}");
        }
        let bad = [
            "{'descr': '<i2', 'shape': (2,), }",
            "{'descr': '<i2', 'fortran_order': 0, 'shape': (2,), }",
            "{'descr': '<i2', 'fortran_order': False, 'shape': (-2,), }",
            "{'descr': '<i2', 'fortran_order': False, 'shape': (99999999999999999999,), }",
            "{'descr': '<i2' 'fortran_order': False}",
            "[1, 2]",
            "{'descr': 'unterminated",
        ];
        for d in bad {
            assert!(read_header(&mut &npy(d, &[])[..]).is_err(), "{d}");
        }
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert!(read_header(&mut &npy(&deep, &[])[..]).is_err());
        // Version 2 stating a 4 GiB header: refused before any allocation.
        let mut huge = b"\x93NUMPY\x02\x00".to_vec();
        huge.extend(u32::MAX.to_le_bytes());
        assert!(read_header(&mut &huge[..])
            .unwrap_err()
            .contains("too large"));
        // Overflowing shapes give no size rather than a panic.
        let f = npy(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
            &[],
        );
        assert_eq!(read_header(&mut &f[..]).unwrap().data_bytes(), None);
    }
}
