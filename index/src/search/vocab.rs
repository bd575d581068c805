//! Vocabulary: the words a question and a file use for one thing differ (`Jun` for
//! June, rainfall for precipitation, `CO2` for carbon dioxide). A question's words are
//! expanded with the other spellings of their group, and the expansions join the
//! full-text query at a lower boost (`RankingConfig::synonyms`, `LAKESTAR_W_SYNONYMS`,
//! 0 switches it off). The groups are symmetric, so expanding the question alone finds
//! what expanding every document would, without re-indexing the lake. A hit that matches
//! an expansion and not the word asked says so (`Reason::Synonym`).
//!
//! The groups are written by hand: month and unit abbreviations, chemical formulas and
//! the synonyms data journalism meets; no maintained crate carries such a list for data
//! vocabulary (WordNet-sized thesauri expand "rate" to a hundred words and drown BM25).

/// Groups of words that name one thing; a member of several words is a phrase.
const GROUPS: &[&[&str]] = &[
    &["jan", "january"],
    &["feb", "february"],
    &["mar", "march"],
    &["apr", "april"],
    &["jun", "june"],
    &["jul", "july"],
    &["aug", "august"],
    &["sep", "sept", "september"],
    &["oct", "october"],
    &["nov", "november"],
    &["dec", "december"],
    &["precipitation", "rainfall", "rain"],
    &["temperature", "temp"],
    &["humidity", "rh"],
    &["population", "inhabitants", "residents"],
    &["doctors", "physicians"],
    &["cars", "vehicles", "automobiles"],
    &["crime", "offences", "offenses"],
    &["salary", "salaries", "wages", "earnings"],
    &["unemployment", "jobless"],
    &["deaths", "mortality", "fatalities"],
    &["births", "natality"],
    &["revenue", "turnover"],
    &["expenditure", "spending", "expenses"],
    &["children", "kids"],
    &["pupils", "students"],
    &["houses", "dwellings", "housing"],
    &["elevation", "altitude"],
    &["latitude", "lat"],
    &["longitude", "lon", "lng"],
    &["judgment", "judgement", "ruling"],
    &["attorney", "lawyer"],
    &["gdp", "gross domestic product"],
    &["co2", "carbon dioxide"],
    &["no2", "nitrogen dioxide"],
    &["so2", "sulfur dioxide", "sulphur dioxide"],
    &["o3", "ozone"],
    &["ch4", "methane"],
    &["celsius", "degc"],
    &["fahrenheit", "degf"],
    &["km", "kilometres", "kilometers"],
    &["kg", "kilograms"],
    &["mm", "millimetres", "millimeters"],
    &["kwh", "kilowatt hours"],
    &["mw", "megawatts"],
    &["ppm", "parts per million"],
];

/// One expansion: a word or phrase of the question and another spelling of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expansion {
    /// As the question says it (lowercase).
    pub asked: String,
    /// The other spelling, added to the query.
    pub also: String,
}

/// The expansions of `query`: for each group member it says (a word, or a phrase of
/// consecutive words), the group's other members it does not say.
pub fn expansions(query: &str) -> Vec<Expansion> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let says = |member: &str| {
        let parts: Vec<&str> = member.split(' ').collect();
        words.windows(parts.len()).any(|w| w == parts.as_slice())
    };
    let mut out: Vec<Expansion> = Vec::new();
    for group in GROUPS {
        let Some(asked) = group.iter().find(|m| says(m)) else {
            continue;
        };
        for also in group.iter().filter(|m| !says(m)) {
            if !out.iter().any(|e| e.also == *also) {
                out.push(Expansion {
                    asked: asked.to_string(),
                    also: also.to_string(),
                });
            }
        }
    }
    out
}

/// The words the expansions add to the full-text query.
pub fn added_words(expansions: &[Expansion]) -> String {
    expansions
        .iter()
        .map(|e| e.also.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn also(q: &str) -> Vec<String> {
        expansions(q).into_iter().map(|e| e.also).collect()
    }

    #[test]
    fn abbreviations_synonyms_and_formulas_expand_both_ways() {
        assert_eq!(
            also("rainfall in Jun 2019"),
            ["june", "precipitation", "rain"]
        );
        assert_eq!(also("June precipitation"), ["jun", "rainfall", "rain"]);
        assert_eq!(also("CO2 emissions"), ["carbon dioxide"]);
        assert_eq!(also("carbon dioxide emissions"), ["co2"]);
        // Every spelling said: nothing to add; nothing of a group said: nothing.
        assert!(also("Sept or September").contains(&"sep".to_string()));
        assert!(also("jun and june").is_empty());
        assert!(also("passengers by class").is_empty());
    }

    #[test]
    fn a_phrase_member_matches_only_its_consecutive_words() {
        assert_eq!(also("gross domestic product per head"), ["gdp"]);
        assert!(also("gross margin of the domestic product").is_empty());
    }
}
