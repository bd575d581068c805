//! Evidence: why a file answers a question, gathered per candidate as typed facts
//! (which retriever found it and where, the names the question names, the asked days
//! it covers) and rendered to text only at the edge ([`Reason`]'s `Display`, which is
//! also its JSON form).

use super::config::RankingConfig;
use crate::analyze::time;
use crate::search::names::NameMatcher;
use serde::{Serialize, Serializer};
use std::fmt;

/// One reason a hit ranks where it does.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    /// The full-text query matched these fields.
    Matches(Vec<String>),
    /// Among the nearest descriptions, with this cosine similarity.
    Similar(f32),
    /// Columns, keys, file name or categories the question names.
    Names(Vec<String>),
    /// Its time coverage overlaps these asked day intervals.
    Covers {
        /// Coverage start, as recorded.
        start: String,
        /// Coverage end, as recorded.
        end: String,
        /// The asked intervals it overlaps (`YYYY-MM-DD` pairs).
        asked: Vec<(String, String)>,
    },
    /// A member of a collection returned because of its own evidence, which the
    /// retrievers did not reach (the collection's other members stood for it).
    Member(String),
    /// It matches another spelling of a word the question says, and not the word.
    Synonym {
        /// As the question says it.
        asked: String,
        /// As the file says it.
        found: String,
    },
    /// A member set apart by its own evidence, ranked with its collection's best member.
    ScoredWith(String),
    /// A member moved up to take its asked window's turn.
    Turn(String),
    /// Found for this part of a multi-part question, searched on its own.
    Part(String),
    /// Listed to fill the list to the number asked: a member folded under, or a
    /// companion of, this hit above.
    Fills(String),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Matches(fields) => write!(f, "matches {}", fields.join(", ")),
            Reason::Similar(s) => write!(f, "similar description ({s:.2})"),
            Reason::Names(names) => write!(f, "names {}", names.join(", ")),
            Reason::Covers { start, end, asked } => {
                let asked: Vec<String> = asked.iter().map(|(a, b)| format!("{a} … {b}")).collect();
                write!(f, "covers {start} … {end} (asked {})", asked.join(", "))
            }
            Reason::Member(id) => write!(f, "member of collection {id}"),
            Reason::Synonym { asked, found } => write!(f, "says {found} for {asked}"),
            Reason::ScoredWith(best) => write!(f, "ranks with its collection's best, {best}"),
            Reason::Turn(window) => write!(f, "takes the turn of the window asked {window}"),
            Reason::Part(part) => write!(f, "found for the part “{part}”"),
            Reason::Fills(above) => write!(f, "fills the list: with {above} above"),
        }
    }
}

/// Rendered as its text: the JSON of a hit says why in the words the CLI prints.
impl Serialize for Reason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Cosine similarity at or below which a description's nearness is no reason: unrelated
/// text scores this much with the built-in hash vectors (0.05–0.15, see
/// [`ALONE_SIMILARITY`](super::config::ALONE_SIMILARITY)), and a nearest neighbour always
/// exists, so `similar description (0.04)` or `(-0.03)` says nothing of the file. The
/// vector's rank still counts in the score; only the reason is left out.
pub const SIMILAR_NOISE: f32 = 0.15;

/// A name of a file that the question names.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Named {
    /// What its rarity is counted under (lowercase): a column or key name, `file NAME`,
    /// `category VALUE`, or the run of a name's words named in part (`budgetyear`).
    pub key: String,
    /// How strongly the question names it, in [`strength`](crate::search::names::strength)
    /// units (quotes and the plain-word share applied).
    pub strength: f64,
    /// The key is a whole column or key name, whose lake-wide count the text index has.
    pub column: bool,
    /// A plain word, merely said (see [`PLAIN`](super::config::PLAIN)).
    pub plain: bool,
}

impl Named {
    pub fn other(key: String, strength: f64) -> Named {
        Named {
            key,
            strength,
            column: false,
            plain: false,
        }
    }
}

/// A day interval, `YYYY-MM-DD` … `YYYY-MM-DD`.
pub type Days = (String, String);

/// A file's time coverage, as recorded, and the asked intervals it overlaps.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Covers {
    pub start: String,
    pub end: String,
    pub asked: Vec<Days>,
    /// The largest share of the coverage's days that one overlapped asked interval
    /// makes (1: the file is all about the days asked; 1/365: one day of a year's
    /// file); `None` when the days cannot be counted.
    pub share: Option<f64>,
}

impl Covers {
    /// The coverage `start … end` against the asked intervals.
    pub fn new(start: &str, end: &str, asked: &[Days]) -> Covers {
        let asked = overlapped(start, end, asked);
        let parse = |s: &str| chrono::NaiveDate::parse_from_str(day(s), "%Y-%m-%d").ok();
        let share = match (parse(start), parse(end)) {
            (Some(s), Some(e)) if s <= e => {
                let span = (e - s).num_days() + 1;
                asked
                    .iter()
                    .filter_map(|(a, b)| {
                        let (a, b) = (parse(a)?, parse(b)?);
                        let overlap = (e.min(b) - s.max(a)).num_days() + 1;
                        Some(overlap.max(1) as f64 / span as f64)
                    })
                    .reduce(f64::max)
            }
            _ => None,
        };
        Covers {
            start: start.to_string(),
            end: end.to_string(),
            asked,
            share,
        }
    }
}

/// Everything known of one candidate before scoring.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Evidence {
    /// 0-based rank in the full-text results, and the fields matched.
    pub text: Option<(usize, Vec<String>)>,
    /// 0-based rank among the nearest vectors, and the similarity.
    pub vector: Option<(usize, f32)>,
    /// Found through its collection, not by a retriever: the fused score it stands in
    /// with (its retrieved siblings' lowest), and the collection.
    pub member_of: Option<(f64, String)>,
    /// Its names that the question names.
    pub named: Vec<Named>,
    /// The named categories (their `category …` keys) that make up at least half of
    /// their column: what the file is about (`Camp Fire` in a file of one incident).
    pub dominant: Vec<String>,
    /// Its time coverage and the asked intervals it overlaps (to the day).
    pub covers: Option<Covers>,
    /// Evidence that sets it apart from the other members of its collection: it covers
    /// asked days that not every member covers; the question names its varying part.
    pub own: u32,
    /// Its varying part in its collection's template, as the question names it (`NJ`).
    pub named_part: Option<String>,
    /// Ranked with this member, its collection's best, rather than by its own match
    /// (`RankingConfig::collection_score`).
    pub scored_with: Option<String>,
    /// Moved up to take its asked window's turn among its collection's members
    /// (`RankingConfig::window_shares`).
    pub turn: Option<Days>,
}

impl Evidence {
    /// The reasons, in the order the evidence was gathered.
    pub fn reasons(&self, cfg: &RankingConfig) -> Vec<Reason> {
        let mut out = Vec::new();
        if let Some((_, fields)) = &self.text {
            if !fields.is_empty() {
                out.push(Reason::Matches(fields.clone()));
            }
        }
        if let Some((rank, sim)) = self.vector {
            if rank < cfg.similar_reasons && sim > SIMILAR_NOISE {
                out.push(Reason::Similar(sim));
            }
        }
        if let Some((_, id)) = &self.member_of {
            out.push(Reason::Member(id.clone()));
        }
        if !self.named.is_empty() || self.named_part.is_some() {
            let part = self.named_part.iter().map(|p| format!("member {p}"));
            out.push(Reason::Names(
                self.named
                    .iter()
                    .map(|n| n.key.clone())
                    .chain(part)
                    .collect(),
            ));
        }
        if let Some(c) = &self.covers {
            if !c.asked.is_empty() {
                out.push(Reason::Covers {
                    start: c.start.clone(),
                    end: c.end.clone(),
                    asked: c.asked.clone(),
                });
            }
        }
        if let Some(best) = &self.scored_with {
            out.push(Reason::ScoredWith(best.clone()));
        }
        if let Some((a, b)) = &self.turn {
            out.push(Reason::Turn(format!("{a} … {b}")));
        }
        out
    }
}

/// Phrases the question quotes: "High Price", 'Pclass', `wage`, “Fare”.
pub(crate) fn quoted(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = query.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (pos, c) = chars[i];
        let close = match c {
            '"' => Some('"'),
            '`' => Some('`'),
            '“' => Some('”'),
            '‘' => Some('’'),
            // An apostrophe opens a quote only at the start of a word (not in "fisher's").
            '\'' if i == 0 || !chars[i - 1].1.is_alphanumeric() => Some('\''),
            _ => None,
        };
        if let Some(close) = close {
            if let Some(j) = (i + 1..chars.len()).find(|&j| chars[j].1 == close) {
                let inner = &query[pos + c.len_utf8()..chars[j].0];
                if !inner.trim().is_empty() && inner.chars().count() <= 60 {
                    out.push(inner.trim().to_lowercase());
                }
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The day intervals a question asks about (`YYYY-MM-DD` pairs), each kept apart (see
/// [`dates`](crate::search::dates)); a question they find none in is read like a file
/// name, for the shapes only names use.
pub(crate) fn asked_days(query: &str) -> Vec<(String, String)> {
    let asked = crate::search::dates::asked(query);
    if asked.is_empty() {
        return time::from_text(query)
            .map(|t| vec![(t.start, t.end)])
            .unwrap_or_default();
    }
    asked
        .into_iter()
        .map(|a| (a.start.iso(), a.end.iso()))
        .collect()
}

/// The day of a recorded time (`2012-05-06T23:00` → `2012-05-06`): coverage is compared
/// to the day, so a time of day must not put it after the day it falls on.
pub(crate) fn day(s: &str) -> &str {
    s.get(..10).unwrap_or(s)
}

/// The asked intervals that the coverage `start … end` overlaps, each on its own: a
/// file between two asked days, or sharing only their year, is not what was asked (the
/// year token of the text index's time field already credits the shared year).
pub(crate) fn overlapped(
    start: &str,
    end: &str,
    asked: &[(String, String)],
) -> Vec<(String, String)> {
    let (start, end) = (day(start), day(end));
    asked
        .iter()
        .filter(|(a, b)| start <= b.as_str() && a.as_str() <= end)
        .cloned()
        .collect()
}

/// Words that ask for every member of a set: "each state", "every year", "all
/// stations", "per county", "by state", "across states".
const EACH: [&str; 6] = ["each", "every", "all", "per", "by", "across"];

/// The words a collection's members vary by, from its template: the kind of a date
/// placeholder (`{year}` → year, annual; `{date}` → day, date, daily) and the words of
/// the path around each placeholder — the literal beside it in its segment, or the
/// folder above when it is alone there (`by_state/{word}.csv` → state;
/// `station-{n}/…` → station).
pub(crate) fn member_words(template: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let segments: Vec<&str> = template.split('/').collect();
    for (i, seg) in segments.iter().enumerate() {
        if !seg.contains('{') {
            continue;
        }
        if seg.contains("{year}") {
            out.extend(["year", "annual", "yearly"].map(String::from));
        }
        if seg.contains("{date}") {
            out.extend(["day", "date", "daily"].map(String::from));
        }
        let literal: String = seg
            .split(['{', '}'])
            .enumerate()
            .filter(|(j, _)| j % 2 == 0)
            .map(|(_, t)| t)
            .collect::<Vec<_>>()
            .join(" ");
        let stem = literal
            .rsplit_once('.')
            .map_or(literal.as_str(), |(s, _)| s);
        let wordy = |t: &str| -> Vec<String> {
            crate::text_util::split_identifier(t)
                .into_iter()
                .map(str::to_lowercase)
                .filter(|w| w.len() >= 3 && w.chars().all(char::is_alphabetic))
                .collect()
        };
        let mut words = wordy(stem);
        if words.is_empty() && i > 0 {
            words = wordy(segments[i - 1]);
        }
        out.extend(words);
    }
    out.iter_mut().for_each(|w| *w = singular(w).to_string());
    out.sort();
    out.dedup();
    out
}

/// `w` without a plural `s` (`states` → `state`), when enough is left.
fn singular(w: &str) -> &str {
    match w.strip_suffix('s') {
        Some(s) if s.len() >= 3 && !s.ends_with('s') => s,
        _ => w,
    }
}

/// Whether the question says one of the words that ask for every member ([`asks_each`]
/// needs one; most questions have none, and their candidates' templates need not be
/// read for member words).
pub(crate) fn says_each(question_words: &[String]) -> bool {
    question_words.iter().any(|w| EACH.contains(&w.as_str()))
}

/// Whether the question (its lowercase words, in order) asks for every member of a
/// collection whose members vary by `member_words`: "each state", "all the years",
/// "per station", "states … each" is not read.
pub(crate) fn asks_each(question_words: &[String], member_words: &[String]) -> bool {
    question_words.iter().enumerate().any(|(i, w)| {
        EACH.contains(&w.as_str())
            && question_words[i + 1..]
                .iter()
                .take(2)
                .any(|n| member_words.iter().any(|m| m == singular(n)))
    })
}

/// The lowercase words of a question, in order.
pub(crate) fn question_words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The names of a description (`names`: [`crate::search::doc::names`], as its ranking
/// record holds them) that the question quotes or names (see [`NameMatcher`]), each
/// with its strength: the quoted weight for a quoted name, else the matcher's, of which
/// a plain one-word name merely said as a word gets the plain share.
pub(crate) fn named_in(
    names: &[String],
    matcher: &mut NameMatcher,
    quotes: &[String],
    cfg: &RankingConfig,
) -> Vec<Named> {
    let mut hit: Vec<Named> = names
        .iter()
        .filter_map(|n| {
            let lower = n.to_lowercase();
            let (key, (strength, plain)) = match name_strength(n, matcher, quotes, cfg) {
                Some(s) => (lower.clone(), s),
                None => matcher.names_part(n).map(|(k, s)| (k, (s, false)))?,
            };
            Some(Named {
                column: key == lower,
                plain,
                key,
                strength,
            })
        })
        .collect();
    hit.sort_by(|a, b| a.key.cmp(&b.key).then(b.strength.total_cmp(&a.strength)));
    hit.dedup_by(|a, b| a.key == b.key);
    hit
}

/// How strongly the question names the whole name `n`, and whether only as a plain
/// word: quoted, or as the matcher finds it, a plain word (see
/// [`plain_word`](crate::search::names::plain_word)) that the question only says as a
/// word (not quoted, not as code) weighed by the plain share.
pub(crate) fn name_strength(
    n: &str,
    matcher: &mut NameMatcher,
    quotes: &[String],
    cfg: &RankingConfig,
) -> Option<(f64, bool)> {
    use crate::search::names::{generic_word, plain_word, strength};
    let lower = n.to_lowercase();
    let spaced = lower.replace(['_', '-', '.'], " ");
    let quoted = (quotes.contains(&lower) || quotes.contains(&spaced)).then_some(cfg.quoted);
    let said = matcher.names(n).map(|s| {
        if s <= strength::WORD && generic_word(n) {
            (s * cfg.generic, true)
        } else if s <= strength::WORD && plain_word(n) {
            (s * cfg.plain, true)
        } else {
            (s, false)
        }
    });
    match (quoted, said) {
        (Some(a), Some((b, _))) => Some((a.max(b), false)),
        (Some(a), None) => Some((a, false)),
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strength(q: &str, name: &str) -> Option<(f64, bool)> {
        name_strength(
            name,
            &mut NameMatcher::new(q),
            &quoted(q),
            &RankingConfig::default(),
        )
    }

    #[test]
    fn plain_words_weigh_below_quoted_code_and_several_word_names() {
        let (plain, is_plain) = strength("the rainfall over the period", "rainfall").unwrap();
        assert!(is_plain);
        assert!(plain <= 1.0);
        let (generic, is_plain) = strength("the value over the period", "period").unwrap();
        assert!(is_plain && generic < plain);
        for (q, name) in [
            (r#"the "period" column"#, "period"),
            ("the mean of period_days", "period_days"),
            ("the max of gdpPercap", "gdpPercap"),
            ("the average wind speed", "WINDSPEED"),
        ] {
            let (s, is_plain) = strength(q, name).unwrap();
            assert!(!is_plain && s > plain, "{q} / {name}: {s}");
        }
    }

    #[test]
    fn a_question_asking_for_every_member_is_read_from_the_template() {
        let m = member_words("census/by_state/{word}.csv");
        assert_eq!(m, ["state"]);
        let m2 = member_words("police/annual/crimes_{year}.csv");
        assert!(m2.contains(&"year".to_string()) && m2.contains(&"crime".to_string()));
        let m3 = member_words("readings/station-{n}/temp-{date}_to_{date}.csv");
        assert!(m3.contains(&"station".to_string()) && m3.contains(&"day".to_string()));
        let asks = |q: &str, m: &[String]| asks_each(&question_words(q), m);
        assert!(asks(
            "Median income of the poorest county in each state",
            &m
        ));
        assert!(asks("For every state, how many counties", &m));
        assert!(asks("poverty across all states", &m));
        assert!(asks("sales by state", &m));
        assert!(!asks("the state with the most counties", &m));
        assert!(!asks("compare Ohio and Utah", &m));
        assert!(asks("burglaries per year", &m2));
        assert!(asks("readings of all the stations", &m3));
    }

    #[test]
    fn the_share_of_a_files_days_asked_is_counted() {
        let asked = [("2012-05-03".to_string(), "2012-05-03".to_string())];
        assert_eq!(
            Covers::new("2012-05-03", "2012-05-03", &asked).share,
            Some(1.0)
        );
        let year = Covers::new("2012-01-01", "2012-12-31", &asked)
            .share
            .unwrap();
        assert!((year - 1.0 / 366.0).abs() < 1e-9);
        assert_eq!(Covers::new("2013-01-01", "2013-12-31", &asked).share, None);
        assert_eq!(Covers::new("2012", "2013", &asked).share, None);
    }

    #[test]
    fn coverage_overlaps_each_asked_interval_to_the_day() {
        let asked = vec![
            ("2012-05-03".to_string(), "2012-05-06".to_string()),
            ("2016-08-09".to_string(), "2016-08-12".to_string()),
        ];
        assert_eq!(
            overlapped("2012-05-06T23:00", "2012-05-07", &asked).len(),
            1
        );
        // Between the two asked intervals: neither.
        assert!(overlapped("2013-01-01", "2015-12-31", &asked).is_empty());
        assert_eq!(overlapped("2012-01-01", "2016-12-31", &asked).len(), 2);
    }

    #[test]
    fn reasons_render_as_the_cli_prints_them() {
        let e = Evidence {
            text: Some((0, vec!["columns".into(), "path".into()])),
            vector: Some((3, 0.5)),
            named: vec![Named::other("file a.csv".into(), 1.0)],
            covers: Some(Covers::new(
                "2012-05-04",
                "2012-05-04",
                &[("2012-05-04".into(), "2012-05-04".into())],
            )),
            ..Evidence::default()
        };
        let text: Vec<String> = e
            .reasons(&RankingConfig::default())
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            text,
            [
                "matches columns, path",
                "similar description (0.50)",
                "names file a.csv",
                "covers 2012-05-04 … 2012-05-04 (asked 2012-05-04 … 2012-05-04)"
            ]
        );
        let json = serde_json::to_string(&Reason::Similar(0.25)).unwrap();
        assert_eq!(json, r#""similar description (0.25)""#);
        // A neighbour no nearer than unrelated text gives no reason; the rest stay.
        for sim in [-0.03, 0.0, SIMILAR_NOISE] {
            let e = Evidence {
                vector: Some((0, sim)),
                ..e.clone()
            };
            let r = e.reasons(&RankingConfig::default());
            assert!(!r.iter().any(|r| matches!(r, Reason::Similar(_))), "{r:?}");
            assert_eq!(r.len(), 3);
        }
    }
}
