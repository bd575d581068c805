//! Retrieval evaluation: capped recall@K and MRR over a task file of
//! `{"query": …, "relevant": [paths or globs]}` lines.

use super::glob::PathGlob;
use serde::{Deserialize, Serialize};

/// One evaluation task.
#[derive(Debug, Clone, Deserialize)]
pub struct Task {
    /// The question.
    pub query: String,
    /// Relevant files: relative paths or glob patterns (`*`, `?`, `**`), compiled as
    /// the task file is read (a bad one is an error naming its line).
    pub relevant: Vec<PathGlob>,
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
    /// Per-task outcomes.
    pub results: Vec<TaskResult>,
}

/// Evaluate `search` (query → ranked relative paths) on `tasks` at cut-offs `ks`.
pub fn evaluate(
    tasks: &[Task],
    ks: &[usize],
    mut search: impl FnMut(&str, usize) -> Vec<String>,
) -> Report {
    let kmax = ks.iter().copied().max().unwrap_or(10);
    let mut sums = vec![0.0; ks.len()];
    let mut mrr = 0.0;
    let mut results = Vec::new();
    for t in tasks {
        let ranked = search(&t.query, kmax);
        let is_rel = |p: &str| t.relevant.iter().any(|r| r.is_match(p));
        let first_hit = ranked.iter().position(|p| is_rel(p)).map(|i| i + 1);
        if let Some(r) = first_hit {
            mrr += 1.0 / r as f64;
        }
        for (i, &k) in ks.iter().enumerate() {
            let hits = ranked.iter().take(k).filter(|p| is_rel(p)).count();
            let denom = k.min(t.relevant.len()).max(1);
            sums[i] += hits.min(denom) as f64 / denom as f64;
        }
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
        });
    }
    let n = tasks.len().max(1) as f64;
    Report {
        tasks: tasks.len(),
        recall: ks.iter().zip(sums).map(|(&k, s)| (k, s / n)).collect(),
        mrr: mrr / n,
        results,
    }
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
        assert!(read_tasks("{bad").unwrap_err().starts_with("line 1"));
        let e = read_tasks("{\"query\":\"a\",\"relevant\":[\"a.csv\"]}\n{\"query\":\"b\",\"relevant\":[\"b/[x.csv\"]}")
            .unwrap_err();
        assert!(
            e.starts_with("line 2") && e.contains("not a valid glob"),
            "{e}"
        );
    }
}
