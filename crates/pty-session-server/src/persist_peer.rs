//! Which processes of this user the background server refuses: those of sandboxed
//! sessions. A sandbox leaves Unix sockets open and cannot keep a process from
//! connecting to one by its path; through the background server such a process could
//! open a session without the sandbox. Every process of a session descends from its
//! shim (`pty-shim`, a child subreaper, so even a double-forked daemon stays below it),
//! and the server's own sessions from the server (server → spawner → shim → …); a
//! sandboxed process runs with `no_new_privs` and a seccomp filter, which it cannot
//! shed. A peer with both below this server or below any shim (a sandboxed session of
//! another pty-session server, such as a stdio one) is refused; one outside (the user's
//! hosts, sandboxed by anything else or not) or in an unsandboxed session is served.

use std::path::PathBuf;

/// The name (`comm`) of a session's shim.
const SHIM: &str = "pty-shim";

/// The fields of `/proc/PID/status` the rule reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// `Name`: the process's `comm`.
    pub name: String,
    /// `PPid`: 0 for the first process of its namespace.
    pub ppid: i32,
    /// `NoNewPrivs: 1`.
    pub no_new_privs: bool,
    /// `Seccomp: 2`: a seccomp filter applies.
    pub seccomp_filter: bool,
}

/// Reads the [`Status`] fields from the text of `/proc/PID/status`.
pub fn parse_status(text: &str) -> Option<Status> {
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    };
    Some(Status {
        name: field("Name")?.to_owned(),
        ppid: field("PPid")?.parse().ok()?,
        no_new_privs: field("NoNewPrivs") == Some("1"),
        seccomp_filter: field("Seccomp") == Some("2"),
    })
}

/// Why a peer is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// It runs in one of the server's sessions, under its sandbox.
    SandboxedSession,
    /// Its process cannot be read (gone already, or not visible from here).
    Unknown,
}

/// The rule, pure: `peer` is the peer's status, `ancestors` the pids and names up its
/// parent chain (`Err` if the chain broke before its root), `server` this server's pid.
/// Refused when the peer is confined (`no_new_privs` and a seccomp filter) and the
/// server or a shim is among its ancestors, or the chain cannot tell.
pub fn decide(
    server: i32,
    peer: Option<&Status>,
    ancestors: Result<&[(i32, String)], ()>,
) -> Result<(), Refused> {
    let Some(peer) = peer else {
        return Err(Refused::Unknown);
    };
    if !(peer.no_new_privs && peer.seccomp_filter) {
        return Ok(());
    }
    match ancestors {
        Ok(chain)
            if !chain
                .iter()
                .any(|(pid, name)| *pid == server || name == SHIM) =>
        {
            Ok(())
        }
        _ => Err(Refused::SandboxedSession),
    }
}

/// The longest parent chain walked: deeper than any real one.
const MAX_DEPTH: usize = 4096;

fn status_of(pid: i32) -> Option<Status> {
    let text = std::fs::read_to_string(PathBuf::from(format!("/proc/{pid}/status"))).ok()?;
    parse_status(&text)
}

/// Whether the peer of pid `peer` (from `SO_PEERCRED`) may use this server.
pub fn check(peer: Option<i32>) -> Result<(), Refused> {
    let server = i32::try_from(std::process::id()).unwrap_or(i32::MAX);
    let Some(pid) = peer.filter(|&pid| pid > 0) else {
        return Err(Refused::Unknown);
    };
    let status = status_of(pid);
    let mut chain = Vec::new();
    let mut walked = Ok(());
    let mut next = status.as_ref().map(|status| status.ppid);
    while let Some(parent) = next.filter(|&parent| parent > 0) {
        if chain.len() >= MAX_DEPTH {
            walked = Err(());
            break;
        }
        match status_of(parent) {
            Some(status) => {
                next = Some(status.ppid);
                chain.push((parent, status.name));
            }
            None => {
                walked = Err(());
                break;
            }
        }
    }
    decide(server, status.as_ref(), walked.map(|()| chain.as_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn confined() -> Status {
        Status {
            name: "python3".into(),
            ppid: 40,
            no_new_privs: true,
            seccomp_filter: true,
        }
    }

    fn chain(links: &[(i32, &str)]) -> Vec<(i32, String)> {
        links
            .iter()
            .map(|(pid, name)| (*pid, (*name).to_owned()))
            .collect()
    }

    #[test]
    fn the_status_fields_are_read() {
        let text = "Name:\tsh\nPPid:\t41\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t2\n";
        assert_eq!(
            parse_status(text),
            Some(Status {
                name: "sh".into(),
                ppid: 41,
                no_new_privs: true,
                seccomp_filter: true
            })
        );
        let text = "Name:\tbash\nPPid:\t1\nNoNewPrivs:\t0\nSeccomp:\t0\n";
        assert_eq!(
            parse_status(text),
            Some(Status {
                name: "bash".into(),
                ppid: 1,
                no_new_privs: false,
                seccomp_filter: false
            })
        );
        // Strict mode (1) is not a filter; a kernel without the fields confines nothing.
        let strict = parse_status("Name:\tx\nPPid:\t3\nNoNewPrivs:\t1\nSeccomp:\t1\n").unwrap();
        assert!(!strict.seccomp_filter);
        assert!(!parse_status("Name:\tx\nPPid:\t3\n").unwrap().no_new_privs);
        assert_eq!(parse_status("Name:\tsh\n"), None);
    }

    #[test]
    fn a_confined_process_below_the_server_or_a_shim_is_refused() {
        let peer = confined();
        // Below this server: server, spawner, shim, the session's shell.
        let below = chain(&[
            (40, "sh"),
            (30, "pty-shim"),
            (20, "pty-spawner"),
            (10, "pty-session"),
            (1, "systemd"),
        ]);
        assert_eq!(
            decide(10, Some(&peer), Ok(&below)),
            Err(Refused::SandboxedSession)
        );
        // Below this server even if the shim were named otherwise.
        let renamed = chain(&[(40, "sh"), (10, "pty-session"), (1, "init")]);
        assert_eq!(
            decide(10, Some(&peer), Ok(&renamed)),
            Err(Refused::SandboxedSession)
        );
        // A sandboxed session of another server (a stdio one, say).
        let other = chain(&[
            (40, "sh"),
            (31, "pty-shim"),
            (21, "pty-spawner"),
            (11, "pty-session"),
            (1, "init"),
        ]);
        assert_eq!(
            decide(10, Some(&peer), Ok(&other)),
            Err(Refused::SandboxedSession)
        );
        // A chain that broke before its root cannot clear it.
        assert_eq!(
            decide(10, Some(&peer), Err(())),
            Err(Refused::SandboxedSession)
        );
        assert_eq!(decide(10, None, Ok(&[])), Err(Refused::Unknown));
    }

    #[test]
    fn unconfined_or_foreign_processes_are_served() {
        let peer = confined();
        // Confined by something else (flatpak, a browser's sandbox): no shim above it.
        let host = chain(&[(40, "bwrap"), (30, "systemd"), (1, "systemd")]);
        assert_eq!(decide(10, Some(&peer), Ok(&host)), Ok(()));
        // An unsandboxed session of the server.
        let plain = Status {
            no_new_privs: false,
            seccomp_filter: false,
            ..confined()
        };
        let below = chain(&[(40, "pty-shim"), (10, "pty-session"), (1, "init")]);
        assert_eq!(decide(10, Some(&plain), Ok(&below)), Ok(()));
        // `no_new_privs` alone, or a filter alone, is not a session's sandbox.
        let nnp = Status {
            seccomp_filter: false,
            ..confined()
        };
        assert_eq!(decide(10, Some(&nnp), Ok(&below)), Ok(()));
        // The chain is not read at all for an unconfined peer.
        assert_eq!(decide(10, Some(&plain), Err(())), Ok(()));
    }

    #[test]
    fn this_process_is_served() {
        let me = i32::try_from(std::process::id()).unwrap();
        let status = status_of(me).unwrap();
        assert!(status.ppid >= 0);
        // Unless the tests themselves run confined, the check reads and clears them.
        if !(status.no_new_privs && status.seccomp_filter) {
            assert_eq!(check(Some(me)), Ok(()));
        }
        assert_eq!(check(None), Err(Refused::Unknown));
        assert_eq!(check(Some(0)), Err(Refused::Unknown));
    }
}
