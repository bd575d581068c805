//! The jail's messages to the parent: fixed 12-byte records on one pipe, written with a
//! single `write` (atomic below PIPE_BUF), so that three processes can share it.

/// A step of building the jail, to say which one failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Stdio,
    Unshare,
    Fork,
    Private,
    Base,
    PivotBase,
    /// The N-th step of the root's plan.
    Op(u16),
    DropHost,
    PivotRoot,
    DropUid,
    NoNewPrivs,
    Rlimits,
    Chdir,
    Exec,
}

impl Step {
    fn code(self) -> i32 {
        match self {
            Step::Stdio => 1,
            Step::Unshare => 2,
            Step::Fork => 3,
            Step::Private => 4,
            Step::Base => 5,
            Step::PivotBase => 6,
            Step::DropHost => 7,
            Step::PivotRoot => 8,
            Step::DropUid => 9,
            Step::NoNewPrivs => 10,
            Step::Rlimits => 11,
            Step::Chdir => 12,
            Step::Exec => 13,
            Step::Op(i) => 1000 + i32::from(i),
        }
    }

    fn from_code(c: i32) -> Option<Step> {
        Some(match c {
            1 => Step::Stdio,
            2 => Step::Unshare,
            3 => Step::Fork,
            4 => Step::Private,
            5 => Step::Base,
            6 => Step::PivotBase,
            7 => Step::DropHost,
            8 => Step::PivotRoot,
            9 => Step::DropUid,
            10 => Step::NoNewPrivs,
            11 => Step::Rlimits,
            12 => Step::Chdir,
            13 => Step::Exec,
            c if (1000..1000 + i32::from(u16::MAX)).contains(&c) => Step::Op((c - 1000) as u16),
            _ => return None,
        })
    }

    /// What the step does, in words (`plan` describes the root's steps).
    pub(crate) fn describe(self, plan: &dyn Fn(u16) -> String) -> String {
        match self {
            Step::Stdio => "connecting the output pipes".into(),
            Step::Unshare => "unshare(user, mount, PID, network, IPC, UTS namespaces)".into(),
            Step::Fork => "fork inside the jail".into(),
            Step::Private => "making the jail's mounts private".into(),
            Step::Base => "mounting the jail's base tmpfs".into(),
            Step::PivotBase => "pivot_root into the base tmpfs".into(),
            Step::Op(i) => plan(i),
            Step::DropHost => "detaching the host's file system".into(),
            Step::PivotRoot => "pivot_root into the minimal root".into(),
            Step::DropUid => "switching to the sandbox uid".into(),
            Step::NoNewPrivs => "prctl(PR_SET_NO_NEW_PRIVS)".into(),
            Step::Rlimits => "setting the rlimits".into(),
            Step::Chdir => "entering the working directory".into(),
            Step::Exec => "executing the interpreter".into(),
        }
    }
}

/// One message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Msg {
    /// Outer entered the namespaces: write its maps.
    Unshared,
    /// Init built the root: copy the working directory in.
    Ready,
    /// The script ended with this wait status; everything else in the jail is dead.
    Exited(i32),
    /// A step failed with this errno.
    Failed(Step, i32),
    /// Init ended abnormally (killed) with this wait status.
    InitDied(i32),
}

pub(crate) const MSG_LEN: usize = 12;

impl Msg {
    pub(crate) fn encode(self) -> [u8; MSG_LEN] {
        let (kind, a, b) = match self {
            Msg::Unshared => (1i32, 0, 0),
            Msg::Ready => (2, 0, 0),
            Msg::Exited(s) => (3, s, 0),
            Msg::Failed(step, errno) => (4, step.code(), errno),
            Msg::InitDied(s) => (5, s, 0),
        };
        let mut out = [0u8; MSG_LEN];
        out[..4].copy_from_slice(&kind.to_ne_bytes());
        out[4..8].copy_from_slice(&a.to_ne_bytes());
        out[8..].copy_from_slice(&b.to_ne_bytes());
        out
    }

    pub(crate) fn decode(b: &[u8; MSG_LEN]) -> Option<Msg> {
        let int = |r: std::ops::Range<usize>| i32::from_ne_bytes(b[r].try_into().expect("4 bytes"));
        let (a, c) = (int(4..8), int(8..12));
        Some(match int(0..4) {
            1 => Msg::Unshared,
            2 => Msg::Ready,
            3 => Msg::Exited(a),
            4 => Msg::Failed(Step::from_code(a)?, c),
            5 => Msg::InitDied(a),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        for m in [
            Msg::Unshared,
            Msg::Ready,
            Msg::Exited(9),
            Msg::Failed(Step::Op(7), libc::EPERM),
            Msg::Failed(Step::Exec, libc::ENOENT),
            Msg::InitDied(libc::SIGKILL),
        ] {
            assert_eq!(Msg::decode(&m.encode()), Some(m));
        }
        assert_eq!(Msg::decode(&[0xff; MSG_LEN]), None);
    }
}
