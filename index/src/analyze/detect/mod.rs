//! Format detection: content first (magic bytes, sniffing), extension second.

mod markdown;
#[cfg(test)]
mod scientific_tests;

use markdown::looks_markdown;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A file format lakestar recognises. A new variant fails to compile until every
/// exhaustive match over formats decides what it gets ("Adding a format" in ARCHITECTURE.md).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Comma (or semicolon, pipe) separated values.
    Csv,
    /// Tab separated values.
    Tsv,
    /// Whitespace-aligned or fixed-width text table.
    FixedWidth,
    /// A JSON document.
    Json,
    /// JSON lines / NDJSON.
    Jsonl,
    /// YAML.
    Yaml,
    /// TOML.
    Toml,
    /// XML (not HTML).
    Xml,
    /// Markdown.
    Markdown,
    /// Plain text.
    Text,
    /// HTML page.
    Html,
    /// Apache Parquet.
    Parquet,
    /// Excel or OpenDocument spreadsheet.
    Excel,
    /// SQLite database (and GeoPackage).
    Sqlite,
    /// PDF document.
    Pdf,
    /// Raster or vector image.
    Image,
    /// Archive of several files (zip, tar).
    Archive,
    /// Single compressed stream (gzip, zstd, bzip2, xz).
    Compressed,
    /// NumPy arrays (.npy, .npz).
    Npy,
    /// Scientific containers: NetCDF, HDF5, CDF.
    Scientific,
    /// Other binary data.
    Binary,
    /// Zero bytes.
    Empty,
}

impl Format {
    /// Every format, in declaration order (derived: a new variant is never missing).
    pub const ALL: &'static [Format] = <Format as strum::VariantArray>::VARIANTS;

    /// Stable lowercase name, as stored in the catalog and printed in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::FixedWidth => "fixed-width",
            Format::Json => "json",
            Format::Jsonl => "jsonl",
            Format::Yaml => "yaml",
            Format::Toml => "toml",
            Format::Xml => "xml",
            Format::Markdown => "markdown",
            Format::Text => "text",
            Format::Html => "html",
            Format::Parquet => "parquet",
            Format::Excel => "excel",
            Format::Sqlite => "sqlite",
            Format::Pdf => "pdf",
            Format::Image => "image",
            Format::Archive => "archive",
            Format::Compressed => "compressed",
            Format::Npy => "npy",
            Format::Scientific => "scientific",
            Format::Binary => "binary",
            Format::Empty => "empty",
        }
    }

    /// Parse a name written by [`Format::as_str`].
    pub fn parse(s: &str) -> Option<Format> {
        Format::ALL.iter().copied().find(|f| f.as_str() == s)
    }

    /// The format a person or an agent means by `given`: a stored name (`excel`), a
    /// common name or an extension (`xlsx`, `.CSV`, `md`, `db`). An unknown one is
    /// refused with the known names, rather than filtering everything out.
    pub fn from_user(given: &str) -> Result<Format, crate::UserError> {
        let g = given.trim().trim_start_matches('.').to_ascii_lowercase();
        let name = match g.as_str() {
            "xlsx" | "xlsm" | "xlsb" | "xls" | "ods" | "spreadsheet" => "excel",
            "md" => "markdown",
            "txt" => "text",
            "ndjson" | "json-lines" | "jsonlines" => "jsonl",
            "sqlite3" | "db" | "gpkg" | "geopackage" => "sqlite",
            "yml" => "yaml",
            "htm" => "html",
            "fixed" | "fwf" | "fixedwidth" | "fixed_width" => "fixed-width",
            "parq" | "pq" => "parquet",
            "tab" => "tsv",
            "zip" | "tar" => "archive",
            "gz" | "gzip" | "zst" | "zstd" | "bz2" | "xz" => "compressed",
            "npz" => "npy",
            "nc" | "netcdf" | "hdf5" | "h5" | "cdf" => "scientific",
            "png" | "jpg" | "jpeg" | "gif" | "tif" | "tiff" | "webp" => "image",
            other => other,
        };
        Format::parse(name).ok_or_else(|| crate::UserError::UnknownFormat {
            given: given.to_string(),
            known: Format::ALL
                .iter()
                .map(|f| f.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// Name for people and prompts.
    pub fn human(self) -> &'static str {
        match self {
            Format::Csv => "CSV",
            Format::Tsv => "TSV",
            Format::FixedWidth => "fixed-width text table",
            Format::Json => "JSON",
            Format::Jsonl => "JSON lines",
            Format::Yaml => "YAML",
            Format::Toml => "TOML",
            Format::Xml => "XML",
            Format::Markdown => "Markdown",
            Format::Text => "text",
            Format::Html => "HTML",
            Format::Parquet => "Parquet",
            Format::Excel => "spreadsheet",
            Format::Sqlite => "SQLite database",
            Format::Pdf => "PDF",
            Format::Image => "image",
            Format::Archive => "archive",
            Format::Compressed => "compressed file",
            Format::Npy => "NumPy arrays",
            Format::Scientific => "scientific data",
            Format::Binary => "binary data",
            Format::Empty => "empty file",
        }
    }
}

fn extension(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .unwrap_or_default()
}

/// Detect the format of a file from its head (first bytes), then its extension.
pub fn detect(path: &Path, head: &[u8], size: u64) -> Format {
    if size == 0 {
        return Format::Empty;
    }
    let ext = extension(path);
    if let Some(f) = detect_magic(head) {
        // Containers whose magic is generic: the extension says what is inside.
        return match (f, ext.as_str()) {
            (Format::Archive, "npz") => Format::Npy,
            // An OLE file that `infer` does not take for .xls reads as an archive (msi).
            (Format::Archive, "xlsx" | "xlsm" | "xlsb" | "ods" | "xls") => Format::Excel,
            (Format::Binary, "xls") => Format::Excel,
            (Format::Compressed, _) if is_compressed_tar_name(path, &ext) => Format::Archive,
            (f, _) => f,
        };
    }
    let enc = super::encoding::sniff(head);
    let decoded;
    let text: &[u8] = if super::encoding::is_utf16(enc) {
        decoded = super::encoding::decode_head(head, enc);
        &decoded
    } else if looks_binary(head) {
        return Format::Binary;
    } else {
        strip_bom(head)
    };
    match ext.as_str() {
        "csv" => return Format::Csv,
        "tsv" | "tab" => return Format::Tsv,
        "jsonl" | "ndjson" => return Format::Jsonl,
        "json" | "geojson" => {
            return if looks_jsonl(text) {
                Format::Jsonl
            } else {
                Format::Json
            }
        }
        "md" | "markdown" => return Format::Markdown,
        "yaml" | "yml" => return Format::Yaml,
        "toml" => return Format::Toml,
        "xml" | "kml" | "gml" | "gpx" | "rdf" | "xsd" => return Format::Xml,
        "html" | "htm" | "xhtml" => return Format::Html,
        "svg" => return Format::Image,
        _ => {}
    }
    // No decisive extension: sniff the text.
    let trimmed = trim_ascii_start(text);
    if trimmed.starts_with(b"{") || trimmed.starts_with(b"[") {
        if looks_jsonl(text) {
            return Format::Jsonl;
        }
        if trimmed.starts_with(b"{") || looks_json_array(trimmed) {
            return Format::Json;
        }
    }
    if starts_with_ignore_case(trimmed, b"<!doctype html")
        || starts_with_ignore_case(trimmed, b"<html")
    {
        return Format::Html;
    }
    if trimmed.starts_with(b"<?xml") {
        let lower =
            String::from_utf8_lossy(&trimmed[..trimmed.len().min(1024)]).to_ascii_lowercase();
        return if lower.contains("<html") {
            Format::Html
        } else {
            Format::Xml
        };
    }
    if let Some(delim) = super::delimited::sniff_delimiter(text) {
        return if delim == b'\t' {
            Format::Tsv
        } else {
            Format::Csv
        };
    }
    // A regular table with `#` header lines is data, not a Markdown document.
    // Whole lines only: the head may end inside a character or a row.
    let complete = match memchr::memrchr(b'\n', text) {
        Some(i) => &text[..=i],
        None => text,
    };
    if super::fixed::sniff(&String::from_utf8_lossy(complete)).is_some() {
        return Format::FixedWidth;
    }
    if looks_markdown(text) {
        return Format::Markdown;
    }
    Format::Text
}

fn detect_magic(head: &[u8]) -> Option<Format> {
    // Formats `infer` does not know. Parquet files start (and end) with "PAR1".
    if head.starts_with(b"PAR1") {
        return Some(Format::Parquet);
    }
    if head.starts_with(b"\x93NUMPY") {
        return Some(Format::Npy);
    }
    if head.starts_with(b"CDF\x01")
        || head.starts_with(b"CDF\x02")
        || head.starts_with(b"CDF\x05")
        || head.starts_with(b"\x89HDF\r\n\x1a\n")
        || head.starts_with(b"\xCD\xF3\x00\x01")
        || head.starts_with(b"\xCD\xF2\x60\x02")
    {
        return Some(Format::Scientific);
    }
    let t = infer::get(head)?;
    let mime = t.mime_type();
    let f = match t.matcher_type() {
        infer::MatcherType::Image => Format::Image,
        infer::MatcherType::Archive => match mime {
            "application/gzip"
            | "application/zstd"
            | "application/x-bzip2"
            | "application/x-xz" => Format::Compressed,
            "application/pdf" => Format::Pdf,
            "application/vnd.sqlite3" => Format::Sqlite,
            _ => Format::Archive,
        },
        infer::MatcherType::Doc => match mime {
            m if m.contains("spreadsheet") || m.contains("excel") => Format::Excel,
            _ => Format::Binary,
        },
        infer::MatcherType::Text => return None,
        _ => Format::Binary,
    };
    Some(f)
}

/// `x.tgz`, `x.tar.gz`, `x.tar.zst`, ...: a tar inside a compressed stream.
fn is_compressed_tar_name(path: &Path, ext: &str) -> bool {
    matches!(ext, "tgz" | "tbz" | "tbz2" | "txz" | "tzst")
        || path
            .file_stem()
            .is_some_and(|stem| extension(Path::new(stem)) == "tar")
}

/// Text files have no NUL bytes (UTF-16 text, which has, is recognised before this),
/// and few other control bytes: random bytes have a tenth of them (C0 but tab, line
/// feed, carriage return, form feed and escape, and DEL), so a small binary file without
/// a NUL is still told apart — rather than taken for broken JSON when it starts with
/// `{` — while a text file's odd vertical tab or end-of-file mark is not.
fn looks_binary(head: &[u8]) -> bool {
    if memchr::memchr(0, head).is_some() {
        return true;
    }
    let controls = head
        .iter()
        .filter(|&&c| (c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b)) || c == 0x7f)
        .count();
    controls >= 2 && controls * 100 > head.len() * 3
}

fn strip_bom(b: &[u8]) -> &[u8] {
    b.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(b)
}

fn trim_ascii_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

fn starts_with_ignore_case(b: &[u8], prefix: &[u8]) -> bool {
    b.len() >= prefix.len() && b[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// Two or more lines that each hold one complete JSON value.
fn looks_jsonl(text: &[u8]) -> bool {
    let mut lines = text
        .split(|&c| c == b'\n')
        .map(|l| l.trim_ascii())
        .filter(|l| !l.is_empty());
    let mut complete = 0;
    for line in lines.by_ref().take(3) {
        if !(line.starts_with(b"{") || line.starts_with(b"["))
            || serde_json::from_slice::<serde::de::IgnoredAny>(line).is_err()
        {
            return false;
        }
        complete += 1;
    }
    complete >= 2
}

fn looks_json_array(trimmed: &[u8]) -> bool {
    // "[" followed by a JSON value start, not a Markdown link or an INI section.
    let rest = trim_ascii_start(&trimmed[1..]);
    matches!(
        rest.first(),
        Some(b'{' | b'[' | b'"' | b']' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n')
    ) && !rest.contains(&b'=')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_people_write_map_to_the_stored_ones() {
        let f = |s| Format::from_user(s).map(Format::as_str);
        assert_eq!(f("xlsx").unwrap(), "excel");
        assert_eq!(f("excel").unwrap(), "excel");
        assert_eq!(f(".CSV").unwrap(), "csv");
        assert_eq!(f("parquet").unwrap(), "parquet");
        assert_eq!(f("db").unwrap(), "sqlite");
        assert_eq!(f("fixed-width").unwrap(), "fixed-width");
        let e = f("parqet").unwrap_err().to_string();
        assert!(
            e.contains("\"parqet\"") && e.contains("csv, tsv") && e.contains("parquet"),
            "{e}"
        );
    }

    #[test]
    fn random_bytes_without_a_nul_are_binary_even_after_a_brace() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut binary = 0;
        for _ in 0..200 {
            let mut b: Vec<u8> = (0..rng.usize(64..512)).map(|_| rng.u8(1..=255)).collect();
            b[0] = b'{';
            binary += usize::from(detect(Path::new("x.bin"), &b, b.len() as u64) == Format::Binary);
        }
        assert_eq!(binary, 200);
        // A text file with a stray control byte or two is still text.
        let csv = b"id,name,city,note\n1,caf\xe9,Paris,open late\x0b\n2,th\xe9,Lyon,closed on Mondays\n3,n\xe8gre,Nice,terrace\n4,cr\xeape,Lille,by the station\n5,gl\xe2ce,Metz,cash only\x1a\n";
        assert_eq!(
            detect(Path::new("x.txt"), csv, csv.len() as u64),
            Format::Csv
        );
    }

    #[test]
    fn a_lone_sentence_is_text_and_a_lone_header_a_table() {
        let readme =
            b"Wildfire incidents reported to the state fire agency; perimeters are not included.\n";
        assert_eq!(detect(Path::new("README.txt"), readme, 100), Format::Text);
        let notes = b"County population estimates and income, one file per state. Vintage 2022.\n";
        assert_eq!(detect(Path::new("README"), notes, 100), Format::Text);
        let header = b"state;median household income;population\n";
        assert_eq!(detect(Path::new("empty.txt"), header, 100), Format::Csv);
    }

    #[test]
    fn content_beats_extension() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(detect(Path::new("x.csv"), png, 100), Format::Image);
        let pdf = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj";
        assert_eq!(detect(Path::new("x.txt"), pdf, 100), Format::Pdf);
        let jpeg = b"\xFF\xD8\xFF\xE0\0\x10JFIF\0";
        assert_eq!(detect(Path::new("x"), jpeg, 100), Format::Image);
        let svg = b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>";
        assert_eq!(detect(Path::new("a.svg"), svg, 40), Format::Image);
        assert_eq!(detect(Path::new("x.csv"), b"", 0), Format::Empty);
        assert_eq!(detect(Path::new("x.bin"), b"PAR1\0\0", 10), Format::Parquet);
        assert_eq!(detect(Path::new("x.csv"), b"a\0b", 3), Format::Binary);
        assert_eq!(
            detect(Path::new("a.npy"), b"\x93NUMPY\x01\x00", 10),
            Format::Npy
        );
        assert_eq!(
            detect(Path::new("a.nc"), b"CDF\x01\0\0\0\0", 10),
            Format::Scientific
        );
        assert_eq!(
            detect(Path::new("a.h5"), b"\x89HDF\r\n\x1a\n\0", 10),
            Format::Scientific
        );
        assert_eq!(
            detect(Path::new("a.npz"), b"PK\x03\x04\x14\0\0\0\0\0", 10),
            Format::Npy
        );
        let gz = b"\x1f\x8b\x08\0\0\0\0\0\0\x03";
        assert_eq!(detect(Path::new("a.csv.gz"), gz, 10), Format::Compressed);
        assert_eq!(detect(Path::new("a.tar.gz"), gz, 10), Format::Archive);
        assert_eq!(detect(Path::new("a.TGZ"), gz, 10), Format::Archive);
        assert_eq!(
            detect(Path::new("a.zip"), b"PK\x03\x04\x14\0\0\0\0\0", 10),
            Format::Archive
        );
        assert_eq!(
            detect(Path::new("empty.zip"), b"PK\x05\x06\0\0\0\0", 22),
            Format::Archive
        );
    }

    #[test]
    fn sniffs_text_without_extension() {
        assert_eq!(
            detect(Path::new("data"), b"a,b,c\n1,2,3\n4,5,6\n", 18),
            Format::Csv
        );
        assert_eq!(
            detect(Path::new("data"), b"a\tb\n1\t2\n3\t4\n", 12),
            Format::Tsv
        );
        assert_eq!(
            detect(Path::new("x.json"), b"{\"a\":1}\n{\"a\":2}\n", 16),
            Format::Jsonl
        );
        assert_eq!(
            detect(Path::new("x.json"), b"{\"a\":\n1}\n", 9),
            Format::Json
        );
        assert_eq!(
            detect(Path::new("notes"), b"# Title\n\nSome text.\n", 20),
            Format::Markdown
        );
        assert_eq!(
            detect(Path::new("notes.txt"), b"just words here\nand more\n", 25),
            Format::Text
        );
        assert_eq!(detect(Path::new("x"), b"[1, 2, 3]", 9), Format::Json);
        assert_eq!(detect(Path::new("c.yml"), b"a: 1\n", 5), Format::Yaml);
        assert_eq!(detect(Path::new("c.toml"), b"a = 1\n", 6), Format::Toml);
        assert_eq!(
            detect(Path::new("d"), b"<?xml version=\"1.0\"?><a/>", 26),
            Format::Xml
        );
    }

    #[test]
    fn format_names_round_trip() {
        for &f in Format::ALL {
            assert_eq!(Format::parse(f.as_str()), Some(f));
        }
    }
}
