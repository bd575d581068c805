//! Folding: the members of a collection (same-schema siblings) are one answer unless
//! their own evidence tells them apart. Members whose own evidence is the best of
//! their collection (they cover the days asked where their siblings do not; the
//! question names them) are hits of their own, up to a budget; the rest fold under the
//! collection's first hit, which is its member with the best own evidence. Pure: the
//! searcher gives the ranked candidates and turns the plan into hits.

use std::collections::{HashMap, HashSet};

/// A ranked candidate as folding sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ranked<'a> {
    /// Its collection, if any.
    pub collection: Option<&'a str>,
    /// Kinds of evidence that set it apart from its siblings
    /// ([`Evidence::own`](super::evidence::Evidence::own)).
    pub own: u32,
}

/// A planned hit: the candidate it shows, and the members folded under it (best first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Planned {
    pub at: usize,
    pub folded: Vec<usize>,
}

/// The hits of `ranked` (best first), in order: every candidate once, as a hit or
/// folded under its collection's first hit. `expand` makes every candidate a hit;
/// `member_hits` bounds the members of one collection shown on their own.
pub(crate) fn fold(ranked: &[Ranked], expand: bool, member_hits: usize) -> Vec<Planned> {
    if expand {
        return (0..ranked.len())
            .map(|at| Planned {
                at,
                folded: Vec::new(),
            })
            .collect();
    }
    // Per collection: the best own evidence, and the members that have it (best first).
    let mut best: HashMap<&str, u32> = HashMap::new();
    for r in ranked {
        if let Some(c) = r.collection {
            let b = best.entry(c).or_default();
            *b = (*b).max(r.own);
        }
    }
    let mut apart: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, r) in ranked.iter().enumerate() {
        if let Some(c) = r.collection {
            let b = best[c];
            let members = apart.entry(c).or_default();
            if b > 0 && r.own == b && members.len() < member_hits.max(1) {
                members.push(i);
            }
        }
    }
    let own_hit: HashSet<usize> = apart.values().flatten().copied().collect();

    let mut plan: Vec<Planned> = Vec::new();
    let mut first_of: HashMap<&str, usize> = HashMap::new();
    let mut shown: HashSet<usize> = HashSet::new();
    for (i, r) in ranked.iter().enumerate() {
        let Some(c) = r.collection else {
            plan.push(Planned {
                at: i,
                folded: Vec::new(),
            });
            continue;
        };
        if shown.contains(&i) {
            continue;
        }
        match first_of.get(c) {
            // The collection's first hit, at its best candidate's place: the member
            // with the best own evidence (this candidate, when none has any).
            None => {
                let at = apart[c].first().copied().unwrap_or(i);
                first_of.insert(c, plan.len());
                shown.insert(at);
                plan.push(Planned {
                    at,
                    folded: Vec::new(),
                });
                if at != i {
                    plan.last_mut().expect("just pushed").folded.push(i);
                }
            }
            Some(_) if own_hit.contains(&i) => {
                shown.insert(i);
                plan.push(Planned {
                    at: i,
                    folded: Vec::new(),
                });
            }
            Some(&first) => plan[first].folded.push(i),
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(collection: Option<&str>, own: u32) -> Ranked<'_> {
        Ranked { collection, own }
    }

    fn shape(plan: &[Planned]) -> Vec<(usize, Vec<usize>)> {
        plan.iter().map(|p| (p.at, p.folded.clone())).collect()
    }

    #[test]
    fn members_without_own_evidence_fold_into_the_best_ranked() {
        let ranked = [
            r(Some("a"), 0),
            r(None, 0),
            r(Some("a"), 0),
            r(Some("a"), 0),
        ];
        assert_eq!(
            shape(&fold(&ranked, false, 24)),
            [(0, vec![2, 3]), (1, vec![])]
        );
        assert_eq!(fold(&ranked, true, 24).len(), 4);
    }

    #[test]
    fn the_member_with_the_best_own_evidence_is_shown_at_the_collections_place() {
        // The asked day's member ranks third among its siblings.
        let ranked = [
            r(Some("a"), 0),
            r(None, 0),
            r(Some("a"), 0),
            r(Some("a"), 1),
        ];
        assert_eq!(
            shape(&fold(&ranked, false, 24)),
            [(3, vec![0, 2]), (1, vec![])]
        );
    }

    #[test]
    fn members_set_apart_are_hits_of_their_own_up_to_the_budget() {
        // A year range: four members cover asked days, one does not.
        let ranked = [
            r(Some("y"), 1),
            r(Some("y"), 0),
            r(None, 0),
            r(Some("y"), 1),
            r(Some("y"), 1),
            r(Some("y"), 1),
        ];
        assert_eq!(
            shape(&fold(&ranked, false, 24)),
            [
                (0, vec![1]),
                (2, vec![]),
                (3, vec![]),
                (4, vec![]),
                (5, vec![])
            ]
        );
        assert_eq!(
            shape(&fold(&ranked, false, 2)),
            [(0, vec![1, 4, 5]), (2, vec![]), (3, vec![])]
        );
    }

    #[test]
    fn only_the_strongest_own_evidence_sets_members_apart() {
        // Every state file covers the year asked; the one the question names also has
        // its name: it alone is shown.
        let ranked = [
            r(Some("s"), 1),
            r(Some("s"), 2),
            r(Some("s"), 1),
            r(Some("t"), 0),
        ];
        assert_eq!(
            shape(&fold(&ranked, false, 24)),
            [(1, vec![0, 2]), (3, vec![])]
        );
    }
}
