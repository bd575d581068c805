//! AWS profiles: the keys, session token, region and endpoint of a named profile in the
//! shared credentials and config files, for an S3 lake whose environment names no keys
//! (the AWS CLI's order: keys in the environment, then the profile, then the instance's
//! role, which `object_store` asks the metadata service for).
//!
//! Profiles that get their credentials by running something (`credential_process`),
//! by single sign-on (`sso_*`) or by assuming a role (`role_arn`) are refused with the
//! command that exports their credentials: doing those would bring the AWS SDK.

use super::StoreError;
use std::path::{Path, PathBuf};

/// The parts of a profile a lake uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    /// The profile's name.
    pub name: String,
    /// `aws_access_key_id`.
    pub access_key_id: Option<String>,
    /// `aws_secret_access_key`.
    pub secret_access_key: Option<String>,
    /// `aws_session_token`.
    pub session_token: Option<String>,
    /// `region`.
    pub region: Option<String>,
    /// `endpoint_url` (an S3-compatible store's).
    pub endpoint_url: Option<String>,
}

/// Keys of a profile that name a way of getting credentials lakestar does not take.
const UNSUPPORTED: [&str; 5] = [
    "credential_process",
    "sso_start_url",
    "sso_session",
    "role_arn",
    "web_identity_token_file",
];

/// The profile `AWS_PROFILE` names (else `default`) from `AWS_SHARED_CREDENTIALS_FILE`
/// (else `~/.aws/credentials`) and `AWS_CONFIG_FILE` (else `~/.aws/config`). `None`
/// when neither file has it, unless `AWS_PROFILE` named it: then that is an error, as is
/// a file that does not parse or a profile whose credentials lakestar cannot get.
pub fn load() -> Result<Option<Profile>, StoreError> {
    let named = std::env::var("AWS_PROFILE").ok().filter(|p| !p.is_empty());
    let name = named.clone().unwrap_or_else(|| "default".to_string());
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let file = |var: &str, default: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".aws").join(default)))
    };
    let credentials = file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
    let config = file("AWS_CONFIG_FILE", "config");
    let fail = |reason: String| StoreError::Profile {
        profile: name.clone(),
        reason,
    };
    let read = |p: &Option<PathBuf>| -> Result<Option<ini::Ini>, StoreError> {
        match p {
            Some(p) if p.is_file() => ini::Ini::load_from_file(p)
                .map(Some)
                .map_err(|e| fail(format!("{}: {e}", p.display()))),
            _ => Ok(None),
        }
    };
    let found =
        from_files(&name, read(&credentials)?.as_ref(), read(&config)?.as_ref()).map_err(fail)?;
    if found.is_none() && named.is_some() {
        let shown = |p: &Option<PathBuf>| {
            p.as_deref()
                .map_or("-".into(), |p: &Path| p.display().to_string())
        };
        return Err(fail(format!(
            "no such profile in {} or {}; check AWS_PROFILE",
            shown(&credentials),
            shown(&config)
        )));
    }
    Ok(found)
}

/// The profile `name` from the parsed files: the credentials file's `[name]` first, then
/// the config file's `[profile name]` (`[default]` for the default).
fn from_files(
    name: &str,
    credentials: Option<&ini::Ini>,
    config: Option<&ini::Ini>,
) -> Result<Option<Profile>, String> {
    let config_section = if name == "default" {
        "default".to_string()
    } else {
        format!("profile {name}")
    };
    let creds = credentials.and_then(|c| c.section(Some(name)));
    let conf = config.and_then(|c| c.section(Some(config_section.as_str())));
    if creds.is_none() && conf.is_none() {
        return Ok(None);
    }
    let get = |key: &str| {
        creds
            .and_then(|s| s.get(key))
            .or_else(|| conf.and_then(|s| s.get(key)))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let p = Profile {
        name: name.to_string(),
        access_key_id: get("aws_access_key_id"),
        secret_access_key: get("aws_secret_access_key"),
        session_token: get("aws_session_token"),
        region: get("region"),
        endpoint_url: get("endpoint_url"),
    };
    if p.access_key_id.is_none() || p.secret_access_key.is_none() {
        if let Some(key) = UNSUPPORTED.iter().find(|k| get(k).is_some()) {
            return Err(format!(
                "it gets its credentials through `{key}`, which lakestar does not do; export them first (`eval \"$(aws configure export-credentials --profile {name} --format env)\"`) or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
            ));
        }
        if p.access_key_id.is_some() != p.secret_access_key.is_some() {
            return Err(
                "it has only one of aws_access_key_id and aws_secret_access_key; give both".into(),
            );
        }
    }
    Ok(Some(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> ini::Ini {
        ini::Ini::load_from_str(text).unwrap()
    }

    #[test]
    fn keys_come_from_credentials_and_region_and_endpoint_from_config() {
        let creds = parse("[default]\naws_access_key_id = D\naws_secret_access_key = DS\n\n[lake]\naws_access_key_id=AK\naws_secret_access_key=SK\naws_session_token=T\n");
        let conf = parse("[default]\nregion = us-east-1\n\n[profile lake]\nregion = eu-north-1\nendpoint_url = http://127.0.0.1:9000\n");
        let p = from_files("lake", Some(&creds), Some(&conf))
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.access_key_id.as_deref(), p.secret_access_key.as_deref()),
            (Some("AK"), Some("SK"))
        );
        assert_eq!(p.session_token.as_deref(), Some("T"));
        assert_eq!(p.region.as_deref(), Some("eu-north-1"));
        assert_eq!(p.endpoint_url.as_deref(), Some("http://127.0.0.1:9000"));
        let d = from_files("default", Some(&creds), Some(&conf))
            .unwrap()
            .unwrap();
        assert_eq!(
            (d.access_key_id.as_deref(), d.region.as_deref()),
            (Some("D"), Some("us-east-1"))
        );
        assert_eq!(
            from_files("other", Some(&creds), Some(&conf)).unwrap(),
            None
        );
        assert_eq!(from_files("lake", None, None).unwrap(), None);
    }

    #[test]
    fn profiles_lakestar_cannot_use_say_what_to_do() {
        let conf = parse("[profile sso]\nsso_session = corp\nregion = eu-west-1\n[profile half]\naws_access_key_id = A\n");
        let e = from_files("sso", None, Some(&conf)).unwrap_err();
        assert!(
            e.contains("sso_session") && e.contains("export-credentials --profile sso"),
            "{e}"
        );
        let e = from_files("half", None, Some(&conf)).unwrap_err();
        assert!(e.contains("give both"), "{e}");
    }
}
