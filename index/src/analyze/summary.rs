//! The words people write in a row's first cell when the row sums up the rows above it
//! (`Total`, `Grand total`, `Mean`, `All`, …): one vocabulary for every analyzer that
//! reads tables (delimited text, sheets), so a CSV and a workbook agree on what a summary
//! row is. Whether a labelled row *is* a summary is the analyzer's call (it sits at the
//! table's end, or its figures are the column's sum or mean): a `Total` category in the
//! middle of the data is data.

/// What a row label states, in the vocabulary below, or `None` for any other label.
/// `Total`, `TOTAL:`, `Grand total`, `Total, all industries`, `Mean`, `Std. dev.` all
/// match; `Totally` and `Mean temperature` do not.
pub(crate) fn summary_label(cell: &str) -> Option<&'static str> {
    let t = cell.trim().trim_end_matches([':', '.', '*']).trim();
    if t.is_empty() || t.len() > 48 {
        return None;
    }
    let lower = t.to_lowercase();
    // The label's first words (up to a comma or a bracket) carry the meaning: `Total,
    // all sectors`, `Total (excl. VAT)`, `All areas`.
    let head = lower
        .split([',', '(', '[', '–', ':'])
        .next()
        .unwrap_or("")
        .split(" - ")
        .next()
        .unwrap_or("")
        .trim();
    let words: Vec<&str> = head.split_whitespace().collect();
    let joined = words.join(" ");
    const EXACT: &[(&str, &str)] = &[
        ("total", "total"),
        ("totals", "total"),
        ("grand total", "total"),
        ("subtotal", "subtotal"),
        ("sub total", "subtotal"),
        ("sub-total", "subtotal"),
        ("sum", "sum"),
        ("overall", "total"),
        ("all", "total"),
        ("mean", "mean"),
        ("average", "mean"),
        ("avg", "mean"),
        ("median", "median"),
        ("min", "minimum"),
        ("minimum", "minimum"),
        ("max", "maximum"),
        ("maximum", "maximum"),
        ("std", "standard deviation"),
        ("std dev", "standard deviation"),
        ("std. dev", "standard deviation"),
        ("stdev", "standard deviation"),
        ("standard deviation", "standard deviation"),
        ("count", "count"),
        ("n", "count"),
    ];
    if let Some((_, what)) = EXACT.iter().find(|(w, _)| *w == joined) {
        return Some(what);
    }
    // `Total all areas`, `All regions`, `Total United States`: a total word first, then a
    // short qualifier (at most three words).
    match words.first() {
        Some(&("total" | "totals")) if words.len() <= 4 => Some("total"),
        Some(&"all") if words.len() == 2 => Some("total"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::summary_label;

    #[test]
    fn summary_words_and_their_qualified_forms_match() {
        for (label, what) in [
            ("Total", "total"),
            ("TOTAL:", "total"),
            ("Grand Total", "total"),
            ("Total, all industries", "total"),
            ("Total (excl. VAT)", "total"),
            ("All areas", "total"),
            ("Mean", "mean"),
            ("Average", "mean"),
            ("Std. dev.", "standard deviation"),
            ("Max", "maximum"),
            ("Sub-total", "subtotal"),
        ] {
            assert_eq!(summary_label(label), Some(what), "{label}");
        }
    }

    #[test]
    fn labels_that_only_start_like_a_summary_do_not() {
        for label in [
            "Totally Spies",
            "Mean temperature",
            "Maximum likelihood estimate of the rate",
            "Allentown",
            "All the small things considered here",
            "",
            "North",
        ] {
            assert_eq!(summary_label(label), None, "{label}");
        }
    }
}
