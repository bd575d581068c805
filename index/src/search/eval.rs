//! Retrieval evaluation: capped recall@K and MRR over a task file of
//! `{"query": …, "relevant": [paths or globs]}` lines, overall and per group when the
//! lines name one (`"mechanism"` or `"group"`).

use super::engine::{SearchOptions, Searcher};
use super::glob::PathGlob;
use super::rank::Relevance;
use serde::{Deserialize, Serialize};

/// One evaluation task.
#[derive(Debug, Clone, Deserialize)]
pub struct Task {
    /// The question.
    pub query: String,
    /// Relevant files: relative paths or glob patterns (`*`, `?`, `**`), compiled as
    /// the task file is read (a bad one is an error naming its line).
    pub relevant: Vec<PathGlob>,
    /// The group the task reports under (the retrieval mechanism it exercises).
    #[serde(default, rename = "mechanism", alias = "group")]
    pub group: Option<String>,
}

/// Read a JSONL task file; blank lines are skipped, a bad line is an error naming it.
pub fn read_tasks(text: &str) -> Result<Vec<Task>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                format!(
                    "line {}: {e} (expected {{\"query\": …, \"relevant\": [...]}})",
                    i + 1
                )
            })
        })
        .collect()
}

/// The outcome of one task.
#[derive(Debug, Clone, Serialize)]
pub struct TaskResult {
    /// The question.
    pub query: String,
    /// 1-based rank of the first relevant result, if any in the list.
    pub first_hit: Option<usize>,
    /// Relevant patterns not found in the largest K.
    pub missed: Vec<String>,
    /// The top results.
    pub top: Vec<String>,
    /// Its group, if the task names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Its capped recall at each K (the report's order).
    pub recall: Vec<f64>,
}

/// The figures of one group of tasks.
#[derive(Debug, Clone, Serialize)]
pub struct GroupReport {
    /// The group's name.
    pub group: String,
    /// Tasks in it.
    pub tasks: usize,
    /// (K, capped recall@K) averaged over its tasks.
    pub recall: Vec<(usize, f64)>,
    /// Its mean reciprocal rank.
    pub mrr: f64,
}

/// Aggregated metrics.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Tasks evaluated.
    pub tasks: usize,
    /// (K, capped recall@K): hits in the top K over min(K, relevant count), averaged.
    pub recall: Vec<(usize, f64)>,
    /// Mean reciprocal rank of the first relevant result.
    pub mrr: f64,
    /// Per-group figures, in order of first appearance (empty when no task names one).
    pub groups: Vec<GroupReport>,
    /// Per-task outcomes.
    pub results: Vec<TaskResult>,
}

/// The ranked paths of `searcher` for `query` as evaluation counts them: the hits'
/// paths, collections expanded unless `fold`. A hit's companions are not counted at its
/// place: a caller reading the list takes hits, and companions are hits of their own
/// further down (at their own score, or filling the list).
pub fn ranked_paths(
    searcher: &Searcher,
    query: &str,
    k: usize,
    fold: bool,
) -> crate::Result<Vec<String>> {
    let hits = searcher.search(
        query,
        &SearchOptions {
            k,
            expand: !fold,
            ..Default::default()
        },
    )?;
    Ok(hits.into_iter().map(|h| h.path).collect())
}

/// Evaluate `search` (query → ranked relative paths) on `tasks` at cut-offs `ks`.
pub fn evaluate(
    tasks: &[Task],
    ks: &[usize],
    mut search: impl FnMut(&str, usize) -> Vec<String>,
) -> Report {
    let kmax = ks.iter().copied().max().unwrap_or(10);
    let mut results = Vec::new();
    for t in tasks {
        let ranked = search(&t.query, kmax);
        let is_rel = |p: &str| t.relevant.iter().any(|r| r.is_match(p));
        let first_hit = ranked.iter().position(|p| is_rel(p)).map(|i| i + 1);
        let recall = ks
            .iter()
            .map(|&k| {
                let hits = ranked.iter().take(k).filter(|p| is_rel(p)).count();
                let denom = k.min(t.relevant.len()).max(1);
                hits.min(denom) as f64 / denom as f64
            })
            .collect();
        let missed = t
            .relevant
            .iter()
            .filter(|r| !ranked.iter().any(|p| r.is_match(p)))
            .map(|r| r.as_str().to_string())
            .collect();
        results.push(TaskResult {
            query: t.query.clone(),
            first_hit,
            missed,
            top: ranked.into_iter().take(5).collect(),
            group: t.group.clone(),
            recall,
        });
    }
    let overall = aggregate("", ks, &results.iter().collect::<Vec<_>>());
    let mut names: Vec<&str> = Vec::new();
    for g in results.iter().filter_map(|r| r.group.as_deref()) {
        if !names.contains(&g) {
            names.push(g);
        }
    }
    let groups = names
        .iter()
        .map(|&g| {
            let members: Vec<_> = results
                .iter()
                .filter(|r| r.group.as_deref() == Some(g))
                .collect();
            aggregate(g, ks, &members)
        })
        .collect();
    Report {
        tasks: overall.tasks,
        recall: overall.recall,
        mrr: overall.mrr,
        groups,
        results,
    }
}

/// Average the outcomes of `results` as the figures of `group`.
fn aggregate(group: &str, ks: &[usize], results: &[&TaskResult]) -> GroupReport {
    let n = results.len().max(1) as f64;
    let recall = ks
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, results.iter().map(|r| r.recall[i]).sum::<f64>() / n))
        .collect();
    let mrr = results
        .iter()
        .filter_map(|r| r.first_hit)
        .map(|h| 1.0 / h as f64)
        .sum::<f64>()
        / n;
    GroupReport {
        group: group.to_string(),
        tasks: results.len(),
        recall,
        mrr,
    }
}

/// How often hits of one relevance label were relevant, over a task file.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LabelFigures {
    /// The label.
    pub label: Relevance,
    /// Hits with it among the first `k` of every task.
    pub hits: usize,
    /// Those that were relevant (the file, or a member its collection names).
    pub relevant: usize,
    /// First hits with it.
    pub first: usize,
    /// Those that were relevant.
    pub first_relevant: usize,
}

/// The precision of each relevance label among the first `k` hits of `search` as people
/// see it (collections folded): what the labels mean, measured.
pub fn label_precision(
    searcher: &Searcher,
    tasks: &[Task],
    k: usize,
) -> crate::Result<Vec<LabelFigures>> {
    let mut out: Vec<LabelFigures> = [Relevance::Strong, Relevance::Fair, Relevance::Weak]
        .into_iter()
        .map(|label| LabelFigures {
            label,
            hits: 0,
            relevant: 0,
            first: 0,
            first_relevant: 0,
        })
        .collect();
    for t in tasks {
        let hits = searcher.search(
            &t.query,
            &SearchOptions {
                k,
                ..Default::default()
            },
        )?;
        for (i, h) in hits.iter().enumerate() {
            let is_rel = |p: &str| t.relevant.iter().any(|r| r.is_match(p));
            let rel = is_rel(&h.path)
                || h.collection
                    .as_ref()
                    .is_some_and(|c| c.matching.iter().any(|m| is_rel(m)));
            let f = out
                .iter_mut()
                .find(|f| f.label == h.relevance)
                .expect("every label has a row");
            f.hits += 1;
            f.relevant += usize::from(rel);
            if i == 0 {
                f.first += 1;
                f.first_relevant += usize::from(rel);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_recall_and_mrr() {
        let tasks = read_tasks(
            "{\"query\":\"a\",\"relevant\":[\"a.csv\"]}\n\n{\"query\":\"b\",\"relevant\":[\"b1.csv\",\"b2.csv\",\"b3.csv\"]}\n",
        )
        .unwrap();
        let r = evaluate(&tasks, &[1, 2], |q, _| match q {
            "a" => vec!["z.csv".into(), "a.csv".into()],
            _ => vec!["b2.csv".into(), "b9.csv".into()],
        });
        // a: hit at rank 2; b: hit at rank 1, 1 of min(K, 3) relevant found.
        assert_eq!(r.recall, vec![(1, 0.5), (2, (1.0 + 0.5) / 2.0)]);
        assert!((r.mrr - 0.75).abs() < 1e-9);
        assert_eq!(r.results[1].missed, ["b1.csv", "b3.csv"]);
        assert!(r.groups.is_empty());
        assert!(read_tasks("{bad").unwrap_err().starts_with("line 1"));
        let e = read_tasks("{\"query\":\"a\",\"relevant\":[\"a.csv\"]}\n{\"query\":\"b\",\"relevant\":[\"b/[x.csv\"]}")
            .unwrap_err();
        assert!(
            e.starts_with("line 2") && e.contains("not a valid glob"),
            "{e}"
        );
    }

    #[test]
    fn groups_report_their_own_figures() {
        let tasks = read_tasks(concat!(
            "{\"query\":\"a\",\"relevant\":[\"a.csv\"],\"mechanism\":\"x\"}\n",
            "{\"query\":\"b\",\"relevant\":[\"b.csv\"],\"group\":\"y\"}\n",
            "{\"query\":\"c\",\"relevant\":[\"c.csv\"],\"mechanism\":\"x\"}\n",
        ))
        .unwrap();
        let r = evaluate(&tasks, &[1], |q, _| match q {
            "a" => vec!["a.csv".into()],
            "b" => vec!["z.csv".into(), "b.csv".into()],
            _ => vec![],
        });
        let g: Vec<_> = r
            .groups
            .iter()
            .map(|g| (g.group.as_str(), g.tasks, g.recall[0].1, g.mrr))
            .collect();
        assert_eq!(g, [("x", 2, 0.5, 0.5), ("y", 1, 0.0, 0.5)]);
        assert!((r.mrr - 0.5).abs() < 1e-9);
    }
}
