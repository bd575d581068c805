//! GeoPackage metadata: which tables are feature, tile or attribute layers, their
//! geometry columns and spatial reference systems (OGC GeoPackage 1.x `gpkg_*` tables).

use rusqlite::Connection;
use std::collections::HashMap;

/// What a GeoPackage says about one of its tables.
#[derive(Debug, Default)]
pub(super) struct Layer {
    /// `gpkg_contents.data_type`: features, tiles, attributes (or an extension's).
    pub data_type: String,
    /// Notes for the table: geometry columns, extent.
    pub notes: Vec<String>,
}

/// The GeoPackage layers, by lowercased table name (GeoPackage names match SQLite's
/// case-insensitive identifiers).
#[derive(Debug, Default)]
pub(super) struct GeoPackage {
    pub layers: HashMap<String, Layer>,
}

impl GeoPackage {
    /// The layer of `table`, if the GeoPackage lists it.
    pub fn layer(&self, table: &str) -> Option<&Layer> {
        self.layers.get(&table.to_lowercase())
    }

    /// The table kind to show for `table`.
    pub fn kind(&self, table: &str) -> Option<&'static str> {
        self.layer(table).map(|l| match l.data_type.as_str() {
            "features" => "feature layer",
            "tiles" => "tile layer",
            "attributes" => "attribute table",
            _ => "table",
        })
    }

    /// The file-level note: "GeoPackage: 2 feature layers, 1 tile layer".
    pub fn summary(&self) -> String {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for l in self.layers.values() {
            let what = match l.data_type.as_str() {
                "features" => "feature layer",
                "tiles" => "tile layer",
                "attributes" => "attribute table",
                _ => "other table",
            };
            match counts.iter_mut().find(|(w, _)| *w == what) {
                Some(c) => c.1 += 1,
                None => counts.push((what, 1)),
            }
        }
        counts.sort();
        let parts: Vec<String> = counts
            .iter()
            .map(|(w, n)| format!("{n} {w}{}", if *n == 1 { "" } else { "s" }))
            .collect();
        if parts.is_empty() {
            "GeoPackage".into()
        } else {
            format!("GeoPackage: {}", parts.join(", "))
        }
    }
}

/// "EPSG:4326" for a row of `gpkg_spatial_ref_sys`; "undefined" for the spec's
/// undefined systems (organization NONE, ids -1 and 0).
fn srs_name(org: &str, code: i64) -> String {
    if org.eq_ignore_ascii_case("none") {
        "undefined".into()
    } else {
        format!("{}:{code}", org.to_uppercase())
    }
}

fn num(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0');
    s.trim_end_matches('.').to_string()
}

/// Reads the GeoPackage tables. A missing or odd metadata table leaves its part out:
/// the layers themselves are still described as tables.
pub(super) fn read(conn: &Connection) -> GeoPackage {
    let mut srs: HashMap<i64, String> = HashMap::new();
    let _ = query_each(
        conn,
        "SELECT srs_id, organization, organization_coordsys_id FROM gpkg_spatial_ref_sys",
        |r| {
            let id: i64 = r.get(0)?;
            let org: String = r.get(1)?;
            let code: i64 = r.get(2)?;
            srs.insert(id, srs_name(&org, code));
            Ok(())
        },
    );
    let srs_of = |id: Option<i64>| match id {
        Some(id) => srs
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("srs_id {id}")),
        None => "unknown".into(),
    };
    let mut gpkg = GeoPackage::default();
    let _ = query_each(
        conn,
        "SELECT table_name, data_type, min_x, min_y, max_x, max_y, srs_id FROM gpkg_contents",
        |r| {
            let name: String = r.get(0)?;
            let data_type: String = r.get(1)?;
            let b: [Option<f64>; 4] = [r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?];
            let srs_id: Option<i64> = r.get(6)?;
            let mut notes = Vec::new();
            if let [Some(x0), Some(y0), Some(x1), Some(y1)] = b {
                notes.push(format!(
                    "extent x {} … {}, y {} … {} ({})",
                    num(x0),
                    num(x1),
                    num(y0),
                    num(y1),
                    srs_of(srs_id)
                ));
            }
            gpkg.layers
                .insert(name.to_lowercase(), Layer { data_type, notes });
            Ok(())
        },
    );
    let _ = query_each(
        conn,
        "SELECT table_name, column_name, geometry_type_name, srs_id, z, m \
         FROM gpkg_geometry_columns",
        |r| {
            let table: String = r.get(0)?;
            let column: String = r.get(1)?;
            let geometry: String = r.get(2)?;
            let srs_id: Option<i64> = r.get(3)?;
            let z: Option<i64> = r.get(4)?;
            let m: Option<i64> = r.get(5)?;
            // z and m: 0 prohibited, 1 mandatory, 2 optional.
            let zm = match (z, m) {
                (Some(1), Some(1)) => " ZM",
                (Some(1), _) => " Z",
                (_, Some(1)) => " M",
                _ => "",
            };
            let note = format!(
                "geometry column {column}: {}{zm}, SRS {}",
                geometry.to_uppercase(),
                srs_of(srs_id)
            );
            let layer = gpkg
                .layers
                .entry(table.to_lowercase())
                .or_insert_with(|| Layer {
                    data_type: "features".into(),
                    notes: Vec::new(),
                });
            // The geometry comes before the extent.
            layer.notes.insert(0, note);
            Ok(())
        },
    );
    gpkg
}

fn query_each(
    conn: &Connection,
    sql: &str,
    mut f: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(sql)?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        // One bad metadata row (a NULL where the spec wants a value) skips that row.
        let _ = f(r);
    }
    Ok(())
}
