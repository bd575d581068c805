use super::*;

fn profile(vals: &[&str]) -> ColumnProfile {
    let mut b = ColumnBuilder::new("c");
    for v in vals {
        b.push(v);
    }
    b.finish()
}

#[test]
fn infers_types() {
    assert_eq!(profile(&["1", "2", "-3"]).kind, ColumnType::Integer);
    assert_eq!(profile(&["1", "2.5", ""]).kind, ColumnType::Float);
    assert_eq!(profile(&["True", "False", "NA"]).kind, ColumnType::Boolean);
    assert_eq!(
        profile(&["2024-01-31", "2023/12/01"]).kind,
        ColumnType::Date
    );
    assert_eq!(
        profile(&["2024-01-31 10:00:00", "2024-01-31"]).kind,
        ColumnType::Datetime
    );
    assert_eq!(profile(&["a", "b", "a", "a"]).kind, ColumnType::Categorical);
    assert_eq!(profile(&["alpha", "beta", "gamma"]).kind, ColumnType::Text);
    assert_eq!(profile(&["", "NA"]).kind, ColumnType::Empty);
    assert_eq!(profile(&["inf", "nan", "x"]).kind, ColumnType::Text);
    let ids: Vec<String> = (0..20).map(|i| format!("pKPY{i}zJq")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    assert_eq!(profile(&ids).kind, ColumnType::Identifier);
}

#[test]
fn dates_have_format_and_iso_range() {
    let p = profile(&["10/1/2014", "12/31/2014", "11/5/2014"]);
    assert_eq!(p.kind, ColumnType::Date);
    assert_eq!(p.date_format.as_deref(), Some("%m/%d/%Y"));
    assert_eq!(
        (p.min.as_deref(), p.max.as_deref()),
        (Some("2014-10-01"), Some("2014-12-31"))
    );
    // One value that can only be day-first makes the whole column day-first.
    let p = profile(&["01/02/2020", "25/02/2020"]);
    assert_eq!(p.date_format.as_deref(), Some("%d/%m/%Y"));
    assert_eq!(p.min.as_deref(), Some("2020-02-01"));
    let p = profile(&["Apr 13  2017 12:00:00 AM", "Apr 14  2017 01:15:00 PM"]);
    assert_eq!(p.kind, ColumnType::Datetime);
    assert_eq!(p.date_range(), Some(("2017-04-13", "2017-04-14")));
}

#[test]
fn stats_are_right() {
    let p = profile(&["10", "2", "", "4", "4"]);
    assert_eq!(p.nulls, 1);
    assert_eq!(p.distinct, 3);
    assert_eq!(p.min.as_deref(), Some("2"));
    assert_eq!(p.max.as_deref(), Some("10"));
    assert_eq!(p.mean, Some(5.0));
    assert_eq!(p.examples, vec!["10", "2", "4"]);
    let c = profile(&["x", "y", "x", "x", "y", "z"]);
    assert_eq!(
        c.top,
        vec![("x".into(), 3), ("y".into(), 2), ("z".into(), 1)]
    );
}

#[test]
fn distinct_beyond_the_cap_is_estimated() {
    let mut b = ColumnBuilder::new("n");
    for i in 0..50_000 {
        b.push(&format!("v{i}"));
    }
    let p = b.finish();
    assert!(!p.distinct_exact);
    let err = (p.distinct as f64 - 50_000.0).abs() / 50_000.0;
    assert!(err < 0.05, "estimate {} too far from 50000", p.distinct);
}

#[test]
fn written_numbers_are_numbers_with_their_notation() {
    let p = profile(&["1,234,567", "12,345", "", "999"]);
    assert_eq!(p.kind, ColumnType::Integer);
    assert_eq!(p.notation, ["thousands \",\""]);
    assert_eq!(
        (p.min.as_deref(), p.max.as_deref()),
        (Some("999"), Some("1234567"))
    );
    assert_eq!(p.mean, Some((1234567.0 + 12345.0 + 999.0) / 3.0));
    assert_eq!(p.examples, ["1,234,567", "12,345", "999"]);
    let p = profile(&["1.234.567,89", "1.234", "12,5", "7"]);
    assert_eq!(p.kind, ColumnType::Float);
    assert_eq!(p.notation, ["thousands \".\"", "decimal \",\""]);
    assert_eq!(
        (p.min.as_deref(), p.max.as_deref()),
        (Some("7"), Some("1234567.89"))
    );
    // Dot-grouped integers, the lone `1.234` read as the rest.
    let p = profile(&["1.234", "15.678", "2.345.678"]);
    assert_eq!(p.kind, ColumnType::Integer);
    assert_eq!(p.max.as_deref(), Some("2345678"));
    let p = profile(&["12.5%", "3%", "NA", "100%"]);
    assert_eq!(
        (p.kind, p.notation.clone()),
        (ColumnType::Float, vec!["percent".to_string()])
    );
    assert_eq!(
        (p.min.as_deref(), p.max.as_deref()),
        (Some("3"), Some("100"))
    );
    let p = profile(&["$3,100M", "$950M", "$12M"]);
    assert_eq!(p.kind, ColumnType::Integer);
    assert_eq!(
        p.notation,
        ["thousands \",\"", "currency \"$\"", "scale \"M\""]
    );
    assert_eq!(
        (p.min.as_deref(), p.max.as_deref()),
        (Some("12"), Some("3100"))
    );
    assert_eq!(p.mean, Some(1354.0));
    let p = profile(&["(1,234)", "560", "2,000"]);
    assert_eq!(p.kind, ColumnType::Integer);
    assert_eq!(p.notation, ["thousands \",\"", "negative \"(…)\""]);
    assert_eq!(
        (p.min.as_deref(), p.max.as_deref()),
        (Some("-1234"), Some("2000"))
    );
    let p = profile(&["<10", "15", "23", ">2000"]);
    assert_eq!(p.kind, ColumnType::Integer);
    assert_eq!(p.notation, ["censored \"<\"", "censored \">\""]);
    assert_eq!(
        (p.min.as_deref(), p.max.as_deref()),
        (Some("10"), Some("2000"))
    );
    assert_eq!(p.mean, Some(512.0));
    // A plain extreme stays as written (and wins a tie).
    let p = profile(&["<0.5", "0.50", "1,200.75"]);
    assert_eq!(
        (p.kind, p.min.as_deref(), p.max.as_deref()),
        (ColumnType::Float, Some("0.50"), Some("1200.75"))
    );
    let p = profile(&["0.50", "0.25", "<0.75"]);
    assert_eq!(p.max.as_deref(), Some("0.75"));
    assert_eq!(p.min.as_deref(), Some("0.25"));
}

#[test]
fn number_lookalikes_stay_text() {
    let kind = |v: &[&str]| profile(v).kind;
    assert_eq!(kind(&["1,2,3", "4,5", "6,7,8"]), ColumnType::Text);
    assert_eq!(kind(&["1.2.3", "1.10.0", "2.0.1"]), ColumnType::Text);
    assert_eq!(
        kind(&["555-1234", "(555) 123-4567", "555-9876"]),
        ColumnType::Text
    );
    assert_eq!(kind(&["50% off", "20% off", "free"]), ColumnType::Text);
    assert_eq!(kind(&["1,234", "1.234,5", "1,234.5"]), ColumnType::Text);
    assert_eq!(kind(&["$5", "€7", "£9"]), ColumnType::Text);
    // Codes with leading zeros are not written numbers (the plain reading of `02134`
    // as an integer is unchanged: it is how pandas reads it).
    let p = profile(&["01,234", "02,345", "03,456"]);
    assert_eq!(p.kind, ColumnType::Text);
    assert!(p.notation.is_empty());
    // Plain floats with three decimals stay plain.
    let p = profile(&["1.234", "2.5", "3.125"]);
    assert_eq!((p.kind, p.notation.is_empty()), (ColumnType::Float, true));
    assert_eq!(p.max.as_deref(), Some("3.125"));
    // Mostly words with a few written numbers: text, and no notation claimed.
    let p = profile(&["about 5", "$5", "n/a", "many"]);
    assert!(p.notation.is_empty() && p.min.is_none());
    // Bounds alone are class labels (an income bracket), not censored measurements.
    let p = profile(&["<=50K", ">50K", "<=50K", "<=50K", ">50K"]);
    assert_eq!(
        (p.kind, p.notation.is_empty()),
        (ColumnType::Categorical, true)
    );
    let p = profile(&["<10", "12", "15", "<10"]);
    assert_eq!(p.kind, ColumnType::Integer);
}

#[test]
fn lone_values_type_like_columns() {
    for (v, t) in [
        ("1,234,567", ColumnType::Integer),
        ("1.234.567,89", ColumnType::Float),
        ("12.5%", ColumnType::Float),
        ("$3,100M", ColumnType::Integer),
        ("(1,234)", ColumnType::Integer),
        ("<10", ColumnType::Integer),
        ("1,2,3", ColumnType::Text),
        ("1.2.3", ColumnType::Text),
        ("Revenue ($M)", ColumnType::Text),
        ("% change", ColumnType::Text),
        ("2024-01-31", ColumnType::Date),
    ] {
        assert_eq!(value_type(v), t, "{v}");
    }
}

#[test]
fn units_from_headers() {
    assert_eq!(unit_from_name("Temperature (°C)").as_deref(), Some("°C"));
    assert_eq!(unit_from_name("amount [EUR]").as_deref(), Some("EUR"));
    assert_eq!(unit_from_name("(unnamed)"), None);
    assert_eq!(unit_from_name("value (2019)"), None);
}

#[test]
fn offloaded_columns_profile_as_inline_ones() {
    // Long columns (past OFFLOAD_AFTER) of several kinds, pushed interleaved as rows are.
    let cell = |col: u32, i: u32| -> String {
        match (col + i) % 6 {
            _ if col == 0 => i.to_string(),
            _ if col == 1 => format!("{},{:03}", i / 1000 + 1, i % 1000),
            _ if col == 2 => ["x", "y", "z"][(i % 3) as usize].to_string(),
            0 => String::new(),
            1 => format!("{}.5", i % 977),
            2 => format!("w{}", i % 70),
            3 => format!("2020-01-{:02}", i % 28 + 1),
            4 => format!("<{}", i % 10),
            _ => "NA".to_string(),
        }
    };
    let cols = 12;
    let mut builders: Vec<ColumnBuilder> = (0..cols)
        .map(|c| ColumnBuilder::new(format!("c{c}")))
        .collect();
    let mut inline: Vec<column::Column> = (0..cols)
        .map(|c| column::Column::new(format!("c{c}")))
        .collect();
    for i in 0..50_000 {
        for c in 0..cols {
            let v = cell(c as u32, i);
            builders[c].push(&v);
            inline[c].push(&v);
        }
    }
    for (b, c) in builders.into_iter().zip(inline) {
        assert_eq!(b.finish(), c.finish());
    }
}

#[test]
fn a_generated_csv_with_written_numbers_is_profiled_as_numbers() {
    use crate::analyze::delimited::DelimitedAnalyzer;
    use crate::analyze::{Analyzer, Content, Format, Source};
    let table = |name: &str, text: String, format: Format| {
        let src = Source::from_bytes(name, text.into_bytes());
        match DelimitedAnalyzer.analyze(&src, format).unwrap() {
            Content::Table(t) => t,
            c => panic!("not a table: {c:?}"),
        }
    };
    let mut text = String::from("year,population,share,revenue,balance,level\n");
    for i in 0..40u64 {
        let pop = 1_000_000 + i * 123_457;
        let pop = format!(
            "{},{:03},{:03}",
            pop / 1_000_000,
            pop / 1000 % 1000,
            pop % 1000
        );
        let balance = if i % 3 == 0 {
            format!("({},{:03})", 1 + i, i * 7 % 1000)
        } else {
            format!("{}", i * 11)
        };
        let level = if i % 4 == 0 {
            "<10".to_string()
        } else {
            (10 + i).to_string()
        };
        text.push_str(&format!(
            "{},\"{pop}\",{}.5%,\"${},{:03}M\",\"{balance}\",{level}\n",
            1990 + i,
            i % 100,
            1 + i / 10,
            i * 25 % 1000
        ));
    }
    let t = table("written.csv", text, Format::Csv);
    assert!(t.header);
    let col = |n: &str| t.columns.iter().find(|c| c.name == n).unwrap();
    let pop = col("population");
    assert_eq!(
        (pop.kind, pop.notation.as_slice()),
        (ColumnType::Integer, &["thousands \",\"".to_string()][..])
    );
    assert_eq!(
        (pop.min.as_deref(), pop.max.as_deref()),
        (Some("1000000"), Some("5814823"))
    );
    let share = col("share");
    assert_eq!(
        (share.kind, share.notation.as_slice()),
        (ColumnType::Float, &["percent".to_string()][..])
    );
    assert_eq!(share.max.as_deref(), Some("39.5"));
    let rev = col("revenue");
    assert_eq!(rev.kind, ColumnType::Integer);
    assert_eq!(
        rev.notation,
        ["thousands \",\"", "currency \"$\"", "scale \"M\""]
    );
    assert_eq!(
        (rev.min.as_deref(), rev.max.as_deref()),
        (Some("1000"), Some("4975"))
    );
    let bal = col("balance");
    assert_eq!(bal.notation, ["thousands \",\"", "negative \"(…)\""]);
    assert_eq!(bal.min.as_deref(), Some("-40273"));
    let level = col("level");
    assert_eq!(
        (level.kind, level.notation.as_slice()),
        (ColumnType::Integer, &["censored \"<\"".to_string()][..])
    );
    assert_eq!(
        (level.min.as_deref(), level.max.as_deref()),
        (Some("10"), Some("49"))
    );

    // A European export: semicolons, dot grouping, decimal comma.
    let mut text = String::from("Gemeinde;Einwohner;Fläche\n");
    for i in 0..30u64 {
        let people = 900 + i * 45_678;
        let people = match people {
            1_000_000.. => format!(
                "{}.{:03}.{:03}",
                people / 1_000_000,
                people / 1000 % 1000,
                people % 1000
            ),
            1000.. => format!("{}.{:03}", people / 1000, people % 1000),
            _ => people.to_string(),
        };
        text.push_str(&format!("Ort {i};{people};{},{}\n", 10 + i, i % 10));
    }
    let t = table("de.csv", text, Format::Csv);
    assert_eq!(t.delimiter, ";");
    let people = &t.columns[1];
    assert_eq!(
        (people.kind, people.notation.as_slice()),
        (ColumnType::Integer, &["thousands \".\"".to_string()][..])
    );
    assert_eq!(
        (people.min.as_deref(), people.max.as_deref()),
        (Some("900"), Some("1325562"))
    );
    let area = &t.columns[2];
    assert_eq!(
        (area.kind, area.notation.as_slice()),
        (ColumnType::Float, &["decimal \",\"".to_string()][..])
    );
    assert_eq!(area.max.as_deref(), Some("39.9"));
}

fn repeat(cells: &[(&str, usize)]) -> Vec<String> {
    let mut v = Vec::new();
    for i in 0..cells.iter().map(|c| c.1).max().unwrap_or(0) {
        for (c, n) in cells {
            if i < *n {
                v.push(c.to_string());
            }
        }
    }
    v
}

fn profile_named(name: &str, vals: &[String]) -> ColumnProfile {
    let mut b = ColumnBuilder::new(name);
    for v in vals {
        b.push(v);
    }
    b.finish()
}

#[test]
fn a_short_token_among_numbers_is_a_missing_marker() {
    let mut vals: Vec<String> = (0..20).map(|i| format!("{}.5", i + 3)).collect();
    vals.extend(["M", "M", "", "-"].map(String::from));
    let p = profile_named("Temp", &vals);
    assert_eq!(p.kind, ColumnType::Float);
    assert_eq!(
        (p.min.as_deref(), p.max.as_deref()),
        (Some("3.5"), Some("22.5"))
    );
    assert_eq!(p.mean, Some(13.0));
    assert_eq!(p.nulls, 4);
    assert_eq!(p.distinct, 20);
    let m: Vec<(&str, u64)> = p
        .missing
        .iter()
        .map(|m| (m.marker.as_str(), m.count))
        .collect();
    assert_eq!(m, [("M", 2), ("-", 1)]);
    assert!(!p.examples.iter().any(|e| e == "M"));
    for marker in [
        "N/A", "--", "(NA)", "*", "..", "x", "n.a.", "(D)", "(X)", "s",
    ] {
        let mut vals: Vec<String> = (0..8).map(|i| (i * 7).to_string()).collect();
        vals.push(marker.to_string());
        let p = profile_named("n", &vals);
        assert_eq!(p.kind, ColumnType::Integer, "{marker}");
        assert_eq!(p.nulls, 1, "{marker}");
    }
}

#[test]
fn letters_codes_with_a_few_numbers_stay_text() {
    // Negative controls: many distinct letters; markers outnumbering the numbers.
    let codes = repeat(&[("A", 5), ("B", 5), ("C", 5), ("D", 3), ("1", 2), ("2", 2)]);
    let p = profile_named("Grade", &codes);
    assert!(matches!(p.kind, ColumnType::Categorical | ColumnType::Text));
    assert!(p.missing.is_empty());
    let mostly = repeat(&[("M", 6), ("3", 2), ("4", 2)]);
    let p = profile_named("Temp", &mostly);
    assert!(!matches!(p.kind, ColumnType::Integer | ColumnType::Float));
    assert!(p.missing.is_empty());
    // Words are not markers.
    let mut vals: Vec<String> = (0..8).map(|i| i.to_string()).collect();
    vals.push("pending".into());
    assert_eq!(profile_named("n", &vals).kind, ColumnType::Text);
}

#[test]
fn numbers_with_footnote_marks_stay_numbers() {
    let mut vals: Vec<String> = (2000..2020).map(|y| y.to_string()).collect();
    vals.extend(["2020r", "2021p"].map(String::from));
    let p = profile_named("Year", &vals);
    assert_eq!(p.kind, ColumnType::Integer);
    assert_eq!(
        (p.min.as_deref(), p.max.as_deref()),
        (Some("2000"), Some("2021"))
    );
    assert_eq!(p.notation, ["footnote \"r\" \"p\""]);
    let mut q: Vec<String> = (1..20).map(|i| format!("{},{:03}", i, i * 7)).collect();
    q.push("21,000 (e)".into());
    let p = profile_named("Quantity", &q);
    assert_eq!(p.kind, ColumnType::Integer);
    assert_eq!(p.max.as_deref(), Some("21000"));
    assert_eq!(p.notation, ["thousands \",\"", "footnote \"(e)\""]);
    // Other separators: the column's convention reads the marked numbers too.
    let mut spaced: Vec<String> = (1..20).map(|i| format!("{} {:03}", i, i * 7)).collect();
    spaced.extend(["1 234 p", "12 345(e)"].map(String::from));
    let p = profile_named("Tonnes", &spaced);
    assert_eq!(p.kind, ColumnType::Integer);
    assert_eq!(
        (p.min.as_deref(), p.max.as_deref()),
        (Some("1007"), Some("19133"))
    );
    assert_eq!(p.notation, ["thousands \" \"", "footnote \"p\" \"(e)\""]);
    let mut euro: Vec<String> = (1..20)
        .map(|i| format!("{}.{:03},{}", i, i * 11, i % 10))
        .collect();
    euro.push("1.234,5 r".into());
    let p = profile_named("Value", &euro);
    assert_eq!(p.kind, ColumnType::Float);
    assert_eq!(p.min.as_deref(), Some("1011.1"));
    assert_eq!(
        p.notation,
        ["thousands \".\"", "decimal \",\"", "footnote \"r\""]
    );
    // Negative control: distances with a unit and a mark, and addresses, are text.
    let text: Vec<String> = (1..12)
        .map(|i| {
            if i % 2 == 0 {
                format!("{i} km p")
            } else {
                format!("{} Main St", i * 10)
            }
        })
        .collect();
    let p = profile_named("Where", &text);
    assert!(
        !matches!(p.kind, ColumnType::Integer | ColumnType::Float),
        "{:?}",
        p.kind
    );
    assert!(p.notation.is_empty());
    // Negative control: house numbers with letters are labels, not footnoted figures.
    let house: Vec<String> = (0..12)
        .map(|i| format!("{}{}", 10 + i, ["a", "b", "c", "d"][i % 4]))
        .collect();
    assert!(!matches!(
        profile_named("No", &house).kind,
        ColumnType::Integer
    ));
}

#[test]
fn mostly_numbers_are_never_an_identifier() {
    let mut vals: Vec<String> = (2000..2020).map(|y| y.to_string()).collect();
    vals.extend(["see-note", "see-table"].map(String::from));
    let p = profile_named("Year", &vals);
    assert_eq!(p.kind, ColumnType::Text);
}

#[test]
fn integers_that_label_are_identifiers_with_a_range() {
    let fips: Vec<String> = (0..12).map(|i| format!("{:05}", 1001 + 2 * i)).collect();
    let p = profile_named("county", &fips);
    assert_eq!(p.kind, ColumnType::Identifier);
    assert_eq!(p.notation, ["zero-padded"]);
    assert_eq!(
        (p.min.as_deref(), p.max.as_deref()),
        (Some("01001"), Some("01023"))
    );
    assert_eq!(p.mean, None);
    let ids: Vec<String> = (0..12).map(|i| (7100 + 3 * i).to_string()).collect();
    let p = profile_named("PassengerId", &ids);
    assert_eq!(p.kind, ColumnType::Identifier);
    assert_eq!(p.min.as_deref(), Some("7100"));
    // A key into another table repeats: its header is the key's name.
    let refs: Vec<String> = (0..30).map(|i| (10 + i % 4).to_string()).collect();
    assert_eq!(profile_named("GF_ID", &refs).kind, ColumnType::Identifier);
    assert_eq!(
        profile_named("Number of IDs", &refs).kind,
        ColumnType::Integer
    );
    // Negative controls: the same numbers as a quantity, and years.
    assert_eq!(profile_named("Passengers", &ids).kind, ColumnType::Integer);
    let years: Vec<String> = (1990..2020).map(|y| y.to_string()).collect();
    let p = profile_named("Year", &years);
    assert_eq!((p.kind, p.mean), (ColumnType::Integer, Some(2004.5)));
    // Two-digit months are numbers; mixed widths with a lone leading zero too.
    let months: Vec<String> = (1..=12).map(|m| format!("{m:02}")).collect();
    assert_eq!(profile_named("month", &months).kind, ColumnType::Integer);
    // Mixed widths with a lone leading zero are not a padded code.
    let mixed: Vec<String> = ["0", "5", "12", "130", "07"].map(String::from).to_vec();
    assert_eq!(profile_named("n", &mixed).kind, ColumnType::Integer);
}

#[test]
fn durations_are_profiled_in_seconds() {
    let waits = ["00:00:07", "00:01:12", "01:02:03", ""].map(String::from);
    let p = profile_named("wait", &waits);
    assert_eq!(p.kind, ColumnType::Duration);
    assert_eq!(
        (p.min.as_deref(), p.max.as_deref()),
        (Some("7"), Some("3723"))
    );
    assert_eq!(p.unit.as_deref(), Some("s"));
    assert_eq!(p.nulls, 1);
    let spelled = ["1h 30m", "90 min", "PT2H", "45s"].map(String::from);
    let p = profile_named("Repair", &spelled);
    assert_eq!(p.kind, ColumnType::Duration);
    assert_eq!(p.mean, Some((5400.0 * 2.0 + 7200.0 + 45.0) / 4.0));
    // Past a day, clock-like values are spans whatever the header.
    let long = ["25:30:00", "04:00:00", "100:00:00"].map(String::from);
    assert_eq!(profile_named("Total", &long).kind, ColumnType::Duration);
}

#[test]
fn clock_times_of_day_stay_text() {
    let clock = ["07:30:00", "18:45:10", "09:15:00"].map(String::from);
    assert_ne!(profile_named("Time", &clock).kind, ColumnType::Duration);
    let hm = ["07:30", "18:45", "09:15"].map(String::from);
    assert_ne!(profile_named("wait", &hm).kind, ColumnType::Duration);
}

#[test]
fn dot_grouped_thousands_among_small_integers_are_integers() {
    // Counts in a report: every number from a thousand up carries its group mark.
    let p = profile(&["379", "1", "135", "1.613", "2.003", "49"]);
    assert_eq!(p.kind, ColumnType::Integer);
    assert_eq!(p.max.as_deref(), Some("2003"));
    assert!(
        p.notation.iter().any(|n| n == "thousands \".\""),
        "{:?}",
        p.notation
    );
    // Negative controls: a fraction beside them, too few integers, a plain 1000 or more.
    assert_eq!(
        profile(&["0.5", "1", "135", "1.613"]).kind,
        ColumnType::Float
    );
    assert_eq!(profile(&["1.613", "2.003", "7"]).kind, ColumnType::Float);
    assert_eq!(
        profile(&["1500", "1", "135", "1.613"]).kind,
        ColumnType::Float
    );
}
