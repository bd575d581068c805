//! Detection of generated files modelled on line-oriented scientific text formats.

use super::*;

/// Generated files modelled on line-oriented scientific text formats.
mod scientific {
    /// Two-line element sets under a `#` comment header.
    pub fn tle() -> String {
        let mut t = String::from("# Generated element sets\n# Epoch day 155 of 2021\n");
        for i in 0..6 {
            t.push_str(&format!("SAT-{i}\n"));
            t.push_str(&format!(
                "1 {:05}U 98067A   21155.{:08}  .00001264  00000-0  31294-4 0  999{i}\n",
                25544 + i,
                51631944 + i * 1111
            ));
            t.push_str(&format!(
                "2 {:05}  51.64{i}0 {:3}.1234 0003{i}12 {:3}.4567 {:3}.7654 15.489{i}1234 2878{i}\n",
                25544 + i,
                100 + i * 7,
                200 + i,
                300 - i
            ));
        }
        t
    }

    /// An orbit product: `#`/`##` header lines, `+`, `%` and `/*` lines, epochs and
    /// positions.
    pub fn orbit() -> String {
        let mut t = String::from("#dP2021  6  4  0  0  0.00000000      96 ORBIT IGS14 HLM  GEN\n");
        t.push_str("## 2161 345600.00000000   900.00000000 59369 0.0000000000000\n");
        t.push_str("+    3   G01G02G03\n%c G  cc GPS ccc cccc\n/* GENERATED ORBIT\n");
        for e in 0..8 {
            t.push_str(&format!(
                "*  2021  6  4  {:>2} {:>2}  0.00000000\n",
                e / 4,
                (e % 4) * 15
            ));
            for s in 1..=3 {
                t.push_str(&format!(
                    "PG{s:02} {:>13.6} {:>13.6} {:>13.6} {:>13.6}\n",
                    12000.0 + (e * s) as f64,
                    -23000.5 + s as f64,
                    3456.25 * s as f64,
                    100.125
                ));
            }
        }
        t.push_str("EOF\n");
        t
    }

    /// A space-weather bulletin: `:Product:`/`:Issued:` lines, `#` comments, prose.
    pub fn bulletin() -> String {
        "\
:Product: Generated Forecast Discussion
:Issued: 2021 Jun 04 1230 UTC
# Prepared by a generated forecast office
# Questions: see the office's pages
#
Solar Activity

24 hr Summary: Solar activity was very low. No flares were observed.
Forecast: Very low activity is expected on 05 Jun-07 Jun.

Geospace
# the next section is generated too
Energetic particles remained at background levels.
"
        .to_string()
    }

    /// An ephemeris message: `KEY = value` metadata, section markers, comments,
    /// then whitespace columns of epochs and state vectors.
    pub fn ephemeris() -> String {
        let mut t = String::from(
            "CCSDS_OEM_VERS = 2.0\nCREATION_DATE = 2021-06-04T00:00:00\nORIGINATOR = GENERATED\n\n\
             META_START\nOBJECT_NAME = SAT-1\nCENTER_NAME = EARTH\nREF_FRAME = EME2000\n\
             TIME_SYSTEM = UTC\nMETA_STOP\n\nCOMMENT generated states\n",
        );
        for i in 0..20 {
            t.push_str(&format!(
                "2021-06-04T{:02}:{:02}:00.000 {:>12.3} {:>12.3} {:>12.3} {:>9.5} {:>9.5} {:>9.5}\n",
                i / 6,
                (i % 6) * 10,
                2789.6 + i as f64 * 10.0,
                -280.0 - i as f64,
                -1746.8 + i as f64 * 3.0,
                4.73,
                -2.49,
                -1.04
            ));
        }
        t
    }

    /// A `.dat` of whitespace columns under a `#` header.
    pub fn dat() -> String {
        let mut t = String::from("# Generated readings\n# columns: time flux error\n");
        for i in 0..30 {
            t.push_str(&format!(
                "{} {:.3} {:.4}\n",
                1000 + i * 60,
                1.5 + i as f64 / 7.0,
                0.01
            ));
        }
        t
    }
}

#[test]
fn line_oriented_scientific_text_is_a_text_table_or_text() {
    use crate::analyze::{describe, Content, Source};
    for (name, body, want) in [
        ("elements.tle", scientific::tle(), Format::Text),
        ("orbit.sp3", scientific::orbit(), Format::Text),
        ("forecast.txt", scientific::bulletin(), Format::Text),
        ("states.oem", scientific::ephemeris(), Format::FixedWidth),
        ("flux.dat", scientific::dat(), Format::FixedWidth),
    ] {
        let d = describe(&Source::from_bytes(name, body.into_bytes()));
        assert_eq!(d.format, want, "{name}");
        assert_eq!(d.error, None, "{name}");
        match (&d.content, want) {
            (Content::Text(t), Format::Text) => assert!(!t.markdown, "{name}"),
            (Content::Table(t), Format::FixedWidth) => assert!(t.rows >= 20, "{name}: {t:?}"),
            (c, _) => panic!("{name}: {c:?}"),
        }
    }
    let d = describe(&Source::from_bytes(
        "states.oem",
        scientific::ephemeris().into_bytes(),
    ));
    let Content::Table(t) = &d.content else {
        panic!()
    };
    assert_eq!((t.rows, t.columns.len(), t.skipped_lines), (20, 7, 12));
    assert!(
        t.load.as_deref().unwrap().contains("skiprows=12"),
        "{:?}",
        t.load
    );
    assert_eq!(t.preamble[0], "CCSDS_OEM_VERS = 2.0");
    assert_eq!(t.columns[0].kind, crate::analyze::ColumnType::Datetime);
    let cov = d.time_coverage.expect("coverage");
    assert_eq!(
        (cov.start.as_str(), cov.end.as_str()),
        ("2021-06-04", "2021-06-04")
    );
    let d = describe(&Source::from_bytes(
        "forecast.txt",
        scientific::bulletin().into_bytes(),
    ));
    let cov = d.time_coverage.expect("coverage");
    assert_eq!(
        (cov.start.as_str(), cov.end.as_str()),
        ("2021-06-04", "2021-06-07")
    );
}
