//! The `lakestar` binary: parse the command line and hand over to [`lakestar::cli`].

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
