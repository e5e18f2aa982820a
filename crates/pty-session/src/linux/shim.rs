//! The shim: a small process of our own between the service and each session's command.
//!
//! The service never forks a user command itself. Each session's shim is a fork of the
//! service's [spawner](crate::spawner), a single-threaded process of this library's own
//! code, so the shim is plain single-threaded code too. It:
//! 1. starts a new session and takes the PTY (its stdout) as controlling terminal;
//! 2. becomes a child subreaper, so every orphan of the command's tree reparents to it;
//! 3. starts the command (vfork-style) in its own process group, the terminal's foreground
//!    group, with default signal handling, and reports its pid (or why exec failed);
//! 4. reaps everything below it and reports the command's exit status;
//! 5. on EOF of its control socket (the service closed the session, or the service died)
//!    or SIGTERM, sends SIGHUP, SIGTERM and SIGCONT to every descendant, waits out the
//!    grace period, then SIGKILLs whatever is left until nothing is, and exits.
//!
//! It also exits by itself once the command has exited and no descendant is left, and
//! says so last ([`Report::Finished`]).
//!
//! **It cannot be disarmed.** The command is the shim's child and runs as the same user,
//! so an unsandboxed session may stop the shim, kill it, or lower its limits
//! (`prlimit --pid $PPID --nofile=0:0`: every new descriptor, and `poll` on two, fails).
//! So the shim treats any failing call of its wait as a reason to kill the tree, waits
//! while it kills with `sigtimedwait` (no descriptor), and lists its children through a
//! `/proc` it opened at start when it can open nothing else ([`ProcDir`]); and it is not
//! the last line: the service kills the tree itself when a close is not done soon after
//! the grace, or when the shim died without its last report ([`tree`](crate::tree)), and
//! the spawner kills the orphans a dead shim hands it. A sandboxed session can do less
//! to begin with: on kernels with Landlock's signal scope (ABI 6) it cannot signal the
//! shim, which is outside its sandbox; where it still can signal it or change its
//! limits, what it does to the shim ends as above, since the service and the spawner,
//! which finish the kill, are outside its reach as well.
//!
//! Stdin of the shim is the control socket, stdout and stderr the PTY slave; the spawner
//! has set its environment and working directory to the command's.

use std::ffi::CString;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd as _, OwnedFd};

use rustix::event::{PollFd, PollFlags};

use crate::ExitStatus;
use crate::children::ProcDir;
use crate::confine::{Prepared, Raw};
use crate::sandbox::Policy;

/// What the shim tells the service, as fixed 12-byte records on the control socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Report {
    /// The command runs with pid `command`, under the shim of pid `shim` (the leader of
    /// the session's process session, which the service kills by if the shim fails it).
    Started {
        /// The command's pid.
        command: u32,
        /// The shim's own pid.
        shim: u32,
    },
    /// Exec of the command failed with this errno.
    ExecFailed(i32),
    /// The command ended.
    Exited(ExitStatus),
    /// The working directory could not be entered (errno); nothing was started.
    ChdirFailed(i32),
    /// The spawner could not fork the shim (errno); nothing was started.
    ForkFailed(i32),
    /// The sandbox could not be set up (where, and the errno); nothing was started.
    SandboxFailed(crate::confine::Stage, i32),
    /// The shim is about to exit, with nothing left below it: the last report. A shim
    /// whose socket closes without it died some other way, and the service kills what
    /// it left.
    Finished,
}

/// The size of one report record.
pub(crate) const REPORT_LEN: usize = 12;

impl Report {
    pub(crate) fn encode(self) -> [u8; REPORT_LEN] {
        let (tag, value): (u32, i64) = match self {
            Report::Started { command, shim } => (1, i64::from(shim) << 32 | i64::from(command)),
            Report::ExecFailed(errno) => (2, i64::from(errno)),
            Report::Exited(ExitStatus::Code(code)) => (3, i64::from(code)),
            Report::Exited(ExitStatus::Signal(signal)) => (4, i64::from(signal)),
            Report::ChdirFailed(errno) => (5, i64::from(errno)),
            Report::ForkFailed(errno) => (6, i64::from(errno)),
            Report::SandboxFailed(stage, errno) => {
                (7, (stage as i64) << 32 | i64::from(errno as u32))
            }
            Report::Finished => (8, 0),
        };
        let mut record = [0u8; REPORT_LEN];
        record[..4].copy_from_slice(&tag.to_le_bytes());
        record[4..].copy_from_slice(&value.to_le_bytes());
        record
    }

    pub(crate) fn decode(record: [u8; REPORT_LEN]) -> Option<Report> {
        let tag = u32::from_le_bytes(record[..4].try_into().ok()?);
        let value = i64::from_le_bytes(record[4..].try_into().ok()?);
        match tag {
            1 => Some(Report::Started {
                command: value as u32,
                shim: u32::try_from(value >> 32).ok()?,
            }),
            2 => i32::try_from(value).ok().map(Report::ExecFailed),
            3 => i32::try_from(value)
                .ok()
                .map(|c| Report::Exited(ExitStatus::Code(c))),
            4 => i32::try_from(value)
                .ok()
                .map(|s| Report::Exited(ExitStatus::Signal(s))),
            5 => i32::try_from(value).ok().map(Report::ChdirFailed),
            6 => i32::try_from(value).ok().map(Report::ForkFailed),
            7 => crate::confine::Stage::from_code(value >> 32)
                .map(|stage| Report::SandboxFailed(stage, value as u32 as i32)),
            8 => Some(Report::Finished),
            _ => None,
        }
    }
}

/// The shim's whole life, in the spawner's forked child; returns its exit code. With a
/// `policy`, the command runs in that sandbox (the shim stays outside).
pub(crate) fn run(grace_ms: u64, argv: &[CString], policy: Option<&Policy>) -> i32 {
    let Some(program) = argv.first() else {
        return 126;
    };
    let grace_ms = grace_ms.min(u64::from(u32::MAX)) as i64;

    // SAFETY: `run` is the shim's whole life in the spawner's single-threaded fork, with
    // the slave on fds 1 and 2 and the control socket on fd 0, as the function requires.
    let control = unsafe { setup_terminal_and_control() };
    let Some(control) = control else { return 126 };
    // SAFETY: single-threaded, and no code of the shim relies on the signal dispositions
    // or mask this changes.
    let signals = unsafe { block_signals() };
    let Some(signals) = signals else { return 126 };
    // SAFETY: both descriptors were just made by the calls above and belong to nothing
    // else; the shim owns them until it exits.
    let (control, signals) =
        unsafe { (OwnedFd::from_raw_fd(control), OwnedFd::from_raw_fd(signals)) };
    // Opened before the command can lower the shim's limits: the kill needs no new
    // descriptor then (`children`).
    let proc = ProcDir::open();

    // Everything of the sandbox that allocates is made here, before the command's child
    // (which shares this memory) exists.
    let mut prepared = match policy {
        None => None,
        Some(policy) => {
            let terminal = std::fs::read_link("/proc/self/fd/1").ok();
            match crate::confine::prepare(policy, terminal) {
                Ok(prepared) => Some(prepared),
                Err(stage) => {
                    report(control.as_fd(), Report::SandboxFailed(stage, 0));
                    return 126;
                }
            }
        }
    };
    // SAFETY: single-threaded (nothing else can touch memory the vfork child shares), and
    // the shim installs no signal handlers that could run in that child; `prepared` lives
    // until the child exec'd or exited.
    let child = unsafe { spawn_command(program, argv, prepared.as_mut()) };
    drop(prepared);
    match child {
        Err(Failed::Exec(errno)) => {
            report(control.as_fd(), Report::ExecFailed(errno));
            127
        }
        Err(Failed::Sandbox(stage, errno)) => {
            report(control.as_fd(), Report::SandboxFailed(stage, errno));
            126
        }
        Ok(pid) => {
            let started = Report::Started {
                command: pid as u32,
                shim: std::process::id(),
            };
            report(control.as_fd(), started);
            // SAFETY: fds 0 to 2 are raw descriptors of the shim that no Rust object owns.
            // The PTY slave is released so that its end of output reaches the service as
            // soon as the command's tree lets go of it.
            unsafe { stdio_to_dev_null() };
            let mut shim = Shim {
                control,
                signals,
                proc,
                command: pid,
                status: None,
                children: true,
            };
            let code = shim.serve(grace_ms);
            report(shim.control.as_fd(), Report::Finished);
            code
        }
    }
}

/// Starts a new session on the PTY (fd 1), moves the control socket to fd 3 and the slave
/// to fd 0, closes every other inherited fd, and becomes a child subreaper.
///
/// # Safety
/// Only in the shim's own process, single-threaded, with the control socket on fd 0 and
/// the PTY slave on fds 1 and 2: it closes every descriptor above 3, which must belong to
/// no Rust object still in use.
unsafe fn setup_terminal_and_control() -> Option<i32> {
    // SAFETY: the caller guarantees the descriptor layout and that no other thread or
    // object uses the descriptors closed here; every other call only takes integers and a
    // static C string, and each result is checked.
    unsafe {
        // A new session, so the command's tree has no terminal but ours and no signal
        // from the service's terminal reaches it.
        if libc::setsid() < 0 {
            return None;
        }
        // The slave becomes our controlling terminal (fd 1 is the slave).
        if libc::ioctl(1, libc::TIOCSCTTY, 0) < 0 {
            return None;
        }
        // Control socket to fd 3, close-on-exec so the command never holds it.
        if libc::dup2(0, 3) < 0 || libc::fcntl(3, libc::F_SETFD, libc::FD_CLOEXEC) < 0 {
            return None;
        }
        // Nothing else of the service may leak into the session.
        libc::close_range(4, u32::MAX, 0);
        // The command gets the slave on 0, 1 and 2.
        if libc::dup2(1, 0) < 0 {
            return None;
        }
        // `ps` and `top` show the shim by its role, not as `exe` (a name is at most 15
        // bytes; a longer one is cut).
        libc::prctl(libc::PR_SET_NAME, c"pty-shim".as_ptr(), 0, 0, 0);
        // Orphans of the command's tree reparent to us, not to init: "everything below the
        // shim" is then complete, setsid and double forks included.
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 {
            return None;
        }
    }
    Some(3)
}

/// Signals the shim ignores: terminal and job-control signals meant for the command.
pub(crate) const IGNORED: [i32; 7] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
    libc::SIGPIPE,
];

/// Ignores the terminal signals and routes SIGCHLD and SIGTERM to a signalfd.
///
/// # Safety
/// Only in the shim's single-threaded process: it changes process-wide signal
/// dispositions and the mask, which other threads or code relying on them would not
/// expect.
unsafe fn block_signals() -> Option<i32> {
    // SAFETY: the caller guarantees a single-threaded shim; `sigset_t` is plain data that
    // `sigemptyset` initialises before use, and the pointers are to locals.
    unsafe {
        for signal in IGNORED {
            libc::signal(signal, libc::SIG_IGN);
        }
        let mut mask: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut mask);
        libc::sigaddset(&mut mask, libc::SIGCHLD);
        libc::sigaddset(&mut mask, libc::SIGTERM);
        if libc::sigprocmask(libc::SIG_BLOCK, &mask, std::ptr::null_mut()) < 0 {
            return None;
        }
        let fd = libc::signalfd(-1, &mask, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
        (fd >= 0).then_some(fd)
    }
}

/// What the command's child needs, prepared before `clone` so that the child, which shares
/// the shim's memory, only makes syscalls.
struct Exec {
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    /// The sandbox to enter before exec, if any.
    sandbox: Option<Raw>,
    /// Set by the child if exec failed; read once the child exec'd or exited.
    errno: i32,
    /// Set by the child if the sandbox failed (a [`Stage`](crate::confine::Stage) code).
    stage: i64,
}

/// Why the command did not start.
enum Failed {
    /// Exec failed with this errno.
    Exec(i32),
    /// The sandbox could not be entered.
    Sandbox(crate::confine::Stage, i32),
}

/// Starts the command in its own foreground process group, in `sandbox` if given; returns
/// its pid, or why it did not start.
///
/// The child shares the shim's memory and the shim waits until it exec'd or exited
/// (`CLONE_VM | CLONE_VFORK`, as `posix_spawn` does): no page tables are copied and none
/// torn down again by the exec, and the exec's outcome is known when `clone` returns. A
/// sandboxed command is started the same way, from inside the sandbox's namespaces
/// ([`isolate`](crate::isolate)), and is the shim's child all the same.
///
/// # Safety
/// Only in a single-threaded process without signal handlers: the child runs on the
/// shim's memory until it execs, so no other thread may change that memory and no handler
/// may run in the child.
unsafe fn spawn_command(
    program: &CString,
    argv: &[CString],
    prepared: Option<&mut Prepared>,
) -> Result<i32, Failed> {
    let sandbox = prepared.as_deref().map(Prepared::raw);
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut exec = Exec {
        program: program.as_ptr(),
        argv: argv_ptrs.as_ptr(),
        sandbox,
        errno: 0,
        stage: 0,
    };
    // The child's stack: execvp puts the path it tries, and for a script without `#!` a
    // new argv, on it.
    let mut stack = vec![0u8; 256 * 1024 + 16 * argv_ptrs.len()];
    let top = stack.as_mut_ptr_range().end as usize & !15;
    let pid = match prepared {
        // SAFETY: as below, through the sandbox's builder; `prepared` outlives the call.
        Some(prepared) => unsafe {
            crate::isolate::spawn(
                &mut prepared.plan,
                exec_command,
                (&raw mut exec).cast(),
                top as *mut libc::c_void,
            )
            .map_err(|(stage, errno)| Failed::Sandbox(stage, errno))?
        },
        // SAFETY: the child runs `exec_command` on its own stack with a pointer to `exec`,
        // both alive until it exec'd or exited, which is when `clone` returns
        // (CLONE_VFORK).
        None => unsafe {
            libc::clone(
                exec_command,
                top as *mut libc::c_void,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                (&raw mut exec).cast(),
            )
        },
    };
    if pid < 0 {
        return Err(Failed::Exec(errno()));
    }
    // SAFETY: `exec` is a live local; with CLONE_VFORK, `clone` returned only after the
    // child exec'd or exited, so nothing writes it any more. The volatile reads see the
    // child's writes, which the compiler cannot know about.
    let (failed, stage) = unsafe {
        (
            std::ptr::read_volatile(&raw const exec.errno),
            std::ptr::read_volatile(&raw const exec.stage),
        )
    };
    if failed != 0 || stage != 0 {
        let mut status = 0;
        // SAFETY: waitpid takes a pid and a pointer to a live local `c_int`.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        return Err(match crate::confine::Stage::from_code(stage) {
            Some(stage) => Failed::Sandbox(stage, failed),
            None => Failed::Exec(failed),
        });
    }
    Ok(pid)
}

/// The command's child: its own process group, made the terminal's foreground group (so
/// that Ctrl-C reaches it and input wait sees it), default signals, then exec. It shares
/// the shim's memory, so it only makes syscalls; the shim has no signal handlers that
/// could run here.
extern "C" fn exec_command(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the shim's `Exec`, alive while this child runs (see spawn_command);
    // everything below is a syscall on this process.
    unsafe {
        let exec = arg.cast::<Exec>();
        libc::setpgid(0, 0);
        libc::tcsetpgrp(0, libc::getpid());
        for signal in IGNORED {
            libc::signal(signal, libc::SIG_DFL);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        // The sandbox last: the steps above (the terminal's foreground group) are the
        // shim's doing, not the command's.
        if let Some(sandbox) = (*exec).sandbox
            && let Err((stage, errno)) = crate::confine::apply(sandbox)
        {
            std::ptr::write_volatile(&raw mut (*exec).errno, errno);
            std::ptr::write_volatile(&raw mut (*exec).stage, stage as i64);
            libc::_exit(126)
        }
        libc::execvp((*exec).program, (*exec).argv);
        std::ptr::write_volatile(&raw mut (*exec).errno, *libc::__errno_location());
        libc::_exit(127)
    }
}

/// Replaces the shim's stdin, stdout and stderr with `/dev/null`.
///
/// # Safety
/// Fds 0 to 2 must not be owned by a Rust object that still uses them (`OwnedFd`,
/// `File`): they are replaced underneath.
unsafe fn stdio_to_dev_null() {
    // SAFETY: the caller guarantees nothing owns fds 0 to 2; `open` gets a static C
    // string, and `dup2` and `close` take integers.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            libc::close(null);
        }
    }
}

/// The calling thread's `errno`.
pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Writes one report to the control socket. A service that is gone gives EPIPE (SIGPIPE
/// is ignored), which changes nothing for the shim.
pub(crate) fn report(control: BorrowedFd<'_>, report: Report) {
    let _ = rustix::io::write(control, &report.encode());
}

/// The running shim's state.
struct Shim {
    control: OwnedFd,
    signals: OwnedFd,
    /// `/proc`, opened at start: the kill lists the shim's children through it when the
    /// session has taken away the shim's right to open files.
    proc: Option<ProcDir>,
    command: i32,
    status: Option<ExitStatus>,
    /// Whether any child may still exist (false once `waitpid` answered ECHILD).
    children: bool,
}

impl Shim {
    /// Waits for the end of the command's tree or for a close, and returns the exit code.
    ///
    /// Anything that fails here is a reason to kill the tree, never to try again: a poll
    /// that fails (with `RLIMIT_NOFILE` lowered below 2 it fails at once, every time)
    /// would otherwise turn this loop into a spin that never sees the close.
    fn serve(&mut self, grace_ms: i64) -> i32 {
        loop {
            let mut fds = [
                PollFd::new(&self.control, PollFlags::IN),
                PollFd::new(&self.signals, PollFlags::IN),
            ];
            match rustix::event::poll(&mut fds, None) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(_) => break,
            }
            let (control, signals) = (fds[0].revents(), fds[1].revents());
            if !signals.is_empty() && self.drain_signals() {
                break;
            }
            if !control.is_empty() && self.control_closed() {
                break;
            }
            // A signalfd that stays ready without yielding a signal cannot be waited on.
            if signals.intersects(PollFlags::ERR | PollFlags::NVAL) {
                break;
            }
            if self.status.is_some() && !self.children {
                return self.exit_code();
            }
        }
        self.kill_tree(grace_ms);
        self.exit_code()
    }

    fn exit_code(&self) -> i32 {
        match self.status {
            Some(ExitStatus::Code(code)) => code,
            Some(ExitStatus::Signal(signal)) => 128 + signal,
            None => 125,
        }
    }

    /// Reads the signalfd and reaps; true if SIGTERM asked the shim to close, or if the
    /// signalfd cannot be read (it would stay ready forever).
    fn drain_signals(&mut self) -> bool {
        let mut terminate = false;
        // A `struct signalfd_siginfo`: 128 bytes, the signal's number first.
        let mut info = [0u8; 128];
        loop {
            match rustix::io::read(&self.signals, &mut info) {
                Ok(128) => {
                    let signo = u32::from_ne_bytes([info[0], info[1], info[2], info[3]]);
                    if signo == libc::SIGTERM as u32 {
                        terminate = true;
                    }
                }
                Err(rustix::io::Errno::AGAIN) => break,
                Err(rustix::io::Errno::INTR) => continue,
                Ok(_) | Err(_) => {
                    terminate = true;
                    break;
                }
            }
        }
        self.reap();
        terminate
    }

    /// True when the service's end of the control socket is closed.
    fn control_closed(&mut self) -> bool {
        let mut buf = [0u8; 64];
        match rustix::io::read(&self.control, &mut buf) {
            Ok(n) => n == 0,
            Err(err) => !matches!(err, rustix::io::Errno::INTR | rustix::io::Errno::AGAIN),
        }
    }

    /// Reaps every child that has ended; records and reports the command's status.
    fn reap(&mut self) {
        loop {
            let mut status = 0;
            // SAFETY: waitpid on our own children, with a valid status pointer.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid == 0 {
                return;
            }
            if pid < 0 {
                if errno() == libc::ECHILD {
                    self.children = false;
                }
                return;
            }
            if pid == self.command && self.status.is_none() {
                let exit = if libc::WIFSIGNALED(status) {
                    ExitStatus::Signal(libc::WTERMSIG(status))
                } else {
                    ExitStatus::Code(libc::WEXITSTATUS(status))
                };
                self.status = Some(exit);
                report(self.control.as_fd(), Report::Exited(exit));
            }
        }
    }

    /// SIGHUP/SIGTERM/SIGCONT to the whole tree, the grace period, then SIGKILL until
    /// nothing is left below the shim.
    ///
    /// The command's process group is signalled first, without a scan: most sessions end
    /// right there, and since every orphan reparents to the shim, "no child left" means no
    /// descendant left. Only a tree that outlives that is looked up in `/proc`, which costs
    /// a read per process on the machine.
    ///
    /// Nothing here needs a new descriptor or waits on one when the session has taken
    /// them away: waits are `sigtimedwait` on the blocked SIGCHLD, and when `/proc` cannot
    /// be read file by file, the shim's own children are listed through the directory it
    /// opened at start ([`ProcDir`]) and killed round after round, each round handing the
    /// shim the children of the last. Every round waits, so a tree that will not die
    /// (a process the shim may not signal) costs a wake-up every few milliseconds, not a
    /// spinning core; the service's own kill ends it then.
    fn kill_tree(&mut self, grace_ms: i64) {
        const TERMINATE: [i32; 3] = [libc::SIGHUP, libc::SIGTERM, libc::SIGCONT];
        let deadline = now_ms() + grace_ms.max(0);
        for signal in TERMINATE {
            // SAFETY: kill(2) takes two integers and touches no memory of ours. The group
            // is the command's, whose leader is the shim's child: its id is not reused
            // before the shim reaps that child.
            unsafe { libc::kill(-self.command, signal) };
        }
        // Wait for the group to die, but not once it is gone: whatever is left then
        // escaped it (setsid, a job in its own group) and is looked up at once, rather than
        // after the rest of QUICK_MS.
        let quick = (now_ms() + QUICK_MS).min(deadline);
        self.reap();
        while self.children && self.group_alive() {
            let left = quick - now_ms();
            if left <= 0 {
                break;
            }
            self.wait_signal(left);
        }
        if !self.children {
            return;
        }
        self.signal_tree(&TERMINATE);
        self.wait_children_until(deadline);
        while self.children {
            self.signal_tree(&[libc::SIGKILL]);
            self.wait_signal(5);
        }
    }

    /// Sends `signals` to every process below the shim: the whole tree as `/proc` tells
    /// it, or, when `/proc` cannot be read that way, the shim's own children.
    fn signal_tree(&self, signals: &[i32]) {
        let send = |pid: i32| {
            for &signal in signals {
                // SAFETY: kill(2) takes two integers and touches no memory of ours; `pid`
                // was found below the shim in `/proc` a moment ago.
                unsafe { libc::kill(pid, signal) };
            }
        };
        let me = std::process::id() as i32;
        match descendants(me) {
            Some(tree) if !tree.is_empty() => tree.into_iter().for_each(send),
            _ => {
                if let Some(proc) = &self.proc {
                    proc.for_each_child(send);
                }
            }
        }
    }

    /// Whether any process is still in the command's process group. Its dead members are
    /// the shim's own children (orphans reparent to it) and `reap` has collected them.
    fn group_alive(&self) -> bool {
        // SAFETY: signal 0 only checks that the group has a member we may signal.
        unsafe { libc::kill(-self.command, 0) == 0 }
    }

    /// Reaps until no child is left or `deadline` (monotonic ms) passes.
    fn wait_children_until(&mut self, deadline: i64) {
        self.reap();
        while self.children {
            let left = deadline - now_ms();
            if left <= 0 {
                break;
            }
            self.wait_signal(left);
        }
    }

    /// Waits up to `timeout_ms` for SIGCHLD (or any blocked signal), then reaps. It waits
    /// with `sigtimedwait`, which needs no descriptor, and sleeps the time out if even
    /// that fails, so no failure makes the kill spin.
    fn wait_signal(&mut self, timeout_ms: i64) {
        let timeout_ms = timeout_ms.clamp(0, 60_000);
        let timeout = libc::timespec {
            tv_sec: timeout_ms / 1000,
            tv_nsec: timeout_ms % 1000 * 1_000_000,
        };
        // SAFETY: the set is a local initialised by sigemptyset; sigtimedwait writes
        // nothing when given a null info pointer; nanosleep reads a local timespec.
        unsafe {
            let mut mask: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut mask);
            libc::sigaddset(&mut mask, libc::SIGCHLD);
            let got = libc::sigtimedwait(&mask, std::ptr::null_mut(), &timeout);
            if got < 0 && errno() != libc::EAGAIN && errno() != libc::EINTR {
                libc::nanosleep(&timeout, std::ptr::null_mut());
            }
        }
        self.reap();
    }
}

/// How long the shim waits for the command's group to die of SIGHUP/SIGTERM before it
/// looks for the rest of the tree.
const QUICK_MS: i64 = 50;

/// The monotonic clock in milliseconds, by a plain syscall: the shim's and the spawner's
/// loops run in single-threaded processes that may not allocate or lock.
pub(crate) fn now_ms() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: CLOCK_MONOTONIC always exists; the pointer is valid.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000
}

/// Every process below `root`, found by scanning `/proc` (this kernel has no
/// `/proc/<pid>/task/<tid>/children`); `None` if `/proc` cannot be read.
pub(crate) fn descendants(root: i32) -> Option<Vec<i32>> {
    let mut children: std::collections::HashMap<i32, Vec<i32>> = std::collections::HashMap::new();
    for (pid, ppid) in crate::procfs::parent_links()? {
        children.entry(ppid).or_default().push(pid);
    }
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &pid in children.get(&parent).into_iter().flatten() {
            found.push(pid);
            frontier.push(pid);
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip() {
        for report in [
            Report::Started {
                command: 4_000_000,
                shim: 4_194_303,
            },
            Report::Finished,
            Report::ExecFailed(libc::ENOENT),
            Report::Exited(ExitStatus::Code(-1)),
            Report::Exited(ExitStatus::Signal(9)),
            Report::ChdirFailed(libc::EACCES),
            Report::ForkFailed(libc::EAGAIN),
            Report::SandboxFailed(crate::confine::Stage::Restrict, libc::EPERM),
        ] {
            assert_eq!(Report::decode(report.encode()), Some(report));
        }
        assert_eq!(Report::decode([9; REPORT_LEN]), None);
    }
}
