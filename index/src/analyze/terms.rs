//! What a text is about: its most frequent content words, and the terms it defines
//! (`Term: definition` lines, `**Term** – definition`, Markdown definition lists).

use foldhash::HashMap;

/// Common English words that say nothing about a document's subject.
const STOPWORDS: &[&str] = &[
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was",
    "one", "our", "out", "has", "have", "him", "his", "how", "its", "may", "new", "now", "old",
    "see", "two", "who", "did", "get", "use", "that", "this", "with", "from", "they", "will",
    "would", "there", "their", "what", "about", "which", "when", "make", "like", "time", "just",
    "know", "take", "into", "your", "some", "could", "them", "than", "then", "look", "only",
    "come", "over", "also", "back", "after", "first", "well", "even", "want", "because", "these",
    "give", "most", "such", "each", "been", "were", "more", "other", "should", "must", "very",
    "where", "while", "those", "both", "does", "here", "being", "same", "between", "under",
    "through", "before", "without", "within", "using", "used", "based", "per", "via", "yes", "own",
    "off", "too", "why", "any", "few", "many", "much", "http", "https", "www", "com",
];

/// The `n` most frequent content words (≥ 3 letters, not stop words, not numbers), with
/// their counts; ties in alphabetical order.
pub(crate) fn salient(text: &str, n: usize) -> Vec<(String, u64)> {
    let mut counts: HashMap<String, u64> = HashMap::default();
    for w in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')) {
        let w = w.trim_matches('-');
        if w.chars().count() < 3
            || w.chars()
                .all(|c| c.is_ascii_digit() || c == '-' || c == '_')
        {
            continue;
        }
        let lower = w.to_lowercase();
        if STOPWORDS.contains(&lower.as_str()) {
            continue;
        }
        *counts.entry(lower).or_default() += 1;
    }
    let mut v: Vec<(String, u64)> = counts.into_iter().filter(|(_, c)| *c > 1).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(n);
    v
}

/// A defined term at the start of `line`, if the line defines one.
fn defined_term(line: &str) -> Option<String> {
    let l = line
        .trim_start()
        .trim_start_matches(['-', '*', '+'])
        .trim_start();
    // `**Term**: …`, `**Term** – …`, `Term: …`, `Term - …`
    let (term, rest) = if let Some(bold) = l.strip_prefix("**") {
        let end = bold.find("**")?;
        (bold[..end].trim(), bold[end + 2..].trim_start())
    } else {
        let end = l.find([':', '–', '—'])?;
        if l[end..].starts_with("://") {
            return None; // a URL, not a definition
        }
        (l[..end].trim(), &l[end..])
    };
    let rest = rest.trim_start_matches([':', '–', '—', '-', ' ']).trim();
    let term = term.trim_end_matches(':').trim();
    let words = term.split_whitespace().count();
    let plausible = (1..=5).contains(&words)
        && term.chars().count() <= 50
        && term
            .chars()
            .next()
            .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
        && !term.contains(['(', '[', '/', '|', '#'])
        && rest.chars().count() >= 12
        && !term.starts_with("http");
    plausible.then(|| term.to_string())
}

/// The terms a text defines (at most `max`, in order) and how many definitions it has.
pub(crate) fn definitions(text: &str, max: usize) -> (u64, Vec<String>) {
    let mut count = 0;
    let mut terms = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        // Markdown/pandoc definition list: `Term` then `: definition`.
        let term = match lines.get(i + 1) {
            Some(next)
                if next.starts_with(": ") && !line.trim().is_empty() && !line.contains(':') =>
            {
                Some(line.trim().to_string())
            }
            _ => defined_term(line),
        };
        if let Some(t) = term {
            count += 1;
            if terms.len() < max && !terms.contains(&t) {
                terms.push(t);
            }
        }
    }
    (count, terms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn salient_words_skip_stopwords_and_numbers() {
        let t = salient(
            "The fee is charged per transaction. Fees and the fee rate: fee 2024 2024 rate.",
            3,
        );
        assert_eq!(t, [("fee".to_string(), 3), ("rate".to_string(), 2)]);
    }

    #[test]
    fn definitions_in_their_usual_shapes() {
        let text =
            "## Glossary\n- **ACI**: Authorization Characteristics Indicator of a transaction\n\
                    MCC: Merchant Category Code, a four-digit number\n\
                    Chargeback – a reversal of a card payment by the issuer\n\
                    Capture delay\n: the time between authorization and capture\n\
                    note: short\nSee https://example.com: for more information about it\n";
        let (n, terms) = definitions(text, 10);
        assert_eq!(terms, ["ACI", "MCC", "Chargeback", "Capture delay"]);
        assert_eq!(n, 4);
    }
}
