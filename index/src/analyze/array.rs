//! Arrays and variables: NumPy `.npy` and `.npz`, NetCDF classic (CDF-1, CDF-2, CDF-5),
//! NASA CDF, and HDF5 (only recognised here).
//!
//! Only headers are read: names, element types, shapes, dimensions and attributes say what
//! an array holds; its values are not profiled.

mod cdf;
mod netcdf;
mod npy;

use super::archive::zipfile;
use super::model::{ArrayInfo, ArraySet};
use super::render::human_size;
use super::{AnalyzeError, Analyzer, Content, Format, Source};
use std::io::{BufReader, Cursor, Read, Seek};
use std::path::Path;

/// Largest NetCDF header read (headers are usually a few KiB).
const NETCDF_HEADER_CAP: usize = 16 * 1024 * 1024;
/// Arrays listed per `.npz`.
const MAX_ARRAYS: usize = 1000;

/// Describes [`Format::Npy`] (`.npy`, `.npz`) and [`Format::Scientific`] files.
pub(crate) struct ArrayAnalyzer;

impl Analyzer for ArrayAnalyzer {
    fn name(&self) -> &'static str {
        "array"
    }
    fn version(&self) -> u32 {
        2
    }
    fn analyze(&self, src: &Source, _format: Format) -> Result<Content, AnalyzeError> {
        let head = src.head();
        let set = if head.starts_with(b"\x93NUMPY") {
            npy_file(src)?
        } else if zipfile::looks_like_zip(head) {
            match src.bytes() {
                Some(b) => npz(Cursor::new(b))?,
                None => npz(BufReader::new(src.seekable()?))?,
            }
        } else if matches!(head.get(..4), Some(b"CDF\x01" | b"CDF\x02" | b"CDF\x05")) {
            netcdf_file(src)?
        } else if head.starts_with(b"\x89HDF\r\n\x1a\n") {
            hdf5(src)
        } else if head.starts_with(b"\xCD\xF3\x00\x01") || head.starts_with(b"\xCD\xF2\x60\x02") {
            nasa_cdf(src)?
        } else {
            return Err(AnalyzeError::Malformed(
                "not a NumPy, NetCDF, HDF5 or CDF file".into(),
            ));
        };
        Ok(Content::Arrays(set))
    }
}

/// One array from its `.npy` header; `stored` is the byte count the header and data take
/// in the file (or zip member), to tell a truncated array.
fn array_info(name: String, h: &npy::Header, stored: u64, notes: &mut Vec<String>) -> ArrayInfo {
    let available = stored.saturating_sub(h.data_offset);
    match h.data_bytes() {
        Some(want) if available < want => notes.push(format!(
            "{name}: truncated, {} of the {} of data its header announces",
            human_size(available),
            human_size(want)
        )),
        None if h.item_size.is_none() => {
            notes.push(format!("{name}: elements are pickled Python objects"))
        }
        _ => {}
    }
    let attrs = if h.fortran_order {
        vec![("order".to_string(), "Fortran".to_string())]
    } else {
        Vec::new()
    };
    ArrayInfo {
        name,
        dtype: h.dtype.clone(),
        shape: h.shape.clone(),
        dims: Vec::new(),
        attrs,
    }
}

fn npy_file(src: &Source) -> Result<ArraySet, AnalyzeError> {
    let h = npy::read_header(&mut src.reader()?).map_err(AnalyzeError::Malformed)?;
    let name = src
        .path()
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "array".to_string());
    let mut notes = Vec::new();
    let info = array_info(name, &h, src.size(), &mut notes);
    Ok(ArraySet {
        container: "npy".to_string(),
        dimensions: Vec::new(),
        arrays: vec![info],
        notes,
    })
}

/// An `.npz`: a zip of `.npy` members (stored by `np.savez`, deflated by
/// `np.savez_compressed`). Only each member's header is decompressed.
fn npz<R: Read + Seek>(r: R) -> Result<ArraySet, AnalyzeError> {
    let mut zip = zipfile::open(r)?;
    let mut set = ArraySet {
        container: "npz".to_string(),
        ..ArraySet::default()
    };
    let mut others = Vec::new();
    let mut unlisted = 0;
    for i in 0..zip.len() {
        let Ok(entry) = zip.by_index_data(i) else {
            continue;
        };
        let path = zipfile::member_name(&entry);
        let size = entry.size();
        let Some(name) = path.strip_suffix(".npy").map(str::to_string) else {
            if entry.is_file() {
                others.push(path);
            }
            continue;
        };
        if set.arrays.len() >= MAX_ARRAYS {
            unlisted += 1;
            continue;
        }
        let header = zip
            .by_index(i)
            .map_err(|e| e.to_string())
            .and_then(|mut m| npy::read_header(&mut m));
        match header {
            Ok(h) => {
                let info = array_info(name, &h, size, &mut set.notes);
                set.arrays.push(info);
            }
            Err(e) => set.notes.push(format!("{path}: header unreadable ({e})")),
        }
    }
    if unlisted > 0 {
        set.notes.push(format!("{unlisted} more arrays"));
    }
    if !others.is_empty() {
        let shown: Vec<&str> = others.iter().take(10).map(String::as_str).collect();
        set.notes.push(format!(
            "{} other members: {}",
            others.len(),
            shown.join(", ")
        ));
    }
    Ok(set)
}

fn netcdf_file(src: &Source) -> Result<ArraySet, AnalyzeError> {
    let (bytes, cut) = src.read_up_to(NETCDF_HEADER_CAP)?;
    let (mut set, result) = netcdf::parse(&bytes);
    if let Err(e) = result {
        if set.dimensions.is_empty() && set.arrays.is_empty() && set.notes.is_empty() {
            return Err(AnalyzeError::Malformed(format!(
                "unreadable NetCDF header: {e}"
            )));
        }
        set.notes.push(if cut {
            format!(
                "the header goes on past {}: what it lists up to there is shown",
                human_size(NETCDF_HEADER_CAP as u64)
            )
        } else {
            format!("the header is truncated or malformed ({e}); what came before is shown")
        });
    }
    Ok(set)
}

fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// HDF5: recognised by its signature; its object tree is not walked.
fn hdf5(src: &Source) -> ArraySet {
    let mut notes = Vec::new();
    if let Some(v) = src.head().get(8) {
        notes.push(format!("superblock version {v}"));
    }
    if matches!(
        extension(src.path()).as_str(),
        "nc" | "nc4" | "cdf" | "netcdf"
    ) {
        notes.push("the extension suggests NetCDF-4, which is stored as HDF5".to_string());
    }
    notes.push("variables are not read: HDF5 files are only recognised".to_string());
    ArraySet {
        container: "HDF5".to_string(),
        notes,
        ..ArraySet::default()
    }
}

/// NASA's Common Data Format: the variables from the header chain ([`cdf`]).
fn nasa_cdf(src: &Source) -> Result<ArraySet, AnalyzeError> {
    let bytes = match src.bytes() {
        Some(b) => cdf::Bytes::Memory(b),
        None => cdf::Bytes::Seekable(src.seekable()?),
    };
    cdf::read(src.head(), bytes)
        .map_err(|e| AnalyzeError::Malformed(format!("unreadable CDF header: {e}")))
}

#[cfg(test)]
mod tests {
    use super::npy::tests::npy;
    use super::*;
    use crate::analyze::describe;
    use std::io::Write;
    use zip::write::SimpleFileOptions;

    fn arrays(src: &Source) -> ArraySet {
        let d = describe(src);
        assert_eq!(d.analyzer, "array@2");
        match d.content {
            Content::Arrays(a) => a,
            c => panic!("not arrays: {c:?} ({:?})", d.error),
        }
    }

    fn f8_le(values: &[f64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn npy_header_gives_name_dtype_and_shape() {
        let data = f8_le(&[0.5; 6]);
        let bytes = npy(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
            &data,
        );
        let src = Source::from_bytes("runs/weights.npy", bytes.clone());
        assert_eq!(describe(&src).format, Format::Npy);
        let set = arrays(&src);
        assert_eq!(set.container, "npy");
        assert_eq!(set.arrays.len(), 1);
        let a = &set.arrays[0];
        assert_eq!((a.name.as_str(), a.dtype.as_str()), ("weights", "<f8"));
        assert_eq!(a.shape, [2, 3]);
        assert!(a.attrs.is_empty() && set.notes.is_empty());

        // The same file cut short: described, with a note.
        let cut = Source::from_bytes("weights.npy", bytes[..bytes.len() - 8].to_vec());
        let set = arrays(&cut);
        assert_eq!(set.arrays[0].shape, [2, 3]);
        assert_eq!(
            set.notes,
            ["weights: truncated, 40 B of the 48 B of data its header announces"]
        );
        // Garbage after the magic: an error.
        let d = describe(&Source::from_bytes(
            "x.npy",
            b"\x93NUMPY\x01\x00\xff\xff{".to_vec(),
        ));
        assert!(d.error.is_some());
    }

    #[test]
    fn npz_lists_each_array_from_its_header() {
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let stored =
            SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        let deflated =
            SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        w.start_file("x.npy", stored).unwrap();
        w.write_all(&npy(
            "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }",
            &[1; 20],
        ))
        .unwrap();
        w.start_file("grid.npy", deflated).unwrap();
        w.write_all(&npy(
            "{'descr': '<f4', 'fortran_order': True, 'shape': (4, 2, 3), }",
            &[0; 96],
        ))
        .unwrap();
        w.start_file("README.txt", stored).unwrap();
        w.write_all(b"not an array").unwrap();
        let bytes = w.finish().unwrap().into_inner();

        let src = Source::from_bytes("data.npz", bytes);
        assert_eq!(describe(&src).format, Format::Npy);
        let set = arrays(&src);
        assert_eq!(set.container, "npz");
        let got: Vec<(&str, &str, &[u64])> = set
            .arrays
            .iter()
            .map(|a| (a.name.as_str(), a.dtype.as_str(), &a.shape[..]))
            .collect();
        assert_eq!(
            got,
            [("x", "<i4", &[5][..]), ("grid", "<f4", &[4, 2, 3][..])]
        );
        assert_eq!(set.arrays[1].attrs, [("order".into(), "Fortran".into())]);
        assert_eq!(set.notes, ["1 other members: README.txt"]);
    }

    #[test]
    fn netcdf_file_from_disk() {
        // A minimal classic file, written byte by byte as the specification's example
        // ("tiny": one dimension, one short variable with a units attribute).
        let mut b = b"CDF\x01".to_vec();
        let be = |b: &mut Vec<u8>, n: u32| b.extend(n.to_be_bytes());
        be(&mut b, 0);
        be(&mut b, 10);
        be(&mut b, 1);
        be(&mut b, 3);
        b.extend(b"dim\0");
        be(&mut b, 5);
        be(&mut b, 0);
        be(&mut b, 0);
        be(&mut b, 11);
        be(&mut b, 1);
        be(&mut b, 2);
        b.extend(b"vx\0\0");
        be(&mut b, 1);
        be(&mut b, 0);
        be(&mut b, 12);
        be(&mut b, 1);
        be(&mut b, 5);
        b.extend(b"units\0\0\0");
        be(&mut b, 2);
        be(&mut b, 1);
        b.extend(b"m\0\0\0");
        be(&mut b, 3);
        be(&mut b, 12);
        let begin = b.len() as u32 + 4;
        be(&mut b, begin);
        b.extend([0, 3, 0, 1, 0, 4, 0, 1, 0, 5, 0x80, 1]);
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("tiny.nc");
        std::fs::write(&path, &b).unwrap();
        let src = Source::open(&path, 0).unwrap();
        assert_eq!(describe(&src).format, Format::Scientific);
        let set = arrays(&src);
        assert_eq!(set.container, "NetCDF-3 classic");
        assert_eq!(set.dimensions, [("dim".to_string(), 5)]);
        let vx = &set.arrays[0];
        assert_eq!((vx.name.as_str(), vx.dtype.as_str()), ("vx", "short"));
        assert_eq!(
            (vx.shape.as_slice(), vx.dims.as_slice()),
            (&[5u64][..], &["dim".to_string()][..])
        );
        assert_eq!(vx.attrs, [("units".into(), "m".into())]);
        // The header cut inside the variable: what came before, with a note.
        let set = arrays(&Source::from_bytes("tiny.nc", b[..60].to_vec()));
        assert_eq!(set.dimensions.len(), 1);
        assert!(set.arrays.is_empty());
        assert!(set.notes[0].starts_with("the header is truncated or malformed"));
        // Nothing readable after the magic: an error.
        assert!(
            describe(&Source::from_bytes("x.nc", b"CDF\x01\0\0".to_vec()))
                .error
                .is_some()
        );
    }

    #[test]
    fn garbage_behind_known_magic_never_panics() {
        let mut ustar = vec![0u8; 257];
        ustar.extend(b"ustar\x0000");
        let magics: [(&str, &[u8]); 13] = [
            ("x.gz", b"\x1f\x8b\x08\x00"),
            ("x.zst", b"\x28\xb5\x2f\xfd"),
            ("x.bz2", b"BZh9"),
            ("x.xz", b"\xfd7zXZ\x00"),
            ("x.tar.gz", b"\x1f\x8b\x08\x00"),
            ("x.zip", b"PK\x03\x04"),
            ("x.tar", &ustar),
            ("x.npy", b"\x93NUMPY\x01\x00"),
            ("x.npz", b"PK\x03\x04"),
            ("x.nc", b"CDF\x01"),
            ("x.nc", b"CDF\x05"),
            ("x.h5", b"\x89HDF\r\n\x1a\n"),
            ("x.cdf", b"\xCD\xF3\x00\x01"),
        ];
        let mut rng = fastrand::Rng::with_seed(7);
        for (name, magic) in magics {
            for _ in 0..40 {
                let mut bytes = magic.to_vec();
                let n = rng.usize(0..2000);
                bytes.extend((0..n).map(|_| rng.u8(..)));
                // Only the absence of a panic is checked: garbage may or may not parse.
                let _ = describe(&Source::from_bytes(name, bytes));
            }
        }
    }

    #[test]
    fn hdf5_is_recognised_only() {
        let mut h5 = b"\x89HDF\r\n\x1a\n\x02\x08\x08\x00".to_vec();
        h5.resize(512, 0);
        let set = arrays(&Source::from_bytes("model.nc", h5));
        assert_eq!(set.container, "HDF5");
        assert!(set.arrays.is_empty());
        assert_eq!(set.notes[0], "superblock version 2");
        assert!(set.notes[1].contains("NetCDF-4"));
        assert!(set.notes[2].starts_with("variables are not read"));
        // The bare signature, nothing else: still no panic.
        let set = arrays(&Source::from_bytes("x.h5", b"\x89HDF\r\n\x1a\n".to_vec()));
        assert_eq!(
            set.notes,
            ["variables are not read: HDF5 files are only recognised"]
        );
    }

    /// A generated NASA CDF, in memory and on disk: its variables and shapes; a cut one
    /// is an error of the file.
    #[test]
    fn nasa_cdf_variables_are_listed() {
        use super::cdf::tests::{cdf, Var};
        let bytes = cdf(
            &[
                Var("Epoch", 31, 23, &[], true),
                Var("density", 44, 23, &[], true),
                Var("velocity", 45, 23, &[3], true),
            ],
            true,
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wind.cdf");
        std::fs::write(&path, &bytes).unwrap();
        for src in [
            Source::from_bytes("wind.cdf", bytes.clone()),
            Source::open(&path, 0).unwrap(),
        ] {
            let set = arrays(&src);
            assert_eq!(set.container, "NASA CDF");
            let got: Vec<(&str, &str, &[u64])> = set
                .arrays
                .iter()
                .map(|a| (a.name.as_str(), a.dtype.as_str(), a.shape.as_slice()))
                .collect();
            assert_eq!(
                got,
                [
                    ("Epoch", "CDF_EPOCH", &[24][..]),
                    ("density", "CDF_FLOAT", &[24][..]),
                    ("velocity", "CDF_DOUBLE", &[24, 3][..])
                ]
            );
        }
        let d = describe(&Source::from_bytes("wind.cdf", bytes[..200].to_vec()));
        assert!(
            d.error
                .as_deref()
                .unwrap()
                .starts_with("unreadable CDF header"),
            "{:?}",
            d.error
        );
    }
}
