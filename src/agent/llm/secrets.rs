//! Keys in configuration files that other users can read.
//!
//! `lakestar.toml` may hold an API key (`[llm] api_key`). A key in a file others can
//! read is everyone's key on a shared machine, so reading such a file warns, once per
//! file and process (an MCP or HTTP server loads the settings for every `ask`), naming
//! the file and the `chmod` that fixes it. The settings are still used: refusing them
//! would break a working setup over a warning-worthy mode.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Whether the TOML `text` holds a secret: a non-empty string under a key named like
/// one (`api_key`, `key`, `token`, `secret`, `password`, or ending in `_key`, `_token`,
/// `_secret`, `_password`), in any table. Text that does not parse holds none (its
/// loader reports it).
pub fn holds_secret(text: &str) -> bool {
    fn secret_name(name: &str) -> bool {
        let n = name.to_ascii_lowercase();
        ["key", "apikey", "token", "secret", "password"].contains(&n.as_str())
            || ["_key", "_token", "_secret", "_password"]
                .iter()
                .any(|s| n.ends_with(s))
    }
    fn walk(v: &toml::Value) -> bool {
        match v {
            toml::Value::Table(t) => t.iter().any(|(k, v)| {
                matches!(v, toml::Value::String(s) if !s.is_empty() && secret_name(k)) || walk(v)
            }),
            toml::Value::Array(a) => a.iter().any(walk),
            _ => false,
        }
    }
    text.parse::<toml::Table>()
        .is_ok_and(|t| walk(&toml::Value::Table(t)))
}

/// The warning for the configuration file `file`, whose text is `text`: `Some` when it
/// holds a secret and its mode gives the group or others any access (`mode & 0o077`).
pub fn exposed_secret(file: &Path, text: &str) -> Option<String> {
    let mode = open_mode(file)?;
    if !holds_secret(text) {
        return None;
    }
    Some(format!(
        "{} holds an API key or token and other users can access it (mode {:o}); run `chmod 600 {}`",
        file.display(),
        mode & 0o777,
        file.display()
    ))
}

/// The file's mode when group or others have any access to it.
#[cfg(unix)]
fn open_mode(file: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(file).ok()?.permissions().mode();
    (mode & 0o077 != 0).then_some(mode)
}

#[cfg(not(unix))]
fn open_mode(_file: &Path) -> Option<u32> {
    None
}

/// Warn (a `tracing` warning, on stderr) when `file` exposes a secret, the first time
/// this process reads it; returns whether it warned now.
pub fn warn_if_exposed(file: &Path, text: &str) -> bool {
    static WARNED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let Some(warning) = exposed_secret(file, text) else {
        return false;
    };
    let mut warned = WARNED
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if !warned.insert(file.to_path_buf()) {
        return false;
    }
    tracing::warn!("{warning}");
    true
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn file_with(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn secrets_are_found_by_key_name_in_any_table() {
        assert!(holds_secret("[llm]\napi_key = \"sk-1\"\n"));
        assert!(holds_secret("[embed.server]\ntoken = \"t\"\n"));
        assert!(holds_secret(
            "[[hosts]]\nname = \"a\"\nAUTH_TOKEN = \"t\"\n"
        ));
        // Empty keys, numbers of tokens and other names are not secrets.
        assert!(!holds_secret("[llm]\napi_key = \"\"\n"));
        assert!(!holds_secret(
            "[llm]\nmax_output_tokens = 512\ncontext_tokens = 8192\nmodel = \"m\"\n"
        ));
        assert!(!holds_secret(
            "[llm.context_tokens_by_model]\n\"key\" = 4096\n"
        ));
        assert!(!holds_secret("not = toml = at all"));
    }

    #[test]
    fn a_key_in_a_file_others_can_access_is_warned_about_once() {
        let d = tempfile::tempdir().unwrap();
        let key = "[llm]\napi_key = \"sk-1\"\n";
        for mode in [0o644, 0o640, 0o604, 0o660, 0o601] {
            let f = file_with(d.path(), "lakestar.toml", key, mode);
            let w = exposed_secret(&f, key).unwrap_or_else(|| panic!("{mode:o}"));
            assert!(
                w.contains(&format!("chmod 600 {}", f.display()))
                    && w.contains(&format!("{mode:o}")),
                "{w}"
            );
        }
        for mode in [0o600, 0o400] {
            let f = file_with(d.path(), "lakestar.toml", key, mode);
            assert_eq!(exposed_secret(&f, key), None, "{mode:o}");
        }
        let plain = "[llm]\nmodel = \"m\"\n";
        let f = file_with(d.path(), "plain.toml", plain, 0o644);
        assert_eq!(exposed_secret(&f, plain), None);

        let f = file_with(d.path(), "shared.toml", key, 0o644);
        assert!(warn_if_exposed(&f, key));
        assert!(!warn_if_exposed(&f, key), "warned twice");
        assert!(!warn_if_exposed(&d.path().join("missing.toml"), key));
    }
}
