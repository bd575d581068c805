//! Headerless fixed-width files named by a field list beside them, by content: the
//! list's positions fit the lines whatever the files are called, and fields written
//! without a blank between them (a date as `YYYYMMDD` from `I4,2I2`) are read apart.

use super::*;

/// Three yearly files written with a Fortran format, `obs_1998.dat` …, and `fields.txt`
/// listing each field's number, format code and name.
pub(super) fn fortran_listing() -> Vec<File> {
    let doc = "Buoy observation files obs_YYYY.dat: one record per day, no header line.\n\
Fortran format of a record, field by field:\n\
\n\
 1  I4    year      calendar year\n\
 2  I2    month     month of year\n\
 3  I2    day       day of month\n\
 4  F6.1  sst       sea surface temperature (degC)\n\
 5  F6.1  wspd      wind speed (m/s)\n\
 6  I5    wdir      wind direction (degrees)\n";
    let mut rng = Rng::with_seed(52);
    let mut out = Vec::new();
    let years = [1998, 1999, 2000];
    for y in years {
        let (first, last) = (day(y, 1, 1), day(y, 12, 31));
        let (mut sst, mut wspd, mut wdir) = (vec![], vec![], vec![]);
        let mut s = String::new();
        let mut d = first;
        while d <= last {
            let (t, w, dir) = (rng.i64(40..290), rng.i64(0..250), rng.i64(0..360));
            let _ = writeln!(
                s,
                "{}{:>6.1}{:>6.1}{dir:>5}",
                d.format("%Y%m%d"),
                t as f64 / 10.0,
                w as f64 / 10.0
            );
            sst.push(t);
            wspd.push(w);
            wdir.push(dir);
            d = d + Days::new(1);
        }
        let rows = sst.len() as u64;
        let facts = Expected::new(
            &format!("ocean/buoy/obs_{y}.dat"),
            "companion",
            Some("fixed-width"),
        )
        .companion("fields.txt")
        .table(TableFacts::new(
            rows,
            vec![
                Column::new("year", Kind::Integer).range(y, y),
                Column::new("month", Kind::Integer).range(1, 12),
                Column::new("day", Kind::Integer).range(1, 31),
                decimals("sst", &sst, 10.0).unit("degC"),
                decimals("wspd", &wspd, 10.0).unit("m/s"),
                ints("wdir", &wdir).unit("degrees"),
            ],
        ));
        out.push((facts.path.clone(), s.into_bytes(), facts));
    }
    let facts = Expected::new("ocean/buoy/fields.txt", "companion", None).companion("obs_1998.dat");
    out.push((facts.path.clone(), doc.as_bytes().to_vec(), facts));
    out
}

/// Two yearly files and `README_format.txt` giving each field's first and last
/// character; the date's fields touch.
pub(super) fn column_range_listing() -> Vec<File> {
    let doc = "Daily mean discharge, one file per year.\n\
\n\
Record layout (character columns, first and last):\n\
  1-7    site    gauge number\n\
  9-12   year\n\
  13-14  month\n\
  15-16  day\n\
  18-25  flow    mean daily discharge (m3/s)\n\
  27-27  flag    A = approved, E = estimated\n";
    const SITES: [i64; 2] = [1_015_000, 1_020_500];
    let mut rng = Rng::with_seed(53);
    let mut out = Vec::new();
    for y in [2019, 2020] {
        let (first, last) = (day(y, 1, 1), day(y, 12, 31));
        let mut flow = vec![];
        let mut s = String::new();
        for site in SITES {
            let mut d = first;
            while d <= last {
                let q = rng.i64(50..90_000);
                let flag = if rng.u8(0..10) == 0 { 'E' } else { 'A' };
                let _ = writeln!(
                    s,
                    "{site:>7} {} {:>8.2} {flag}",
                    d.format("%Y%m%d"),
                    q as f64 / 100.0
                );
                flow.push(q);
                d = d + Days::new(1);
            }
        }
        let rows = flow.len() as u64;
        let facts = Expected::new(
            &format!("hydro/daily/q{y}.dat"),
            "companion",
            Some("fixed-width"),
        )
        .companion("README_format.txt")
        .table(TableFacts::new(
            rows,
            vec![
                Column::new("site", Kind::Integer)
                    .range(SITES[0], SITES[1])
                    .distinct(2),
                Column::new("year", Kind::Integer).range(y, y),
                Column::new("month", Kind::Integer).range(1, 12),
                Column::new("day", Kind::Integer).range(1, 31),
                decimals("flow", &flow, 100.0).unit("m3/s"),
                Column::new("flag", Kind::Text).distinct(2),
            ],
        ));
        out.push((facts.path.clone(), s.into_bytes(), facts));
    }
    let facts =
        Expected::new("hydro/daily/README_format.txt", "companion", None).companion("q2019.dat");
    out.push((facts.path.clone(), doc.as_bytes().to_vec(), facts));
    out
}

/// Negative controls: numbered release notes and a field list too wide for the lines
/// beside a headerless file, which keeps `column_1 …`.
pub(super) fn not_a_field_list() -> Vec<File> {
    let mut rng = Rng::with_seed(54);
    let mut s = String::new();
    let (mut dose, mut temp) = (vec![], vec![]);
    for run in 1..=40i64 {
        let (d, t) = (rng.i64(5..900), rng.i64(150..400));
        let _ = writeln!(
            s,
            "{run:>3} {:>6.2} {:>5.1}",
            d as f64 / 100.0,
            t as f64 / 10.0
        );
        dose.push(d);
        temp.push(t);
    }
    let data = Expected::new("lab/runs/run_log.dat", "companion", Some("fixed-width")).table(
        TableFacts::new(
            40,
            vec![
                Column::new("column_1", Kind::Integer).range(1, 40),
                decimals("column_2", &dose, 100.0),
                decimals("column_3", &temp, 10.0),
            ],
        ),
    );
    let notes = "Release notes\n\
1 Fixed bug in the run reader\n\
2 Added export of runs\n\
3 Faster start\n";
    let wide = "run   1-3\ndose  5-10\ntemp  12-17\nnote  19-30\n";
    vec![
        (data.path.clone(), s.into_bytes(), data),
        (
            "lab/runs/CHANGES.txt".into(),
            notes.as_bytes().to_vec(),
            Expected::new("lab/runs/CHANGES.txt", "companion", None),
        ),
        (
            "lab/runs/layout.txt".into(),
            wide.as_bytes().to_vec(),
            Expected::new("lab/runs/layout.txt", "companion", None),
        ),
    ]
}
