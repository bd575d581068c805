//! Which Python runs generated code: `--python`, else the venv of `lakestar setup
//! python`, else `python3` on PATH; and what that Python can import.

use super::error::{InternalError, SandboxError, UserError};
use super::venv::{self, VenvState};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where the interpreter came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum PythonOrigin {
    /// `--python PATH`.
    Flag,
    /// The venv at this directory (made by `lakestar setup python`).
    Venv(PathBuf),
    /// `python3` on PATH.
    System,
}

/// A Python interpreter that was found to run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Python {
    /// The interpreter (for `--python` and `python3`, what `sys.executable` says, so
    /// that launcher scripts such as pyenv shims are not needed in the sandbox).
    pub path: PathBuf,
    /// Where it came from.
    pub origin: PythonOrigin,
}

/// The modules behind [`super::DEFAULT_PACKAGES`], by import name: what generated code
/// expects to import.
pub const DEFAULT_MODULES: &[&str] = &[
    "pandas",
    "numpy",
    "pyarrow",
    "openpyxl",
    "lxml",
    "scipy",
    "sklearn",
    "matplotlib",
];

/// Default venv location: `$LAKESTAR_VENV`, else `$XDG_DATA_HOME/lakestar/venv`, else
/// `~/.local/share/lakestar/venv`.
pub fn default_venv_dir() -> PathBuf {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(v) = var("LAKESTAR_VENV") {
        return PathBuf::from(v);
    }
    // The XDG spec ignores relative values.
    let data = var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(std::env::temp_dir);
    data.join("lakestar").join("venv")
}

impl Python {
    /// `--python PATH` if given (must exist and run; a bare name is looked up on PATH),
    /// else the venv `venv_dir` made by `lakestar setup python` if it exists, else
    /// `python3` on PATH; the error names what is missing and how to fix it.
    pub fn resolve(explicit: Option<&Path>, venv_dir: &Path) -> Result<Python, SandboxError> {
        if let Some(p) = explicit {
            // A bare name (`python3`, `python3.12`) is looked up on PATH, as a shell
            // would: running it is the lookup, and `sys.executable` gives its path.
            let bare = matches!(
                p.components().collect::<Vec<_>>().as_slice(),
                [std::path::Component::Normal(_)]
            );
            let missing = || -> SandboxError {
                if bare {
                    UserError::PythonNotOnPath { name: p.into() }.into()
                } else {
                    UserError::PythonMissing { path: p.into() }.into()
                }
            };
            if !bare && !p.exists() {
                return Err(missing());
            }
            let path = executable(p, "pass another --python")?.ok_or_else(missing)?;
            return Ok(Python {
                path: in_real_dir(path),
                origin: PythonOrigin::Flag,
            });
        }
        match venv::state(venv_dir) {
            VenvState::Absent => {}
            VenvState::Incomplete => {
                return Err(UserError::VenvIncomplete {
                    venv: venv_dir.into(),
                }
                .into())
            }
            VenvState::NotAVenv => {
                return Err(UserError::NotAVenv {
                    dir: venv_dir.into(),
                }
                .into())
            }
            VenvState::Ready(python) => {
                executable(
                    &python,
                    "run `lakestar setup python` again to rebuild the venv",
                )?;
                return Ok(Python {
                    path: in_real_dir(python),
                    origin: PythonOrigin::Venv(venv_dir.into()),
                });
            }
        }
        match executable(Path::new("python3"), "pass --python PATH")? {
            Some(path) => Ok(Python {
                path: in_real_dir(path),
                origin: PythonOrigin::System,
            }),
            None => Err(UserError::NoPython {
                venv: venv_dir.into(),
            }
            .into()),
        }
    }

    /// Which of `modules` do not import (one Python run): lets the agent say "pandas is
    /// missing: run `lakestar setup python`" before its first round.
    pub fn missing_modules(&self, modules: &[&str]) -> Result<Vec<String>, SandboxError> {
        const SCRIPT: &str = "import importlib, sys\n\
            for m in sys.argv[1:]:\n    \
                try:\n        importlib.import_module(m)\n    \
                except Exception:\n        print(m)\n";
        let out = self.query(SCRIPT, modules)?;
        Ok(out.lines().map(str::to_string).collect())
    }

    /// The installed version of each distribution in `dists` (`None`: not installed).
    pub fn versions(&self, dists: &[&str]) -> Result<Vec<(String, Option<String>)>, SandboxError> {
        const SCRIPT: &str = "import importlib.metadata as md, sys\n\
            for d in sys.argv[1:]:\n    \
                try:\n        print(md.version(d))\n    \
                except Exception:\n        print('')\n";
        let out = self.query(SCRIPT, dists)?;
        let mut lines = out.lines();
        Ok(dists
            .iter()
            .map(|d| {
                let v = lines.next().filter(|v| !v.is_empty()).map(str::to_string);
                (d.to_string(), v)
            })
            .collect())
    }

    /// The venv this interpreter belongs to, if any (what `VIRTUAL_ENV` says in the
    /// sandbox): as Python decides it, a `pyvenv.cfg` beside the interpreter's directory.
    pub fn venv(&self) -> Option<PathBuf> {
        if let PythonOrigin::Venv(dir) = &self.origin {
            return Some(dir.clone());
        }
        let root = self.path.parent()?.parent()?;
        root.join("pyvenv.cfg")
            .is_file()
            .then(|| root.to_path_buf())
    }

    /// The directories the interpreter runs from: its prefixes, every existing entry
    /// of `sys.path` (a .pth may add any), the venv and the interpreter's directory;
    /// what the jail shows read-only. A Python that cannot say gets its directory only.
    pub(crate) fn runtime_dirs(&self) -> Vec<PathBuf> {
        const SCRIPT: &str = "import sys\n\
            for p in [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *sys.path]:\n    \
                print(p)\n";
        let mut dirs: Vec<PathBuf> = self
            .query(SCRIPT, &[])
            .map(|out| {
                out.lines()
                    .filter(|l| !l.is_empty())
                    .map(PathBuf::from)
                    .collect()
            })
            .unwrap_or_default();
        dirs.extend(self.venv());
        dirs.extend(self.path.parent().map(Path::to_path_buf));
        if let Ok(real) = self.path.canonicalize() {
            dirs.extend(real.parent().map(Path::to_path_buf));
        }
        // A zip on sys.path (python311.zip) that does not exist is dropped; files and
        // directories that exist are kept, each once.
        dirs.retain(|d| d.is_absolute() && d.exists());
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// Run `script` with `args` in isolated mode (`-I`: no PYTHON* variables, no user
    /// site, no cwd on sys.path); its stdout.
    fn query(&self, script: &str, args: &[&str]) -> Result<String, SandboxError> {
        let out = Command::new(&self.path)
            .args(["-I", "-c", script])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| SandboxError::io(format!("running {}", self.path.display()), e))?;
        if !out.status.success() {
            return Err(UserError::PythonBroken {
                path: self.path.clone(),
                reason: failure(&out),
                hint: "pass another --python, or run `lakestar setup python`",
            }
            .into());
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// `path` with its directory resolved through symbolic links, its own name kept. The
/// jail shows the runtime's directories at their real paths only, so an interpreter
/// reached through a linked directory (a venv under a symlinked `target/`) would not be
/// found there; the name is kept because a venv's `bin/python` is itself a link, which
/// Python follows to find its venv only when started by that name.
fn in_real_dir(path: PathBuf) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => dir.canonicalize().map(|d| d.join(name)).unwrap_or(path),
        _ => path,
    }
}

/// `sys.executable` of `program` if it runs as Python 3, `None` if it is not found;
/// an error saying `hint` if it is found and does not run.
pub(crate) fn executable(
    program: &Path,
    hint: &'static str,
) -> Result<Option<PathBuf>, SandboxError> {
    let out = Command::new(program)
        .args([
            "-I",
            "-c",
            "import sys; assert sys.version_info >= (3, 8), sys.version; print(sys.executable)",
        ])
        .stdin(Stdio::null())
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(UserError::PythonBroken {
                path: program.into(),
                reason: e.to_string(),
                hint,
            }
            .into())
        }
    };
    if !out.status.success() {
        return Err(UserError::PythonBroken {
            path: program.into(),
            reason: failure(&out),
            hint,
        }
        .into());
    }
    let exe = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if exe.is_empty() {
        // sys.executable can be empty for embedded interpreters; keep what was given.
        return Ok(Some(program.into()));
    }
    Ok(Some(PathBuf::from(exe)))
}

/// How a command failed: its status and the last line of its stderr.
pub(crate) fn failure(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    match err.lines().rev().find(|l| !l.trim().is_empty()) {
        Some(last) => format!("{}: {}", out.status, last.trim()),
        None => out.status.to_string(),
    }
}

/// A script name made into a file name: `NAME.py`, nothing that could leave the
/// working directory.
pub(crate) fn script_file_name(name: &str) -> Result<String, SandboxError> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if !ok {
        return Err(InternalError::BadScriptName(name.into()).into());
    }
    Ok(if name.ends_with(".py") {
        name.to_string()
    } else {
        format!("{name}.py")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_names_stay_in_the_working_directory() {
        assert_eq!(script_file_name("round_1").unwrap(), "round_1.py");
        assert_eq!(script_file_name("check.py").unwrap(), "check.py");
        for bad in ["", "../x", "a/b", ".hidden", "x y", "..", "/abs"] {
            assert!(script_file_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_missing_explicit_python_is_named() {
        let e =
            Python::resolve(Some(Path::new("/no/such/python")), Path::new("/no/venv")).unwrap_err();
        assert!(e.is_user_error());
        assert!(e.to_string().contains("/no/such/python"), "{e}");
    }

    #[test]
    fn a_bare_name_is_looked_up_on_path() {
        let p = Python::resolve(Some(Path::new("python3")), Path::new("/no/venv")).unwrap();
        assert!(p.path.is_absolute(), "{p:?}");
        assert_eq!(p.origin, PythonOrigin::Flag);
        let e = Python::resolve(
            Some(Path::new("no-such-python-4711")),
            Path::new("/no/venv"),
        )
        .unwrap_err();
        assert!(e.is_user_error());
        assert!(e.to_string().contains("not found on PATH"), "{e}");
    }

    #[test]
    fn a_venv_python_reports_its_venv() {
        let p = Python {
            path: "/x/venv/bin/python".into(),
            origin: PythonOrigin::Venv("/x/venv".into()),
        };
        assert_eq!(p.venv(), Some(PathBuf::from("/x/venv")));
        let p = Python {
            path: "/usr/bin/python3".into(),
            origin: PythonOrigin::System,
        };
        assert_eq!(p.venv(), None);
    }
}
