//! Text encodings: UTF-8 (with or without BOM), UTF-16 (LE/BE, with or without BOM) and,
//! for bytes that are not valid UTF-8, Windows-1252 (the superset of Latin-1 that real
//! "Latin-1" files use). Detection reads the head; transcoding streams through
//! `encoding_rs_io` so analyzers always see UTF-8.

use super::Source;
use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252};
use std::borrow::Cow;
use std::io::Read;

/// The encoding of a text file's head.
pub(crate) fn sniff(head: &[u8]) -> &'static Encoding {
    if let Some((enc, _)) = Encoding::for_bom(head) {
        return enc;
    }
    // UTF-16 without BOM: ASCII text leaves every other byte zero.
    let sample = &head[..head.len().min(512) & !1];
    if sample.len() >= 8 {
        let zeros_odd = sample
            .iter()
            .skip(1)
            .step_by(2)
            .filter(|&&b| b == 0)
            .count();
        let zeros_even = sample.iter().step_by(2).filter(|&&b| b == 0).count();
        let half = sample.len() / 2;
        if zeros_odd * 10 >= half * 9 && zeros_even * 10 <= half {
            return UTF_16LE;
        }
        if zeros_even * 10 >= half * 9 && zeros_odd * 10 <= half {
            return UTF_16BE;
        }
    }
    match std::str::from_utf8(head) {
        Ok(_) => UTF_8,
        // Cut inside a multi-byte character at the end of the head: still UTF-8.
        Err(e) if e.error_len().is_none() => UTF_8,
        Err(_) => WINDOWS_1252,
    }
}

/// True for the UTF-16 encodings, whose text holds NUL bytes.
pub(crate) fn is_utf16(enc: &'static Encoding) -> bool {
    enc == UTF_16LE || enc == UTF_16BE
}

/// A name for descriptions, `None` for plain UTF-8.
pub(crate) fn label(enc: &'static Encoding, head: &[u8]) -> Option<String> {
    if enc == UTF_8 {
        return head
            .starts_with(b"\xEF\xBB\xBF")
            .then(|| "UTF-8 with BOM".to_string());
    }
    Some(match enc.name() {
        "windows-1252" => "Latin-1 (Windows-1252)".to_string(),
        other => other.to_string(),
    })
}

/// The head decoded to UTF-8 (BOM removed), for sniffing.
pub(crate) fn decode_head<'a>(head: &'a [u8], enc: &'static Encoding) -> Cow<'a, [u8]> {
    if enc == UTF_8 {
        return Cow::Borrowed(head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head));
    }
    let (text, _, _) = enc.decode(head);
    Cow::Owned(text.into_owned().into_bytes())
}

/// A reader over the whole content of `src` as UTF-8 (BOM removed).
pub(crate) fn utf8_reader<'a>(
    src: &'a Source,
    enc: &'static Encoding,
) -> std::io::Result<Box<dyn Read + Send + 'a>> {
    transcode(src.reader()?, enc)
}

/// `inner` transcoded from `enc` to UTF-8 (BOM removed).
pub(crate) fn transcode<'a>(
    inner: Box<dyn Read + Send + 'a>,
    enc: &'static Encoding,
) -> std::io::Result<Box<dyn Read + Send + 'a>> {
    if enc == UTF_8 {
        let mut r = std::io::BufReader::new(inner);
        // Drop a UTF-8 BOM so that it does not glue itself to the first header.
        let mut bom = [0u8; 3];
        let n = read_full(&mut r, &mut bom)?;
        let keep: Vec<u8> = if n == 3 && bom == *b"\xEF\xBB\xBF" {
            Vec::new()
        } else {
            bom[..n].to_vec()
        };
        return Ok(Box::new(std::io::Cursor::new(keep).chain(r)));
    }
    Ok(Box::new(
        encoding_rs_io::DecodeReaderBytesBuilder::new()
            .encoding(Some(enc))
            .bom_override(true)
            .build(inner),
    ))
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16le(s: &str, bom: bool) -> Vec<u8> {
        let mut v = if bom { vec![0xFF, 0xFE] } else { vec![] };
        for u in s.encode_utf16() {
            v.extend_from_slice(&u.to_le_bytes());
        }
        v
    }

    #[test]
    fn sniffs_encodings() {
        assert_eq!(sniff(b"a,b\n1,2\n"), UTF_8);
        assert_eq!(sniff(b"\xEF\xBB\xBFa,b\n"), UTF_8);
        assert_eq!(
            sniff(&utf16le("name,city\nJos\u{e9},Li\u{e8}ge\n", true)),
            UTF_16LE
        );
        assert_eq!(sniff(&utf16le("name,city\nJose,Liege\n", false)), UTF_16LE);
        assert_eq!(sniff(b"caf\xe9,cr\xe8me\n"), WINDOWS_1252);
        assert_eq!(sniff("caf\u{e9}".as_bytes()), UTF_8);
    }

    #[test]
    fn transcodes_to_utf8() {
        let src = Source::from_bytes("x.csv", utf16le("a,b\n\u{e9},2\n", true));
        let mut s = String::new();
        utf8_reader(&src, sniff(src.head()))
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, "a,b\n\u{e9},2\n");
        let src = Source::from_bytes("x.csv", b"\xEF\xBB\xBFa\n".to_vec());
        let mut s = String::new();
        utf8_reader(&src, UTF_8)
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, "a\n");
    }
}
