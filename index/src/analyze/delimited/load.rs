//! The pandas call that loads a delimited table exactly as described: the same column
//! names (pandas' own naming of empty and repeated header cells), the same rows.

use crate::analyze::profile::{ColumnProfile, ColumnType};

/// Column names as pandas makes them from header cells: `Unnamed: N` for an empty cell,
/// `x.1`, `x.2` for repeats (pandas' `dedup_names`).
pub(super) fn column_names(raw: &[String], skip_initial_space: bool) -> Vec<String> {
    let named: Vec<String> = raw
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let n = if skip_initial_space {
                n.trim_start_matches(' ')
            } else {
                n.as_str()
            };
            if n.is_empty() {
                format!("Unnamed: {i}")
            } else {
                n.to_string()
            }
        })
        .collect();
    dedup(named)
}

/// pandas' `dedup_names`, step for step.
fn dedup(names: Vec<String>) -> Vec<String> {
    let mut counts: std::collections::HashMap<String, usize> = Default::default();
    names
        .into_iter()
        .map(|mut col| {
            let mut cur = counts.get(&col).copied().unwrap_or(0);
            while cur > 0 {
                counts.insert(col.clone(), cur + 1);
                col = format!("{col}.{cur}");
                cur = counts.get(&col).copied().unwrap_or(0);
            }
            counts.insert(col.clone(), cur + 1);
            col
        })
        .collect()
}

/// What the call must say.
pub(super) struct Load<'a> {
    pub delimiter: u8,
    /// Double quotes quote fields (else `quoting=3`, csv.QUOTE_NONE).
    pub quoting: bool,
    /// Python's name of the encoding, when not UTF-8.
    pub encoding: Option<&'static str>,
    /// Physical lines before the first line pandas must read.
    pub skip_lines: u64,
    /// The names are given (`header=None, names=[…]`) rather than read from a header row:
    /// no header, a merged grouping row, or rows wider than the header.
    pub explicit_names: bool,
    /// Rows to read, when something follows the table.
    pub nrows: Option<u64>,
    /// Footer lines to drop, when the row count is not known exactly.
    pub skip_footer: u64,
    pub skip_initial_space: bool,
    pub columns: &'a [ColumnProfile],
}

/// A Python string literal (a JSON string is one).
fn py(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

/// `pd.read_csv(path, …)`, `path` standing for the file.
pub(super) fn call(l: &Load) -> String {
    let mut args = vec!["path".to_string()];
    if l.delimiter != b',' {
        args.push(format!("sep={}", py(&(l.delimiter as char).to_string())));
    }
    if let Some(e) = l.encoding {
        args.push(format!("encoding={}", py(e)));
    }
    if l.skip_lines > 0 {
        args.push(format!("skiprows={}", l.skip_lines));
    }
    if l.explicit_names {
        let names: Vec<String> = l.columns.iter().map(|c| py(&c.name)).collect();
        args.push("header=None".into());
        args.push(format!("names=[{}]", names.join(", ")));
    }
    if let Some(n) = l.nrows {
        args.push(format!("nrows={n}"));
    }
    if l.skip_footer > 0 {
        // skipfooter needs the python engine; only used when nrows cannot be exact.
        args.push(format!("skipfooter={}", l.skip_footer));
        args.push("engine=\"python\"".into());
    }
    let (thousands, decimal) = number_options(l.columns);
    if let Some(t) = thousands {
        args.push(format!("thousands={}", py(t)));
    }
    if let Some(d) = decimal {
        args.push(format!("decimal={}", py(d)));
    }
    let (dates, formats) = date_options(l.columns);
    if !dates.is_empty() {
        args.push(format!("parse_dates=[{}]", dates.join(", ")));
    }
    if !formats.is_empty() {
        args.push(format!("date_format={{{}}}", formats.join(", ")));
    }
    if !l.quoting {
        args.push("quoting=3".into());
    }
    if l.skip_initial_space {
        args.push("skipinitialspace=True".into());
    }
    format!("pd.read_csv({})", args.join(", "))
}

/// `parse_dates=` and `date_format=` entries for the date and datetime columns, so a
/// script gets datetimes (`.dt`, comparisons and sorting by date work; `Sep 17, 2017`
/// sorts as text otherwise). A date column's format is given as profiled; a value
/// written another way makes pandas leave that column as text, which is no worse than
/// without the option. Datetime formats are left to pandas.
fn date_options(cols: &[ColumnProfile]) -> (Vec<String>, Vec<String>) {
    let mut dates = Vec::new();
    let mut formats = Vec::new();
    for c in cols {
        match c.kind {
            // Quarters and suffixed date-times are read by a converter
            // (`profile::values`): no `parse_dates` format reads them.
            _ if crate::analyze::time::forms::converter(c).is_some() => {}
            ColumnType::Date => {
                dates.push(py(&c.name));
                if let Some(f) = c.date_format.as_deref().filter(|f| f.contains('%')) {
                    formats.push(format!("{}: {}", py(&c.name), py(f)));
                }
            }
            ColumnType::Datetime => dates.push(py(&c.name)),
            _ => {}
        }
    }
    (dates, formats)
}

/// `thousands=` and `decimal=` from how the columns write numbers. pandas applies them to
/// every column, so a `.` thousands separator is only passed when no column writes
/// plain decimals with a `.`.
pub(super) fn number_options(
    cols: &[ColumnProfile],
) -> (Option<&'static str>, Option<&'static str>) {
    let has = |c: &ColumnProfile, n: &str| c.notation.iter().any(|x| x == n);
    let any = |n: &str| cols.iter().any(|c| has(c, n));
    const T_COMMA: &str = "thousands \",\"";
    const T_DOT: &str = "thousands \".\"";
    const D_COMMA: &str = "decimal \",\"";
    if any(D_COMMA) {
        return (any(T_DOT).then_some("."), Some(","));
    }
    if any(T_COMMA) {
        return (Some(","), None);
    }
    let plain_decimals = cols
        .iter()
        .any(|c| c.kind == ColumnType::Float && !has(c, T_DOT));
    ((any(T_DOT) && !plain_decimals).then_some("."), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::profile::ColumnBuilder;

    fn col(kind_values: &[&str], notation: &[&str]) -> ColumnProfile {
        let mut b = ColumnBuilder::new("c");
        for v in kind_values {
            b.push(v);
        }
        let mut c = b.finish();
        c.notation = notation.iter().map(|s| s.to_string()).collect();
        c
    }

    #[test]
    fn names_as_pandas_makes_them() {
        let raw: Vec<String> = ["a", "", "a", "a.1", " b", "a"].map(String::from).to_vec();
        assert_eq!(
            column_names(&raw, false),
            ["a", "Unnamed: 1", "a.1", "a.1.1", " b", "a.2"]
        );
        assert_eq!(column_names(&raw, true)[4], "b");
    }

    #[test]
    fn thousands_and_decimal_follow_the_columns_notation() {
        let plain = col(&["1", "2"], &[]);
        let float = col(&["1.5", "2"], &[]);
        let t_comma = col(&["1", "2"], &["thousands \",\""]);
        let t_dot = col(&["1", "2"], &["thousands \".\""]);
        let d_comma = col(&["1", "2"], &["decimal \",\"", "thousands \".\""]);
        assert_eq!(number_options(std::slice::from_ref(&plain)), (None, None));
        assert_eq!(
            number_options(&[plain.clone(), t_comma.clone()]),
            (Some(","), None)
        );
        assert_eq!(
            number_options(std::slice::from_ref(&t_dot)),
            (Some("."), None)
        );
        // A `.` thousands separator would misread the plain decimals of another column.
        assert_eq!(number_options(&[t_dot.clone(), float]), (None, None));
        assert_eq!(number_options(&[d_comma, t_dot]), (Some("."), Some(",")));
        let l = Load {
            delimiter: b'\t',
            quoting: true,
            encoding: Some("cp1252"),
            skip_lines: 2,
            explicit_names: false,
            nrows: Some(5),
            skip_footer: 0,
            skip_initial_space: false,
            columns: &[t_comma],
        };
        assert_eq!(
            call(&l),
            r#"pd.read_csv(path, sep="\t", encoding="cp1252", skiprows=2, nrows=5, thousands=",")"#
        );
    }
}
