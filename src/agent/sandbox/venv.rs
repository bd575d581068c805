//! `lakestar setup python`: a venv with the data-science packages generated code
//! expects, made so that an interrupted setup is noticed and redone.
//!
//! A marker file in the venv says `incomplete` from before the venv is created until pip
//! has installed everything, then `complete`. [`Python::resolve`] refuses an incomplete
//! venv; setup rebuilds one whose interpreter does not run and re-runs pip (quick when
//! everything is there) on one whose interpreter does.

use super::error::{SandboxError, UserError};
use super::python::{executable, failure, Python, PythonOrigin};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Packages `lakestar setup python` installs (pip names).
pub const DEFAULT_PACKAGES: &[&str] = &[
    "pandas",
    "numpy",
    "pyarrow",
    "openpyxl",
    "lxml",
    "scipy",
    "scikit-learn",
    "matplotlib",
];

/// The marker file in the venv directory.
const MARKER: &str = ".lakestar-setup";
const INCOMPLETE: &str = "incomplete\n";
const COMPLETE: &str = "complete\n";

/// What is at a venv directory.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum VenvState {
    /// Nothing (or an empty directory).
    Absent,
    /// A setup started and did not finish, or a venv whose interpreter is gone.
    Incomplete,
    /// A venv, with this interpreter (not yet run).
    Ready(PathBuf),
    /// Something else.
    NotAVenv,
}

/// What is at `dir`, from the files alone.
pub(crate) fn state(dir: &Path) -> VenvState {
    let Ok(mut entries) = std::fs::read_dir(dir) else {
        return VenvState::Absent;
    };
    if entries.next().is_none() {
        return VenvState::Absent;
    }
    if std::fs::read_to_string(dir.join(MARKER)).is_ok_and(|m| m != COMPLETE) {
        return VenvState::Incomplete;
    }
    let python = venv_python(dir);
    if python.is_file() {
        VenvState::Ready(python)
    } else if dir.join(MARKER).exists() || dir.join("pyvenv.cfg").exists() {
        VenvState::Incomplete
    } else {
        VenvState::NotAVenv
    }
}

/// The interpreter of the venv at `dir`.
fn venv_python(dir: &Path) -> PathBuf {
    dir.join("bin").join("python")
}

/// `lakestar setup python`: create the venv (`python3 -m venv`, or `--python BASE`) and
/// pip install [`DEFAULT_PACKAGES`] plus `extra`, pip printing its progress; a second run
/// is quick (pip finds everything satisfied), an interrupted one is detected and redone.
pub fn setup_venv(
    venv_dir: &Path,
    base_python: Option<&Path>,
    extra: &[String],
) -> Result<Python, SandboxError> {
    let mut packages: Vec<&str> = DEFAULT_PACKAGES.to_vec();
    packages.extend(extra.iter().map(String::as_str));
    setup(venv_dir, base_python, &packages, Output::Shown)
}

/// Whether pip's output goes to ours (a person watching `setup python`) or is kept and
/// told only when it fails (a caller with its own output: the tests).
#[derive(Clone, Copy, PartialEq)]
enum Output {
    Shown,
    OnFailure,
}

/// [`setup_venv`] installing exactly `packages` (none: a bare venv), quietly: pip's
/// output is part of the error when it fails.
pub fn setup_venv_with(
    venv_dir: &Path,
    base_python: Option<&Path>,
    packages: &[&str],
) -> Result<Python, SandboxError> {
    setup(venv_dir, base_python, packages, Output::OnFailure)
}

fn setup(
    venv_dir: &Path,
    base_python: Option<&Path>,
    packages: &[&str],
    output: Output,
) -> Result<Python, SandboxError> {
    let dir = std::path::absolute(venv_dir)
        .map_err(|e| SandboxError::io(format!("resolving {}", venv_dir.display()), e))?;
    let _lock = lock(&dir)?;
    // A venv whose interpreter runs is kept even if a setup was interrupted in it:
    // pip completes what is missing.
    let python = venv_python(&dir);
    let ours_or_venv = dir.join(MARKER).exists() || dir.join("pyvenv.cfg").exists();
    let reusable =
        ours_or_venv && python.is_file() && executable(&python, "").is_ok_and(|p| p.is_some());
    if !reusable {
        create(&dir, base_python, output)?;
    }
    let python = Python {
        path: python,
        origin: PythonOrigin::Venv(dir.clone()),
    };
    write_marker(&dir, INCOMPLETE)?;
    if !packages.is_empty() {
        pip_install(&python, &dir, packages, output)?;
    }
    write_marker(&dir, COMPLETE)?;
    Ok(python)
}

/// Make a new venv at `dir`, removing a broken one first.
fn create(dir: &Path, base: Option<&Path>, output: Output) -> Result<(), SandboxError> {
    match state(dir) {
        VenvState::Absent => {}
        // Ours (marker) or a venv (pyvenv.cfg) whose interpreter does not run: it is
        // safe to remove, and no repair would be simpler than making it again.
        VenvState::Incomplete | VenvState::Ready(_) => {
            std::fs::remove_dir_all(dir).map_err(|e| {
                SandboxError::io(format!("removing broken venv {}", dir.display()), e)
            })?;
        }
        VenvState::NotAVenv => return Err(UserError::NotAVenv { dir: dir.into() }.into()),
    }
    let base = base.unwrap_or(Path::new("python3"));
    if base.components().count() > 1 && !base.exists() {
        return Err(UserError::PythonMissing { path: base.into() }.into());
    }
    let hint = "pass another --python BASE";
    if executable(base, hint)?.is_none() {
        return Err(UserError::NoVenvModule {
            python: base.into(),
            reason: "not found on PATH; install Python 3 first".into(),
        }
        .into());
    }
    let out = Command::new(base)
        .args(["-I", "-c", "import venv, ensurepip"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| SandboxError::io(format!("running {}", base.display()), e))?;
    if !out.status.success() {
        return Err(UserError::NoVenvModule {
            python: base.into(),
            reason: failure(&out),
        }
        .into());
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| SandboxError::io(format!("creating {}", dir.display()), e))?;
    // The marker goes in first: from here until pip is done, the directory says that
    // it is unfinished.
    write_marker(dir, INCOMPLETE)?;
    if output == Output::Shown {
        eprintln!("creating venv {} with {} …", dir.display(), base.display());
    }
    let out = Command::new(base)
        .arg("-m")
        .arg("venv")
        .arg(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| SandboxError::io(format!("running {} -m venv", base.display()), e))?;
    if !out.status.success() {
        return Err(UserError::NoVenvModule {
            python: base.into(),
            reason: failure(&out),
        }
        .into());
    }
    Ok(())
}

/// `python -m pip install PACKAGES`, its output going to ours or kept for the error.
fn pip_install(
    python: &Python,
    dir: &Path,
    packages: &[&str],
    output: Output,
) -> Result<(), SandboxError> {
    let mut cmd = Command::new(&python.path);
    cmd.args(["-m", "pip", "install", "--disable-pip-version-check"])
        // Package names are never taken for pip options.
        .arg("--")
        .args(packages)
        .stdin(Stdio::null());
    let run = |e| SandboxError::io(format!("running {} -m pip", python.path.display()), e);
    let (status, said) = match output {
        Output::Shown => (cmd.status().map_err(run)?, String::new()),
        Output::OnFailure => {
            let out = cmd.output().map_err(run)?;
            let text = String::from_utf8_lossy(&out.stderr);
            // pip's last lines say what failed; the rest is progress.
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            let tail = lines[lines.len().saturating_sub(6)..].join("\n");
            (out.status, tail)
        }
    };
    if !status.success() {
        return Err(UserError::PipFailed {
            venv: dir.into(),
            packages: packages.join(" "),
            status: if said.is_empty() {
                format!("{status}; its output is above")
            } else {
                format!("{status}: {said}")
            },
        }
        .into());
    }
    Ok(())
}

/// Write the marker atomically (a temporary file renamed over it).
fn write_marker(dir: &Path, text: &str) -> Result<(), SandboxError> {
    let path = dir.join(MARKER);
    let tmp = dir.join(format!("{MARKER}.tmp"));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| SandboxError::io(format!("writing {}", path.display()), e))
}

/// Hold an exclusive lock for setting up `dir` (`.NAME.lock` beside it), waiting for
/// another setup of the same venv to finish.
fn lock(dir: &Path) -> Result<File, SandboxError> {
    let parent = dir.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(parent)
        .map_err(|e| SandboxError::io(format!("creating {}", parent.display()), e))?;
    let name = dir
        .file_name()
        .map_or("venv".into(), |n| n.to_string_lossy());
    let path = parent.join(format!(".{name}.lock"));
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| SandboxError::io(format!("opening {}", path.display()), e))?;
    if file.try_lock().is_err() {
        eprintln!(
            "waiting for another `lakestar setup python` on {} …",
            dir.display()
        );
        file.lock()
            .map_err(|e| SandboxError::io(format!("locking {}", path.display()), e))?;
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_of_a_venv_directory_comes_from_its_files() {
        let t = std::env::temp_dir().join(format!("lakestar-venv-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        assert_eq!(state(&t), VenvState::Absent);
        std::fs::create_dir_all(t.join("bin")).unwrap();
        assert_eq!(state(&t), VenvState::NotAVenv);
        write_marker(&t, INCOMPLETE).unwrap();
        assert_eq!(state(&t), VenvState::Incomplete);
        write_marker(&t, COMPLETE).unwrap();
        assert_eq!(
            state(&t),
            VenvState::Incomplete,
            "complete, yet no interpreter"
        );
        std::fs::write(t.join("bin/python"), "").unwrap();
        assert_eq!(state(&t), VenvState::Ready(t.join("bin/python")));
        write_marker(&t, INCOMPLETE).unwrap();
        assert_eq!(state(&t), VenvState::Incomplete);
        std::fs::remove_dir_all(&t).unwrap();
    }
}
