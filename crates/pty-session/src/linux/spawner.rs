//! The spawner: one small process per service that forks the shims.
//!
//! Exec is the dearest step of starting a session (about 1.2 ms per exec on our 2-vCPU
//! machines, more for a large binary, and more again while the service holds thousands of
//! descriptors). A shim used to be an exec of the current executable; now the service
//! starts that exec once, as the spawner, and each session's shim is a `fork` of it: a
//! single-threaded process of a few megabytes, fast to fork, holding none of the service's
//! descriptors.
//!
//! The service spawns `/proc/self/exe` with the environment marker
//! `PTY_SESSION_SPAWNER=1` and a stream socket as stdin. This module's constructor runs
//! before `main` in every program that links the library (the `pty-session` server, a
//! consumer's binary, a test binary), sees the marker and serves requests instead of
//! running the program. A request is one [`Request`] with two descriptors attached: the
//! PTY slave and the shim's end of the session's control socket. A *spare*, a child the
//! spawner forked ahead of time, reads it, puts the slave on stdout and stderr and the
//! control socket on stdin, takes the request's environment and working directory, and
//! runs [`shim::run`](crate::shim::run); the spawner forks the next spare meanwhile.
//! Nothing is answered on the spawner's socket: the shim reports on the control socket,
//! and the spawner writes a report there itself if it cannot fork.
//!
//! The spawner exits when its socket hangs up: the service dropped it, or died (the spare
//! reads the EOF and exits too). It first waits, a moment, for its shims to end their
//! trees, and ends those of shims that do not (`last_rites`): the service is no longer
//! there to. Children are reaped by the kernel (`SA_NOCLDWAIT`), so
//! no shim lingers as a zombie.
//!
//! The spawner is also a child subreaper, the net under the shims: a shim that dies
//! before its tree (killed by its own session, which may signal it: same user, and the
//! command is its child) hands its orphans to the spawner, not to init. The spawner knows
//! the pid of every spare it forked (each shim was one), so any other child is such an
//! orphan, and a shim's death (SIGCHLD, read from a signalfd) makes it kill them: each
//! one killed hands it its own children, and their deaths wake it again. It lists its
//! children through a `/proc` it opened at start ([`ProcDir`]), so a session that lowers
//! the spawner's limits does not blind it either.

use std::ffi::CString;
use std::io::IoSliceMut;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};

use crate::children::ProcDir;
use crate::shim::Report;

/// The environment variable that turns a starting process into the spawner.
pub(crate) const MARKER: &str = "PTY_SESSION_SPAWNER";
/// The marker's value; bumped if the request format ever changes.
pub(crate) const MARKER_VALUE: &str = "1";
/// The spawner's `argv[0]`, which is what `ps` shows; the same as its name (`comm`, set
/// with `PR_SET_NAME`, at most 15 bytes), so that `ps`, `top` and `pgrep` agree.
pub(crate) const ARG0: &str = "pty-spawner";

/// The largest request the spawner takes: far above Linux's limit on argv and
/// environment together (a quarter of the stack limit, 2 MiB by default).
const MAX_REQUEST: usize = 64 << 20;

/// What one shim is to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    /// How long the shim waits after SIGHUP/SIGTERM before SIGKILL.
    pub(crate) grace_ms: u64,
    /// The working directory; empty keeps the spawner's.
    pub(crate) cwd: CString,
    /// The program and its arguments.
    pub(crate) argv: Vec<CString>,
    /// The whole environment, as `NAME=value`.
    pub(crate) env: Vec<CString>,
    /// The sandbox's mode ([`confine::mode_code`](crate::confine::mode_code); 0: none).
    pub(crate) sandbox: u8,
    /// Whether a sandboxed command may use the network.
    pub(crate) network: bool,
    /// The paths a `workspace` sandbox may write.
    pub(crate) writable: Vec<CString>,
    /// The paths a sandbox does not see.
    pub(crate) hidden: Vec<CString>,
}

impl Request {
    /// The request as sent: its length (u32, little-endian), then the fields, each string
    /// with a u32 length.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = vec![0; 4];
        out.extend_from_slice(&self.grace_ms.to_le_bytes());
        out.extend_from_slice(&[self.sandbox, u8::from(self.network)]);
        put(&mut out, self.cwd.as_bytes());
        for list in [&self.argv, &self.env, &self.writable, &self.hidden] {
            out.extend_from_slice(&(list.len() as u32).to_le_bytes());
            for item in list {
                put(&mut out, item.as_bytes());
            }
        }
        let body = (out.len() - 4) as u32;
        out[..4].copy_from_slice(&body.to_le_bytes());
        out
    }

    /// The request from its body (what follows the length); `None` if it is malformed.
    pub(crate) fn decode(body: &[u8]) -> Option<Request> {
        let mut reader = Reader(body);
        let grace_ms = u64::from_le_bytes(reader.take(8)?.try_into().ok()?);
        let [sandbox, network] = <[u8; 2]>::try_from(reader.take(2)?).ok()?;
        if sandbox > 2 || network > 1 {
            return None;
        }
        let cwd = reader.string()?;
        let mut lists = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
        for list in &mut lists {
            let n = reader.u32()?;
            for _ in 0..n {
                list.push(reader.string()?);
            }
        }
        let [argv, env, writable, hidden] = lists;
        (reader.0.is_empty() && !argv.is_empty()).then_some(Request {
            grace_ms,
            cwd,
            argv,
            env,
            sandbox,
            network: network == 1,
            writable,
            hidden,
        })
    }
}

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn string(&mut self) -> Option<CString> {
        let n = self.u32()? as usize;
        CString::new(self.take(n)?).ok()
    }
}

/// The `main` of a program whose only job is to be the spawner of services running in
/// other processes, named by [`Config::spawner`](crate::Config::spawner): a Node.js addon,
/// say, whose own executable is `node`.
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     pty_session::spawner_main()
/// }
/// ```
///
/// Started by a service, such a program never reaches `main` (the library's constructor
/// serves the service and exits); started any other way, it reaches this call, which says
/// on stderr what the program is for and returns exit code 2.
pub fn spawner_main() -> std::process::ExitCode {
    ensure_linked();
    eprintln!(
        "this program is the spawner of pty-session services in other processes; it is \
         started by them (Config::spawner), not by hand"
    );
    std::process::ExitCode::from(2)
}

/// Makes sure the constructor below is linked into every program that starts a service:
/// a static that nothing refers to may be left out of the link with its object file.
pub(crate) fn ensure_linked() {
    std::hint::black_box(&SPAWNER_INIT);
}

// SAFETY: `.init_array` entries are called once by the C runtime before `main`, with no
// other thread running; `init` returns at once unless the marker is set.
#[used]
#[unsafe(link_section = ".init_array")]
static SPAWNER_INIT: extern "C" fn() = init;

extern "C" fn init() {
    if std::env::var_os(MARKER).is_none_or(|v| v != MARKER_VALUE) {
        return;
    }
    crate::nofile::restore_from_env();
    let code = serve();
    // SAFETY: the spawner ends here without running the host program's `main` or
    // destructors.
    unsafe { libc::_exit(code) }
}

/// The spawner's whole life; returns its exit code.
///
/// It keeps one *spare*: a child forked ahead of time that waits for the next request on
/// the spawner's socket and becomes its shim, so that an open does not wait for a fork.
/// Only the spare reads the socket, one request at a time; once it has a whole request it
/// closes its end of a pipe to the spawner, which then forks the next spare. The spawner
/// itself only watches for the service going away.
fn serve() -> i32 {
    // SAFETY: dispositions and descriptors of our own single-threaded process.
    unsafe {
        // The shim's set: a Ctrl-C or hangup in the service's terminal is the service's
        // to handle; the spawner goes when its socket closes.
        for signal in crate::shim::IGNORED {
            libc::signal(signal, libc::SIG_IGN);
        }
        libc::prctl(libc::PR_SET_NAME, c"pty-spawner".as_ptr(), 0, 0, 0);
        libc::close_range(3, u32::MAX, 0);
    }
    // SAFETY: dispositions and the mask of our own single-threaded process.
    let deaths = unsafe { watch_children() };
    // Once here rather than in every shim.
    crate::confine::warm();
    let proc = ProcDir::open();
    // Every spare forked and not known dead: the spawner's legitimate children.
    let mut forked: Vec<i32> = Vec::new();
    loop {
        let Ok((taken, spare_end)) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        else {
            return 1;
        };
        // SAFETY: the spawner is single-threaded, so the child of fork may call anything.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            drop(taken);
            spare(spare_end);
        }
        drop(spare_end);
        if pid > 0 {
            forked.push(pid);
        }
        if pid < 0 {
            // No spare: take the next request here and say why it cannot start.
            let errno = crate::shim::errno();
            match receive() {
                Received::Request(_, [_, control]) => {
                    crate::shim::report(control.as_fd(), Report::ForkFailed(errno));
                    continue;
                }
                Received::Malformed | Received::End => return 1,
            }
        }
        let mut orphans = || {
            if let Some(proc) = &proc {
                kill_orphans(proc, &mut forked);
            }
        };
        match wait_for_spare(&taken, deaths.as_ref(), &mut orphans) {
            Spare::Taken => {}
            Spare::Lost => return 0,
            Spare::ServiceGone => {
                if let Some(proc) = &proc {
                    last_rites(proc, deaths.as_ref(), &mut forked);
                }
                return 0;
            }
        }
    }
}

/// How long the spawner, once the service is gone, gives its shims to end their trees
/// before it kills what is left itself: within the two seconds the service's death
/// allows every tree, with room for the kill.
const LAST_RITES_MS: i64 = 1_500;

/// The service is gone, and with it the service's own kill of a tree whose shim does not
/// do its work. Every shim saw its control socket close and kills its tree; the spawner
/// waits for them (killing the orphans of any that die first), and kills the trees of the
/// shims still there after [`LAST_RITES_MS`] (stopped by their session, or disarmed
/// otherwise) as the service would have ([`tree::kill`](crate::tree::kill)).
fn last_rites(proc: &ProcDir, deaths: Option<&OwnedFd>, forked: &mut Vec<i32>) {
    let deadline = crate::linux::shim::now_ms() + LAST_RITES_MS;
    loop {
        kill_orphans(proc, forked);
        if proc.for_each_child(|_| {}) == Some(0) {
            return;
        }
        let left = deadline - crate::linux::shim::now_ms();
        if left <= 0 {
            break;
        }
        wait_for_death(deaths, left.min(50));
    }
    let mut shims = Vec::new();
    proc.for_each_child(|pid| shims.push(pid));
    for shim in shims {
        crate::tree::kill(shim);
    }
    // What the killed shims handed the spawner, as they died.
    for _ in 0..100 {
        kill_orphans(proc, &mut Vec::new());
        if proc.for_each_child(|_| {}) == Some(0) {
            return;
        }
        wait_for_death(deaths, 10);
    }
}

/// Waits up to `timeout_ms` for a child's death on the SIGCHLD signalfd (or sleeps, with
/// none), and empties it.
fn wait_for_death(deaths: Option<&OwnedFd>, timeout_ms: i64) {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let timeout = Timespec {
        tv_sec: timeout_ms / 1000,
        tv_nsec: timeout_ms % 1000 * 1_000_000,
    };
    match deaths {
        Some(deaths) => {
            let mut fds = [PollFd::new(deaths, PollFlags::IN)];
            if rustix::event::poll(&mut fds, Some(&timeout)).is_err() {
                std::thread::sleep(std::time::Duration::from_millis(timeout_ms as u64));
            }
            let mut info = [0u8; 128];
            while let Ok(128) = rustix::io::read(deaths, &mut info) {}
        }
        None => std::thread::sleep(std::time::Duration::from_millis(timeout_ms as u64)),
    }
}

/// Makes the spawner a child subreaper whose children the kernel reaps (`SA_NOCLDWAIT`)
/// and whose SIGCHLD is read from the returned signalfd. A spare resets SIGCHLD before it
/// becomes a shim; its mask is the shim's business (it blocks SIGCHLD too).
///
/// # Safety
/// Only in the spawner's single-threaded process: it changes process-wide dispositions
/// and the mask.
unsafe fn watch_children() -> Option<OwnedFd> {
    use std::os::fd::FromRawFd as _;
    // SAFETY: the caller guarantees a single-threaded spawner; the structs are plain
    // data initialised before use, the pointers are to locals.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        // Not SIG_IGN: an ignored SIGCHLD is never sent, even to a signalfd.
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = libc::SIG_DFL;
        action.sa_flags = libc::SA_NOCLDWAIT;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGCHLD, &action, std::ptr::null_mut());
        let mut mask: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut mask);
        libc::sigaddset(&mut mask, libc::SIGCHLD);
        if libc::sigprocmask(libc::SIG_BLOCK, &mask, std::ptr::null_mut()) < 0 {
            return None;
        }
        let fd = libc::signalfd(-1, &mask, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
        (fd >= 0).then(|| OwnedFd::from_raw_fd(fd))
    }
}

/// SIGKILLs every child that is not a spare the spawner forked: orphans of a shim that
/// died before its tree. Forgets the spares that are gone.
fn kill_orphans(proc: &ProcDir, forked: &mut Vec<i32>) {
    let mut alive = Vec::with_capacity(forked.len());
    let listed = proc.for_each_child(|pid| {
        if forked.contains(&pid) {
            alive.push(pid);
        } else {
            // SAFETY: kill(2) takes two integers; `pid` is a child of ours this moment
            // that we did not fork.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    if listed.is_some() {
        *forked = alive;
    }
}

enum Spare {
    /// The spare took a request (or died between requests): fork the next.
    Taken,
    /// The spare read something that is not a request: the stream is out of step.
    Lost,
    ServiceGone,
}

/// Waits until the spare lets go of its end of the pipe, or the service closes the socket;
/// calls `orphans` whenever a child died (`deaths` is the SIGCHLD signalfd).
fn wait_for_spare(taken: &OwnedFd, deaths: Option<&OwnedFd>, orphans: &mut impl FnMut()) -> Spare {
    use rustix::event::{PollFd, PollFlags};
    // SAFETY: stdin is the service's socket for as long as the spawner lives.
    let socket = unsafe { std::os::fd::BorrowedFd::borrow_raw(0) };
    loop {
        // Only hang-ups of the socket: its data is the spare's to read.
        let mut fds = vec![
            PollFd::new(taken, PollFlags::IN),
            PollFd::new(&socket, PollFlags::RDHUP),
        ];
        if let Some(deaths) = deaths {
            fds.push(PollFd::new(deaths, PollFlags::IN));
        }
        match rustix::event::poll(&mut fds, None) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => return Spare::ServiceGone,
        }
        if !fds[1].revents().is_empty() {
            return Spare::ServiceGone;
        }
        if fds.get(2).is_some_and(|fd| !fd.revents().is_empty()) {
            drop(fds);
            if let Some(deaths) = deaths {
                // A `struct signalfd_siginfo` per signal; what matters is that one came.
                let mut info = [0u8; 128];
                while let Ok(128) = rustix::io::read(deaths, &mut info) {}
            }
            orphans();
            continue;
        }
        if !fds[0].revents().is_empty() {
            let mut byte = [0u8; 1];
            return match rustix::io::read(taken, &mut byte) {
                Ok(1) => Spare::Lost,
                _ => Spare::Taken,
            };
        }
    }
}

/// The spare: waits for one request, tells the spawner (by closing `taken`), and becomes
/// its shim. A malformed request leaves the socket out of step, so the spare says so (a
/// byte on `taken`) and the spawner ends: the service starts a new one.
fn spare(taken: OwnedFd) -> ! {
    match receive() {
        Received::Request(request, [slave, control]) => {
            drop(taken);
            // SAFETY: in the forked spare, which never returns from here.
            unsafe { become_shim(&request, slave.as_raw_fd(), control.as_raw_fd()) }
        }
        Received::Malformed => {
            let _ = rustix::io::write(&taken, &[1]);
            // SAFETY: ending the spare.
            unsafe { libc::_exit(1) }
        }
        // SAFETY: ending the spare.
        Received::End => unsafe { libc::_exit(0) },
    }
}

enum Received {
    Request(Request, [OwnedFd; 2]),
    /// A request without its two descriptors or with a body that does not decode; its
    /// descriptors are closed, which the service sees as a shim that never started.
    Malformed,
    End,
}

/// Reads one request and its descriptors from stdin.
fn receive() -> Received {
    // SAFETY: stdin is the service's socket for as long as the spawner lives.
    let socket = unsafe { std::os::fd::BorrowedFd::borrow_raw(0) };
    let mut fds: Vec<OwnedFd> = Vec::new();
    let mut length = [0u8; 4];
    let mut got = 0;
    while got < length.len() {
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
        let mut ancillary = RecvAncillaryBuffer::new(&mut space);
        let read = rustix::net::recvmsg(
            socket,
            &mut [IoSliceMut::new(&mut length[got..])],
            &mut ancillary,
            RecvFlags::CMSG_CLOEXEC,
        );
        match read {
            Ok(msg) if msg.bytes == 0 => return Received::End,
            Ok(msg) => got += msg.bytes,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return Received::End,
        }
        for message in ancillary.drain() {
            if let RecvAncillaryMessage::ScmRights(received) = message {
                fds.extend(received);
            }
        }
    }
    let mut body = vec![0u8; (u32::from_le_bytes(length) as usize).min(MAX_REQUEST)];
    let mut filled = 0;
    while filled < body.len() {
        match rustix::io::read(socket, &mut body[filled..]) {
            Ok(0) => return Received::End,
            Ok(n) => filled += n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return Received::End,
        }
    }
    match (Request::decode(&body), <[OwnedFd; 2]>::try_from(fds)) {
        (Some(request), Ok(fds)) => Received::Request(request, fds),
        _ => Received::Malformed,
    }
}

/// The spare: stdio, environment and directory as the request says, then the shim.
///
/// # Safety
/// Only in the spare, a single-threaded child of the spawner's fork: it replaces stdio
/// with `slave` and `control`, clears and rewrites the environment (which no other thread
/// may read meanwhile), and never returns.
unsafe fn become_shim(request: &Request, slave: i32, control: i32) -> ! {
    // SAFETY: the caller guarantees a single-threaded spare, so the environment calls race
    // with nothing; the C strings of `request` outlive the calls, and `putenv` keeps
    // pointers into them, which stay valid because this function never returns.
    unsafe {
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        let placed =
            libc::dup2(control, 0) == 0 && libc::dup2(slave, 1) == 1 && libc::dup2(slave, 2) == 2;
        if !placed {
            libc::_exit(126);
        }
        // `putenv` keeps the pointer: the request lives until this process execs or
        // exits, since this function never returns.
        libc::clearenv();
        for entry in &request.env {
            libc::putenv(entry.as_ptr().cast_mut());
        }
        if !request.cwd.is_empty() && libc::chdir(request.cwd.as_ptr()) < 0 {
            crate::shim::report(
                std::io::stdin().as_fd(),
                Report::ChdirFailed(crate::shim::errno()),
            );
            libc::_exit(126);
        }
        let policy = crate::confine::policy_from(
            request.sandbox,
            request.network,
            &request.writable,
            &request.hidden,
        );
        libc::_exit(crate::shim::run(
            request.grace_ms,
            &request.argv,
            policy.as_ref(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<CString> {
        items.iter().map(|s| CString::new(*s).unwrap()).collect()
    }

    #[test]
    fn requests_round_trip() {
        let request = Request {
            grace_ms: 500,
            cwd: CString::new("/tmp").unwrap(),
            argv: strings(&["/bin/sh", "-c", "", "printf '%s' é"]),
            env: strings(&["A=1", "EMPTY=", "B=x=y"]),
            sandbox: 1,
            network: false,
            writable: strings(&["/tmp", "/home/me/project"]),
            hidden: strings(&["/home/me/.local/state/pty-session"]),
        };
        let encoded = request.encode();
        let length = u32::from_le_bytes(encoded[..4].try_into().unwrap()) as usize;
        assert_eq!(length, encoded.len() - 4);
        assert_eq!(Request::decode(&encoded[4..]), Some(request));
    }

    #[test]
    fn malformed_requests_are_refused() {
        let request = Request {
            grace_ms: 0,
            cwd: CString::default(),
            argv: strings(&["cat"]),
            env: Vec::new(),
            sandbox: 0,
            network: false,
            writable: Vec::new(),
            hidden: Vec::new(),
        };
        let body = request.encode()[4..].to_vec();
        for cut in 0..body.len() {
            assert_eq!(Request::decode(&body[..cut]), None, "cut at {cut}");
        }
        let mut longer = body.clone();
        longer.push(0);
        assert_eq!(Request::decode(&longer), None);
        let no_program = Request {
            argv: Vec::new(),
            ..request
        };
        assert_eq!(Request::decode(&no_program.encode()[4..]), None);
        let mut bad_mode = body.clone();
        bad_mode[8] = 3;
        assert_eq!(Request::decode(&bad_mode), None);
        let mut nul = body;
        let at = nul.len() - 4 - 4 - 4 - 1; // inside "cat", before the two empty lists
        nul[at] = 0;
        assert_eq!(Request::decode(&nul), None);
    }
}
