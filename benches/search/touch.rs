//! What a new process pays to read a mapped file that the page cache holds: `--touch
//! FILE seq` maps it and reads one byte of every 64 on rayon's threads (as a scan
//! reads every point), `--touch FILE N` reads N points of 260 bytes spread over it (as
//! a pool is rescored from the 8-bit codes); prints the wall time and this process's
//! page faults. Run it as its own process each time: the second touch in a process is
//! warm. BENCHMARKS.md, "Vector search settings".

use rayon::prelude::*;
use std::time::Instant;

/// Minor page faults of this process so far (`/proc/self/stat`, field 10).
fn faults() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let after = s.rsplit_once(')')?.1;
            after.split_whitespace().nth(7)?.parse().ok()
        })
        .unwrap_or(0)
}

/// Measure and print (see the module's comment).
pub fn touch(path: &str, mode: &str, huge: bool) {
    let file = std::fs::File::open(path).expect("a readable file");
    let before = faults();
    let started = Instant::now();
    // SAFETY: the file is only read, and the bench's user does not change it meanwhile.
    let map = unsafe { memmap2::Mmap::map(&file) }.expect("mapped");
    #[cfg(target_os = "linux")]
    if huge {
        let _ = map.advise(memmap2::Advice::HugePage);
    }
    let sum: u64 = if mode == "seq" {
        map.par_chunks(1 << 19)
            .map(|c| c.iter().step_by(64).map(|&b| u64::from(b)).sum::<u64>())
            .sum()
    } else {
        let n: usize = mode.parse().expect("--touch FILE seq|N");
        let points = (map.len() / 260).max(1);
        (0..n)
            .into_par_iter()
            .map(|i| {
                let p = (i.wrapping_mul(2_654_435_761) ^ (i >> 3)) % points;
                map[p * 260..(p * 260 + 256).min(map.len())]
                    .iter()
                    .map(|&b| u64::from(b))
                    .sum::<u64>()
            })
            .sum()
    };
    println!(
        "{path} {mode}{}: {:.2} ms, {} page faults (checksum {sum})",
        if huge { " (MADV_HUGEPAGE)" } else { "" },
        started.elapsed().as_secs_f64() * 1e3,
        faults() - before
    );
}
