//! What `/proc` tells about processes: parent links (for the shim's tree kill) and whether
//! the terminal's foreground group waits for input (for settling).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::Path;

use crate::blocked::{self, TaskWait, Verdict};
use crate::pids::{PidMark, last_pid};

/// Room for any of the small `/proc` records read here (`stat` is about 300 bytes).
const RECORD_BYTES: usize = 1024;

/// Reads a small `/proc` record with one `read`: the kernel formats the whole record for
/// the first read, so a buffer that holds it gets it at once (`read_to_string` grows its
/// buffer from 32 bytes and makes six calls for a `stat`). Settling samples these files
/// every few hundred microseconds, so the calls count.
fn read_record(path: impl AsRef<Path>, buf: &mut [u8; RECORD_BYTES]) -> Option<Cow<'_, str>> {
    let n = fs::File::open(path).ok()?.read(buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]))
}

/// One process's `stat` fields that matter here.
struct Stat {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    /// The process's session (`setsid`'s id: its leader's pid).
    sid: i32,
}

/// The fields of a `stat` record that follow the command name, the state first. The name
/// is in parentheses and may itself contain spaces and parentheses, so the fields are
/// read after the last `)`.
fn fields_after_name(text: &str) -> Option<std::str::Split<'_, char>> {
    Some(text.get(text.rfind(')')? + 2..)?.split(' '))
}

/// Parses `/proc/<pid>/stat`.
fn parse_stat(text: &str) -> Option<(char, Stat)> {
    let pid = text.split(' ').next()?.parse().ok()?;
    let mut fields = fields_after_name(text)?;
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let sid = fields.next()?.parse().ok()?;
    Some((
        state,
        Stat {
            pid,
            ppid,
            pgrp,
            sid,
        },
    ))
}

/// The `stat` of every process whose pid is at least `min_pid`. Only the directory is
/// read for the others, so a small range costs little on a machine with many processes.
fn stats_from(min_pid: i32) -> impl Iterator<Item = Stat> {
    fs::read_dir("/proc")
        .into_iter()
        .flat_map(move |dir| stats_in(dir, min_pid))
}

/// [`stats_from`] over a listing of `/proc` already opened.
fn stats_in(dir: fs::ReadDir, min_pid: i32) -> impl Iterator<Item = Stat> {
    dir.flatten().filter_map(move |entry| {
        let name = entry.file_name();
        let pid: i32 = name.to_str()?.parse().ok()?;
        if pid < min_pid {
            return None;
        }
        let mut buf = [0; RECORD_BYTES];
        let text = read_record(format!("/proc/{pid}/stat"), &mut buf)?;
        parse_stat(&text).map(|(_, stat)| stat)
    })
}

/// `(pid, ppid)` of every process; `None` if `/proc` cannot be listed.
pub(crate) fn parent_links() -> Option<Vec<(i32, i32)>> {
    let dir = fs::read_dir("/proc").ok()?;
    Some(stats_in(dir, 0).map(|stat| (stat.pid, stat.ppid)).collect())
}

/// `(pid, ppid, sid)` of every live process (zombies left out); `None` if `/proc`
/// cannot be listed.
pub(crate) fn session_links() -> Option<Vec<(i32, i32, i32)>> {
    let dir = fs::read_dir("/proc").ok()?;
    let live = dir.flatten().filter_map(|entry| {
        let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
        let mut buf = [0; RECORD_BYTES];
        let text = read_record(format!("/proc/{pid}/stat"), &mut buf)?;
        let (state, stat) = parse_stat(&text)?;
        (!matches!(state, 'Z' | 'X')).then_some((stat.pid, stat.ppid, stat.sid))
    });
    Some(live.collect())
}

/// The pids of process group `pgrp` among `low..=high`.
///
/// Listing `/proc` costs one entry per process and reading every `stat` one read each
/// (measured: 47 ms with 2,075 processes), so when the range is short its pids are probed
/// by name, and otherwise only the `stat` of pids in it is read.
fn members_between(pgrp: i32, low: i32, high: i32) -> Vec<i32> {
    if high < low {
        Vec::new()
    } else if high - low < PROBE_PIDS {
        probe_group(pgrp, low, high)
    } else {
        stats_from(low)
            .filter(|stat| stat.pgrp == pgrp && stat.pid <= high)
            .map(|stat| stat.pid)
            .collect()
    }
}

/// The pids of process group `pgrp`, from every process on the machine.
fn all_members(pgrp: i32) -> Vec<i32> {
    stats_from(0)
        .filter_map(|stat| (stat.pgrp == pgrp).then_some(stat.pid))
        .collect()
}

/// The members of `pgrp` among the pids `low..=high`, probed one by one. A thread's id
/// answers a probe too, with its process's group, so the threads of each member found
/// are skipped: otherwise every sample would read a many-threaded program's tasks once
/// per thread (node's twelve made its settles four times slower).
fn probe_group(pgrp: i32, low: i32, high: i32) -> Vec<i32> {
    let mut members = Vec::new();
    let mut threads = Vec::new();
    let mut buf = [0; RECORD_BYTES];
    for pid in low..=high {
        if threads.contains(&pid) {
            continue;
        }
        let Some(text) = read_record(format!("/proc/{pid}/stat"), &mut buf) else {
            continue;
        };
        // A thread started after its process was probed answers with its group too.
        if parse_stat(&text).is_some_and(|(_, stat)| stat.pgrp == pgrp) && in_group(pid, pgrp) {
            members.push(pid);
            threads.extend(task_ids(pid).filter(|&tid| tid != pid));
        }
    }
    members
}

/// The ids of a process's tasks (threads); none when they cannot be listed.
fn task_ids(pid: i32) -> impl Iterator<Item = i32> {
    list_tasks(pid).into_iter().flatten()
}

/// The ids of a process's tasks, or why its task directory cannot be listed.
fn list_tasks(pid: i32) -> std::io::Result<impl Iterator<Item = i32>> {
    Ok(fs::read_dir(format!("/proc/{pid}/task"))?
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok()))
}

/// The members of the foreground group last looked up, kept from settle to settle: a
/// lookup reads `/proc`, so a send must not pay for one each time.
///
/// A group's members are born after its leader, so their pids follow the group's id up
/// to the last pid handed out, unless the pid counter wrapped around since
/// ([`pids`](crate::pids)). Whether it did is told from a mark taken before the
/// session's command started (for a group new to the cache) or when the members were
/// last all known (for the same group); only when it may have is every process on the
/// machine read.
pub(crate) struct GroupCache {
    /// Taken before the session's command started: all of its processes are newer.
    born_after: Option<PidMark>,
    /// The session's shim, a child subreaper: every process of the session is below it
    /// ([`group_below`]).
    root: Option<i32>,
    /// Short lock, no `.await` while held; a refill reads `/proc` synchronously (bounded:
    /// a few pids, or one listing of `/proc`).
    known: std::sync::Mutex<Option<Known>>,
}

/// A group's members as last looked up.
struct Known {
    pgrp: i32,
    members: Vec<i32>,
    /// The counter when all of them were known.
    mark: Option<PidMark>,
    /// The highest pid probed since (by [`Lookup::New`]).
    probed: i32,
}

/// How freshly [`GroupCache::members`] looks the members up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// As last looked up, unless the group changed.
    Known,
    /// Also the processes started since the last lookup (one that joined the group since
    /// would be missed): a probe of a few pids, unless many were handed out meanwhile.
    New,
    /// Afresh.
    All,
}

impl GroupCache {
    /// A cache for the groups of a session whose command starts after `born_after`.
    pub(crate) fn new(born_after: Option<PidMark>) -> GroupCache {
        GroupCache {
            born_after,
            root: None,
            known: std::sync::Mutex::new(None),
        }
    }

    /// Looks members up below `root`, the session's shim, before reading `/proc` at large.
    pub(crate) fn below(mut self, root: i32) -> GroupCache {
        self.root = Some(root);
        self
    }

    /// The members of process group `pgrp`, looked up as `lookup` asks, and afresh when
    /// the group changed.
    pub(crate) fn members(&self, pgrp: i32, lookup: Lookup) -> Vec<i32> {
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        match (lookup, known.as_mut()) {
            (Lookup::Known, Some(cached)) if cached.pgrp == pgrp => {
                return cached.members.clone();
            }
            (Lookup::New, Some(cached)) if cached.pgrp == pgrp => {
                // Only adds members: one found here is one now, wrap or not; what a wrap
                // hides, the next full lookup finds.
                if let Some(last) = last_pid()
                    && last >= cached.probed
                    && last - cached.probed < PROBE_PIDS
                {
                    for pid in cached.probed + 1..=last {
                        if in_group(pid, pgrp) && !cached.members.contains(&pid) {
                            cached.members.push(pid);
                        }
                    }
                    cached.probed = last;
                }
                return cached.members.clone();
            }
            _ => {}
        }
        let now = PidMark::now();
        let unwrapped_since = |mark: Option<PidMark>| matches!((mark, now), (Some(mark), Some(now)) if mark.unwrapped_until(&now));
        let below = self.root.and_then(|root| group_below(root, pgrp));
        let members = below.unwrap_or_else(|| match (known.as_ref(), now) {
            (Some(cached), Some(now)) if cached.pgrp == pgrp && unwrapped_since(cached.mark) => {
                // Those born since the mark, those in the group's own range, and those
                // known then that are still in it.
                let since = cached.mark.map_or(pgrp, |mark| mark.last + 1);
                let mut members = members_between(pgrp, pgrp.min(since), now.last);
                let stayed = cached.members.iter().copied();
                let stayed: Vec<i32> = stayed
                    .filter(|pid| !members.contains(pid) && in_group(*pid, pgrp))
                    .collect();
                members.extend(stayed);
                members
            }
            (_, Some(now)) if unwrapped_since(self.born_after) => {
                members_between(pgrp, pgrp, now.last)
            }
            _ => all_members(pgrp),
        });
        *known = Some(Known {
            pgrp,
            members: members.clone(),
            mark: now,
            probed: now.map_or(i32::MAX, |now| now.last),
        });
        members
    }
}

/// How many times [`group_below`] walks a tree that changed under it before it gives up.
const WALKS: usize = 3;
/// Up to how many processes [`group_below`] walks: past that, a listing of `/proc` costs
/// about as much.
const WALKED: usize = 4096;

/// The members of group `pgrp` among the processes below `root` (itself included), sorted;
/// `None` when a walk could not vouch for every process there (see [`walk`]) three times
/// running, or there are too many of them, or `root` is gone.
///
/// `root` is a session's shim, a child subreaper: a process of the session that loses its
/// parent is handed to it (or to a subreaper below it, the init of a sandbox's pid
/// namespace say), so every process of the session stays below it. A process group lies
/// within one session, and the terminal's foreground group within the terminal's. So the
/// few processes of the session are read instead of every process on the machine, which
/// with fifty sessions made each send's lookup read the records of all the others.
fn group_below(root: i32, pgrp: i32) -> Option<Vec<i32>> {
    for _ in 0..WALKS {
        match walk(root, pgrp) {
            Ok(members) => return Some(members),
            Err(Unvouched::Changed) => {}
            Err(Unvouched::TooMany) => return None,
        }
    }
    None
}

/// Why a [`walk`] does not vouch for what it found.
enum Unvouched {
    /// Something it passed was leaving or gone: a walk again may do.
    Changed,
    /// More than [`WALKED`] processes: a walk again would not do better.
    TooMany,
}

/// One walk down from `root` through the `children` record of each task (each thread
/// lists the children it forked). Such a record is no snapshot: the kernel lists a task's
/// children one at a time and, from one read to the next, finds its place again by
/// position, so a child that leaves the list while it is read can make it skip another.
/// New children only ever join the end of a list (a fork, or orphans handed over), so the
/// walk vouches for what it read where nothing it listed left meanwhile:
/// - each child listed is still there, still the child of the process that listed it (a
///   child that left a list is gone or has another parent now; a reaped child's pid can
///   be handed to another process);
/// - each task's `stat`, read after its `children`, shows it neither dead nor exiting: a
///   task that exits hands its children to a subreaper or to a sibling thread, maybe one
///   the walk already passed (`PF_EXITING` is set before it does);
/// - each task's `children`, read once more after its `stat`, adds what the task gained
///   meanwhile: a thread that calls `execve` takes over its process's pid, and the old
///   leader's children with it, maybe between the two reads.
///
/// Anything else, and the caller walks again. A process forked after the walk passed its
/// parent is missed, as by any listing; its pid is newer than the mark taken before the
/// walk, which is where [`Lookup::New`] probes.
fn walk(root: i32, pgrp: i32) -> Result<Vec<i32>, Unvouched> {
    let mut members = Vec::new();
    let mut pending = vec![(root, None)];
    let mut walked = 0;
    let mut buf = [0; RECORD_BYTES];
    while let Some((pid, parent)) = pending.pop() {
        walked += 1;
        if walked > WALKED {
            return Err(Unvouched::TooMany);
        }
        let mut process = None;
        for tid in list_tasks(pid).map_err(|_| Unvouched::Changed)? {
            let dir = format!("/proc/{pid}/task/{tid}");
            let listed = read_children(&dir);
            let text = read_record(format!("{dir}/stat"), &mut buf);
            let gained = read_children(&dir);
            let (Some(listed), Some(text), Some(gained)) = (listed, text, gained) else {
                return Err(Unvouched::Changed);
            };
            match parse_task_stat(&text) {
                Some((state, _, flags))
                    if !matches!(state, 'Z' | 'X') && flags & PF_EXITING == 0 => {}
                _ => return Err(Unvouched::Changed),
            }
            for child in gained.iter().filter(|child| !listed.contains(child)) {
                pending.push((*child, Some(pid)));
            }
            pending.extend(listed.into_iter().map(|child| (child, Some(pid))));
            if tid == pid {
                process = parse_stat(&text).map(|(_, stat)| stat);
            }
        }
        // A process without its main task (it ended while others go on) is leaving.
        let Some(process) = process else {
            return Err(Unvouched::Changed);
        };
        if parent.is_some_and(|parent| process.ppid != parent) {
            return Err(Unvouched::Changed);
        }
        if process.pgrp == pgrp {
            members.push(pid);
        }
    }
    members.sort_unstable();
    members.dedup();
    Ok(members)
}

/// The pids a task's `children` record lists (`dir` is the task's `/proc` directory);
/// `None` when it cannot be read or does not parse.
fn read_children(dir: &str) -> Option<Vec<i32>> {
    // Room for a few hundred children in one read.
    let mut text = String::with_capacity(4096);
    fs::File::open(format!("{dir}/children"))
        .ok()?
        .read_to_string(&mut text)
        .ok()?;
    text.split_whitespace()
        .map(|pid| pid.parse().ok())
        .collect()
}

/// Whether process `pid` (a process, not another's thread: a thread's id answers too)
/// exists and is in group `pgrp`, from its `status` (`Tgid`, `NSpgid`).
fn in_group(pid: i32, pgrp: i32) -> bool {
    let Ok(status) = fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|value| value.split_whitespace().next()?.parse::<i32>().ok())
    };
    field("Tgid:") == Some(pid) && field("NSpgid:") == Some(pgrp)
}

/// Up to how many pids after a group's id are probed one by one rather than listed.
const PROBE_PIDS: i32 = 64;

/// Whether this machine can tell input wait: Linux with a known syscall table and a
/// readable `/proc/self/syscall`.
pub(crate) fn input_wait_supported() -> bool {
    crate::blocked::supported()
}

/// One look at a process group's tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GroupSample {
    /// How the group waits: for the person at the terminal, for work, or nobody can tell.
    pub(crate) verdict: Verdict,
    /// The sum of the tasks' run counts (`schedstat`): it changes when any task ran.
    pub(crate) runs: u64,
}

/// The `/proc` records of a process group's tasks, opened once and read again at each
/// look: a read at offset 0 makes the kernel format the record afresh, so a look costs
/// three reads a task instead of a listing of each member's tasks and an open, a read and
/// a close a record (measured: 41 µs → 11 µs a look at one sleeping task). Settling looks
/// every few hundred microseconds, and more often right after a write.
///
/// An open record stays bound to its task: once the task is gone it reads nothing, never
/// another process that got the pid. Tasks that come and go are noticed by such a failed
/// read, or by a process's thread count that differs from the tasks known for it, and
/// the records are opened again. A group of more than [`KEPT_TASKS`] tasks keeps none
/// open between looks.
#[derive(Default)]
pub(crate) struct GroupProbe {
    /// The session's terminal.
    tty: blocked::Terminal,
    /// Unix sockets' peers found so far, by inode (a socket's peer does not change).
    peers: HashMap<u64, Option<u64>>,
    /// The members the records were opened for.
    members: Vec<i32>,
    tasks: Vec<TaskRecords>,
    /// A live task's `stat` could not be opened (no descriptor left, say): looks then
    /// never tell input wait, since that task may be running.
    incomplete: bool,
    /// The session's shim: the processes below it outside the foreground group are its
    /// daemons ([`blocked::daemon_verdict`]). `None`: none are looked at.
    shim: Option<i32>,
}

/// The open records of one task.
struct TaskRecords {
    /// The process the task belongs to.
    pid: i32,
    /// How many tasks of that process were found when the records were opened.
    siblings: usize,
    stat: fs::File,
    /// Missing where the kernel refuses it (`syscall` of another user's process, such as
    /// a setuid `sudo`): that task is never counted as reading input.
    schedstat: Option<fs::File>,
    syscall: Option<fs::File>,
}

/// Groups of more tasks than this are read afresh at each look, keeping no descriptors
/// between looks, so that a settle on a large build holds a bounded number.
const KEPT_TASKS: usize = 32;

/// What one pass over the open records found.
enum Look {
    Sample(Option<GroupSample>),
    /// A task is gone or a process has tasks the probe does not know.
    TasksChanged,
}

impl GroupProbe {
    /// A probe of the foreground group of terminal `tty` (`/dev/pts/3`).
    pub(crate) fn new(tty: &str) -> GroupProbe {
        GroupProbe {
            tty: blocked::Terminal::new(tty),
            ..GroupProbe::default()
        }
    }

    /// Looks also at the session's processes outside the foreground group, below `shim`,
    /// where the group waits on them.
    pub(crate) fn with_session(mut self, shim: i32) -> GroupProbe {
        self.shim = Some(shim);
        self
    }

    /// Samples the tasks of `members`. `None` when none of them exists any more.
    pub(crate) fn sample(&mut self, members: &[i32]) -> Option<GroupSample> {
        if self.members != members {
            self.open(members);
        }
        let sample = match self.look(true) {
            Look::Sample(sample) => sample,
            Look::TasksChanged => {
                self.open(members);
                // The tasks just listed are what there is; a change since is the next
                // look's.
                match self.look(false) {
                    Look::Sample(sample) => sample,
                    Look::TasksChanged => None,
                }
            }
        };
        if self.tasks.len() > KEPT_TASKS {
            self.members.clear();
            self.tasks.clear();
        }
        sample
    }

    fn open(&mut self, members: &[i32]) {
        use std::io::ErrorKind::NotFound;
        self.members.clear();
        self.members.extend_from_slice(members);
        self.tasks.clear();
        self.incomplete = false;
        for &pid in members {
            let first = self.tasks.len();
            let tids = match list_tasks(pid) {
                Ok(tids) => tids,
                Err(err) => {
                    self.incomplete |= err.kind() != NotFound;
                    continue;
                }
            };
            for tid in tids {
                let dir = format!("/proc/{pid}/task/{tid}");
                let open = |name: &str| fs::File::open(format!("{dir}/{name}"));
                match open("stat") {
                    Ok(stat) => self.tasks.push(TaskRecords {
                        pid,
                        siblings: 0,
                        stat,
                        schedstat: open("schedstat").ok(),
                        syscall: open("syscall").ok(),
                    }),
                    // The task ended since the listing.
                    Err(err) if err.kind() == NotFound => {}
                    Err(_) => self.incomplete = true,
                }
            }
            let siblings = self.tasks.len() - first;
            for task in &mut self.tasks[first..] {
                task.siblings = siblings;
            }
        }
    }

    /// Reads every open record once. With `check_threads`, a process whose thread count
    /// is not the number of its known tasks makes the look [`Look::TasksChanged`].
    ///
    /// What a task waits on is read only when every task sleeps: one that runs already
    /// says the group works.
    fn look(&mut self, check_threads: bool) -> Look {
        let mut any_task = false;
        let mut all_asleep = true;
        let mut runs = 0u64;
        let mut buf = [0; RECORD_BYTES];
        let mut asleep = Vec::with_capacity(self.tasks.len());
        for (i, task) in self.tasks.iter().enumerate() {
            let Some((state, threads, flags)) =
                read_again(&task.stat, &mut buf).and_then(|stat| parse_task_stat(&stat))
            else {
                if check_threads {
                    return Look::TasksChanged;
                }
                continue;
            };
            if matches!(state, 'Z' | 'X') {
                continue;
            }
            if check_threads && threads != task.siblings {
                return Look::TasksChanged;
            }
            any_task = true;
            if let Some(schedstat) = task
                .schedstat
                .as_ref()
                .and_then(|file| read_again(file, &mut buf))
            {
                runs += schedstat
                    .split_whitespace()
                    .nth(2)
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0);
            }
            // A task on its way out (the exit of node's `.exit`, a shell's `exit`) is
            // working: the process ends next.
            if state == 'S' && flags & PF_EXITING == 0 {
                asleep.push(i);
            } else {
                all_asleep = false;
            }
        }
        if !any_task {
            return Look::Sample(None);
        }
        let verdict = if !all_asleep {
            Verdict::Working
        } else if self.incomplete {
            Verdict::CannotTell
        } else {
            let mut context = blocked::Context::new(&self.tty, &self.members, &mut self.peers);
            let waits: Vec<(i32, TaskWait)> = asleep
                .iter()
                .map(|&i| {
                    let task = &self.tasks[i];
                    let wait = match task.syscall.as_ref().and_then(|f| read_again(f, &mut buf)) {
                        Some(syscall) => context.task(task.pid, &syscall),
                        None => TaskWait {
                            unknown: true,
                            ..TaskWait::default()
                        },
                    };
                    (task.pid, wait)
                })
                .collect();
            match blocked::verdict(&waits) {
                // What a task waits on could not be read because it woke or ended between
                // the two reads (a `sleep` that exits as it is looked at): the group moved
                // under the look, which is work, not a wait nobody can tell.
                Verdict::CannotTell if !self.still_asleep(&asleep, &mut buf) => Verdict::Working,
                // The group waits on processes outside it (gpg on gpg-agent): one of the
                // session's that waits on the terminal (pinentry) stands for it.
                Verdict::Working if blocked::waits_on_strangers(&waits) => {
                    let (verdict, daemon_runs) = self.daemons();
                    runs += daemon_runs;
                    verdict
                }
                verdict => verdict,
            }
        };
        Look::Sample(Some(GroupSample { verdict, runs }))
    }

    /// The verdict over the session's processes outside the foreground group (below the
    /// shim, at most [`MAX_DAEMONS`]), read afresh, with their tasks' summed run counts. A
    /// process with a task that does not sleep works.
    fn daemons(&mut self) -> (Verdict, u64) {
        let Some(shim) = self.shim else {
            return (Verdict::Working, 0);
        };
        let mut waits = Vec::new();
        let mut runs = 0;
        let mut buf = [0; RECORD_BYTES];
        let mut context = blocked::Context::new(&self.tty, &[], &mut self.peers);
        for pid in descendants(shim) {
            if self.members.contains(&pid) {
                continue;
            }
            let Ok(tids) = list_tasks(pid) else {
                continue;
            };
            for tid in tids {
                let dir = format!("/proc/{pid}/task/{tid}");
                let asleep = read_record(format!("{dir}/stat"), &mut buf)
                    .and_then(|stat| parse_task_stat(&stat))
                    .is_some_and(|(state, _, flags)| state == 'S' && flags & PF_EXITING == 0);
                if let Some(schedstat) = read_record(format!("{dir}/schedstat"), &mut buf) {
                    runs += schedstat
                        .split_whitespace()
                        .nth(2)
                        .and_then(|n| n.parse::<u64>().ok())
                        .unwrap_or(0);
                }
                let wait = match read_record(format!("{dir}/syscall"), &mut buf) {
                    Some(syscall) if asleep => context.task(pid, &syscall),
                    Some(_) => TaskWait {
                        outside: true,
                        ..TaskWait::default()
                    },
                    None => TaskWait {
                        unknown: true,
                        ..TaskWait::default()
                    },
                };
                waits.push((pid, wait));
            }
        }
        (blocked::daemon_verdict(&waits), runs)
    }

    /// Whether the tasks `asleep` (indices into the records) all still sleep, read afresh.
    fn still_asleep(&self, asleep: &[usize], buf: &mut [u8; RECORD_BYTES]) -> bool {
        asleep.iter().all(|&i| {
            read_again(&self.tasks[i].stat, buf)
                .and_then(|stat| parse_task_stat(&stat))
                .is_some_and(|(state, _, flags)| state == 'S' && flags & PF_EXITING == 0)
        })
    }
}

/// Up to how many processes below a session's shim are looked at as its daemons.
const MAX_DAEMONS: usize = 64;

/// The processes below `pid` (its children, theirs, ...), at most [`MAX_DAEMONS`].
fn descendants(pid: i32) -> Vec<i32> {
    let mut found = Vec::new();
    let mut queue = vec![pid];
    while let Some(parent) = queue.pop() {
        for tid in task_ids(parent) {
            let children = fs::read_to_string(format!("/proc/{parent}/task/{tid}/children"))
                .unwrap_or_default();
            for child in children
                .split_whitespace()
                .filter_map(|c| c.parse::<i32>().ok())
            {
                if found.len() >= MAX_DAEMONS {
                    return found;
                }
                found.push(child);
                queue.push(child);
            }
        }
    }
    found
}

/// Reads an open `/proc` record afresh. `None` when it is empty: its task is gone.
fn read_again<'b>(file: &fs::File, buf: &'b mut [u8; RECORD_BYTES]) -> Option<Cow<'b, str>> {
    use std::os::unix::fs::FileExt as _;
    let n = file.read_at(buf, 0).ok().filter(|&n| n > 0)?;
    Some(String::from_utf8_lossy(&buf[..n]))
}

/// The kernel's flag of a task that is exiting (`PF_EXITING`, in `stat`'s flags).
const PF_EXITING: u32 = 0x4;

/// A task's state, its process's thread count and its flags, from its `stat`.
fn parse_task_stat(text: &str) -> Option<(char, usize, u32)> {
    let mut fields = fields_after_name(text)?;
    let state = fields.next()?.chars().next()?;
    // The state is the 3rd field, flags the 9th, num_threads the 20th.
    let flags = fields.nth(5)?.parse().ok()?;
    let threads = fields.nth(10)?.parse().ok()?;
    Some((state, threads, flags))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_stat_gives_state_threads_and_flags() {
        let text = "42 (node) S 7 42 42 34816 42 4194308 1 2 3 4 5 6 7 8 20 0 11 0 99";
        assert_eq!(parse_task_stat(text), Some(('S', 11, 4194308)));
        assert_ne!(4194308 & PF_EXITING, 0);
    }

    #[test]
    fn stat_with_odd_command_names() {
        let (state, stat) = parse_stat("42 (a) b (c)) S 7 42 42 34816 42 4194560").unwrap();
        assert_eq!((state, stat.pid, stat.ppid, stat.pgrp), ('S', 42, 7, 42));
    }

    /// A process of `args` in a group of its own.
    fn in_own_group(program: &str, args: &[&str]) -> std::process::Child {
        use std::os::unix::process::CommandExt;
        std::process::Command::new(program)
            .args(args)
            .process_group(0)
            .spawn()
            .unwrap()
    }

    fn sorted(mut pids: Vec<i32>) -> Vec<i32> {
        pids.sort_unstable();
        pids
    }

    /// Looks group `pgrp` up through `cache` until it has `n` members or ten seconds pass.
    fn members_until(cache: &GroupCache, pgrp: i32, n: usize) -> Vec<i32> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let members = cache.members(pgrp, Lookup::All);
            if members.len() >= n || std::time::Instant::now() > deadline {
                return members;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn an_old_group_is_found_without_a_mark() {
        // This test's own group is older than any mark taken here, and pids may have
        // wrapped since it was born (a busy machine, a small pid_max): every process is
        // read, and this one is among its members.
        let me = std::process::id() as i32;
        let own = rustix::process::getpgrp().as_raw_nonzero().get();
        assert!(all_members(own).contains(&me));
        assert!(
            GroupCache::new(None)
                .members(own, Lookup::All)
                .contains(&me)
        );
    }

    #[test]
    fn a_new_group_is_found_from_a_mark_taken_before_it() {
        let cache = GroupCache::new(PidMark::now());
        let mut child = in_own_group("sh", &["-c", "sleep 30 & exec sleep 30"]);
        let pid = child.id() as i32;
        let members = members_until(&cache, pid, 2);
        // The same group again, from the mark of the last lookup.
        let again = cache.members(pid, Lookup::All);
        let everything = all_members(pid);
        rustix::process::kill_process_group(
            rustix::process::Pid::from_raw(pid).unwrap(),
            rustix::process::Signal::KILL,
        )
        .unwrap();
        child.wait().unwrap();
        assert_eq!(members.len(), 2, "{members:?}");
        assert!(members.contains(&pid));
        assert_eq!(sorted(members.clone()), sorted(everything));
        assert_eq!(sorted(again), sorted(members));
    }

    #[test]
    fn a_member_born_after_the_pids_wrapped_is_found() {
        use std::io::{BufRead, Write};
        use std::os::unix::process::CommandExt;
        // Setting the pid counter back (as a wrap does) takes admin powers.
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: only root can set the pid counter back");
            return;
        }
        let cache = GroupCache::new(PidMark::now());
        let mut leader = std::process::Command::new("python3")
            .args([
                "-c",
                "import subprocess, sys\n\
                print('ready', flush=True)\n\
                sys.stdin.readline()\n\
                print(subprocess.Popen(['sleep', '30']).pid, flush=True)\n\
                sys.stdin.readline()",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let pgrp = leader.id() as i32;
        let mut stdout = std::io::BufReader::new(leader.stdout.take().unwrap());
        let mut line = String::new();
        // Once python runs: a `python3` that is a version manager's shell script (pyenv)
        // runs helpers in the group before it execs python.
        stdout.read_line(&mut line).unwrap();
        assert_eq!(cache.members(pgrp, Lookup::All), [pgrp]);
        fs::write("/proc/sys/kernel/ns_last_pid", "400").unwrap();
        let mut stdin = leader.stdin.take().unwrap();
        writeln!(stdin).unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
        let member: i32 = line.trim().parse().unwrap();
        let found = cache.members(pgrp, Lookup::All);
        let between = members_between(pgrp, pgrp, last_pid().unwrap());
        rustix::process::kill_process_group(
            rustix::process::Pid::from_raw(pgrp).unwrap(),
            rustix::process::Signal::KILL,
        )
        .unwrap();
        leader.wait().unwrap();
        assert!(member < pgrp, "the member {member} was born after a wrap");
        assert!(
            !between.contains(&member),
            "a probe after the group's id misses it"
        );
        assert!(found.contains(&member), "{found:?} lacks {member}");
    }

    #[test]
    fn a_members_threads_are_not_members() {
        // A process of four threads in a group of its own, whose thread ids follow its pid.
        let cache = GroupCache::new(PidMark::now());
        let mut child = in_own_group(
            "python3",
            &[
                "-c",
                "import threading, time\n\
                for _ in range(3): threading.Thread(target=time.sleep, args=(30,)).start()\n\
                time.sleep(30)",
            ],
        );
        let pid = child.id() as i32;
        let tasks = wait_for_tasks(pid, 4);
        let members = cache.members(pid, Lookup::All);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(tasks, 4, "python started its threads");
        assert_eq!(members, [pid]);
    }

    /// A python3 running `script` after making itself a child subreaper (as the shim is),
    /// in a group of its own; it prints the first member of group `G` it makes.
    fn subreaper(script: &str) -> (std::process::Child, i32) {
        use std::io::BufRead as _;
        use std::os::unix::process::CommandExt as _;
        let prelude = "import ctypes, os, subprocess, sys, threading, time\n\
            ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)\n\
            G = subprocess.Popen(['sleep', '30'], process_group=0).pid\n\
            print(G, flush=True)\n";
        let mut root = std::process::Command::new("python3")
            .args(["-c", &format!("{prelude}{script}")])
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(root.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        (root, line.trim().parse().unwrap())
    }

    /// Kills groups `pgrps` and reaps `root`.
    fn end(mut root: std::process::Child, pgrps: &[i32]) {
        for &pgrp in pgrps {
            let _ = rustix::process::kill_process_group(
                rustix::process::Pid::from_raw(pgrp).unwrap(),
                rustix::process::Signal::KILL,
            );
        }
        root.wait().unwrap();
    }

    #[test]
    fn a_walk_below_a_subreaper_finds_what_a_listing_of_proc_finds() {
        // Members of G: the first, a shell's background child and the shell itself, an
        // orphan handed to the subreaper, and a child forked by another thread (listed in
        // that thread's `children`). Outside G: a child in the subreaper's own group.
        let (root, g) = subreaper(
            "subprocess.Popen(['sh', '-c', 'sleep 30 & (sleep 30 &); exec sleep 30'], process_group=G)\n\
            threading.Thread(target=lambda: (subprocess.Popen(['sleep', '30'], process_group=G), time.sleep(30))).start()\n\
            subprocess.Popen(['sleep', '30'])\n\
            time.sleep(30)",
        );
        let pid = root.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let (walked, listed, outside) = loop {
            let walked = walk(pid, g).ok();
            let listed = sorted(all_members(g));
            let outside = walk(pid, pid).ok();
            let whole = listed.len() == 5 && all_members(pid).len() == 2;
            if walked.as_ref() == Some(&listed) && whole || std::time::Instant::now() > deadline {
                break (walked, listed, outside);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        end(root, &[g, pid]);
        assert_eq!(listed.len(), 5, "{listed:?}");
        assert_eq!(walked, Some(listed));
        assert_eq!(
            outside.map(|pids| pids.len()),
            Some(2),
            "the subreaper and one child"
        );
    }

    #[test]
    fn a_tree_with_a_process_leaving_is_read_from_all_of_proc() {
        // A shell that exited and nobody reaped: its child was handed to the subreaper.
        // Here that was long before the walk, but a walk cannot tell when: it may have
        // been after the walk read the subreaper's children. So the walk does not vouch
        // for a tree with a zombie in it, and the lookup reads every process instead.
        let (root, g) = subreaper(
            "shell = subprocess.Popen(['sh', '-c', 'sleep 30 & exit'], process_group=G)\n\
            time.sleep(30)",
        );
        let pid = root.id() as i32;
        let cache = GroupCache::new(None).below(pid);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let zombie = loop {
            let zombie = all_members(g).into_iter().find(|&member| {
                let mut buf = [0; RECORD_BYTES];
                read_record(format!("/proc/{member}/stat"), &mut buf)
                    .and_then(|text| parse_stat(&text).map(|(state, _)| state == 'Z'))
                    .unwrap_or(false)
            });
            if zombie.is_some() || std::time::Instant::now() > deadline {
                break zombie;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        let walked = group_below(pid, g);
        let members = sorted(cache.members(g, Lookup::All));
        let listed = sorted(all_members(g));
        end(root, &[g, pid]);
        assert!(zombie.is_some(), "the shell exited");
        assert_eq!(walked, None);
        assert_eq!(
            listed.len(),
            3,
            "the first, the zombie and the orphan: {listed:?}"
        );
        assert_eq!(members, listed);
    }

    #[test]
    fn a_walk_under_churn_misses_no_process_that_lived_through_it() {
        // Shells come and go in group G, each leaving an orphan that is handed to the
        // subreaper as the subshell that started it exits: parents die under the walk all
        // the time.
        let (root, g) = subreaper(
            "def churn():\n\
            \x20   for _ in range(150):\n\
            \x20       subprocess.Popen(['sh', '-c', '(sleep 30 &); sleep 0.005'], process_group=G).wait()\n\
            threading.Thread(target=churn).start()\n\
            time.sleep(30)",
        );
        let pid = root.id() as i32;
        let (mut vouched, mut walks) = (0, 0);
        let mut missed: Vec<i32> = Vec::new();
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(2) {
            let before = all_members(g);
            let walked = group_below(pid, g);
            let after = all_members(g);
            walks += 1;
            if let Some(walked) = walked {
                vouched += 1;
                missed.extend(
                    before
                        .iter()
                        .filter(|p| after.contains(p) && !walked.contains(p)),
                );
            }
        }
        end(root, &[g, pid]);
        assert!(
            missed.is_empty(),
            "lived through a walk and missed: {missed:?}"
        );
        assert!(vouched > 0, "no walk of {walks} vouched for what it saw");
        eprintln!("{vouched} of {walks} lookups walked");
    }

    /// Waits up to twenty seconds until process `pid` has `n` tasks; how many it has.
    fn wait_for_tasks(pid: i32, n: usize) -> usize {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while task_ids(pid).count() < n && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        task_ids(pid).count()
    }

    /// A probe that takes the standard input of process `pid` (a pipe from the test) for
    /// its terminal, so that a wait on it counts as input wait.
    fn stdin_as_terminal(pid: i32) -> GroupProbe {
        let stdin = fs::read_link(format!("/proc/{pid}/fd/0")).unwrap();
        GroupProbe::new(&stdin.to_string_lossy())
    }

    /// Samples until `want` or ten seconds; the last sample.
    fn sample_until(
        probe: &mut GroupProbe,
        members: &[i32],
        want: impl Fn(Option<GroupSample>) -> bool,
    ) -> Option<GroupSample> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let sample = probe.sample(members);
            if want(sample) || std::time::Instant::now() > deadline {
                return sample;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn the_probe_sees_threads_that_start_after_it_opened() {
        use std::io::{Read as _, Write as _};
        // Waits in select (an input syscall on any fd) until a byte comes, then starts a
        // thread that hashes without a pause (outside the GIL, so the main thread is free
        // to wait), says so, and waits in select again.
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "import hashlib, os, select, threading\n\
                select.select([0], [], [])\n\
                os.read(0, 1)\n\
                data = bytes(1 << 24)\n\
                def spin():\n    while True: hashlib.sha256(data).digest()\n\
                threading.Thread(target=spin, daemon=True).start()\n\
                os.write(1, b'x')\n\
                select.select([0], [], [])",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let mut probe = stdin_as_terminal(pid);
        let waiting = |s: Option<GroupSample>| s.is_some_and(|s| s.verdict == Verdict::Input);
        let before = sample_until(&mut probe, &[pid], waiting);
        child.stdin.as_mut().unwrap().write_all(b"x").unwrap();
        let mut started = [0u8];
        let said = child.stdout.as_mut().unwrap().read(&mut started);
        std::thread::sleep(std::time::Duration::from_millis(50));
        // The main thread waits in select again; the new one hashes.
        let seen_running = (0..20).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(1));
            !waiting(probe.sample(&[pid]))
        });
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(waiting(before), "python waited in select: {before:?}");
        assert_eq!(said.unwrap(), 1, "the thread started");
        assert!(seen_running, "the new thread was seen running");
    }

    #[test]
    fn a_large_group_is_read_afresh_and_keeps_no_descriptors() {
        // Forty threads asleep beside a main thread that waits in select.
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "import select, threading, time\n\
                for _ in range(40): threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n\
                select.select([0], [], [])",
            ])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        wait_for_tasks(pid, 41);
        let mut probe = stdin_as_terminal(pid);
        let sample = sample_until(&mut probe, &[pid], |s| {
            s.is_some_and(|s| s.verdict == Verdict::Input)
        });
        let kept = probe.tasks.len();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            sample.is_some_and(|s| s.verdict == Verdict::Input),
            "{sample:?}"
        );
        assert_eq!(kept, 0, "records kept open between looks");
    }

    #[test]
    fn the_probe_sees_a_member_go() {
        // Also what `still_asleep` answers, which decides whether a wait that could not
        // be read is one nobody can tell (the task sleeps on) or was work (it ended
        // between the two reads of a look).
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let mut probe = GroupProbe::default();
        let alive = probe.sample(&[pid]);
        let mut buf = [0; RECORD_BYTES];
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let sleeping = loop {
            let asleep = probe.still_asleep(&[0], &mut buf);
            if asleep || std::time::Instant::now() > deadline {
                break asleep;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            alive.is_some_and(|s| s.verdict != Verdict::Input),
            "{alive:?}"
        );
        assert!(sleeping, "a task in nanosleep sleeps");
        assert!(
            !probe.still_asleep(&[0], &mut buf),
            "a reaped task does not"
        );
        assert_eq!(probe.sample(&[pid]), None);
    }

    #[test]
    fn this_process_is_seen() {
        let me = std::process::id() as i32;
        assert!(parent_links().unwrap().iter().any(|&(pid, _)| pid == me));
        let sample = GroupProbe::default().sample(&[me]);
        assert!(sample.is_some_and(|s| s.verdict == Verdict::Working));
    }
}
