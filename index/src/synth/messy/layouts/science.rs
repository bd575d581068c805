//! Science-archive layouts: widening fixed-width fields, headerless data beside its
//! documentation, a year column under a dated name, dates in text, `#` comments.

use super::*;

/// Daily normals of thirty stations, sorted by day of year: the right-aligned day
/// field widens (`   1` … ` 365`) only past the first few hundred lines.
pub(super) fn widening_fixed_width() -> File {
    const STATIONS: i64 = 30;
    let mut s = String::from("# Daily normals, New England first-order stations\n");
    let _ = writeln!(
        s,
        "{:>4} {:<11}{:>7}{:>7}{:>7}",
        "DOY", "STATION", "TMAX", "TMIN", "PRCP"
    );
    let (mut tmax, mut tmin, mut prcp) = (vec![], vec![], vec![]);
    for doy in 1..=365i64 {
        let phase = 2.0 * std::f64::consts::PI * (doy - 20) as f64 / 365.0;
        for st in 0..STATIONS {
            let hi = (595.0 - 230.0 * phase.cos()).round() as i64 - st * 3;
            let lo = hi - 150 - (20.0 * phase.sin()).round() as i64;
            let p = (11.0 + 3.0 * (2.0 * phase).sin()).round() as i64 + st % 4;
            let _ = writeln!(
                s,
                "{doy:>4} USW000{:05}{:>7.1}{:>7.1}{:>7.2}",
                14_700 + st * 37,
                hi as f64 / 10.0,
                lo as f64 / 10.0,
                p as f64 / 100.0
            );
            tmax.push(hi);
            tmin.push(lo);
            prcp.push(p);
        }
    }
    let facts = Expected::new(
        "climate/daily_normals_new_england.txt",
        "fixed-width",
        Some("fixed-width"),
    )
    .table(TableFacts::new(
        365 * STATIONS as u64,
        vec![
            Column::new("DOY", Kind::Integer)
                .range(1, 365)
                .distinct(365),
            Column::new("STATION", Kind::Text).distinct(STATIONS as u64),
            decimals("TMAX", &tmax, 10.0),
            decimals("TMIN", &tmin, 10.0),
            decimals("PRCP", &prcp, 100.0),
        ],
    ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// A `Year` column 2001…2024 in a file whose name starts with `2024_`.
pub(super) fn year_column_and_year_in_name() -> File {
    const SPECIES: [&str; 3] = ["American lobster", "Atlantic sea scallop", "Atlantic cod"];
    let mut rng = Rng::with_seed(8);
    let mut s = String::from("Year,Species,Landings (lb),Value (USD)\n");
    let (mut lb, mut usd) = (vec![], vec![]);
    for y in 2001..=2024 {
        for sp in SPECIES {
            let l = rng.i64(1_000_000..120_000_000);
            let v = l * rng.i64(2..9);
            let _ = writeln!(s, "{y},{sp},{l},{v}");
            lb.push(l);
            usd.push(v);
        }
    }
    let facts = Expected::new(
        "fisheries/2024_commercial_landings.csv",
        "time",
        Some("csv"),
    )
    .delimiter(",")
    .coverage("2001-01-01", "2024-12-31")
    .table(TableFacts::new(
        72,
        vec![
            Column::new("Year", Kind::Integer).range(2001, 2024),
            Column::new("Species", Kind::Text).distinct(3),
            ints("Landings (lb)", &lb),
            ints("Value (USD)", &usd),
        ],
    ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// A text bulletin whose only date is the one it was issued on.
pub(super) fn bulletin() -> File {
    let s = ":Product: Weekly Highlights and Forecasts\n\
:Issued: 2021 Jun 04 0106 UTC\n\
# Prepared by the US Dept. of Commerce, NOAA, Space Weather Prediction Center\n\
# Please send comments and suggestions to SWPC.Webmaster@noaa.gov\n\
#\n\
Highlights of Solar and Geomagnetic Activity\n\
\n\
Solar activity was at very low levels. Region 2829 produced only minor B-class flare\n\
activity and was stable as it rotated toward the west limb. No Earth-directed coronal\n\
mass ejections were observed in available coronagraph imagery.\n\
\n\
No proton events were observed at geosynchronous orbit. The greater than 2 MeV electron\n\
flux at geosynchronous orbit reached high levels following the recurrent coronal hole\n\
high speed stream. Geomagnetic field activity was at quiet to unsettled levels.\n";
    let facts = Expected::new("space_weather/weekly_highlights.txt", "time", Some("text"))
        .markdown(false)
        .coverage("2021-06-04", "2021-06-04");
    (facts.path.clone(), s.as_bytes().to_vec(), facts)
}

/// A `.txt` whose `#` comment lines are not Markdown headings.
pub(super) fn comment_text() -> File {
    let s = "# NDBC station notes\n\
# Coastal buoy network, Gulf of Maine\n\
# Maintained by the operations desk; edit with care\n\
\n\
Station 44005 was recovered for maintenance on the spring cruise and redeployed with a\n\
new anemometer. Wind speeds reported before the swap read about four percent low; the\n\
corrected values carry quality flag 2 in the archive.\n\
\n\
Station 44013 (Boston approach) lost its air temperature sensor to icing in late winter.\n\
Air temperature is missing until the summer service visit; water temperature and waves\n\
are unaffected.\n";
    let facts = Expected::new("buoys/station_notes.txt", "text", Some("text")).markdown(false);
    (facts.path.clone(), s.as_bytes().to_vec(), facts)
}

/// A headerless whitespace-aligned `.dat` and the format description beside it.
pub(super) fn dat_with_format_doc() -> Vec<File> {
    const STATIONS: [i64; 3] = [838, 1033, 1050];
    let mut rng = Rng::with_seed(9);
    let mut s = String::new();
    let (mut swe, mut depth, mut tavg) = (vec![], vec![], vec![]);
    let first = day(2023, 1, 1);
    for st in STATIONS {
        let mut w = rng.i64(80..200);
        for d in 0..31u64 {
            w += rng.i64(0..6);
            let dep = w * 4 / 10 + rng.i64(0..5);
            let t = rng.i64(-150..380);
            let _ = writeln!(
                s,
                "{st:>5} {} {:>5.1} {dep:>4} {:>5.1}",
                iso(first + Days::new(d)),
                w as f64 / 10.0,
                t as f64 / 10.0
            );
            swe.push(w);
            depth.push(dep);
            tavg.push(t);
        }
    }
    let doc = "SNOTEL Daily Summary - File Format\n\
\n\
One record per station and day, fields separated by blanks, no header line.\n\
\n\
Field  Name        Units  Description\n\
1      station_id  -      NRCS station number\n\
2      date        -      Observation date (YYYY-MM-DD)\n\
3      swe         in     Snow water equivalent at midnight local time\n\
4      snow_depth  in     Snow depth\n\
5      tavg        degF   Mean air temperature of the day\n";
    let last = first + Days::new(30);
    let data = Expected::new("snow/snotel_daily.dat", "companion", Some("fixed-width"))
        .companion("snotel_daily_format.text")
        .coverage(&iso(first), &iso(last))
        .table(TableFacts::new(
            93,
            vec![
                Column::new("station_id", Kind::Integer)
                    .range(838, 1050)
                    .distinct(3),
                Column::new("date", Kind::Date)
                    .range(iso(first), iso(last))
                    .date_format("%Y-%m-%d"),
                decimals("swe", &swe, 10.0).unit("in"),
                ints("snow_depth", &depth).unit("in"),
                decimals("tavg", &tavg, 10.0).unit("degF"),
            ],
        ));
    let docs = Expected::new("snow/snotel_daily_format.text", "companion", None)
        .companion("snotel_daily.dat");
    vec![
        (data.path.clone(), s.into_bytes(), data),
        (docs.path.clone(), doc.as_bytes().to_vec(), docs),
    ]
}

/// A headerless `.csv` and the `*_variabledescrip.csv` that names its columns.
pub(super) fn csv_with_variable_description() -> Vec<File> {
    let mut rng = Rng::with_seed(10);
    let mut s = String::new();
    let (mut seqn, mut age, mut pir, mut size) = (vec![], vec![], vec![], vec![]);
    let mut id = 73_557i64;
    for _ in 0..60 {
        let (g, a, p, n) = (
            rng.i64(1..3),
            rng.i64(18..81),
            rng.i64(0..501),
            rng.i64(1..8),
        );
        let _ = writeln!(s, "{id},{g},{a},{:.2},{n}", p as f64 / 100.0);
        seqn.push(id);
        age.push(a);
        pir.push(p);
        size.push(n);
        id += rng.i64(1..4);
    }
    let doc = "Variable Name,Variable Description,Units\n\
SEQN,Respondent sequence number,\n\
RIAGENDR,Gender (1 = male; 2 = female),\n\
RIDAGEYR,Age in years at screening,years\n\
INDFMPIR,Ratio of family income to poverty,\n\
DMDHHSIZ,Total number of people in the household,persons\n";
    let data = Expected::new("nhanes/demographics.csv", "companion", Some("csv"))
        .delimiter(",")
        .companion("demographics_variabledescrip.csv")
        .table(TableFacts::new(
            60,
            vec![
                ints("SEQN", &seqn).distinct(60),
                Column::new("RIAGENDR", Kind::Integer).range(1, 2),
                ints("RIDAGEYR", &age).unit("years"),
                decimals("INDFMPIR", &pir, 100.0),
                ints("DMDHHSIZ", &size).unit("persons"),
            ],
        ));
    let docs = Expected::new(
        "nhanes/demographics_variabledescrip.csv",
        "companion",
        Some("csv"),
    )
    .delimiter(",")
    .companion("demographics.csv")
    .table(TableFacts::new(
        5,
        vec![
            Column::new("Variable Name", Kind::Text).distinct(5),
            Column::new("Variable Description", Kind::Text),
            Column::new("Units", Kind::Text),
        ],
    ));
    vec![
        (data.path.clone(), s.into_bytes(), data),
        (docs.path.clone(), doc.as_bytes().to_vec(), docs),
    ]
}
