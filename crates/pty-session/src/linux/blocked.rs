//! What a sleeping task is blocked on, read from `/proc` without stopping it: the syscall
//! and its arguments (`/proc/PID/task/TID/syscall`), the descriptors a `poll` or `select`
//! watches (its arguments point into the task's memory, `/proc/PID/mem`), those of an epoll
//! set (`/proc/PID/fdinfo/EPFD`), and what each descriptor is (`/proc/PID/fd/N`).
//!
//! Settling asks one question of it: is this task waiting for the person at the terminal,
//! for something else, or for both? A task waits **on the terminal** when it reads the
//! session's terminal, or polls it beside only things that nothing outside its process can
//! wake (its own eventfd, signalfd, timerfd, inotify or pidfd, a pipe or socket whose both
//! ends it holds: the self-pipes of libuv and Python). A pipe or socket to another process
//! of the foreground group makes the wait depend on that process ([`TaskWait::peers`]):
//! `python3 | tee log` waits for the person because `python3` does. Anything else — a
//! pipe from a child that works, a socket to the network, a file — is work; except that
//! a group waiting only on pipes and Unix sockets to processes outside it (gpg on its
//! agent) waits for the person where one of the session's other processes waits on the
//! terminal ([`daemon_verdict`]: the agent's pinentry). A group that only sleeps a short
//! while is [`Verdict::Sleeps`]: `watch` between frames.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::FileExt as _;

/// What one task waits for, as far as settling cares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TaskWait {
    /// It waits for input from the session's terminal.
    pub(crate) terminal: bool,
    /// It waits for something that a process outside the foreground group, the network
    /// or the passing of work can wake: it is working, or (with `terminal`) may be
    /// waiting for either.
    pub(crate) outside: bool,
    /// What it waits on could not be read (another user's process, a hardened ptrace
    /// policy): nobody can tell.
    pub(crate) unknown: bool,
    /// Other processes of the foreground group at the far end of a pipe or socket it
    /// waits on: it waits for the person only if they do.
    pub(crate) peers: Vec<i32>,
    /// It waits on a pipe or Unix socket whose far end only processes outside the
    /// foreground group hold (gpg on its agent's socket): work, unless a process of the
    /// session outside the group waits for the person ([`daemon_verdict`]).
    pub(crate) strangers: bool,
    /// It waits on the master of another terminal whose foreground group works (mc's
    /// subshell running a command): it relays that work, and works.
    pub(crate) relays: bool,
    /// Its wait ends by itself within this time (`None`: it waits for ever): a program
    /// that will act when its timer fires (node awaiting a timer, bash `read -t`, a
    /// program reading the answer to its terminal query, vim waiting out a key's
    /// sequence, htop's refresh). Timers of at most [`SOON`] make the wait not yet input
    /// wait; longer ones still count as waits, but not where the caller waits for `until`.
    pub(crate) timer: Option<std::time::Duration>,
    /// It sleeps for this long (`nanosleep`, `clock_nanosleep` with a relative time):
    /// a wait that only time ends, such as `watch`'s between two frames.
    pub(crate) sleep: Option<std::time::Duration>,
}

impl TaskWait {
    /// It waits on something outside the foreground group.
    fn away(&self) -> bool {
        self.outside || self.strangers
    }

    fn outside() -> TaskWait {
        TaskWait {
            outside: true,
            ..TaskWait::default()
        }
    }

    fn unknown() -> TaskWait {
        TaskWait {
            unknown: true,
            ..TaskWait::default()
        }
    }
}

/// The syscalls settling tells apart, by number on this architecture.
mod nr {
    use libc::c_long;

    pub(super) const READS: &[c_long] = &[
        libc::SYS_read,
        libc::SYS_readv,
        libc::SYS_pread64,
        libc::SYS_preadv,
        libc::SYS_preadv2,
    ];
    pub(super) const WRITES: &[c_long] = &[
        libc::SYS_write,
        libc::SYS_writev,
        libc::SYS_pwrite64,
        libc::SYS_pwritev,
        libc::SYS_pwritev2,
    ];
    /// Calls on a socket whose first argument is the socket.
    pub(super) const SOCKET: &[c_long] = &[
        libc::SYS_recvfrom,
        libc::SYS_recvmsg,
        libc::SYS_recvmmsg,
        libc::SYS_sendto,
        libc::SYS_sendmsg,
        libc::SYS_sendmmsg,
        libc::SYS_accept,
        libc::SYS_accept4,
        libc::SYS_connect,
    ];
    /// Waits that only the process itself, its threads or its children end: they make it
    /// wait neither for the person nor for the outside.
    pub(super) const OWN: &[c_long] = &[
        libc::SYS_futex,
        libc::SYS_futex_waitv,
        libc::SYS_wait4,
        libc::SYS_waitid,
        libc::SYS_nanosleep,
        libc::SYS_clock_nanosleep,
        PAUSE,
        libc::SYS_rt_sigsuspend,
        libc::SYS_rt_sigtimedwait,
    ];
    #[cfg(target_arch = "x86_64")]
    const PAUSE: c_long = libc::SYS_pause;
    #[cfg(not(target_arch = "x86_64"))]
    const PAUSE: c_long = -1;
    #[cfg(target_arch = "x86_64")]
    pub(super) const POLL: c_long = libc::SYS_poll;
    #[cfg(not(target_arch = "x86_64"))]
    pub(super) const POLL: c_long = -1;
    pub(super) const PPOLL: c_long = libc::SYS_ppoll;
    #[cfg(target_arch = "x86_64")]
    pub(super) const SELECT: c_long = libc::SYS_select;
    #[cfg(not(target_arch = "x86_64"))]
    pub(super) const SELECT: c_long = -1;
    pub(super) const PSELECT6: c_long = libc::SYS_pselect6;
    #[cfg(target_arch = "x86_64")]
    pub(super) const EPOLL: &[c_long] = &[
        libc::SYS_epoll_wait,
        libc::SYS_epoll_pwait,
        libc::SYS_epoll_pwait2,
    ];
    #[cfg(not(target_arch = "x86_64"))]
    pub(super) const EPOLL: &[c_long] = &[libc::SYS_epoll_pwait, libc::SYS_epoll_pwait2];
}

/// Whether this machine's syscall records can be read and understood.
pub(crate) fn supported() -> bool {
    cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
        && fs::read_to_string("/proc/self/syscall").is_ok()
}

/// Up to how many descriptors one `poll`, `select` or epoll set is read; a wait on more
/// is taken for work (a server, not a prompt).
const MAX_WATCHED: usize = 1024;
/// A `poll`, `select` or epoll wait whose timeout is this short or shorter ends by itself
/// before a person would answer, and the program acts then: vim waits 100 ms
/// (`ttimeoutlen`) after Escape for the rest of a key's sequence, node's REPL sleeps about
/// 15 ms after each evaluation and as long as an awaited timer, bash's `read -t` as long as
/// it was told. Longer timers (node's idle REPL waits on V8's 8 s memory timer, htop 1.5 s
/// between refreshes) are waits like any other.
pub(crate) const SOON: std::time::Duration = std::time::Duration::from_secs(1);
/// How deep epoll sets inside epoll sets are followed.
const MAX_NESTING: usize = 4;

/// What one descriptor of a process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The session's terminal: its slave by any name, or `/dev/tty`.
    Terminal,
    Pipe(u64),
    Socket(u64),
    /// An eventfd, signalfd, timerfd, inotify or pidfd: woken by the process itself, by
    /// time, by a file or a child ending; not by the person, nor by the outside.
    Own,
    /// An epoll set, whose own descriptors say.
    Epoll,
    /// The master of another terminal (`/dev/ptmx`; mc's subshell), by its slave's index:
    /// quiet while that terminal's foreground group waits for the person.
    PtyMaster(u32),
    /// Anything else: a file, another terminal, a device.
    Other,
}

/// What one look at a process group knows about descriptors, read lazily and shared by
/// every task looked at: each member's descriptor table is listed only if a pipe asks
/// who holds its other end.
pub(crate) struct Context<'a> {
    /// The session's terminal.
    tty: &'a Terminal,
    /// The foreground group's processes.
    members: &'a [i32],
    /// Each member's pipes and sockets: (inode, descriptor count), listed on demand.
    tables: HashMap<i32, Vec<(Kind, u32)>>,
    /// Unix sockets' peers already asked, by inode.
    peers: &'a mut HashMap<u64, Option<u64>>,
    /// How many terminals deep this context looks (0: the session's).
    nesting: usize,
}

impl<'a> Context<'a> {
    /// A context for one look at `members`, whose terminal is `tty`. `peers` carries the
    /// sockets' peers from look to look (a socket's peer does not change).
    pub(crate) fn new(
        tty: &'a Terminal,
        members: &'a [i32],
        peers: &'a mut HashMap<u64, Option<u64>>,
    ) -> Context<'a> {
        Context {
            tty,
            members,
            tables: HashMap::new(),
            peers,
            nesting: 0,
        }
    }

    /// What task `tid` of process `pid` waits for, given its `syscall` record.
    pub(crate) fn task(&mut self, pid: i32, syscall: &str) -> TaskWait {
        let mut fields = syscall.split_whitespace();
        let Some(nr) = fields.next().and_then(|nr| nr.parse::<libc::c_long>().ok()) else {
            // "running" (it woke since its state was read) or unreadable.
            return if syscall.starts_with("running") {
                TaskWait::outside()
            } else {
                TaskWait::unknown()
            };
        };
        let args: Vec<u64> = fields
            .take(6)
            .filter_map(|arg| u64::from_str_radix(arg.trim_start_matches("0x"), 16).ok())
            .collect();
        let arg = |i: usize| args.get(i).copied();
        let mut wait = TaskWait::default();
        if nr == libc::SYS_nanosleep {
            wait.sleep = arg(0).and_then(|at| timespec_at(pid, at, 1_000_000_000));
            return wait;
        }
        if nr == libc::SYS_clock_nanosleep {
            // An absolute wake-up time (TIMER_ABSTIME) is not a length: not read.
            if arg(1).is_some_and(|flags| flags & libc::TIMER_ABSTIME as u64 == 0) {
                wait.sleep = arg(2).and_then(|at| timespec_at(pid, at, 1_000_000_000));
            }
            return wait;
        }
        if nr::OWN.contains(&nr) {
            return wait;
        }
        if nr::READS.contains(&nr) {
            let Some(fd) = arg(0) else {
                return TaskWait::unknown();
            };
            self.watch(pid, fd as i32, Direction::In, &mut wait, 0);
        } else if nr::WRITES.contains(&nr) {
            let Some(fd) = arg(0) else {
                return TaskWait::unknown();
            };
            self.watch(pid, fd as i32, Direction::Out, &mut wait, 0);
        } else if nr::SOCKET.contains(&nr) {
            let Some(fd) = arg(0) else {
                return TaskWait::unknown();
            };
            self.watch(pid, fd as i32, Direction::In, &mut wait, 0);
        } else if nr == nr::POLL || nr == nr::PPOLL {
            let (Some(address), Some(count)) = (arg(0), arg(1)) else {
                return TaskWait::unknown();
            };
            match poll_set(pid, address, count as usize) {
                Some(set) => {
                    for (fd, direction) in set {
                        self.watch(pid, fd, direction, &mut wait, 0);
                    }
                }
                None => wait.unknown = true,
            }
            wait.timer = if nr == nr::POLL {
                arg(2).and_then(timeout_ms)
            } else {
                arg(2).and_then(|at| timespec_at(pid, at, 1_000_000_000))
            };
        } else if nr == nr::SELECT || nr == nr::PSELECT6 {
            let Some(count) = arg(0) else {
                return TaskWait::unknown();
            };
            let sets = [(arg(1), Direction::In), (arg(2), Direction::Out)];
            for (address, direction) in sets {
                let Some(address) = address.filter(|&a| a != 0) else {
                    continue;
                };
                match select_set(pid, address, count as usize) {
                    Some(fds) => {
                        for fd in fds {
                            self.watch(pid, fd, direction, &mut wait, 0);
                        }
                    }
                    None => wait.unknown = true,
                }
            }
            // select takes a timeval (microseconds), pselect6 a timespec.
            let per_second = if nr == nr::SELECT {
                1_000_000
            } else {
                1_000_000_000
            };
            wait.timer = arg(4).and_then(|at| timespec_at(pid, at, per_second));
        } else if nr::EPOLL.contains(&nr) {
            let Some(epfd) = arg(0) else {
                return TaskWait::unknown();
            };
            self.epoll(pid, epfd as i32, &mut wait, 0);
            wait.timer = if nr == libc::SYS_epoll_pwait2 {
                arg(3).and_then(|at| timespec_at(pid, at, 1_000_000_000))
            } else {
                arg(3).and_then(timeout_ms)
            };
        } else {
            // Any other sleep (open on a FIFO, flock, a slow filesystem...) is work.
            wait.outside = true;
        }
        wait.peers.sort_unstable();
        wait.peers.dedup();
        wait
    }

    /// Adds what waiting on descriptor `fd` of `pid` means to `wait`.
    fn watch(
        &mut self,
        pid: i32,
        fd: i32,
        direction: Direction,
        wait: &mut TaskWait,
        depth: usize,
    ) {
        if fd < 0 {
            return;
        }
        match self.kind(pid, fd) {
            Kind::Terminal if direction == Direction::In => wait.terminal = true,
            // Waiting to write to the terminal: output is on its way.
            Kind::Terminal => wait.outside = true,
            Kind::Own => {}
            Kind::Epoll => self.epoll(pid, fd, wait, depth + 1),
            Kind::Pipe(inode) => self.far_end(pid, Kind::Pipe(inode), 2, wait),
            // A socket's far end is its peer socket: a network socket has none here.
            Kind::Socket(inode) => match self.unix_peer(inode) {
                Some(peer) => self.far_end(pid, Kind::Socket(peer), 1, wait),
                None => wait.outside = true,
            },
            Kind::Other => wait.outside = true,
            Kind::PtyMaster(index) if direction == Direction::In => {
                match self.inner_terminal(pid, index) {
                    Some(Verdict::Input) => {}
                    Some(Verdict::Working | Verdict::Sleeps(_)) => wait.relays = true,
                    _ => wait.outside = true,
                }
            }
            Kind::PtyMaster(_) => wait.outside = true,
        }
    }

    /// How the foreground group of terminal `/dev/pts/INDEX`, whose master `pid` holds,
    /// waits (found among `pid`'s descendants), as [`verdict`] weighs it; `None` where it
    /// cannot be told. Until it waits for input, output may come out of it; while it works
    /// (mc's subshell running a command), the keys typed go to it.
    fn inner_terminal(&mut self, pid: i32, index: u32) -> Option<Verdict> {
        if self.nesting >= MAX_NESTING {
            return None;
        }
        let inner = Terminal::new(&format!("/dev/pts/{index}"));
        let device = inner.device?;
        let members = foreground_of(pid, device);
        if members.is_empty() {
            return None;
        }
        let mut context = Context::new(&inner, &members, &mut *self.peers);
        context.nesting = self.nesting + 1;
        let mut waits = Vec::new();
        for &member in &members {
            let tasks = fs::read_dir(format!("/proc/{member}/task")).ok()?;
            for task in tasks.flatten() {
                let dir = task.path();
                let asleep = fs::read_to_string(dir.join("stat"))
                    .ok()
                    .and_then(|stat| Some(stat.get(stat.rfind(')')? + 2..)?.starts_with('S')))?;
                if !asleep {
                    // A task of it runs.
                    return Some(Verdict::Working);
                }
                let syscall = fs::read_to_string(dir.join("syscall")).ok()?;
                waits.push((member, context.task(member, &syscall)));
            }
        }
        Some(verdict(&waits))
    }

    /// Who holds the far end of a pipe or socket: `kind` is the object whose holders wake
    /// the waiter (the pipe itself, whose two ends share an inode; or the peer socket).
    /// It is the process's own when only `pid` holds it, `own` times at least (a pipe's
    /// read and write end; a socket pair's other end); the wait depends on the other
    /// members that hold it; and it is outside when no member holds it.
    fn far_end(&mut self, pid: i32, kind: Kind, own: u32, wait: &mut TaskWait) {
        let mut others = Vec::new();
        let mut own_count = 0;
        for &member in self.members {
            let count = self
                .table(member)
                .iter()
                .find(|(k, _)| *k == kind)
                .map(|&(_, n)| n);
            match count {
                Some(n) if member == pid => own_count = n,
                Some(_) => others.push(member),
                None => {}
            }
        }
        if !others.is_empty() {
            wait.peers.extend(others);
        } else if own_count < own {
            wait.strangers = true;
        }
    }

    /// The descriptors of epoll set `epfd` of `pid`.
    fn epoll(&mut self, pid: i32, epfd: i32, wait: &mut TaskWait, depth: usize) {
        if depth > MAX_NESTING {
            wait.outside = true;
            return;
        }
        let Ok(info) = fs::read_to_string(format!("/proc/{pid}/fdinfo/{epfd}")) else {
            wait.unknown = true;
            return;
        };
        let entries = epoll_entries(&info);
        if entries.len() > MAX_WATCHED {
            wait.outside = true;
            return;
        }
        for (fd, events) in entries {
            let direction = if events & (libc::EPOLLIN | libc::EPOLLPRI) as u32 != 0 {
                Direction::In
            } else {
                Direction::Out
            };
            self.watch(pid, fd, direction, wait, depth);
        }
    }

    fn kind(&self, pid: i32, fd: i32) -> Kind {
        let path = format!("/proc/{pid}/fd/{fd}");
        let Ok(target) = fs::read_link(&path) else {
            return Kind::Other;
        };
        let target = target.to_string_lossy();
        if target == "/dev/ptmx" || target == "/dev/pts/ptmx" {
            let index = fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}"))
                .ok()
                .and_then(|info| tty_index(&info));
            return index.map_or(Kind::Other, Kind::PtyMaster);
        }
        match kind_of(&target, &self.tty.name) {
            // A path: the terminal opened afresh (`/dev/tty`, `/dev/pts/N`, a name in
            // another mount namespace) is told by its device.
            Kind::Other if target.starts_with('/') && self.tty.is_device_of(&path) => {
                Kind::Terminal
            }
            kind => kind,
        }
    }

    /// The pipes and sockets `pid` holds, each with how many of its descriptors do.
    fn table(&mut self, pid: i32) -> &[(Kind, u32)] {
        self.tables.entry(pid).or_insert_with(|| {
            let mut table: Vec<(Kind, u32)> = Vec::new();
            let Ok(dir) = fs::read_dir(format!("/proc/{pid}/fd")) else {
                return table;
            };
            for entry in dir.flatten() {
                let Ok(target) = fs::read_link(entry.path()) else {
                    continue;
                };
                let kind = kind_of(&target.to_string_lossy(), "");
                if !matches!(kind, Kind::Pipe(_) | Kind::Socket(_)) {
                    continue;
                }
                match table.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, n)) => *n += 1,
                    None => table.push((kind, 1)),
                }
            }
            table
        })
    }

    /// The inode of the peer of Unix socket `inode`; `None` for a socket of another
    /// family or one without a peer.
    fn unix_peer(&mut self, inode: u64) -> Option<u64> {
        *self
            .peers
            .entry(inode)
            .or_insert_with(|| sock_diag::unix_peer(inode))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    In,
    Out,
}

/// The session's terminal: the name `/proc/PID/fd/N` shows for its slave, and its device.
#[derive(Debug, Clone, Default)]
pub(crate) struct Terminal {
    /// `/dev/pts/3`.
    name: String,
    /// The slave's device number; `None` when it cannot be read.
    device: Option<u64>,
}

/// The device of `/dev/tty`, which is the opener's controlling terminal: for a process of
/// the terminal's foreground group, the session's own.
const DEV_TTY: (u32, u32) = (5, 0);

impl Terminal {
    /// The terminal named `name` (`/dev/pts/3`).
    pub(crate) fn new(name: &str) -> Terminal {
        use std::os::unix::fs::MetadataExt as _;
        Terminal {
            name: name.to_owned(),
            device: fs::metadata(name)
                .ok()
                .filter(is_char_device)
                .map(|meta| meta.rdev()),
        }
    }

    /// Whether the descriptor at `path` (`/proc/PID/fd/N`) is this terminal, by its
    /// device: the slave opened again by path, or `/dev/tty`.
    fn is_device_of(&self, path: &str) -> bool {
        use std::os::unix::fs::MetadataExt as _;
        let Ok(meta) = fs::metadata(path) else {
            return false;
        };
        if !is_char_device(&meta) {
            return false;
        }
        let rdev = meta.rdev();
        Some(rdev) == self.device || (libc::major(rdev), libc::minor(rdev)) == DEV_TTY
    }
}

fn is_char_device(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    meta.file_type().is_char_device()
}

/// What a `/proc/PID/fd/N` link names. `tty` is the session's terminal (empty: none).
fn kind_of(target: &str, tty: &str) -> Kind {
    let inode = |prefix: &str| {
        target
            .strip_prefix(prefix)?
            .strip_suffix(']')?
            .parse::<u64>()
            .ok()
    };
    if !tty.is_empty() && target == tty {
        Kind::Terminal
    } else if let Some(inode) = inode("pipe:[") {
        Kind::Pipe(inode)
    } else if let Some(inode) = inode("socket:[") {
        Kind::Socket(inode)
    } else if target == "anon_inode:[eventpoll]" {
        Kind::Epoll
    } else if matches!(
        target,
        "anon_inode:[eventfd]"
            | "anon_inode:[signalfd]"
            | "anon_inode:[timerfd]"
            | "anon_inode:inotify"
            | "anon_inode:[pidfd]"
            | "anon_inode:[fanotify]"
    ) {
        Kind::Own
    } else {
        Kind::Other
    }
}

/// The slave's index in a pty master's `fdinfo` (`tty-index:\t1`).
fn tty_index(info: &str) -> Option<u32> {
    info.lines()
        .find_map(|line| line.strip_prefix("tty-index:"))
        .and_then(|index| index.trim().parse().ok())
}

/// Up to how many descendants of a process are searched for the foreground group of a
/// terminal it holds the master of.
const MAX_DESCENDANTS: usize = 64;

/// The processes among `pid`'s descendants that are the foreground group of the terminal
/// with device `device`: their controlling terminal is it, and their group is its
/// foreground group (`stat`'s `tty_nr` and `tpgid`).
fn foreground_of(pid: i32, device: u64) -> Vec<i32> {
    let (major, minor) = (libc::major(device), libc::minor(device));
    let mut found = Vec::new();
    let mut queue = vec![pid];
    let mut at = 0;
    while at < queue.len() && queue.len() < MAX_DESCENDANTS {
        let parent = queue[at];
        at += 1;
        let Ok(tasks) = fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children = fs::read_to_string(task.path().join("children")).unwrap_or_default();
            queue.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<i32>().ok()),
            );
        }
        if parent == pid {
            continue;
        }
        let Ok(stat) = fs::read_to_string(format!("/proc/{parent}/stat")) else {
            continue;
        };
        let Some(fields) = stat.get(stat.rfind(')').unwrap_or(0) + 2..) else {
            continue;
        };
        // After the name: state, ppid, pgrp, session, tty_nr, tpgid.
        let fields: Vec<&str> = fields.split(' ').take(6).collect();
        let number = |i: usize| fields.get(i).and_then(|f| f.parse::<i64>().ok());
        let (Some(pgrp), Some(tty_nr), Some(tpgid)) = (number(2), number(4), number(5)) else {
            continue;
        };
        // The kernel's encoding of a device number: minor's low byte, major, minor's rest.
        let tty_nr = tty_nr as u32;
        let tty = (
            (tty_nr >> 8) & 0xfff,
            (tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00),
        );
        if tty == (major, minor) && pgrp == tpgid {
            found.push(parent);
        }
    }
    found
}

/// The descriptors of an epoll set's `fdinfo`, with the events each is watched for
/// (`tfd:        5 events:       19 data: ...`).
fn epoll_entries(info: &str) -> Vec<(i32, u32)> {
    info.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            if words.next()? != "tfd:" {
                return None;
            }
            let fd = words.next()?.parse().ok()?;
            if words.next()? != "events:" {
                return None;
            }
            let events = u32::from_str_radix(words.next()?, 16).ok()?;
            Some((fd, events))
        })
        .collect()
}

/// A timeout in milliseconds (an `int`: negative waits for ever), when it is finite.
fn timeout_ms(ms: u64) -> Option<std::time::Duration> {
    let ms = ms as u32 as i32;
    Some(std::time::Duration::from_millis(u64::try_from(ms).ok()?))
}

/// The timeout at `address` in `pid`'s memory (a `timespec`, or a `timeval` with
/// `per_second` 1,000,000; none at address 0: for ever).
fn timespec_at(pid: i32, address: u64, per_second: u64) -> Option<std::time::Duration> {
    if address == 0 {
        return None;
    }
    let bytes = read_memory(pid, address, 16)?;
    let seconds = u64::from_ne_bytes(bytes[..8].try_into().expect("8 bytes"));
    let fraction = u64::from_ne_bytes(bytes[8..].try_into().expect("8 bytes"));
    let nanos = fraction.saturating_mul(1_000_000_000 / per_second);
    Some(
        std::time::Duration::new(seconds.min(u64::from(u32::MAX)), 0)
            + std::time::Duration::from_nanos(nanos.min(999_999_999)),
    )
}

/// Reads `len` bytes of `pid`'s memory at `address`.
fn read_memory(pid: i32, address: u64, len: usize) -> Option<Vec<u8>> {
    let mem = fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut buf = vec![0; len];
    mem.read_exact_at(&mut buf, address).ok()?;
    Some(buf)
}

/// The descriptors of a `poll` set (`struct pollfd { int fd; short events; short
/// revents; }`), each with the direction it is watched for.
fn poll_set(pid: i32, address: u64, count: usize) -> Option<Vec<(i32, Direction)>> {
    if count > MAX_WATCHED {
        return None;
    }
    let bytes = read_memory(pid, address, count * 8)?;
    Some(
        bytes
            .chunks_exact(8)
            .map(|entry| {
                let fd = i32::from_ne_bytes(entry[0..4].try_into().expect("4 bytes"));
                let events = i16::from_ne_bytes(entry[4..6].try_into().expect("2 bytes"));
                let reads = events & (libc::POLLIN | libc::POLLPRI) != 0;
                (fd, if reads { Direction::In } else { Direction::Out })
            })
            .collect(),
    )
}

/// The descriptors set in a `select` bit set of `count` descriptors (`fd_set`, an array
/// of longs).
fn select_set(pid: i32, address: u64, count: usize) -> Option<Vec<i32>> {
    if count > MAX_WATCHED {
        return None;
    }
    let words = count.div_ceil(64);
    let bytes = read_memory(pid, address, words * 8)?;
    let mut fds = Vec::new();
    for (i, word) in bytes.chunks_exact(8).enumerate() {
        let word = u64::from_ne_bytes(word.try_into().expect("8 bytes"));
        for bit in 0..64 {
            let fd = i * 64 + bit;
            if fd < count && word & (1 << bit) != 0 {
                fds.push(fd as i32);
            }
        }
    }
    Some(fds)
}

/// How a foreground group's processes wait, all told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Every task sleeps, at least one waits on the terminal, and none waits for
    /// anything but the person (directly or through another member that does).
    Input,
    /// As [`Input`](Verdict::Input), but every wait on the terminal has a timer, longer
    /// than [`SOON`]: the program may act by itself then (node awaiting a timer of
    /// seconds, htop's refresh), so a caller that waits for `until` waits on.
    Timed,
    /// As [`Input`](Verdict::Input), but a wait on the terminal carries a timer that
    /// fires within this time, and the program acts then by itself: not input wait
    /// until it has fired.
    Soon(std::time::Duration),
    /// Nothing waits on the terminal nor works: the group sleeps, and a sleep of at most
    /// [`SOON`] (this long, the longest) ends by itself (`watch` between two frames).
    /// Work, unless it is one step of a loop that repaints a full screen.
    Sleeps(std::time::Duration),
    /// Something works, or nothing waits on the terminal.
    Working,
    /// A task waits on the terminal and on a source outside the group at once (the `ssh`
    /// client: its terminal and its socket; `docker exec`, telnet): it may be waiting for
    /// either. Only the prompt coming back (or quiet) can tell.
    Remote,
    /// A task waits on the terminal and on another member that works (node and the pipe
    /// of a child it runs), or what it waits on cannot be read: only quiet can end the
    /// settle.
    CannotTell,
}

/// Weighs the waits of every task of a group, each given with its process. A task that
/// waits on other members waits for the person if they all do: those are found from
/// the members that wait on the terminal directly, outward.
///
/// A short timer on a wait for the person (see [`TaskWait::timer`]) makes it
/// [`Verdict::Soon`], whatever was written last, unless another task waits on the terminal
/// without one: that task is the program's reader of keys, and the timer is another
/// thread's clock (fzf reads `/dev/tty` in one thread while Go's poller, which also
/// watches it, wakes every 100 ms). A group that polls with short timeouts and watches no
/// terminal is simply working.
pub(crate) fn verdict(tasks: &[(i32, TaskWait)]) -> Verdict {
    use std::collections::HashSet;
    // The processes that wait for the person: grown from the direct ones until no more
    // join. A process joins when none of its tasks works or is unreadable and each of its
    // peers already waits for the person.
    let mut waiting: HashSet<i32> = HashSet::new();
    let processes: HashSet<i32> = tasks.iter().map(|(pid, _)| *pid).collect();
    loop {
        let before = waiting.len();
        for &pid in &processes {
            if waiting.contains(&pid) {
                continue;
            }
            let mut mine = tasks.iter().filter(|(p, _)| *p == pid).map(|(_, w)| w);
            let clean = mine
                .clone()
                .all(|w| !w.away() && !w.unknown && w.peers.iter().all(|p| waiting.contains(p)));
            let for_person = mine.any(|w| w.terminal || !w.peers.is_empty());
            if clean && for_person {
                waiting.insert(pid);
            }
        }
        if waiting.len() == before {
            break;
        }
    }
    let mut any_terminal = false;
    let mut cannot_tell = false;
    let mut remote = false;
    let mut soon: Option<std::time::Duration> = None;
    let mut untimed = false;
    let mut forever = false;
    let mut sleep: Option<std::time::Duration> = None;
    for (_, wait) in tasks {
        if wait.relays {
            return Verdict::Working;
        }
        let peers_work = wait.peers.iter().any(|p| !waiting.contains(p));
        let elsewhere = wait.away() || peers_work;
        if elsewhere && !wait.terminal {
            return Verdict::Working;
        }
        cannot_tell |= wait.unknown || (wait.terminal && peers_work);
        remote |= wait.terminal && wait.away();
        if wait.terminal {
            match wait.timer {
                Some(timer) if timer <= SOON => soon = soon.max(Some(timer)),
                // A long timer is a wait like any other here, but not for ever.
                Some(_) => untimed = true,
                None => (untimed, forever) = (true, true),
            }
        }
        any_terminal |= wait.terminal;
        sleep = sleep.max(wait.sleep);
    }
    if cannot_tell {
        Verdict::CannotTell
    } else if remote {
        Verdict::Remote
    } else if !any_terminal {
        match sleep {
            Some(sleep) if sleep <= SOON => Verdict::Sleeps(sleep),
            _ => Verdict::Working,
        }
    } else if let Some(timer) = soon
        && !untimed
    {
        Verdict::Soon(timer)
    } else if forever {
        Verdict::Input
    } else {
        Verdict::Timed
    }
}

/// Whether a group whose every task sleeps, with these waits, waits only on processes
/// outside it, through pipes or Unix sockets (gpg on its agent): nothing on the network,
/// no file, nothing unreadable, nothing of its own on the terminal.
pub(crate) fn waits_on_strangers(tasks: &[(i32, TaskWait)]) -> bool {
    tasks.iter().any(|(_, w)| w.strangers)
        && tasks
            .iter()
            .all(|(_, w)| !w.outside && !w.unknown && !w.terminal)
}

/// What the foreground group waits for when it waits on processes outside it
/// ([`waits_on_strangers`]) and `daemons` are the waits of every sleeping task of the
/// session's other processes (setsid, double fork, reparented under the shim: gpg-agent
/// and its pinentry): the verdict over the processes among them that wait on the
/// terminal, weighed as a group would be, where they wait for the person (gpg's
/// dialog); work otherwise. A daemon that reads the terminal stands for the group then,
/// as a member would.
pub(crate) fn daemon_verdict(daemons: &[(i32, TaskWait)]) -> Verdict {
    let readers: Vec<(i32, TaskWait)> = daemons
        .iter()
        .filter(|(pid, _)| daemons.iter().any(|(p, w)| p == pid && w.terminal))
        .cloned()
        .collect();
    match verdict(&readers) {
        found @ (Verdict::Input | Verdict::Timed | Verdict::Soon(_)) => found,
        _ => Verdict::Working,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> std::time::Duration {
        std::time::Duration::from_millis(n)
    }

    fn wait(terminal: bool, outside: bool, peers: &[i32]) -> TaskWait {
        TaskWait {
            terminal,
            outside,
            peers: peers.to_vec(),
            ..TaskWait::default()
        }
    }

    fn sleeps(ms_: u64) -> TaskWait {
        TaskWait {
            sleep: Some(ms(ms_)),
            ..TaskWait::default()
        }
    }

    #[test]
    fn verdicts_of_groups() {
        let idle = TaskWait::default();
        let reads = wait(true, false, &[]);
        type Group = Vec<(i32, TaskWait)>;
        let cases: &[(&str, Group, Verdict)] = &[
            (
                "a REPL reading the terminal",
                vec![(1, reads.clone())],
                Verdict::Input,
            ),
            (
                "a REPL with a helper thread on a futex",
                vec![(1, reads.clone()), (1, idle.clone())],
                Verdict::Input,
            ),
            ("sleep", vec![(1, idle.clone())], Verdict::Working),
            (
                "mc: its terminal and its subshell's master, the subshell running a command",
                vec![(
                    1,
                    TaskWait {
                        relays: true,
                        ..reads.clone()
                    },
                )],
                Verdict::Working,
            ),
            (
                "watch between two frames: a short sleep",
                vec![(1, sleeps(500))],
                Verdict::Sleeps(ms(500)),
            ),
            (
                "a shell waiting for its `sleep 0.2` beside a `sleep 0.5`",
                vec![(1, idle.clone()), (2, sleeps(200)), (3, sleeps(500))],
                Verdict::Sleeps(ms(500)),
            ),
            (
                "a sleep of seconds is work",
                vec![(1, sleeps(3000))],
                Verdict::Working,
            ),
            (
                "a sleeping thread beside a reader of the terminal",
                vec![(1, reads.clone()), (1, sleeps(500))],
                Verdict::Input,
            ),
            (
                "a short sleep beside a busy member",
                vec![(1, sleeps(500)), (2, wait(false, true, &[]))],
                Verdict::Working,
            ),
            (
                "python3 | tee: tee reads python's pipe",
                vec![(1, reads.clone()), (2, wait(false, false, &[1]))],
                Verdict::Input,
            ),
            (
                "python3 | tee | cat: a chain",
                vec![
                    (3, wait(false, false, &[2])),
                    (2, wait(false, false, &[1])),
                    (1, reads.clone()),
                ],
                Verdict::Input,
            ),
            (
                "capturing a child that sleeps",
                vec![(1, wait(false, false, &[2])), (2, idle.clone())],
                Verdict::Working,
            ),
            (
                "node: the terminal and a child's pipe, the child sleeping",
                vec![(1, wait(true, false, &[2])), (2, idle.clone())],
                Verdict::CannotTell,
            ),
            (
                "ssh: the terminal and a socket",
                vec![(1, wait(true, true, &[]))],
                Verdict::Remote,
            ),
            (
                "ssh polling with a short timer: still remote",
                vec![(
                    1,
                    TaskWait {
                        timer: Some(ms(100)),
                        ..wait(true, true, &[])
                    },
                )],
                Verdict::Remote,
            ),
            (
                "curl: a socket",
                vec![(1, wait(false, true, &[]))],
                Verdict::Working,
            ),
            (
                "a busy member beside a reader",
                vec![(1, reads.clone()), (2, wait(false, true, &[]))],
                Verdict::Working,
            ),
            (
                "two members waiting on each other only",
                vec![(1, wait(false, false, &[2])), (2, wait(false, false, &[1]))],
                Verdict::Working,
            ),
            (
                "vim between Escape and its key timeout",
                vec![(
                    1,
                    TaskWait {
                        timer: Some(ms(100)),
                        ..reads.clone()
                    },
                )],
                Verdict::Soon(ms(100)),
            ),
            (
                "node awaiting a timer, its helper threads on futexes",
                vec![
                    (
                        1,
                        TaskWait {
                            timer: Some(ms(980)),
                            ..reads.clone()
                        },
                    ),
                    (1, idle.clone()),
                ],
                Verdict::Soon(ms(980)),
            ),
            (
                "fzf: a thread reads the terminal, the poller watches it with a timer",
                vec![
                    (1, reads.clone()),
                    (
                        1,
                        TaskWait {
                            timer: Some(ms(99)),
                            ..reads.clone()
                        },
                    ),
                ],
                Verdict::Input,
            ),
            (
                "node awaiting a timer of seconds: a wait, with a timer",
                vec![(
                    1,
                    TaskWait {
                        timer: Some(ms(3000)),
                        ..reads.clone()
                    },
                )],
                Verdict::Timed,
            ),
            (
                "a short timer beside a long one: the long one is the reader",
                vec![
                    (
                        1,
                        TaskWait {
                            timer: Some(ms(100)),
                            ..reads.clone()
                        },
                    ),
                    (
                        1,
                        TaskWait {
                            timer: Some(ms(1500)),
                            ..reads.clone()
                        },
                    ),
                ],
                Verdict::Timed,
            ),
            (
                "a long timer beside a reader for ever: input",
                vec![
                    (1, reads.clone()),
                    (
                        1,
                        TaskWait {
                            timer: Some(ms(8000)),
                            ..reads.clone()
                        },
                    ),
                ],
                Verdict::Input,
            ),
            (
                "the longest of two short timers",
                vec![
                    (
                        1,
                        TaskWait {
                            timer: Some(ms(15)),
                            ..reads.clone()
                        },
                    ),
                    (
                        2,
                        TaskWait {
                            timer: Some(ms(50)),
                            ..reads.clone()
                        },
                    ),
                ],
                Verdict::Soon(ms(50)),
            ),
            (
                "curl: a socket, polled with a short timeout",
                vec![(
                    1,
                    TaskWait {
                        timer: Some(ms(100)),
                        ..wait(false, true, &[])
                    },
                )],
                Verdict::Working,
            ),
            (
                "a progress loop polling nothing with short timeouts",
                vec![(
                    1,
                    TaskWait {
                        timer: Some(ms(100)),
                        ..idle.clone()
                    },
                )],
                Verdict::Working,
            ),
            (
                "unreadable",
                vec![(1, TaskWait::unknown())],
                Verdict::CannotTell,
            ),
        ];
        for (what, tasks, want) in cases {
            assert_eq!(verdict(tasks), *want, "{what}");
        }
    }

    #[test]
    fn descriptor_kinds() {
        let tty = "/dev/pts/7";
        assert_eq!(kind_of("/dev/pts/7", tty), Kind::Terminal);
        assert_eq!(kind_of("/dev/pts/8", tty), Kind::Other);
        assert_eq!(kind_of("pipe:[1234]", tty), Kind::Pipe(1234));
        assert_eq!(kind_of("socket:[99]", tty), Kind::Socket(99));
        assert_eq!(kind_of("anon_inode:[eventfd]", tty), Kind::Own);
        assert_eq!(kind_of("anon_inode:inotify", tty), Kind::Own);
        assert_eq!(kind_of("anon_inode:[eventpoll]", tty), Kind::Epoll);
        assert_eq!(kind_of("/home/x/file", tty), Kind::Other);
    }

    #[test]
    fn a_socket_pairs_peer_is_found() {
        use std::os::unix::fs::MetadataExt as _;
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let inode = |s: &std::os::unix::net::UnixStream| {
            let fd = std::os::fd::AsRawFd::as_raw_fd(s);
            fs::metadata(format!("/proc/self/fd/{fd}")).unwrap().ino()
        };
        assert_eq!(sock_diag::unix_peer(inode(&a)), Some(inode(&b)));
        assert_eq!(sock_diag::unix_peer(inode(&b)), Some(inode(&a)));
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&tcp);
        let tcp_inode = fs::metadata(format!("/proc/self/fd/{fd}")).unwrap().ino();
        assert_eq!(sock_diag::unix_peer(tcp_inode), None);
    }

    #[test]
    fn the_terminal_is_told_by_its_device() {
        // This process's standard streams may be anything; a terminal opened here is not.
        let pair = rustix_openpty::openpty(None, None).unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&pair.user);
        let name = rustix::pty::ptsname(&pair.controller, Vec::new()).unwrap();
        let name = name.to_str().unwrap();
        let tty = Terminal::new(name);
        let me = format!("/proc/{}/fd/{fd}", std::process::id());
        assert!(tty.is_device_of(&me), "the slave itself");
        let again = fs::File::open(name).unwrap();
        let again = format!(
            "/proc/{}/fd/{}",
            std::process::id(),
            std::os::fd::AsRawFd::as_raw_fd(&again)
        );
        assert!(tty.is_device_of(&again), "the slave opened afresh by path");
        let other = rustix_openpty::openpty(None, None).unwrap();
        let other = format!(
            "/proc/{}/fd/{}",
            std::process::id(),
            std::os::fd::AsRawFd::as_raw_fd(&other.user)
        );
        assert!(!tty.is_device_of(&other), "another terminal");
        let null = fs::File::open("/dev/null").unwrap();
        let null = format!(
            "/proc/{}/fd/{}",
            std::process::id(),
            std::os::fd::AsRawFd::as_raw_fd(&null)
        );
        assert!(!tty.is_device_of(&null), "another character device");
        if let Ok(dev_tty) = fs::File::open("/dev/tty") {
            let path = format!(
                "/proc/{}/fd/{}",
                std::process::id(),
                std::os::fd::AsRawFd::as_raw_fd(&dev_tty)
            );
            assert!(tty.is_device_of(&path), "/dev/tty");
        }
    }

    #[test]
    fn timeouts_are_read_as_given() {
        assert_eq!(timeout_ms(100), Some(ms(100)));
        assert_eq!(timeout_ms(0), Some(ms(0)));
        assert_eq!(timeout_ms(0xffff_ffff), None, "-1: for ever");
        assert_eq!(timeout_ms(8095), Some(ms(8095)));
        let me = std::process::id() as i32;
        let timespec = |s: u64, ns: u64| {
            let mut b = s.to_ne_bytes().to_vec();
            b.extend(ns.to_ne_bytes());
            b
        };
        let short = timespec(0, 100_000_000);
        let long = timespec(4, 0);
        let at = |b: &Vec<u8>| b.as_ptr() as u64;
        assert_eq!(timespec_at(me, at(&short), 1_000_000_000), Some(ms(100)));
        assert_eq!(timespec_at(me, at(&long), 1_000_000_000), Some(ms(4000)));
        assert_eq!(timespec_at(me, 0, 1_000_000_000), None);
        let timeval = timespec(0, 500_000);
        assert_eq!(timespec_at(me, at(&timeval), 1_000_000), Some(ms(500)));
    }

    #[test]
    fn a_daemon_at_the_terminal_stands_for_a_group_that_waits_on_it() {
        let on_agent = TaskWait {
            strangers: true,
            ..TaskWait::default()
        };
        // gpg reads its agent's socket: work by itself, a wait on strangers.
        let gpg = vec![(1, on_agent.clone())];
        assert_eq!(verdict(&gpg), Verdict::Working);
        assert!(waits_on_strangers(&gpg));
        // Not with a socket to the network, a file, or the terminal of its own.
        for other in [
            wait(false, true, &[]),
            TaskWait::unknown(),
            wait(true, false, &[]),
        ] {
            assert!(!waits_on_strangers(&[(1, on_agent.clone()), (1, other)]));
        }
        assert!(!waits_on_strangers(&[(1, TaskWait::default())]));
        // gpg-agent: its main thread on its listening sockets, another on pinentry's
        // pipe; pinentry-curses polls the terminal every 70 ms.
        let agent = [(5, wait(false, true, &[])), (5, on_agent.clone())];
        let pinentry = (
            6,
            TaskWait {
                timer: Some(ms(70)),
                ..wait(true, false, &[])
            },
        );
        let mut daemons = agent.to_vec();
        daemons.push(pinentry);
        assert_eq!(daemon_verdict(&daemons), Verdict::Soon(ms(70)));
        // A dialog that reads without a timer: input.
        let mut daemons = agent.to_vec();
        daemons.push((6, wait(true, false, &[])));
        assert_eq!(daemon_verdict(&daemons), Verdict::Input);
        // Nobody of the session at the terminal: work.
        assert_eq!(daemon_verdict(&agent), Verdict::Working);
        // A daemon at the terminal and on the network at once: no input.
        assert_eq!(
            daemon_verdict(&[(6, wait(true, true, &[]))]),
            Verdict::Working
        );
    }

    #[test]
    fn a_sleeps_length_is_read() {
        // coreutils' `sleep` sleeps in clock_nanosleep with a relative time.
        let mut child = std::process::Command::new("sleep")
            .arg("0.7")
            .spawn()
            .expect("sleep runs");
        let pid = child.id() as i32;
        let tty = Terminal::default();
        let members = [pid];
        let mut peers = HashMap::new();
        let mut context = Context::new(&tty, &members, &mut peers);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let wait = loop {
            let syscall = fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
            let wait = context.task(pid, &syscall);
            if wait.sleep.is_some() || std::time::Instant::now() > deadline {
                break wait;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        child.kill().ok();
        child.wait().ok();
        assert_eq!(wait.sleep, Some(ms(700)), "{wait:?}");
        assert!(!wait.terminal && !wait.outside, "{wait:?}");
    }

    #[test]
    fn a_pty_masters_index_is_read() {
        let info = "pos:\t0\nflags:\t0100002\nmnt_id:\t24\nino:\t90\ntty-index:\t12\n";
        assert_eq!(tty_index(info), Some(12));
        assert_eq!(tty_index("pos:\t0\n"), None);
    }

    #[test]
    fn epoll_fdinfo_is_parsed() {
        let info = "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\n\
            tfd:        5 events:       19 data:                5  pos:0 ino:3 sdev:e\n\
            tfd:       12 events:        4 data:      c00000000c  pos:0 ino:1 sdev:d\n";
        assert_eq!(epoll_entries(info), [(5, 0x19), (12, 0x4)]);
    }
}

/// The one question asked of the kernel's socket diagnostics (`NETLINK_SOCK_DIAG`, what
/// `ss -x` uses): the peer of a Unix socket, by inode. No crate in the dependency tree
/// speaks sock_diag, and this is one fixed request and one attribute of the answer.
/// `SO_PEERCRED` was tried first and does not answer this: for a socket pair it names the
/// process that made the pair, and libuv makes its children's stdio pairs itself.
mod sock_diag {
    use rustix::net::{AddressFamily, Protocol, RecvFlags, SendFlags, SocketFlags, SocketType};

    /// `SOCK_DIAG_BY_FAMILY`.
    const BY_FAMILY: u16 = 20;
    /// `NLM_F_REQUEST`.
    const REQUEST: u16 = 1;
    /// `NLMSG_ERROR`.
    const ERROR: u16 = 2;
    /// `UDIAG_SHOW_PEER`.
    const SHOW_PEER: u32 = 4;
    /// `UNIX_DIAG_PEER`.
    const ATTR_PEER: u16 = 2;

    /// The inode of the peer of the Unix socket with inode `inode`.
    pub(super) fn unix_peer(inode: u64) -> Option<u64> {
        let inode = u32::try_from(inode).ok()?;
        let socket = rustix::net::socket_with(
            AddressFamily::NETLINK,
            SocketType::DGRAM,
            SocketFlags::CLOEXEC,
            Some(Protocol::from_raw(rustix::net::RawProtocol::new(
                libc::NETLINK_SOCK_DIAG as u32,
            )?)),
        )
        .ok()?;
        // struct nlmsghdr (16 bytes), then struct unix_diag_req (24 bytes).
        let mut request = Vec::with_capacity(40);
        request.extend_from_slice(&40u32.to_ne_bytes());
        request.extend_from_slice(&BY_FAMILY.to_ne_bytes());
        request.extend_from_slice(&REQUEST.to_ne_bytes());
        request.extend_from_slice(&1u32.to_ne_bytes()); // sequence
        request.extend_from_slice(&0u32.to_ne_bytes()); // port: the kernel's
        request.push(libc::AF_UNIX as u8);
        request.extend_from_slice(&[0, 0, 0]); // protocol, padding
        request.extend_from_slice(&u32::MAX.to_ne_bytes()); // every state
        request.extend_from_slice(&inode.to_ne_bytes());
        request.extend_from_slice(&SHOW_PEER.to_ne_bytes());
        request.extend_from_slice(&[0xff; 8]); // no cookie
        rustix::net::send(&socket, &request, SendFlags::empty()).ok()?;
        let mut answer = [0u8; 512];
        let (n, _) = rustix::net::recv(&socket, &mut answer, RecvFlags::empty()).ok()?;
        parse_peer(&answer[..n.min(answer.len())])
    }

    /// The peer attribute of a sock_diag answer: `struct nlmsghdr`, `struct
    /// unix_diag_msg` (16 bytes), then attributes (`struct rtattr`, 4-byte aligned).
    pub(super) fn parse_peer(answer: &[u8]) -> Option<u64> {
        let u16_at = |at: usize| Some(u16::from_ne_bytes(answer.get(at..at + 2)?.try_into().ok()?));
        let u32_at = |at: usize| Some(u32::from_ne_bytes(answer.get(at..at + 4)?.try_into().ok()?));
        let len = (u32_at(0)? as usize).min(answer.len());
        if u16_at(4)? == ERROR {
            return None;
        }
        let mut at = 16 + 16;
        while at + 4 <= len {
            let attr_len = u16_at(at)? as usize;
            if attr_len < 4 {
                return None;
            }
            if u16_at(at + 2)? == ATTR_PEER {
                return u32_at(at + 4).map(u64::from);
            }
            at += attr_len.div_ceil(4) * 4;
        }
        None
    }
}
