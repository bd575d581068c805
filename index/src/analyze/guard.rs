//! The one panic boundary around every analyzer.
//!
//! Analyzers read hostile bytes through crates that sometimes assert or index out of
//! bounds. A panic there must become that file's recorded error, not take down the
//! indexing run (a rayon pool) or print a backtrace over the progress display. The
//! boundary catches the unwind; a panic hook, installed once and chained to the one it
//! replaces, stays quiet while the current thread is inside a boundary and keeps the
//! panic's location for the error message.

use super::AnalyzeError;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// How many boundaries the current thread is inside (archive members nest them).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Where the last quiet panic of this thread happened.
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs the hook that silences panics inside a boundary; any other panic goes to the
/// hook that was there before (the default one prints it).
fn install_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if DEPTH.with(Cell::get) > 0 {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()));
                LOCATION.with(|l| *l.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
}

/// Leaves the boundary even when the closure unwinds.
struct Inside;

impl Inside {
    fn enter() -> Inside {
        DEPTH.with(|d| d.set(d.get() + 1));
        Inside
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Runs the analyzer call `f`; a panic in it becomes an error naming `analyzer`.
pub(crate) fn run<T>(
    analyzer: &str,
    f: impl FnOnce() -> Result<T, AnalyzeError>,
) -> Result<T, AnalyzeError> {
    install_hook();
    LOCATION.with(|l| l.borrow_mut().take());
    let result = {
        let _inside = Inside::enter();
        catch_unwind(AssertUnwindSafe(f))
    };
    result.unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_string());
        let at = LOCATION
            .with(|l| l.borrow_mut().take())
            .map(|l| format!(" at {l}"))
            .unwrap_or_default();
        Err(AnalyzeError::Panicked(format!(
            "the {analyzer} analyzer crashed on this file: {what}{at} \
             (a bug in lakestar: please report it with the file if you can)"
        )))
    })
}

#[cfg(test)]
mod tests {
    use super::super::{describe_with, Analyzer, Content, Format, Source};
    use super::*;

    /// An analyzer with a bug: it indexes past the end of its input.
    struct Buggy;

    impl Analyzer for Buggy {
        fn name(&self) -> &'static str {
            "buggy"
        }
        fn version(&self) -> u32 {
            1
        }
        fn analyze(&self, src: &Source, _format: Format) -> Result<Content, AnalyzeError> {
            let head = src.head();
            let i = head.len() + usize::from(head[0]);
            Ok(Content::Opaque(super::super::Opaque {
                detected: format!("{}", head[i]),
                mime: None,
            }))
        }
    }

    const CHILD: &str = "LAKESTAR_GUARD_CHILD";

    #[test]
    fn a_panicking_analyzer_yields_an_error_description() {
        let src = Source::from_bytes("x.bin", vec![7, 8, 9]);
        let d = describe_with(&Buggy, &src, Format::Binary);
        let e = d.error.expect("an error");
        assert!(e.contains("the buggy analyzer crashed"), "{e}");
        assert!(e.contains("index out of bounds"), "{e}");
        assert!(e.contains("guard.rs:"), "{e}");
        assert!(e.contains("bug in lakestar"), "{e}");
        assert!(matches!(d.content, Content::Opaque(_)));
        assert_eq!(d.analyzer, "buggy@1");
        // Outside a boundary, panics still reach the previous hook and unwind as usual.
        assert_eq!(DEPTH.with(Cell::get), 0);
    }

    /// Runs in a child process (see below): describes with the buggy analyzer on many
    /// threads at once, nested in a second boundary, as archives and rayon do.
    #[test]
    fn child_describes_with_a_buggy_analyzer() {
        if std::env::var_os(CHILD).is_none() {
            return;
        }
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let src = Source::from_bytes("x.bin", vec![1]);
                    let outer = run("outer", || {
                        let d = describe_with(&Buggy, &src, Format::Binary);
                        Ok(d.error)
                    });
                    assert!(outer.unwrap().is_some());
                });
            }
        });
        println!("CHILD DONE");
    }

    /// No panic text reaches stderr: the child test runs with its output not captured,
    /// so anything the default hook printed would show in the child's stderr.
    #[test]
    fn no_panic_text_reaches_stderr() {
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "analyze::guard::tests::child_describes_with_a_buggy_analyzer",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stdout}\n{stderr}");
        assert!(stdout.contains("CHILD DONE"), "{stdout}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!stdout.contains("panicked"), "{stdout}");
    }
}
