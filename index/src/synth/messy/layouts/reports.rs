//! Report-style CSVs: titles, blank lines, grouping headers, footers, two tables.

use super::*;

pub(super) fn report() -> File {
    const CATEGORIES: [&str; 12] = [
        "Auto Repair",
        "Home Improvement",
        "Debt Collection",
        "Landlord/Tenant",
        "Retail Sales",
        "Telemarketing",
        "Used Car Dealers",
        "Utilities",
        "Health Clubs",
        "Travel Agencies",
        "Moving Companies",
        "Towing",
    ];
    let mut rng = Rng::with_seed(1);
    let mut s = String::from(
        "Complaints Received by Category - Fiscal Year 2023,,,,\n\n\
         Category,Received,Resolved,Pending,Median Days to Resolve\n",
    );
    let (mut rec, mut res, mut pen, mut days) = (vec![], vec![], vec![], vec![]);
    for c in CATEGORIES {
        let r = rng.i64(120..2400);
        let done = r - rng.i64(5..r / 5);
        let t = rng.i64(40..600);
        let _ = writeln!(s, "{c},{r},{done},{},{}.{}", r - done, t / 10, t % 10);
        rec.push(r);
        res.push(done);
        pen.push(r - done);
        days.push(t);
    }
    s.push_str("\n\"Source: Department of Consumer Affairs, Complaint Tracking System\",,,,\n");
    let facts = Expected::new(
        "consumer_affairs/complaints_by_category.csv",
        "report",
        Some("csv"),
    )
    .delimiter(",")
    .table(TableFacts::new(
        CATEGORIES.len() as u64,
        vec![
            Column::new("Category", Kind::Text).distinct(12),
            ints("Received", &rec),
            ints("Resolved", &res),
            ints("Pending", &pen),
            decimals("Median Days to Resolve", &days, 10.0),
        ],
    ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// A grouping header row (`,,Pool 4,,Pool 8,`) over `Date,Species,Flag,Count,Flag,Count`.
pub(super) fn grouped_header() -> File {
    const SPECIES: [&str; 4] = ["Canvasback", "Mallard", "Common Goldeneye", "Tundra Swan"];
    let mut rng = Rng::with_seed(2);
    let mut s = String::from(
        "Mid-Winter Waterfowl Survey - Upper Mississippi River Pools,,,,,\n\n\
         ,,Pool 4,,Pool 8,\nDate,Species,Flag,Count,Flag,Count\n",
    );
    let (mut a, mut b) = (vec![], vec![]);
    let first = day(2023, 1, 5);
    for week in 0..8u64 {
        let d = first + Days::new(7 * week);
        for (i, sp) in SPECIES.iter().enumerate() {
            let row = week as usize * SPECIES.len() + i;
            let flag = |k: usize, rng: &mut Rng| {
                if row == k || rng.u32(0..4) == 0 {
                    "E"
                } else {
                    ""
                }
            };
            let (fa, fb) = (flag(0, &mut rng), flag(1, &mut rng));
            let (ca, cb) = (rng.i64(0..25_000), rng.i64(0..40_000));
            let _ = writeln!(s, "{},{sp},{fa},{ca},{fb},{cb}", iso(d));
            a.push(ca);
            b.push(cb);
        }
    }
    s.push_str("Note: E = estimated count,,,,,\n");
    let last = first + Days::new(49);
    let facts = Expected::new("wildlife/waterfowl_survey_pools.csv", "report", Some("csv"))
        .delimiter(",")
        .coverage(&iso(first), &iso(last))
        .table(TableFacts::new(
            32,
            vec![
                Column::new("Date", Kind::Date)
                    .range(iso(first), iso(last))
                    .date_format("%Y-%m-%d"),
                Column::new("Species", Kind::Text).distinct(4),
                Column::new("Pool 4 / Flag", Kind::Text),
                ints("Pool 4 / Count", &a),
                Column::new("Pool 8 / Flag", Kind::Text),
                ints("Pool 8 / Count", &b),
            ],
        ));
    (facts.path.clone(), s.into_bytes(), facts)
}

/// Two tables in one file, each under its own title, separated by a blank line.
pub(super) fn two_tables() -> File {
    const COUNTIES: [&str; 10] = [
        "Adams",
        "Arapahoe",
        "Boulder",
        "Broomfield",
        "Denver",
        "Douglas",
        "El Paso",
        "Jefferson",
        "Larimer",
        "Weld",
    ];
    const TYPES: [(&str, i64); 4] = [
        ("Single-family", 1),
        ("Two units", 2),
        ("Three and four units", 4),
        ("Five units or more", 24),
    ];
    let mut rng = Rng::with_seed(3);
    let t1 = "Table 1. New Residential Building Permits by County";
    let t2 = "Table 2. Permit Valuation by Structure Type";
    let mut s = format!("{t1},,,\n\nCounty,Single-Family Units,Multi-Family Units,Total Units\n");
    let (mut sf, mut mf, mut tot) = (vec![], vec![], vec![]);
    for c in COUNTIES {
        let (a, b) = (rng.i64(80..2400), rng.i64(0..1800));
        let _ = writeln!(s, "{c},{a},{b},{}", a + b);
        sf.push(a);
        mf.push(b);
        tot.push(a + b);
    }
    let _ = write!(
        s,
        "\n{t2},,,\n\nStructure Type,Buildings,Units,Valuation (USD)\n"
    );
    let (mut bl, mut un, mut val) = (vec![], vec![], vec![]);
    for (name, per) in TYPES {
        let b = rng.i64(40..3200);
        let v = b * per * rng.i64(180_000..420_000);
        let _ = writeln!(s, "{name},{b},{},{v}", b * per);
        bl.push(b);
        un.push(b * per);
        val.push(v);
    }
    s.push_str("\nSource: State Housing Finance Agency. Building Permits Survey.,,,\n");
    let facts = Expected::new("housing/building_permits.csv", "report", Some("csv"))
        .table(
            TableFacts::new(
                10,
                vec![
                    Column::new("County", Kind::Text).distinct(10),
                    ints("Single-Family Units", &sf),
                    ints("Multi-Family Units", &mf),
                    ints("Total Units", &tot),
                ],
            )
            .named(t1),
        )
        .table(
            TableFacts::new(
                4,
                vec![
                    Column::new("Structure Type", Kind::Text),
                    ints("Buildings", &bl),
                    ints("Units", &un),
                    ints("Valuation (USD)", &val),
                ],
            )
            .named(t2),
        );
    (facts.path.clone(), s.into_bytes(), facts)
}
