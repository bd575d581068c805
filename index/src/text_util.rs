//! The crate's one identifier splitter and its one way of cutting text to a length, shared
//! by the analyzers, the search side and the embedders. It depends on nothing else in the
//! crate, so every layer can use it.
//!
//! Their outputs are stored: cut values are part of content-addressed descriptions (under
//! their analyzer's version), split words are part of the text index's documents and of
//! the hash embedder's vectors. Changing what a function here returns for some input means
//! bumping those versions (`Analyzer::version`, `sync::SEARCH_DOCS`, the hash scheme).

/// Calls `emit(from, to)` with the byte range of every word of `text`, in order. Words are
/// runs of letters and digits. With `split`, a run is also cut at camelCase humps
/// (`stationReadings` → `station` `Readings`), at the end of an acronym (`HTMLTable` →
/// `HTML` `Table`) and between letters and digits (`pm25` → `pm` `25`); without it, `_`
/// joins a run and runs are kept whole (`gdp_pc_ppp`).
pub fn word_ranges(text: &str, split: bool, emit: &mut dyn FnMut(usize, usize)) {
    let in_word = |c: char| c.is_alphanumeric() || (!split && c == '_');
    // The boundary rule looks one character ahead.
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut start: Option<usize> = None;
    for (i, &(offset, c)) in chars.iter().enumerate() {
        if !in_word(c) {
            if let Some(from) = start.take() {
                emit(from, offset);
            }
            continue;
        }
        match start {
            None => start = Some(offset),
            Some(from) if split => {
                let prev = chars[i - 1].1;
                let next = chars.get(i + 1).map(|&(_, c)| c);
                if is_boundary(prev, c, next) {
                    emit(from, offset);
                    start = Some(offset);
                }
            }
            Some(_) => {}
        }
    }
    if let Some(from) = start {
        emit(from, text.len());
    }
}

/// Whether a word boundary falls between `prev` and `c` (both letters or digits), `next`
/// being the character after `c`.
fn is_boundary(prev: char, c: char, next: Option<char>) -> bool {
    // stationReadings: a hump.
    (prev.is_lowercase() && c.is_uppercase())
        // HTMLTable: the last capital of an acronym starts the next word.
        || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase))
        // readings2019, 2014q4.
        || (prev.is_numeric() != c.is_numeric())
}

/// The words of an identifier, as written (`budget_year_start`, `gdpPercap_1992`,
/// `HTMLTable` → `budget` `year` `start`, `gdp` `Percap` `1992`, `HTML` `Table`).
pub fn split_identifier(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    word_ranges(text, true, &mut |from, to| out.push(&text[from..to]));
    out
}

/// The words of [`split_identifier`], lowercased character by character (a final `Σ` is
/// `σ`, not `ς` as `str::to_lowercase` would make it): how the hash embedder has always
/// read text, and its vectors are pinned.
pub fn lowercase_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    word_ranges(text, true, &mut |from, to| {
        out.push(
            text[from..to]
                .chars()
                .flat_map(char::to_lowercase)
                .collect(),
        );
    });
    out
}

/// `s` cut to at most `n` characters, an ellipsis (one of the `n`) marking the cut.
pub fn cut_chars(s: &str, n: usize) -> String {
    ellipsize(s, n, n.saturating_sub(1))
}

/// The first `n` characters of `s`, an ellipsis after them when more were left out: at
/// most `n + 1` characters. Unlike [`cut_chars`], a text of exactly `n + 1` characters
/// loses its last one to the ellipsis; the table analyzers (SQLite and Parquet cells,
/// NetCDF text attributes) have always cut this way, and keeping it keeps their stored
/// descriptions unchanged.
pub fn take_chars(s: &str, n: usize) -> String {
    ellipsize(s, n, n)
}

/// `s` whole when it has at most `limit` characters, else its first `keep` and `…`.
fn ellipsize(s: &str, limit: usize, keep: usize) -> String {
    // Characters are never more than bytes: short texts need no counting.
    if s.len() <= limit || s.char_indices().nth(limit).is_none() {
        return s.to_string();
    }
    let end = s.char_indices().nth(keep).map_or(s.len(), |(i, _)| i);
    let mut t = String::with_capacity(end + '…'.len_utf8());
    t.push_str(&s[..end]);
    t.push('…');
    t
}

/// `s` cut to at most `max` bytes at a character boundary, `mark` appended when it is cut
/// (its bytes counted in `max`). Bytes, not characters, for budgets that are sizes: a
/// rendering sent to a model, a cell's share of memory.
pub fn cut_bytes(mut s: String, max: usize, mark: &str) -> String {
    if s.len() <= max {
        return s;
    }
    let mut end = max.saturating_sub(mark.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.push_str(mark);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_into_words() {
        let split = split_identifier;
        assert_eq!(split("gdp_pc_ppp"), ["gdp", "pc", "ppp"]);
        assert_eq!(
            split("stationReadings2019"),
            ["station", "Readings", "2019"]
        );
        assert_eq!(split("HTMLTable"), ["HTML", "Table"]);
        assert_eq!(
            split("sensors/station-0042/readings-20190301.csv"),
            ["sensors", "station", "0042", "readings", "20190301", "csv"]
        );
        assert_eq!(split("2014_q4"), ["2014", "q", "4"]);
        assert_eq!(split("PassengerId"), ["Passenger", "Id"]);
        assert_eq!(split("  ,;--"), Vec::<&str>::new());
        assert_eq!(split("Zürich_Größe"), ["Zürich", "Größe"]);
    }

    #[test]
    fn whole_identifiers_keep_underscores() {
        let text = "gdp_pc_ppp, Fare [].merchant_category_code";
        let mut out = Vec::new();
        word_ranges(text, false, &mut |a, b| out.push(&text[a..b]));
        assert_eq!(out, ["gdp_pc_ppp", "Fare", "merchant_category_code"]);
    }

    #[test]
    fn lowercase_words_lowercase_each_character() {
        assert_eq!(
            lowercase_words("gdp_pc_ppp.csv"),
            ["gdp", "pc", "ppp", "csv"]
        );
        assert_eq!(lowercase_words("gdpPerCapita"), ["gdp", "per", "capita"]);
        assert_eq!(
            lowercase_words("HTMLTable/pm25-x86"),
            ["html", "table", "pm", "25", "x", "86"]
        );
        assert_eq!(lowercase_words("Straße_Größe"), ["straße", "größe"]);
        assert_eq!(lowercase_words("ΟΔΟΣ"), ["οδοσ"]);
    }

    #[test]
    fn cut_chars_counts_the_ellipsis_and_take_chars_adds_it() {
        assert_eq!(cut_chars("abcdef", 6), "abcdef");
        assert_eq!(cut_chars("abcdefg", 6), "abcde…");
        assert_eq!(cut_chars("ééééééé", 6), "ééééé…");
        assert_eq!(cut_chars("ab", 0), "…");
        assert_eq!(cut_chars("", 0), "");
        assert_eq!(take_chars("abcdef", 6), "abcdef");
        assert_eq!(take_chars("abcdefg", 6), "abcdef…");
        assert_eq!(take_chars("ééééééé", 6), "éééééé…");
    }

    #[test]
    fn cut_bytes_stays_within_the_budget_mark_included() {
        assert_eq!(cut_bytes("abcdef".into(), 6, " …\n"), "abcdef");
        assert_eq!(cut_bytes("x".repeat(100), 10, " …\n"), "xxxxx …\n");
        assert_eq!(cut_bytes("é".repeat(100), 11, " …\n"), "ééé …\n");
        assert_eq!(cut_bytes("é".repeat(10), 5, ""), "éé");
    }
}
