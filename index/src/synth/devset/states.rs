//! Files named by state (`by_state/Ohio.csv`, `by_state/New York.csv`), one schema per
//! folder: a census bureau's county estimates for all fifty states, an energy office's
//! monthly retail sales for some; questions naming two or three states, or each state.

use super::{Builder, Mechanism};
use std::io;

/// The fifty states with their postal abbreviations.
pub(super) const STATES: [(&str, &str); 50] = [
    ("AL", "Alabama"),
    ("AK", "Alaska"),
    ("AZ", "Arizona"),
    ("AR", "Arkansas"),
    ("CA", "California"),
    ("CO", "Colorado"),
    ("CT", "Connecticut"),
    ("DE", "Delaware"),
    ("FL", "Florida"),
    ("GA", "Georgia"),
    ("HI", "Hawaii"),
    ("ID", "Idaho"),
    ("IL", "Illinois"),
    ("IN", "Indiana"),
    ("IA", "Iowa"),
    ("KS", "Kansas"),
    ("KY", "Kentucky"),
    ("LA", "Louisiana"),
    ("ME", "Maine"),
    ("MD", "Maryland"),
    ("MA", "Massachusetts"),
    ("MI", "Michigan"),
    ("MN", "Minnesota"),
    ("MS", "Mississippi"),
    ("MO", "Missouri"),
    ("MT", "Montana"),
    ("NE", "Nebraska"),
    ("NV", "Nevada"),
    ("NH", "New Hampshire"),
    ("NJ", "New Jersey"),
    ("NM", "New Mexico"),
    ("NY", "New York"),
    ("NC", "North Carolina"),
    ("ND", "North Dakota"),
    ("OH", "Ohio"),
    ("OK", "Oklahoma"),
    ("OR", "Oregon"),
    ("PA", "Pennsylvania"),
    ("RI", "Rhode Island"),
    ("SC", "South Carolina"),
    ("SD", "South Dakota"),
    ("TN", "Tennessee"),
    ("TX", "Texas"),
    ("UT", "Utah"),
    ("VT", "Vermont"),
    ("VA", "Virginia"),
    ("WA", "Washington"),
    ("WV", "West Virginia"),
    ("WI", "Wisconsin"),
    ("WY", "Wyoming"),
];

/// The states whose electricity sales are published one file each.
const ENERGY_STATES: [&str; 12] = [
    "California",
    "Texas",
    "Florida",
    "New York",
    "Ohio",
    "Pennsylvania",
    "Illinois",
    "Georgia",
    "Washington",
    "Arizona",
    "Michigan",
    "Utah",
];

pub(super) fn county_file(state: &str) -> String {
    format!("census/county_estimates/by_state/{state}.csv")
}
pub(super) fn electricity_file(state: &str) -> String {
    format!("energy/electricity/by_state/{state}.csv")
}

pub(super) fn write(b: &mut Builder) -> io::Result<()> {
    for (i, (_, state)) in STATES.iter().enumerate() {
        let n = 6 + i % 9;
        let rows: Vec<String> = (0..n)
            .map(|c| {
                format!(
                    "{} County,{:02}{:03},{},{},{}",
                    [
                        "Adams", "Clark", "Franklin", "Jackson", "Lincoln", "Madison", "Marion",
                        "Union", "Warren", "Wayne", "Grant", "Hamilton", "Monroe", "Polk"
                    ][c],
                    i + 1,
                    c * 2 + 1,
                    b.int(2_000, 900_000),
                    b.int(38_000, 110_000),
                    b.dec(5.0, 24.0)
                )
            })
            .collect();
        b.csv(
            &county_file(state),
            "county,fips,population,median_household_income,poverty_rate",
            rows,
        )?;
    }
    for state in ENERGY_STATES {
        let rows: Vec<String> = (0..36)
            .map(|i| {
                format!(
                    "{}-{:02},{},{},{}",
                    2021 + i / 12,
                    i % 12 + 1,
                    b.pick(&["residential", "commercial", "industrial"]),
                    b.int(50_000, 9_000_000),
                    b.dec(8.0, 31.0)
                )
            })
            .collect();
        b.csv(
            &electricity_file(state),
            "month,sector,sales_mwh,price_cents_per_kwh",
            rows,
        )?;
    }
    b.write(
        "census/county_estimates/README.txt",
        "County population estimates and income, one file per state. \
         Vintage 2022. FIPS codes are state (2 digits) and county (3 digits).\n",
    )?;

    let files = |f: fn(&str) -> String, states: &[&str]| -> Vec<String> {
        states.iter().map(|s| f(s)).collect()
    };
    for (q, rel) in [
        (
            "Compare median household income in Ohio and Utah counties",
            files(county_file, &["Ohio", "Utah"]),
        ),
        (
            "Which has the higher county poverty rate: Texas, Florida or Georgia?",
            files(county_file, &["Texas", "Florida", "Georgia"]),
        ),
        (
            "Most populous counties in New York and New Jersey",
            files(county_file, &["New York", "New Jersey"]),
        ),
        (
            "How does poverty in West Virginia counties compare with Kentucky?",
            files(county_file, &["West Virginia", "Kentucky"]),
        ),
        (
            "County populations of North Dakota, South Dakota and Montana",
            files(county_file, &["North Dakota", "South Dakota", "Montana"]),
        ),
        (
            "Compare residential electricity prices in California and Texas",
            files(electricity_file, &["California", "Texas"]),
        ),
        (
            "Industrial electricity sales in Ohio, Pennsylvania and Michigan by month",
            files(electricity_file, &["Ohio", "Pennsylvania", "Michigan"]),
        ),
        (
            "Was electricity cheaper in Washington or Arizona in 2022?",
            files(electricity_file, &["Washington", "Arizona"]),
        ),
        (
            "Median household income of the poorest county in each state",
            STATES.iter().map(|(_, s)| county_file(s)).collect(),
        ),
        (
            "For every state, how many counties have a poverty rate above 20 percent?",
            STATES.iter().map(|(_, s)| county_file(s)).collect(),
        ),
        (
            "Average commercial electricity price per kWh in each state",
            files(electricity_file, &ENERGY_STATES),
        ),
    ] {
        let rel: Vec<&str> = rel.iter().map(String::as_str).collect();
        b.ask(Mechanism::ByState, q, &rel);
    }
    Ok(())
}
