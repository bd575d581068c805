//! Dialects and numbers as people write them: tabs in a `.csv`, European numbers,
//! currency, percentages, negatives in parentheses, censored values, dates in words.

use super::*;

/// A tab-separated `.csv` whose numbers have comma thousands separators.
pub(super) fn tab_in_csv() -> File {
    let mut rng = Rng::with_seed(4);
    let mut s = String::from("Year\tHouseholds\tPopulation\n");
    let (mut hh, mut pop) = (vec![], vec![]);
    let mut h = 412_345i64;
    for y in 1999..=2023 {
        h += rng.i64(1_500..9_000);
        let p = h * 26 / 10 + rng.i64(0..5_000);
        let _ = writeln!(
            s,
            "{y}\t{}\t{}",
            thousands(h as u64, ','),
            thousands(p as u64, ',')
        );
        hh.push(h);
        pop.push(p);
    }
    let facts = Expected::new(
        "census/county_population_estimates.csv",
        "dialect",
        Some("csv"),
    )
    .delimiter("\t")
    .coverage("1999-01-01", "2023-12-31")
    .table(TableFacts::new(
        25,
        vec![
            Column::new("Year", Kind::Integer).range(1999, 2023),
            ints("Households", &hh).notation(&[COMMA]),
            ints("Population", &pop).notation(&[COMMA]),
        ],
    ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// A European CSV: `;` between fields, `1.234.567,89`, dates `31.03.2022`.
pub(super) fn european() -> File {
    const LAENDER: [&str; 16] = [
        "Baden-Württemberg",
        "Bayern",
        "Berlin",
        "Brandenburg",
        "Bremen",
        "Hamburg",
        "Hessen",
        "Mecklenburg-Vorpommern",
        "Niedersachsen",
        "Nordrhein-Westfalen",
        "Rheinland-Pfalz",
        "Saarland",
        "Sachsen",
        "Sachsen-Anhalt",
        "Schleswig-Holstein",
        "Thüringen",
    ];
    let quarters = [
        ("Q1", day(2022, 3, 31)),
        ("Q2", day(2022, 6, 30)),
        ("Q3", day(2022, 9, 30)),
        ("Q4", day(2022, 12, 31)),
    ];
    let mut rng = Rng::with_seed(5);
    let mut s = String::from("Land;Quartal;Verbrauch (MWh);Anteil erneuerbar (%);Stichtag\n");
    let (mut mwh, mut share) = (vec![], vec![]);
    for land in LAENDER {
        for (quarter, end) in quarters {
            let cents = rng.i64(100_000_000..3_000_000_000);
            let tenths = rng.i64(150..700);
            let _ = writeln!(
                s,
                "{land};{quarter};{},{:02};{},{};{}",
                thousands((cents / 100) as u64, '.'),
                cents % 100,
                tenths / 10,
                tenths % 10,
                end.format("%d.%m.%Y")
            );
            mwh.push(cents);
            share.push(tenths);
        }
    }
    let facts = Expected::new(
        "energie/stromverbrauch_bundeslaender.csv",
        "dialect",
        Some("csv"),
    )
    .delimiter(";")
    .coverage("2022-03-31", "2022-12-31")
    .table(TableFacts::new(
        64,
        vec![
            Column::new("Land", Kind::Text).distinct(16),
            Column::new("Quartal", Kind::Text).distinct(4),
            decimals("Verbrauch (MWh)", &mwh, 100.0)
                .notation(&[r#"thousands ".""#, r#"decimal ",""#]),
            decimals("Anteil erneuerbar (%)", &share, 10.0).notation(&[r#"decimal ",""#]),
            Column::new("Stichtag", Kind::Date)
                .range("2022-03-31", "2022-12-31")
                .date_format("%d.%m.%Y"),
        ],
    ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Currency with a scale (`$3,100M`), parenthesised negatives, percentages, censored
/// values (`<10`, `>90`). Ranges are the values with the notation undone.
pub(super) fn notation() -> File {
    const AGENCIES: [&str; 15] = [
        "Department of Transportation",
        "Department of Health",
        "Department of Education",
        "Parks and Recreation",
        "Police Department",
        "Fire Department",
        "Department of Sanitation",
        "Housing Authority",
        "Public Library",
        "Department of Finance",
        "Department of Buildings",
        "Water and Sewer Utility",
        "Office of Emergency Management",
        "Department of Aging",
        "City Clerk",
    ];
    let mut rng = Rng::with_seed(6);
    let mut s = String::from(
        "Agency,Budget,Change from Prior Year,Share of Total,Complaints,Median Response (days)\n",
    );
    let (mut budget, mut change, mut share) = (vec![], vec![], vec![]);
    let (mut complaints, mut response) = (vec![10], vec![90]);
    for (i, a) in AGENCIES.iter().enumerate() {
        let m = if i == 0 { 3_100 } else { rng.i64(120..12_400) };
        let c = if i == 1 {
            -1_234
        } else {
            rng.i64(-5_000..5_000)
        };
        let sh = rng.i64(4..183);
        let written_change = if c < 0 {
            format!("({})", thousands(c.unsigned_abs(), ','))
        } else {
            thousands(c as u64, ',')
        };
        // Row 0 is censored, row 1 holds the censoring limit itself: the range is the
        // same whether a reader keeps `<10` as 10 or sets it aside.
        let comp = match i {
            0 => "<10".to_string(),
            1 => "10".to_string(),
            _ if rng.u32(0..4) == 0 => "<10".to_string(),
            _ => {
                let n = rng.i64(11..480);
                complaints.push(n);
                n.to_string()
            }
        };
        let resp = match i {
            0 => ">90".to_string(),
            1 => "90".to_string(),
            _ => {
                let n = rng.i64(3..90);
                response.push(n);
                n.to_string()
            }
        };
        let _ = writeln!(
            s,
            "{a},{},{},{}.{}%,{comp},{resp}",
            q(&format!("${}M", thousands(m as u64, ','))),
            q(&written_change),
            sh / 10,
            sh % 10
        );
        // Figures are stated in the written unit, the scale recorded in the notation.
        budget.push(m);
        change.push(c);
        share.push(sh);
    }
    let (blo, bhi) = span(&budget);
    let facts = Expected::new(
        "city_budget/agency_budget_summary.csv",
        "notation",
        Some("csv"),
    )
    .delimiter(",")
    .table(TableFacts::new(
        15,
        vec![
            Column::new("Agency", Kind::Text).distinct(15),
            Column::new("Budget", Kind::Number)
                .range(blo, bhi)
                .notation(&[r#"currency "$""#, COMMA, r#"scale "M""#]),
            ints("Change from Prior Year", &change).notation(&[COMMA, r#"negative "(…)""#]),
            decimals("Share of Total", &share, 10.0).notation(&["percent"]),
            ints("Complaints", &complaints).notation(&[r#"censored "<""#]),
            ints("Median Response (days)", &response).notation(&[r#"censored ">""#]),
        ],
    ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Dates in words: `"September 1, 2021"` and `1 Sep 2021`.
pub(super) fn dates_in_words() -> File {
    const TITLES: [&str; 5] = [
        "Governor Announces Broadband Expansion Grants",
        "State Parks Extend Fall Hours",
        "New Guidance on Wildfire Smoke, Air Quality Alerts",
        "Highway 36 Resurfacing Begins Monday",
        "Flu Vaccination Clinics Open Statewide",
    ];
    let mut rng = Rng::with_seed(7);
    let mut s = String::from("Release Date,Title,Posted,Page Views\n");
    let first = day(2021, 9, 1);
    let mut views = vec![];
    for i in 0..20u64 {
        let d = first + Days::new(9 * i);
        let v = rng.i64(150..25_000);
        let _ = writeln!(
            s,
            "{},{},{},{v}",
            q(&d.format("%B %-d, %Y").to_string()),
            q(TITLES[i as usize % TITLES.len()]),
            d.format("%-d %b %Y"),
        );
        views.push(v);
    }
    let last = first + Days::new(9 * 19);
    let facts = Expected::new("press/press_releases.csv", "notation", Some("csv"))
        .delimiter(",")
        .coverage(&iso(first), &iso(last))
        .table(TableFacts::new(
            20,
            vec![
                Column::new("Release Date", Kind::Date)
                    .range(iso(first), iso(last))
                    .date_format("%B %d, %Y"),
                Column::new("Title", Kind::Text),
                Column::new("Posted", Kind::Date)
                    .range(iso(first), iso(last))
                    .date_format("%d %b %Y"),
                ints("Page Views", &views),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}
