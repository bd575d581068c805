//! The `lakestar` binary: parse the command line and hand over to [`lakestar::cli`].

/// mimalloc rather than glibc's allocator: a search allocates and frees thousands of
/// small strings and rows, and glibc's allocator makes that a noticeable share of its CPU
/// (BENCHMARKS.md, "Search latency"). Built without transparent huge pages (`no_thp`): most
/// runs of the binary are short, and zeroing huge pages costs them more than it saves.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // Die quietly on a closed pipe (`lakestar collections | head`), as Unix tools do,
    // instead of panicking in `println!`.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(lakestar::cli::main());
}
