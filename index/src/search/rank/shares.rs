//! Shares of the list: what a question asks in several parts (time windows, clauses)
//! each keeps a place near the top, rather than the best-scored part's files filling it.
//! Pure: the searcher gives orders and lists, these give them back merged.

/// The order in which to list candidates (`lanes[i]`: the asked windows candidate `i`
/// covers as a member of a time-varying collection, `None` or empty for any other file),
/// best first as given. Other files keep their places; the places members hold are
/// given to members in turns by window, so that the first member of each window comes
/// before the second of any. A member covering several windows counts for each.
pub(crate) fn take_turns(lanes: &[Option<Vec<usize>>], windows: usize) -> Vec<usize> {
    let is_member = |i: usize| lanes[i].as_ref().is_some_and(|ws| !ws.is_empty());
    let mut served = vec![0usize; windows];
    let mut members: Vec<usize> = (0..lanes.len()).filter(|&i| is_member(i)).collect();
    let mut turns: Vec<usize> = Vec::with_capacity(members.len());
    while !members.is_empty() {
        // The least-served window that members still left cover; its best member next.
        let least = members
            .iter()
            .flat_map(|&i| lanes[i].iter().flatten())
            .map(|&w| served[w])
            .min()
            .expect("members cover windows");
        let at = members
            .iter()
            .position(|&i| lanes[i].iter().flatten().any(|&w| served[w] == least))
            .expect("a member of a least-served window is left");
        let i = members.remove(at);
        for &w in lanes[i].iter().flatten() {
            served[w] += 1;
        }
        turns.push(i);
    }
    let mut turns = turns.into_iter();
    (0..lanes.len())
        .map(|i| {
            if is_member(i) {
                turns.next().expect("one turn per member place")
            } else {
                i
            }
        })
        .collect()
}

/// Words that open a new part after a comma (`…, and list…`, `…, then…`).
const JOINS: [&str; 5] = ["and then", "and also", "as well as", "then", "and"];

/// The parts of a question asking several things, at most `max`: clauses split at `;`,
/// at sentence ends, and where a comma is followed by `and`, `then`, `and then`, `and
/// also` or `as well as` (also `as well as` without a comma). A bare `and` never splits,
/// so ranges ("between 2001 and 2005") and lists ("Ohio and Iowa") stay whole. A piece
/// of fewer than two content words ([`content_words`]) joins the one before it. Fewer
/// than two parts: empty (the question is one part).
pub(crate) fn parts(question: &str, max: usize) -> Vec<String> {
    let mut pieces: Vec<String> = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = question.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let ends_sentence =
            matches!(c, '.' | '?' | '!') && next.is_none_or(char::is_whitespace) && {
                // "U.S. data", "e.g. rain", "No. 5": a period after one or two letters
                // or a digit ends no sentence.
                let word: String = current
                    .chars()
                    .rev()
                    .take_while(|c| c.is_alphanumeric())
                    .collect();
                c != '.' || word.chars().count() > 2 && !word.chars().all(|c| c.is_ascii_digit())
            };
        if c == ';' || ends_sentence {
            pieces.push(std::mem::take(&mut current));
            i += 1;
            continue;
        }
        if c == ',' {
            let rest: String = chars[i + 1..].iter().collect();
            let rest_l = rest.trim_start().to_lowercase();
            if let Some(join) = JOINS.iter().find(|j| {
                rest_l.starts_with(*j) && rest_l[j.len()..].starts_with(|c: char| c.is_whitespace())
            }) {
                pieces.push(std::mem::take(&mut current));
                let skipped = rest.len() - rest.trim_start().len() + join.len();
                i += 1 + rest[..skipped].chars().count();
                continue;
            }
        }
        if (c == ' ') && {
            let rest: String = chars[i..].iter().take(12).collect();
            rest.to_lowercase().starts_with(" as well as ")
        } {
            pieces.push(std::mem::take(&mut current));
            i += " as well as ".chars().count();
            continue;
        }
        current.push(c);
        i += 1;
    }
    pieces.push(current);
    let mut out: Vec<String> = Vec::new();
    for p in pieces.into_iter().map(|p| p.trim().to_string()) {
        if p.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if content_words(&p) < 2 => {
                last.push_str(", ");
                last.push_str(&p);
            }
            _ => out.push(p),
        }
    }
    // A short first piece ("In 2019") joins the next.
    if out.len() >= 2 && content_words(&out[0]) < 2 {
        let first = out.remove(0);
        out[0] = format!("{first}, {}", out[0]);
    }
    if out.len() > max.max(1) {
        let tail = out.split_off(max.max(1) - 1).join("; ");
        out.push(tail);
    }
    if out.len() < 2 {
        return Vec::new();
    }
    out
}

/// Words that say little of what a part is about.
const FUNCTION_WORDS: [&str; 19] = [
    "the", "and", "for", "with", "from", "its", "are", "was", "were", "what", "which", "how",
    "this", "that", "into", "per", "all", "use", "using",
];

/// Words of three letters or more of `piece` that are not [`FUNCTION_WORDS`].
fn content_words(piece: &str) -> usize {
    piece
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3 && !FUNCTION_WORDS.contains(&w.to_lowercase().as_str()))
        .count()
}

/// Lists merged in turns (the first of each, then the second of each, …), each item
/// once (`key` tells them apart), at most `k`; with the index of the list each came
/// from.
pub(crate) fn in_turns<T>(
    lists: Vec<Vec<T>>,
    k: usize,
    key: impl Fn(&T) -> String,
) -> Vec<(usize, T)> {
    let mut iters: Vec<std::vec::IntoIter<T>> = lists.into_iter().map(Vec::into_iter).collect();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    loop {
        let mut any = false;
        for (li, it) in iters.iter_mut().enumerate() {
            if out.len() == k {
                return out;
            }
            // Each list gives its next item not given yet.
            for item in it.by_ref() {
                any = true;
                if seen.insert(key(&item)) {
                    out.push((li, item));
                    break;
                }
            }
        }
        if !any {
            return out;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_take_turns_and_other_files_keep_their_places() {
        // Five members of window 0 ahead of window 1's two; file 2 belongs to none.
        let lanes = [
            Some(vec![0]),
            Some(vec![0]),
            None,
            Some(vec![0]),
            Some(vec![0]),
            Some(vec![0]),
            Some(vec![1]),
            Some(vec![1]),
        ];
        assert_eq!(take_turns(&lanes, 2), [0, 6, 2, 1, 7, 3, 4, 5]);
        // One window asked, or no members: the order is kept.
        let one = [Some(vec![0]), None, Some(vec![0])];
        assert_eq!(take_turns(&one, 1), [0, 1, 2]);
        // A member covering both windows serves both.
        let both = [Some(vec![0, 1]), Some(vec![0]), Some(vec![1])];
        assert_eq!(take_turns(&both, 2), [0, 1, 2]);
    }

    #[test]
    fn clauses_split_and_ranges_and_lists_stay_whole() {
        let q = "Which stations recorded the highest rainfall between 2001 and 2005; \
                 list the hospitals in Ohio and Iowa by beds, and report the median \
                 household income per county. Also give the unemployment rate, then \
                 the population of each state as well as its land area";
        assert_eq!(
            parts(q, 6),
            [
                "Which stations recorded the highest rainfall between 2001 and 2005",
                "list the hospitals in Ohio and Iowa by beds",
                "report the median household income per county",
                "Also give the unemployment rate",
                "the population of each state",
                "its land area",
            ]
        );
        // At most `max`: the rest is the last part.
        assert_eq!(parts(q, 3).len(), 3);
        // One clause, or short pieces: no parts.
        assert!(parts("rainfall between 2001 and 2005 in Ohio and Iowa", 6).is_empty());
        assert!(parts("Mean fare by class. Use the U.S. data.", 6).is_empty());
        assert!(parts("Mean fare by class; per sex", 6).is_empty());
    }

    #[test]
    fn lists_merge_in_turns_each_item_once() {
        let merged = in_turns(
            vec![vec!["a", "b", "c"], vec!["b", "d"], vec!["e"]],
            10,
            |s| s.to_string(),
        );
        assert_eq!(merged, [(0, "a"), (1, "b"), (2, "e"), (0, "c"), (1, "d")]);
        assert_eq!(
            in_turns(vec![vec![1, 2, 3], vec![4]], 2, |n| n.to_string()).len(),
            2
        );
    }
}
