//! Whether generated code runs in the jail, and how a run reports it.

use serde::Serialize;

/// Whether a protection is in force for a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Isolation {
    /// In force.
    Isolated,
    /// Not in force, and why (for the run log).
    Unavailable(String),
}

impl Isolation {
    /// True when in force.
    pub fn is_isolated(&self) -> bool {
        matches!(self, Isolation::Isolated)
    }
}

impl std::fmt::Display for Isolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Isolation::Isolated => f.write_str("isolated"),
            Isolation::Unavailable(why) => write!(f, "unavailable: {why}"),
        }
    }
}

/// How generated code is run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Policy {
    /// In the jail; a machine that cannot build one refuses to run generated code.
    #[default]
    Jail,
    /// Without isolation, only under the rlimits and the timeout: the explicit,
    /// unsafe opt-out (`--unsafe-no-isolation`, `LAKESTAR_UNSAFE_NO_ISOLATION=1`).
    Unconfined,
}

/// Why a run is not isolated under [`Policy::Unconfined`].
pub(crate) const UNCONFINED: &str =
    "turned off by --unsafe-no-isolation (LAKESTAR_UNSAFE_NO_ISOLATION): generated code runs as you, with your network and files";

impl Policy {
    /// The policy the environment asks for: [`Policy::Unconfined`] when
    /// `LAKESTAR_UNSAFE_NO_ISOLATION` is set to anything but empty or `0`.
    pub fn from_env() -> Policy {
        match std::env::var("LAKESTAR_UNSAFE_NO_ISOLATION") {
            Ok(v) if !v.is_empty() && v != "0" => Policy::Unconfined,
            _ => Policy::Jail,
        }
    }
}
