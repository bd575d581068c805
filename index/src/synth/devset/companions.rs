//! Data files whose meaning lives beside them: code columns with their lookup tables
//! (state abbreviations, diagnosis codes, crash severities, industry codes) and cryptic
//! survey variables with their codebooks.

use super::states::STATES;
use super::{Builder, Mechanism};
use std::io;

const ENROLLMENT: &str = "education/public_school_enrollment_2023.csv";
const GRADUATION: &str = "education/graduation_rates_2022.csv";
const STATE_CODES: &str = "education/state_codes.csv";
const DISCHARGES: &str = "health/hospital_discharges/discharges_2022.csv";
const DIAGNOSES: &str = "health/hospital_discharges/diagnosis_codes.csv";
const CRASHES: &str = "transport/crashes/crash_records_2022.csv";
const SEVERITY: &str = "transport/crashes/severity_codes.csv";
const QCEW: &str = "labor/qcew/county_employment_by_industry_2023.csv";
const INDUSTRIES: &str = "labor/qcew/industry_titles.csv";

const BRFSS: &str = "health/brfss/LLCP2021.csv";
const BRFSS_BOOK: &str = "health/brfss/codebook21_llcp.txt";
const NAEP: &str = "education/naep/naep_math_grade8.csv";
const NAEP_BOOK: &str = "education/naep/naep_math_grade8_variabledescrip.csv";
const PUMS: &str = "census/pums/psam_p39.csv";
const PUMS_BOOK: &str = "census/pums/PUMS_Data_Dictionary_2022.csv";
const WATER: &str = "environment/water_quality/stream_samples.csv";
const WATER_BOOK: &str = "environment/water_quality/data_dictionary.md";

const DIAGNOSIS_CODES: [(&str, &str); 8] = [
    ("J45", "Asthma"),
    ("I21", "Acute myocardial infarction (heart attack)"),
    ("E11", "Type 2 diabetes mellitus"),
    ("J18", "Pneumonia, unspecified organism"),
    ("I50", "Heart failure"),
    ("N39", "Urinary tract infection"),
    ("S72", "Fracture of femur (hip fracture)"),
    ("F32", "Major depressive disorder"),
];
const INDUSTRY_CODES: [(&str, &str); 7] = [
    ("23", "Construction"),
    ("31-33", "Manufacturing"),
    ("44-45", "Retail trade"),
    ("52", "Finance and insurance"),
    ("62", "Health care and social assistance"),
    ("72", "Accommodation and food services"),
    ("11", "Agriculture, forestry, fishing and hunting"),
];

pub(super) fn write(b: &mut Builder) -> io::Result<()> {
    lookups(b)?;
    codebooks(b)
}

fn lookups(b: &mut Builder) -> io::Result<()> {
    let rows: Vec<String> = STATES
        .iter()
        .flat_map(|(ab, _)| ["PK-5", "6-8", "9-12"].map(move |g| (ab, g)))
        .map(|(ab, g)| {
            format!(
                "{ab},{g},{},{}",
                b.int(20_000, 900_000),
                b.int(1_500, 60_000)
            )
        })
        .collect();
    b.csv(ENROLLMENT, "state,grade_band,enrolled,teachers", rows)?;
    let rows: Vec<String> = STATES
        .iter()
        .map(|(ab, _)| format!("{ab},{},{}", b.dec(68.0, 94.0), b.int(3_000, 400_000)))
        .collect();
    b.csv(GRADUATION, "st,acgr_pct,cohort", rows)?;
    let rows = STATES
        .iter()
        .enumerate()
        .map(|(i, (ab, name))| format!("{ab},{name},{:02}", i + 1));
    b.csv(STATE_CODES, "abbreviation,state_name,fips", rows)?;

    let rows: Vec<String> = (0..300)
        .map(|i| {
            let (code, _) = DIAGNOSIS_CODES[b.rng.usize(..DIAGNOSIS_CODES.len())];
            format!(
                "D{i:06},{code},{},{},{}",
                b.int(1, 15),
                b.int(18, 95),
                b.int(4_000, 90_000)
            )
        })
        .collect();
    b.csv(
        DISCHARGES,
        "discharge_id,diagnosis_code,length_of_stay_days,age,total_charges",
        rows,
    )?;
    let rows = DIAGNOSIS_CODES.iter().map(|(c, l)| format!("{c},\"{l}\""));
    b.csv(DIAGNOSES, "code,description", rows)?;

    let rows: Vec<String> = (0..400)
        .map(|i| {
            format!(
                "2022{i:06},{},{},{},{}",
                b.pick(&["K", "A", "B", "C", "O", "O", "O"]),
                b.int(1, 5),
                b.pick(&["Adams", "Clark", "Franklin", "Marion"]),
                b.pick(&["dry", "wet", "snow", "ice"])
            )
        })
        .collect();
    b.csv(
        CRASHES,
        "crash_id,severity,vehicles,county,road_surface",
        rows,
    )?;
    b.csv(
        SEVERITY,
        "code,description",
        [
            "K,Fatal injury",
            "A,Suspected serious injury",
            "B,Suspected minor injury",
            "C,Possible injury",
            "O,Property damage only",
        ]
        .map(String::from),
    )?;

    let rows: Vec<String> = (0..180)
        .map(|i| {
            let (code, _) = INDUSTRY_CODES[i % INDUSTRY_CODES.len()];
            format!(
                "{:05},{code},{},{}",
                39001 + 2 * (i / INDUSTRY_CODES.len()),
                b.int(40, 25_000),
                b.int(600, 2_400)
            )
        })
        .collect();
    b.csv(
        QCEW,
        "area_fips,industry_code,annual_avg_emplvl,avg_wkly_wage",
        rows,
    )?;
    let rows = INDUSTRY_CODES
        .iter()
        .map(|(c, l)| format!("{c},\"NAICS {c} {l}\""));
    b.csv(INDUSTRIES, "industry_code,industry_title", rows)?;

    for (q, rel) in [
        (
            "Public school enrollment in Ohio and Pennsylvania by grade band",
            [ENROLLMENT, STATE_CODES],
        ),
        (
            "What is the pupil–teacher ratio in Vermont public schools?",
            [ENROLLMENT, STATE_CODES],
        ),
        (
            "Compare the high school graduation rate of Oregon with Nevada",
            [GRADUATION, STATE_CODES],
        ),
        (
            "How many hospital discharges were for asthma?",
            [DISCHARGES, DIAGNOSES],
        ),
        (
            "Average length of stay of heart attack patients in hospital",
            [DISCHARGES, DIAGNOSES],
        ),
        (
            "How many traffic crashes in 2022 were fatal?",
            [CRASHES, SEVERITY],
        ),
        (
            "Number of crashes with a suspected serious injury on icy roads, by county",
            [CRASHES, SEVERITY],
        ),
        (
            "Average weekly wage in construction compared with manufacturing, by county",
            [QCEW, INDUSTRIES],
        ),
        (
            "Which county employs the most people in accommodation and food services?",
            [QCEW, INDUSTRIES],
        ),
    ] {
        b.ask(Mechanism::Lookup, q, &rel);
    }
    Ok(())
}

fn codebooks(b: &mut Builder) -> io::Result<()> {
    let rows: Vec<String> = (0..250)
        .map(|i| {
            format!(
                "{},{},{},{},{},{},2021{:06}",
                b.int(1, 57),
                b.int(1, 6),
                b.pick(&["0", "88", "1", "2", "5", "30", "77"]),
                b.int(1, 3),
                b.int(1, 14),
                b.int(1, 3),
                i
            )
        })
        .collect();
    b.csv(
        BRFSS,
        "_STATE,GENHLTH,PHYSHLTH,SMOKE100,_AGEG5YR,SEXVAR,SEQNO",
        rows,
    )?;
    b.write(
        BRFSS_BOOK,
        "2021 BRFSS Codebook Report, Land-Line and Cell-Phone data\n\n\
         Label: State FIPS Code\nSAS Variable Name: _STATE\n\
         Question: State FIPS code of the respondent.\n\n\
         Label: General Health\nSAS Variable Name: GENHLTH\n\
         Question: Would you say that in general your health is:\n\
         Value 1 Excellent; 2 Very good; 3 Good; 4 Fair; 5 Poor; 7 Don't know; 9 Refused\n\n\
         Label: Number of Days Physical Health Not Good\nSAS Variable Name: PHYSHLTH\n\
         Question: For how many days during the past 30 days was your physical health not good?\n\
         Value 1-30 Number of days; 88 None; 77 Don't know; 99 Refused\n\n\
         Label: Smoked at Least 100 Cigarettes\nSAS Variable Name: SMOKE100\n\
         Question: Have you smoked at least 100 cigarettes in your entire life?\n\
         Value 1 Yes; 2 No; 7 Don't know; 9 Refused\n\n\
         Label: Reported age in five-year age categories calculated variable\n\
         SAS Variable Name: _AGEG5YR\n\
         Value 1 Age 18 to 24; 2 Age 25 to 29; ... 13 Age 80 or older; 14 Don't know\n\n\
         Label: Sex of Respondent\nSAS Variable Name: SEXVAR\nValue 1 Male; 2 Female\n",
    )?;

    let rows: Vec<String> = (0..120)
        .map(|i| {
            format!(
                "{},{},{},{},{}",
                b.pick(&["AL", "CA", "OH", "TX", "NY", "UT"]),
                b.int(230, 310),
                b.int(1, 3),
                b.int(1, 4),
                b.int(0, 2) + i % 2
            )
        })
        .collect();
    b.csv(NAEP, "jurisdiction,MRPCM,IEP,SLUNCH,ACCOM", rows)?;
    b.csv(
        NAEP_BOOK,
        "variable,description,values",
        [
            "jurisdiction,State or jurisdiction of the assessed school,postal code",
            "MRPCM,Mathematics composite scale score (plausible value),0-500",
            "IEP,Student has an individualized education program,1 yes; 2 no",
            "SLUNCH,Eligibility for the national school lunch program,1 not eligible; 2 reduced; 3 free",
            "ACCOM,Student was assessed with testing accommodations,0 none; 1 some; 2 extended time",
        ]
        .map(String::from),
    )?;

    let rows: Vec<String> = (0..200)
        .map(|i| {
            format!(
                "2022HU{:07},{},{:05},{},{},{},{},{}",
                i / 3,
                i % 3 + 1,
                b.int(100, 5400),
                b.int(0, 92),
                b.int(1, 3),
                b.int(1, 25),
                b.int(0, 180) * 1000,
                b.int(1, 7)
            )
        })
        .collect();
    b.csv(PUMS, "SERIALNO,SPORDER,PUMA,AGEP,SEX,SCHL,WAGP,ESR", rows)?;
    b.csv(
        PUMS_BOOK,
        "NAME,VARIABLE,TYPE,LENGTH,DESCRIPTION",
        [
            "NAME,SERIALNO,C,13,Housing unit/GQ person serial number",
            "NAME,SPORDER,N,2,Person number",
            "NAME,PUMA,C,5,Public use microdata area code",
            "NAME,AGEP,N,2,Age",
            "NAME,SEX,C,1,Sex (1 Male; 2 Female)",
            "NAME,SCHL,C,2,Educational attainment (01 no schooling ... 16 regular high school diploma ... 21 bachelor's degree ... 24 doctorate degree)",
            "NAME,WAGP,N,6,Wages or salary income past 12 months (use ADJINC to adjust to constant dollars)",
            "NAME,ESR,C,1,Employment status recode (1 civilian employed at work ... 3 unemployed ... 6 not in labor force)",
        ]
        .map(String::from),
    )?;

    let rows: Vec<String> = (0..150)
        .map(|i| {
            format!(
                "USGS-0{},{},{},{},{}",
                3_200_000 + i % 12,
                super::day_of_year(2023, (i * 2) as u32),
                b.dec(0.5, 120.0),
                b.dec(4.0, 14.0),
                b.dec(5.8, 8.9)
            )
        })
        .collect();
    b.csv(
        WATER,
        "MonitoringLocationIdentifier,ActivityStartDate,TURB_NTU,DO_MGL,PH",
        rows,
    )?;
    b.write(
        WATER_BOOK,
        "# Stream samples: data dictionary\n\n\
         | column | meaning | unit |\n|---|---|---|\n\
         | MonitoringLocationIdentifier | Monitoring site identifier | |\n\
         | ActivityStartDate | Date the sample was taken | |\n\
         | TURB_NTU | Turbidity: cloudiness of the water | nephelometric turbidity units |\n\
         | DO_MGL | Dissolved oxygen | milligrams per litre |\n\
         | PH | Acidity of the water | pH units |\n",
    )?;

    for (q, rel) in [
        (
            "What does GENHLTH mean in the behavioral risk factor survey and how is it coded?",
            [BRFSS, BRFSS_BOOK],
        ),
        (
            "How is the _AGEG5YR variable coded in the 2021 BRFSS data?",
            [BRFSS, BRFSS_BOOK],
        ),
        (
            "What does the ACCOM variable in the NAEP grade 8 math scores stand for?",
            [NAEP, NAEP_BOOK],
        ),
        (
            "What do the SCHL values mean in the PUMS person records?",
            [PUMS, PUMS_BOOK],
        ),
        (
            "Is WAGP in the census microdata wages only or total income?",
            [PUMS, PUMS_BOOK],
        ),
        (
            "What is measured by TURB_NTU in the stream samples, and in which unit?",
            [WATER, WATER_BOOK],
        ),
        (
            "Explain the meaning of the DO_MGL column of the water quality samples",
            [WATER, WATER_BOOK],
        ),
    ] {
        b.ask(Mechanism::Codebook, q, &rel);
    }
    Ok(())
}
