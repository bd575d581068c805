//! The question-date parser on the ways questions write dates, and on numbers that are
//! not dates.

use super::*;

/// The intervals of `q` as `start…end` strings.
fn spans(q: &str) -> Vec<String> {
    asked(q)
        .iter()
        .map(|a| format!("{}…{}", a.start.iso(), a.end.iso()))
        .collect()
}

fn one(q: &str, start: &str, end: &str) {
    assert_eq!(spans(q), [format!("{start}…{end}")], "{q}");
}

#[test]
fn single_days_in_every_order() {
    for q in [
        "readings on 2012-05-03",
        "readings on 2012/05/03",
        "readings_20120503",
        "readings from May 3 2012",
        "readings from 3 May 2012",
        "readings from May 3rd, 2012",
        "readings from the 3rd of May 2012",
        "readings from May the 3rd 2012",
        "readings (3rd May, 2012)?",
        "what happened on Thursday, May 3, 2012?",
        "2012 May 3 bulletin",
        "2012-5-3",
    ] {
        one(q, "2012-05-03", "2012-05-03");
    }
}

#[test]
fn ranges_within_a_month() {
    for q in [
        "readings from May 3rd-6th 2012",
        "readings from May 3–6, 2012",
        "readings from 3–6 May 2012",
        "readings from 3-6 May 2012",
        "readings from the 3rd–6th of May 2012",
        "readings from the 3rd to the 6th of May 2012",
        "readings from May 3 through 6, 2012",
        "between May 3 and May 6, 2012",
        "between the 3rd and 6th of May 2012",
        "from 2012-05-03 to 2012-05-06",
        "May 3 - May 6 2012",
    ] {
        one(q, "2012-05-03", "2012-05-06");
    }
    for (q, start, end) in [
        ("flights Aug 9–11, 2016", "2016-08-09", "2016-08-11"),
        ("flights Aug. 9-11, 2016", "2016-08-09", "2016-08-11"),
        // Across months and years, the start takes what it lacks from the end.
        ("May 30 – June 2, 2012", "2012-05-30", "2012-06-02"),
        ("Dec 30 - Jan 2 2013", "2012-12-30", "2013-01-02"),
        ("May 3 2012 to May 6", "2012-05-03", "2012-05-06"),
    ] {
        one(q, start, end);
    }
}

#[test]
fn months_quarters_and_years() {
    for (q, start, end) in [
        ("readings from May 2012", "2012-05-01", "2012-05-31"),
        ("readings from May, 2012", "2012-05-01", "2012-05-31"),
        ("edges of 2019-08", "2019-08-01", "2019-08-31"),
        ("February 2024", "2024-02-01", "2024-02-29"),
        ("sales in Q4 2014", "2014-10-01", "2014-12-31"),
        ("sales 2014-Q4", "2014-10-01", "2014-12-31"),
        ("sales from Q1 to Q3 2014", "2014-01-01", "2014-09-30"),
        ("GDP in 2019", "2019-01-01", "2019-12-31"),
        ("GDP 2002–2023", "2002-01-01", "2023-12-31"),
        ("GDP from 2002 to 2023", "2002-01-01", "2023-12-31"),
        ("GDP between 2002 and 2023", "2002-01-01", "2023-12-31"),
        ("from May 2012 to March 2013", "2012-05-01", "2013-03-31"),
    ] {
        one(q, start, end);
    }
}

/// Several dates in one question stay apart: the hull would ask for the years between.
#[test]
fn several_ranges_are_kept_apart() {
    assert_eq!(
        spans("the 3rd–6th of May 2012 versus the 9th–12th of August 2016"),
        ["2012-05-03…2012-05-06", "2016-08-09…2016-08-12"]
    );
    assert_eq!(
        spans("May 3rd-6th 2012 and Aug 9–11, 2016"),
        ["2012-05-03…2012-05-06", "2016-08-09…2016-08-11"]
    );
    assert_eq!(
        spans("compare 2012 with 2016, and 2012 again"),
        ["2012-01-01…2012-12-31", "2016-01-01…2016-12-31"]
    );
    assert_eq!(
        spans("May 2012 versus 2016-08-09"),
        ["2012-05-01…2012-05-31", "2016-08-09…2016-08-09"]
    );
}

#[test]
fn numbers_that_are_not_dates() {
    for q in [
        "top 10 stations",
        "the 3 columns with most nulls",
        "rows 10-20 of the table",
        "the 3rd largest value",
        "you may 3 times retry",
        "version 2.1.3, page 3 of 12",
        "phone 555-123-4567",
        "station-0042 readings",
        "between 10 and 20 percent",
        "the 31st of never",
        "May 3rd",
        "Q4 revenue",
        "2019-13-45",
        "ids 12345678",
        "3 May",
        "the 3rd to the 6th",
    ] {
        assert_eq!(spans(q), Vec::<String>::new(), "{q}");
    }
    // A number before a year does not take it as its own: the year stands alone.
    one("top 10 2012 files", "2012-01-01", "2012-12-31");
    one("the 3rd - 2012 report", "2012-01-01", "2012-12-31");
}

#[test]
fn impossible_days_are_no_dates() {
    // Only the year is left of them.
    one("February 30 2012", "2012-01-01", "2012-12-31");
    one("May 32 2012", "2012-01-01", "2012-12-31");
}
