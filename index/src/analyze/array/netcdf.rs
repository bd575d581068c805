//! NetCDF classic headers (CDF-1 classic, CDF-2 64-bit offset, CDF-5 64-bit data):
//! dimensions, global attributes, and variables with their types, shapes and attributes.
//!
//! Parsed by hand: the header is small and fully specified, and the one pure-Rust crate
//! (`netcdf3`) reads only from a path (not from an archive member in memory), lacks
//! CDF-5, re-parses its buffer from the start for every KiB it adds, and preallocates
//! lists with counts taken from the file.

use crate::analyze::model::{ArrayInfo, ArraySet};
use crate::text_util::take_chars;

/// Global attributes kept as notes.
const MAX_GLOBAL_ATTRS: usize = 20;
/// Characters kept of an attribute's value.
const MAX_VALUE_CHARS: usize = 200;
/// Numbers shown of a numeric attribute.
const MAX_VALUES: usize = 6;

const NC_DIMENSION: u32 = 10;
const NC_VARIABLE: u32 = 11;
const NC_ATTRIBUTE: u32 = 12;

/// The header's content so far: filled as parsing goes, so that a header that breaks
/// part way still yields what came before.
pub(crate) fn parse(bytes: &[u8]) -> (ArraySet, Result<(), String>) {
    let mut set = ArraySet::default();
    let result = parse_into(bytes, &mut set);
    (set, result)
}

fn parse_into(bytes: &[u8], set: &mut ArraySet) -> Result<(), String> {
    let version = match bytes.get(..4) {
        Some(b"CDF\x01") => 1,
        Some(b"CDF\x02") => 2,
        Some(b"CDF\x05") => 5,
        _ => return Err("not a NetCDF classic file".into()),
    };
    set.container = match version {
        1 => "NetCDF-3 classic",
        2 => "NetCDF-3 64-bit offset",
        _ => "NetCDF-3 64-bit data (CDF-5)",
    }
    .to_string();
    let mut c = Cursor {
        b: bytes,
        pos: 4,
        wide: version == 5,
    };
    let numrecs = c.count()?;
    let streaming = numrecs
        == if c.wide {
            u64::MAX
        } else {
            u64::from(u32::MAX)
        };

    // Dimensions; a length of 0 marks the record (unlimited) dimension.
    let mut record_dim = None;
    for i in 0..c.list(NC_DIMENSION)? {
        let name = c.name()?;
        let len = c.count()?;
        if len == 0 {
            record_dim = Some(i);
            set.dimensions
                .push((name, if streaming { 0 } else { numrecs }));
        } else {
            set.dimensions.push((name, len));
        }
    }
    if let Some(i) = record_dim {
        let name = set.dimensions.get(i as usize).map_or("", |d| d.0.as_str());
        set.notes.push(if streaming {
            format!("{name} is the record (unlimited) dimension; its length is not recorded")
        } else {
            format!("{name} is the record (unlimited) dimension")
        });
    }

    let globals = c.attributes()?;
    let shown = globals.len().min(MAX_GLOBAL_ATTRS);
    for (name, value) in &globals[..shown] {
        set.notes.push(format!("{name} = {value}"));
    }
    if globals.len() > shown {
        set.notes
            .push(format!("{} more global attributes", globals.len() - shown));
    }

    for _ in 0..c.list(NC_VARIABLE)? {
        let name = c.name()?;
        let rank = c.count()?;
        let mut shape = Vec::new();
        let mut dims = Vec::new();
        for _ in 0..rank {
            let id = c.count()?;
            let (dim, len) = usize::try_from(id)
                .ok()
                .and_then(|i| set.dimensions.get(i))
                .ok_or_else(|| {
                    format!("variable {name} uses dimension {id}, which does not exist")
                })?;
            dims.push(dim.clone());
            shape.push(*len);
        }
        let attrs = c
            .attributes()?
            .into_iter()
            .filter(|(k, _)| k == "units" || k == "long_name")
            .collect();
        let dtype = type_name(c.u32()?)?.to_string();
        let _vsize = c.count()?;
        let _begin = if version == 1 {
            c.u32()?.into()
        } else {
            c.u64()?
        };
        set.arrays.push(ArrayInfo {
            name,
            dtype,
            shape,
            dims,
            attrs,
        });
    }
    Ok(())
}

fn type_name(t: u32) -> Result<&'static str, String> {
    Ok(match t {
        1 => "byte",
        2 => "char",
        3 => "short",
        4 => "int",
        5 => "float",
        6 => "double",
        7 => "ubyte",
        8 => "ushort",
        9 => "uint",
        10 => "int64",
        11 => "uint64",
        t => return Err(format!("unknown type {t}")),
    })
}

fn type_size(t: u32) -> u64 {
    match t {
        1 | 2 | 7 => 1,
        3 | 8 => 2,
        4 | 5 | 9 => 4,
        _ => 8,
    }
}

/// Reads big-endian header fields. In CDF-5 every count and length is 64-bit; in the
/// others, 32-bit.
struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
    wide: bool,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: u64) -> Result<&'a [u8], String> {
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.pos.checked_add(n))
            .filter(|&end| end <= self.b.len())
            .ok_or_else(|| format!("header ends early (at byte {})", self.b.len()))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let s = self.take(4)?;
        Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let s = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(u64::from_be_bytes(a))
    }

    /// A NON_NEG count or length.
    fn count(&mut self) -> Result<u64, String> {
        if self.wide {
            self.u64()
        } else {
            self.u32().map(u64::from)
        }
    }

    /// A list header: its tag must be `tag`, or zero for an absent (empty) list.
    fn list(&mut self, tag: u32) -> Result<u64, String> {
        let t = self.u32()?;
        let n = self.count()?;
        match (t, n) {
            (0, 0) => Ok(0),
            (t, n) if t == tag => Ok(n),
            _ => Err(format!("bad list tag {t} at byte {}", self.pos)),
        }
    }

    /// Bytes padded to a 4-byte boundary.
    fn padded(&mut self, n: u64) -> Result<&'a [u8], String> {
        let padded = n.checked_add(3).ok_or("length overflows")? & !3;
        let s = self.take(padded)?;
        // n <= padded == s.len()
        Ok(&s[..n as usize])
    }

    fn name(&mut self) -> Result<String, String> {
        let n = self.count()?;
        Ok(String::from_utf8_lossy(self.padded(n)?).into_owned())
    }

    /// An attribute list, values rendered as text.
    fn attributes(&mut self) -> Result<Vec<(String, String)>, String> {
        let mut out = Vec::new();
        for _ in 0..self.list(NC_ATTRIBUTE)? {
            let name = self.name()?;
            let t = self.u32()?;
            type_name(t)?;
            let n = self.count()?;
            let len = n.checked_mul(type_size(t)).ok_or("attribute too large")?;
            let raw = self.padded(len)?;
            out.push((name, render_values(t, raw)));
        }
        Ok(out)
    }
}

/// Text of an attribute's values: the string for chars, the first few numbers otherwise.
fn render_values(t: u32, raw: &[u8]) -> String {
    if t == 2 {
        let s = String::from_utf8_lossy(raw);
        let s = s.trim_end_matches('\0');
        return take_chars(s, MAX_VALUE_CHARS);
    }
    let size = type_size(t) as usize;
    let mut values: Vec<String> = raw
        .chunks_exact(size)
        .take(MAX_VALUES)
        .map(|c| {
            let mut a = [0u8; 8];
            a[8 - size..].copy_from_slice(c);
            let u = u64::from_be_bytes(a);
            match t {
                1 => (c[0] as i8).to_string(),
                3 => (u as u16 as i16).to_string(),
                4 => (u as u32 as i32).to_string(),
                5 => f32::from_bits(u as u32).to_string(),
                6 => f64::from_bits(u).to_string(),
                10 => (u as i64).to_string(),
                _ => u.to_string(),
            }
        })
        .collect();
    if raw.len() / size > MAX_VALUES {
        values.push("…".into());
    }
    values.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use netcdf3::{DataSet, FileWriter, Version};

    /// A classic file written by the `netcdf3` crate.
    fn written(version: Version) -> Vec<u8> {
        let mut ds = DataSet::new();
        ds.set_unlimited_dim("time", 2).unwrap();
        ds.add_fixed_dim("lat", 3).unwrap();
        ds.add_fixed_dim("lon", 4).unwrap();
        ds.add_global_attr_string("title", "Sea surface temperature")
            .unwrap();
        ds.add_global_attr_f64("version", vec![1.5, 2.0]).unwrap();
        ds.add_var_f32("lat", &["lat"]).unwrap();
        ds.add_var_attr_string("lat", "units", "degrees_north")
            .unwrap();
        ds.add_var_f64("sst", &["time", "lat", "lon"]).unwrap();
        ds.add_var_attr_string("sst", "units", "K").unwrap();
        ds.add_var_attr_string("sst", "long_name", "sea surface temperature")
            .unwrap();
        ds.add_var_attr_f64("sst", "_FillValue", vec![-999.0])
            .unwrap();
        ds.add_var_i32("flags", &["lon"]).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("sst.nc");
        let mut w = FileWriter::create_new(&path).unwrap();
        w.set_def(&ds, version, 0).unwrap();
        w.write_var_f32("lat", &[10.0, 20.0, 30.0]).unwrap();
        w.write_var_f64("sst", &[280.0; 24]).unwrap();
        w.write_var_i32("flags", &[0, 1, 2, 3]).unwrap();
        w.close().unwrap();
        std::fs::read(path).unwrap()
    }

    fn check(set: &ArraySet) {
        assert_eq!(
            set.dimensions,
            [("time".into(), 2), ("lat".into(), 3), ("lon".into(), 4)]
        );
        let names: Vec<&str> = set.arrays.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["lat", "sst", "flags"]);
        let sst = &set.arrays[1];
        assert_eq!(sst.dtype, "double");
        assert_eq!(sst.shape, [2, 3, 4]);
        assert_eq!(sst.dims, ["time", "lat", "lon"]);
        assert_eq!(
            sst.attrs,
            [
                ("units".into(), "K".into()),
                ("long_name".into(), "sea surface temperature".into())
            ]
        );
        assert_eq!(set.arrays[0].dtype, "float");
        assert_eq!(
            set.arrays[0].attrs,
            [("units".into(), "degrees_north".into())]
        );
        assert_eq!(set.arrays[2].dtype, "int");
        assert_eq!(
            set.notes,
            [
                "time is the record (unlimited) dimension",
                "title = Sea surface temperature",
                "version = 1.5, 2"
            ]
        );
    }

    #[test]
    fn reads_classic_and_64_bit_offset_headers() {
        for (version, container) in [
            (Version::Classic, "NetCDF-3 classic"),
            (Version::Offset64Bit, "NetCDF-3 64-bit offset"),
        ] {
            let (set, result) = parse(&written(version));
            result.unwrap();
            assert_eq!(set.container, container);
            check(&set);
        }
    }

    /// The CDF-1 header `bytes` rewritten as CDF-5: every count, length, dimension id and
    /// vsize widened to 64 bits, offsets to 64 bits (what netCDF-C's v1hpg.c writes).
    fn widen(bytes: &[u8]) -> Vec<u8> {
        let mut c = Cursor {
            b: bytes,
            pos: 4,
            wide: false,
        };
        let mut out = b"CDF\x05".to_vec();
        let wide = |out: &mut Vec<u8>, n: u64| out.extend(n.to_be_bytes());
        let numrecs = c.count().unwrap();
        wide(&mut out, numrecs);
        let list = |c: &mut Cursor, out: &mut Vec<u8>| {
            let tag = c.u32().unwrap();
            out.extend(tag.to_be_bytes());
            let n = c.count().unwrap();
            out.extend(n.to_be_bytes());
            n
        };
        let name = |c: &mut Cursor, out: &mut Vec<u8>| {
            let n = c.count().unwrap();
            out.extend(n.to_be_bytes());
            out.extend(c.take((n + 3) & !3).unwrap());
        };
        let attrs = |c: &mut Cursor, out: &mut Vec<u8>| {
            for _ in 0..list(c, out) {
                name(c, out);
                let t = c.u32().unwrap();
                out.extend(t.to_be_bytes());
                let n = c.count().unwrap();
                out.extend(n.to_be_bytes());
                out.extend(c.take((n * type_size(t) + 3) & !3).unwrap());
            }
        };
        for _ in 0..list(&mut c, &mut out) {
            name(&mut c, &mut out);
            let len = c.count().unwrap();
            wide(&mut out, len);
        }
        attrs(&mut c, &mut out);
        for _ in 0..list(&mut c, &mut out) {
            name(&mut c, &mut out);
            let rank = c.count().unwrap();
            wide(&mut out, rank);
            for _ in 0..rank {
                let id = c.count().unwrap();
                wide(&mut out, id);
            }
            attrs(&mut c, &mut out);
            let t = c.u32().unwrap();
            out.extend(t.to_be_bytes());
            let vsize = c.count().unwrap();
            wide(&mut out, vsize);
            let begin = c.u32().unwrap();
            wide(&mut out, u64::from(begin));
        }
        out
    }

    #[test]
    fn reads_cdf5_headers() {
        let (set, result) = parse(&widen(&written(Version::Classic)));
        result.unwrap();
        assert_eq!(set.container, "NetCDF-3 64-bit data (CDF-5)");
        check(&set);
    }

    #[test]
    fn broken_headers_keep_what_came_before() {
        let bytes = written(Version::Classic);
        // Every prefix parses without panicking; cut inside the variables, the
        // dimensions and earlier variables survive.
        for cut in 0..bytes.len() {
            let _ = parse(&bytes[..cut]);
        }
        let sst_at = bytes.windows(3).position(|w| w == b"sst").unwrap();
        let (set, result) = parse(&bytes[..sst_at + 20]);
        assert!(result.unwrap_err().contains("ends early"));
        assert_eq!(set.dimensions.len(), 3);
        assert_eq!(set.arrays.len(), 1);
        // A dimension count far beyond the file is an error, not an allocation.
        let mut huge = b"CDF\x05".to_vec();
        huge.extend(0u64.to_be_bytes());
        huge.extend(NC_DIMENSION.to_be_bytes());
        huge.extend(u64::MAX.to_be_bytes());
        assert!(parse(&huge).1.is_err());
        assert!(parse(b"CDF\x03").1.is_err());
    }
}
