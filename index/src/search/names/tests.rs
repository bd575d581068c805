use super::*;

fn named(query: &str, name: &str) -> bool {
    NameMatcher::new(query).names(name).is_some()
}

fn strength(query: &str, name: &str) -> Option<f64> {
    NameMatcher::new(query).names(name)
}

#[test]
fn abbreviated_names_are_spelled_by_question_words() {
    let q = "Is there a correlation between population and GDP per capita?";
    assert!(named(q, "gdppercap"));
    assert!(named(q, "gdp_pc"));
    assert!(named("GDP per capita in 1952", "gdpPercap_1952"));
    assert!(!named(q, "gdpPercap_1952"));
    assert!(named("handle missing life expectancy values", "lifeexp"));
    assert!(named(
        "the maximum storm category achieved by a storm",
        "max_storm_cat"
    ));
    assert!(named("the average wind speed (WINDSPEED)", "WINDSPEED"));
    assert!(named("average wind speed per month", "WINDSPEED"));
    assert!(named("the recorded damage in USD", "damage_USD"));
    assert!(named("the number of deaths recorded", "No. of deaths"));
    assert!(named(
        "median sold price per square foot",
        "MedianSoldPricePerSqft"
    ));
    assert!(named("Happiness scores of countries", "Happiness Score"));
}

#[test]
fn single_words_need_the_word_up_to_its_stem() {
    assert!(named("mean age of passengers", "Age"));
    assert!(named("distribution of ages", "age"));
    assert!(named("outliers in the happiness scores", "score"));
    assert!(!named("average number of agents talking", "age"));
    assert!(!named("the distribution of fares", "dist"));
    assert!(!named("which country", "count"));
    // Too short to be spelled: only as written, capitals included, and not where
    // a sentence starts.
    assert!(named("the X coordinate", "X"));
    assert!(named("the X-coordinate column", "X"));
    assert!(named("How many rows have an ID?", "ID"));
    assert!(!named("the x coordinate", "X"));
    assert!(!named("the X coordinate", "x"));
    assert!(!named("1. X marks the spot", "X"));
    assert!(!named("A value per row. Is it a sum?", "A"));
    assert!(!named("Then I count the rows", "I"));
}

#[test]
fn a_part_of_an_identifier_is_not_a_name() {
    let q = r#"the mean of the "importance.score" column"#;
    assert!(named(q, "importance.score"));
    assert!(!named(q, "score"));
    assert!(!named(q, "importance"));
    // A sentence's full stop joins nothing.
    assert!(named("Identify outliers in the fare. Then stop", "Fare"));
}

#[test]
fn code_and_longer_spellings_count_more_than_words() {
    assert_eq!(
        strength("the positive_diffsel values", "positive_diffsel"),
        Some(strength::VERBATIM)
    );
    assert_eq!(
        strength("the positive_diffsel values", "Positive_DiffSel"),
        Some(strength::CODE)
    );
    assert_eq!(
        strength("outliers in the SWX column", "SWX"),
        Some(strength::VERBATIM)
    );
    assert_eq!(
        strength("wind speed (WINDSPEED)", "wind_speed"),
        Some(strength::CODE)
    );
    assert_eq!(strength("mean age", "Age"), Some(strength::WORD));
    assert_eq!(strength("missing values", "value"), Some(strength::FORM));
    assert_eq!(strength("the life expectancy", "lifeexp"), Some(1.5));
    assert_eq!(
        strength("gross domestic product per capita", "gdppercap"),
        Some(2.5)
    );
    // "using" is not a form of "useful", though both stem to "use".
    assert_eq!(strength("using the Z-score method", "useful"), None);
}

#[test]
fn runs_of_a_names_words_and_its_numbers_name_it_in_part() {
    let part = |q: &str, name: &str| NameMatcher::new(q).names_part(name);
    let (key, s) = part("the duration of a budget year", "budget_year_start").unwrap();
    assert_eq!(key, "budgetyear");
    // "budget year" spells 10 of the 15 letters, at the strength of two words.
    assert!((s - 1.5 * 10.0 / 15.0).abs() < 1e-9, "{s}");
    // All its words and its number: the whole name, at full strength.
    let q = "GDP per capita in the year 1992 for each country";
    assert_eq!(
        part(q, "gdpPercap_1992"),
        Some(("gdppercap_1992".into(), 1.5))
    );
    // Its words without its number: a part, under the key its words' name has.
    let (key, s) = part(q, "gdpPercap_2007").unwrap();
    assert_eq!(key, "gdppercap");
    assert!(s < 1.5, "{s}");
    // One word of a name is not a part worth counting, nor a whole name.
    assert_eq!(part("the department names", "Department Name"), None);
    assert_eq!(part("the city departments", "dept_group_name"), None);
    assert_eq!(part("the budget year", "budget_year"), None);
    // A one-digit number is said by accident.
    assert_eq!(part("the column names of 3 clusters", "column_3"), None);
    assert_eq!(part("the name and the code", "name_id_code"), None);
}

#[test]
fn files_are_named_by_their_name_or_stem() {
    let mut m = NameMatcher::new("Is the Age column in the Credit.csv file normal?");
    assert_eq!(m.names_file("data/Credit.csv"), Some(strength::FILE));
    assert_eq!(m.names_file("data/credit_cards.csv"), None);
    let mut m = NameMatcher::new("the mean fare of the Titanic passengers");
    assert_eq!(m.names_file("titanic.csv"), Some(strength::WORD));
    assert_eq!(m.names_file("titanic_train.csv"), None);
    assert_eq!(m.names_file("passenger_list.csv"), None);
    let mut m = NameMatcher::new("the description of merchant category code 5812");
    assert!(m.names_file("merchant_category_codes.csv").is_some());
}

#[test]
fn categories_are_named_by_their_words() {
    let m =
        NameMatcher::new("Among the countries in the \"Americas\" region, which has most cases?");
    assert_eq!(m.names_category("Americas"), Some(strength::CATEGORY));
    assert_eq!(m.names_category("Europe"), None);
    let m = NameMatcher::new("fuel use of diesel cars made in South Korea");
    assert!(m.names_category("South Korea").is_some());
    assert!(m.names_category("Korea, South").is_none());
    assert!(m.names_category("diesel").is_some());
    // Numbers and glue words alone are not categories worth matching.
    assert!(NameMatcher::new("in 2019 on the 3rd")
        .names_category("2019")
        .is_none());
    assert!(NameMatcher::new("in the end")
        .names_category("in")
        .is_none());
    assert!(NameMatcher::new("If yes, how many?")
        .names_category("Yes")
        .is_none());
}

#[test]
fn accidental_spellings_do_not_match() {
    assert!(!named("data at the end", "date"));
    assert!(!named("the mean value", "mean_val_total"));
    assert!(!named("of the", "ofthe"));
    assert!(!named("identify and count the outliers", "INTC.O"));
    // A pronoun spells nothing, whatever its case.
    assert!(!named("Station readings for ME", "readme"));
    assert!(!named("read me the readings", "readme"));
    assert!(!named(
        "If so, is it a linear or nonlinear correlation?",
        "IsAlone"
    ));
}

#[test]
fn short_codes_are_named_only_as_written() {
    let m = NameMatcher::new("Station readings for NJ and for Q3");
    assert_eq!(m.names_code("NJ"), Some(strength::CATEGORY));
    assert_eq!(m.names_code("Q3"), Some(strength::CATEGORY));
    assert_eq!(m.names_code("NY"), None);
    // A category names a code only with short codes on.
    assert_eq!(m.names_category("NJ"), None);
    let m = m.with_short_codes(true);
    assert_eq!(m.names_category("NJ"), Some(strength::CATEGORY));
    // Small letters, a sentence's start, or a code's part are not the code.
    assert_eq!(m.names_code("nj"), None);
    assert_eq!(NameMatcher::new("readings in nj").names_code("NJ"), None);
    assert_eq!(NameMatcher::new("ME is a state").names_code("ME"), None);
    assert_eq!(NameMatcher::new("rows of NJ-2 only").names_code("NJ"), None);
    // Longer values are the other matchers' business; one letter is too short.
    assert_eq!(
        NameMatcher::new("cases in USA").names_code("USA"),
        Some(strength::CATEGORY)
    );
    assert_eq!(NameMatcher::new("grade A students").names_code("A"), None);
    assert_eq!(NameMatcher::new("the OHIO file").names_code("OHIO"), None);
}

#[test]
fn plain_words_are_letters_without_humps() {
    for n in ["period", "Value", "TYPE", "file"] {
        assert!(plain_word(n), "{n}");
    }
    for n in [
        "period_days",
        "gdpPercap",
        "col2",
        "No. of deaths",
        "Happiness Score",
        "",
    ] {
        assert!(!plain_word(n), "{n}");
    }
}

#[test]
fn generic_words_are_plain_words_of_the_data_vocabulary() {
    for n in ["value", "Type", "PERIOD", "file"] {
        assert!(generic_word(n), "{n}");
    }
    for n in ["rainfall", "value_usd", "file_name", "portfolio"] {
        assert!(!generic_word(n), "{n}");
    }
}

#[test]
fn names_written_exactly_are_code_or_quoted_as_they_are() {
    let q = "What is the distribution of wind speeds (WINDSPEED)? Use the 'Fare' column and `max_storm_cat`.";
    let names = [
        "WINDSPEED",
        "wind_speed",
        "windspeed",
        "Fare",
        "fare",
        "max_storm_cat",
        "Age",
    ];
    assert_eq!(
        written_exactly(q, names),
        vec!["WINDSPEED", "Fare", "max_storm_cat"]
    );
    // A plain word, or a capital that only begins a sentence, is not written as code.
    assert!(written_exactly("Age of the passengers. Fare paid", ["Age", "Fare"]).is_empty());
    // Right before "column": as written, whole, case included.
    let q = "Identify any outliers in the Fare column, then in Close Price columns.";
    assert_eq!(
        written_exactly(q, ["fare", "Far", "Fare", "Close Price", "Price"]),
        vec!["Fare", "Close Price"]
    );
    assert!(written_exactly("the Fares column; Fare, column", ["Fare"]).is_empty());
    // Lowercase words are words ("the age column" means a column `Age`).
    assert!(written_exactly(
        "handle the age column and the wind speed column",
        ["age", "wind speed"]
    )
    .is_empty());
}

#[test]
fn one_matcher_asked_many_names_answers_each_as_a_fresh_one() {
    // A search asks one matcher about every candidate's names, in any order and some
    // twice: what it remembers of a name (its answer, its stem) must not leak into
    // another's.
    let q = "outliers in the happiness scores and the GDP per capita of each Country in 1992";
    let names = [
        "score",
        "Happiness Score",
        "scored",
        "gdpPercap_1992",
        "gdpPercap_2007",
        "country",
        "Country",
        "count",
        "ID",
        "happiness_rank_score",
        "score",
        "gdp_pc",
    ];
    let mut shared = NameMatcher::new(q);
    for round in 0..2 {
        for name in names.iter().rev().skip(round) {
            assert_eq!(
                shared.names(name),
                NameMatcher::new(q).names(name),
                "{name}"
            );
            assert_eq!(
                shared.names_part(name),
                NameMatcher::new(q).names_part(name),
                "{name}"
            );
        }
    }
    assert_eq!(shared.names("score"), Some(strength::FORM));
    assert!(shared.names("count").is_none());
    assert!(shared.names_part("gdpPercap_1992").is_some());
}

#[test]
fn a_files_words_are_named_without_its_numbers() {
    let mut m = NameMatcher::new("Compare the high school graduation rate of Oregon with Nevada");
    let (key, s) = m.names_file_words("edu/graduation_rates_2022.csv").unwrap();
    assert_eq!(key, "file graduation_rates");
    assert!(s > strength::WORD, "two words named: {s}");
    // Without a number, the name is the whole-name matcher's business.
    assert!(m.names_file_words("edu/graduation_rates.csv").is_none());
    // Every word of the name must be named, not one of them.
    assert!(m
        .names_file_words("edu/graduation_cohorts_2022.csv")
        .is_none());
    assert!(NameMatcher::new("NAEP math grades by state")
        .names_file_words("naep_math_grade8.csv")
        .is_some());
    // Too few letters left to be a name.
    assert!(NameMatcher::new("the q in 2019")
        .names_file_words("q_2019.csv")
        .is_none());
}
