//! The last stage of a search: the planned candidates as [`Hit`]s, each file returned
//! once, with its collection, its companions and the words a surface highlights.

use super::members;
use super::{Candidate, SearchOptions, Searcher};
use crate::collect::Collection;
use crate::companion::Companion;
use crate::error::Result;
use crate::search::rank::evidence::Evidence;
use crate::search::rank::fold::Planned;
use crate::search::rank::{relevance, Reason, Relevance};
use crate::search::{vocab, QueryWords};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// One ranked file.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// Relative path, `/`-separated.
    pub path: String,
    /// Fused score (higher is better; comparable within one query).
    pub score: f64,
    /// How well it matches, in words ([`Relevance`]).
    pub relevance: Relevance,
    /// Its score as a share of the best hit's (1.0 for the best), two decimals.
    pub share: f64,
    /// Format name.
    pub format: String,
    /// The first line of the file's description, with the file's own title after the
    /// path when it has one (`manual.md — “Merchant Guide” — Markdown, …`).
    pub summary: String,
    /// The file's own title: a document's top heading, a page's `<title>`, a sheet's
    /// title row, the title line above a table (see `Description::title`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Why it ranks: matched fields, vector similarity, names, time overlap (each
    /// rendered as its text in JSON).
    pub reasons: Vec<Reason>,
    /// The words of its path and summary that match the question's, as the text index
    /// matches them (`Burglaries` for "burglary"): what a surface highlights.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub words: Vec<String>,
    /// The collection the file belongs to, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collection: Option<HitCollection>,
    /// Files a person opens with it: its documentation, the data a documentation file
    /// documents, lookup tables of its codes (at most [`COMPANIONS_NAMED`]). A file
    /// returned above (as a hit or a companion) is not repeated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub companions: Vec<Companion>,
    /// A table that spans many files (`path` its folder, ending in `/`): returned once,
    /// in the place of its best-ranked member; its members are never hits of their own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<HitTable>,
}

/// A hit that is a table of many files.
#[derive(Debug, Clone, Serialize)]
pub struct HitTable {
    /// `hive`, `delta` or `iceberg`.
    pub kind: crate::dataset::TableKind,
    /// Delta version, Iceberg snapshot id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The member that ranked it here.
    pub member: String,
}

/// Hits a long list shows before the companions it had no room for at its end.
pub const COMPANIONS_AFTER: usize = 10;

/// Companions a hit names at most.
pub const COMPANIONS_NAMED: usize = 5;

/// A hit's collection: which one, and (folded) its other members that matched.
#[derive(Debug, Clone, Serialize)]
pub struct HitCollection {
    /// Collection id (`lakestar collections ID` shows it).
    pub id: String,
    /// The members' path template.
    pub template: String,
    /// How many members it has.
    pub members: u64,
    /// Folded: the other members that matched the question, best first, every one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matching: Vec<String>,
    /// Folded: how many other members matched in all.
    #[serde(skip_serializing_if = "is_zero")]
    pub matched: usize,
    /// The question singled this member out (the days asked, its name, a category of
    /// its own): the members folded under it matched on what they share.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub singled_out: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Searcher {
    /// The first `k` (`opts.k`) planned hits, with their collections and companions (folded: the
    /// first hit of a collection names its other members that matched). Each file is
    /// one hit at most, and a hit above is not named again as a companion below. When
    /// the plan gives fewer than `k` hits, the members folded under them, then their
    /// companions, fill the list (`RankingConfig::fill`), labelled weak: folding keeps
    /// the list readable, never shorter than asked.
    pub(super) fn finish(
        &self,
        query: &str,
        expansions: Vec<vocab::Expansion>,
        ranked: Vec<Candidate>,
        plan: Vec<Planned>,
        collections: &HashMap<String, Collection>,
        opts: &SearchOptions,
    ) -> Result<Vec<Hit>> {
        let k = opts.k.max(1);
        let expand = opts.expand;
        let paths: Vec<String> = ranked.iter().map(|c| c.path.clone()).collect();
        let top = ranked.iter().map(|c| c.score).fold(0.0, f64::max);
        let mut out = Out {
            asked: crate::search::QueryWords::new(query),
            expansions: expansions
                .into_iter()
                .map(|e| {
                    let asked = crate::search::QueryWords::new(&e.asked);
                    let also = crate::search::QueryWords::new(&e.also);
                    (e, asked, also)
                })
                .collect(),
            top,
        };
        let mut slots: Vec<Option<Candidate>> = ranked.into_iter().map(Some).collect();
        let mut hits: Vec<Hit> = Vec::with_capacity(k);
        let mut returned: HashSet<String> = HashSet::new();
        // Collection id → its first hit, and the members set apart that did not fit in
        // `k`: that hit names them first, before the members folded under it.
        let mut first_hit: HashMap<String, usize> = HashMap::new();
        let mut overflow: HashMap<String, Vec<String>> = HashMap::new();
        let mut summaries: HashMap<String, Vec<Companion>> = HashMap::new();
        // What may fill the list: (candidate, the hit holding it) for folded members,
        // (path, the hit holding it) for companions.
        let mut folded_under: Vec<(usize, usize)> = Vec::new();
        let mut companion_of: Vec<(String, usize)> = Vec::new();
        // A summary table goes with the collection's hit when it would be among the
        // hits anyway: brought next to what it summarizes, it takes no other file's
        // place (attached to every collection hit, it costs the dev set more questions
        // than it wins: BENCHMARKS.md).
        // So summary tables are looked for among the planned hits only, read here
        // before their slots are taken: no other file is read for them. Their
        // descriptions are the first ones this search decodes (ranking read records).
        for p in plan.iter().take(k) {
            if let Some(c) = slots[p.at].as_mut() {
                self.describe(c)?;
            }
        }
        let tables: Vec<members::Table> = plan
            .iter()
            .take(k)
            .filter_map(|p| slots[p.at].as_ref())
            .filter_map(|c| {
                c.desc.clone().map(|desc| members::Table {
                    path: c.path.clone(),
                    collection: c.collection.clone(),
                    desc,
                })
            })
            .collect();
        // Tables that span many files: a member stands for its table.
        let spanning = self.catalog().table_roots()?;
        let root_of = |path: &str| {
            spanning
                .iter()
                .find(|r| crate::dataset::is_under(path, r))
                .cloned()
        };
        for p in plan {
            if hits.len() == k {
                if expand {
                    break;
                }
                let id = slots[p.at].as_ref().and_then(|c| c.collection.clone());
                if let Some(id) = id.filter(|id| first_hit.contains_key(id)) {
                    let more = overflow.entry(id).or_default();
                    more.push(paths[p.at].clone());
                    more.extend(p.folded.iter().map(|&i| paths[i].clone()));
                }
                continue;
            }
            let Some(c) = slots[p.at].take() else {
                continue;
            };
            if returned.contains(&c.path) {
                continue;
            }
            if let Some(t) = root_of(&c.path)
                .map(|r| self.catalog().table(&r))
                .transpose()?
                .flatten()
            {
                let folder = format!("{}/", t.root);
                if !returned.insert(folder.clone()) {
                    continue;
                }
                let text = crate::dataset::render::render_or_error(
                    &t.root,
                    t.kind,
                    t.table.as_ref(),
                    t.error.as_deref(),
                );
                let summary = text.lines().next().unwrap_or_default().to_string();
                let covered = covered(&mut out.asked, &text);
                hits.push(Hit {
                    words: out.asked.words(&format!("{folder}\n{summary}")),
                    summary,
                    title: None,
                    format: t.kind.as_str().to_string(),
                    reasons: c.evidence.reasons(&self.ranking),
                    relevance: relevance::relevance(&c.evidence, share(c.score, top), covered),
                    share: (share(c.score, top) * 100.0).round() / 100.0,
                    path: folder,
                    score: c.score,
                    collection: None,
                    companions: Vec::new(),
                    table: Some(HitTable {
                        kind: t.kind,
                        version: t.version.clone(),
                        member: c.path,
                    }),
                });
                continue;
            }
            let collection = c.collection.as_ref().and_then(|id| {
                collections.get(id).map(|d| {
                    let folded: Vec<&String> = p.folded.iter().map(|&i| &paths[i]).collect();
                    HitCollection {
                        id: id.clone(),
                        template: d.template.clone(),
                        members: d.members,
                        matching: folded.iter().map(|s| s.to_string()).collect(),
                        matched: folded.len(),
                        singled_out: c.evidence.own > 0,
                    }
                })
            });
            if let Some(id) = &c.collection {
                first_hit.entry(id.clone()).or_insert(hits.len());
            }
            returned.insert(c.path.clone());
            let mut companions = self.catalog().companions(&c.path)?;
            if let Some(coll) = c.collection.as_ref().and_then(|id| collections.get(id)) {
                let of_coll = summaries
                    .entry(coll.id.clone())
                    .or_insert_with(|| members::summaries(coll, &tables));
                companions.extend(of_coll.iter().cloned());
            }
            companions.retain(|m| !returned.contains(&m.path));
            companions.truncate(COMPANIONS_NAMED);
            let holder = hits.len();
            folded_under.extend(p.folded.iter().map(|&i| (i, holder)));
            companion_of.extend(companions.iter().map(|m| (m.path.clone(), holder)));
            hits.push(self.file_hit(&mut out, c, collection, companions, None)?);
        }
        if !expand && self.ranking.fill > 0.0 && hits.len() < k {
            // Folded members best first, each after the hit that holds it.
            folded_under.sort_unstable();
            for (i, holder) in folded_under {
                if hits.len() == k {
                    break;
                }
                let Some(c) = slots[i].take() else {
                    continue;
                };
                if returned.contains(&c.path) || root_of(&c.path).is_some() {
                    continue;
                }
                returned.insert(c.path.clone());
                let collection = c.collection.as_ref().and_then(|id| {
                    collections.get(id).map(|d| HitCollection {
                        id: id.clone(),
                        template: d.template.clone(),
                        members: d.members,
                        matching: Vec::new(),
                        matched: 0,
                        singled_out: false,
                    })
                });
                let above = hits[holder].path.clone();
                hits.push(self.file_hit(&mut out, c, collection, Vec::new(), Some(above))?);
            }
        }
        // Companions that are no hit yet: at the end of a short list (after the folded
        // members), or, when the list is full, after its first [`COMPANIONS_AFTER`] hits
        // (the first page stays the best-ranked files): a lookup or documentation a
        // question needs is a hit within a long enough list.
        let at = if hits.len() < k {
            hits.len()
        } else {
            COMPANIONS_AFTER
        };
        if !expand && self.ranking.fill > 0.0 && at < k {
            let mut extra: Vec<Hit> = Vec::new();
            for (path, holder) in companion_of {
                if extra.len() == k - at {
                    break;
                }
                if returned.contains(&path) || root_of(&path).is_some() {
                    continue;
                }
                let Some(c) = self.bare_candidate(&path, opts)? else {
                    continue;
                };
                returned.insert(path);
                let above = hits[holder].path.clone();
                extra.push(self.file_hit(&mut out, c, None, Vec::new(), Some(above))?);
            }
            let n = extra.len();
            hits.splice(at..at, extra);
            for first in first_hit.values_mut() {
                if *first >= at {
                    *first += n;
                }
            }
            first_hit.retain(|_, first| *first < k);
            // The hits pushed past `k` leave the list; their collections' first hits,
            // above, name them among the members that matched.
            for gone in hits.split_off(k.min(hits.len())) {
                if let Some(id) = gone.collection.map(|c| c.id) {
                    if first_hit.contains_key(&id) {
                        overflow.entry(id).or_default().push(gone.path);
                    }
                }
            }
        }
        for (id, more) in overflow {
            let Some(&first) = first_hit.get(&id) else {
                continue;
            };
            if let Some(hc) = hits[first].collection.as_mut() {
                let folded = std::mem::take(&mut hc.matching);
                let mut seen = HashSet::new();
                hc.matching = more
                    .into_iter()
                    .chain(folded)
                    .filter(|p| seen.insert(p.clone()))
                    .collect();
                hc.matched = hc.matching.len();
            }
        }
        Ok(hits)
    }

    /// The hit of file candidate `c`; `fills` names the hit above that it fills the
    /// list after (it is then weak, whatever it holds).
    fn file_hit(
        &self,
        out: &mut Out,
        mut c: Candidate,
        collection: Option<HitCollection>,
        companions: Vec<Companion>,
        fills: Option<String>,
    ) -> Result<Hit> {
        self.describe(&mut c)?;
        // Summaries only for what is returned. The description a person or an agent
        // reads (describe's default budget) is what the question's words are looked
        // for in, for the relevance label.
        let text = c
            .desc
            .as_ref()
            .map(|d| crate::render(&c.path, d, crate::RenderOptions { max_bytes: 2048 }))
            .unwrap_or_else(|| c.path.clone());
        let title = c.desc.as_ref().and_then(|d| d.title());
        let summary = titled(
            text.lines().next().unwrap_or_default(),
            &c.path,
            title.as_deref(),
        );
        let covered = covered(&mut out.asked, &text);
        let mut reasons = c.evidence.reasons(&self.ranking);
        if c.evidence.text.is_some() {
            reasons.extend(synonyms_in(&mut out.expansions, &text));
        }
        let share = share(c.score, out.top);
        let relevance = match &fills {
            Some(_) => Relevance::Weak,
            None => relevance::relevance(&c.evidence, share, covered),
        };
        reasons.extend(fills.map(Reason::Fills));
        Ok(Hit {
            words: out.asked.words(&format!("{}\n{summary}", c.path)),
            summary,
            title,
            format: c.row.format.as_str().to_string(),
            reasons,
            relevance,
            share: (share * 100.0).round() / 100.0,
            path: c.path,
            score: c.score,
            collection,
            companions,
            table: None,
        })
    }

    /// `path` as a candidate with no evidence of its own (a companion filling the
    /// list), unless the catalog no longer has it or the filters exclude it.
    fn bare_candidate(&self, path: &str, opts: &SearchOptions) -> Result<Option<Candidate>> {
        if opts.glob.as_ref().is_some_and(|g| !g.is_match(path)) {
            return Ok(None);
        }
        let Some(found) = self
            .catalog()
            .ranked_files(&[path], false)?
            .into_iter()
            .next()
            .flatten()
        else {
            return Ok(None);
        };
        if opts.format.is_some_and(|f| f != found.row.format) {
            return Ok(None);
        }
        Ok(Some(Candidate {
            path: path.to_string(),
            row: found.row,
            desc: None,
            described: false,
            collection: found.collection,
            evidence: Evidence::default(),
            score: 0.0,
        }))
    }
}

/// What every hit of one search is rendered against.
struct Out {
    /// The question's words, analyzed once for every hit's label and marks.
    asked: crate::search::QueryWords,
    /// The other spellings of its words that the full-text query searched, each with
    /// the words of both spellings analyzed once.
    expansions: Vec<(vocab::Expansion, QueryWords, QueryWords)>,
    /// The best score.
    top: f64,
}

/// The expansions whose other spelling `text` holds where it does not hold the word
/// asked: why a hit matched a question that does not say its words.
fn synonyms_in(
    expansions: &mut [(vocab::Expansion, QueryWords, QueryWords)],
    text: &str,
) -> Vec<Reason> {
    let mut out: Vec<Reason> = Vec::new();
    for (e, asked, also) in expansions.iter_mut() {
        let said = |r: &Reason| matches!(r, Reason::Synonym { asked, .. } if *asked == e.asked);
        if also.coverage(text).0 > 0 && asked.coverage(text).0 == 0 && !out.iter().any(said) {
            out.push(Reason::Synonym {
                asked: e.asked.clone(),
                found: e.also.clone(),
            });
        }
    }
    out
}

/// The first line of a description (`path — format, shape`) with `title` after the
/// path: what the file is about, before what it is.
fn titled(first: &str, path: &str, title: Option<&str>) -> String {
    match (
        title,
        first.strip_prefix(path).and_then(|r| r.strip_prefix(" — ")),
    ) {
        (Some(t), Some(rest)) => format!("{path} — “{t}” — {rest}"),
        _ => first.to_string(),
    }
}

/// The share of the question's words `text` holds.
fn covered(asked: &mut crate::search::QueryWords, text: &str) -> f64 {
    let (held, of) = asked.coverage(text);
    if of == 0 {
        0.0
    } else {
        held as f64 / of as f64
    }
}

/// `score` as a share of the best score `top` (0 when nothing scored).
fn share(score: f64, top: f64) -> f64 {
    if top > 0.0 {
        (score / top).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::titled;

    #[test]
    fn a_title_goes_after_the_path_and_none_leaves_the_line_as_it_is() {
        let line = "manual.md — Markdown, 22.1 KB, 338 lines";
        assert_eq!(
            titled(line, "manual.md", Some("Merchant Guide")),
            "manual.md — “Merchant Guide” — Markdown, 22.1 KB, 338 lines"
        );
        assert_eq!(titled(line, "manual.md", None), line);
        // A line that does not start with the path is left alone.
        assert_eq!(titled(line, "other.md", Some("T")), line);
    }
}
