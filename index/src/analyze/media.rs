//! Images and PDF documents, described as [`MediaInfo`].
//!
//! Images: the kind comes from the magic bytes ("PNG image"), the pixel size from the
//! header only (`imagesize`, no decoding); SVG files give the size their root element
//! declares. PDFs: see [`pdf`].

mod pdf;

pub(crate) use pdf::PdfAnalyzer;

use super::{AnalyzeError, Analyzer, Content, Format, MediaInfo, Source};
use quick_xml::events::Event;

/// Bytes read to find a header's size when the head is not enough (a JPEG's frame header
/// may follow large EXIF and ICC segments).
const MAX_PROBE: usize = 4 * 1024 * 1024;

/// Describes raster images by their header and SVG files by their root element.
pub(crate) struct ImageAnalyzer;

impl Analyzer for ImageAnalyzer {
    fn name(&self) -> &'static str {
        "image"
    }
    fn version(&self) -> u32 {
        1
    }
    fn analyze(&self, src: &Source, _format: Format) -> Result<Content, AnalyzeError> {
        // `infer` also knows text types (XML): only its image matches count here.
        let mime = infer::get(src.head())
            .filter(|t| t.matcher_type() == infer::MatcherType::Image)
            .map(|t| t.mime_type());
        if mime.is_none() && looks_svg(src.head()) {
            return Ok(Content::Media(svg(src.head())));
        }
        let Some(kind) = image_kind(mime, src.head()) else {
            return Err(AnalyzeError::Malformed(
                "not a recognised image format".into(),
            ));
        };
        let mut info = MediaInfo {
            kind,
            ..MediaInfo::default()
        };
        if header_has_size(mime) {
            match pixel_size(src) {
                Ok((w, h)) => {
                    info.width = Some(w);
                    info.height = Some(h);
                }
                Err(e) => info
                    .notes
                    .push(format!("size not found in the header: {e}")),
            }
        }
        Ok(Content::Media(info))
    }
}

/// Human kind for a MIME type `infer` found; `imagesize`'s own sniffing otherwise.
fn image_kind(mime: Option<&str>, head: &[u8]) -> Option<String> {
    let name = match mime {
        Some("image/png") => "PNG image",
        Some("image/jpeg") => "JPEG image",
        Some("image/gif") => "GIF image",
        Some("image/webp") => "WebP image",
        Some("image/tiff") => "TIFF image",
        Some("image/bmp") => "BMP image",
        Some("image/heif") => "HEIF image",
        Some("image/avif") => "AVIF image",
        Some("image/jxl") => "JPEG XL image",
        Some("image/jp2") => "JPEG 2000 image",
        Some("image/vnd.ms-photo") => "JPEG XR image",
        Some("image/vnd.adobe.photoshop") => "Photoshop image",
        Some("image/vnd.microsoft.icon") => "icon",
        Some("image/x-canon-cr2") => "Canon CR2 raw image",
        Some("image/openraster") => "OpenRaster image",
        Some("image/vnd.djvu") => "DjVu document",
        Some("image/vnd.dwg") => "DWG drawing",
        Some(other) => return Some(format!("image ({other})")),
        None => {
            return imagesize::image_type(head)
                .ok()
                .map(|t| format!("{t:?} image"));
        }
    };
    Some(name.to_string())
}

/// Types whose header states the pixel size `imagesize` reads. Raw camera files, DjVu,
/// CAD drawings and OpenRaster zips do not (or not the size of the picture).
fn header_has_size(mime: Option<&str>) -> bool {
    !matches!(
        mime,
        Some(
            "image/x-canon-cr2"
                | "image/vnd.djvu"
                | "image/vnd.dwg"
                | "image/openraster"
                | "image/vnd.ms-photo"
                | "image/jp2"
        )
    )
}

/// Width and height from the header: the head first, a few MiB if that is not enough.
fn pixel_size(src: &Source) -> Result<(u32, u32), AnalyzeError> {
    let size = match imagesize::blob_size(src.head()) {
        Ok(s) => s,
        Err(first) if src.size() > src.head().len() as u64 => {
            let (bytes, _) = src.read_up_to(MAX_PROBE)?;
            imagesize::blob_size(&bytes).map_err(|_| AnalyzeError::Malformed(first.to_string()))?
        }
        Err(e) => return Err(AnalyzeError::Malformed(e.to_string())),
    };
    let w =
        u32::try_from(size.width).map_err(|_| AnalyzeError::Malformed("width overflows".into()))?;
    let h = u32::try_from(size.height)
        .map_err(|_| AnalyzeError::Malformed("height overflows".into()))?;
    if w == 0 || h == 0 {
        return Err(AnalyzeError::Malformed(format!(
            "header states {w}×{h} pixels"
        )));
    }
    Ok((w, h))
}

/// An SVG document: text whose first element is `<svg>`, after at most a declaration,
/// comments and a DOCTYPE.
fn looks_svg(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let head = &head[..head.len().min(4096)];
    let Some(i) = memchr::memmem::find(head, b"<svg") else {
        return false;
    };
    let before = &head[..i];
    before
        .iter()
        .all(|&c| c == b'\t' || c == b'\n' || c == b'\r' || c >= b' ')
        && before.trim_ascii_start().first().is_none_or(|&c| c == b'<')
        && before
            .windows(2)
            .filter(|w| w[0] == b'<')
            .all(|w| w[1] == b'?' || w[1] == b'!')
}

/// An SVG's declared size: `width`/`height` in pixels (or unitless), else the `viewBox`.
fn svg(head: &[u8]) -> MediaInfo {
    let mut info = MediaInfo {
        kind: "SVG image".into(),
        ..MediaInfo::default()
    };
    let text = String::from_utf8_lossy(head);
    let mut reader = quick_xml::Reader::from_str(&text);
    let root = loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) => break Some(e),
            Ok(Event::Eof) | Err(_) => break None,
            Ok(_) => {}
        }
    };
    let Some(root) = root else {
        info.notes.push("root element not readable".into());
        return info;
    };
    let (mut width, mut height, mut view_box) = (None, None, None);
    for a in root.attributes().flatten() {
        let v = a.value.trim().to_string();
        match a.key.as_ref() {
            "width" => width = Some(v),
            "height" => height = Some(v),
            "viewBox" => view_box = Some(v),
            _ => {}
        }
    }
    let px = |v: &Option<String>| {
        v.as_deref()
            .map(|s| s.strip_suffix("px").unwrap_or(s))
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|x| x.is_finite() && *x >= 1.0 && *x <= u32::MAX as f64)
            .map(|x| x.round() as u32)
    };
    info.width = px(&width);
    info.height = px(&height);
    if info.width.is_none() || info.height.is_none() {
        for (name, v) in [("width", &width), ("height", &height)] {
            if let Some(v) = v {
                info.notes.push(format!("{name} {v}"));
            }
        }
        let vb: Vec<f64> = view_box
            .as_deref()
            .unwrap_or("")
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .filter_map(|s| s.parse().ok())
            .collect();
        if let [_, _, w, h] = vb[..] {
            let ok = |x: f64| x.is_finite() && x >= 1.0 && x <= u32::MAX as f64;
            if ok(w) && ok(h) {
                info.width = Some(w.round() as u32);
                info.height = Some(h.round() as u32);
                info.notes.push("size from the viewBox (user units)".into());
            }
        }
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::describe;

    fn media(name: &str, bytes: Vec<u8>) -> MediaInfo {
        let d = describe(&Source::from_bytes(name, bytes));
        assert_eq!(d.format, Format::Image, "{name}");
        assert_eq!(d.analyzer, "image@1");
        assert!(d.error.is_none(), "{:?}", d.error);
        match d.content {
            Content::Media(m) => m,
            c => panic!("{c:?}"),
        }
    }

    fn png_bytes(w: u32, h: u32) -> Vec<u8> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().unwrap();
        let data: Vec<u8> = (0..w * h * 3).map(|i| (i % 251) as u8).collect();
        writer.write_image_data(&data).unwrap();
        writer.finish().unwrap();
        out
    }

    #[test]
    fn png_dimensions_from_a_real_file() {
        let bytes = png_bytes(37, 21);
        // The encoder's output decodes back: it is a real PNG.
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes.clone()));
        assert_eq!(decoder.read_info().unwrap().info().width, 37);
        // Named .csv: content decides.
        let m = media("pic.csv", bytes);
        assert_eq!(m.kind, "PNG image");
        assert_eq!((m.width, m.height), (Some(37), Some(21)));
        assert!(m.notes.is_empty());
    }

    fn segment(marker: u8, payload: &[u8]) -> Vec<u8> {
        let mut s = vec![0xFF, marker];
        s.extend_from_slice(&((payload.len() + 2) as u16).to_be_bytes());
        s.extend_from_slice(payload);
        s
    }

    #[test]
    fn jpeg_size_found_past_the_head() {
        // SOI, JFIF APP0, two large APP segments (like EXIF and ICC), then the frame
        // header beyond the first 64 KiB, then EOI.
        let mut j = vec![0xFF, 0xD8];
        j.extend(segment(0xE0, b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0"));
        j.extend(segment(0xE1, &[b'x'; 40_000]));
        j.extend(segment(0xE2, &[b'y'; 40_000]));
        // SOF0: precision 8, height 480, width 640, 3 components.
        j.extend(segment(
            0xC0,
            &[
                8, 0x01, 0xE0, 0x02, 0x80, 3, 1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1,
            ],
        ));
        j.extend([0xFF, 0xD9]);
        assert!(j.len() > 64 * 1024);
        let m = media("photo.jpg", j);
        assert_eq!(m.kind, "JPEG image");
        assert_eq!((m.width, m.height), (Some(640), Some(480)));
    }

    #[test]
    fn gif_dimensions() {
        // Header, logical screen 300×200 without a colour table, trailer.
        let mut g = b"GIF89a".to_vec();
        g.extend(300u16.to_le_bytes());
        g.extend(200u16.to_le_bytes());
        g.extend([0x00, 0x00, 0x00, 0x3B]);
        let m = media("anim.gif", g);
        assert_eq!(m.kind, "GIF image");
        assert_eq!((m.width, m.height), (Some(300), Some(200)));
    }

    #[test]
    fn broken_header_degrades_with_a_note() {
        let mut bytes = png_bytes(8, 8);
        bytes.truncate(18); // signature and the start of IHDR: no size.
        let m = media("cut.png", bytes);
        assert_eq!(m.kind, "PNG image");
        assert_eq!(m.width, None);
        assert!(m.notes[0].starts_with("size not found"), "{:?}", m.notes);
    }

    #[test]
    fn svg_size_from_attributes_or_view_box() {
        let m = media(
            "chart.svg",
            b"<?xml version=\"1.0\"?>\n<!-- c -->\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800px\" height=\"600\"><g/></svg>".to_vec(),
        );
        assert_eq!(m.kind, "SVG image");
        assert_eq!((m.width, m.height), (Some(800), Some(600)));
        let m = media(
            "icon.svg",
            b"<svg width=\"10cm\" viewBox=\"0 0 24 16.4\"></svg>".to_vec(),
        );
        assert_eq!((m.width, m.height), (Some(24), Some(16)));
        assert!(m.notes.iter().any(|n| n == "width 10cm"), "{:?}", m.notes);
    }

    #[test]
    fn garbage_is_an_error() {
        let src = Source::from_bytes("x.png", b"\x00\x01not an image".to_vec());
        assert!(ImageAnalyzer.analyze(&src, Format::Image).is_err());
    }

    #[test]
    fn every_cut_of_an_image_is_handled_without_panic() {
        let png = png_bytes(5, 3);
        for end in 1..png.len() {
            let src = Source::from_bytes("cut.png", png[..end].to_vec());
            if let Ok(Content::Media(m)) = ImageAnalyzer.analyze(&src, Format::Image) {
                // A size is only given when the header holds it whole.
                assert!(m.width.is_none() || (m.width, m.height) == (Some(5), Some(3)));
            }
        }
    }
}
