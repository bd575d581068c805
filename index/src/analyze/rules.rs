//! Reading rules: the named decisions an analyzer takes about where a table is and what
//! its values mean beyond the cells as written (a `Total` row kept as a note, `M` read as
//! a missing value, `200001` read as January 2000, …).
//!
//! Every such decision is a [`ReadingRule`]: it can be switched off (`index
//! --reading-rules`, `LAKESTAR_READING_RULES`), each description counts how often each
//! rule fired ([`Description::rules`](super::Description::rules)), and the analyzer
//! states what it did in the table's notes. The set in force is part of the analyzer key,
//! so descriptions made under other rules are re-made, never mixed.
//!
//! The set is process-wide: one process reads one lake under one set of rules, and the
//! analyzer key that decides whether a cached description is current must agree in every
//! place that computes it (the indexer's workers, change detection, archive members).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, OnceLock};

/// One named reading rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReadingRule {
    /// Rows at a table's end labelled `Total`, `Mean`, `All`, … (or equal to the column's
    /// sum or mean) are kept as notes, not data rows.
    SummaryRows,
    /// Below a table, a block of `label,value` lines (totals, percentages, notes with
    /// numbers) ends the table and is kept as notes.
    KeyValueBlocks,
    /// A short token that is not a number (`M`, `N/A`, `--`, `(NA)`, `*`, `..`) in a
    /// column of numbers is a missing-value marker: the column stays numeric.
    MissingMarkers,
    /// Distinct numbers that are quantities (thousands separators, a measure's name)
    /// stay numbers rather than identifiers; numbers with a footnote mark (`2023r`,
    /// `1 234 p`, `1.234,5 r`) stay numbers.
    Measures,
    /// `HH:MM:SS`, `1h 30m`, ISO 8601 `PT…` values are durations, profiled in seconds.
    Durations,
    /// Time written as `YYYYMM`, `YYYY-DDD`, quarters (`2001Q1`), date-times with a time
    /// scale (`2014.03.23_20:24:00_TAI`), year and day-of-year or quarter columns, or
    /// fractional years is read as time.
    TimeForms,
    /// One to three header rows merged into one name per column (`2021 / Estimate`).
    HeaderDepth,
    /// Blocks of a sheet separated by empty columns are separate tables.
    SideBySide,
    /// Blocks stacked in one sheet or file, each with its own header, are separate tables.
    StackedTables,
    /// A one-column list whose first cell is of the same kind as the rest has no header.
    HeaderlessList,
    /// A text file listing field names with positions, widths or format codes names the
    /// columns of the headerless fixed-width files beside it.
    FormatCompanion,
}

impl ReadingRule {
    /// Every rule, in the order they are listed.
    pub const ALL: &'static [ReadingRule] = &[
        ReadingRule::SummaryRows,
        ReadingRule::KeyValueBlocks,
        ReadingRule::MissingMarkers,
        ReadingRule::Measures,
        ReadingRule::Durations,
        ReadingRule::TimeForms,
        ReadingRule::HeaderDepth,
        ReadingRule::SideBySide,
        ReadingRule::StackedTables,
        ReadingRule::HeaderlessList,
        ReadingRule::FormatCompanion,
    ];

    /// The rule's name, as `--reading-rules` takes it.
    pub fn name(self) -> &'static str {
        match self {
            ReadingRule::SummaryRows => "summary-rows",
            ReadingRule::KeyValueBlocks => "key-value-blocks",
            ReadingRule::MissingMarkers => "missing-markers",
            ReadingRule::Measures => "measures",
            ReadingRule::Durations => "durations",
            ReadingRule::TimeForms => "time-forms",
            ReadingRule::HeaderDepth => "header-depth",
            ReadingRule::SideBySide => "side-by-side",
            ReadingRule::StackedTables => "stacked-tables",
            ReadingRule::HeaderlessList => "headerless-list",
            ReadingRule::FormatCompanion => "format-companion",
        }
    }

    /// The rule of this name.
    pub fn from_name(name: &str) -> Option<ReadingRule> {
        ReadingRule::ALL.iter().copied().find(|r| r.name() == name)
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

impl fmt::Display for ReadingRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of reading rules in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadingRules(u32);

impl Default for ReadingRules {
    fn default() -> Self {
        ReadingRules::all()
    }
}

/// A `--reading-rules` value that names no rule.
#[derive(Debug, thiserror::Error)]
#[error("unknown reading rule `{0}`: use default, none, or a comma-separated list of {names} (a leading `-` turns one off)", names = ReadingRule::ALL.iter().map(|r| r.name()).collect::<Vec<_>>().join(", "))]
pub struct UnknownRule(pub String);

impl ReadingRules {
    /// Every rule (the default).
    pub fn all() -> Self {
        ReadingRules(ReadingRule::ALL.iter().fold(0, |a, r| a | r.bit()))
    }

    /// No rule: tables read as the cells are written.
    pub fn none() -> Self {
        ReadingRules(0)
    }

    /// Parse `default`, `none`, `NAME,NAME` (only these) or `-NAME,-NAME` (all but these).
    pub fn parse(spec: &str) -> Result<Self, UnknownRule> {
        let spec = spec.trim();
        match spec {
            "" | "default" | "all" => return Ok(ReadingRules::all()),
            "none" => return Ok(ReadingRules::none()),
            _ => {}
        }
        let parts: Vec<&str> = spec
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        let subtract = parts.iter().all(|p| p.starts_with('-'));
        let mut set = if subtract {
            ReadingRules::all()
        } else {
            ReadingRules::none()
        };
        for p in parts {
            let (off, name) = match p.strip_prefix('-') {
                Some(n) => (true, n),
                None => (false, p.strip_prefix('+').unwrap_or(p)),
            };
            let rule = ReadingRule::from_name(name).ok_or_else(|| UnknownRule(p.to_string()))?;
            set = if off {
                ReadingRules(set.0 & !rule.bit())
            } else {
                ReadingRules(set.0 | rule.bit())
            };
        }
        Ok(set)
    }

    /// Whether `rule` is in force.
    pub fn on(self, rule: ReadingRule) -> bool {
        self.0 & rule.bit() != 0
    }

    /// The rules switched off, by name.
    pub fn off(self) -> Vec<&'static str> {
        ReadingRule::ALL
            .iter()
            .filter(|r| !self.on(**r))
            .map(|r| r.name())
            .collect()
    }

    /// What the analyzer key carries for this set: nothing for the default, else the
    /// rules switched off (`~-summary-rows,-durations`).
    pub fn key_suffix(self) -> String {
        let off = self.off();
        if off.is_empty() {
            String::new()
        } else {
            format!(
                "~{}",
                off.iter()
                    .map(|n| format!("-{n}"))
                    .collect::<Vec<_>>()
                    .join(",")
            )
        }
    }
}

impl fmt::Display for ReadingRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let off = self.off();
        if off.is_empty() {
            f.write_str("default")
        } else if off.len() == ReadingRule::ALL.len() {
            f.write_str("none")
        } else {
            write!(
                f,
                "{}",
                off.iter()
                    .map(|n| format!("-{n}"))
                    .collect::<Vec<_>>()
                    .join(",")
            )
        }
    }
}

static IN_FORCE: OnceLock<ReadingRules> = OnceLock::new();

/// Put `rules` in force for this process. The first call wins; it must come before any
/// description is made (the edge calls it when it parses its options). Returns false when
/// another set was already in force.
pub fn install(rules: ReadingRules) -> bool {
    IN_FORCE.get_or_init(|| rules) == &rules
}

/// The rules in force: those installed, else every rule.
pub fn in_force() -> ReadingRules {
    IN_FORCE.get().copied().unwrap_or_default()
}

/// Whether `rule` is in force in this process.
pub fn on(rule: ReadingRule) -> bool {
    in_force().on(rule)
}

/// How often each rule fired while one file was described. Analyzers add to it through
/// [`Source::applied`](super::Source::applied); the description keeps the totals.
#[derive(Debug, Default)]
pub struct Applied(Mutex<BTreeMap<ReadingRule, u64>>);

impl Applied {
    /// `rule` fired `n` times (rows kept as notes, cells read as missing, columns read as
    /// durations, tables split off, …).
    pub fn add(&self, rule: ReadingRule, n: u64) {
        if n == 0 {
            return;
        }
        if let Ok(mut m) = self.0.lock() {
            *m.entry(rule).or_default() += n;
        }
    }

    /// The counts so far, by rule name.
    pub fn counts(&self) -> BTreeMap<String, u64> {
        self.0
            .lock()
            .map(|m| m.iter().map(|(r, n)| (r.name().to_string(), *n)).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_names_rules_on_or_off() {
        assert_eq!(ReadingRules::parse("default").unwrap(), ReadingRules::all());
        assert_eq!(ReadingRules::parse("none").unwrap(), ReadingRules::none());
        let only = ReadingRules::parse("summary-rows,durations").unwrap();
        assert!(only.on(ReadingRule::SummaryRows) && only.on(ReadingRule::Durations));
        assert!(!only.on(ReadingRule::MissingMarkers));
        let but = ReadingRules::parse("-summary-rows").unwrap();
        assert!(!but.on(ReadingRule::SummaryRows) && but.on(ReadingRule::MissingMarkers));
        assert_eq!(but.key_suffix(), "~-summary-rows");
        assert_eq!(but.to_string(), "-summary-rows");
        assert_eq!(ReadingRules::all().key_suffix(), "");
        let err = ReadingRules::parse("totals").unwrap_err().to_string();
        assert!(
            err.contains("summary-rows") && err.contains("`totals`"),
            "{err}"
        );
    }

    #[test]
    fn every_rule_has_a_name_that_parses_back() {
        for r in ReadingRule::ALL {
            assert_eq!(ReadingRule::from_name(r.name()), Some(*r));
        }
        assert!(ReadingRule::ALL.len() < 32);
    }

    #[test]
    fn applied_counts_by_name() {
        let a = Applied::default();
        a.add(ReadingRule::SummaryRows, 2);
        a.add(ReadingRule::SummaryRows, 1);
        a.add(ReadingRule::Durations, 0);
        assert_eq!(
            a.counts().into_iter().collect::<Vec<_>>(),
            vec![("summary-rows".to_string(), 3)]
        );
    }
}
