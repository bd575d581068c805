//! What a column's cells say about time beyond their type, for the `time-forms` reading
//! rule: how many are `YYYYMM` months, `YYYYMMDD` or `YYYYDDD` days, `YYYY-MM` or
//! `YYYY-DDD` text, quarters (`2001Q1`, `Q1 2001`, `Q1` alone), date-times with a
//! time-scale suffix or odd separators (`2014.03.23_20:24:00_TAI`), years (plain,
//! fractional, with a marker), and the order of the numbers. A few comparisons per cell, and nothing at all when the rule is off; the
//! column's reading is decided once, when it is finished ([`TimeCells::read`]).

use super::super::dates::Day;
use super::super::rules::{self, ReadingRule};
use super::super::time::forms::{self, Order, QuarterForm, StampForm, TextTime, YearForm};
use super::ColumnType;

/// Cells of one form, and the first and last day (or year) they stand for.
#[derive(Clone, Copy)]
struct Seen<T> {
    n: u64,
    span: Option<(T, T)>,
}

impl<T> Default for Seen<T> {
    fn default() -> Self {
        Seen { n: 0, span: None }
    }
}

impl<T: Ord + Copy> Seen<T> {
    fn add(&mut self, lo: T, hi: T) {
        self.n += 1;
        self.span = Some(match self.span {
            None => (lo, hi),
            Some((a, b)) => (a.min(lo), b.max(hi)),
        });
    }
}

type Days = Seen<Day>;
type Years = Seen<u32>;

/// The first and last day of a month.
fn month(y: u32, m: u32) -> Option<(Day, Day)> {
    Some((Day::new(y, m, 1)?, Day::month_end(y, m)?))
}

// Integer forms, as bits: four-digit years, `YYYYMM`, `YYYYDDD`, `YYYYMMDD`.
const YEAR: u8 = 1;
const MONTH: u8 = 2;
const DAY7: u8 = 4;
const DAY8: u8 = 8;

/// Accumulates what one column's cells say about time.
#[derive(Default)]
pub(super) struct TimeCells {
    on: bool,
    /// Numbers, in file order: how many, the first, the one before, how often a number
    /// is above or below the one before it.
    numbers: u64,
    first: f64,
    prev: f64,
    up: u64,
    down: u64,
    /// The integer forms (`YEAR`, `MONTH`, `DAY7`, `DAY8`) some integer was not of.
    broken: u8,
    /// `YYYYMM` integers; how many of the moves between consecutive ones stay in the
    /// month or go to the next or previous one.
    months: Days,
    prev_month: Option<u32>,
    month_steps: u64,
    /// `YYYYMMDD` and `YYYYDDD` integers.
    days8: Days,
    days7: Days,
    /// Whole numbers in [`forms::YEARS`] (`2001`, `2001.0`), and fractional ones.
    years: Years,
    fractional: u64,
    /// `YYYY-MM` text, the ones of them that also read as a span (`2001-02`), and the
    /// years those spans name.
    text_months: Days,
    month_spans: Years,
    /// `YYYY-DDD` text.
    ordinals: Days,
    /// Quarters with their year (`2001Q1`), the form of the first and whether another
    /// cell puts the year on the other side.
    quarters: Days,
    quarter_form: Option<QuarterForm>,
    quarter_sides: bool,
    /// Date-times no date shape reads (`2014.03.23_20:24:00_TAI`, `… 20:24:00 UTC`),
    /// the form of the first and whether another cell is written otherwise.
    stamps: Days,
    stamp_form: Option<StampForm>,
    stamp_forms: bool,
    /// `Q1`..`Q4` alone: a quarter column to read beside a year column (their numbers
    /// go to the order).
    lone_quarters: Seen<u32>,
    /// Years written with a marker or as a fiscal year, and by form.
    written: Years,
    forms: Vec<(YearForm, u64)>,
    /// Short text without a digit (`..`, `x`, `n.a.`).
    missing: u64,
    /// A text cell of no form was seen: every text reading needs each cell to be of
    /// one, so no text cell is looked at again.
    text_off: bool,
}

/// How a column's values are read as time.
pub(super) struct Reading {
    /// The column's type under the reading.
    pub kind: ColumnType,
    /// How the values write time (strftime-like, or `fractional years`).
    pub date_format: String,
    /// New `min` and `max` (ISO days for a date column, years for text), when they change.
    pub range: Option<(String, String)>,
    /// The first and last day the values stand for.
    pub span: (Day, Day),
}

impl TimeCells {
    pub(super) fn new() -> Self {
        TimeCells {
            on: rules::on(ReadingRule::TimeForms),
            ..Default::default()
        }
    }

    fn number(&mut self, x: f64) {
        if self.numbers == 0 {
            self.first = x;
        } else if x > self.prev {
            self.up += 1;
        } else if x < self.prev {
            self.down += 1;
        }
        self.numbers += 1;
        self.prev = x;
    }

    /// A plain integer `v` of value `x`.
    #[inline]
    pub(super) fn int(&mut self, v: &str, x: f64) {
        if !self.on {
            return;
        }
        self.number(x);
        // Each form needs every integer of the column: once one is not of it, the form
        // is not looked for again.
        let form = match v.len() {
            4 => YEAR,
            6 => MONTH,
            7 => DAY7,
            8 => DAY8,
            _ => 0,
        };
        self.broken |= (YEAR | MONTH | DAY7 | DAY8) & !form;
        if self.broken & form != 0 {
            return;
        }
        let before = self.years.n + self.months.n + self.days7.n + self.days8.n;
        match v.len() {
            4 => {
                if let Some(y) = forms::year4(v) {
                    self.years.add(y, y);
                }
            }
            6 => {
                if let Some((y, m)) = forms::year_month(v) {
                    let code = y * 12 + m;
                    if let Some(p) = self.prev_month {
                        if code.abs_diff(p) <= 1 {
                            self.month_steps += 1;
                        }
                    }
                    self.prev_month = Some(code);
                    if let Some((lo, hi)) = month(y, m) {
                        self.months.add(lo, hi);
                    }
                }
            }
            7 => {
                if let Some(d) = forms::year_ordinal(v) {
                    self.days7.add(d, d);
                }
            }
            8 => {
                if let Some(d) = forms::year_month_day(v) {
                    self.days8.add(d, d);
                }
            }
            _ => {}
        }
        if self.years.n + self.months.n + self.days7.n + self.days8.n == before {
            self.broken |= form;
        }
    }

    /// A plain float.
    #[inline]
    pub(super) fn float(&mut self, x: f64) {
        if !self.on {
            return;
        }
        self.number(x);
        let years = *forms::YEARS.start() as f64..(*forms::YEARS.end() + 1) as f64;
        if years.contains(&x) {
            if x.fract() == 0.0 {
                self.years.add(x as u32, x as u32);
            } else {
                self.fractional += 1;
            }
        }
    }

    /// A cell that is neither a number nor a date; whether it is time in a text form
    /// (or a missing marker among such cells), which the column's reading may count on.
    pub(super) fn text(&mut self, v: &str) -> bool {
        if !self.on || self.text_off {
            return false;
        }
        match forms::text_time(v) {
            Some(TextTime::Month { y, m, span }) => {
                if let Some((lo, hi)) = month(y, m) {
                    self.text_months.add(lo, hi);
                }
                if span {
                    self.month_spans.add(y, y + 1);
                }
            }
            Some(TextTime::Ordinal(d)) => self.ordinals.add(d, d),
            Some(TextTime::Quarter { y, q, form }) => {
                if let Some((lo, hi)) = forms::quarter_days(y, q) {
                    self.quarters.add(lo, hi);
                }
                match self.quarter_form {
                    None => self.quarter_form = Some(form),
                    Some(f) => self.quarter_sides |= f.year_first != form.year_first,
                }
            }
            Some(TextTime::Year { first, last, form }) => {
                self.written.add(first, last);
                match self.forms.iter_mut().find(|(f, _)| *f == form) {
                    Some((_, n)) => *n += 1,
                    None => self.forms.push((form, 1)),
                }
            }
            None => {
                if let Some(q) = forms::lone_quarter(v) {
                    self.lone_quarters.add(q, q);
                    self.number(f64::from(q));
                } else if let Some((d, form)) = forms::stamp(v) {
                    self.stamps.add(d, d);
                    match self.stamp_form {
                        None => self.stamp_form = Some(form),
                        Some(f) => self.stamp_forms |= f != form,
                    }
                } else if forms::missing_like(v) {
                    self.missing += 1;
                } else {
                    self.text_off = true;
                    return false;
                }
            }
        }
        true
    }

    /// The order of the numbers, for reading a pair of columns row by row; of the
    /// quarters' numbers when every one of the `non_null` cells is a lone quarter.
    pub(super) fn order(&self, non_null: u64) -> Option<Order> {
        let lone = self.lone_quarters;
        (self.on && self.numbers > 0).then_some(Order {
            first: self.first,
            last: self.prev,
            up: self.up,
            down: self.down,
            quarters: lone
                .span
                .filter(|_| lone.n == non_null && lone.n == self.numbers),
        })
    }

    /// How the column is read as time, if it is: `name` is its header, `kind` its type
    /// as profiled, `non_null` and `distinct` its counts, `min`/`max` its range.
    pub(super) fn read(
        &self,
        name: &str,
        kind: ColumnType,
        non_null: u64,
        distinct: u64,
        range: (Option<&str>, Option<&str>),
    ) -> Option<Reading> {
        if !self.on || non_null == 0 || forms::names_a_key(name) {
            return None;
        }
        let timely = forms::names_time(name);
        let date = |days: Days, format: &str, month_first: bool| {
            let (lo, hi) = days.span?;
            // A month stands for all its days; its value as pandas reads it is its first.
            let shown = if month_first {
                Day::new(hi.y as u32, hi.m as u32, 1)?
            } else {
                hi
            };
            Some(Reading {
                kind: ColumnType::Date,
                date_format: format.into(),
                range: Some((lo.iso(), shown.iso())),
                span: (lo, hi),
            })
        };
        let years = |y: Years, format: String, range: bool| {
            let (lo, hi) = y.span?;
            Some(Reading {
                kind,
                date_format: format,
                range: range.then(|| (lo.to_string(), hi.to_string())),
                span: (Day::new(lo, 1, 1)?, Day::new(hi, 12, 31)?),
            })
        };
        match kind {
            ColumnType::Integer => {
                // Months need the header or month-by-month steps: six-digit numbers with
                // a valid month part are common ids too.
                let moves = self.months.n.saturating_sub(1);
                let steps = distinct >= 3 && self.month_steps * 10 >= moves * 9;
                if self.months.n == non_null && (timely || steps) {
                    return date(self.months, "%Y%m", true);
                }
                let monotone = distinct >= 3 && (self.up == 0 || self.down == 0);
                if self.days8.n == non_null && (timely || monotone) {
                    return date(self.days8, "%Y%m%d", false);
                }
                if self.days7.n == non_null && (timely || forms::names_day_of_year(name)) {
                    return date(self.days7, "%Y%j", false);
                }
                // Years under a date or time header (a `year` header reads as years
                // without this rule).
                if self.years.n == non_null && timely && !forms::names_year(name) {
                    return years(self.years, "%Y".into(), false);
                }
                None
            }
            ColumnType::Float => {
                let (lo, hi) = (range.0?.parse::<f64>().ok()?, range.1?.parse::<f64>().ok()?);
                let all = self.years.n + self.fractional == non_null && self.numbers == non_null;
                let strictly = self.up + 1 == self.numbers || self.down + 1 == self.numbers;
                let sub_yearly = (hi - lo) / (self.numbers.max(2) - 1) as f64 <= 1.0;
                let ordered = non_null >= 12 && strictly && sub_yearly;
                if self.fractional > 0 && all && (timely || ordered) {
                    return Some(Reading {
                        kind,
                        date_format: "fractional years".into(),
                        range: None,
                        span: (forms::fractional_year(lo)?, forms::fractional_year(hi)?),
                    });
                }
                if self.years.n == non_null && timely && !forms::names_year(name) {
                    return years(self.years, "%Y".into(), false);
                }
                None
            }
            ColumnType::Text | ColumnType::Categorical | ColumnType::Identifier => {
                // Quarters with their year, all on one side: the first day of the last
                // quarter is its value as pandas reads it (`Period.start_time`).
                if let (true, false, Some(form), Some((lo, hi))) = (
                    self.quarters.n == non_null,
                    self.quarter_sides,
                    self.quarter_form,
                    self.quarters.span,
                ) {
                    let shown = Day::new(hi.y as u32, hi.m as u32 - 2, 1)?;
                    return Some(Reading {
                        kind: ColumnType::Date,
                        date_format: form.pattern(),
                        range: Some((lo.iso(), shown.iso())),
                        span: (lo, hi),
                    });
                }
                // Date-times (or dotted dates) all written one way.
                if let (true, false, Some(form), Some((lo, hi))) = (
                    self.stamps.n == non_null,
                    self.stamp_forms,
                    self.stamp_form,
                    self.stamps.span,
                ) {
                    return Some(Reading {
                        kind: if form.time_sep == 0 {
                            ColumnType::Date
                        } else {
                            ColumnType::Datetime
                        },
                        date_format: form.pattern(),
                        range: Some((lo.iso(), hi.iso())),
                        span: (lo, hi),
                    });
                }
                if self.text_months.n == non_null {
                    // `2001-02, 2002-03`: every value is followed by its next year: fiscal
                    // years, not months; one such value alone could be either.
                    if self.month_spans.n == non_null {
                        return (distinct >= 2)
                            .then(|| years(self.month_spans, "%Y-%y".into(), true))
                            .flatten();
                    }
                    return date(self.text_months, "%Y-%m", true);
                }
                if self.ordinals.n == non_null {
                    return date(self.ordinals, "%Y-%j", false);
                }
                // Years, some written with a marker or as fiscal years, or a few cells
                // holding a missing marker: still a column of years.
                let odd = self.written.n + self.missing;
                let plain = self.years.n;
                let mostly = plain * 2 >= non_null || (timely && self.written.n * 2 >= non_null);
                if odd > 0
                    && plain + odd == non_null
                    && self.missing * 2 < non_null
                    && self.numbers == plain
                    && mostly
                    && plain + self.written.n > 0
                {
                    let mut all = self.years;
                    if let Some((a, b)) = self.written.span {
                        all.add(a, b);
                    }
                    let dominant = self
                        .forms
                        .iter()
                        .max_by_key(|(_, n)| *n)
                        .filter(|(_, n)| *n > plain)
                        .map_or(YearForm::Marked, |(f, _)| *f);
                    return years(all, dominant.pattern(), true);
                }
                None
            }
            _ => None,
        }
    }
}
