use super::read::unwrap_numpy;
use super::*;

fn names(qs: &[Quantity]) -> Vec<&str> {
    qs.iter().map(|q| q.name.as_str()).collect()
}

#[test]
fn a_value_is_read_after_the_first_separator_and_a_number_from_words_around_it() {
    // As the local model's script printed it.
    let q = requested_in(
        "x",
        "@strongest_correlation_pair[pair] @strongest_correlation_coefficient[coefficient]",
    );
    let out = "Mean age: 29.7\nStrongest positive correlation: Age and Fare (r=0.41)";
    assert_eq!(
        value_for(out, &q[0]).as_deref(),
        Some("Age and Fare (r=0.41)")
    );
    assert_eq!(value_for(out, &q[1]).as_deref(), Some("0.41"));
    let time = requested_in("x", "@start_time[t]");
    assert_eq!(
        value_for("start time: 12:30", &time[0]).as_deref(),
        Some("12:30")
    );
}

#[test]
fn values_are_read_from_numpy_scalars_and_result_objects() {
    // As the local model's script printed them.
    let qs = requested_in(
        "", "@shapiro_w[test_statistic], @p_value[p_value], @skewness[skewness_value], @kurtosis[kurtosis_value]");
    let out = "<mean>: 21144.07608695652\n<shapiro_w>: ShapiroResult(statistic=np.float64(0.9543095491220899), pvalue=np.float64(0.0027291466836339875))\n<skewness>: 0.1520317726967334\n<kurtosis>: -1.1336054960924962\n";
    assert!(missing(out, &qs).is_empty(), "{:?}", missing(out, &qs));
    let get = |n: &str| value_for(out, qs.iter().find(|q| q.name == n).unwrap());
    assert_eq!(get("shapiro_w").as_deref(), Some("0.9543095491220899"));
    assert_eq!(get("p_value").as_deref(), Some("0.0027291466836339875"));
    let q = &requested_in("", "@p_value_male[p], @slope[s]");
    let out = "fit: LinregressResult(slope=np.float64(2.5), intercept=1.0, rvalue=0.9, pvalue=0.01, stderr=0.1)\ncorr male: (np.float64(0.41), np.float64(0.003))";
    assert_eq!(value_for(out, &q[1]).as_deref(), Some("2.5"));
    assert_eq!(value_for(out, &q[0]).as_deref(), Some("0.01"));
    assert_eq!(
        unwrap_numpy(out).lines().nth(1),
        Some("corr male: (0.41, 0.003)")
    );
    // Two tests printed and nothing labels the p-value asked: which one is not
    // guessed.
    let two = "a: TtestResult(statistic=1.0, pvalue=0.2, df=10.0)\nb: TtestResult(statistic=3.0, pvalue=0.01, df=10.0)";
    assert_eq!(value_for(two, &requested_in("", "@p_value[p]")[0]), None);
}

#[test]
fn the_final_answer_keeps_the_verified_numbers() {
    let qs = requested_in(
        "",
        "@shapiro_w[w], @p_value[p], @skewness[s], @normality[Normal or Not Normal]",
    );
    let verified = "shapiro_w: 0.9543095491220899\np_value: 0.0027291466836339875\nskewness: 0.1520317726967334\nnormality: Normal";
    // As the local finalyzer printed it: two numbers in one
    // bracket; and a skewness computed anew, differently.
    let (a, changed) = keep_verified(
        "@shapiro_w[0.9543 0.0027], @p_value[0.0027], @skewness[0.2001], @normality[Not Normal]",
        verified,
        &qs,
    );
    assert_eq!(
        a,
        "@shapiro_w[0.9543], @p_value[0.0027], @skewness[0.1520], @normality[Not Normal]"
    );
    assert_eq!(changed, ["shapiro_w", "skewness"]);
    // Rounded as asked, scientific, or not given by the output: kept.
    let (a, changed) = keep_verified(
        "@shapiro_w[0.95], @p_value[2.729e-03], @skewness[0.15]",
        "shapiro_w: 0.9543\np_value: 0.0027291",
        &qs,
    );
    assert_eq!(a, "@shapiro_w[0.95], @p_value[2.729e-03], @skewness[0.15]");
    assert!(changed.is_empty());
}

#[test]
fn a_label_lacking_the_word_that_tells_two_quantities_apart_is_neither() {
    // As the local model printed them: the weekend mean was
    // read from the weekday line, which lacks only `weekend`.
    let qs = requested_in(
        "",
        "@weekday_mean_price[a] @weekend_mean_price[b] @clean_entries_count[c]",
    );
    let out = "<Mean Opening Price (Weekdays)>: 571.875\n<Mean Opening Price (Weekends)>: nan\nClean entries: 1153";
    assert_eq!(value_for(out, &qs[0]).as_deref(), Some("571.875"));
    assert_eq!(value_for(out, &qs[1]).as_deref(), Some("nan"));
    assert_eq!(missing(out, &qs), ["weekend_mean_price"]);
    let only_weekday = "<Mean Opening Price (Weekdays)>: 571.875";
    assert_eq!(value_for(only_weekday, &qs[1]), None);
    // A quantity sharing no word with another keeps the one-word leeway.
    assert_eq!(value_for(out, &qs[2]).as_deref(), Some("1153"));
}

#[test]
fn a_label_naming_what_the_placeholder_says_it_is_of_comes_first() {
    // As the local model printed them: the mean of another
    // column came first and was read for `@mean_value[mean_MedianHouseValue]`.
    let qs = requested_in(
        "", "@mean_value[mean_MedianHouseValue]\n@standard_deviation[stddev_MedianHouseValue]\n@pearson_coefficient[correlation_coefficient]");
    let out = "<Mean of MedInc>: 4.0493\n<Standard Deviation of MedInc>: 2.1877\n<Pearson Correlation Coefficient>: 0.0382\n<Mean of MedianHouseValue>: 2.1226\n<Standard Deviation of MedianHouseValue>: 1.221";
    assert_eq!(value_for(out, &qs[0]).as_deref(), Some("2.1226"));
    assert_eq!(value_for(out, &qs[1]).as_deref(), Some("1.221"));
    assert_eq!(value_for(out, &qs[2]).as_deref(), Some("0.0382"));
    assert_eq!(
        from_output(out, &qs).as_deref(),
        Some("@mean_value[2.1226], @standard_deviation[1.221], @pearson_coefficient[0.0382]")
    );
    // No line names it: a label naming another thing is not its value, and it is
    // missing (the loop goes on); a label naming nothing else is.
    let other = "<Mean of MedInc>: 4.0493\n<Pearson Correlation Coefficient>: 0.0382";
    assert_eq!(value_for(other, &qs[0]), None);
    assert_eq!(missing(other, &qs), ["mean_value", "standard_deviation"]);
    assert_eq!(value_for("Mean: 2.1226", &qs[0]).as_deref(), Some("2.1226"));
    assert_eq!(
        value_for("mean value = 2.1226", &qs[0]).as_deref(),
        Some("2.1226")
    );
    // A placeholder of statistic and generic words names nothing to prefer.
    let r = requested_in("", "@r[correlation_value] @fare_outliers[outliers_list]");
    assert!(r.iter().all(|q| q.subject.is_empty()), "{r:?}");
}

#[test]
fn stddev_is_labelled_by_standard_deviation() {
    // As the local model's script printed it.
    let q = requested_in("x", "@mean_ratio[m], @stddev_ratio[s]");
    let out = "<mean ratio>: 10419870478751.084\n<standard deviation ratio>: 3593655649585.2207";
    assert_eq!(value_for(out, &q[1]).as_deref(), Some("3593655649585.2207"));
    assert!(missing(out, &q).is_empty());
}

#[test]
fn a_numeric_quantity_takes_no_sentence_with_a_number_in_it() {
    // As the local model's script printed it.
    let q = requested_in(
        "Are the MEANPOT values normally distributed?", "@normality_test_result[Normal or Not Normal] @p_value[The p-value, rounded to three decimal places]");
    let echoed = "Mean POT: 1571.7\nShapiro-Wilk Test Result: Normal (p-value > 0.05) if p-value is greater than 0.05, Not Normal otherwise";
    assert_eq!(value_for(echoed, &q[1]), None);
    assert_eq!(missing(echoed, &q), ["p_value"]);
    for (out, v) in [
        ("p-value: 0.0547", "0.0547"),
        ("p value = 1.2e-10 (two-sided)", "1.2e-10 (two-sided)"),
        ("p_value: [0.01, 0.02]", "[0.01, 0.02]"),
        ("p-value: nan", "nan"),
    ] {
        assert_eq!(value_for(out, &q[1]).as_deref(), Some(v), "{out}");
    }
}

#[test]
fn a_step_mentions_a_quantity_by_name_label_or_meaning() {
    // A DABench question's format.
    let q = requested_in(
        "Preprocess the dataset.", "Return 4 values: @clean_entries[Number of entries after cleaning duplicates], @mean_USFLUX[Mean of the USFLUX column after filling missing values, rounded to two decimal places], @norm_TOTUSJZ[value].");
    assert_eq!(names(&q), ["clean_entries", "mean_USFLUX", "norm_TOTUSJZ"]);
    assert_eq!(
        q[0].meaning.as_deref(),
        Some("Number of entries after cleaning duplicates")
    );
    assert_eq!(q[2].meaning, None, "a placeholder is no meaning");
    let drifted = "Compute the mean of the `MEANGAM` column and print it.";
    assert!(q.iter().all(|q| !q.mentioned_in(drifted)));
    assert!(q[0].mentioned_in("Print clean_entries after dropping duplicate rows."));
    assert!(q[0].mentioned_in("Count the entries after cleaning the duplicates."));
    assert!(q[1].mentioned_in("Fill the missing USFLUX values and print the mean USFLUX."));
    assert!(q[2].mentioned_in("Min-max normalize TOTUSJZ and print norm TOTUSJZ."));
}

#[test]
fn quantities_come_from_the_format_or_the_named_statistics() {
    let q = requested_in(
        "What is the mean fare? Drop outliers by the IQR rule.", "@mean_fare[mean], @p_value[p] where mean_fare is rounded to 2 decimals. Also @mean_fare[x].");
    assert_eq!(names(&q), ["mean_fare", "p_value"]);
    assert!(q.iter().all(|q| q.formatted));
    let q = requested("What is the median and the standard deviation of age?", &[]);
    assert_eq!(names(&q), ["median", "standard deviation"]);
    // Nothing the reader can name: nothing required.
    assert!(requested("How much did the north region sell?", &[]).is_empty());
    // An e-mail address is not a format.
    assert!(requested("Mail me at a@b.c", &[]).is_empty());
    // Instructions that write the form itself name no quantity.
    let q = requested_in("", "Answer as @name[...] pairs:\n@mean_fare[m]");
    assert_eq!(names(&q), ["mean_fare"]);
}

#[test]
fn a_value_must_be_labelled_and_not_a_dump() {
    let q = &requested_in("", "@mean_fare[m] @p_value[p]");
    assert_eq!(
        value_for("Average fare: 32.20", &q[0]).as_deref(),
        Some("32.20")
    );
    assert_eq!(
        value_for("mean_fare = 32.2\n", &q[0]).as_deref(),
        Some("32.2")
    );
    assert_eq!(
        value_for("@mean_fare[32.2]", &q[0]).as_deref(),
        Some("32.2")
    );
    assert_eq!(
        value_for("Mean of Fare:\n32.2", &q[0]).as_deref(),
        Some("32.2")
    );
    assert_eq!(value_for("P-value: 0.03", &q[1]).as_deref(), Some("0.03"));
    // Loading the data and printing the column names no mean.
    let load = "Fare column loaded: 891 rows\n0    7.25\n1   71.28\nName: Fare, dtype: float64";
    assert_eq!(value_for(load, &q[0]), None);
    assert_eq!(missing(load, q), ["mean_fare", "p_value"]);
    let stats = requested("What is the mean close price?", &[]);
    assert_eq!(missing("mean close: 12.5", &stats), Vec::<String>::new());
    assert_eq!(missing("[ 797171  500223  1 2 ]", &stats), ["mean"]);
    assert!(missing("12.5", &stats).is_empty());
    let q = &requested_in("", "@relationship_type[type] @mean_sepal_petal_ratio[r]");
    assert_eq!(
        value_for("Relationship: linear", &q[0]).as_deref(),
        Some("linear")
    );
    assert_eq!(
        value_for("sepal/petal ratio: 1.9", &q[1]).as_deref(),
        Some("1.9")
    );
    assert_eq!(value_for("mean sepal length: 5.8", &q[1]), None);
}

#[test]
fn without_named_quantities_an_output_needs_one_labelled_value() {
    assert!(missing("north total 15", &[]).is_empty());
    assert!(missing("35", &[]).is_empty());
    let head = "   region  amount\n0   north      10\n1   south      20\n2   north       5";
    assert_eq!(missing(head, &[]).len(), 1);
    assert_eq!(missing("", &[]).len(), 1);
}

#[test]
fn dumps_are_recognized() {
    for d in [
        "[ 797171  500223  133124 ... 12 ]",
        "0    a\n1    b\nName: city, dtype: object",
        "<ArrowStringArray>\n['a', 'b']\nLength: 2, dtype: string",
        "array([1, 2, 3])",
        "[1.5 2.5 3.5 4.5]",
    ] {
        assert!(dump_reason(d, false).is_some(), "{d}");
    }
    let long = (0..30)
        .map(|i| format!("row {i}"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(dump_reason(&long, true).is_some());
    assert!(dump_reason(&long, false).is_none());
    for ok in ["15", "@mean[3.2], @max[7]", "[1, 2, 3, 4, 5]", "north: 15"] {
        assert_eq!(dump_reason(ok, true), None, "{ok}");
    }
}

#[test]
fn a_number_asked_is_not_read_from_a_word_or_a_table_header() {
    let q = requested_in(
        "",
        "@no_of_countries_with_outliers[n], @mean_no_of_deaths[m], @country_with_max_deaths[c]",
    );
    let numeric: Vec<bool> = q.iter().map(|q| q.numeric).collect();
    assert_eq!(numeric, [true, true, false]);
    // A printed frame: its header names the columns, its rows hold no labelled value.
    let head = "       Country  Year  ...  No. of deaths_max   WHO Region\n\
                0  Afghanistan  2017  ...              510.0  Eastern Mediterranean\n\
                1      Algeria  2017  ...                NaN                 Africa\n";
    assert_eq!(from_output(head, &q), None);
    assert_eq!(value_for("mean no of deaths: Country", &q[1]), None);
    assert_eq!(
        value_for("mean no of deaths: Country\nmean no of deaths: 12.5", &q[1]).as_deref(),
        Some("12.5")
    );
    // A thing's name may be a word.
    assert_eq!(
        value_for("country with max deaths: Nigeria", &q[2]).as_deref(),
        Some("Nigeria")
    );
    assert_eq!(
        value_for("@mean_no_of_deaths[nan]", &q[1]).as_deref(),
        Some("nan")
    );
    // Read, but no answer: the loop must go on.
    assert_eq!(
        missing("mean no of deaths: nan", &q[1..2]),
        ["mean_no_of_deaths"]
    );
}

#[test]
fn answers_are_put_in_the_format_and_read_from_outputs() {
    let q = requested_in("", "@mean_fare[m], @max_age[a]");
    assert_eq!(
        in_format("Mean fare: 32.2\nMax age: 80", &q).as_deref(),
        Some("@mean_fare[32.2], @max_age[80]")
    );
    assert_eq!(
        in_format("@mean_fare[32.2] @max_age[80]", &q).as_deref(),
        Some("@mean_fare[32.2] @max_age[80]")
    );
    assert_eq!(in_format("32.2", &q), None);
    let out = "rows 891\nmean fare 32.2\nName: Age, dtype: float64\nmaximum age: 80";
    assert_eq!(
        from_output(out, &q).as_deref(),
        Some("@mean_fare[32.2], @max_age[80]")
    );
    let stats = requested("What is the median age?", &[]);
    assert_eq!(
        from_output("rows 891\nmedian age: 28\nmean age: 29.7", &stats).as_deref(),
        Some("median: 28")
    );
    assert_eq!(
        from_output("rows 3\nnorth total 15", &[]).as_deref(),
        Some("rows 3\nnorth total 15")
    );
    assert_eq!(from_output("", &[]), None);
}

#[test]
fn constraints_are_the_sentences_after_constraints_or_the_statements_of_the_question() {
    let q = "2. What is the maximum sustained wind speed during the storm with the highest category?\n\nConstraints:\nFirstly, identify the storm with the highest maximum storm category, neglecting any ties. If there are multiple storms with the same category, choose the one that appears first. Then find the maximum sustained wind speed of this storm.";
    assert_eq!(
        constraints(q),
        vec![
            "Firstly, identify the storm with the highest maximum storm category, neglecting any ties.",
            "If there are multiple storms with the same category, choose the one that appears first.",
            "Then find the maximum sustained wind speed of this storm.",
        ]
    );
    // Without a constraints part: the question's statements, not its questions; decimals
    // and abbreviations inside a sentence do not end it.
    let plain = "What is the mean fare? Exclude fares above 0.95 of the range, e.g. outliers. Use 2 decimals.";
    assert_eq!(
        constraints(plain),
        vec![
            "Exclude fares above 0.95 of the range, e.g. outliers.",
            "Use 2 decimals."
        ]
    );
    assert!(constraints("What is the mean fare?").is_empty());
    // A format's lead-in and template lines are no constraints (DA-Code's di-text-001).
    let template = "Fill missing values with the mean, then find the densest country. Please output the answers in JSON format by filling in:\n\"highest country\": [...],\n\"lowest country\": [...]";
    assert_eq!(
        constraints(template),
        vec!["Fill missing values with the mean, then find the densest country."]
    );
}

#[test]
fn a_filled_answer_may_only_use_numbers_printed_beside_its_quantity() {
    let qs = requested_in(
        "x", "@mean_wind_pre[v] @mean_atmos_temp_pre[v] @rows[v] @normal[v] @outliers_count[v] @mean_wind_post[v]");
    let out = "<mean of WINDSPEED>: 5.9788860230901495\n<mean of AT>: np.float64(52.4698870611343)\nrows: 8736\n<IQR>: 0.0";
    assert!(filled_from_printed(
        "@mean_wind_pre[5.98], @mean_atmos_temp_pre[52.47], @rows[8736], @normal[no]",
        out,
        &qs
    ));
    // An invented value, or one rounded wrongly, is refused.
    assert!(!filled_from_printed("@mean_wind_post[5.85]", out, &qs));
    assert!(!filled_from_printed("@mean_wind_pre[5.97]", out, &qs));
    // A printed number from a line that says nothing of the quantity is refused too
    // (the IQR's 0.0 given as the outlier count).
    assert!(!filled_from_printed("@outliers_count[0]", out, &qs));
}

#[test]
fn a_printed_dict_is_read_entry_by_entry() {
    // As the local model's script printed it.
    let qs = requested_in("", "@p_value[p_value] @significance[Yes or No]");
    let out = "{'p_value': np.float64(0.0), 'significance': 'Yes'}\n";
    let get = |n: &str| value_for(out, qs.iter().find(|q| q.name == n).unwrap());
    assert_eq!(get("p_value").as_deref(), Some("0.0"));
    assert_eq!(get("significance").as_deref(), Some("Yes"));
    assert!(missing(out, &qs).is_empty(), "{:?}", missing(out, &qs));
    // JSON, nested values and commas inside strings and brackets.
    let out = r#"{"mean": 2.5, "groups": {"a": 1, "b": 2}, "pair": "Age, Fare", "xs": [1, 2]}"#;
    let qs = requested_in("", "@mean[m] @pair[p] @xs[x]");
    assert_eq!(value_for(out, &qs[0]).as_deref(), Some("2.5"));
    assert_eq!(value_for(out, &qs[1]).as_deref(), Some("Age, Fare"));
    assert_eq!(value_for(out, &qs[2]).as_deref(), Some("[1, 2]"));
    // Not a dict: a set of numbers, a brace in text, an unbalanced line.
    for line in ["{1, 2, 3}", "{ not: quoted }", "{'a': (1, 2}"] {
        assert!(super::read::readable(line).lines().eq([line]), "{line}");
    }
}

#[test]
fn a_line_of_labelled_pairs_is_read_pair_by_pair_and_a_choice_must_be_one_of_its_words() {
    // As the local model's script printed it.
    let qs = requested_in(
        "", "@normality_test_result[A string that should be either \"Normal\" or \"Not Normal\"] @p_value[The Shapiro-Wilk test p-value, rounded to three decimal places]");
    assert_eq!(qs[0].choices, ["Normal", "Not Normal"]);
    assert!(!qs[0].numeric && qs[1].choices.is_empty());
    let out = "<Mean of MEANPOT>: 1571.7293560277537\n<Shapiro-Wilk Test of Normality>: Statistic: 0.9825875611212278, p-value: 1.5729803084004681e-10\n";
    assert_eq!(
        value_for(out, &qs[1]).as_deref(),
        Some("1.5729803084004681e-10")
    );
    // The statistic under a label naming normality is no choice of the format's words.
    assert_eq!(value_for(out, &qs[0]), None);
    assert_eq!(missing(out, &qs), ["normality_test_result"]);
    let done = format!("{out}normality_test_result: Not Normal\n");
    assert!(missing(&done, &qs).is_empty());
    assert_eq!(value_for(&done, &qs[0]).as_deref(), Some("Not Normal"));
    // Pairs without an outer label; a list of words after a label is no pairs.
    let q = requested_in("", "@mean[m] @median[md]");
    assert!(missing("Mean: 5.5, Median: 3", &q).is_empty());
    assert_eq!(
        value_for("Mean: 5.5, Median: 3", &q[1]).as_deref(),
        Some("3")
    );
    let cols = requested_in("", "@columns[list]");
    assert_eq!(
        value_for("Columns with missing values: Age, Cabin", &cols[0]).as_deref(),
        Some("Age, Cabin")
    );
    // Choices: two quoted words at least, none with digits.
    let c = |f: &str| requested_in("", f)[0].choices.clone();
    assert_eq!(c("@is_normal['True' or 'False']"), ["True", "False"]);
    assert!(c("@name[\"Fare\"]").is_empty());
    assert!(c("@year[\"2019\" or \"2020\"]").is_empty());
}

#[test]
fn a_label_may_leave_out_the_subject_every_requested_quantity_shares() {
    // The values printed under the statistic alone.
    let q = requested_in(
        "Calculate the mean and standard deviation of the \"importance.score\" column.", "@importance_score_mean[mean] @importance_score_std[std_dev] where \"mean\" and \"std_dev\" are non-negative numbers rounded to two decimal places.");
    let out = "<mean>: 0.00\n<standard deviation>: 0.01\n<mean with correct format>: 0.00\n";
    assert_eq!(value_for(out, &q[0]).as_deref(), Some("0.00"));
    assert_eq!(value_for(out, &q[1]).as_deref(), Some("0.01"));
    assert_eq!(
        from_output(out, &q).as_deref(),
        Some("@importance_score_mean[0.00], @importance_score_std[0.01]")
    );
    // A label naming another thing is not the shared subject left out.
    assert_eq!(value_for("Mean of MedInc: 3.87", &q[0]), None);
    // The words that tell the quantities apart must be there.
    let q = requested_in("", "@weekday_mean_price[a] @weekend_mean_price[b]");
    assert_eq!(value_for("mean price: 5.0", &q[0]), None);
    // A quantity asked alone shares nothing: its label still needs all its words.
    let q = requested_in("", "@mean_fare[m]");
    assert_eq!(value_for("mean: 32.2", &q[0]), None);
}

#[test]
fn a_label_over_a_printed_series_gives_no_value() {
    // A column divided where the mean of the ratio was asked.
    let q = requested_in("", "@mean_ratio[mean] @stddev_ratio[std]");
    let out = "<mean of TOTUSJZ>: 10419870478751.084\n<mean of ratio>: 0       6.839618e+09\n1       8.154684e+09\n2       8.252056e+09\n            ...     \nName: TOTUSJZ, Length: 1153, dtype: float64\n<standard deviation of ratio>: 969133356.79\n";
    assert_eq!(value_for(out, &q[0]), None);
    assert_eq!(value_for(out, &q[1]).as_deref(), Some("969133356.79"));
    assert_eq!(missing(out, &q), ["mean_ratio"]);
}

#[test]
fn with_and_without_label_different_quantities() {
    // `with` is generic, but not beside a `without`.
    let q = requested_in(
        "",
        "@mean_deaths_with_outliers[a] @mean_deaths_without_outliers[b]",
    );
    let out = "mean deaths with outliers: 10149.43\n";
    assert_eq!(value_for(out, &q[0]).as_deref(), Some("10149.43"));
    assert_eq!(value_for(out, &q[1]), None);
    let out = "mean deaths without outliers: 5949.08\n";
    assert_eq!(value_for(out, &q[1]).as_deref(), Some("5949.08"));
    assert_eq!(value_for(out, &q[0]), None);
}
