//! What values mean: missing-value markers among numbers (`M`, `(NA)`, `-`), quantities
//! with thousands separators beside codes that are identifiers (zero-padded FIPS codes,
//! an `ID` column), durations (`01:02:03` under a span's name, `1h 30m`, `PT1H30M`)
//! beside clock times of day, footnote marks on numbers grouped with spaces or dots
//! (`1 234 p`, `1.234,5 r`) beside distances and addresses. Each class sits beside its
//! negative control.

use super::*;

/// Daily station observations: `M` for a missing reading, `T` (trace) and `M` among
/// precipitation amounts, `(NA)` and `-` among counts; a quality code column of
/// letters with a few digits among them stays text.
pub(super) fn missing_markers() -> File {
    let mut rng = Rng::with_seed(52);
    let mut s = String::from("Date,Temp (F),Precip (in),Visitors,Quality\n");
    let (mut temp, mut precip, mut visitors) = (vec![], vec![], vec![]);
    let (mut temp_m, mut precip_m, mut precip_t, mut vis_na, mut vis_dash) = (0, 0, 0, 0, 0);
    const QUALITY: [&str; 6] = ["A", "B", "C", "E", "P", "Q"];
    let start = day(2023, 1, 1);
    let days = 60u64;
    for i in 0..days {
        let d = iso(start + Days::new(i));
        let t = if i % 11 == 4 {
            temp_m += 1;
            "M".to_string()
        } else {
            let tenths = rng.i64(180..760);
            temp.push(tenths);
            format!("{}.{}", tenths / 10, tenths % 10)
        };
        let p = match i % 9 {
            2 => {
                precip_m += 1;
                "M".to_string()
            }
            5 => {
                precip_t += 1;
                "T".to_string()
            }
            _ => {
                let h = rng.i64(0..180);
                precip.push(h);
                format!("{}.{:02}", h / 100, h % 100)
            }
        };
        let v = match i % 13 {
            3 => {
                vis_na += 1;
                "(NA)".to_string()
            }
            8 => {
                vis_dash += 1;
                "-".to_string()
            }
            _ => {
                let n = rng.i64(40..900);
                visitors.push(n);
                n.to_string()
            }
        };
        // Mostly letters: the digits are codes too.
        let q = if i % 7 == 0 {
            (i % 3 + 1).to_string()
        } else {
            QUALITY[rng.usize(0..QUALITY.len())].to_string()
        };
        let _ = writeln!(s, "{d},{t},{p},{v},{q}");
    }
    let end = iso(start + Days::new(days - 1));
    let facts = Expected::new("stations/daily_observations.csv", "values", Some("csv"))
        .delimiter(",")
        .coverage(&iso(start), &end)
        .table(TableFacts::new(
            days,
            vec![
                Column::new("Date", Kind::Date).range(iso(start), &end),
                decimals("Temp (F)", &temp, 10.0)
                    .unit("F")
                    .nulls(temp_m)
                    .missing("M", temp_m),
                decimals("Precip (in)", &precip, 100.0)
                    .unit("in")
                    .nulls(precip_m + precip_t)
                    .missing("M", precip_m)
                    .missing("T", precip_t),
                ints("Visitors", &visitors)
                    .nulls(vis_na + vis_dash)
                    .missing("(NA)", vis_na)
                    .missing("-", vis_dash),
                Column::new("Quality", Kind::Text),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Yearly production by county: quantities written with thousands separators (one
/// withheld as `(D)`) stay numbers with a range and the `Year` column, its last year
/// marked preliminary (`2021p`), gives the time coverage; the zero-padded FIPS codes
/// and the record IDs are identifiers.
pub(super) fn measures_and_identifiers() -> File {
    let mut rng = Rng::with_seed(53);
    let mut s = String::from("ID,FIPS,Year,Harvested acres,Production (bu)\n");
    let (mut acres, mut bushels, mut fips) = (vec![], vec![], vec![]);
    let mut withheld = 0;
    let mut id = 7_100i64;
    for county in 0..4i64 {
        let code = 1_001 + county * 2;
        fips.push(code);
        for year in 2010..=2021i64 {
            id += rng.i64(1..5);
            let a = rng.i64(1_200..98_000);
            let (b, b_text) = if (year + county) % 10 == 3 {
                withheld += 1;
                (None, "(D)".to_string())
            } else {
                let b = a * rng.i64(90..180);
                (Some(b), q(&thousands(b as u64, ',')))
            };
            let mark = if year == 2021 { "p" } else { "" };
            let _ = writeln!(
                s,
                "{id},{code:05},{year}{mark},{},{b_text}",
                q(&thousands(a as u64, ','))
            );
            acres.push(a);
            bushels.extend(b);
        }
    }
    let (lo, hi) = span(&fips);
    let facts = Expected::new("agriculture/county_production.csv", "values", Some("csv"))
        .delimiter(",")
        .coverage("2010-01-01", "2021-12-31")
        .table(TableFacts::new(
            48,
            vec![
                Column::new("ID", Kind::Text),
                Column::new("FIPS", Kind::Text)
                    .notation(&["zero-padded"])
                    .range(format!("{lo:05}"), format!("{hi:05}")),
                Column::new("Year", Kind::Integer)
                    .range(2010, 2021)
                    .notation(&["footnote \"p\""]),
                ints("Harvested acres", &acres).notation(&[COMMA]),
                ints("Production (bu)", &bushels)
                    .notation(&[COMMA])
                    .unit("bu")
                    .nulls(withheld)
                    .missing("(D)", withheld),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Service waits: `H:MM:SS` under `wait`, spelled `1h 30m` and ISO 8601 `PT…` spans are
/// durations in seconds; `Departure` times of day (`07:30`) and `Time` clock readings
/// (`07:30:00`, never a day long, under no span's name) stay text.
pub(super) fn durations() -> File {
    let mut rng = Rng::with_seed(54);
    let mut s = String::from("id,Departure,Time,wait,Repair,Outage\n");
    let (mut wait, mut repair, mut outage) = (vec![], vec![], vec![]);
    let rows = 40i64;
    for i in 0..rows {
        let dep = rng.i64(5 * 60..23 * 60);
        let clock = rng.i64(6 * 3600..20 * 3600);
        let w = rng.i64(3..5_000);
        let r = rng.i64(1..10) * 3600 + rng.i64(0..12) * 5 * 60;
        let o = rng.i64(0..3) * 3600 + rng.i64(1..60) * 60;
        let repair_text = if r % 3600 == 0 {
            format!("{}h", r / 3600)
        } else {
            format!("{}h {}m", r / 3600, r % 3600 / 60)
        };
        let outage_text = match (o / 3600, o % 3600 / 60) {
            (0, m) => format!("PT{m}M"),
            (h, m) => format!("PT{h}H{m}M"),
        };
        let _ = writeln!(
            s,
            "{},{:02}:{:02},{:02}:{:02}:{:02},{:02}:{:02}:{:02},{repair_text},{outage_text}",
            i + 1,
            dep / 60,
            dep % 60,
            clock / 3600,
            clock % 3600 / 60,
            clock % 60,
            w / 3600,
            w % 3600 / 60,
            w % 60
        );
        wait.push(w);
        repair.push(r);
        outage.push(o);
    }
    let secs = |name: &str, v: &[i64]| {
        let (lo, hi) = span(v);
        Column::new(name, Kind::Duration).range(lo, hi).unit("s")
    };
    let facts = Expected::new("service/desk_waits.csv", "values", Some("csv"))
        .delimiter(",")
        .table(TableFacts::new(
            rows as u64,
            vec![
                Column::new("id", Kind::Text),
                Column::new("Departure", Kind::Text),
                Column::new("Time", Kind::Text),
                secs("wait", &wait),
                secs("Repair", &repair),
                secs("Outage", &outage),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// A statistical office's table in its own convention: areas grouped with spaces
/// (`12 345`), yields with dot grouping and a decimal comma (`1.234,5`), some marked
/// provisional or estimated (`1 234 p`, `12 345(e)`, `1.234,5 r`) — numbers all the same;
/// beside them the negative control, depots given as distances with a mark (`3 km p`)
/// and street addresses, which stay text.
pub(super) fn footnotes_in_other_conventions() -> File {
    let mut rng = Rng::with_seed(55);
    let mut s = String::from("Region;Area (ha);Yield (kg/ha);Depot;Address\n");
    let (mut area, mut yields) = (vec![], vec![]);
    let rows = 30i64;
    for i in 0..rows {
        let a = rng.i64(1_000..99_000);
        let mark = match i % 10 {
            3 => " p",
            7 => "(e)",
            _ => "",
        };
        let y = rng.i64(10_000..99_999);
        let ymark = if i % 9 == 4 { " r" } else { "" };
        let _ = writeln!(
            s,
            "Region {};{}{mark};{},{}{ymark};{} km p;{} Harbour Road",
            i + 1,
            thousands(a as u64, ' '),
            thousands((y / 10) as u64, '.'),
            y % 10,
            1 + i % 7,
            10 + i * 3
        );
        area.push(a);
        yields.push(y);
    }
    let facts = Expected::new("agriculture/regional_yields.csv", "values", Some("csv"))
        .delimiter(";")
        .table(TableFacts::new(
            rows as u64,
            vec![
                Column::new("Region", Kind::Text),
                ints("Area (ha)", &area)
                    .unit("ha")
                    .notation(&[r#"thousands " ""#, r#"footnote "p" "(e)""#]),
                decimals("Yield (kg/ha)", &yields, 10.0)
                    .unit("kg/ha")
                    .notation(&[r#"thousands ".""#, r#"decimal ",""#, r#"footnote "r""#]),
                Column::new("Depot", Kind::Text),
                Column::new("Address", Kind::Text),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}
