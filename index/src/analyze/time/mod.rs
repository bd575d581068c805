//! Time coverage: the span of time a file covers, read from its content (date columns,
//! year columns, date-valued JSON keys, dates in text headings) or from its path
//! (`readings-20190301_to_20190304.csv`, `2014_q4.csv`, `2013/0412.csv`, `2019-08_edges`).

pub(crate) mod forms;
mod text;

use super::dates::{self, Day};
use super::{ColumnProfile, ColumnType, Content, NamedTable, TimeCoverage};
pub(crate) use text::span_in_lines;

fn cov(lo: Day, hi: Day, source: impl Into<String>) -> TimeCoverage {
    TimeCoverage {
        start: lo.iso(),
        end: hi.iso(),
        source: source.into(),
    }
}

/// Column names that say "this is the time axis".
fn timeish(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "date",
        "time",
        "timestamp",
        "day",
        "period",
        "month",
        "when",
        "ts",
        "dt",
    ]
    .iter()
    .any(|k| n == *k || n.contains(k))
}

/// A column named as a year: `year`, `YEAR`, `Yr`, `Fiscal Year`, `year_start`,
/// `FiscalYear`, `yyyy`.
fn yearish(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| matches!(w, "year" | "yr" | "yyyy" | "years"))
        || n.starts_with("year")
        || n.ends_with("year")
}

/// A whole year (1800–2100) from a column's min or max, written `2001` or `2001.0`.
fn year_value(v: Option<&str>) -> Option<u32> {
    let x: f64 = v?.parse().ok()?;
    (x.fract() == 0.0 && (1800.0..=2100.0).contains(&x)).then_some(x as u32)
}

/// The column that is the table's time axis, and its span. Ranked: a date column named
/// like a time axis (or `YYYYMMDD` integers named so, or time in another form read by
/// the time-forms rule), then a year column, then any
/// other date column; a date column holding one value (an export or update date)
/// comes last, as it dates the file rather than the data.
fn from_columns(cols: &[ColumnProfile]) -> Option<TimeCoverage> {
    let (lo, hi, name) = axis(cols)?;
    Some(cov(lo, hi, format!("column {name:?}")))
}

/// The time axis of a table (see [`from_columns`]): its first and last day and its
/// column's name.
fn axis(cols: &[ColumnProfile]) -> Option<(Day, Day, &str)> {
    let mut best: Option<(u8, Day, Day, &str)> = None;
    for c in cols {
        let span = c.time_span.as_ref().and_then(|(lo, hi)| {
            let day = |s: &str| dates::parse(s).map(|p| p.day);
            day(lo).zip(day(hi))
        });
        let found = if let Some((lo, hi)) = span {
            // Time in another form (`200001`, `1987.042`, `2019r`, a day of year beside a
            // year), read by the time-forms rule, which asked for a header or values
            // that say so: ranked as a date column named like a time axis.
            Some((if c.distinct <= 1 { 1 } else { 4 }, lo, hi))
        } else if let Some((lo, hi)) = c.date_range() {
            let rank = match (timeish(&c.name), c.distinct <= 1) {
                (_, true) => 1,
                (true, false) => 4,
                (false, false) => 2,
            };
            let day = |s: &str| dates::parse(s).map(|p| p.day);
            day(lo).zip(day(hi)).map(|(lo, hi)| (rank, lo, hi))
        } else if c.kind == ColumnType::Integer
            && (timeish(&c.name) || c.name.eq_ignore_ascii_case("yyyymmdd"))
        {
            // Dates written as 8-digit integers (`YYYYMMDD`) in a column named like a date.
            c.min
                .as_deref()
                .and_then(ymd8)
                .zip(c.max.as_deref().and_then(ymd8))
                .map(|(lo, hi)| (4, lo, hi))
        } else if matches!(c.kind, ColumnType::Integer | ColumnType::Float) && yearish(&c.name) {
            year_value(c.min.as_deref())
                .zip(year_value(c.max.as_deref()))
                .and_then(|(lo, hi)| Some((3, Day::new(lo, 1, 1)?, Day::new(hi, 12, 31)?)))
        } else {
            None
        };
        if let Some((rank, lo, hi)) = found {
            if best.is_none_or(|b| rank > b.0) {
                best = Some((rank, lo, hi, &c.name));
            }
        }
    }
    let (_, lo, hi, name) = best?;
    Some((lo, hi, name))
}

/// Tables named in a coverage's source; more are counted.
const AXES_NAMED: usize = 3;

/// The span over the time axes of several tables (sheets, database tables, stacked
/// tables): each table's own axis, the source naming the column and its table
/// (`columns "Date" (Sheet1), "year" (2019)`). One table alone is named by its column.
fn from_tables(tables: &[NamedTable]) -> Option<TimeCoverage> {
    let axes: Vec<(Day, Day, &str, &str)> = tables
        .iter()
        .filter_map(|t| axis(&t.columns).map(|(lo, hi, c)| (lo, hi, c, t.name.as_str())))
        .collect();
    let lo = axes.iter().map(|a| a.0).min()?;
    let hi = axes.iter().map(|a| a.1).max()?;
    let source = match axes.as_slice() {
        [(_, _, c, _)] if tables.len() == 1 => format!("column {c:?}"),
        [(_, _, c, t)] => format!("column {c:?} ({t})"),
        _ => {
            let named: Vec<String> = axes
                .iter()
                .take(AXES_NAMED)
                .map(|(_, _, c, t)| format!("{c:?} ({t})"))
                .collect();
            let more = axes.len().saturating_sub(AXES_NAMED);
            let more = match more {
                0 => String::new(),
                1 => " and 1 more table".into(),
                n => format!(" and {n} more tables"),
            };
            format!("columns {}{more}", named.join(", "))
        }
    };
    Some(cov(lo, hi, source))
}

/// The time span the content of a description covers, when it shows one.
pub(crate) fn from_content(content: &Content) -> Option<TimeCoverage> {
    match content {
        // A table's own preamble (`:Issued: 2021 Jun 04`) when no column dates it.
        Content::Table(t) => from_columns(&t.columns).or_else(|| {
            let (lo, hi) = span_in_lines(&t.preamble.join("\n"))?;
            Some(cov(lo, hi, "preamble"))
        }),
        Content::Tables(ts) => from_tables(&ts.tables),
        Content::Json(j) => {
            let p = j
                .paths
                .iter()
                .filter(|p| p.dates.is_some())
                .max_by_key(|p| (timeish(&p.path), p.count))?;
            let (lo, hi) = p.dates.as_ref()?;
            Some(TimeCoverage {
                start: lo.clone(),
                end: hi.clone(),
                source: format!("key {}", p.path),
            })
        }
        Content::Text(t) => {
            let days: Vec<Day> = t
                .outline
                .iter()
                .flat_map(|h| days_in_text(&h.text))
                .collect();
            let written = t.dates.as_ref().and_then(|(lo, hi)| {
                let day = |s: &str| dates::parse(s).map(|p| p.day);
                day(lo).zip(day(hi))
            });
            match (days.iter().min().zip(days.iter().max()), written) {
                (Some((lo, hi)), Some((a, b))) => Some(cov(a.min(*lo), b.max(*hi), "text")),
                (Some((lo, hi)), None) => Some(cov(*lo, *hi, "headings")),
                (None, Some((lo, hi))) => Some(cov(lo, hi, "text")),
                (None, None) => None,
            }
        }
        // One member: the archive covers what it covers; several need not share a span.
        Content::Archive(a) => match a.described.as_slice() {
            [(_, only)] => only.time_coverage.clone(),
            _ => None,
        },
        Content::Arrays(_) | Content::Media(_) | Content::Opaque(_) => None,
    }
}

/// Dates written in a heading: ISO dates and `March 1, 2019` / `1 March 2019`.
fn days_in_text(text: &str) -> Vec<Day> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if let Some(p) = dates::parse(w.trim_matches(|c: char| !c.is_ascii_alphanumeric())) {
            out.push(p.day);
            continue;
        }
        if i + 2 < words.len() {
            let phrase = format!("{} {} {}", words[i], words[i + 1], words[i + 2]);
            if let Some(p) = dates::parse(&phrase) {
                out.push(p.day);
            }
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Precision {
    Year,
    Month,
    Day,
    Range,
}

/// A year from four digits, 1900–2100: what file names use.
fn year(s: &str) -> Option<u32> {
    (s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
        .filter(|y| (1900..=2100).contains(y))
}

fn ymd8(s: &str) -> Option<Day> {
    if s.len() != 8 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let y = year(&s[..4])?;
    Day::new(y, s[4..6].parse().ok()?, s[6..8].parse().ok()?)
}

fn month_span(y: u32, m: u32) -> Option<(Day, Day)> {
    Some((Day::new(y, m, 1)?, Day::month_end(y, m)?))
}

/// The time span a free text (a question) names, if any: read like a one-part path, so
/// "sales in Q4 2014" and "readings from March 2019" name what file names would.
pub fn from_text(text: &str) -> Option<TimeCoverage> {
    from_path(&text.to_lowercase().replace(['/', '.', ','], " "))
}

/// The time span a relative path names, if any.
pub fn from_path(path: &str) -> Option<TimeCoverage> {
    let mut found: Vec<(Precision, Day, Day)> = Vec::new();
    let components: Vec<&str> = path.split('/').collect();
    let mut folder_year: Option<u32> = None;
    for (ci, comp) in components.iter().enumerate() {
        let last = ci + 1 == components.len();
        let stem = if last {
            comp.rsplit_once('.').map_or(*comp, |(s, _)| s)
        } else {
            comp
        };
        let lower = stem.to_ascii_lowercase();
        // Tokens: runs of ASCII letters or of digits (anything else separates; slicing
        // only at char boundaries keeps non-ASCII names safe).
        let mut tokens: Vec<&str> = Vec::new();
        let mut start: Option<(usize, bool)> = None;
        for (i, c) in lower
            .char_indices()
            .chain(std::iter::once((lower.len(), ' ')))
        {
            let class = c.is_ascii_alphanumeric().then(|| c.is_ascii_digit());
            match (start, class) {
                (Some((_, digit)), Some(d)) if d == digit => {}
                (Some((s, _)), _) => {
                    tokens.push(&lower[s..i]);
                    start = class.map(|d| (i, d));
                }
                (None, Some(d)) => start = Some((i, d)),
                (None, None) => {}
            }
        }
        let mut days: Vec<Day> = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            let t = tokens[i];
            let next = tokens.get(i + 1).copied();
            let next2 = tokens.get(i + 2).copied();
            if let Some(d) = ymd8(t).or_else(|| {
                // Longer digit runs: a date at the start (timestamps) or after zero padding.
                (t.len() > 8 && t.len() <= 14 && t.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| ymd8(&t[..8]).or_else(|| ymd8(&t[t.len() - 8..])))
                    .flatten()
            }) {
                days.push(d);
            } else if let Some(y) = year(t) {
                match (next, next2) {
                    // 2019-03-01, 2019_03_01
                    (Some(m), Some(d))
                        if m.len() <= 2
                            && d.len() <= 2
                            && m.bytes().all(|b| b.is_ascii_digit()) =>
                    {
                        if let Some(day) =
                            Day::new(y, m.parse().unwrap_or(0), d.parse().unwrap_or(0))
                        {
                            days.push(day);
                            i += 3;
                            continue;
                        }
                    }
                    _ => {}
                }
                if let (Some("q"), Some(Ok(n @ 1..=4))) = (next, next2.map(str::parse::<u32>)) {
                    if let (Some(lo), Some(hi)) =
                        (Day::new(y, 3 * n - 2, 1), Day::month_end(y, 3 * n))
                    {
                        found.push((Precision::Month, lo, hi));
                        i += 3;
                        continue;
                    }
                }
                match next {
                    Some(m) if m.len() == 2 && m.bytes().all(|b| b.is_ascii_digit()) => {
                        if let Some((lo, hi)) = month_span(y, m.parse().unwrap_or(0)) {
                            found.push((Precision::Month, lo, hi));
                            i += 2;
                            continue;
                        }
                    }
                    Some(m) if dates::month_number(m).is_some() => {
                        if let Some((lo, hi)) = month_span(y, dates::month_number(m).unwrap_or(0)) {
                            found.push((Precision::Month, lo, hi));
                            i += 2;
                            continue;
                        }
                    }
                    _ => {}
                }
                if !last && tokens.len() == 1 {
                    folder_year = Some(y);
                }
                found.push((Precision::Year, Day::new(y, 1, 1)?, Day::new(y, 12, 31)?));
            } else if let (Some(m), Some(y)) = (dates::month_number(t), next.and_then(year)) {
                // jan_2020, march-2019
                if let Some((lo, hi)) = month_span(y, m) {
                    found.push((Precision::Month, lo, hi));
                    i += 2;
                    continue;
                }
            } else if let ("q", Some(Ok(n @ 1..=4)), Some(y)) =
                (t, next.map(str::parse::<u32>), next2.and_then(year))
            {
                // Q4_2014
                if let (Some(lo), Some(hi)) = (Day::new(y, 3 * n - 2, 1), Day::month_end(y, 3 * n))
                {
                    found.push((Precision::Month, lo, hi));
                    i += 3;
                    continue;
                }
            } else if let (Some(y), true) = (
                folder_year,
                t.len() == 4 && t.bytes().all(|b| b.is_ascii_digit()),
            ) {
                // `2013/0412.csv`: month and day under a year folder.
                if let Some(d) =
                    Day::new(y, t[..2].parse().unwrap_or(0), t[2..].parse().unwrap_or(0))
                {
                    days.push(d);
                }
            } else if let (Some(y), true) = (
                folder_year,
                t.len() == 2 && t.bytes().all(|b| b.is_ascii_digit()) && tokens.len() == 1 && !last,
            ) {
                // `2019/03/`: a month folder under a year folder.
                if let Some((lo, hi)) = month_span(y, t.parse().unwrap_or(0)) {
                    found.push((Precision::Month, lo, hi));
                }
            }
            i += 1;
        }
        match days.len() {
            0 => {}
            1 => found.push((Precision::Day, days[0], days[0])),
            _ => {
                let (lo, hi) = (*days.iter().min()?, *days.iter().max()?);
                found.push((Precision::Range, lo, hi));
            }
        }
    }
    let best = found.iter().map(|f| f.0).max()?;
    let top: Vec<&(Precision, Day, Day)> = found.iter().filter(|f| f.0 == best).collect();
    let lo = top.iter().map(|f| f.1).min()?;
    let hi = top.iter().map(|f| f.2).max()?;
    Some(cov(lo, hi, "path"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(p: &str) -> Option<(String, String)> {
        from_path(p).map(|c| (c.start, c.end))
    }

    fn s(a: &str, b: &str) -> Option<(String, String)> {
        Some((a.into(), b.into()))
    }

    #[test]
    fn dates_in_paths() {
        assert_eq!(
            span("sensors/station-0042/readings-20190301_to_20190304.csv"),
            s("2019-03-01", "2019-03-04")
        );
        assert_eq!(span("2014_q4.csv"), s("2014-10-01", "2014-12-31"));
        assert_eq!(span("2015.csv"), s("2015-01-01", "2015-12-31"));
        assert_eq!(
            span("20170413_000000_group_statistics.csv"),
            s("2017-04-13", "2017-04-13")
        );
        assert_eq!(span("0020200722.csv"), s("2020-07-22", "2020-07-22"));
        assert_eq!(span("2019-08_edges.csv"), s("2019-08-01", "2019-08-31"));
        assert_eq!(span("logs/2013/0412.csv"), s("2013-04-12", "2013-04-12"));
        assert_eq!(
            span("sales/2019/emea/sales_2019_q3_emea_17.csv"),
            s("2019-07-01", "2019-09-30")
        );
        assert_eq!(
            span("events/2021/03/events-2021-03-05.jsonl"),
            s("2021-03-05", "2021-03-05")
        );
        assert_eq!(span("archive/2024/02/"), s("2024-02-01", "2024-02-29"));
        assert_eq!(span("report_2016_2018.csv"), s("2016-01-01", "2018-12-31"));
        assert_eq!(span("Q1_2020/summary.md"), s("2020-01-01", "2020-03-31"));
        assert_eq!(span("gdp_jan_2020.csv"), s("2020-01-01", "2020-01-31"));
        assert_eq!(
            span("données/relevé_2019’s façade.csv"),
            s("2019-01-01", "2019-12-31")
        );
        assert_eq!(span("gdp_2020_jan.csv"), s("2020-01-01", "2020-01-31"));
        let q = from_text("Which files cover March 2019, e.g. sensors?").map(|c| (c.start, c.end));
        assert_eq!(q, s("2019-03-01", "2019-03-31"));
        for none in [
            "fees.json",
            "manual.md",
            "abalone.data",
            "station-0042/x.csv",
            "ids/12345678.csv",
            "v1234.csv",
        ] {
            assert_eq!(span(none), None, "{none}");
        }
    }

    fn named(name: &str, cols: &[(&str, &[&str])]) -> NamedTable {
        let columns = cols
            .iter()
            .map(|(n, cells)| {
                let mut b = crate::analyze::profile::ColumnBuilder::new(*n);
                for c in *cells {
                    b.push(c);
                }
                b.finish()
            })
            .collect();
        NamedTable {
            name: name.into(),
            kind: "sheet".into(),
            columns,
            ..Default::default()
        }
    }

    /// Sheets, database tables and stacked tables cover the span of all their time axes,
    /// each table's best, and the source names them with their tables.
    #[test]
    fn several_tables_cover_the_span_of_their_axes() {
        let dates = named(
            "Sheet1",
            &[
                ("Date", &["2019-01-05", "2019-02-01", "2019-03-01"]),
                ("n", &["1", "2", "3"]),
            ],
        );
        let years = named(
            "2019",
            &[("year", &["2015", "2016", "2018"]), ("n", &["4", "5", "6"])],
        );
        let notes = named("Notes", &[("note", &["a", "b", "c"])]);
        let cov = |ts: &[&NamedTable]| {
            let set = super::super::TableSet {
                tables: ts.iter().map(|t| (*t).clone()).collect(),
                notes: Vec::new(),
            };
            from_content(&Content::Tables(set)).map(|c| (c.start, c.end, c.source))
        };
        assert_eq!(
            cov(&[&dates, &notes, &years]),
            t(
                "2015-01-01",
                "2019-03-01",
                "columns \"Date\" (Sheet1), \"year\" (2019)"
            )
        );
        assert_eq!(
            cov(&[&notes, &dates]),
            t("2019-01-05", "2019-03-01", "column \"Date\" (Sheet1)")
        );
        // One table alone (a Parquet file) is named by its column.
        assert_eq!(
            cov(&[&dates]),
            t("2019-01-05", "2019-03-01", "column \"Date\"")
        );
        assert_eq!(cov(&[&notes]), None);
        let months: Vec<NamedTable> = (1..=5u32)
            .map(|m| {
                let day = format!("2020-{m:02}-10");
                named(&format!("M{m}"), &[("Date", &[day.as_str(), day.as_str()])])
            })
            .collect();
        let refs: Vec<&NamedTable> = months.iter().collect();
        assert_eq!(
            cov(&refs),
            t(
                "2020-01-10",
                "2020-05-10",
                "columns \"Date\" (M1), \"Date\" (M2), \"Date\" (M3) and 2 more tables"
            )
        );
    }

    /// The time coverage `describe` finds in a file `name` holding `text`.
    pub(super) fn coverage(name: &str, text: &str) -> Option<(String, String, String)> {
        let d = crate::analyze::describe(&crate::analyze::Source::from_bytes(
            name,
            text.as_bytes().to_vec(),
        ));
        d.time_coverage.map(|c| (c.start, c.end, c.source))
    }

    pub(super) fn t(a: &str, b: &str, src: &str) -> Option<(String, String, String)> {
        Some((a.into(), b.into(), src.into()))
    }

    /// A year column beats the year in the file name, however it is named or typed, and
    /// wherever it stands.
    #[test]
    fn a_year_column_beats_the_year_in_the_name() {
        let years = |name: &str, fmt: &dyn Fn(u32) -> String| {
            let mut csv = format!("Region,{name},Count\n");
            for y in 2001..=2024 {
                csv.push_str(&format!("North,{},{}\n", fmt(y), y * 3));
            }
            csv
        };
        let int = |y: u32| y.to_string();
        let float = |y: u32| format!("{y}.0");
        for name in [
            "Year",
            "YEAR",
            "Yr",
            "Fiscal Year",
            "Year Start",
            "FiscalYear",
        ] {
            let want = t("2001-01-01", "2024-12-31", &format!("column {name:?}"));
            assert_eq!(
                coverage("2024_summary.csv", &years(name, &int)),
                want,
                "{name}"
            );
        }
        assert_eq!(
            coverage("2024_summary.csv", &years("year", &float)),
            t("2001-01-01", "2024-12-31", "column \"year\"")
        );
        // An export date on every row dates the file, not the data.
        let mut csv = String::from("Updated,Region,Year,Count\n");
        for y in 2001..=2024 {
            csv.push_str(&format!("2024-05-01,North,{y},{y}\n"));
        }
        assert_eq!(
            coverage("2024_x.csv", &csv),
            t("2001-01-01", "2024-12-31", "column \"Year\"")
        );
        // A year column whose values are not years is passed over for the next one.
        let mut csv = String::from("Years,Year,Count\n");
        for y in 2001..=2024 {
            csv.push_str(&format!("{},{y},1\n", y - 2000));
        }
        assert_eq!(
            coverage("2024_x.csv", &csv),
            t("2001-01-01", "2024-12-31", "column \"Year\"")
        );
        // Rendered with the path: the column still wins.
        let d = crate::analyze::describe(&crate::analyze::Source::from_bytes(
            "2024_summary.csv",
            years("Year", &int).into_bytes(),
        ));
        let shown = crate::analyze::render("2024_summary.csv", &d, Default::default());
        assert!(
            shown.contains("time coverage: 2001-01-01 … 2024-12-31 (from column \"Year\")"),
            "{shown}"
        );
    }

    #[test]
    fn a_table_preamble_dates_the_table_without_date_columns() {
        let mut text = String::from(":Product: Daily indices\n:Issued: 2021 Jun 04 0030 UTC\n#\n");
        text.push_str("#  Station   Kp   Ap\n");
        for i in 0..12 {
            text.push_str(&format!("   S{i:02}      {}    {}\n", i % 9, i * 3));
        }
        let d = crate::analyze::describe(&crate::analyze::Source::from_bytes(
            "indices.txt",
            text.into_bytes(),
        ));
        let cov = d.time_coverage.expect("coverage");
        assert_eq!(
            (cov.start.as_str(), cov.end.as_str(), cov.source.as_str()),
            ("2021-06-04", "2021-06-04", "preamble"),
            "{:?}",
            d.content
        );
    }
}
