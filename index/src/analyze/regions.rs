//! What kind of row a run of cells is, for every reader that finds tables in rows
//! (delimited text, sheets): a summary row (`Total`, `Mean` over the rows above it), a
//! key/value line (`Total rain,44.8`), the first cell of a headerless list. The readers
//! decide where a table ends from these kinds; this module only reads cells.

use super::summary::summary_label;

/// The label of a row that may sum up the rows above it: its first cell, or its second
/// when the first is empty (`,Total,1091` under an index column), when that cell is in
/// the summary vocabulary and the row has a figure besides. The kind of summary
/// (`total`, `mean`, …) and the label as written.
pub(crate) fn summary_row<'a>(cells: &[&'a str]) -> Option<(&'static str, &'a str)> {
    let at = cells.iter().take(2).position(|c| !c.trim().is_empty())?;
    let label = cells[at].trim();
    if !may_be_summary_label(label.as_bytes()) {
        return None;
    }
    let kind = summary_label(label)?;
    cells[at + 1..]
        .iter()
        .any(|c| !c.trim().is_empty())
        .then_some((kind, label))
}

/// First words of the summary vocabulary ([`summary_label`]), for a test that runs on
/// every row without allocating.
const SUMMARY_FIRST_WORDS: &[&[u8]] = &[
    b"total",
    b"totals",
    b"grand",
    b"subtotal",
    b"sub",
    b"sub-total",
    b"sum",
    b"overall",
    b"all",
    b"mean",
    b"average",
    b"avg",
    b"median",
    b"min",
    b"minimum",
    b"max",
    b"maximum",
    b"std",
    b"std.",
    b"stdev",
    b"standard",
    b"count",
    b"n",
];

/// Whether a cell may hold a summary label: its first word is one the vocabulary starts
/// with. Cheap (no allocation); [`summary_row`] decides.
pub(crate) fn may_be_summary_label(cell: &[u8]) -> bool {
    let t = cell.trim_ascii();
    // The vocabulary's first letters: most rows are ruled out here, at one byte.
    if t.len() > 48
        || !t
            .first()
            .is_some_and(|b| b"tgsoamcn".contains(&b.to_ascii_lowercase()))
    {
        return false;
    }
    let word = t
        .split(|b| b.is_ascii_whitespace() || b",([:*".contains(b))
        .next()
        .unwrap_or(t);
    let word = word
        .strip_suffix(b".")
        .filter(|w| !w.is_empty())
        .unwrap_or(word);
    SUMMARY_FIRST_WORDS
        .iter()
        .any(|w| w.eq_ignore_ascii_case(word))
}

/// Whether a summary label says the row sums up whatever its figures: `Total`, `Mean`,
/// `Subtotal` do; `All`, `Overall`, `Max`, `Min`, `N`, `Count` name categories (an
/// answer option, a person) as often, and count only when the figures check.
pub(crate) fn strong_summary(kind: &str, label: &str) -> bool {
    let lower = label.trim().to_lowercase();
    let first = lower.split_whitespace().next().unwrap_or("");
    matches!(
        kind,
        "total" | "subtotal" | "sum" | "mean" | "median" | "standard deviation"
    ) && !matches!(first, "all" | "overall")
}

/// A number as a table cell writes it (`1091`, `1,091`, `-3.5`), for checking figures.
pub(crate) fn number(cell: &str) -> Option<f64> {
    let t = cell.trim();
    // Text is ruled out at its first byte, before any parse: this runs on every cell of
    // a table's first rows.
    if t.len() > 40
        || !t
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.'))
    {
        return None;
    }
    if t.contains(',') {
        // Thousands commas only: `1,091`, `12,345.6`.
        let int = t.split('.').next().unwrap_or("");
        let groups: Vec<&str> = int.trim_start_matches('-').split(',').collect();
        let ok = groups.len() > 1
            && (1..=3).contains(&groups[0].len())
            && groups[1..].iter().all(|g| g.len() == 3);
        return if ok {
            t.replace(',', "").parse().ok()
        } else {
            None
        };
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Running figures of a column's numbers, to check a summary row against.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Figures {
    pub sum: f64,
    pub n: u64,
    pub min: f64,
    pub max: f64,
}

impl Figures {
    pub(crate) fn add(&mut self, v: f64) {
        if self.n == 0 {
            (self.min, self.max) = (v, v);
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.sum += v;
        self.n += 1;
    }

    /// Whether `v` states the column's figure `what` (`sum`, `mean`, `min`, `max`,
    /// `count`: of `rows` rows), up to the rounding a report applies; never with fewer
    /// than two numbers above.
    pub(crate) fn states(&self, v: f64, what: &str, rows: u64) -> bool {
        if self.n < 2 {
            return false;
        }
        let close = |x: f64| (v - x).abs() <= (x.abs() * 0.005).max(0.051);
        match what {
            "sum" => close(self.sum),
            "mean" => close(self.sum / self.n as f64),
            "max" => v == self.max,
            "min" => v == self.min,
            "count" => v == rows as f64,
            _ => false,
        }
    }
}

/// Whether a row's figures sum up the columns above: every number in it is the figure
/// its label names (the sum for `Total`, the mean for `Mean`, the greatest for `Max`, …;
/// the sum for a row without a label) of its column above, and it has at least one.
pub(crate) fn figures_check(
    cells: &[&str],
    cols: &[Figures],
    rows: u64,
    kind: Option<&str>,
) -> bool {
    let want: &[&str] = match kind {
        None | Some("total" | "subtotal" | "sum") => &["sum"],
        Some("mean") => &["mean"],
        Some("maximum") => &["max"],
        Some("minimum") => &["min"],
        Some("count") => &["count"],
        Some(_) => &["sum", "mean"],
    };
    let mut stated = 0;
    for (i, c) in cells.iter().enumerate() {
        let Some(v) = number(c) else { continue };
        let Some(f) = cols.get(i) else { return false };
        if f.n == 0 {
            // A number under a column that has none (a count under a label): no evidence.
            continue;
        }
        if !want.iter().any(|w| f.states(v, w, rows)) {
            return false;
        }
        stated += 1;
    }
    stated > 0
}

/// A label and one value at a row's left (`Total rain,44.8`, `1.,Values up to 1992 …`),
/// the rest of the row empty, in a table of `width` fields: the shape of a key/value
/// line.
pub(crate) fn label_value(cells: &[&str], width: usize) -> bool {
    let mut filled = (0..cells.len()).filter(|&i| !cells[i].trim().is_empty());
    match (filled.next(), filled.next(), filled.next()) {
        (Some(0), Some(v), None) => v <= 2 && width > v + 1,
        _ => false,
    }
}

/// A key/value line below a table: a label in words and one value (`Total rain,44.8`,
/// `Note: provisional values,3`), the rest of the row empty.
pub(crate) fn key_value(cells: &[&str], width: usize) -> bool {
    label_value(cells, width)
        && cells[0].trim().chars().any(char::is_alphabetic)
        && number(cells[0]).is_none()
}

/// Words that name a column of things rather than being one of them: a one-column list
/// headed by one has a header, whatever the values look like.
const HEADER_WORDS: &[&str] = &[
    "name",
    "names",
    "id",
    "ids",
    "code",
    "codes",
    "country",
    "countries",
    "city",
    "cities",
    "state",
    "states",
    "region",
    "regions",
    "county",
    "province",
    "title",
    "titles",
    "label",
    "item",
    "items",
    "value",
    "values",
    "type",
    "category",
    "description",
    "email",
    "address",
    "date",
    "year",
    "species",
    "person",
    "people",
    "member",
    "members",
    "user",
    "users",
    "username",
    "company",
    "companies",
    "product",
    "products",
    "keyword",
    "keywords",
    "word",
    "words",
    "term",
    "terms",
    "tag",
    "tags",
    "entry",
    "entries",
    "station",
    "site",
    "sites",
    "location",
    "place",
    "gene",
    "genes",
    "symbol",
    "text",
    "comment",
    "url",
    "link",
    "file",
    "filename",
    "path",
    "key",
    "team",
    "player",
    "players",
    "author",
    "authors",
    "list",
    "school",
    "organisation",
    "organization",
    "street",
    "surname",
    "firstname",
    "owner",
    "variable",
    "field",
    "column",
    "identifier",
    "subject",
    "topic",
    "language",
    "brand",
];

/// The kind of a text cell, as far as telling a header from a value goes: how many
/// words, how they are cased, whether digits or `@` appear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Kind {
    words: usize,
    case: u8,
    digits: bool,
    at: bool,
}

fn kind(cell: &str) -> Kind {
    let words: Vec<&str> = cell.split_whitespace().collect();
    let case_of = |w: &str| {
        let letters: Vec<char> = w.chars().filter(|c| c.is_alphabetic()).collect();
        match letters.first() {
            None => 0,
            Some(_) if letters.iter().all(|c| c.is_uppercase()) && letters.len() > 1 => 1,
            Some(c) if c.is_uppercase() => 2,
            Some(_) if letters.iter().all(|c| c.is_lowercase()) => 3,
            Some(_) => 4,
        }
    };
    // The case of the row: the case every word shares, else mixed.
    let cases: Vec<u8> = words
        .iter()
        .map(|w| case_of(w))
        .filter(|c| *c != 0)
        .collect();
    let case = match cases.first() {
        Some(&c) if cases.iter().all(|x| *x == c) => c,
        Some(_) => 5,
        None => 0,
    };
    Kind {
        words: words.len().min(4),
        case,
        digits: cell.bytes().any(|b| b.is_ascii_digit()),
        at: cell.contains('@'),
    }
}

/// Whether a cell reads as a column name by its form alone: a header word (`Name`,
/// `country`), an identifier (`first_name`, `firstName`), a unit in brackets, a colon
/// at the end.
fn header_form(cell: &str) -> bool {
    let t = cell.trim();
    let lower = t.to_lowercase();
    let camel = t.chars().next().is_some_and(char::is_lowercase)
        && t.chars().any(char::is_uppercase)
        && !t.contains(' ');
    HEADER_WORDS.contains(&lower.trim_end_matches(':'))
        || lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| !w.is_empty() && HEADER_WORDS.contains(&w) && lower.contains(['_', '(']))
        || (t.contains('_') && !t.contains(' '))
        || camel
        || t.ends_with(':')
        || (t.contains('(') && t.ends_with(')'))
}

/// Whether a one-column list of text has no header: its first cell is of the same kind
/// as the values below it (`Alice Smith` over `Bob Jones`), is not a column name by its
/// form, and is not repeated below (a header is not one of its values; a value may be).
pub(crate) fn headerless_list(first: &str, rest: &[&str]) -> bool {
    let first = first.trim();
    let rest: Vec<&str> = rest
        .iter()
        .map(|r| r.trim())
        .filter(|r| !r.is_empty())
        .collect();
    if rest.len() < 2 || header_form(first) {
        return false;
    }
    if rest.contains(&first) {
        return true;
    }
    let k = kind(first);
    let same = rest.iter().filter(|r| kind(r) == k).count();
    same * 10 >= rest.len() * 6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_row_is_labelled_and_has_figures() {
        assert_eq!(summary_row(&["Total", "1091"]), Some(("total", "Total")));
        assert_eq!(summary_row(&["", "Mean", "3.5"]), Some(("mean", "Mean")));
        assert_eq!(summary_row(&["Total", ""]), None);
        assert_eq!(summary_row(&["North", "12"]), None);
        assert_eq!(summary_row(&["TOTAL:", "12"]), Some(("total", "TOTAL:")));
        assert_eq!(
            summary_row(&["Std. dev.", "1.2"]),
            Some(("standard deviation", "Std. dev."))
        );
        assert!(may_be_summary_label(b"Grand Total"));
        assert!(!may_be_summary_label(b"Totally Spies"));
        assert!(!may_be_summary_label(b"Oslo"));
        assert!(strong_summary("total", "Grand total"));
        assert!(!strong_summary("total", "All"));
        assert!(!strong_summary("maximum", "Max"));
    }

    #[test]
    fn figures_check_sums_and_means() {
        let mut f = Figures::default();
        for v in [120.0, 340.0, 281.0, 350.0] {
            f.add(v);
        }
        let cols = [Figures::default(), f];
        assert!(figures_check(&["Total", "1,091"], &cols, 4, Some("total")));
        assert!(figures_check(&["", "1091"], &cols, 4, None));
        assert!(figures_check(&["Mean", "272.75"], &cols, 4, Some("mean")));
        assert!(figures_check(&["Max", "350"], &cols, 4, Some("maximum")));
        assert!(!figures_check(&["", "272.75"], &cols, 4, None));
        assert!(!figures_check(&["All", "4"], &cols, 4, Some("total")));
        assert!(!figures_check(&["Total", "350"], &cols, 4, Some("total")));
    }

    #[test]
    fn key_value_lines_leave_the_table_width_empty() {
        assert!(key_value(&["Total rain", "44.8"], 3));
        assert!(key_value(
            &["Note: provisional 2004 values", "3", "", ""],
            4
        ));
        assert!(!key_value(&["A", "2001", "10.5"], 3));
        assert!(!key_value(&["Total rain", "44.8"], 2));
        assert!(!key_value(&["12", "44.8"], 3));
    }

    #[test]
    fn a_list_is_headerless_when_its_first_cell_is_one_of_its_kind() {
        let names = ["Bob Jones", "Carol White", "Dan Brown", "Eve Black"];
        assert!(headerless_list("Alice Smith", &names));
        assert!(!headerless_list("Name", &names));
        assert!(!headerless_list("full_name", &names));
        let countries = ["France", "Germany", "Spain", "Italy"];
        assert!(!headerless_list("country", &countries));
        assert!(!headerless_list("Country", &countries));
        assert!(headerless_list("Portugal", &countries));
        let mails = ["b@x.org", "c@y.org", "d@z.org"];
        assert!(headerless_list("a@w.org", &mails));
        assert!(!headerless_list("Email", &mails));
    }
}
