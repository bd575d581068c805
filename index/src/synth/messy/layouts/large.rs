//! Files that test honest figures: a CSV past the read budget, a Parquet file past the
//! distinct cap.

use super::*;

/// Hourly counts of a year at twelve stations: a CSV larger than [`super::SMALL_BUDGET`],
/// its largest count late in the file.
pub(super) fn large_csv() -> File {
    let mut rng = Rng::with_seed(11);
    let mut s = String::from("station_id,date,hour,vehicles,avg_speed_kmh\n");
    let (mut vehicles, mut speed) = (vec![], vec![]);
    let first = day(2023, 1, 1);
    for d in 0..365u64 {
        let date = iso(first + Days::new(d));
        for hour in 0..24i64 {
            let rush = if (7..10).contains(&hour) || (16..19).contains(&hour) {
                4
            } else {
                1
            };
            for st in 0..12 {
                let v = if d == 350 && hour == 17 && st == 5 {
                    9_873
                } else {
                    rng.i64(20..900) * rush
                };
                let k = rng.i64(300..1_100);
                let _ = writeln!(
                    s,
                    "ATR-{:04},{date},{hour},{v},{}.{}",
                    400 + st * 7,
                    k / 10,
                    k % 10
                );
                vehicles.push(v);
                speed.push(k);
            }
        }
    }
    let facts = Expected::new("traffic/hourly_vehicle_counts.csv", "honest", Some("csv"))
        .delimiter(",")
        .sampled()
        .coverage("2023-01-01", "2023-12-31")
        .table(TableFacts::new(
            365 * 24 * 12,
            vec![
                Column::new("station_id", Kind::Text).distinct(12),
                Column::new("date", Kind::Date)
                    .range("2023-01-01", "2023-12-31")
                    .date_format("%Y-%m-%d"),
                Column::new("hour", Kind::Integer).range(0, 23).distinct(24),
                ints("vehicles", &vehicles),
                decimals("avg_speed_kmh", &speed, 10.0),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Taxi trips in three row groups of 10,000: 30,000 distinct trip ids, a fare column
/// with nulls. Written with the parquet crate's low-level writer (no Arrow dependency).
pub(in crate::synth::messy) fn parquet_trips(dir: &Path) -> io::Result<Expected> {
    use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use std::sync::Arc;
    const ZONES: [&str; 20] = [
        "JFK Airport",
        "LaGuardia Airport",
        "Midtown Center",
        "Midtown East",
        "Upper East Side North",
        "Upper East Side South",
        "Upper West Side South",
        "Times Sq/Theatre District",
        "Penn Station/Madison Sq West",
        "Murray Hill",
        "Union Sq",
        "East Village",
        "West Village",
        "Clinton East",
        "Lincoln Square East",
        "Gramercy",
        "Lenox Hill West",
        "Financial District North",
        "TriBeCa/Civic Center",
        "Williamsburg (North Side)",
    ];
    const GROUP: i64 = 10_000;
    let rel = "taxi/yellow_trips.parquet";
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("a parent"))?;
    let err = |e: parquet::errors::ParquetError| io::Error::other(e.to_string());
    let schema = parquet::schema::parser::parse_message_type(
        "message trips { required int64 trip_id; required binary pickup_zone (UTF8); optional double fare_amount; }",
    )
    .map_err(err)?;
    let props = Arc::new(WriterProperties::builder().build());
    let file = std::fs::File::create(&path)?;
    let mut w = SerializedFileWriter::new(file, Arc::new(schema), props).map_err(err)?;
    let mut rng = Rng::with_seed(12);
    let (mut fares, mut nulls) = (Vec::new(), 0u64);
    for g in 0..3 {
        let ids: Vec<i64> = (0..GROUP).map(|i| 1_000_001 + g * GROUP + i).collect();
        let zones: Vec<ByteArray> = (0..GROUP)
            .map(|_| ByteArray::from(ZONES[rng.usize(..ZONES.len())]))
            .collect();
        let defs: Vec<i16> = (0..GROUP).map(|i| i16::from(i % 50 != 0)).collect();
        let cents: Vec<i64> = defs
            .iter()
            .filter(|&&d| d == 1)
            .map(|_| rng.i64(250..9_000))
            .collect();
        nulls += (GROUP as usize - cents.len()) as u64;
        let values: Vec<f64> = cents.iter().map(|&c| c as f64 / 100.0).collect();
        fares.extend(cents);
        let mut rg = w.next_row_group().map_err(err)?;
        let mut c = rg.next_column().map_err(err)?.expect("trip_id");
        c.typed::<Int64Type>()
            .write_batch(&ids, None, None)
            .map_err(err)?;
        c.close().map_err(err)?;
        let mut c = rg.next_column().map_err(err)?.expect("pickup_zone");
        c.typed::<ByteArrayType>()
            .write_batch(&zones, None, None)
            .map_err(err)?;
        c.close().map_err(err)?;
        let mut c = rg.next_column().map_err(err)?.expect("fare_amount");
        c.typed::<DoubleType>()
            .write_batch(&values, Some(&defs), None)
            .map_err(err)?;
        c.close().map_err(err)?;
        rg.close().map_err(err)?;
    }
    w.close().map_err(err)?;
    Ok(
        Expected::new(rel, "honest", Some("parquet")).table(TableFacts::new(
            3 * GROUP as u64,
            vec![
                // A key: an identifier with its range, no mean.
                Column::new("trip_id", Kind::Text)
                    .range(1_000_001, 1_000_000 + 3 * GROUP)
                    .distinct(3 * GROUP as u64)
                    .nulls(0),
                Column::new("pickup_zone", Kind::Text)
                    .distinct(ZONES.len() as u64)
                    .nulls(0),
                decimals("fare_amount", &fares, 100.0).nulls(nulls),
            ],
        )),
    )
}
