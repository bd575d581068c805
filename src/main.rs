//! The `lakestar` binary: parse the command line and hand over to [`lakestar::cli`].

fn main() {
    std::process::exit(lakestar::cli::main());
}
