//! Retrieval evaluation: capped recall@K and MRR over a task file of
//! `{"query": …, "relevant": [paths or globs]}` lines.

use serde::{Deserialize, Serialize};

/// One evaluation task.
#[derive(Debug, Clone, Deserialize)]
pub struct Task {
    /// The question.
    pub query: String,
    /// Relevant files: relative paths or glob patterns (`*`, `?`, `**`).
    pub relevant: Vec<String>,
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

/// `pattern` matches `path`: `**` spans directories, `*` and `?` do not cross `/`.
pub fn glob_match(pattern: &str, path: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) if p.get(1) == Some(&b'*') => {
                let rest = p[2..].strip_prefix(b"/").unwrap_or(&p[2..]);
                (0..=s.len()).any(|i| go(rest, &s[i..]))
            }
            (Some(b'*'), _) => (0..=s.len())
                .take_while(|&i| i == 0 || s[i - 1] != b'/')
                .any(|i| go(&p[1..], &s[i..])),
            (Some(b'?'), Some(c)) if *c != b'/' => go(&p[1..], &s[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &s[1..]),
            _ => false,
        }
    }
    go(pattern.as_bytes(), path.as_bytes())
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
        let is_rel = |p: &str| t.relevant.iter().any(|r| glob_match(r, p));
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
            .filter(|r| !ranked.iter().any(|p| glob_match(r, p)))
            .cloned()
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
    fn globs() {
        assert!(glob_match("a/*.csv", "a/x.csv"));
        assert!(!glob_match("a/*.csv", "a/b/x.csv"));
        assert!(glob_match("a/**/x.csv", "a/b/c/x.csv"));
        assert!(glob_match("**/x.csv", "x.csv"));
        assert!(glob_match("x?.csv", "x1.csv"));
        assert!(!glob_match("x.csv", "y.csv"));
    }

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
    }
}
