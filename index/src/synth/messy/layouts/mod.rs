//! The corpus files, one function per layout: each writes the file the way a publisher
//! does and states its facts from the values it wrote.

mod companions;
mod large;
mod numbers;
mod regions;
mod reports;
mod science;
mod timeforms;
mod values;

pub(super) use large::parquet_trips;
pub(super) use timeforms::{parquet_periods, sqlite_observations};

use super::{Column, Expected, Kind, TableFacts};
use chrono::{Days, NaiveDate};
use fastrand::Rng;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

const COMMA: &str = r#"thousands ",""#;

/// `1234567` as `1,234,567` (with `sep`).
fn thousands(n: u64, sep: char) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(sep);
        }
        out.push(c);
    }
    out
}

/// A CSV cell, quoted when it holds a comma or a quote.
fn q(s: &str) -> String {
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Smallest and largest of `v`.
fn span<T: PartialOrd + Copy>(v: &[T]) -> (T, T) {
    let mut lo = v[0];
    let mut hi = v[0];
    for &x in v {
        if x < lo {
            lo = x;
        }
        if x > hi {
            hi = x;
        }
    }
    (lo, hi)
}

/// An integer column with the range of `v`.
fn ints(name: &str, v: &[i64]) -> Column {
    let (lo, hi) = span(v);
    Column::new(name, Kind::Integer).range(lo, hi)
}

/// A float column with the range of `tenths` (or hundredths: `scale` 100) as written.
fn decimals(name: &str, v: &[i64], scale: f64) -> Column {
    let (lo, hi) = span(v);
    Column::new(name, Kind::Float).range(lo as f64 / scale, hi as f64 / scale)
}

fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).expect("a valid day")
}

fn iso(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

type File = (String, Vec<u8>, Expected);

/// Every text file of the corpus, with its facts.
pub(super) fn text_files() -> Vec<File> {
    let mut v = vec![
        reports::report(),
        reports::grouped_header(),
        reports::two_tables(),
        numbers::tab_in_csv(),
        numbers::european(),
        numbers::notation(),
        numbers::dates_in_words(),
        science::widening_fixed_width(),
        science::year_column_and_year_in_name(),
        science::bulletin(),
        science::comment_text(),
        large::large_csv(),
        regions::table_over_key_values(),
        regions::summary_rows(),
        regions::summary_words_as_categories(),
        regions::stacked_same_width(),
        regions::stacked_other_width(),
        regions::words_amid_numbers(),
        regions::headerless_list(),
        regions::list_with_header(),
        regions::two_row_header(),
        timeforms::yyyymm_periods(),
        timeforms::fractional_years(),
        timeforms::year_and_day_of_year(),
        timeforms::ordinal_days(),
        timeforms::years_with_marks(),
        timeforms::fiscal_years(),
        timeforms::six_digit_numbers(),
        timeforms::prices_in_the_year_range(),
        timeforms::quarters_in_one_column(),
        timeforms::year_and_quarter(),
        timeforms::quarter_like_codes(),
        timeforms::date_times_with_a_time_scale(),
        timeforms::versions_and_addresses(),
        timeforms::html_tables_with_periods(),
        values::missing_markers(),
        values::measures_and_identifiers(),
        values::durations(),
        values::footnotes_in_other_conventions(),
    ];
    v.extend(science::dat_with_format_doc());
    v.extend(science::csv_with_variable_description());
    v.extend(companions::fortran_listing());
    v.extend(companions::column_range_listing());
    v.extend(companions::not_a_field_list());
    v
}
