use super::*;

fn names(qs: &[Quantity]) -> Vec<&str> {
    qs.iter().map(|q| q.name.as_str()).collect()
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
    assert!(crate::bench::dabench::answer_names("Mail me at a@b.c").is_empty());
    // Instructions that write the form itself name no quantity.
    let q = requested_in("", "Answer as @name[...] pairs:\n@mean_fare[m]");
    assert_eq!(names(&q), ["mean_fare"]);
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
fn with_and_without_name_different_quantities() {
    // `with` is generic, but not beside a `without`.
    let q = requested_in(
        "",
        "@mean_deaths_with_outliers[a] @mean_deaths_without_outliers[b]",
    );
    assert!(q[0].mentioned_in("Print the mean deaths with outliers."));
    assert!(!q[1].mentioned_in("Print the mean deaths with outliers."));
    assert!(q[1].mentioned_in("Print the mean deaths without outliers."));
}

#[test]
fn wanted_names_are_identifiers_with_what_they_are() {
    let w: Wanted = "mean_fare=the mean fare of 1st class".parse().unwrap();
    assert_eq!(w.name, "mean_fare");
    assert_eq!(w.about.as_deref(), Some("the mean fare of 1st class"));
    assert_eq!("n".parse::<Wanted>().unwrap().about, None);
    for bad in ["", "two words", "a\"b", &"x".repeat(MAX_WANTED_NAME + 1)] {
        let e = bad.parse::<Wanted>().unwrap_err();
        assert!(e.contains("not an answer name"), "{e}");
    }
}
