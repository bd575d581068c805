//! A collection's members in search: the ones the retrievers did not reach that cover
//! the days asked, the evidence that sets a member apart from its siblings, and the
//! collection's summary tables.

use super::{Candidate, Question, SearchOptions, Searcher};
use crate::collect::Collection;
use crate::companion::Companion;
use crate::error::Result;
use crate::search::rank::evidence::{self, Evidence};
use crate::search::rank::score;
use std::collections::{HashMap, HashSet};

impl Searcher {
    /// Members of the candidates' collections that cover the days asked but that the
    /// retrievers did not reach (their siblings' near-identical descriptions took the
    /// places): a question about one day of a daily collection needs that day's file.
    /// Each stands in with its retrieved siblings' lowest fused score.
    pub(super) fn add_members(
        &self,
        candidates: &mut Vec<Candidate>,
        collections: &HashMap<String, Collection>,
        q: &mut Question,
        opts: &SearchOptions,
    ) -> Result<()> {
        if q.asked.is_empty() {
            return Ok(());
        }
        let cfg = &self.ranking;
        let mut have: HashSet<String> = candidates.iter().map(|c| c.path.clone()).collect();
        let mut floor: HashMap<&str, f64> = HashMap::new();
        for c in candidates.iter() {
            if let Some(id) = &c.collection {
                let s = score::fused(&c.evidence, cfg);
                let f = floor.entry(id.as_str()).or_insert(s);
                *f = f.min(s);
            }
        }
        let mut added: Vec<(String, Evidence)> = Vec::new();
        for (id, stand_in) in floor {
            let Some(coll) = collections.get(id) else {
                continue;
            };
            if !varies_in_time(coll) {
                continue;
            }
            for (start, end) in q.asked.clone() {
                let members =
                    self.catalog()
                        .members_overlapping(id, &start, &end, cfg.member_hits)?;
                for path in members {
                    if !have.insert(path.clone()) {
                        continue;
                    }
                    let ev = Evidence {
                        member_of: Some((stand_in, id.to_string())),
                        ..Evidence::default()
                    };
                    added.push((path, ev));
                }
            }
        }
        candidates.extend(self.candidates(added, q, opts)?);
        Ok(())
    }
}

/// A hit that may be a collection's summary table: its path, collection and description.
pub(super) struct Table {
    pub path: String,
    pub collection: Option<String>,
    pub desc: crate::Description,
}

/// The summary tables of collection `c` (see [`crate::companion::summary`]) among
/// `tables`: tables in its folder or the folder above, outside it, with a column listing
/// its members. Only hits are looked at: a summary goes with its collection's hit when it
/// is among the hits anyway (BENCHMARKS.md), so reading other files of the folder (a
/// quarter of a `lakestar search`) would find nothing that can be used.
pub(super) fn summaries(c: &Collection, tables: &[Table]) -> Vec<Companion> {
    use crate::catalog::folder_of;
    let folder = folder_of(&c.template);
    let above = (!folder.is_empty()).then(|| folder_of(folder));
    tables
        .iter()
        .filter(|t| t.collection.as_deref() != Some(c.id.as_str()))
        .filter(|t| {
            let f = folder_of(&t.path);
            f == folder || Some(f) == above
        })
        .filter_map(|t| {
            crate::companion::summary::member_column(&t.desc, c).map(|column| Companion {
                path: t.path.clone(),
                why: format!("summary: a row per member ({column})"),
            })
        })
        .collect()
}

/// Whether a collection's members cover different times (a yearly or daily
/// collection), rather than all the same span (one file per state, each for 2000–2020).
fn varies_in_time(c: &Collection) -> bool {
    c.time_start.is_some()
        && c.parts.iter().any(|p| {
            matches!(p.name.as_str(), "{year}" | "{date}") || p.name == "{n}" && p.distinct > 1
        })
}

/// Kinds of evidence that set a member apart from its siblings: it covers days asked
/// and its coverage is narrower than the whole collection's (the siblings cover other
/// days); the question names its varying part (`Ohio` of `by_state/{word}.csv`, `NJ`
/// of `state_{word}.csv` with short codes on) or a category of its own
/// (`own_category`, see [`own_categories`]); the question asks for every member ("each
/// state", "per year"), which sets all of them apart from the collection's single
/// folded hit. With the count, the varying part the question names, if any.
pub(super) fn own_evidence(
    c: &Candidate,
    coll: &Collection,
    q: &Question,
    own_category: bool,
) -> (u32, Option<String>) {
    let mut own = u32::from(own_category);
    if let (Some(cov), Some(cs), Some(ce)) = (&c.evidence.covers, &coll.time_start, &coll.time_end)
    {
        let day = evidence::day;
        let narrower = day(cs) < day(&cov.start) || day(&cov.end) < day(ce);
        if !cov.asked.is_empty() && narrower {
            own += 1;
        }
    }
    // A year or date the question says, where the member covers days asked, is the
    // time evidence again: counted twice, it would set the members named by a range's
    // ends apart from the years between them.
    let asked_time = c
        .evidence
        .covers
        .as_ref()
        .is_some_and(|cov| !cov.asked.is_empty());
    let named = crate::collect::varying(&coll.template, &c.path).and_then(|parts| {
        parts.into_iter().find(|v| {
            !(asked_time && temporal(v))
                && q.matcher
                    .names_category(&v.replace(['_', '-'], " "))
                    .is_some()
        })
    });
    if named.is_some() {
        own += 1;
    }
    // "each state", "every year": every member is asked for.
    if evidence::says_each(&q.words)
        && evidence::asks_each(&q.words, &evidence::member_words(&coll.template))
    {
        own += 1;
    }
    (own, named)
}

/// For each candidate, whether the question names a category that makes up half of its
/// column (what the file is about) and that some other retrieved member of its
/// collection lacks (the `Camp Fire` of one `incident_{n}.csv` among many). A category
/// merely among a file's frequent values does not count: which values a description
/// lists as frequent varies from sibling to sibling (a year range lost members to it).
pub(super) fn own_categories(candidates: &[Candidate]) -> Vec<bool> {
    fn categories(c: &Candidate) -> Vec<&str> {
        // A year or day value of a member covering days asked is its time evidence
        // again (see `own_evidence`).
        let asked_time = c
            .evidence
            .covers
            .as_ref()
            .is_some_and(|cov| !cov.asked.is_empty());
        c.evidence
            .dominant
            .iter()
            .map(String::as_str)
            .filter(|k| {
                let value = k.strip_prefix("category ").unwrap_or(k);
                !(asked_time && temporal(value))
            })
            .collect()
    }
    // Collection → (members retrieved, how many hold each named category).
    let mut held: HashMap<&str, (usize, HashMap<&str, usize>)> = HashMap::new();
    for c in candidates {
        if let Some(id) = &c.collection {
            let e = held.entry(id.as_str()).or_default();
            e.0 += 1;
            for k in categories(c) {
                *e.1.entry(k).or_default() += 1;
            }
        }
    }
    candidates
        .iter()
        .map(|c| {
            c.collection.as_deref().is_some_and(|id| {
                let (members, counts) = &held[id];
                categories(c).iter().any(|k| counts[k] < *members)
            })
        })
        .collect()
}

/// A value written as a year, a month or a day (`2012`, `2012-05`, `20120503`).
fn temporal(v: &str) -> bool {
    !v.is_empty()
        && v.chars()
            .all(|ch| ch.is_ascii_digit() || ch == '-' || ch == '_' || ch == '/')
}
