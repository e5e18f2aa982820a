//! Helpers that the workspace's tests and its benchmark share: whether a process is still
//! alive or waiting for input, a process's parent and children by name, waiting until a
//! condition holds (in a runtime, with a condition that awaits, or on a plain thread),
//! running a test in a process of its own, whether the heavy tests run, the tests' home,
//! a required program, a private GNUPGHOME; with the feature `sshd`, a local OpenSSH
//! server (the `sshd` module). Not published.

use std::time::{Duration, Instant};

#[cfg(feature = "sshd")]
pub mod sshd;

/// Whether process `pid` exists and runs: a zombie (or a dead task) counts as gone.
///
/// ```
/// assert!(pty_session_testkit::alive(std::process::id()));
/// assert!(!pty_session_testkit::alive(-1));
/// ```
pub fn alive(pid: impl Into<i64>) -> bool {
    let pid = pid.into();
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The command name is in parentheses and may hold anything; the state follows.
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|rest| rest.trim_start().chars().next());
            !matches!(state, Some('Z' | 'X') | None)
        }
        Err(_) => false,
    }
}

/// The parent of process `pid`, if it exists.
///
/// ```
/// let me = std::process::id() as i32;
/// assert_eq!(pty_session_testkit::parent(me), Some(std::os::unix::process::parent_id() as i32));
/// ```
pub fn parent(pid: impl Into<i64>) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.into())).ok()?;
    // `pid (comm) state ppid ...`; the name may hold anything, so split after it.
    let close = stat.rfind(')')?;
    stat[close + 1..].split_whitespace().nth(1)?.parse().ok()
}

/// The environment variable that marks a test binary started by [`in_own_process`].
const OWN_PROCESS: &str = "PTY_SESSION_TEST_OWN_PROCESS";

/// Runs the test named `test` (its full path in the test binary, e.g.
/// `"kill::dropping_the_service_kills_its_sessions"`) in a process of its own, for a test
/// that measures or changes something process-wide (peak memory, the working directory,
/// every child of the process). `cargo test` runs all the tests of a binary as threads of
/// one process; nextest runs each in its own, and this works the same under both.
///
/// Returns true in the process that is to run the test's body. Elsewhere it starts the
/// test binary again with only this test, waits for it, panics with its output if it
/// failed or did not run exactly that one test, and returns false:
///
/// ```no_run
/// #[test]
/// fn peak_memory_stays_low() {
///     if !pty_session_testkit::in_own_process("peak_memory_stays_low") {
///         return;
///     }
///     // ... the body, alone in its process
/// }
/// ```
pub fn in_own_process(test: &str) -> bool {
    if std::env::var(OWN_PROCESS).is_ok_and(|marked| marked == test) {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = std::process::Command::new(exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(OWN_PROCESS, test)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("start the test binary again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{test} in its own process: {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    // Shows what the run printed (measurements, for one), as the test would have.
    eprint!("{stderr}");
    false
}

/// The variable that turns the heavy tests on: set to `1`, as CI does.
pub const HEAVY_TESTS: &str = "PTY_SESSION_HEAVY_TESTS";

/// Whether a heavy test (a flood of a gigabyte, the soak, thousands of connections) is to
/// run: only when [`HEAVY_TESTS`] is `1`. Otherwise it says on stderr that `test` was left
/// out and how to run it, and the test returns without checking anything.
///
/// ```
/// fn a_gigabyte_flood() {
///     if !pty_session_testkit::heavy("a_gigabyte_flood") {
///         return;
///     }
///     // ... the body
/// }
/// ```
pub fn heavy(test: &str) -> bool {
    let on = std::env::var(HEAVY_TESTS).is_ok_and(|value| value == "1");
    if !on {
        eprintln!("{test}: a heavy test, left out; set {HEAVY_TESTS}=1 to run it");
    }
    on
}

/// The home every program a test starts gets unless the test gives another: `home` under
/// `tmpdir`, cargo's temporary directory for tests (`env!("CARGO_TARGET_TMPDIR")` in an
/// integration test), made if need be. No program a test starts then reads the
/// configuration of the user who runs the tests (a .bashrc, an htoprc, a .gitconfig,
/// python's history) or writes into their home.
///
/// ```
/// let tmp = tempfile::tempdir().unwrap();
/// let home = pty_session_testkit::tests_home(tmp.path());
/// assert!(home.is_dir() && home.starts_with(tmp.path()));
/// ```
pub fn tests_home(tmpdir: impl AsRef<std::path::Path>) -> std::path::PathBuf {
    let home = tmpdir.as_ref().join("home");
    std::fs::create_dir_all(&home).expect("create the tests' home");
    home
}

/// Fails the test, saying what to install, when `program` is not on PATH: a test of a
/// real program never passes by skipping it.
///
/// ```
/// pty_session_testkit::require("sh");
/// ```
pub fn require(program: &str) {
    let found = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(
        found,
        "{program} must be installed for this test (.ci/run installs it)"
    );
}

/// A private GNUPGHOME in `home` (`home/g`, mode 0700) whose agent asks for passphrases
/// through pinentry-curses on the terminal; `home` should be short, since gpg-agent's
/// socket path must fit in a `sockaddr_un`.
pub fn gnupg_home(home: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let gnupg = home.join("g");
    std::fs::create_dir_all(&gnupg).expect("make the GNUPGHOME");
    std::fs::set_permissions(&gnupg, std::fs::Permissions::from_mode(0o700))
        .expect("make the GNUPGHOME private");
    std::fs::write(
        gnupg.join("gpg-agent.conf"),
        "pinentry-program /usr/bin/pinentry-curses\n",
    )
    .expect("write gpg-agent.conf");
    gnupg
}

/// The live children of `parent` whose command name (`/proc/<pid>/comm`) is `name`.
///
/// ```
/// let me = std::process::id();
/// assert!(pty_session_testkit::children(me, "no-such-name").is_empty());
/// ```
pub fn children(parent: impl Into<i64>, name: &str) -> Vec<i32> {
    let parent = parent.into().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // `pid (comm) state ppid ...`; the name may hold anything, so split around it.
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                return false;
            };
            let ppid = stat[close + 1..].split_whitespace().nth(1);
            &stat[open + 1..close] == name && ppid == Some(parent.as_str()) && alive(pid)
        })
        .collect()
}

/// The one spare of the service's spawner `spawner`, once it is there: the spawner forks a
/// new spare after each open, in its own time, so right after an open there may be none
/// yet. Panics if none comes within 5 s, or if there are two.
pub async fn spare_of(spawner: i32) -> i32 {
    let mut spares = Vec::new();
    eventually("the spawner's spare", Duration::from_secs(5), || {
        spares = children(spawner, "pty-spawner");
        !spares.is_empty()
    })
    .await;
    let [spare] = spares[..] else {
        panic!("one spare expected, found {spares:?}")
    };
    spare
}

/// How often the `eventually` helpers look again.
const POLL: Duration = Duration::from_millis(10);

/// Polls `f` every 10 ms until it is true; panics naming `what` once `deadline` passed.
/// For a condition that must await (a call to a server, a read), see
/// [`eventually_async`]; outside a runtime, [`eventually_blocking`].
pub async fn eventually(what: &str, deadline: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        if start.elapsed() > deadline {
            panic!("timed out after {deadline:?} waiting for {what}");
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Polls the future that `f` makes every 10 ms until it yields true; panics naming `what`
/// once `deadline` passed. The future owns what it needs (`async move`); what it learns
/// along the way goes into a `Cell` or `RefCell` the test reads afterwards.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use std::time::Duration;
/// let tries = std::cell::Cell::new(0);
/// pty_session_testkit::eventually_async("a third try", Duration::from_secs(5), || async {
///     tries.set(tries.get() + 1);
///     tries.get() == 3
/// })
/// .await;
/// # });
/// ```
pub async fn eventually_async<F, Fut>(what: &str, deadline: Duration, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while !f().await {
        if start.elapsed() > deadline {
            panic!("timed out after {deadline:?} waiting for {what}");
        }
        tokio::time::sleep(POLL).await;
    }
}

/// [`eventually`] for a thread outside any runtime: sleeps between the looks.
pub fn eventually_blocking(what: &str, deadline: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        if start.elapsed() > deadline {
            panic!("timed out after {deadline:?} waiting for {what}");
        }
        std::thread::sleep(POLL);
    }
}

/// Whether process `pid` (its main thread) is blocked waiting for input: asleep in a read
/// (`read`, `readv`, `pread64`, `recvfrom`, `recvmsg`) or in a wait for a descriptor to be
/// readable (`poll`, `ppoll`, `select`, `pselect6`, `epoll_wait`, `epoll_pwait`), from
/// `/proc/<pid>/syscall`. For a test that must act once a program waits for its input,
/// not a fixed time after starting it. False for a process that is gone or that this user
/// may not inspect.
///
/// ```
/// use std::process::{Command, Stdio};
/// use std::time::Duration;
/// use pty_session_testkit::{eventually_blocking, waiting_for_input};
/// let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
/// let mut cat = Command::new("cat").stdin(Stdio::piped()).spawn().unwrap();
/// eventually_blocking("cat to read", Duration::from_secs(30), || waiting_for_input(cat.id()));
/// assert!(!waiting_for_input(sleeper.id()), "sleep sleeps, it does not read");
/// for child in [&mut sleeper, &mut cat] {
///     child.kill().unwrap();
///     child.wait().unwrap();
/// }
/// assert!(!waiting_for_input(cat.id()), "a reaped process reads nothing");
/// ```
pub fn waiting_for_input(pid: impl Into<i64>) -> bool {
    let pid = pid.into();
    let Ok(syscall) = std::fs::read_to_string(format!("/proc/{pid}/syscall")) else {
        return false;
    };
    // `running` while on a CPU; else the number of the call it sleeps in, then its
    // arguments.
    let number = syscall
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok());
    let waits = [
        libc::SYS_read,
        libc::SYS_readv,
        libc::SYS_pread64,
        libc::SYS_recvfrom,
        libc::SYS_recvmsg,
        libc::SYS_ppoll,
        libc::SYS_pselect6,
        libc::SYS_epoll_pwait,
        // The calls that newer architectures (aarch64) have only in the forms above.
        #[cfg(target_arch = "x86_64")]
        libc::SYS_poll,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_select,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_epoll_wait,
    ];
    number.is_some_and(|n: i64| waits.contains(&n)) && alive(pid)
}
