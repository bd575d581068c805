//! Totals tables of collections and folders, wide exports with common words as columns,
//! files whose words are not the question's, and the rest of each agency's folder (other
//! collections, national tables, READMEs) that a question must not be distracted by.

use super::{day_of_year, Builder, Mechanism};
use std::io;

const CRIME_TOTALS: &str = "police/crime/crime_totals_by_year.csv";
const STATE_TOTALS: &str = "census/county_estimates/state_totals.csv";
const RIDERSHIP_SUMMARY: &str = "transport/ridership/annual_ridership_summary.csv";
const FIRE_TOTALS: &str = "wildfire/summary/fire_season_totals.csv";
const FIRES: &str = "wildfire/incidents/fire_incidents_2023.csv";
const PRECIPITATION: &str = "weather/climate/station_precipitation_monthly.csv";
const UNEMPLOYMENT: &str = "labor/laus/county_unemployment_2023.csv";
const HOME_VALUES: &str = "housing/home_value_index_by_county.csv";
const PHYSICIANS: &str = "health/workforce/physician_supply_by_county.csv";
const GASOLINE: &str = "energy/fuel/retail_gasoline_prices_weekly.csv";
const VIOLATIONS: &str = "police/traffic/moving_violations_2023.csv";
const HOME_SALES: &str = "housing/home_sales_2023.csv";
const ASSESSMENTS: &str = "housing/property_assessments_2024.csv";
const WELLS: &str = "environment/groundwater/well_inventory.csv";

const COUNTIES: [&str; 8] = [
    "Adams", "Clark", "Franklin", "Jackson", "Lincoln", "Madison", "Marion", "Warren",
];

pub(super) fn write(b: &mut Builder) -> io::Result<()> {
    totals(b)?;
    common_words(b)?;
    synonyms(b)?;
    distractors(b)
}

fn totals(b: &mut Builder) -> io::Result<()> {
    let rows: Vec<String> = (2002..=2023)
        .map(|y| {
            let (v, p) = (b.int(8_000, 30_000), b.int(40_000, 120_000));
            format!("{y},{},{v},{p},{}", v + p, b.int(5_000, 40_000))
        })
        .collect();
    b.csv(
        CRIME_TOTALS,
        "year,total_incidents,violent,property,arrests",
        rows,
    )?;
    let rows: Vec<String> = super::states::STATES
        .iter()
        .map(|(ab, s)| {
            format!(
                "{s},{ab},{},{},{}",
                b.int(500_000, 39_000_000),
                b.int(3, 254),
                b.int(45_000, 95_000)
            )
        })
        .collect();
    b.csv(
        STATE_TOTALS,
        "state,abbreviation,population,counties,median_household_income",
        rows,
    )?;
    let rows: Vec<String> = (2015..=2024)
        .map(|y| {
            format!(
                "{y},{},{}",
                b.int(20, 90) * 1_000_000,
                b.int(60, 300) * 1_000
            )
        })
        .collect();
    b.csv(
        RIDERSHIP_SUMMARY,
        "year,total_boardings,average_weekday_boardings",
        rows,
    )?;
    let rows: Vec<String> = (2000..=2023)
        .map(|y| {
            format!(
                "{y},{},{},{}",
                b.int(3_000, 10_000),
                b.int(100_000, 4_000_000),
                b.int(0, 20_000)
            )
        })
        .collect();
    b.csv(
        FIRE_TOTALS,
        "year,fires,acres_burned,structures_destroyed",
        rows,
    )?;
    for (q, rel) in [
        (
            "What share of all reported incidents each year were violent crimes?",
            vec![CRIME_TOTALS],
        ),
        (
            "What was the arrest rate per 100 incidents in 2010?",
            vec![CRIME_TOTALS],
        ),
        (
            "What percentage of the US population lives in Texas?",
            vec![STATE_TOTALS],
        ),
        (
            "What share of Ohio's population lives in Franklin County?",
            vec!["census/county_estimates/by_state/Ohio.csv", STATE_TOTALS],
        ),
        (
            "By what percentage did annual transit ridership fall in 2020?",
            vec![RIDERSHIP_SUMMARY],
        ),
        (
            "What fraction of the acres burned since 2000 burned in 2020?",
            vec![FIRE_TOTALS],
        ),
    ] {
        b.ask(Mechanism::Totals, q, &rel);
    }
    Ok(())
}

fn common_words(b: &mut Builder) -> io::Result<()> {
    // Wide exports whose first columns are common words.
    for (rel, lead, prefix) in [
        (
            "finance/budget/appropriations_wide_export.csv",
            "period,type,value,file,fund_code",
            "fund",
        ),
        (
            "statistics/releases/sdmx_flat_export.csv",
            "DATAFLOW,FREQ,REF_AREA,period,value,type,obs_status",
            "series",
        ),
        (
            "it/records/asset_inventory_export.csv",
            "file,type,value,owner,location",
            "attr",
        ),
    ] {
        let extra: Vec<String> = (0..40).map(|j| format!("{prefix}_{j:02}")).collect();
        let width = lead.split(',').count();
        let rows: Vec<String> = (0..30)
            .map(|i| {
                let lead: Vec<String> = (0..width)
                    .map(|c| match c {
                        0 => format!("P{}", 2015 + i % 9),
                        1 => b.pick(&["A", "B", "C"]).to_string(),
                        _ => b.int(0, 10_000).to_string(),
                    })
                    .collect();
                let vals: Vec<String> = (0..40).map(|j| (i * j % 97).to_string()).collect();
                format!("{},{}", lead.join(","), vals.join(","))
            })
            .collect();
        b.csv(rel, &format!("{lead},{}", extra.join(",")), rows)?;
    }
    let rows: Vec<String> = (0..150)
        .map(|i| {
            format!(
                "{},{},{},{},{}",
                b.pick(&COUNTIES),
                day_of_year(2023, (i * 2) as u32),
                b.int(90_000, 900_000),
                b.int(1, 6),
                b.int(700, 4_000)
            )
        })
        .collect();
    b.csv(
        HOME_SALES,
        "neighbourhood,sale_date,sale_price,bedrooms,square_feet",
        rows,
    )?;
    let rows: Vec<String> = (0..200)
        .map(|i| {
            format!(
                "{:010},{},{},{}",
                1_000_000 + i * 37,
                b.pick(&[
                    "Residential",
                    "Commercial",
                    "Industrial",
                    "Agricultural",
                    "Vacant land"
                ]),
                b.int(20_000, 3_000_000),
                b.int(1900, 2024)
            )
        })
        .collect();
    b.csv(
        ASSESSMENTS,
        "parcel_id,property_class,assessed_value,year_built",
        rows,
    )?;
    let rows: Vec<String> = (0..120)
        .map(|i| {
            format!(
                "W{i:05},{},{},{},{}",
                b.pick(&["domestic", "irrigation", "monitoring", "public supply"]),
                b.int(20, 1_200),
                b.dec(2.0, 300.0),
                b.pick(&COUNTIES)
            )
        })
        .collect();
    b.csv(
        WELLS,
        "well_id,well_use,well_depth_ft,static_water_level_ft,county",
        rows,
    )?;
    for (q, rel) in [
        (
            "What is the median value of home sales per neighbourhood in the period?",
            HOME_SALES,
        ),
        (
            "Which type of property class has the highest assessed value?",
            ASSESSMENTS,
        ),
        (
            "For each type of well use, what value of well depth is typical?",
            WELLS,
        ),
        (
            "What type of road surface had the most crashes over the period?",
            "transport/crashes/crash_records_2022.csv",
        ),
        (
            "List the value of total charges by diagnosis type in the hospital discharge file",
            "health/hospital_discharges/discharges_2022.csv",
        ),
        (
            "Which file has the typical value of the pH of stream water samples?",
            "environment/water_quality/stream_samples.csv",
        ),
    ] {
        b.ask(Mechanism::CommonWords, q, &[rel]);
    }
    Ok(())
}

fn synonyms(b: &mut Builder) -> io::Result<()> {
    let stations = [
        "USC00041758 FRESNO",
        "USW00023174 LOS ANGELES",
        "USW00024233 SEATTLE",
        "USW00014739 BOSTON",
    ];
    let rows: Vec<String> = stations
        .iter()
        .flat_map(|s| (1..=12).map(move |m| (s, m)))
        .map(|(s, m)| {
            let (id, name) = s.split_once(' ').unwrap_or((s, s));
            format!(
                "{id},{name},2022-{m:02},{},{}",
                b.dec(0.0, 9.0),
                b.dec(0.0, 20.0)
            )
        })
        .collect();
    b.csv(
        PRECIPITATION,
        "station_id,station_name,month,precipitation_in,snowfall_in",
        rows,
    )?;
    let rows: Vec<String> = (0..90)
        .map(|i| {
            format!(
                "CA-{}-{i:05},{} Fire,{},{},{}",
                b.pick(&["LAC", "BTU", "SHU", "RRU"]),
                b.pick(&["Creek", "Oak", "Ridge", "Canyon", "Mill", "Pine"]),
                day_of_year(2023, (i * 3 + 100) as u32),
                b.dec(0.1, 90_000.0),
                b.int(0, 100)
            )
        })
        .collect();
    b.csv(
        FIRES,
        "incident_id,incident_name,discovery_date,acres_burned,percent_contained",
        rows,
    )?;
    let rows: Vec<String> = COUNTIES
        .iter()
        .flat_map(|c| (1..=12).map(move |m| (c, m)))
        .map(|(c, m)| {
            format!(
                "{c} County,2023-{m:02},{},{}",
                b.int(9_000, 400_000),
                b.dec(2.5, 11.0)
            )
        })
        .collect();
    b.csv(
        UNEMPLOYMENT,
        "area,month,labor_force,unemployment_rate",
        rows,
    )?;
    let rows: Vec<String> = COUNTIES
        .iter()
        .flat_map(|c| (2019..=2023).map(move |y| (c, y)))
        .map(|(c, y)| format!("{c} County,{y}-12-31,{}", b.int(120_000, 650_000)))
        .collect();
    b.csv(
        HOME_VALUES,
        "region_name,period_end,typical_home_value",
        rows,
    )?;
    let rows: Vec<String> = COUNTIES
        .iter()
        .map(|c| format!("{c} County,{},{}", b.int(20, 3_000), b.dec(40.0, 400.0)))
        .collect();
    b.csv(
        PHYSICIANS,
        "county,active_physicians,physicians_per_100k_residents",
        rows,
    )?;
    let rows: Vec<String> = (0..52)
        .map(|w| {
            format!(
                "{},{},{}",
                day_of_year(2022, w * 7),
                b.dec(2.9, 5.2),
                b.dec(3.5, 6.0)
            )
        })
        .collect();
    b.csv(
        GASOLINE,
        "week_of,regular_usd_per_gallon,diesel_usd_per_gallon",
        rows,
    )?;
    let rows: Vec<String> = (0..220)
        .map(|i| {
            format!(
                "T23{i:06},{},{},{}",
                day_of_year(2023, (i * 5 / 3) as u32),
                b.pick(&[
                    "SPEED 11-15 MPH OVER LIMIT",
                    "SPEED 16-20 MPH OVER LIMIT",
                    "FAILURE TO STOP AT RED LIGHT",
                    "NO SEAT BELT",
                    "ILLEGAL U TURN"
                ]),
                b.int(50, 300)
            )
        })
        .collect();
    b.csv(
        VIOLATIONS,
        "ticket_number,issue_date,violation_description,fine_amount",
        rows,
    )?;
    for (q, rel) in [
        (
            "Which weather station had the most rainfall in 2022?",
            PRECIPITATION,
        ),
        (
            "How much land was affected by the largest wildfires of 2023?",
            FIRES,
        ),
        ("Jobless rate by county over 2023", UNEMPLOYMENT),
        (
            "How have house prices changed in each county since 2019?",
            HOME_VALUES,
        ),
        (
            "Which county has the fewest doctors for its population?",
            PHYSICIANS,
        ),
        ("How much did petrol cost per gallon in 2022?", GASOLINE),
        ("How many speeding tickets were issued in 2023?", VIOLATIONS),
    ] {
        b.ask(Mechanism::Synonyms, q, &[rel]);
    }
    Ok(())
}

/// The rest of each agency's folder: other collections, national tables, READMEs.
fn distractors(b: &mut Builder) -> io::Result<()> {
    for m in 1..=12 {
        let rows: Vec<String> = (0..40)
            .map(|i| {
                format!(
                    "C23{m:02}{i:04},2023-{m:02}-{:02},{},{}",
                    i % 28 + 1,
                    b.pick(&[
                        "DISTURBANCE",
                        "SUSPICIOUS PERSON",
                        "WELFARE CHECK",
                        "ALARM",
                        "NOISE"
                    ]),
                    b.int(1, 6)
                )
            })
            .collect();
        b.csv(
            &format!("police/calls_for_service/2023/calls_2023_{m:02}.csv"),
            "call_id,call_date,call_type,priority",
            rows,
        )?;
    }
    for fy in 2019..=2024 {
        let rows: Vec<String> = (0..60)
            .map(|i| {
                format!(
                    "{},{},{:06},{}",
                    b.pick(&[
                        "Police",
                        "Fire",
                        "Parks",
                        "Public Works",
                        "Library",
                        "Health"
                    ]),
                    b.pick(&["Salaries", "Equipment", "Contracts", "Utilities"]),
                    i * 13 + 100_000,
                    b.int(1_000, 5_000_000)
                )
            })
            .collect();
        b.csv(
            &format!("finance/budget/expenditures_fy{fy}.csv"),
            "department,expense_category,account,amount_usd",
            rows,
        )?;
    }
    for s in 0..16 {
        let id = format!("USW000{:05}", 13_000 + s * 71);
        let rows: Vec<String> = (0..120)
            .map(|d| {
                format!(
                    "{},{},{}",
                    day_of_year(2023, d * 3),
                    b.dec(-5.0, 38.0),
                    b.dec(-15.0, 22.0)
                )
            })
            .collect();
        b.csv(
            &format!("weather/temperature/daily_{id}.csv"),
            "date,tmax_c,tmin_c",
            rows,
        )?;
    }
    for k in 0..20 {
        let rows: Vec<String> = (0..48)
            .map(|h| {
                format!(
                    "2024-04-{:02}T{:02}:00,{}",
                    1 + h / 24,
                    h % 24,
                    b.int(10, 2_500)
                )
            })
            .collect();
        b.csv(
            &format!("transport/traffic_counts/station_{:04}.csv", 1100 + k * 7),
            "hour,vehicle_count",
            rows,
        )?;
    }
    let gtfs: [(&str, &str, &[&str]); 4] = [
        ("agency.txt", "agency_id,agency_name,agency_url,agency_timezone", &["1,Metro Transit,https://example.org,America/Chicago"]),
        ("routes.txt", "route_id,route_short_name,route_long_name,route_type", &["1,1,Downtown Loop,3", "6,6,Lakeshore,3", "12,12,Airport Express,3", "22,22,Crosstown,3"]),
        ("stops.txt", "stop_id,stop_name,stop_lat,stop_lon", &["100,Main St & 1st Ave,41.88,-87.63", "101,Union Station,41.87,-87.64", "102,Airport Terminal,41.97,-87.90"]),
        ("calendar.txt", "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date", &["WK,1,1,1,1,1,0,0,20240101,20241231"]),
    ];
    for (name, header, rows) in gtfs {
        b.csv(
            &format!("transport/gtfs/{name}"),
            header,
            rows.iter().map(|r| r.to_string()),
        )?;
    }
    let ages = ["0-17", "18-24", "25-34", "35-44", "45-54", "55-64", "65+"];
    let rows: Vec<String> = ages
        .iter()
        .map(|a| format!("{a},{},{}", b.int(2_000, 20_000), b.int(500, 6_000)))
        .collect();
    b.csv(
        "police/arrests/arrests_by_age_sex_2023.csv",
        "age_group,male,female",
        rows,
    )?;
    let rows: Vec<String> = ages
        .iter()
        .map(|a| {
            format!(
                "{a},{},{}",
                b.int(10_000_000, 25_000_000),
                b.int(10_000_000, 25_000_000)
            )
        })
        .collect();
    b.csv(
        "census/national/us_population_by_age_sex.csv",
        "age_group,male,female",
        rows,
    )?;
    let rows: Vec<String> = (0..36)
        .map(|i| {
            format!(
                "{}-{:02},{},{}",
                2021 + i / 12,
                i % 12 + 1,
                b.int(280_000_000, 400_000_000),
                b.dec(10.0, 17.0)
            )
        })
        .collect();
    b.csv(
        "energy/national/us_electricity_monthly.csv",
        "month,retail_sales_mwh,avg_price_cents_per_kwh",
        rows,
    )?;
    let causes = [
        "Heart disease",
        "Cancer",
        "Unintentional injuries",
        "Stroke",
        "Diabetes",
    ];
    let rows: Vec<String> = causes
        .iter()
        .map(|c| format!("{c},{}", b.int(20_000, 700_000)))
        .collect();
    b.csv(
        "health/mortality/deaths_by_leading_cause_2021.csv",
        "cause,deaths",
        rows,
    )?;
    let rows: Vec<String> = COUNTIES
        .iter()
        .map(|c| format!("{c} County,{}", b.dec(30.0, 70.0)))
        .collect();
    b.csv(
        "health/vaccinations/flu_vaccination_coverage_2023.csv",
        "county,coverage_pct",
        rows,
    )?;
    for (rel, text) in [
        ("README.md", "# City and state open data\n\nExtracts published by the agencies of the state portal, refreshed monthly. See each folder's README.\n"),
        ("CHANGELOG.md", "## 2024-03\n- Crime extracts reloaded after reclassification.\n## 2023-11\n- Added daily AQI files.\n"),
        ("docs/open_data_policy.md", "# Open data policy\n\nDatasets are published under a public domain dedication unless noted.\n"),
        ("docs/data_inventory.md", "# Data inventory\n\n| agency | dataset | refresh |\n|---|---|---|\n| Police | Crime incidents | daily |\n| Transit | Ridership | monthly |\n"),
        ("health/README.md", "# Health department data\n\nHospital discharge abstracts, survey microdata and workforce counts.\n"),
        ("transport/README.md", "# Transportation\n\nRidership, crash records, traffic counts and the GTFS feed.\n"),
        ("wildfire/README.txt", "Wildfire incidents reported to the state fire agency; perimeters are not included.\n"),
        ("energy/README.md", "# Energy office\n\nRetail electricity sales by state and month, weekly fuel prices.\n"),
        ("weather/README.md", "# Climate\n\nStation summaries from the national climate data center.\n"),
    ] {
        b.write(rel, text)?;
    }
    Ok(())
}
