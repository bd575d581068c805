//! Small helpers for printing.

use indicatif::ProgressState;
use std::io::Write;

/// Print `value` as one line of JSON on stdout.
pub(crate) fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// `n` and the noun, in the singular for one: "1 path", "3 paths".
pub(crate) fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A rate for people: whole units above 10 per second, one decimal below.
pub(crate) fn rate(per_sec: f64, unit: &str) -> String {
    if !per_sec.is_finite() || per_sec <= 0.0 {
        return format!("— {unit}/s");
    }
    if per_sec >= 10.0 {
        format!("{per_sec:.0} {unit}/s")
    } else {
        format!("{per_sec:.1} {unit}/s")
    }
}

/// A wait for people: "54 s", "1 min 54 s", "2 h 5 min".
pub(crate) fn waited(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s} s"),
        (0, m, s) => format!("{m} min {s} s"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}

/// A progress-bar template key `{rate}` for `unit`s per second, rounded as [`rate`]
/// (indicatif's own `{per_sec}` prints four decimals).
pub(crate) fn rate_key(
    unit: &'static str,
) -> impl Fn(&ProgressState, &mut dyn std::fmt::Write) + Send + Sync + Clone {
    move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
        let _ = w.write_str(&rate(state.per_sec(), unit));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_rates_read_as_words() {
        assert_eq!(count(1u64, "path"), "1 path");
        assert_eq!(count(0u64, "path"), "0 paths");
        assert_eq!(count(12u64, "file"), "12 files");
        assert_eq!(rate(76.7968, "files"), "77 files/s");
        assert_eq!(rate(2.46, "files"), "2.5 files/s");
        assert_eq!(rate(0.0, "files"), "— files/s");
        let w = |s| waited(std::time::Duration::from_secs(s));
        assert_eq!(w(54), "54 s");
        assert_eq!(w(114), "1 min 54 s");
        assert_eq!(w(7530), "2 h 5 min");
    }
}
