//! The kernel's pid counter: whether it can have wrapped around between two points.
//!
//! The kernel hands out pids cyclically: the next free one after the pid handed out last,
//! back to the bottom of the range once it passes `pid_max`. A process group's members
//! are born after its leader, so while the counter has not wrapped since, their pids lie
//! between the group's id and the last pid handed out, and a few probes find them all
//! instead of a listing of every process on the machine. After a wrap they can be
//! anywhere (on a busy machine with the old default `pid_max` of 32768, within minutes).
//!
//! Whether it wrapped is told from counts the kernel keeps, not from time: each task
//! started since a point moved the counter by one pid, and each pid in use at that point
//! (a task's own id, or the id of a group or a session: at most three a task) may have
//! been stepped over. So from a [`PidMark`] taken with `last` handed out, `started` tasks
//! started since boot and `alive` tasks alive, the counter cannot have wrapped while
//! `last + (started' − started) + 3·alive < pid_max`. The counts are machine-wide, so in a
//! container they only make the bound looser. A checkpoint tool that writes
//! `ns_last_pid` (it needs admin powers) moves the counter outside this reckoning.

use std::fs;
use std::sync::OnceLock;

/// A point in the history of the pid counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PidMark {
    /// The pid this namespace handed out last.
    pub(crate) last: i32,
    /// Tasks started since boot, read before `last`: a lower bound at `last`.
    started_before: u64,
    /// Tasks started since boot, read after `last`: an upper bound at `last`.
    started_after: u64,
    /// Tasks alive (threads included), read before `last`.
    alive: u64,
}

impl PidMark {
    /// The counter now; `None` where `/proc` does not tell.
    pub(crate) fn now() -> Option<PidMark> {
        let started_before = tasks_started()?;
        let alive = tasks_alive()?;
        let last = last_pid()?;
        let started_after = tasks_started()?;
        Some(PidMark {
            last,
            started_before,
            started_after,
            alive,
        })
    }

    /// Whether the counter cannot have wrapped around between `self` and `later`: every
    /// pid handed out since `self` lies in `self.last + 1 ..= later.last`.
    pub(crate) fn unwrapped_until(&self, later: &PidMark) -> bool {
        let Some(max) = pid_max() else {
            return false;
        };
        let steps = later.started_after.saturating_sub(self.started_before);
        let reach = u64::try_from(self.last)
            .unwrap_or(u64::MAX)
            .saturating_add(steps)
            .saturating_add(self.alive.saturating_mul(3));
        later.last >= self.last && reach < max
    }
}

/// The pid the kernel handed out last in this pid namespace.
pub(crate) fn last_pid() -> Option<i32> {
    fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Tasks started since boot (the `processes` line of `/proc/stat`, which counts threads
/// too: each takes a pid).
fn tasks_started() -> Option<u64> {
    let stat = fs::read_to_string("/proc/stat").ok()?;
    stat.lines()
        .find_map(|line| line.strip_prefix("processes "))?
        .trim()
        .parse()
        .ok()
}

/// Tasks alive now, threads included (the fourth field of `/proc/loadavg`, `running/all`).
fn tasks_alive() -> Option<u64> {
    let loadavg = fs::read_to_string("/proc/loadavg").ok()?;
    loadavg
        .split_whitespace()
        .nth(3)?
        .split_once('/')?
        .1
        .parse()
        .ok()
}

/// The bound past which pids wrap, read once: raising it at run time only delays a wrap.
fn pid_max() -> Option<u64> {
    static MAX: OnceLock<Option<u64>> = OnceLock::new();
    *MAX.get_or_init(|| {
        fs::read_to_string("/proc/sys/kernel/pid_max")
            .ok()?
            .trim()
            .parse()
            .ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(last: i32, started: u64, alive: u64) -> PidMark {
        PidMark {
            last,
            started_before: started,
            started_after: started,
            alive,
        }
    }

    #[test]
    fn a_mark_reads_this_machine() {
        let before = PidMark::now().unwrap();
        std::process::Command::new("true").status().unwrap();
        let after = PidMark::now().unwrap();
        assert!(after.started_after > before.started_before);
        assert!(before.alive > 0);
        assert!(before.last > 0 && after.last > 0);
    }

    #[test]
    fn the_counter_wraps_only_past_its_reach() {
        let max = i32::try_from(pid_max().unwrap()).unwrap();
        let base = mark(1000, 50_000, 100);
        // 1000 + 10 started + 300 possibly stepped over: far below any pid_max.
        assert!(base.unwrapped_until(&mark(1010, 50_010, 100)));
        // Enough tasks started to go round once, even if the counter now reads higher.
        let round = u64::try_from(max).unwrap();
        assert!(!base.unwrapped_until(&mark(1010, 50_000 + round, 100)));
        // The counter below where it was: it wrapped.
        assert!(!base.unwrapped_until(&mark(999, 50_001, 100)));
        // Close to the top, the pids in use at the mark may be stepped over.
        let high = mark(max - 400, 50_000, 100);
        assert!(high.unwrapped_until(&mark(max - 390, 50_010, 100)));
        assert!(!high.unwrapped_until(&mark(max - 390, 50_100, 100)));
    }
}
