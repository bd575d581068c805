//! NASA Common Data Format (CDF) headers: the variables, their element types, shapes and
//! record counts.
//!
//! Read by hand: no maintained pure-Rust CDF reader exists, and the header is a short
//! chain of big-endian records. The CDF Descriptor Record (after the 8-byte magic) points
//! to the Global Descriptor Record, which heads two linked lists of variable descriptor
//! records (rVDR: dimensions shared through the GDR; zVDR: dimensions of their own).
//! Version 3 files use 8-byte offsets and 256-byte names; versions 2.6–2.7 use 4-byte
//! offsets and 64-byte names. Whole-file compressed CDFs hold their header compressed,
//! and are only recognised.

use crate::analyze::model::{ArrayInfo, ArraySet};
use std::io::{Read, Seek, SeekFrom};

/// Variables listed at most (a chain longer than this is cut, with a note).
const MAX_VARIABLES: usize = 2000;
/// Dimensions a variable may have (the CDF library's own limit).
const MAX_DIMS: u32 = 10;

/// Where the header bytes come from: the file in memory, or read at offsets.
pub(super) enum Bytes<'a> {
    Memory(&'a [u8]),
    Seekable(Box<dyn crate::analyze::source::ReadSeek + 'a>),
}

impl Bytes<'_> {
    fn read(&mut self, at: u64, len: usize) -> Result<Vec<u8>, String> {
        let short = || format!("header cut at byte {at}: truncated file?");
        match self {
            Bytes::Memory(b) => {
                let start = usize::try_from(at).map_err(|_| short())?;
                b.get(start..start.checked_add(len).ok_or_else(short)?)
                    .map(<[u8]>::to_vec)
                    .ok_or_else(short)
            }
            Bytes::Seekable(f) => {
                let mut buf = vec![0; len];
                f.seek(SeekFrom::Start(at)).map_err(|e| e.to_string())?;
                f.read_exact(&mut buf).map_err(|_| short())?;
                Ok(buf)
            }
        }
    }
}

/// Field widths of a CDF version.
#[derive(Clone, Copy)]
struct Layout {
    /// Offsets are 8 bytes (v3) or 4 (v2).
    wide: bool,
    name_len: usize,
}

impl Layout {
    fn off(self) -> usize {
        if self.wide {
            8
        } else {
            4
        }
    }
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn be_off(b: &[u8], at: usize, l: Layout) -> u64 {
    if l.wide {
        u64::from_be_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
    } else {
        be_i32(b, at) as u32 as u64
    }
}

/// The name of a CDF data type code.
fn data_type(code: i32) -> String {
    match code {
        1 => "CDF_INT1",
        2 => "CDF_INT2",
        4 => "CDF_INT4",
        8 => "CDF_INT8",
        11 => "CDF_UINT1",
        12 => "CDF_UINT2",
        14 => "CDF_UINT4",
        21 => "CDF_REAL4",
        22 => "CDF_REAL8",
        31 => "CDF_EPOCH",
        32 => "CDF_EPOCH16",
        33 => "CDF_TT2000",
        41 => "CDF_BYTE",
        44 => "CDF_FLOAT",
        45 => "CDF_DOUBLE",
        51 => "CDF_CHAR",
        52 => "CDF_UCHAR",
        other => return format!("type {other}"),
    }
    .to_string()
}

/// Reads the variables of the CDF whose first 8 bytes are `head`.
pub(super) fn read(head: &[u8], mut bytes: Bytes) -> Result<ArraySet, String> {
    let mut set = ArraySet {
        container: "NASA CDF".to_string(),
        ..ArraySet::default()
    };
    let l = match head.get(..4) {
        Some(b"\xCD\xF3\x00\x01") => Layout {
            wide: true,
            name_len: 256,
        },
        Some(b"\xCD\xF2\x60\x02") => Layout {
            wide: false,
            name_len: 64,
        },
        _ => return Err("not a CDF file".into()),
    };
    if head.get(4..8) == Some(b"\xCC\xCC\x00\x01") {
        set.notes
            .push("variables not listed: the whole file is compressed".to_string());
        return Ok(set);
    }
    let o = l.off();
    // CDR: size, type (1), GDR offset, version, release, encoding, flags.
    let cdr = bytes.read(8, o + 4 + o + 16)?;
    if be_i32(&cdr, o) != 1 {
        return Err("no CDF descriptor record after the magic number".into());
    }
    let gdr_at = be_off(&cdr, o + 4, l);
    let at = o + 4 + o;
    let (version, release) = (be_i32(&cdr, at), be_i32(&cdr, at + 4));
    set.notes.push(format!("CDF version {version}.{release}"));
    if be_i32(&cdr, at + 12) & 1 == 0 {
        set.notes
            .push("column-major (values vary first along the first dimension)".into());
    }
    // GDR: size, type (2), rVDR head, zVDR head, ADR head, eof, NrVars, NumAttr, rMaxRec,
    // rNumDims, NzVars, UIR head, three reserved words, rDimSizes.
    let fixed = o + 4 + 4 * o + 20 + o + 12;
    let gdr = bytes.read(gdr_at, fixed)?;
    if be_i32(&gdr, o) != 2 {
        return Err(format!("no global descriptor record at byte {gdr_at}"));
    }
    let r_head = be_off(&gdr, o + 4, l);
    let z_head = be_off(&gdr, o + 4 + o, l);
    let counts = o + 4 + 4 * o;
    let r_dims_n = be_i32(&gdr, counts + 12);
    if !(0..=MAX_DIMS as i32).contains(&r_dims_n) {
        return Err(format!("{r_dims_n} rVariable dimensions: damaged header"));
    }
    let r_dims: Vec<u64> = if r_dims_n > 0 {
        let b = bytes.read(gdr_at + fixed as u64, 4 * r_dims_n as usize)?;
        (0..r_dims_n as usize)
            .map(|i| be_i32(&b, 4 * i).max(0) as u64)
            .collect()
    } else {
        Vec::new()
    };
    for (head, z) in [(r_head, false), (z_head, true)] {
        let mut next = head;
        let mut seen = std::collections::HashSet::new();
        while next != 0 {
            if set.arrays.len() >= MAX_VARIABLES || !seen.insert(next) {
                set.notes
                    .push(format!("variables listed: the first {}", set.arrays.len()));
                return Ok(set);
            }
            let (info, after) = vdr(&mut bytes, next, l, z, &r_dims)?;
            set.arrays.push(info);
            next = after;
        }
    }
    Ok(set)
}

/// One variable descriptor record at `at`: the variable and the next record's offset.
fn vdr(
    bytes: &mut Bytes,
    at: u64,
    l: Layout,
    z: bool,
    r_dims: &[u64],
) -> Result<(ArrayInfo, u64), String> {
    let o = l.off();
    // size, type, next, DataType, MaxRec, VXR head, VXR tail, Flags, SRecords, three
    // reserved words, NumElems, Num, CPR/SPR offset, BlockingFactor, Name, zNumDims.
    let name_at = o + 4 + o + 8 + 2 * o + 28 + o + 4;
    let b = bytes.read(at, name_at + l.name_len + if z { 4 } else { 0 })?;
    let kind = be_i32(&b, o);
    if kind != if z { 8 } else { 3 } {
        return Err(format!("no variable descriptor record at byte {at}"));
    }
    let next = be_off(&b, o + 4, l);
    let dtype = be_i32(&b, o + 4 + o);
    let max_rec = be_i32(&b, o + 4 + o + 4);
    let flags_at = o + 4 + o + 8 + 2 * o;
    let record_varies = be_i32(&b, flags_at) & 1 == 1;
    let elems = be_i32(&b, flags_at + 20);
    let raw = &b[name_at..name_at + l.name_len];
    let name =
        String::from_utf8_lossy(&raw[..raw.iter().position(|&c| c == 0).unwrap_or(raw.len())])
            .trim()
            .to_string();
    let (dims, varys_at) = if z {
        let n = be_i32(&b, name_at + l.name_len);
        if !(0..=MAX_DIMS as i32).contains(&n) {
            return Err(format!("{name}: {n} dimensions, damaged header"));
        }
        let d = bytes.read(at + (name_at + l.name_len + 4) as u64, 8 * n as usize)?;
        let sizes: Vec<u64> = (0..n as usize)
            .map(|i| be_i32(&d, 4 * i).max(0) as u64)
            .collect();
        (sizes, Some(d[4 * n as usize..].to_vec()))
    } else {
        let d = bytes.read(at + (name_at + l.name_len) as u64, 4 * r_dims.len())?;
        (r_dims.to_vec(), Some(d))
    };
    // Dimensions that do not vary hold one value whatever their declared size.
    let varys: Vec<bool> = varys_at
        .map(|v| (0..dims.len()).map(|i| be_i32(&v, 4 * i) != 0).collect())
        .unwrap_or_else(|| vec![true; dims.len()]);
    let records = (max_rec + 1).max(0) as u64;
    let mut shape = vec![if record_varies { records } else { 1 }];
    shape.extend(
        dims.iter()
            .zip(&varys)
            .map(|(&d, &v)| if v { d } else { 1 }),
    );
    let mut attrs = Vec::new();
    if !record_varies {
        attrs.push(("records".to_string(), "does not vary by record".to_string()));
    }
    let mut dtype = data_type(dtype);
    if matches!(dtype.as_str(), "CDF_CHAR" | "CDF_UCHAR") && elems > 1 {
        dtype = format!("{dtype}*{elems}");
    }
    Ok((
        ArrayInfo {
            name,
            dtype,
            shape,
            dims: Vec::new(),
            attrs,
        },
        next,
    ))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// One variable of a generated CDF: name, data type code, max record, sizes of its
    /// dimensions (zVariables) and whether its records vary.
    pub(crate) struct Var<'a>(pub &'a str, pub i32, pub i32, pub &'a [i32], pub bool);

    fn off(out: &mut Vec<u8>, v: u64, wide: bool) {
        if wide {
            out.extend_from_slice(&v.to_be_bytes());
        } else {
            out.extend_from_slice(&(v as u32).to_be_bytes());
        }
    }

    fn int(out: &mut Vec<u8>, v: i32) {
        out.extend_from_slice(&v.to_be_bytes());
    }

    /// A CDF header as the CDF library lays it out (version 3 when `wide`, else 2.6):
    /// magic, CDR, GDR, then one zVDR per variable; data records are not written.
    pub(crate) fn cdf(vars: &[Var], wide: bool) -> Vec<u8> {
        let o = if wide { 8 } else { 4 };
        let name_len = if wide { 256 } else { 64 };
        let mut out = if wide {
            b"\xCD\xF3\x00\x01\x00\x00\xFF\xFF".to_vec()
        } else {
            b"\xCD\xF2\x60\x02\x00\x00\xFF\xFF".to_vec()
        };
        let cdr_len = o + 4 + o + 36 + 256;
        let gdr_at = 8 + cdr_len as u64;
        // CDR
        off(&mut out, cdr_len as u64, wide);
        int(&mut out, 1);
        off(&mut out, gdr_at, wide);
        for v in [3, 9, 6, 3, 0, 0, 4, 0] {
            int(&mut out, v); // version, release, encoding, flags (row major), rfu, increment…
        }
        out.resize(8 + cdr_len, 0);
        // GDR
        let gdr_len = o + 4 + 4 * o + 20 + o + 12;
        let vdr_len = |v: &Var| o + 4 + o + 8 + 2 * o + 28 + o + 4 + name_len + 4 + 8 * v.3.len();
        let first = gdr_at + gdr_len as u64;
        off(&mut out, gdr_len as u64, wide);
        int(&mut out, 2);
        off(&mut out, 0, wide); // rVDR head
        off(&mut out, if vars.is_empty() { 0 } else { first }, wide);
        off(&mut out, 0, wide); // ADR head
        off(&mut out, 0, wide); // eof
        for v in [0, 0, -1, 0, vars.len() as i32] {
            int(&mut out, v);
        }
        off(&mut out, 0, wide); // UIR head
        for v in [0, -1, 0] {
            int(&mut out, v);
        }
        let mut at = first;
        for (i, v) in vars.iter().enumerate() {
            let len = vdr_len(v);
            let next = if i + 1 < vars.len() {
                at + len as u64
            } else {
                0
            };
            off(&mut out, len as u64, wide);
            int(&mut out, 8);
            off(&mut out, next, wide);
            int(&mut out, v.1);
            int(&mut out, v.2);
            off(&mut out, 0, wide); // VXR head
            off(&mut out, 0, wide); // VXR tail
            int(&mut out, i32::from(v.4));
            for x in [0, 0, -1, -1] {
                int(&mut out, x); // SRecords, rfuB, rfuC, rfuF
            }
            int(&mut out, if v.1 == 51 { 8 } else { 1 }); // NumElems
            int(&mut out, i as i32);
            off(&mut out, 0xFFFF_FFFF, wide); // CPR/SPR
            int(&mut out, 0);
            let mut name = v.0.as_bytes().to_vec();
            name.resize(name_len, 0);
            out.extend_from_slice(&name);
            int(&mut out, v.3.len() as i32);
            for &d in v.3 {
                int(&mut out, d);
            }
            for _ in v.3 {
                int(&mut out, -1);
            }
            at += len as u64;
        }
        out
    }

    fn listed(set: &ArraySet) -> Vec<(String, String, Vec<u64>)> {
        set.arrays
            .iter()
            .map(|a| (a.name.clone(), a.dtype.clone(), a.shape.clone()))
            .collect()
    }

    #[test]
    fn variables_and_shapes_of_version_3_and_2() {
        let vars = [
            Var("Epoch", 33, 1439, &[], true),
            Var("B_GSE", 21, 1439, &[3], true),
            Var("label_b", 51, 0, &[3], false),
            Var("spectra", 22, 99, &[32, 16], true),
        ];
        for wide in [true, false] {
            let bytes = cdf(&vars, wide);
            let set = read(&bytes[..8], Bytes::Memory(&bytes)).unwrap();
            let n = |s: &str| s.to_string();
            assert_eq!(
                listed(&set),
                [
                    (n("Epoch"), n("CDF_TT2000"), vec![1440]),
                    (n("B_GSE"), n("CDF_REAL4"), vec![1440, 3]),
                    (n("label_b"), n("CDF_CHAR*8"), vec![1, 3]),
                    (n("spectra"), n("CDF_REAL8"), vec![100, 32, 16]),
                ],
                "wide {wide}"
            );
            assert_eq!(set.notes[0], "CDF version 3.9");
        }
    }

    #[test]
    fn damaged_headers_are_errors_and_compressed_files_say_why() {
        let bytes = cdf(&[Var("x", 22, 9, &[2], true)], true);
        for cut in [12, 100, bytes.len() - 3] {
            assert!(
                read(&bytes[..8], Bytes::Memory(&bytes[..cut])).is_err(),
                "{cut}"
            );
        }
        let mut looped = bytes.clone();
        // The variable's "next" offset pointing at itself: listed once, then a note.
        let first = looped.len() - (8 + 4 + 8 + 8 + 16 + 28 + 8 + 4 + 256 + 4 + 8);
        let me = (first as u64).to_be_bytes();
        looped[first + 12..first + 20].copy_from_slice(&me);
        let set = read(&looped[..8], Bytes::Memory(&looped)).unwrap();
        assert_eq!(set.arrays.len(), 1);
        assert!(
            set.notes.iter().any(|n| n.contains("the first 1")),
            "{:?}",
            set.notes
        );
        let compressed = b"\xCD\xF3\x00\x01\xCC\xCC\x00\x01\0\0\0\0".to_vec();
        let set = read(&compressed[..8], Bytes::Memory(&compressed)).unwrap();
        assert!(set.arrays.is_empty());
        assert_eq!(
            set.notes,
            ["variables not listed: the whole file is compressed"]
        );
    }
}
