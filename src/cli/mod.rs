//! The command line: a clap definition per command and a runner per command. This is
//! the binary's edge, where library errors become `anyhow` errors and exit codes.

mod ask;
mod bench;
mod collections;
mod describe;
mod docs;
mod doctor;
mod generate;
mod head;
mod hits;
mod index;
mod llm_analyzer;
mod mcp;
mod model;
mod output;
mod sandbox;
mod search;
mod serve;
mod setup;
mod status;
mod watch;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Make big, messy data lakes answerable.
#[derive(Debug, Parser)]
#[command(name = "lakestar", version, about, long_about = None)]
pub struct Cli {
    /// More logging (-v info, -vv debug); LAKESTAR_LOG=... overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Run generated code WITHOUT the jail (rlimits and timeout only): it can read your
    /// files, use your network, signal your processes. At your own risk, where the
    /// kernel refuses namespaces; LAKESTAR_UNSAFE_NO_ISOLATION=1 does the same.
    #[arg(long, global = true)]
    unsafe_no_isolation: bool,
    /// Colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    color: ColorWhen,
    /// Reading rules in force: default, none, NAME,… (only these) or -NAME,… (all but
    /// these); see docs/indexing.md.
    #[arg(
        long,
        global = true,
        value_name = "RULES",
        env = "LAKESTAR_READING_RULES",
        default_value = "default",
        value_parser = parse_reading_rules
    )]
    reading_rules: lakestar_index::analyze::rules::ReadingRules,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Crawl a lake and describe every file; later runs redo only what changed.
    Index(index::IndexArgs),
    /// Keep an index up to date: reconcile, then index changes as they happen; the vector
    /// graph of a lake past about a million files is built in the background.
    Watch(watch::WatchArgs),
    /// Show what an index holds: counts by format and state, errors, size, last run.
    Status(status::StatusArgs),
    /// Show the description of one file (from the index, or analyzed on the fly).
    Describe(describe::DescribeArgs),
    /// Show the first rows of a table, read as its description reads it.
    Head(head::HeadArgs),
    /// List collections: same-schema files whose paths differ only in ids, dates, numbers.
    Collections(collections::CollectionsArgs),
    /// Find the files that answer a question (hybrid BM25 + vector retrieval).
    Search(search::SearchArgs),
    /// Measure retrieval against a task file.
    Eval(search::EvalArgs),
    /// Install, list and distill local embedding models.
    Model(model::ModelArgs),
    /// Answer a question: DS-STAR's plan → code → run → verify loop over the best files.
    Ask(ask::AskArgs),
    /// Run a benchmark's task file through the agent and write a submission.
    Bench(bench::BenchArgs),
    /// Serve the index to an MCP client (an agent) over stdio: search, describe, status,
    /// reindex and ask as tools.
    Mcp(mcp::McpArgs),
    /// Serve the index over HTTP: search, descriptions, status, agent runs (JSON API).
    Serve(serve::ServeArgs),
    /// Check the configuration in effect: index, embedder, LLM, Python, sandbox.
    Doctor(doctor::DoctorArgs),
    /// Prepare what the agent needs: `setup python` makes its Python venv.
    Setup(setup::SetupArgs),
    /// Print shell completions (bash, zsh, fish, powershell, elvish).
    Completions(generate::CompletionsArgs),
    /// Print the manual page, or write one per command with --out DIR.
    Man(generate::ManArgs),
    /// Run a Python script in the agent's sandbox (debugging).
    #[command(hide = true)]
    SandboxRun(sandbox::SandboxRunArgs),
    /// Print a reference page of docs/ as Markdown, generated from the binary itself.
    #[command(hide = true)]
    Docs(docs::DocsArgs),
}

/// When to colour the output.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ColorWhen {
    Auto,
    Always,
    Never,
}

impl ColorWhen {
    /// Set the choice for every `anstream` writer of the process (the output), and say
    /// whether logs on stderr are coloured.
    fn apply(self) -> bool {
        let choice = match self {
            ColorWhen::Auto => anstream::ColorChoice::Auto,
            ColorWhen::Always => anstream::ColorChoice::Always,
            ColorWhen::Never => anstream::ColorChoice::Never,
        };
        choice.write_global();
        // anstream reads NO_COLOR, CLICOLOR_FORCE and whether stderr is a terminal.
        !matches!(
            anstream::AutoStream::choice(&std::io::stderr()),
            anstream::ColorChoice::Never
        )
    }
}

/// Where the index is: `--index DIR`, shared by the commands that read or write one.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct IndexDirArg {
    /// Index directory [default: LAKE/.lakestar, or the nearest .lakestar/ above the
    /// current directory]
    #[arg(long = "index", value_name = "DIR")]
    pub index: Option<PathBuf>,
}

/// An error in what the user asked for, found by the CLI itself (exit code 2).
#[derive(Debug)]
pub(crate) struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Exit code for errors the user can fix (bad arguments, no index, locked index).
pub const EXIT_USER: i32 = 2;
/// Exit code for internal failures.
pub const EXIT_INTERNAL: i32 = 1;

fn init_logging(verbose: u8, ansi: bool) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("LAKESTAR_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .try_init();
}

fn parse_reading_rules(spec: &str) -> Result<lakestar_index::analyze::rules::ReadingRules, String> {
    lakestar_index::analyze::rules::ReadingRules::parse(spec).map_err(|e| e.to_string())
}

/// Run the command line; returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.color.apply());
    // Before any description is made: the analyzer keys carry the set in force.
    lakestar_index::analyze::rules::install(cli.reading_rules);
    if cli.unsafe_no_isolation {
        // Read by `Policy::from_env` wherever an agent is built (ask, bench, serve,
        // mcp, sandbox-run): one switch for every surface. Set before any thread starts.
        std::env::set_var("LAKESTAR_UNSAFE_NO_ISOLATION", "1");
        eprintln!("warning: --unsafe-no-isolation: generated code runs without the jail, as you");
    }
    let result = match cli.command {
        Command::Index(a) => index::run(a),
        Command::Watch(a) => watch::run(a),
        Command::Status(a) => status::run(a),
        Command::Describe(a) => describe::run(a),
        Command::Head(a) => head::run(a),
        Command::Collections(a) => collections::run(a),
        // ripgrep's codes, for scripts: 0 found, 1 nothing found, 2 any error.
        Command::Search(a) => {
            return match search::run_search(a) {
                Ok(true) => 0,
                Ok(false) => 1,
                Err(e) => {
                    report(&e);
                    EXIT_USER
                }
            }
        }
        Command::Eval(a) => search::run_eval(a),
        Command::Model(a) => model::run(a),
        Command::Ask(a) => ask::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Mcp(a) => mcp::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Doctor(a) => doctor::run(a),
        Command::Setup(a) => setup::run(a),
        Command::Completions(a) => generate::completions(a),
        Command::Man(a) => generate::man(a),
        Command::SandboxRun(a) => sandbox::run(a),
        Command::Docs(a) => docs::run(a),
    };
    match result {
        Ok(()) => 0,
        Err(e) => report(&e),
    }
}

/// Print `e` and give its exit code: [`EXIT_USER`] for what the user can fix, else
/// [`EXIT_INTERNAL`].
fn report(e: &anyhow::Error) -> i32 {
    const ERROR: anstyle::Style = anstyle::Style::new()
        .bold()
        .fg_color(Some(anstyle::Color::Ansi(anstyle::AnsiColor::Red)));
    // Errors that keep their source also quote it; each cause is printed once.
    let text = crate::agent::llm::error_chain(e.as_ref());
    anstream::eprintln!("{ERROR}error:{ERROR:#} {text}");
    let user = e.is::<UsageError>()
        || e.downcast_ref::<crate::agent::AgentError>()
            .is_some_and(crate::agent::AgentError::is_user_error)
        || e.downcast_ref::<crate::agent::llm::LlmError>()
            .is_some_and(crate::agent::llm::LlmError::is_user_error)
        || e.downcast_ref::<crate::agent::sandbox::SandboxError>()
            .is_some_and(crate::agent::sandbox::SandboxError::is_user_error)
        || e.downcast_ref::<lakestar_index::Error>()
            .is_some_and(lakestar_index::Error::is_user_error)
        || e.downcast_ref::<crate::service::ServiceError>()
            .is_some_and(crate::service::ServiceError::is_user_error);
    if user {
        EXIT_USER
    } else {
        EXIT_INTERNAL
    }
}
