//! Tests of the text index on a real tantivy index in a temporary directory, with
//! documents modelled on real lake files.

use super::*;
use tantivy::query::QueryParser;

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn doc(path: &str, format: &str, columns: &[&str], values: &[&str], text: &str) -> TextDoc {
    TextDoc {
        path: path.to_owned(),
        format: format.to_owned(),
        columns: strings(columns),
        values: strings(values),
        text: text.to_owned(),
        time_start: None,
        time_end: None,
    }
}

fn timed(mut d: TextDoc, start: &str, end: &str) -> TextDoc {
    d.time_start = Some(start.to_owned());
    d.time_end = Some(end.to_owned());
    d
}

const TITANIC: &str = "titanic/train.csv";
const PRICING: &str = "docs/pricing.md";
const GDP: &str = "worldbank/gdp_pc_ppp.csv";
const SENSORS: &str = "sensors/station-0042/readings-20190301.csv";
const FLIGHTS: &str = "flights/ontime.parquet";
const FEES: &str = "dabstep/context/fees.json";
const Q4: &str = "finance/quarterly/2014_q4.csv";

/// A small lake: none of the texts holds a year, so that years match time coverage only
/// where a test says so.
fn lake() -> Vec<TextDoc> {
    vec![
        doc(
            FEES,
            "json",
            &[
                "[].ID",
                "[].card_scheme",
                "[].account_type[]",
                "[].capture_delay",
                "[].monthly_fraud_level",
                "[].merchant_category_code[]",
                "[].is_credit",
                "[].aci[]",
                "[].fixed_amount",
                "[].rate",
            ],
            &["GlobalCard", "NexPay", "TransactPlus", "SwiftCharge"],
            "JSON array of 1000 objects. [].card_scheme string, 4 distinct; \
             [].fixed_amount number 0 to 0.14; [].rate integer 10 to 99.",
        ),
        doc(
            "dabstep/context/merchant_category_codes.csv",
            "csv",
            &["mcc", "description"],
            &["Veterinary Services", "Grocery Stores, Supermarkets"],
            "CSV, 769 rows, 2 columns: mcc integer 742 to 9999; description string.",
        ),
        timed(
            doc(
                Q4,
                "csv",
                &["date", "revenue", "region"],
                &["EMEA", "APAC"],
                "CSV, 92 rows, 3 columns: date, revenue number, region string.",
            ),
            "2014-10-01",
            "2014-12-31",
        ),
        timed(
            doc(
                SENSORS,
                "csv",
                &["timestamp", "temperature_c", "humidity_pct", "stationId"],
                &[],
                "CSV, 1440 rows, 4 columns: timestamp, temperature_c number, humidity_pct.",
            ),
            "2019-03-01",
            "2019-03-01",
        ),
        doc(
            GDP,
            "csv",
            &["Country Name", "Country Code", "1990", "2022"],
            &["Aruba", "Germany"],
            "CSV, 266 rows, 35 columns: Country Name string, Country Code string, \
             one number column for each year.",
        ),
        doc(
            "worldbank/README.md",
            "markdown",
            &[],
            &[],
            "World Bank indicators: population, life expectancy, health spending per capita.",
        ),
        doc(
            TITANIC,
            "csv",
            &[
                "PassengerId",
                "Survived",
                "Pclass",
                "Name",
                "Sex",
                "Age",
                "Fare",
                "Embarked",
            ],
            &["male", "female", "S", "C", "Q"],
            "CSV, 891 rows, 8 columns: PassengerId integer; Survived integer 0 to 1; \
             Pclass integer 1 to 3; Age number mean 29.7; Fare number mean 32.2.",
        ),
        // Prose naming every word of the fare question: only the boosts of the name and
        // column fields put the Titanic table above it.
        doc(
            PRICING,
            "markdown",
            &[],
            &[],
            "# Ticket pricing\nThe mean fare paid by passengers depends on the class of \
             travel; fares are listed per route.",
        ),
        timed(
            doc(
                FLIGHTS,
                "parquet",
                &["FlightDate", "Carrier", "DepDelay"],
                &["AA", "DL"],
                "Parquet, 5 row groups: FlightDate date, Carrier string, DepDelay number.",
            ),
            "2017-01-01",
            "2021-12-31",
        ),
    ]
}

fn paths(hits: &[TextHit]) -> Vec<&str> {
    hits.iter().map(|h| h.path.as_str()).collect()
}

fn hit<'a>(hits: &'a [TextHit], path: &str) -> &'a TextHit {
    hits.iter()
        .find(|h| h.path == path)
        .unwrap_or_else(|| panic!("{path} not among {:?}", paths(hits)))
}

fn indexed() -> (tempfile::TempDir, TextIndex) {
    let tmp = tempfile::tempdir().unwrap();
    let mut idx = TextIndex::open(&tmp.path().join("text")).unwrap();
    idx.update(&lake(), &[]).unwrap();
    (tmp, idx)
}

#[test]
fn question_naming_columns_ranks_that_table_first() {
    let (_tmp, idx) = indexed();
    assert_eq!(idx.len().unwrap(), lake().len() as u64);
    let hits = idx
        .search("What is the mean fare of passengers?", 10)
        .unwrap();
    assert_eq!(paths(&hits)[..2], [TITANIC, PRICING], "{hits:?}");
    assert!(hits[0].score > hits[1].score);
    assert!(hits[0].fields.contains(&"columns"), "{hits:?}");
    assert!(hits[0].fields.contains(&"text"), "{hits:?}");
    assert_eq!(hits[1].fields, ["text"]);
}

#[test]
fn path_words_find_abbreviated_file_names() {
    let (_tmp, idx) = indexed();
    let hits = idx.search("GDP per capita", 10).unwrap();
    assert_eq!(paths(&hits)[0], GDP, "{hits:?}");
    // Matched through the split name and path alone: its text never says GDP.
    assert_eq!(hits[0].fields, ["name", "path"]);
    // The README speaks of "per capita" in prose and comes after.
    assert_eq!(paths(&hits)[1], "worldbank/README.md");

    // camelCase and letter–digit splitting, in a query word and in the documents.
    let hits = idx.search("stationId humidity", 3).unwrap();
    assert_eq!(paths(&hits)[0], SENSORS);
    let hits = idx.search("revenue for Q4?", 3).unwrap();
    assert_eq!(paths(&hits)[0], Q4);
    assert_eq!(hits[0].fields, ["name", "columns", "path", "text"]);
    // An identifier finds the file so named and the file with such a key.
    let hits = idx.search("merchant_category_code", 3).unwrap();
    assert_eq!(
        paths(&hits)[0],
        "dabstep/context/merchant_category_codes.csv"
    );
    assert_eq!(hit(&hits, FEES).fields, ["columns"]);
    // Matched whole, a column name scores above its words given apart (the phrase of
    // the split words scores as the words do; the whole-name field adds to it).
    let whole = idx.search("fixed_amount", 3).unwrap();
    let apart = idx.search("fixed amount", 3).unwrap();
    assert_eq!(paths(&whole), [FEES]);
    assert_eq!(paths(&apart), [FEES]);
    assert!(whole[0].score > apart[0].score, "{whole:?} {apart:?}");
}

#[test]
fn a_year_matches_time_coverage() {
    let (_tmp, idx) = indexed();
    // 2019 lies inside the flights' 2017–2021 and is the sensors' only year; no text or
    // path holds the token (the file name has 20190301, one token).
    let hits = idx.search("measurements from 2019", 10).unwrap();
    let mut found = paths(&hits);
    found.sort_unstable();
    assert_eq!(found, [FLIGHTS, SENSORS], "{hits:?}");
    assert!(hits.iter().all(|h| h.fields == ["time"]), "{hits:?}");
    assert!(idx.search("2016", 10).unwrap().is_empty());
    let hits = idx.search("2014", 10).unwrap();
    assert_eq!(paths(&hits), [Q4]);
    assert_eq!(hits[0].fields, ["name", "path", "time"]);
}

#[test]
fn years_of_a_coverage() {
    assert_eq!(
        years(Some("2017-01-01"), Some("2019-12-31")),
        [2017, 2018, 2019]
    );
    assert_eq!(
        years(Some("2019-12-31"), Some("2017-01-01")),
        [2017, 2018, 2019]
    );
    assert_eq!(years(Some("2019-03-01"), None), [2019]);
    assert_eq!(years(Some("1700-01-01"), Some("2000-01-01")), [1700, 2000]);
    assert_eq!(years(Some("circa 1900"), Some("")), Vec::<i32>::new());
    assert_eq!(file_stem("a/b/gdp_pc_ppp.csv"), "gdp_pc_ppp");
    assert_eq!(file_stem("x.tar.gz"), "x.tar");
    assert_eq!(file_stem(".env"), ".env");
}

#[test]
fn update_replaces_and_removes() {
    let (_tmp, mut idx) = indexed();
    let n = idx.len().unwrap();
    let renamed = doc(
        TITANIC,
        "csv",
        &["PassengerId", "boarding_port"],
        &[],
        "CSV, 891 rows.",
    );
    // Given twice in one call: the last document wins, and only one is kept.
    idx.update(&[renamed.clone(), renamed], &[]).unwrap();
    assert_eq!(idx.len().unwrap(), n);
    let hits = idx.search("fare", 10).unwrap();
    assert_eq!(paths(&hits), [PRICING], "the old Fare column is gone");
    let hits = idx.search("boarding port", 10).unwrap();
    assert_eq!(paths(&hits)[0], TITANIC);
    assert_eq!(hit(&hits, TITANIC).fields, ["columns"]);

    idx.update(&[], &[PRICING.to_owned(), "never/indexed.csv".to_owned()])
        .unwrap();
    assert_eq!(idx.len().unwrap(), n - 1);
    assert!(idx.search("pricing fare", 10).unwrap().is_empty());
    // Nothing to do is not an error and changes nothing.
    idx.update(&[], &[]).unwrap();
    assert_eq!(idx.len().unwrap(), n - 1);
}

#[test]
fn reopened_index_finds_committed_documents() {
    let (tmp, idx) = indexed();
    drop(idx);
    let idx = TextIndex::open(&tmp.path().join("text")).unwrap();
    assert_eq!(idx.len().unwrap(), lake().len() as u64);
    let hits = idx.search("GDP per capita", 1).unwrap();
    assert_eq!(paths(&hits), [GDP]);
}

#[test]
fn punctuation_quotes_and_operators_never_fail() {
    let (_tmp, idx) = indexed();
    for q in [
        "",
        "   ",
        "?!.,;:",
        "\"",
        "\"\"\"",
        "'",
        "()[]{}^~*+-\\/|&<>=",
        "NOT",
        "AND OR NOT IN TO",
        "fare:",
        "columns:\"Fare",
        "[1 TO 5}",
        "\u{201c}smart quotes\u{201d}",
    ] {
        assert!(idx.search(q, 10).is_ok(), "query {q:?}");
    }
    assert!(idx.search("?!", 10).unwrap().is_empty());
    // Operators are words in a question: NOT and a leading '-' exclude nothing.
    for q in ["passengers who did NOT survive?", "-survived +passengers"] {
        let hits = idx.search(q, 10).unwrap();
        assert_eq!(paths(&hits)[0], TITANIC, "query {q:?}: {hits:?}");
    }
    assert!(idx.search("fare", 0).unwrap().is_empty());
    assert_eq!(plain_words("a-b: \"NOT\" c_d"), "a b not c_d");
}

#[test]
fn one_writer_at_a_time_and_readers_reload() {
    let (tmp, mut writer) = indexed();
    let dir = tmp.path().join("text");
    let mut other = TextIndex::open(&dir).unwrap();
    // The first index holds the writer lock since its update; the second can read.
    assert_eq!(other.len().unwrap(), lake().len() as u64);
    let err = other.update(&lake()[..1], &[]).unwrap_err();
    assert!(matches!(err, TextIndexError::Locked { .. }), "{err}");
    assert!(err.to_string().contains("wait for it to finish"));

    writer.update(&[], &[GDP.to_owned()]).unwrap();
    assert_eq!(
        other.len().unwrap(),
        lake().len() as u64,
        "not reloaded yet"
    );
    other.reload().unwrap();
    assert_eq!(other.len().unwrap(), lake().len() as u64 - 1);
    // Once the writer is gone, the other index can write.
    drop(writer);
    other.update(&[], &[TITANIC.to_owned()]).unwrap();
    assert_eq!(other.len().unwrap(), lake().len() as u64 - 2);
}

#[test]
fn other_schema_is_refused_with_a_rebuild_hint() {
    let tmp = tempfile::tempdir().unwrap();
    let mut b = Schema::builder();
    b.add_text_field("path", STRING | STORED);
    tantivy::Index::create_in_dir(tmp.path(), b.build()).unwrap();
    let err = TextIndex::open(tmp.path()).err().expect("schema mismatch");
    assert!(
        matches!(err, TextIndexError::SchemaMismatch { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("rebuild"));
}

#[test]
fn name_doc_freq_counts_the_files_of_the_whole_lake_having_a_name() {
    let tmp = tempfile::tempdir().unwrap();
    let mut idx = TextIndex::open(&tmp.path().join("text")).unwrap();
    idx.update(&lake(), &[]).unwrap();
    assert_eq!(idx.name_doc_freq("capture_delay").unwrap(), 1);
    assert_eq!(idx.name_doc_freq("[].capture_delay").unwrap(), 1);
    assert_eq!(idx.name_doc_freq("Revenue").unwrap(), 1);
    assert_eq!(idx.name_doc_freq("no_such_column").unwrap(), 0);
    assert_eq!(idx.name_doc_freq("").unwrap(), 0);
}

#[test]
fn the_flat_query_scores_as_the_parsed_one() {
    // What tantivy's parser makes of the same words over the same boosted fields (a
    // union per word over the fields, nested): the same files, the same scores but for
    // the order of the sums, in the same order.
    let (_tmp, idx) = indexed();
    let mut parser = QueryParser::for_index(
        &idx.index,
        idx.fields.searched().iter().map(|&(f, _, _)| f).collect(),
    );
    for ((field, _, _), &boost) in idx.fields.searched().iter().zip(&idx.boosts) {
        parser.set_field_boost(*field, boost);
    }
    let searcher = idx.reader.searcher();
    let top = |q: &dyn Query| {
        searcher
            .search(q, &TopDocs::with_limit(20).order_by_score())
            .unwrap()
    };
    for question in [
        "What is the mean fare of passengers?",
        "GDP per capita gdp_pc_ppp",
        "stationId humidity 2019",
        "revenue for Q4",
        "merchant_category_code fixed amount",
        "the of and",
        "card scheme GlobalCard csv",
        "Calculate the p-value and decide whether to reject or fail to reject the null hypothesis (that the mean fare of passengers in women's and men's matches is the same) at the 10% significance level. Save the result to \"result.csv\" with the column names exactly \"p_val\"",
        "fare fare fare passengers",
    ] {
        let words = plain_words(question);
        let (parsed, _) = parser.parse_query_lenient(&words);
        let (want, got) = (top(&parsed), top(&BooleanQuery::new(idx.flat_clauses(&words, 1.0).unwrap())));
        assert_eq!(
            got.iter().map(|(_, d)| *d).collect::<Vec<_>>(),
            want.iter().map(|(_, d)| *d).collect::<Vec<_>>(),
            "{question}"
        );
        for ((a, _), (b, _)) in got.iter().zip(&want) {
            assert!(
                (a - b).abs() <= 1e-5 * b.abs().max(1.0),
                "{question}: {a} vs {b}"
            );
        }
        if question != "the of and" {
            assert!(!got.is_empty(), "{question}");
        }
    }
}
