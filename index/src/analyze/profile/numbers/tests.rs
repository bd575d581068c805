use super::convention::Resolved;
use super::*;

fn value(v: &str) -> Option<f64> {
    parse(v).map(|w| w.value)
}

/// A column of cells read as written numbers, resolved with no plain cells beside them.
fn column(cells: &[&str]) -> Option<Resolved> {
    let mut c = Column::default();
    for v in cells {
        c.add(&parse(v).unwrap_or_else(|| panic!("{v} not read")));
    }
    c.resolve(0, 0, false)
}

#[test]
fn cells_as_people_write_them() {
    for (v, x) in [
        ("1,234,567", 1234567.0),
        ("1,234,567.89", 1234567.89),
        ("1.234.567,89", 1234567.89),
        ("1 234 567", 1234567.0),
        ("1\u{a0}234,5", 1234.5),
        ("1\u{202f}234", 1234.0),
        ("1\u{2009}234.25", 1234.25),
        ("1'234.50", 1234.5),
        ("12,5", 12.5),
        ("0,123", 0.123),
        ("12.5%", 12.5),
        ("-3 %", -3.0),
        ("$3,100M", 3100.0),
        ("€12.5k", 12.5),
        ("USD 1,200", 1200.0),
        ("1.200,00 €", 1200.0),
        ("1,200 USD", 1200.0),
        ("US$5", 5.0),
        ("3.1bn", 3.1),
        ("(1,234)", -1234.0),
        ("($1,234.50)", -1234.5),
        ("$(12)", -12.0),
        ("-$1,200", -1200.0),
        ("$-1,200", -1200.0),
        ("−5%", -5.0),
        ("<10", 10.0),
        ("< 0.5", 0.5),
        (">2000", 2000.0),
        ("≤5", 5.0),
        (">=1,000", 1000.0),
    ] {
        assert_eq!(value(v), Some(x), "{v}");
    }
    // The ambiguous ones, both readings.
    let w = parse("1,234").unwrap();
    assert_eq!((w.value, w.alt, w.fraction), (1234.0, 1.234, false));
    let w = parse("1.234").unwrap();
    assert_eq!((w.value, w.alt, w.fraction), (1.234, 1234.0, true));
    assert!(ambiguous_dot("1.234") && ambiguous_dot("-123.456"));
    assert!(!ambiguous_dot("0.123") && !ambiguous_dot("1.2345") && !ambiguous_dot("1234.567"));
}

#[test]
fn lookalikes_are_not_numbers() {
    for v in [
        "1,2,3",
        "1.2.3",
        "10.0.0.1",
        "1,23,456",
        "12,34,567",
        "01,234",
        "0.123.456",
        "555-1234",
        "(555) 123-4567",
        "+1 555 123 4567",
        "+44 20 7946 0958",
        "06 12 34 56 78",
        "02134-1234",
        "A-1234",
        "ID1234",
        "USDA",
        "USDA 12",
        "50% off",
        "100%abc",
        "%",
        "$",
        "(12",
        "12)",
        "(-12)",
        "--5",
        "<(5)",
        "1,",
        ",5",
        "1,,234",
        "1, 234",
        "3 4",
        "2019 123",
        "12 %%",
        "$5%",
        "5k%",
        "2024-01-31",
        "01.03.2024",
        "10/1/2014",
        "1 Mar 2024",
        "Mar 1 2024",
        "12:30",
        "1e5x",
        "1,234.5.6",
        "1.234,567,8",
        "1,234 567",
        "Total",
        "M",
        "5 kg",
    ] {
        assert_eq!(parse(v), None, "{v} read as {:?}", parse(v));
    }
}

#[test]
fn a_column_agrees_on_one_convention() {
    let r = column(&["1,234", "12,345,678", "999"]).unwrap();
    assert_eq!(r.notation, ["thousands \",\""]);
    assert_eq!((r.moments.min, r.moments.max), (999.0, 12345678.0));
    assert!(r.integral);
    // European: the lone `1.234` and `12,5` read by the rest.
    let r = column(&["1.234.567,89", "1.234", "12,5"]).unwrap();
    assert_eq!(r.notation, ["thousands \".\"", "decimal \",\""]);
    assert_eq!((r.moments.min, r.moments.max), (12.5, 1234567.89));
    assert!(!r.integral);
    // A decimal comma elsewhere makes a lone `1,234` a decimal number.
    let r = column(&["1,234", "0,5"]).unwrap();
    assert_eq!(r.notation, ["decimal \",\""]);
    assert_eq!(r.moments.max, 1.234);
    // Spaces group: a lone comma is then the decimal mark.
    let r = column(&["1 234", "5,125"]).unwrap();
    assert_eq!(r.notation, ["thousands \" \"", "decimal \",\""]);
    assert_eq!(r.moments.max, 1234.0);
    // Mixed conventions are no convention.
    assert_eq!(column(&["1.234,5", "1,234.5"]), None);
    assert_eq!(column(&["1,234,567", "1.234.567"]), None);
    assert_eq!(column(&["$5", "€5"]), None);
    assert_eq!(column(&["1 234", "1,234,567"]), None);
    // A lone dot beside dotted floats stays a decimal point.
    let mut c = Column::default();
    c.add(&parse("1.234").unwrap());
    let r = c.resolve(3, 3, false).unwrap();
    assert!(r.notation.is_empty());
    assert_eq!(r.moments.max, 1.234);
}

#[test]
fn notations_are_recorded_and_figures_are_in_the_written_unit() {
    let r = column(&["12.5%", "3%", "100%"]).unwrap();
    assert_eq!(r.notation, ["percent"]);
    assert_eq!((r.moments.min, r.moments.max), (3.0, 100.0));
    let r = column(&["$3,100M", "$950M", "$(20M)"]).unwrap();
    assert_eq!(
        r.notation,
        [
            "thousands \",\"",
            "currency \"$\"",
            "scale \"M\"",
            "negative \"(…)\""
        ]
    );
    assert_eq!((r.moments.min, r.moments.max), (-20.0, 3100.0));
    assert!(r.integral);
    // Several scales: figures in units.
    let r = column(&["$850M", "$3.1B"]).unwrap();
    assert_eq!(r.notation, ["currency \"$\"", "scale \"M\"", "scale \"B\""]);
    assert_eq!((r.moments.min, r.moments.max), (850e6, 3.1e9));
    assert!(r.integral);
    let r = column(&["€12.5k", "€800"]).unwrap();
    assert_eq!((r.moments.min, r.moments.max), (800.0, 12500.0));
    let r = column(&["(1,234)", "5,000"]).unwrap();
    assert_eq!(r.notation, ["thousands \",\"", "negative \"(…)\""]);
    assert_eq!(r.moments.min, -1234.0);
    // Bounds beside plain numbers (two here); bounds alone are class labels.
    let mut c = Column::default();
    for v in ["<10", ">2000", "<0.5"] {
        c.add(&parse(v).unwrap());
    }
    assert_eq!(c.resolve(0, 0, false), None);
    let r = c.resolve(2, 1, false).unwrap();
    assert_eq!(r.notation, ["censored \"<\"", "censored \">\""]);
    assert_eq!((r.moments.min, r.moments.max), (0.5, 2000.0));
    assert!(!r.integral);
    let r = column(&["USD 1,200", "USD 80"]).unwrap();
    assert_eq!(r.notation, ["thousands \",\"", "currency \"USD\""]);
    let r = column(&["1\u{a0}234,5 €"]).unwrap();
    assert_eq!(
        r.notation,
        ["thousands \"\u{a0}\"", "decimal \",\"", "currency \"€\""]
    );
}

#[test]
fn moments_merge_like_one_pass() {
    let xs = [3.0, 1.5, 8.0, -2.0, 4.25, 10.0];
    let mut all = Moments::default();
    let (mut a, mut b) = (Moments::default(), Moments::default());
    for (i, x) in xs.iter().enumerate() {
        all.add(*x);
        if i < 2 {
            a.add(*x)
        } else {
            b.add(*x)
        }
    }
    a.merge(&b);
    assert_eq!((a.n, a.min, a.max), (all.n, all.min, all.max));
    assert!((a.mean - all.mean).abs() < 1e-12 && (a.m2 - all.m2).abs() < 1e-9);
}

#[test]
fn lone_values_for_header_sniffing() {
    assert_eq!(lone("1,234,567"), Some(true));
    assert_eq!(lone("12.5%"), Some(false));
    assert_eq!(lone("$3,100M"), Some(true));
    assert_eq!(lone("Revenue"), None);
    assert_eq!(lone("2019"), None);
}
