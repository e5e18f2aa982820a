//! Which processes of this user the background server refuses: those more confined than
//! the server itself, by what they are, read from the kernel, not by where they come from.
//!
//! A sandbox leaves Unix sockets reachable by path; through the background server a
//! sandboxed process could open a session without the sandbox. Every sandboxed process of
//! a session runs with `no_new_privs` and a seccomp filter, and in namespaces of its own,
//! none of which it can shed; a client the server should serve (`mcp --persist` started
//! by a host, `ls`, `attach`, `stop`) runs as the user's processes do, usually exactly as
//! confined as the server, which such a client started. So a peer (its pid from
//! `SO_PEERCRED`) is refused when `/proc/<pid>/status` shows `NoNewPrivs: 1` and the
//! server's does not, a seccomp mode the server does not have or more seccomp filters
//! than the server has, or when its user, mount or PID namespace is not the server's; and
//! when any of that cannot be read. Whoever confined the peer, the server would lift that
//! confinement by serving it, so a host sandboxed by something else (a flatpak, a
//! container of its own) is refused too, while a server started inside such a sandbox
//! serves its peers there.
//!
//! This used to walk the peer's ancestry looking for a shim; a daemon whose parents died
//! (reparented to init) escaped it. What a process is stays with it wherever it is
//! reparented.

use std::os::unix::fs::MetadataExt as _;

/// The namespaces compared: a sandboxed session gets its own of each.
pub const NAMESPACES: [&str; 3] = ["user", "mnt", "pid"];

/// What confines a process, as the kernel tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    /// `NoNewPrivs: 1`.
    pub no_new_privs: bool,
    /// `Seccomp`: 0 none, 1 strict, 2 filters.
    pub seccomp: u8,
    /// `Seccomp_filters`: how many filters apply (Linux 5.9 and later; `None` before).
    pub filters: Option<u32>,
    /// The identities (device and inode) of [`NAMESPACES`], in that order.
    pub namespaces: [(u64, u64); 3],
}

/// The status fields of a [`Confinement`], from the text of `/proc/PID/status`: `None`
/// when `NoNewPrivs` or `Seccomp` is missing (a kernel without them cannot say).
pub fn parse_status(text: &str) -> Option<(bool, u8, Option<u32>)> {
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    };
    let no_new_privs = field("NoNewPrivs")?.parse::<u8>().ok()? != 0;
    let seccomp = field("Seccomp")?.parse().ok()?;
    let filters = field("Seccomp_filters").and_then(|n| n.parse().ok());
    Some((no_new_privs, seccomp, filters))
}

/// Why a peer is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// It is more confined than the server: a sandboxed session, or sandboxed otherwise.
    Confined,
    /// Its state cannot be read (gone already, not visible from here, or not readable).
    Unknown,
}

/// The rule, pure: `server` and `peer` as read from `/proc` (`None`: unreadable).
pub fn decide(server: &Confinement, peer: Option<&Confinement>) -> Result<(), Refused> {
    let Some(peer) = peer else {
        return Err(Refused::Unknown);
    };
    let more_filters = match (peer.filters, server.filters) {
        (Some(peer), Some(server)) => peer > server,
        // A kernel without the count (before 5.9) runs no sandbox of ours (Landlock came
        // with 5.13): only the mode can tell.
        _ => false,
    };
    let confined = (peer.no_new_privs && !server.no_new_privs)
        || (peer.seccomp != 0 && peer.seccomp != server.seccomp)
        || more_filters
        || peer.namespaces != server.namespaces;
    if confined {
        Err(Refused::Confined)
    } else {
        Ok(())
    }
}

/// Reads the [`Confinement`] of process `pid` (`"self"` for this one).
pub fn read(pid: &str) -> Option<Confinement> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let (no_new_privs, seccomp, filters) = parse_status(&text)?;
    let mut namespaces = [(0, 0); 3];
    for (slot, name) in namespaces.iter_mut().zip(NAMESPACES) {
        // Following the link needs the right to inspect the process (same user, and it
        // did not make itself undumpable): what cannot be read is refused.
        let meta = std::fs::metadata(format!("/proc/{pid}/ns/{name}")).ok()?;
        *slot = (meta.dev(), meta.ino());
    }
    Some(Confinement {
        no_new_privs,
        seccomp,
        filters,
        namespaces,
    })
}

/// Whether the peer of pid `peer` (from `SO_PEERCRED`; `None` or 0 when the kernel could
/// not name it in this PID namespace) may use this server.
pub fn check(peer: Option<i32>) -> Result<(), Refused> {
    let Some(pid) = peer.filter(|&pid| pid > 0) else {
        return Err(Refused::Unknown);
    };
    let Some(server) = read("self") else {
        return Err(Refused::Unknown);
    };
    decide(&server, read(&pid.to_string()).as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Confinement {
        Confinement {
            no_new_privs: false,
            seccomp: 0,
            filters: Some(0),
            namespaces: [(4, 10), (4, 11), (4, 12)],
        }
    }

    #[test]
    fn the_status_fields_are_read() {
        let text = "Name:\tsh\nPPid:\t41\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t3\n";
        assert_eq!(parse_status(text), Some((true, 2, Some(3))));
        let text = "Name:\tbash\nNoNewPrivs:\t0\nSeccomp:\t0\n";
        assert_eq!(parse_status(text), Some((false, 0, None)));
        // A kernel that cannot tell: the peer is unknown, hence refused.
        assert_eq!(parse_status("Name:\tx\nPPid:\t3\n"), None);
        assert_eq!(parse_status("NoNewPrivs:\tyes\nSeccomp:\t0\n"), None);
    }

    #[test]
    fn a_peer_more_confined_than_the_server_is_refused() {
        let server = plain();
        let sandboxed = Confinement {
            no_new_privs: true,
            seccomp: 2,
            filters: Some(1),
            ..plain()
        };
        assert_eq!(decide(&server, Some(&sandboxed)), Err(Refused::Confined));
        // Any one mark is enough: each is something the server would lift.
        let nnp = Confinement {
            no_new_privs: true,
            ..plain()
        };
        assert_eq!(decide(&server, Some(&nnp)), Err(Refused::Confined));
        let strict = Confinement {
            seccomp: 1,
            ..plain()
        };
        assert_eq!(decide(&server, Some(&strict)), Err(Refused::Confined));
        for slot in 0..3 {
            let mut moved = plain();
            moved.namespaces[slot].1 += 100;
            assert_eq!(decide(&server, Some(&moved)), Err(Refused::Confined));
        }
        // In a container whose every process has a filter, one more is a sandbox.
        let container = Confinement {
            seccomp: 2,
            filters: Some(1),
            ..plain()
        };
        let inside = Confinement {
            no_new_privs: false,
            filters: Some(2),
            ..container.clone()
        };
        assert_eq!(decide(&container, Some(&inside)), Err(Refused::Confined));
        assert_eq!(decide(&server, None), Err(Refused::Unknown));
    }

    #[test]
    fn a_peer_confined_as_the_server_is_or_less_is_served() {
        let server = plain();
        assert_eq!(decide(&server, Some(&plain())), Ok(()));
        // A server started inside a sandbox (a container, a confined host) serves its
        // peers there, and peers less confined than itself.
        let container = Confinement {
            no_new_privs: true,
            seccomp: 2,
            filters: Some(1),
            ..plain()
        };
        assert_eq!(decide(&container, Some(&container.clone())), Ok(()));
        assert_eq!(decide(&container, Some(&plain())), Ok(()));
        // Without the filter count, equal modes cannot be told apart.
        let old = Confinement {
            filters: None,
            ..container.clone()
        };
        assert_eq!(decide(&old, Some(&old.clone())), Ok(()));
    }

    #[test]
    fn this_process_is_served_and_the_unnamed_refused() {
        let me = i32::try_from(std::process::id()).unwrap();
        assert!(read("self").is_some());
        assert_eq!(check(Some(me)), Ok(()));
        assert_eq!(check(None), Err(Refused::Unknown));
        assert_eq!(check(Some(0)), Err(Refused::Unknown));
        assert_eq!(check(Some(i32::MAX)), Err(Refused::Unknown));
    }
}
