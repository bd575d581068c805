//! Text encodings: UTF-8 (with or without BOM), UTF-16 (LE/BE, with or without BOM) and,
//! for bytes that are not valid UTF-8, the legacy encoding Firefox's detector
//! (`chardetng`) reads in the head: Windows-1252 (the superset of Latin-1 that real
//! "Latin-1" files use) for Western text, Big5, Shift_JIS, GBK, EUC-KR, Windows-1251 and
//! the others for theirs. Detection reads the head; transcoding streams through
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
        Err(_) => legacy(head),
    }
}

/// Bytes of a head the legacy-encoding detector reads.
const DETECT_BYTES: usize = 8 * 1024;

/// The legacy encoding of a head that is not UTF-8: another script's when the detector
/// finds one (Big5, Shift_JIS, GBK, EUC-KR, Windows-1251, …), else Windows-1252. Between
/// Latin-script encodings a short head decides nothing (`Jos\xe9` reads in any of
/// them), so Latin text stays Windows-1252, the encoding most such files are in.
fn legacy(head: &[u8]) -> &'static Encoding {
    // The detector learns only from the bytes past ASCII: it is fed from the first of
    // them, and [`DETECT_BYTES`] tell the scripts apart, for a fraction of the head's cost
    // (the head is sniffed by detection and by the analyzer alike).
    let from = head.iter().position(|b| !b.is_ascii()).unwrap_or(0);
    let bytes = &head[from..head.len().min(from + DETECT_BYTES)];
    let mut d = chardetng::EncodingDetector::new();
    d.feed(bytes, false);
    let (enc, sure) = d.guess_assess(None, false);
    let latin = [
        "windows-1250",
        "windows-1252",
        "windows-1254",
        "windows-1257",
        "windows-1258",
        "ISO-8859-2",
        "ISO-8859-4",
        "ISO-8859-13",
        "ISO-8859-15",
        "ISO-8859-16",
        "macintosh",
    ];
    if sure && !latin.contains(&enc.name()) {
        enc
    } else {
        WINDOWS_1252
    }
}

/// Python's codec name of a non-UTF-8 encoding, for a load line's `encoding=` (None
/// for UTF-8 with or without BOM: pandas drops a UTF-8 BOM by itself).
pub(crate) fn python_name(enc: &'static Encoding, head: &[u8]) -> Option<&'static str> {
    let bom = Encoding::for_bom(head).is_some();
    Some(match enc.name() {
        "UTF-8" => return None,
        "UTF-16LE" | "UTF-16BE" if bom => "utf-16",
        "UTF-16LE" => "utf-16-le",
        "UTF-16BE" => "utf-16-be",
        "windows-1252" => "cp1252",
        "windows-874" => "cp874",
        "IBM866" => "cp866",
        "macintosh" => "mac_roman",
        "x-mac-cyrillic" => "mac_cyrillic",
        "ISO-8859-8-I" => "iso-8859-8",
        // The WHATWG names of the others are Python codec names or aliases.
        other => other,
    })
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
    fn legacy_encodings_are_told_apart() {
        let cases: [(&str, &'static Encoding, &'static Encoding); 5] = [
            (
                "Ort,Straße,Größe\nMünchen,Hauptstraße 1,groß\nKöln,Bäckerweg 2,übergroß\n",
                WINDOWS_1252,
                WINDOWS_1252,
            ),
            // Central European text is read as Windows-1252: Latin scripts are not told
            // apart.
            (
                "miasto,ulica\nŁódź,Piotrkowska\n",
                encoding_rs::WINDOWS_1250,
                WINDOWS_1252,
            ),
            (
                "景點名稱,地址,開放時間\n臺北市立動物園,臺北市文山區新光路二段30號,全天開放\n",
                encoding_rs::BIG5,
                encoding_rs::BIG5,
            ),
            (
                "名前,住所,電話番号\n東京都庁,東京都新宿区西新宿二丁目,03-5321-1111\n",
                encoding_rs::SHIFT_JIS,
                encoding_rs::SHIFT_JIS,
            ),
            (
                "Город,Население,Область\nМосква,13010112,Московская\nКазань,1308660,Татарстан\n",
                encoding_rs::WINDOWS_1251,
                encoding_rs::WINDOWS_1251,
            ),
        ];
        for (text, written, read) in cases {
            let (bytes, _, unmappable) = written.encode(text);
            assert!(!unmappable, "{text}");
            assert_eq!(sniff(&bytes), read, "{text}");
            assert!(python_name(read, &bytes).is_some());
        }
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
