//! What a table's load line adds to its reader's call so that the loaded frame holds the
//! values as described: `na_values=` for missing markers, `converters=` for durations
//! and footnoted numbers, and datetimes for time the `time-forms` rule reads in other
//! forms (`200001`, `2001032`, `2001-02`). Readers of text cells take options, keyed by
//! the names they give or, for columns renamed after reading (`.set_axis`), by the
//! labels pandas gives them; `read_html`, whose options reach every table of the page,
//! gets markers as one list and the rest after reading. Readers of typed columns
//! (`read_parquet`, `read_sql_query`) are followed by an `.assign`.

use super::values::FOOTNOTE;
use super::{ColumnProfile, ColumnType};
use crate::analyze::pycall::code_mask;
use crate::analyze::time::forms;

/// A Python string literal (a JSON string is one).
fn py(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

/// How a reader's options name a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keys {
    /// By its described name: the reader names the columns so.
    Names,
    /// By the label pandas gives it before a `.set_axis` renames the columns: its
    /// position plus the base. `read_excel` with `header=None` labels columns by their
    /// sheet column (`usecols="C:E"` gives 2, 3, 4).
    Labels(usize),
    /// Not at all: `read_html` applies its options to every table of the page, where
    /// an integer key past a table's width fails the call. Markers go as one list (for
    /// every column), the rest is converted after reading.
    Listed,
}

/// How the call makes datetimes of the columns read as time in other forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dates {
    /// The call parses its date columns already.
    Done,
    /// `parse_dates=` and `date_format=`, as the CSV load lines do.
    Parse,
    /// A converter per column: `read_excel`'s `parse_dates=` takes positions that
    /// `usecols` shifts.
    Convert,
    /// After reading (`read_html` has no `date_format=`).
    Assign,
}

/// What a load line gets: its reader's arguments, and `.assign` entries after reading.
#[derive(Default)]
struct Options {
    args: Vec<String>,
    after: Vec<String>,
}

/// An `.assign` entry making datetimes of column `name`, written as `format`: numbers (a
/// null makes an integer column float) go through nullable integers to their digits,
/// text is parsed as it is.
fn date_assigned(name: &str, format: &str) -> String {
    let col = format!("d[{}]", py(name));
    let cells = if format.bytes().all(|b| b == b'%' || b.is_ascii_alphabetic()) {
        format!("pd.to_numeric({col}).astype(\"Int64\").astype(\"string\")")
    } else {
        col
    };
    format!(
        "{}: lambda d: pd.to_datetime({cells}, format={})",
        py(name),
        py(format)
    )
}

/// Whether pandas may read `marker` as missing in every column of the table: it has no
/// letter (`--`, `..`), or no column of words can hold it (each one's values are all
/// known, and it is not one of them).
fn listable(marker: &str, cols: &[ColumnProfile]) -> bool {
    !marker.chars().any(char::is_alphabetic)
        || cols.iter().all(|c| match c.kind {
            ColumnType::Text
            | ColumnType::Categorical
            | ColumnType::Identifier
            | ColumnType::Boolean => {
                c.distinct_exact
                    && c.top.len() as u64 >= c.distinct
                    && !c.top.iter().any(|(v, _)| v == marker)
            }
            _ => true,
        })
}

/// The options that load `cols` as described, keyed as `keys` says. Zero-padded codes
/// load as pandas reads them (integers): the same codes written unpadded in another file
/// still compare and join.
/// A workbook's reader (`excel`) hands over time cells as `datetime.time` (or
/// `timedelta`): a duration's converter reads them as text.
fn load_options(cols: &[ColumnProfile], keys: Keys, dates: Dates, excel: bool) -> Options {
    let mut na = Vec::new();
    let mut listed: Vec<&str> = Vec::new();
    let mut conv = Vec::new();
    let mut parse = Vec::new();
    let mut formats = Vec::new();
    let mut after = Vec::new();
    for (i, c) in cols.iter().enumerate() {
        let key = match keys {
            Keys::Names | Keys::Listed => py(&c.name),
            Keys::Labels(base) => (base + i).to_string(),
        };
        if !c.missing.is_empty() {
            if keys == Keys::Listed {
                for m in &c.missing {
                    if !listed.contains(&m.marker.as_str()) {
                        listed.push(&m.marker);
                    }
                }
            } else {
                let list: Vec<String> = c.missing.iter().map(|m| py(&m.marker)).collect();
                na.push(format!("{key}: [{}]", list.join(", ")));
            }
        }
        if c.kind == ColumnType::Duration {
            if keys == Keys::Listed {
                after.push(format!(
                    "{key}: lambda d: pd.to_timedelta(d[{key}], errors=\"coerce\")"
                ));
            } else if excel {
                conv.push(format!(
                    "{key}: lambda v: pd.to_timedelta(str(v), errors=\"coerce\")"
                ));
            } else if c.missing.is_empty() && c.nulls == 0 {
                conv.push(format!("{key}: pd.to_timedelta"));
            } else {
                // Markers reach a converter as written: coerce them to NaT.
                conv.push(format!(
                    "{key}: lambda v: pd.to_timedelta(v, errors=\"coerce\")"
                ));
            }
        }
        if let Some(f) = forms::converter(c) {
            if keys == Keys::Listed {
                after.push(format!(
                    "{key}: lambda d: pd.to_datetime(d[{key}].map({f}, na_action=\"ignore\"))"
                ));
            } else {
                conv.push(format!("{key}: {f}"));
            }
        }
        if let Some(marks) = c.notation.iter().find_map(|n| n.strip_prefix(FOOTNOTE)) {
            // The marks go, then the grouping; a decimal comma becomes a point.
            let mut body = "v".to_string();
            for m in marks.split('"').filter(|m| !m.trim().is_empty()) {
                body.push_str(&format!(".removesuffix({})", py(m)));
            }
            body.push_str(".strip()");
            let group = c
                .notation
                .iter()
                .find_map(|n| n.strip_prefix("thousands "))
                .and_then(|q| serde_json::from_str::<String>(q).ok());
            let decimal_comma = c.notation.iter().any(|n| n == "decimal \",\"");
            match group {
                Some(g) => body.push_str(&format!(".replace({}, \"\")", py(&g))),
                None if !decimal_comma => body.push_str(".replace(\",\", \"\")"),
                None => {}
            }
            if decimal_comma {
                body.push_str(".replace(\",\", \".\")");
            }
            if keys == Keys::Listed {
                after.push(format!(
                    "{key}: lambda d: pd.to_numeric(d[{key}].astype(\"string\").map(lambda v: {body}, na_action=\"ignore\"), errors=\"coerce\")"
                ));
            } else {
                conv.push(format!(
                    "{key}: lambda v: pd.to_numeric({body}, errors=\"coerce\")"
                ));
            }
        }
        if let Some(f) = forms::date_form(c) {
            match dates {
                Dates::Done => {}
                Dates::Parse => {
                    parse.push(key.clone());
                    formats.push(format!("{key}: {}", py(f)));
                }
                // A number cell comes as an int (`200001`), an empty one as "" (NaT);
                // markers as written, coerced.
                Dates::Convert => conv.push(format!(
                    "{key}: lambda v: pd.to_datetime(str(v), format={}{})",
                    py(f),
                    if c.missing.is_empty() {
                        ""
                    } else {
                        ", errors=\"coerce\""
                    }
                )),
                Dates::Assign => after.push(date_assigned(&c.name, f)),
            }
        }
    }
    let mut args = Vec::new();
    if !na.is_empty() {
        args.push(format!("na_values={{{}}}", na.join(", ")));
    }
    if !listed.is_empty() && listed.iter().all(|m| listable(m, cols)) {
        let list: Vec<String> = listed.iter().map(|m| py(m)).collect();
        args.push(format!("na_values=[{}]", list.join(", ")));
    }
    if !conv.is_empty() {
        args.push(format!("converters={{{}}}", conv.join(", ")));
    }
    if !parse.is_empty() {
        args.push(format!("parse_dates=[{}]", parse.join(", ")));
        args.push(format!("date_format={{{}}}", formats.join(", ")));
    }
    // `.assign` names its columns: a repeated name would take them all.
    let mut names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        after.clear();
    }
    Options { args, after }
}

/// The readers whose calls take `na_values=` and `converters=`.
const READERS: [&str; 4] = [
    "pd.read_csv(",
    "pd.read_excel(",
    "pd.read_html(",
    "pd.read_fwf(",
];

/// Where `pat` starts in `call` outside string literals.
fn find_code(call: &str, mask: &[bool], pat: &str) -> Option<usize> {
    call.match_indices(pat).map(|(i, _)| i).find(|&i| mask[i])
}

/// The 0-based index of a sheet column (`A` 0, `AA` 26).
fn column_index(letters: &str) -> Option<usize> {
    let mut n = 0usize;
    for b in letters.bytes() {
        if !b.is_ascii_uppercase() {
            return None;
        }
        n = n.checked_mul(26)?.checked_add(usize::from(b - b'A') + 1)?;
    }
    n.checked_sub(1)
}

/// `call` with [`load_options`] added to its reader's arguments and after it; None when
/// there is nothing to add or the reader's labels of renamed columns are not known.
fn with_options(call: &str, cols: &[ColumnProfile]) -> Option<String> {
    let mask = code_mask(call);
    let (reader, open) = READERS
        .iter()
        .filter_map(|r| find_code(call, &mask, r).map(|i| (*r, i + r.len() - 1)))
        .min_by_key(|(_, i)| *i)?;
    let renamed = find_code(call, &mask, ".set_axis(").is_some();
    let html = reader == "pd.read_html(";
    let keys = match (renamed, reader) {
        (false, _) => Keys::Names,
        (true, "pd.read_html(") => Keys::Listed,
        (true, "pd.read_excel(") if find_code(call, &mask, "header=None").is_some() => {
            let at = find_code(call, &mask, "usecols=\"")? + "usecols=\"".len();
            let first = call[at..].split(':').next()?;
            Keys::Labels(column_index(first)?)
        }
        (true, _) => return None,
    };
    let dates = if find_code(call, &mask, "parse_dates=").is_some() {
        Dates::Done
    } else if html {
        Dates::Assign
    } else if renamed {
        Dates::Convert
    } else {
        Dates::Parse
    };
    let opts = load_options(cols, keys, dates, reader == "pd.read_excel(");
    if opts.args.is_empty() && opts.after.is_empty() {
        return None;
    }
    let mut out = call.to_string();
    if !opts.args.is_empty() {
        let mut depth = 0usize;
        let close = call.bytes().enumerate().skip(open).find(|&(i, c)| {
            if mask[i] {
                match c {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth -= 1,
                    _ => {}
                }
            }
            mask[i] && depth == 0
        })?;
        out = format!(
            "{}, {}{}",
            &call[..close.0],
            opts.args.join(", "),
            &call[close.0..]
        );
    }
    if !opts.after.is_empty() {
        out.push_str(&format!(".assign(**{{{}}})", opts.after.join(", ")));
    }
    Some(out)
}

/// `call` (a reader of typed columns) followed by an `.assign` that makes datetimes of
/// the columns read as time in other forms.
fn with_dates_assigned(call: &str, cols: &[ColumnProfile]) -> Option<String> {
    let parts: Vec<String> = cols
        .iter()
        .filter_map(|c| Some(date_assigned(&c.name, forms::date_form(c)?)))
        .collect();
    (!parts.is_empty()).then(|| format!("{call}.assign(**{{{}}})", parts.join(", ")))
}

/// The load line `call` completed for `cols`, None when it stays as it is.
pub(super) fn complete(call: &str, cols: &[ColumnProfile]) -> Option<String> {
    let mask = code_mask(call);
    if READERS.iter().any(|r| find_code(call, &mask, r).is_some()) {
        with_options(call, cols)
    } else {
        with_dates_assigned(call, cols)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(name: &str, cells: &[&str]) -> ColumnProfile {
        let mut b = super::super::ColumnBuilder::new(name);
        for c in cells {
            b.push(c);
        }
        b.finish()
    }

    #[test]
    fn load_lines_name_markers_durations_and_footnotes() {
        let temp = column("Temp", &["1.5", "M", "2.5", "3.5", "4.5"]);
        let wait = column("wait", &["00:00:07", "01:02:03"]);
        let year = column("Year", &["2019", "2020", "2021", "2022", "2023p"]);
        let plain = column("n", &["1", "2"]);
        let cols = [temp, wait, year, plain];
        let call = r#"pd.read_csv(path, sep=")", names=["a(", "b"])"#;
        assert_eq!(
            with_options(call, &cols).unwrap(),
            r#"pd.read_csv(path, sep=")", names=["a(", "b"], na_values={"Temp": ["M"]}, converters={"wait": pd.to_timedelta, "Year": lambda v: pd.to_numeric(v.removesuffix("p").strip().replace(",", ""), errors="coerce")})"#
        );
        let html = "pd.read_html(path, header=0)[1]";
        assert_eq!(
            with_options(html, &cols[..1]).unwrap(),
            r#"pd.read_html(path, header=0, na_values={"Temp": ["M"]})[1]"#
        );
        // Nothing to add; renamed columns of a reader whose labels are not known; a
        // reader without the options.
        assert_eq!(with_options(call, &cols[3..]), None);
        assert_eq!(
            with_options("pd.read_excel(path).set_axis([\"a\"], axis=1)", &cols),
            None
        );
        assert_eq!(with_options("pd.read_parquet(path)", &cols), None);
    }

    #[test]
    fn renamed_columns_are_keyed_by_their_labels() {
        let temp = column("v", &["1.5", "M", "2.5", "3.5", "4.5"]);
        let month = column("Date", &["200001", "200002", "200003"]);
        let cols = [temp, month];
        // `read_html` applies its options to every table of the page: markers as one
        // list, dates after reading.
        let html = r#"pd.read_html(path)[0].set_axis(["v", "Date"], axis=1)"#;
        assert_eq!(
            complete(html, &cols).unwrap(),
            r#"pd.read_html(path, na_values=["M"])[0].set_axis(["v", "Date"], axis=1).assign(**{"Date": lambda d: pd.to_datetime(pd.to_numeric(d["Date"]).astype("Int64").astype("string"), format="%Y%m")})"#
        );
        // Not when a column of words may hold the marker as a value, nor after reading
        // when a name repeats.
        let sex = column("Sex", &["M", "F", "F", "M", "M"]);
        let html = r#"pd.read_html(path)[0].set_axis(["v", "Sex"], axis=1)"#;
        assert_eq!(complete(html, &[cols[0].clone(), sex]), None);
        let twice = [
            cols[0].clone(),
            column("v", &["200001", "200002", "200003"]),
        ];
        let html = r#"pd.read_html(path)[0].set_axis(["v", "v"], axis=1)"#;
        assert_eq!(
            complete(html, &twice).unwrap(),
            r#"pd.read_html(path, na_values=["M"])[0].set_axis(["v", "v"], axis=1)"#
        );
        // `read_excel` with `header=None` labels by sheet column.
        let sheet = r#"pd.read_excel(path, sheet_name="S", header=None, skiprows=2, usecols="C:D").set_axis(["v", "Date"], axis=1).dropna(how="all")"#;
        assert_eq!(
            complete(sheet, &cols).unwrap(),
            r#"pd.read_excel(path, sheet_name="S", header=None, skiprows=2, usecols="C:D", na_values={2: ["M"]}, converters={3: lambda v: pd.to_datetime(str(v), format="%Y%m")}).set_axis(["v", "Date"], axis=1).dropna(how="all")"#
        );
    }

    #[test]
    fn time_in_other_forms_loads_as_datetimes() {
        let month = column("Date", &["200001", "200002", "200003"]);
        let days = column("obs_date", &["2001032", "2001033", "2001034"]);
        let text = column("Month", &["2001-05", "2001-06", "2001-07"]);
        let cols = [month, days, text];
        let excel = r#"pd.read_excel(path, sheet_name="S", header=0, usecols="A:C")"#;
        assert_eq!(
            complete(excel, &cols).unwrap(),
            r#"pd.read_excel(path, sheet_name="S", header=0, usecols="A:C", parse_dates=["Date", "obs_date", "Month"], date_format={"Date": "%Y%m", "obs_date": "%Y%j", "Month": "%Y-%m"})"#
        );
        let html = "pd.read_html(path)[0]";
        assert_eq!(
            complete(html, &cols[2..]).unwrap(),
            r#"pd.read_html(path)[0].assign(**{"Month": lambda d: pd.to_datetime(d["Month"], format="%Y-%m")})"#
        );
        // The CSV reader parses its date columns itself.
        let csv = r#"pd.read_csv(path, parse_dates=["Date"], date_format={"Date": "%Y%m"})"#;
        assert_eq!(complete(csv, &cols[..1]), None);
        // Readers of typed columns: numbers through their digits, text as written.
        assert_eq!(
            complete("pd.read_parquet(path)", &cols).unwrap(),
            r#"pd.read_parquet(path).assign(**{"Date": lambda d: pd.to_datetime(pd.to_numeric(d["Date"]).astype("Int64").astype("string"), format="%Y%m"), "obs_date": lambda d: pd.to_datetime(pd.to_numeric(d["obs_date"]).astype("Int64").astype("string"), format="%Y%j"), "Month": lambda d: pd.to_datetime(d["Month"], format="%Y-%m")})"#
        );
        let plain = column("n", &["1", "2"]);
        assert_eq!(complete("pd.read_parquet(path)", &[plain]), None);
    }

    #[test]
    fn sheet_columns_by_index() {
        assert_eq!(column_index("A"), Some(0));
        assert_eq!(column_index("C"), Some(2));
        assert_eq!(column_index("Z"), Some(25));
        assert_eq!(column_index("AA"), Some(26));
        assert_eq!(column_index(""), None);
        assert_eq!(column_index("a1"), None);
    }
}
