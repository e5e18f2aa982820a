//! The service's own kill of a session's tree, for when the shim does not do it.
//!
//! The shim kills its tree on close, and nothing of the session can stop that while the
//! shim runs as designed. But the shim runs as the session's user, outside any sandbox,
//! and its command is its child: an unsandboxed session may stop it (`kill -STOP
//! $PPID`), kill it, or lower its limits (`prlimit --pid $PPID`) so that it cannot do its
//! work. So the service does not trust it to: a close that the shim has not finished
//! within its grace and a margin ([`close_deadlines`]), and a shim that went away without
//! saying it left nothing behind ([`Report::Finished`](crate::shim::Report::Finished)),
//! make the service kill the tree itself, here.
//!
//! The tree is whatever is in the shim's process session (its pid is the session's id:
//! the shim called `setsid`, and the command and its descendants are in it unless they
//! left it), and everything below the shim or below any of those by parent links. The
//! kill freezes before it kills: every process found gets SIGSTOP (a stopped process
//! cannot fork), the scan repeats until it finds nobody new, then everything but the shim
//! gets SIGKILL, again until nothing found is alive, and the shim last, so that orphans of
//! the kill reparent to the stopped shim, where the next scan sees them, and not away.
//! A process that left the session and whose parent died before the scan (reparented to
//! init) is out of reach here; the spawner, a child subreaper, adopts those when a shim
//! dies and kills them itself (see [`spawner`](crate::spawner)).
//!
//! A sandboxed session cannot stop any of this: the service runs outside its sandbox,
//! and on kernels with Landlock's signal scope (ABI 6) it cannot signal the service, the
//! spawner or the shim at all, and whatever it does to its shim ends in this kill. An
//! unsandboxed session runs as the user and could kill the service itself; what it
//! cannot do is make a close hang or keep its tree alive past it.

use std::collections::HashSet;
use std::time::Duration;

/// When a close stops waiting for the shim and kills the tree itself, and when it stops
/// waiting for the session's end at all, both counted from the close.
///
/// The shim itself takes `grace`, then SIGKILL rounds of a few milliseconds: the margin
/// after `grace` is ten times what a tree of hundreds takes on a loaded machine. The last
/// deadline keeps a close within its grace plus one second, whatever the shim does; what
/// is left between the two is the service's own kill (a few milliseconds per scan of
/// `/proc`) and the drain of the last output.
pub(crate) fn close_deadlines(grace: Duration) -> (Duration, Duration) {
    (
        grace + Duration::from_millis(300),
        grace + Duration::from_millis(900),
    )
}

/// The most scans of `/proc` one kill makes: a tree that keeps growing past this many
/// rounds of SIGSTOP is a fork bomb whose parents are frozen by then anyway.
const MAX_ROUNDS: usize = 64;

/// One process as `/proc/<pid>/stat` tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Link {
    pub(crate) pid: i32,
    pub(crate) ppid: i32,
    pub(crate) sid: i32,
}

/// The processes of the session whose shim is `shim`, among `links`: the shim, every
/// process in its process session, and everything below one of those. `me` (the service)
/// and init are never part of it, whatever `/proc` said.
pub(crate) fn members(shim: i32, me: i32, links: &[Link]) -> HashSet<i32> {
    // Never through them either: the service's other children are not the session's.
    let never = |pid: i32| pid == me || pid <= 1;
    let mut found: HashSet<i32> = links
        .iter()
        .filter(|link| (link.pid == shim || link.sid == shim) && !never(link.pid))
        .map(|link| link.pid)
        .collect();
    loop {
        let before = found.len();
        for link in links {
            if found.contains(&link.ppid) && !never(link.pid) {
                found.insert(link.pid);
            }
        }
        if found.len() == before {
            break;
        }
    }
    found
}

/// The live processes and their links (zombies left out: they hold nothing and die with
/// their parent), or `None` if `/proc` cannot be read.
fn scan() -> Option<Vec<Link>> {
    Some(
        crate::procfs::session_links()?
            .into_iter()
            .map(|(pid, ppid, sid)| Link { pid, ppid, sid })
            .collect(),
    )
}

/// Kills the tree of the session whose shim has pid `shim` (alive, stopped, spinning or
/// already dead), and returns how many processes it signalled. Blocking: a few
/// milliseconds per scan of `/proc`.
pub(crate) fn kill(shim: i32) -> usize {
    let me = std::process::id() as i32;
    let signal = |pid: i32, signal: i32| {
        // SAFETY: kill(2) takes two integers and touches no memory of ours; `pid` was
        // found in the session's tree a moment ago.
        unsafe { libc::kill(pid, signal) };
    };
    // Freeze: the shim first (it then reaps nothing, so its children stay findable), then
    // every member, until a scan finds nobody new.
    let mut frozen: HashSet<i32> = HashSet::new();
    for _ in 0..MAX_ROUNDS {
        let Some(links) = scan() else { break };
        let found = members(shim, me, &links);
        let mut new: Vec<i32> = found.difference(&frozen).copied().collect();
        if new.is_empty() {
            break;
        }
        new.sort_by_key(|&pid| pid != shim);
        for pid in new {
            signal(pid, libc::SIGSTOP);
            frozen.insert(pid);
        }
    }
    // Kill everything but the shim, until nothing of the tree but the shim lives: orphans
    // of the kill reparent to the stopped shim and are found on the next round.
    for _ in 0..MAX_ROUNDS {
        let Some(links) = scan() else { break };
        let alive: Vec<i32> = members(shim, me, &links)
            .into_iter()
            .filter(|&pid| pid != shim)
            .collect();
        if alive.is_empty() {
            break;
        }
        for pid in alive {
            signal(pid, libc::SIGKILL);
            frozen.insert(pid);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    signal(shim, libc::SIGKILL);
    frozen.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(pid: i32, ppid: i32, sid: i32) -> Link {
        Link { pid, ppid, sid }
    }

    #[test]
    fn the_tree_is_the_shims_session_and_what_is_below_it() {
        let links = [
            link(1, 0, 1),
            link(10, 1, 10),  // the service
            link(20, 10, 10), // its spawner
            link(30, 20, 30), // the shim
            link(31, 30, 30), // the command
            link(32, 31, 32), // a setsid daemon, child of the command
            link(33, 32, 32), // its child
            link(34, 1, 30),  // a double fork reparented to init, still in the session
            link(35, 30, 35), // a setsid daemon adopted by the shim
            link(40, 1, 40),  // a stranger
            link(41, 40, 30), // cannot happen (sessions are inherited), but no harm
        ];
        let mut found: Vec<i32> = members(30, 10, &links).into_iter().collect();
        found.sort();
        assert_eq!(found, [30, 31, 32, 33, 34, 35, 41]);
        // The service and init are never members, even if /proc says so.
        let odd = [link(1, 0, 30), link(10, 30, 30), link(50, 10, 50)];
        assert!(members(30, 10, &odd).is_empty());
    }

    #[test]
    fn the_close_deadlines_keep_the_contract() {
        for grace in [0, 500, 10_000].map(Duration::from_millis) {
            let (shim, give_up) = close_deadlines(grace);
            assert!(grace < shim && shim < give_up);
            assert!(give_up <= grace + Duration::from_secs(1));
        }
    }
}
