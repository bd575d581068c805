//! `lakestar setup python`: the venv the agent runs generated code with.

use super::UsageError;
use crate::agent::sandbox::{default_venv_dir, setup_venv, SandboxError, DEFAULT_PACKAGES};
use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `lakestar setup`.
#[derive(Debug, clap::Args)]
pub(crate) struct SetupArgs {
    #[command(subcommand)]
    what: SetupCommand,
}

#[derive(Debug, clap::Subcommand)]
enum SetupCommand {
    /// Create the venv generated code runs with (pandas, numpy, pyarrow, openpyxl, lxml,
    /// scipy, scikit-learn, matplotlib); running it again finishes an interrupted setup.
    Python {
        /// Venv directory [default: $LAKESTAR_VENV, else
        /// $XDG_DATA_HOME/lakestar/venv, else ~/.local/share/lakestar/venv]
        #[arg(long, value_name = "DIR")]
        venv: Option<PathBuf>,
        /// Interpreter to create the venv with [default: python3]
        #[arg(long, value_name = "BASE")]
        python: Option<PathBuf>,
        /// One more package to install (pip syntax; repeatable).
        #[arg(long = "package", value_name = "P")]
        packages: Vec<String>,
    },
}

pub(crate) fn run(a: SetupArgs) -> Result<()> {
    let SetupCommand::Python {
        venv,
        python,
        packages,
    } = a.what;
    let dir = venv.unwrap_or_else(default_venv_dir);
    let py = setup_venv(&dir, python.as_deref(), &packages).map_err(cli_error)?;
    let names: Vec<&str> = DEFAULT_PACKAGES
        .iter()
        .copied()
        .chain(packages.iter().map(|p| dist_name(p)))
        .collect();
    let versions = py.versions(&names).map_err(cli_error)?;
    let installed: Vec<String> = versions
        .iter()
        .map(|(name, v)| format!("{name} {}", v.as_deref().unwrap_or("(not found)")))
        .collect();
    println!("venv: {}", dir.display());
    println!("python: {}", py.path.display());
    println!("installed: {}", installed.join(", "));
    Ok(())
}

/// The distribution name of a pip requirement (`polars>=1.0` → `polars`).
fn dist_name(spec: &str) -> &str {
    let end = spec
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(spec.len());
    &spec[..end]
}

/// A sandbox error at the CLI: what the user can fix exits with code 2.
pub(crate) fn cli_error(e: SandboxError) -> anyhow::Error {
    if e.is_user_error() {
        UsageError(e.to_string()).into()
    } else {
        e.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirement_specs_give_their_distribution_name() {
        assert_eq!(dist_name("polars"), "polars");
        assert_eq!(dist_name("polars>=1.0"), "polars");
        assert_eq!(dist_name("xarray[io] ; python_version>'3'"), "xarray");
        assert_eq!(dist_name("scikit-learn==1.5"), "scikit-learn");
    }
}
