//! Yearly collections (a city's incident extracts, a transit agency's daily ridership,
//! EPA's daily AQI by county), each member's date column covering its year; questions
//! over year ranges and about single days.

use super::{day_of_year, Builder, Mechanism};
use std::io;

const OFFENSES: [&str; 8] = [
    "THEFT",
    "BATTERY",
    "BURGLARY",
    "NARCOTICS",
    "ASSAULT",
    "ROBBERY",
    "CRIMINAL DAMAGE",
    "MOTOR VEHICLE THEFT",
];
const COUNTIES: [&str; 6] = [
    "Los Angeles",
    "Cook",
    "Harris",
    "Maricopa",
    "San Diego",
    "King",
];
const POLLUTANTS: [&str; 4] = ["PM2.5", "Ozone", "NO2", "PM10"];

fn crimes(y: i32) -> String {
    format!("police/crime/annual/crimes_{y}.csv")
}
fn ridership(y: i32) -> String {
    format!("transport/ridership/daily/ridership_{y}.csv")
}
fn aqi(y: i32) -> String {
    format!("environment/air_quality/daily_aqi_by_county_{y}.csv")
}

pub(super) fn write(b: &mut Builder) -> io::Result<()> {
    for y in 2002..=2023 {
        // Every sixth day from the 1st of January to the 31st of December.
        let days: Vec<u32> = (0..61).map(|i| (i * 6).min(364)).collect();
        let rows: Vec<String> = days
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                format!(
                    "{}{:05},{},{},{:03},{}",
                    y - 2000,
                    i,
                    day_of_year(y, d),
                    b.pick(&OFFENSES),
                    b.int(1, 26),
                    b.pick(&["true", "false", "false"])
                )
            })
            .collect();
        b.csv(
            &crimes(y),
            "case_number,date,primary_type,district,arrest",
            rows,
        )?;
    }
    for y in 2015..=2024 {
        let rows: Vec<String> = (0..122)
            .map(|i| {
                let route = b.pick(&["1", "6", "12", "22", "49", "77"]);
                let n = b.int(800, 9000);
                format!(
                    "{},{route},{n},{}",
                    day_of_year(y, (i * 3).min(364)),
                    n - n / 7
                )
            })
            .collect();
        b.csv(
            &ridership(y),
            "service_date,route,boardings,alightings",
            rows,
        )?;
    }
    for y in 2016..=2022 {
        let rows: Vec<String> = (0..92)
            .map(|i| {
                let a = b.int(12, 180);
                let cat = match a {
                    0..=50 => "Good",
                    51..=100 => "Moderate",
                    101..=150 => "Unhealthy for Sensitive Groups",
                    _ => "Unhealthy",
                };
                format!(
                    "California,{},{},{a},{cat},{}",
                    b.pick(&COUNTIES),
                    day_of_year(y, (i * 4).min(364)),
                    b.pick(&POLLUTANTS)
                )
            })
            .collect();
        b.csv(
            &aqi(y),
            "State Name,county Name,Date,AQI,Category,Defining Parameter",
            rows,
        )?;
    }
    b.write(
        "police/crime/annual/README.txt",
        "Reported incidents, one extract per calendar year, refreshed nightly.\n\
         Locations are shifted to the block level. Counts can change as cases are reclassified.\n",
    )?;
    b.write(
        "environment/air_quality/README.md",
        "# Daily AQI by county\n\nDaily Air Quality Index values by county from the \
         pre-generated files of the national air data program, one file per year.\n",
    )?;

    let range =
        |f: fn(i32) -> String, from: i32, to: i32| -> Vec<String> { (from..=to).map(f).collect() };
    for (q, files) in [
        (
            "How did the number of burglaries change from 2005 to 2009?",
            range(crimes, 2005, 2009),
        ),
        (
            "Compare arrests for narcotics offenses between 2015 and 2018, year by year",
            range(crimes, 2015, 2018),
        ),
        (
            "Total thefts reported in 2020, 2021 and 2022",
            range(crimes, 2020, 2022),
        ),
        (
            "Crime incidents by police district for the years 2002 through 2004",
            range(crimes, 2002, 2004),
        ),
        (
            "Average daily bus boardings per route in 2017–2019",
            range(ridership, 2017, 2019),
        ),
        (
            "How did transit ridership recover between 2020 and 2023?",
            range(ridership, 2020, 2023),
        ),
        (
            "Number of days with unhealthy air quality per county from 2018 to 2020",
            range(aqi, 2018, 2020),
        ),
        (
            "Which county had the worst AQI over 2016-2017?",
            range(aqi, 2016, 2017),
        ),
    ] {
        let rel: Vec<&str> = files.iter().map(String::as_str).collect();
        b.ask(Mechanism::YearRange, q, &rel);
    }
    for (q, file) in [
        ("What crimes were reported on 3 May 2012?", crimes(2012)),
        ("Were there any arrests on July 4th, 2008?", crimes(2008)),
        (
            "Which police district had incidents on 2019-11-23?",
            crimes(2019),
        ),
        (
            "List the offenses committed on the 31st of October 2005",
            crimes(2005),
        ),
        (
            "How many boardings were recorded on route 22 on 14 February 2016?",
            ridership(2016),
        ),
        ("Transit ridership on March 16, 2020", ridership(2020)),
        (
            "What was the AQI in Los Angeles county on 1 August 2021?",
            aqi(2021),
        ),
        (
            "Which pollutant defined the air quality index on December 25th 2018?",
            aqi(2018),
        ),
    ] {
        b.ask(Mechanism::OneDay, q, &[&file]);
    }
    Ok(())
}
