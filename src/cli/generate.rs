//! `lakestar completions SHELL` and `lakestar man`: shell completions and manual pages,
//! generated from the clap definitions (so they never fall behind the commands).

use super::Cli;
use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_complete::Shell;
use std::path::PathBuf;

/// Arguments of `lakestar completions`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Install, for example:
  bash: lakestar completions bash > ~/.local/share/bash-completion/completions/lakestar
  zsh:  lakestar completions zsh > ~/.zfunc/_lakestar   (with fpath+=~/.zfunc before compinit)
  fish: lakestar completions fish > ~/.config/fish/completions/lakestar.fish")]
pub(crate) struct CompletionsArgs {
    /// The shell.
    shell: Shell,
}

/// Arguments of `lakestar man`.
#[derive(Debug, clap::Args)]
pub(crate) struct ManArgs {
    /// Write one page per command into DIR (lakestar.1, lakestar-search.1, …) instead
    /// of the top page to stdout.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

pub(crate) fn completions(a: CompletionsArgs) -> Result<()> {
    let mut cmd = Cli::command();
    clap_complete::generate(a.shell, &mut cmd, "lakestar", &mut std::io::stdout());
    Ok(())
}

pub(crate) fn man(a: ManArgs) -> Result<()> {
    // Each page's title line carries the version: give it to the subcommands too.
    let cmd = Cli::command().propagate_version(true);
    match a.out {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd, &dir)
                .with_context(|| format!("cannot write the pages into {}", dir.display()))?;
            eprintln!("man pages written to {}", dir.display());
        }
        None => clap_mangen::Man::new(cmd).render(&mut std::io::stdout().lock())?,
    }
    Ok(())
}
