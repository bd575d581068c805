//! The tokenizers of the text index: words out of identifiers and prose.
//!
//! Data lakes name things `gdp_pc_ppp`, `stationReadings2019` or `HTMLTable`, while
//! questions say "GDP per capita" or "station readings in 2019". Splitting identifiers into
//! their words, the same way for documents and queries, is what lets the two meet. The
//! analyzers built here are registered on the index under [`WORDS`] and [`IDENT`].

use crate::text_util::word_ranges;
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, StopWordFilter, TextAnalyzer, Token,
    TokenStream, Tokenizer, TokenizerManager,
};

/// Analyzer name: identifiers split into words, lowercased, stop words removed, English
/// stemming. For prose and for names whose parts should match on their own.
pub const WORDS: &str = "lakestar_words";

/// Analyzer name: whole identifiers (`gdp_pc_ppp`, `fare`), lowercased, nothing else. For
/// exact matches of names and for the year tokens of time coverage.
pub const IDENT: &str = "lakestar_ident";

/// Tokens longer than this are dropped: hashes, base64 and other noise, never a word.
const MAX_TOKEN_BYTES: usize = 40;

/// Lucene's English stop words (tantivy's list).
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// Also stop words here: the question words, pronouns and clitics that natural-language
/// questions are full of ("what's the …", "which files do we …"); they would otherwise
/// match descriptions by accident. Whole identifiers ([`IDENT`]) keep them all.
const QUESTION_WORDS: &[&str] = &[
    "what", "which", "who", "whom", "whose", "how", "do", "does", "did", "can", "could", "would",
    "should", "i", "we", "you", "me", "my", "our", "your", "s", "t",
];

/// The analyzers of the text index, to register on its [`tantivy::Index`].
pub fn tokenizers() -> TokenizerManager {
    let manager = TokenizerManager::default();
    manager.register(WORDS, words_analyzer());
    manager.register(
        IDENT,
        TextAnalyzer::builder(WordTokenizer::whole_identifiers())
            .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
            .filter(LowerCaser)
            .build(),
    );
    manager
}

/// The [`WORDS`] analyzer.
fn words_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(WordTokenizer::split_identifiers())
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser)
        .filter(StopWordFilter::remove(
            STOP_WORDS
                .iter()
                .chain(QUESTION_WORDS)
                .map(|w| (*w).to_owned()),
        ))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Splits text into words with [`word_ranges`]: identifiers cut into their parts
/// (`stationReadings` → `station Readings`), or, without `split`, kept whole
/// (`gdp_pc_ppp`).
#[derive(Clone)]
pub struct WordTokenizer {
    split: bool,
    tokens: Vec<Token>,
}

impl WordTokenizer {
    /// Words, identifiers cut into their parts.
    pub fn split_identifiers() -> Self {
        WordTokenizer {
            split: true,
            tokens: Vec::new(),
        }
    }

    /// Whole identifiers: runs of letters, digits and `_`.
    pub fn whole_identifiers() -> Self {
        WordTokenizer {
            split: false,
            tokens: Vec::new(),
        }
    }
}

/// The tokens of one text, already cut (the cutting needs to look one character ahead,
/// simpler done eagerly; texts here are descriptions of a few KiB at most).
pub struct WordTokenStream<'a> {
    tokens: &'a mut [Token],
    /// Number of tokens handed out so far; the current one is `cursor - 1`.
    cursor: usize,
}

impl Tokenizer for WordTokenizer {
    type TokenStream<'a> = WordTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordTokenStream<'a> {
        self.tokens.clear();
        let split = self.split;
        let mut position = 0;
        word_ranges(text, split, &mut |from, to| {
            self.tokens.push(Token {
                offset_from: from,
                offset_to: to,
                position,
                text: text[from..to].to_owned(),
                position_length: 1,
            });
            position += 1;
        });
        WordTokenStream {
            tokens: &mut self.tokens,
            cursor: 0,
        }
    }
}

impl TokenStream for WordTokenStream<'_> {
    fn advance(&mut self) -> bool {
        if self.cursor < self.tokens.len() {
            self.cursor += 1;
            true
        } else {
            false
        }
    }

    // As with tantivy's own tokenizers, `token` is only valid after `advance` returned
    // true; calling it before is a bug of the caller and panics.
    fn token(&self) -> &Token {
        &self.tokens[self.cursor - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.cursor - 1]
    }
}

/// A question's words as the text index keeps them (identifiers split, lowercased, stop
/// words out, stemmed), read once, to look for in texts: what a surface highlights, so
/// that "burglaries" marks `Burglary` and `burglary_count`, and how much of a question a
/// description holds.
pub struct QueryWords {
    analyzer: TextAnalyzer,
    wanted: std::collections::HashSet<String>,
}

impl QueryWords {
    /// The words of `query`.
    pub fn new(query: &str) -> QueryWords {
        let mut analyzer = words_analyzer();
        let mut wanted = std::collections::HashSet::new();
        {
            let mut stream = analyzer.token_stream(query);
            while stream.advance() {
                wanted.insert(stream.token().text.clone());
            }
        }
        QueryWords { analyzer, wanted }
    }

    /// The byte ranges of `text` whose words are the question's (adjacent ones merged).
    pub fn spans(&mut self, text: &str) -> Vec<std::ops::Range<usize>> {
        let mut spans: Vec<std::ops::Range<usize>> = Vec::new();
        if self.wanted.is_empty() {
            return spans;
        }
        let mut stream = self.analyzer.token_stream(text);
        while stream.advance() {
            let t = stream.token();
            if self.wanted.contains(&t.text) {
                match spans.last_mut() {
                    Some(last) if last.end >= t.offset_from => last.end = last.end.max(t.offset_to),
                    _ => spans.push(t.offset_from..t.offset_to),
                }
            }
        }
        spans
    }

    /// The words of `text` that [`QueryWords::spans`] marks, each once, in order.
    pub fn words(&mut self, text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in self.spans(text) {
            let w = &text[r];
            if !out.iter().any(|o| o == w) {
                out.push(w.to_string());
            }
        }
        out
    }

    /// How many of the question's distinct words `text` holds, and how many there are.
    pub fn coverage(&mut self, text: &str) -> (usize, usize) {
        let mut missing = self.wanted.clone();
        let mut stream = self.analyzer.token_stream(text);
        while stream.advance() && !missing.is_empty() {
            missing.remove(&stream.token().text);
        }
        (self.wanted.len() - missing.len(), self.wanted.len())
    }
}

/// [`QueryWords::spans`] of `query` in `text`, for one text.
pub fn matching_spans(query: &str, text: &str) -> Vec<std::ops::Range<usize>> {
    QueryWords::new(query).spans(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_mark_the_words_the_index_matches() {
        let text = "police/crime/burglary_count.csv — Burglaries by stationReadings";
        let spans = matching_spans("How many burglaries near station readings?", text);
        let marked: Vec<&str> = spans.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(marked, ["burglary", "Burglaries", "stationReadings"]);
        assert!(matching_spans("the of and", text).is_empty());
        assert_eq!(
            QueryWords::new("burglary").words("Burglary, burglary, Burglary"),
            ["Burglary", "burglary"]
        );
        let mut q = QueryWords::new("thefts reported in 2021");
        assert_eq!(q.coverage("ridership_2021.csv"), (1, 3));
        assert_eq!(q.coverage("thefts reported"), (2, 3));
        assert_eq!(QueryWords::new("the of").coverage("anything"), (0, 0));
    }

    fn tokens(analyzer: &str, text: &str) -> Vec<String> {
        let mut a = tokenizers().get(analyzer).unwrap();
        let mut stream = a.token_stream(text);
        let mut out = Vec::new();
        while let Some(t) = stream.next() {
            out.push(t.text.clone());
        }
        out
    }

    #[test]
    fn words_analyzer_lowercases_stems_and_drops_stop_words() {
        assert_eq!(
            tokens(WORDS, "What is the mean Fare of passengers?"),
            ["mean", "fare", "passeng"]
        );
        assert_eq!(tokens(WORDS, "PassengerId"), ["passeng", "id"]);
        // Positions keep the gaps of removed words, so phrases stay exact.
        let mut a = tokenizers().get(WORDS).unwrap();
        let mut stream = a.token_stream("number_of_rows");
        let mut positions = Vec::new();
        while let Some(t) = stream.next() {
            positions.push((t.text.clone(), t.position));
        }
        assert_eq!(positions, [("number".to_owned(), 0), ("row".to_owned(), 2)]);
    }

    #[test]
    fn ident_analyzer_keeps_identifiers_whole() {
        assert_eq!(
            tokens(IDENT, "gdp_pc_ppp, Fare [].merchant_category_code"),
            ["gdp_pc_ppp", "fare", "merchant_category_code"]
        );
        let long = "a".repeat(MAX_TOKEN_BYTES + 1);
        assert_eq!(tokens(IDENT, &format!("{long} ok")), ["ok"]);
    }
}
