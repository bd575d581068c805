//! The debounce: paths that had events, waiting to be quiet before they are indexed.
//!
//! Pure bookkeeping — the clock and the stability test are passed in — so that the
//! rules are tested without sleeping.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// When a path was first and last named by an event since it was last indexed.
#[derive(Debug, Clone, Copy)]
struct Slot {
    first: Instant,
    last: Instant,
}

/// Paths waiting to be indexed.
#[derive(Debug, Default)]
pub struct Pending {
    slots: HashMap<PathBuf, Slot>,
}

impl Pending {
    /// An event named `path` at `now`.
    pub fn touch(&mut self, path: PathBuf, now: Instant) {
        self.slots
            .entry(path)
            .and_modify(|s| s.last = s.last.max(now))
            .or_insert(Slot {
                first: now,
                last: now,
            });
    }

    /// Number of waiting paths.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// No waiting paths.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Forget every waiting path (a full rescan covers them).
    pub fn clear(&mut self) {
        self.slots.clear();
    }

    /// Take the paths ready at `now`, with the time each was first named: quiet for
    /// `debounce` and `stable` (its content no longer moving), or waiting for `max_wait`
    /// already — a file written without pause is indexed now and then rather than never.
    pub fn take_ready(
        &mut self,
        now: Instant,
        debounce: Duration,
        max_wait: Duration,
        mut stable: impl FnMut(&Path) -> bool,
    ) -> Vec<(PathBuf, Instant)> {
        let mut ready = Vec::new();
        self.slots.retain(|p, s| {
            let quiet = now.saturating_duration_since(s.last) >= debounce;
            let overdue = now.saturating_duration_since(s.first) >= max_wait;
            if overdue || (quiet && stable(p)) {
                ready.push((p.clone(), s.first));
                false
            } else {
                true
            }
        });
        ready.sort();
        ready
    }

    /// The earliest moment a waiting path can become ready (the loop sleeps until then
    /// at most); `None` when nothing waits.
    pub fn next_due(&self, debounce: Duration, max_wait: Duration) -> Option<Instant> {
        self.slots
            .values()
            .map(|s| (s.last + debounce).min(s.first + max_wait))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEBOUNCE: Duration = Duration::from_millis(300);
    const MAX_WAIT: Duration = Duration::from_secs(2);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn names(v: Vec<(PathBuf, Instant)>) -> Vec<String> {
        v.into_iter()
            .map(|(p, _)| p.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_path_is_ready_once_quiet_for_the_debounce() {
        let t0 = Instant::now();
        let mut p = Pending::default();
        p.touch("a".into(), t0);
        p.touch("b".into(), t0 + ms(100));
        assert_eq!(p.next_due(DEBOUNCE, MAX_WAIT), Some(t0 + ms(300)));
        assert!(p
            .take_ready(t0 + ms(299), DEBOUNCE, MAX_WAIT, |_| true)
            .is_empty());
        assert_eq!(
            names(p.take_ready(t0 + ms(300), DEBOUNCE, MAX_WAIT, |_| true)),
            ["a"]
        );
        assert_eq!(
            names(p.take_ready(t0 + ms(400), DEBOUNCE, MAX_WAIT, |_| true)),
            ["b"]
        );
        assert!(p.is_empty() && p.next_due(DEBOUNCE, MAX_WAIT).is_none());
    }

    #[test]
    fn a_file_still_written_waits_until_max_wait() {
        let t0 = Instant::now();
        let mut p = Pending::default();
        // An event every 100 ms: never quiet for 300 ms.
        for i in 0..25 {
            let now = t0 + ms(100 * i);
            p.touch("growing.csv".into(), now);
            let taken = p.take_ready(now, DEBOUNCE, MAX_WAIT, |_| true);
            if i < 20 {
                assert!(taken.is_empty(), "taken at {i}");
            } else {
                // Pending since t0 for 2 s: taken despite the burst, then waits anew.
                assert_eq!(names(taken), ["growing.csv"], "at {i}");
                p.touch("growing.csv".into(), now);
                break;
            }
        }
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn an_unstable_quiet_path_stays_until_stable() {
        let t0 = Instant::now();
        let mut p = Pending::default();
        p.touch("x".into(), t0);
        p.touch("y".into(), t0);
        let unstable_x = |path: &Path| path != Path::new("x");
        assert_eq!(
            names(p.take_ready(t0 + ms(500), DEBOUNCE, MAX_WAIT, unstable_x)),
            ["y"]
        );
        assert_eq!(p.len(), 1);
        let (path, first) = p
            .take_ready(t0 + ms(600), DEBOUNCE, MAX_WAIT, |_| true)
            .pop()
            .unwrap();
        assert_eq!((path, first), (PathBuf::from("x"), t0));
    }

    #[test]
    fn clear_drops_everything() {
        let t0 = Instant::now();
        let mut p = Pending::default();
        for i in 0..10 {
            p.touch(format!("f{i}").into(), t0);
        }
        assert_eq!(p.len(), 10);
        p.clear();
        assert!(p
            .take_ready(t0 + MAX_WAIT, DEBOUNCE, MAX_WAIT, |_| true)
            .is_empty());
    }
}
