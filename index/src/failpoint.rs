//! Named places where a test can stop the process, to `kill -9` it exactly there: the
//! steps that must survive a crash (the vector graph's build and swap) are not reliably
//! hit by killing at a random time. Inert unless `LAKESTAR_PAUSE_AT` names the place.

use std::path::Path;
use std::time::Duration;

/// If `LAKESTAR_PAUSE_AT` is `name`: write `paused-NAME` (the process id) into `dir`,
/// so that the test knows where the process is, and wait there until killed.
pub(crate) fn pause_at(name: &str, dir: &Path) {
    if std::env::var("LAKESTAR_PAUSE_AT").ok().as_deref() != Some(name) {
        return;
    }
    let _ = std::fs::write(
        dir.join(format!("paused-{name}")),
        std::process::id().to_string(),
    );
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
