//! Summary tables of a collection: a table beside the collection (in its folder or the
//! folder above) with a row per member — a column whose listed values are all member
//! names (`state_totals.csv`'s `state` beside `by_state/{word}.csv`) or all member years
//! (`crime_totals_by_year.csv`'s `year` beside `annual/crimes_{year}.csv`). A person
//! opens it with any member: the totals to divide by, the year-by-year view. Nothing
//! names particular files or words: the members' own names and years decide.

use crate::analyze::{ColumnType, Description};
use crate::collect::Collection;

/// Fewest listed values of a column, all of them members, that make it a member column:
/// a column's examples are three values, and two shared by chance are too few.
const MIN_LISTED: usize = 3;

/// The column of `d` that lists the members of `c`, if `d` summarizes it.
pub fn member_column(d: &Description, c: &Collection) -> Option<String> {
    let names: Vec<String> = c.names.iter().map(|n| normal(n)).collect();
    let years = year_range(c);
    d.content
        .profiled_columns()
        .map(|(_, col)| col)
        .find(|col| {
            let listed: Vec<&str> = col
                .examples
                .iter()
                .chain(col.top.iter().map(|(v, _)| v))
                .map(|v| v.trim().trim_matches('"'))
                .filter(|v| !v.is_empty())
                .collect();
            if listed.len() < MIN_LISTED {
                return false;
            }
            let by_name = !names.is_empty()
                && matches!(
                    col.kind,
                    ColumnType::Text | ColumnType::Categorical | ColumnType::Identifier
                )
                && listed.iter().all(|v| names.contains(&normal(v)));
            let by_year = years.is_some_and(|(lo, hi)| {
                col.kind == ColumnType::Integer
                    && listed
                        .iter()
                        .all(|v| v.parse::<u32>().is_ok_and(|y| (lo..=hi).contains(&y)))
                    // A row per year, not a detail table that repeats them.
                    && col.distinct_exact
                    && col.distinct >= MIN_LISTED as u64
            });
            by_name || by_year
        })
        .map(|col| col.name.clone())
}

/// The years a collection's members are named by, when a `{year}` is what varies.
fn year_range(c: &Collection) -> Option<(u32, u32)> {
    let [p] = c.parts.as_slice() else {
        return None;
    };
    if p.name != "{year}" {
        return None;
    }
    Some((p.min.parse().ok()?, p.max.parse().ok()?))
}

/// A name compared without case and separators (`New_York` = `new york`).
fn normal(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{describe, Source};
    use crate::collect::PartRange;

    fn table(csv: &str) -> Description {
        describe(&Source::from_bytes("t.csv", csv.as_bytes().to_vec()))
    }

    fn collection(part: &str, min: &str, max: &str, names: &[&str]) -> Collection {
        Collection {
            id: "c".into(),
            template: format!("x/{part}.csv"),
            format: "csv".into(),
            members: 3,
            bytes: 0,
            time_start: None,
            time_end: None,
            representative: String::new(),
            parts: vec![PartRange {
                name: part.into(),
                min: min.into(),
                max: max.into(),
                distinct: 3,
            }],
            sample_members: Vec::new(),
            names: names.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_column_listing_members_by_name_or_year_makes_a_summary() {
        let states = collection(
            "{word}",
            "Alabama",
            "New_York",
            &["Alabama", "Alaska", "Arizona", "New_York"],
        );
        let totals = table("state,population\nAlabama,1\nAlaska,2\nNew York,3\nArizona,4\n");
        assert_eq!(member_column(&totals, &states).as_deref(), Some("state"));
        // One value that is no member: not a list of the members.
        let other = table("region,population\nAlabama,1\nAlaska,2\nEurope,3\n");
        assert_eq!(member_column(&other, &states), None);

        let years = collection("{year}", "1995", "2023", &[]);
        let by_year = table("year,incidents\n2002,10\n2003,12\n2004,9\n2005,11\n");
        assert_eq!(member_column(&by_year, &years).as_deref(), Some("year"));
        let outside = table("year,incidents\n1990,10\n1991,12\n1992,9\n");
        assert_eq!(member_column(&outside, &years), None);
        assert_eq!(member_column(&by_year, &states), None);
    }
}
