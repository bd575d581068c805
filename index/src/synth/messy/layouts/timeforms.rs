//! Time written in other forms than dates, as statistics offices and science archives
//! publish it: months as `YYYYMM` numbers, fractional years, a year column beside a
//! day-of-year column, `YYYY-DDD` days, years with revision marks and fiscal years,
//! quarters (`2005-Q1`, a year beside `Q1`..`Q4`), date-times with a time scale
//! (`2014.03.23_20:24:00_TAI`) — and the negative controls that look alike but are not
//! time: six-digit ids, codes with a month part past 12, prices between 1800 and 2100,
//! codes with a quarter-like part, versions and network addresses.

use super::*;
use chrono::Datelike;

/// A long table of monthly sales: `Period` holds `YYYYMM` numbers, one row per region and
/// month.
pub(super) fn yyyymm_periods() -> File {
    const REGIONS: [&str; 4] = ["North", "South", "East", "West"];
    let mut rng = Rng::with_seed(521);
    let mut s = String::from("Period,Region,Sales\n");
    let mut sales = vec![];
    for y in 2015..=2017 {
        for m in 1..=12 {
            for r in REGIONS {
                let v = rng.i64(1_000..90_000);
                let _ = writeln!(s, "{y}{m:02},{r},{v}");
                sales.push(v);
            }
        }
    }
    let facts = Expected::new(
        "timeforms/retail_sales_by_month.csv",
        "time-forms",
        Some("csv"),
    )
    .delimiter(",")
    .coverage("2015-01-01", "2017-12-31")
    .table(TableFacts::new(
        144,
        vec![
            Column::new("Period", Kind::Date)
                .date_format("%Y%m")
                .range("2015-01-01", "2017-12-01"),
            Column::new("Region", Kind::Text).distinct(4),
            ints("Sales", &sales),
        ],
    ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// A monthly series with its time as fractional years (mid-month), as climate records
/// write it.
pub(super) fn fractional_years() -> File {
    let mut rng = Rng::with_seed(522);
    let mut s = String::from("decimal_date,co2_ppm\n");
    let mut ppm = vec![];
    for i in 0..48 {
        let t = 1987.0 + (i as f64 + 0.5) / 12.0;
        let v = 3480 + i * 2 + rng.i64(0..10);
        let _ = writeln!(s, "{t:.3},{}.{}", v / 10, v % 10);
        ppm.push(v);
    }
    let facts = Expected::new("timeforms/co2_monthly_means.csv", "time-forms", Some("csv"))
        .delimiter(",")
        .coverage("1987-01-16", "1990-12-16")
        .table(TableFacts::new(
            48,
            vec![
                Column::new("decimal_date", Kind::Float)
                    .date_format("fractional years")
                    .range("1987.042", "1990.958"),
                decimals("co2_ppm", &ppm, 10.0),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Daily readings with a year column and a day-of-year column, starting mid-year.
pub(super) fn year_and_day_of_year() -> File {
    let mut rng = Rng::with_seed(523);
    let mut s = String::from("year,doy,flux\n");
    let mut flux = vec![];
    let start = day(1998, 6, 1);
    for i in 0..400u64 {
        let d = start + Days::new(i);
        let v = rng.i64(10..500);
        let _ = writeln!(s, "{},{},{v}", d.year(), d.ordinal());
        flux.push(v);
    }
    let last = start + Days::new(399);
    let facts = Expected::new(
        "timeforms/station_flux_daily.csv",
        "time-forms",
        Some("csv"),
    )
    .delimiter(",")
    .coverage("1998-06-01", &iso(last))
    .table(TableFacts::new(
        400,
        vec![
            Column::new("year", Kind::Integer).range(1998, 1999),
            Column::new("doy", Kind::Integer).range(1, 365),
            ints("flux", &flux),
        ],
    ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Observation days written `YYYY-DDD`, every ninth day of one year.
pub(super) fn ordinal_days() -> File {
    let mut s = String::from("obs,level_cm\n");
    let mut level = vec![];
    for i in 1..=40i64 {
        let _ = writeln!(s, "2003-{:03},{}", i * 9, 100 + i * 3 % 17);
        level.push(100 + i * 3 % 17);
    }
    let facts = Expected::new("timeforms/gauge_levels.csv", "time-forms", Some("csv"))
        .delimiter(",")
        .coverage("2003-01-09", "2003-12-26")
        .table(TableFacts::new(
            40,
            vec![
                Column::new("obs", Kind::Date)
                    .date_format("%Y-%j")
                    .range("2003-01-09", "2003-12-26"),
                ints("level_cm", &level),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Annual figures whose last years carry revision marks (`r` revised, `p` provisional,
/// `e` estimated), and a row whose year is missing (`..`).
pub(super) fn years_with_marks() -> File {
    let mut rng = Rng::with_seed(524);
    let mut s = String::from("Year,Outlays\n");
    let mut outlays = vec![];
    for y in 1995..=2022 {
        let mark = match y {
            2020 => "r",
            2021 => "p",
            2022 => "e",
            _ => "",
        };
        let v = rng.i64(100_000..900_000);
        let _ = writeln!(s, "{y}{mark},{v}");
        outlays.push(v);
        if y == 2004 {
            let v = rng.i64(100_000..900_000);
            let _ = writeln!(s, "..,{v}");
            outlays.push(v);
        }
    }
    let facts = Expected::new("timeforms/federal_outlays.csv", "time-forms", Some("csv"))
        .delimiter(",")
        .coverage("1995-01-01", "2022-12-31")
        .table(TableFacts::new(
            29,
            vec![
                // The marks are footnotes (the measures rule) and `..` a missing marker:
                // the years stay numbers, and give the coverage.
                Column::new("Year", Kind::Integer)
                    .notation(&[r#"footnote "r" "p" "e""#])
                    .missing("..", 1)
                    .range(1995, 2022),
                ints("Outlays", &outlays),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Spending by fiscal year written `2012/13`.
pub(super) fn fiscal_years() -> File {
    const DEPTS: [&str; 3] = ["Health", "Education", "Transport"];
    let mut rng = Rng::with_seed(525);
    let mut s = String::from("Financial Year,Department,Spend\n");
    let mut spend = vec![];
    for y in 2012..=2019 {
        for d in DEPTS {
            let v = rng.i64(5_000..80_000);
            let _ = writeln!(s, "{y}/{:02},{d},{v}", (y + 1) % 100);
            spend.push(v);
        }
    }
    let facts = Expected::new("timeforms/department_spend.csv", "time-forms", Some("csv"))
        .delimiter(",")
        .coverage("2012-01-01", "2020-12-31")
        .table(TableFacts::new(
            24,
            vec![
                Column::new("Financial Year", Kind::Text)
                    .date_format("%Y/%y")
                    .distinct(8),
                Column::new("Department", Kind::Text).distinct(3),
                ints("Spend", &spend),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Negative control: six-digit numbers that are not months — account ids whose digits
/// read as valid months, batch codes with a month part past 12, and year-month-looking
/// numbers in no order under a neutral name.
pub(super) fn six_digit_numbers() -> File {
    let mut rng = Rng::with_seed(526);
    let mut s = String::from("account_id,batch,reading,balance\n");
    let (mut ids, mut batches, mut readings, mut balances) = (vec![], vec![], vec![], vec![]);
    for i in 0..30i64 {
        // Sequential ids that read as consecutive months (199901, 199902, …).
        let id = 199_901 + (i / 12) * 100 + i % 12;
        let batch = 100_000 + rng.i64(0..899_999) / 100 * 100 + 13 + i % 80;
        let reading = rng.i64(1990..2020) * 100 + rng.i64(1..13);
        let balance = rng.i64(0..99_999);
        let _ = writeln!(s, "{id},{batch},{reading},{balance}");
        ids.push(id);
        batches.push(batch);
        readings.push(reading);
        balances.push(balance);
    }
    let facts = Expected::new("timeforms/ledger_accounts.csv", "time-forms", Some("csv"))
        .delimiter(",")
        .uncovered()
        .table(TableFacts::new(
            30,
            vec![
                // A key by its name: an identifier, whatever its values look like.
                Column::new("account_id", Kind::Text).range(
                    ids.iter().min().expect("ids"),
                    ids.iter().max().expect("ids"),
                ),
                ints("batch", &batches),
                ints("reading", &readings),
                ints("balance", &balances),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Negative control: prices that happen to lie between 1800 and 2100, in no order.
pub(super) fn prices_in_the_year_range() -> File {
    let mut rng = Rng::with_seed(527);
    let mut s = String::from("item,price,qty\n");
    let (mut prices, mut qty) = (vec![], vec![]);
    for i in 0..30i64 {
        let cents = rng.i64(180_000..210_000);
        let q = rng.i64(1..40);
        let _ = writeln!(s, "SKU-{i:03},{}.{:02},{q}", cents / 100, cents % 100);
        prices.push(cents);
        qty.push(q);
    }
    let facts = Expected::new("timeforms/appliance_prices.csv", "time-forms", Some("csv"))
        .delimiter(",")
        .uncovered()
        .table(TableFacts::new(
            30,
            vec![
                Column::new("item", Kind::Text),
                decimals("price", &prices, 100.0),
                ints("qty", &qty),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Quarterly national accounts: the period written `2005-Q1`, one row per quarter and
/// series.
pub(super) fn quarters_in_one_column() -> File {
    const SERIES: [&str; 2] = ["GDP", "Consumption"];
    let mut rng = Rng::with_seed(528);
    let mut s = String::from("Quarter,Series,Value\n");
    let mut values = vec![];
    for y in 2005..=2010 {
        for q in 1..=4 {
            for series in SERIES {
                let v = rng.i64(10_000..99_000);
                let _ = writeln!(s, "{y}-Q{q},{series},{v}");
                values.push(v);
            }
        }
    }
    let facts = Expected::new(
        "timeforms/national_accounts_quarterly.csv",
        "time-forms",
        Some("csv"),
    )
    .delimiter(",")
    .coverage("2005-01-01", "2010-12-31")
    .table(TableFacts::new(
        48,
        vec![
            Column::new("Quarter", Kind::Date)
                .date_format("%Y-Q%q")
                .range("2005-01-01", "2010-10-01"),
            Column::new("Series", Kind::Text).distinct(2),
            ints("Value", &values),
        ],
    ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// A statistics page of three HTML tables: monthly index values with `YYYYMM` periods
/// under a two-row header (an `Index` group over `Value` and `Change`), some values
/// missing as `M`; annual totals by year; and, as a negative control, stations keyed by
/// six-digit ids that read as consecutive months. The page covers the span of both
/// time axes.
pub(super) fn html_tables_with_periods() -> File {
    let mut rng = Rng::with_seed(528);
    let mut s = String::from(
        "<html><body>\n<h2>Monthly index</h2>\n<table>\n<thead>\n\
         <tr><th rowspan=\"2\">Period</th><th colspan=\"2\">Index</th></tr>\n\
         <tr><th>Value</th><th>Change</th></tr>\n</thead>\n<tbody>\n",
    );
    let (mut values, mut changes, mut marked) = (vec![], vec![], 0u64);
    for i in 0..24u32 {
        let (y, m) = (2018 + i / 12, i % 12 + 1);
        let change = rng.i64(-20..30);
        let value = if i % 7 == 3 {
            marked += 1;
            "M".to_string()
        } else {
            let v = 1000 + i64::from(i) * 4 + rng.i64(0..9);
            values.push(v);
            format!("{}.{}", v / 10, v % 10)
        };
        changes.push(change);
        let sign = if change < 0 { "-" } else { "" };
        let _ = writeln!(
            s,
            "<tr><td>{y}{m:02}</td><td>{value}</td><td>{sign}{}.{}</td></tr>",
            change.abs() / 10,
            change.abs() % 10
        );
    }
    s.push_str("</tbody>\n</table>\n<h2>Annual totals</h2>\n<table>\n");
    s.push_str("<thead><tr><th>year</th><th>total</th></tr></thead>\n<tbody>\n");
    let mut totals = vec![];
    for y in 2010..=2017 {
        let t = rng.i64(10_000..90_000);
        totals.push(t);
        let _ = writeln!(s, "<tr><td>{y}</td><td>{t}</td></tr>");
    }
    s.push_str("</tbody>\n</table>\n<h2>Stations</h2>\n<table>\n");
    s.push_str("<thead><tr><th>station_id</th><th>readings</th></tr></thead>\n<tbody>\n");
    let (mut ids, mut readings) = (vec![], vec![]);
    for i in 0..12i64 {
        let (id, r) = (201_801 + i, rng.i64(100..999));
        ids.push(id);
        readings.push(r);
        let _ = writeln!(s, "<tr><td>{id}</td><td>{r}</td></tr>");
    }
    s.push_str("</tbody>\n</table>\n</body></html>\n");
    let facts = Expected::new(
        "timeforms/regional_index_tables.html",
        "time-forms",
        Some("html"),
    )
    .coverage("2010-01-01", "2019-12-31")
    .table(TableFacts::new(
        24,
        vec![
            Column::new("Period", Kind::Date)
                .date_format("%Y%m")
                .range("2018-01-01", "2019-12-01"),
            decimals("Index / Value", &values, 10.0).missing("M", marked),
            decimals("Index / Change", &changes, 10.0),
        ],
    ))
    .table(TableFacts::new(
        8,
        vec![
            ints("year", &(2010..=2017).collect::<Vec<_>>()),
            ints("total", &totals),
        ],
    ))
    .table(TableFacts::new(
        12,
        vec![
            Column::new("station_id", Kind::Text).range(201_801, 201_812),
            ints("readings", &readings),
        ],
    ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// A year column beside a quarter column of `Q1`..`Q4`, starting mid-year.
pub(super) fn year_and_quarter() -> File {
    let mut rng = Rng::with_seed(529);
    let mut s = String::from("Year,Qtr,Claims\n");
    let mut claims = vec![];
    for i in 2..22u32 {
        let (y, q) = (2011 + i / 4, i % 4 + 1);
        let v = rng.i64(200..9_000);
        let _ = writeln!(s, "{y},Q{q},{v}");
        claims.push(v);
    }
    let facts = Expected::new("timeforms/claims_by_quarter.csv", "time-forms", Some("csv"))
        .delimiter(",")
        .coverage("2011-07-01", "2016-06-30")
        .table(TableFacts::new(
            20,
            vec![
                Column::new("Year", Kind::Integer).range(2011, 2016),
                Column::new("Qtr", Kind::Text).distinct(4),
                ints("Claims", &claims),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Negative control: codes that hold a quarter-like part (`A1Q2`), product lines `Q1`..`Q9`
/// beside no year, and a `quarter` count past 4: none of it is time.
pub(super) fn quarter_like_codes() -> File {
    let mut rng = Rng::with_seed(530);
    let mut s = String::from("Batch,Product,quarter,Units\n");
    let (mut counts, mut units) = (vec![], vec![]);
    for i in 0..27i64 {
        let batch = format!(
            "{}{}Q{}",
            ["A", "B", "C"][(i % 3) as usize],
            i % 9 + 1,
            i % 4 + 1
        );
        let quarters = 1 + i % 12;
        let u = rng.i64(1..500);
        let _ = writeln!(s, "{batch},Q{},{quarters},{u}", i % 9 + 1);
        counts.push(quarters);
        units.push(u);
    }
    let facts = Expected::new("timeforms/product_batches.csv", "time-forms", Some("csv"))
        .delimiter(",")
        .uncovered()
        .table(TableFacts::new(
            27,
            vec![
                Column::new("Batch", Kind::Text),
                Column::new("Product", Kind::Text).distinct(9),
                ints("quarter", &counts),
                ints("Units", &units),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// An observation log whose times carry their time scale (`2014.03.23_20:24:00_TAI`),
/// as solar and astronomy archives write them, beside a UTC stamp written with slashes.
pub(super) fn date_times_with_a_time_scale() -> File {
    let mut rng = Rng::with_seed(531);
    let mut s = String::from("T_OBS,T_REC,EXPTIME\n");
    let mut exptime = vec![];
    let start = day(2014, 3, 23);
    let rows = 30u64;
    for i in 0..rows {
        let d = start + Days::new(i / 3);
        let (h, m) = (rng.u32(0..24), rng.u32(0..60));
        let e = rng.i64(1..300);
        let _ = writeln!(
            s,
            "{}_{h:02}:{m:02}:00_TAI,{} {h:02}:{m:02}:00 UTC,{e}",
            d.format("%Y.%m.%d"),
            d.format("%Y/%m/%d"),
        );
        exptime.push(e);
    }
    let last = iso(start + Days::new((rows - 1) / 3));
    let facts = Expected::new("timeforms/exposure_log.csv", "time-forms", Some("csv"))
        .delimiter(",")
        .coverage(&iso(start), &last)
        .table(TableFacts::new(
            rows,
            vec![
                Column::new("T_OBS", Kind::Datetime)
                    .date_format("%Y.%m.%d_%H:%M:%S_TAI")
                    .range(iso(start), &last),
                Column::new("T_REC", Kind::Datetime)
                    .date_format("%Y/%m/%d %H:%M:%S UTC")
                    .range(iso(start), &last),
                ints("EXPTIME", &exptime),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Negative control: version numbers and network addresses written with dots, and
/// release dates written with dots (those are dates, and give the coverage).
pub(super) fn versions_and_addresses() -> File {
    let mut s = String::from("version,host,released\n");
    let rows = 24u32;
    for i in 0..rows {
        let _ = writeln!(
            s,
            "{}.{}.{},10.0.{}.{},2019.{:02}.{:02}",
            1 + i / 10,
            i % 10,
            i % 3,
            i / 8,
            1 + i,
            1 + i / 2,
            1 + i
        );
    }
    let facts = Expected::new("timeforms/release_hosts.csv", "time-forms", Some("csv"))
        .delimiter(",")
        .coverage("2019-01-01", "2019-12-24")
        .table(TableFacts::new(
            u64::from(rows),
            vec![
                Column::new("version", Kind::Text),
                Column::new("host", Kind::Text),
                Column::new("released", Kind::Date)
                    .date_format("%Y.%m.%d")
                    .range("2019-01-01", "2019-12-24"),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// A database of observations: `monthly` with `YYYYMM` integer periods (some null),
/// `daily` with `YYYY-DDD` text days, and, as a negative control, `stations` keyed by
/// six-digit ids that read as consecutive months. It covers the span of both time
/// axes.
pub(in crate::synth::messy) fn sqlite_observations(dir: &Path) -> io::Result<Expected> {
    let rel = "timeforms/observations.sqlite";
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("a parent"))?;
    let _ = std::fs::remove_file(&path);
    let err = |e: rusqlite::Error| io::Error::other(e.to_string());
    let db = rusqlite::Connection::open(&path).map_err(err)?;
    db.execute_batch(
        "CREATE TABLE monthly (period INTEGER, value REAL);
         CREATE TABLE daily (day TEXT, flux REAL);
         CREATE TABLE stations (station_id INTEGER, name TEXT);",
    )
    .map_err(err)?;
    let mut rng = Rng::with_seed(529);
    let (mut values, mut nulls) = (vec![], 0u64);
    for i in 0..26u32 {
        let period = (i % 13 != 12).then(|| {
            let k = i - i / 13;
            i64::from((2016 + k / 12) * 100 + k % 12 + 1)
        });
        nulls += u64::from(period.is_none());
        let v = rng.i64(100..999);
        values.push(v);
        db.execute(
            "INSERT INTO monthly VALUES (?1, ?2)",
            rusqlite::params![period, v as f64 / 10.0],
        )
        .map_err(err)?;
    }
    let mut fluxes = vec![];
    for d in 1..=60u32 {
        let f = rng.i64(10..500);
        fluxes.push(f);
        let day = (d != 30).then(|| format!("2018-{d:03}"));
        db.execute(
            "INSERT INTO daily VALUES (?1, ?2)",
            rusqlite::params![day, f as f64 / 10.0],
        )
        .map_err(err)?;
    }
    for i in 0..12i64 {
        db.execute(
            "INSERT INTO stations VALUES (?1, ?2)",
            rusqlite::params![201_801 + i, format!("Station {}", i + 1)],
        )
        .map_err(err)?;
    }
    drop(db);
    Ok(Expected::new(rel, "time-forms", Some("sqlite"))
        .coverage("2016-01-01", "2018-03-01")
        .table(
            TableFacts::new(
                26,
                vec![
                    Column::new("period", Kind::Date)
                        .date_format("%Y%m")
                        .range("2016-01-01", "2017-12-01")
                        .nulls(nulls),
                    decimals("value", &values, 10.0),
                ],
            )
            .named("monthly"),
        )
        .table(
            TableFacts::new(
                60,
                vec![
                    Column::new("day", Kind::Date)
                        .date_format("%Y-%j")
                        .range("2018-01-01", "2018-03-01")
                        .nulls(1),
                    decimals("flux", &fluxes, 10.0),
                ],
            )
            .named("daily"),
        )
        .table(
            TableFacts::new(
                12,
                vec![
                    Column::new("station_id", Kind::Text).range(201_801, 201_812),
                    Column::new("name", Kind::Text).distinct(12),
                ],
            )
            .named("stations"),
        ))
}

/// Monthly counts in Parquet: `period` holds `YYYYMM` integers, a few null (pandas reads
/// the column as floats), beside `order_id`, six-digit keys that read as months (the
/// negative control).
pub(in crate::synth::messy) fn parquet_periods(dir: &Path) -> io::Result<Expected> {
    use parquet::data_type::Int64Type;
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use std::sync::Arc;
    let rel = "timeforms/monthly_orders.parquet";
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("a parent"))?;
    let err = |e: parquet::errors::ParquetError| io::Error::other(e.to_string());
    let schema = parquet::schema::parser::parse_message_type(
        "message orders { optional int64 period; required int64 order_id; required int64 orders; }",
    )
    .map_err(err)?;
    let props = Arc::new(WriterProperties::builder().build());
    let file = std::fs::File::create(&path)?;
    let mut w = SerializedFileWriter::new(file, Arc::new(schema), props).map_err(err)?;
    let mut rng = Rng::with_seed(530);
    const ROWS: i64 = 40;
    let defs: Vec<i16> = (0..ROWS).map(|i| i16::from(i % 10 != 9)).collect();
    let periods: Vec<i64> = (0..ROWS)
        .filter(|i| i % 10 != 9)
        .map(|i| {
            let k = i - i / 10;
            (2019 + k / 12) * 100 + k % 12 + 1
        })
        .collect();
    let ids: Vec<i64> = (0..ROWS).map(|i| 199_001 + i / 12 * 100 + i % 12).collect();
    let orders: Vec<i64> = (0..ROWS).map(|_| rng.i64(10..5_000)).collect();
    let mut rg = w.next_row_group().map_err(err)?;
    for (name, values, defs) in [
        ("period", &periods, Some(defs.as_slice())),
        ("order_id", &ids, None),
        ("orders", &orders, None),
    ] {
        let mut c = rg.next_column().map_err(err)?.expect(name);
        c.typed::<Int64Type>()
            .write_batch(values, defs, None)
            .map_err(err)?;
        c.close().map_err(err)?;
    }
    rg.close().map_err(err)?;
    w.close().map_err(err)?;
    let (first, last) = (periods[0], periods[periods.len() - 1]);
    let month = |p: i64| format!("{}-{:02}-01", p / 100, p % 100);
    Ok(Expected::new(rel, "time-forms", Some("parquet"))
        .coverage(&month(first), "2021-12-31")
        .table(TableFacts::new(
            ROWS as u64,
            vec![
                Column::new("period", Kind::Date)
                    .date_format("%Y%m")
                    .range(month(first), month(last))
                    .nulls(4),
                Column::new("order_id", Kind::Text).range(199_001, 199_304),
                ints("orders", &orders),
            ],
        )))
}
