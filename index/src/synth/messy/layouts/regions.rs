//! Where the tables are in delimited text: a table over a key/value block, a summary row
//! at a table's end, tables stacked with their own headers, a headerless list, a header
//! of two rows — each with a negative control that must read as plain data.

use super::*;

const STATIONS: [&str; 10] = [
    "Aberdeen",
    "Braemar",
    "Dundee",
    "Inverness",
    "Lerwick",
    "Oban",
    "Perth",
    "Stornoway",
    "Tiree",
    "Wick",
];

/// A table, a blank line, then `label,value` lines (totals, a mean, a note with a number).
pub(super) fn table_over_key_values() -> File {
    let mut rng = Rng::with_seed(52);
    let mut s = String::from("Station,Year,Rain_mm\n");
    let (mut years, mut rain) = (vec![], vec![]);
    for (i, st) in STATIONS.iter().enumerate() {
        let y = 2011 + i as i64;
        let r = rng.i64(400..1600);
        let _ = writeln!(s, "{st},{y},{}.{}", r / 10, r % 10);
        years.push(y);
        rain.push(r);
    }
    let total: i64 = rain.iter().sum();
    let _ = write!(
        s,
        "\nTotal rain,{}.{}\nStations,{}\nNote: provisional {} values,3\n",
        total / 10,
        total % 10,
        STATIONS.len(),
        years[years.len() - 1]
    );
    let facts = Expected::new("regions/rainfall_key_values.csv", "regions", Some("csv"))
        .delimiter(",")
        .table(TableFacts::new(
            STATIONS.len() as u64,
            vec![
                Column::new("Station", Kind::Text).distinct(10),
                ints("Year", &years),
                decimals("Rain_mm", &rain, 10.0),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Rows of sums and means at the end of a table, one labelled `Total`, one `Average`.
pub(super) fn summary_rows() -> File {
    const DISTRICTS: [&str; 8] = [
        "Central",
        "Eastside",
        "Harbour",
        "Hillcrest",
        "Northgate",
        "Riverside",
        "Southfield",
        "Westmoor",
    ];
    let mut rng = Rng::with_seed(53);
    let mut s = String::from("District,Permits,Inspections\n");
    let (mut p, mut i) = (vec![], vec![]);
    for d in DISTRICTS {
        let (a, b) = (rng.i64(20..400), rng.i64(100..900));
        let _ = writeln!(s, "{d},{a},{b}");
        p.push(a);
        i.push(b);
    }
    let (sp, si): (i64, i64) = (p.iter().sum(), i.iter().sum());
    let n = DISTRICTS.len() as f64;
    let _ = write!(
        s,
        "Total,{sp},{si}\nAverage,{:.2},{:.2}\n",
        sp as f64 / n,
        si as f64 / n
    );
    let facts = Expected::new("regions/permits_with_totals.csv", "regions", Some("csv"))
        .delimiter(",")
        .table(TableFacts::new(
            DISTRICTS.len() as u64,
            vec![
                Column::new("District", Kind::Text).distinct(8),
                ints("Permits", &p),
                ints("Inspections", &i),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Negative control: summary words that are categories — `Total` as a kind in the
/// middle of the data, `All` as the last answer option with a count that sums nothing.
pub(super) fn summary_words_as_categories() -> File {
    const OPTIONS: [&str; 6] = ["Total", "Hardly any", "Some", "Most", "Nearly all", "All"];
    let mut rng = Rng::with_seed(54);
    let mut s = String::from("Answer,Respondents\n");
    let mut n = vec![];
    for o in OPTIONS {
        let c = rng.i64(3..60);
        let _ = writeln!(s, "{o},{c}");
        n.push(c);
    }
    let facts = Expected::new("regions/survey_answers.csv", "regions", Some("csv"))
        .delimiter(",")
        .table(TableFacts::new(
            OPTIONS.len() as u64,
            vec![
                Column::new("Answer", Kind::Text).distinct(6),
                ints("Respondents", &n),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Two tables stacked as wide as each other, the second's header right under the first's
/// last row: no title, no blank line.
pub(super) fn stacked_same_width() -> File {
    let mut rng = Rng::with_seed(55);
    let mut s = String::from("Station,Days of frost,Mean min (C)\n");
    let (mut frost, mut mins) = (vec![], vec![]);
    for st in STATIONS {
        let (f, m) = (rng.i64(10..90), rng.i64(-60..40));
        let _ = writeln!(s, "{st},{f},{}", m as f64 / 10.0);
        frost.push(f);
        mins.push(m);
    }
    s.push_str("Month,Storms,Max gust (knots)\n");
    let months = ["Jan", "Feb", "Mar", "Oct", "Nov", "Dec"];
    let (mut storms, mut gust) = (vec![], vec![]);
    for m in months {
        let (a, g) = (rng.i64(0..9), rng.i64(400..1100));
        let _ = writeln!(s, "{m},{a},{}", g as f64 / 10.0);
        storms.push(a);
        gust.push(g);
    }
    let facts = Expected::new("regions/stacked_same_width.csv", "regions", Some("csv"))
        .table(TableFacts::new(
            STATIONS.len() as u64,
            vec![
                Column::new("Station", Kind::Text).distinct(10),
                ints("Days of frost", &frost),
                Column::new("Mean min (C)", Kind::Number),
            ],
        ))
        .table(TableFacts::new(
            months.len() as u64,
            vec![
                Column::new("Month", Kind::Text).distinct(6),
                ints("Storms", &storms),
                Column::new("Max gust (knots)", Kind::Number),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Two tables of different widths, a blank line between, no titles.
pub(super) fn stacked_other_width() -> File {
    let mut rng = Rng::with_seed(56);
    let mut s = String::from("Site,Visits,Staff,Budget\n");
    let (mut v, mut st, mut b) = (vec![], vec![], vec![]);
    for site in &STATIONS[..6] {
        let (a, c, d) = (rng.i64(100..5000), rng.i64(1..20), rng.i64(1000..90000));
        let _ = writeln!(s, "{site},{a},{c},{d}");
        v.push(a);
        st.push(c);
        b.push(d);
    }
    s.push_str("\nQuarter,Visits\n");
    let mut q = vec![];
    for k in 1..=4 {
        let a = rng.i64(1000..9000);
        let _ = writeln!(s, "Q{k},{a}");
        q.push(a);
    }
    let facts = Expected::new("regions/stacked_other_width.csv", "regions", Some("csv"))
        .table(TableFacts::new(
            6,
            vec![
                Column::new("Site", Kind::Text).distinct(6),
                ints("Visits", &v),
                ints("Staff", &st),
                ints("Budget", &b),
            ],
        ))
        .table(TableFacts::new(
            4,
            vec![
                Column::new("Quarter", Kind::Text).distinct(4),
                ints("Visits", &q),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Negative control: words in the number columns of one row (`see note`), amid a long
/// table: one table.
pub(super) fn words_amid_numbers() -> File {
    let mut rng = Rng::with_seed(57);
    let mut s = String::from("Station,Days of frost,Snow days\n");
    let mut frost = vec![];
    for (i, st) in STATIONS.iter().enumerate() {
        if i == 5 {
            let _ = writeln!(s, "{st},see note,see note");
            continue;
        }
        let f = rng.i64(10..90);
        let _ = writeln!(s, "{st},{f},{}", f / 3);
        frost.push(f);
    }
    let facts = Expected::new("regions/words_amid_numbers.csv", "regions", Some("csv"))
        .delimiter(",")
        .table(TableFacts::new(
            STATIONS.len() as u64,
            vec![
                Column::new("Station", Kind::Text).distinct(10),
                Column::new("Days of frost", Kind::Text),
                Column::new("Snow days", Kind::Text),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

const PEOPLE: [&str; 9] = [
    "Amara Okafor",
    "Bruno Keller",
    "Chen Wei",
    "Dana Whitfield",
    "Emil Novak",
    "Farah Haddad",
    "Gustavo Lima",
    "Hana Sato",
    "Ivan Petrov",
];

/// A one-column list of names with no header: the first name is one of them.
pub(super) fn headerless_list() -> File {
    let mut s = String::new();
    for p in PEOPLE {
        let _ = writeln!(s, "{p}");
    }
    let facts =
        Expected::new("regions/attendees.csv", "regions", Some("csv")).table(TableFacts::new(
            PEOPLE.len() as u64,
            vec![Column::new("column_1", Kind::Text).distinct(9)],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Negative control: the same kind of list under a header word.
pub(super) fn list_with_header() -> File {
    let mut s = String::from("Name\n");
    for p in PEOPLE {
        let _ = writeln!(s, "{p}");
    }
    let facts =
        Expected::new("regions/speakers.csv", "regions", Some("csv")).table(TableFacts::new(
            PEOPLE.len() as u64,
            vec![Column::new("Name", Kind::Text).distinct(9)],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Two header rows: years over measures, each year only in the first cell of its span,
/// the row label standing over an empty cell.
pub(super) fn two_row_header() -> File {
    let mut rng = Rng::with_seed(58);
    let mut s =
        String::from("County,2021,,2022,\n,Estimate,Margin of error,Estimate,Margin of error\n");
    let (mut e1, mut e2) = (vec![], vec![]);
    for c in &STATIONS[..7] {
        let (a, b) = (rng.i64(5000..90000), rng.i64(5000..90000));
        let _ = writeln!(s, "{c},{a},{},{b},{}", a / 20, b / 20);
        e1.push(a);
        e2.push(b);
    }
    let facts = Expected::new(
        "regions/estimates_two_row_header.csv",
        "regions",
        Some("csv"),
    )
    .delimiter(",")
    .table(TableFacts::new(
        7,
        vec![
            Column::new("County", Kind::Text).distinct(7),
            ints("2021 / Estimate", &e1),
            Column::new("2021 / Margin of error", Kind::Integer),
            ints("2022 / Estimate", &e2),
            Column::new("2022 / Margin of error", Kind::Integer),
        ],
    ));
    (facts.path.clone(), s.into_bytes(), facts)
}
