//! Helpers shared by the integration tests.

use pty_session::{CancellationToken, Config, OpenRequest, Opened, Owner, PtyService};

/// A service with default config but for a home of the tests' own ([`test_home`]) in
/// every session's environment, and one owner.
pub fn service() -> (PtyService, Owner) {
    let mut config = Config::default();
    let home = test_home()
        .to_str()
        .expect("a UTF-8 target path")
        .to_owned();
    config.default_env.insert("HOME".into(), home.clone());
    config.default_env.insert("XDG_CONFIG_HOME".into(), home);
    (PtyService::new(config), Owner::new("test"))
}

/// The home every program a test starts gets unless the test gives another
/// ([`pty_session_testkit::tests_home`]).
pub fn test_home() -> &'static std::path::Path {
    static HOME: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    HOME.get_or_init(|| pty_session_testkit::tests_home(env!("CARGO_TARGET_TMPDIR")))
}

/// Opens `request` and panics with the error if that fails.
pub async fn open(pty: &PtyService, owner: &Owner, request: OpenRequest) -> Opened {
    match pty.open(owner, request, &CancellationToken::new()).await {
        Ok(opened) => opened,
        Err(err) => panic!("open failed: {} {err}", err.code()),
    }
}

/// An interactive bash without rc files, with the prompt `$ `.
pub fn bash() -> OpenRequest {
    OpenRequest::new("bash --norc --noprofile -i").env("PS1", "$ ")
}

/// Opens `command` without settling, with `$F` naming `file` (where the command records
/// the pids of what it starts).
pub async fn open_recording(
    pty: &PtyService,
    owner: &Owner,
    command: impl Into<String>,
    file: &std::path::Path,
) -> Opened {
    let request = OpenRequest::new(command)
        .env("F", file.to_str().expect("utf-8 temp path"))
        .settle(pty_session::Settle::None);
    open(pty, owner, request).await
}

/// The real python3 interpreter: on these machines `python3` on PATH may be a pyenv shim,
/// a bash script that reads its pipes while it starts, which would blur REPL timings.
pub fn python3() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 must be installed for these tests");
    String::from_utf8(out.stdout)
        .expect("utf-8 path")
        .trim()
        .to_owned()
}

/// `request` with a home of its own, `home` (`HOME` and `XDG_CONFIG_HOME`): a real program
/// that a test runs reads none of the configuration of the user who runs the tests (an
/// htoprc, a toprc, a .gitconfig, a .nanorc, python's history) and writes none.
pub fn at_home(request: OpenRequest, home: &TempDir) -> OpenRequest {
    let home = home.0.to_str().expect("a UTF-8 temp path");
    request.env("HOME", home).env("XDG_CONFIG_HOME", home)
}

pub use pty_session_testkit::require;

/// The pids a shell command wrote, one per line, into `file`.
pub fn read_pids(file: &std::path::Path) -> Vec<i32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// The pids, as this process sees them, of the processes whose pids in the PID namespace
/// of process `member` (a sandboxed session's command) are `inner`: read from each
/// process's `NSpid` line, whose last number is its pid in its own namespace.
pub fn outside_pids(member: i32, inner: &[i32]) -> Vec<i32> {
    let namespace = |pid: i32| std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok();
    let ours = namespace(member).expect("the session's PID namespace");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if namespace(pid).as_ref() != Some(&ours) {
            continue;
        }
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let own = status
            .lines()
            .find_map(|line| line.strip_prefix("NSpid:"))
            .and_then(|ids| ids.split_whitespace().last()?.parse::<i32>().ok());
        if own.is_some_and(|own| inner.contains(&own)) {
            found.push(pid);
        }
    }
    found
}

/// A fresh empty directory under the system temp dir, removed when dropped (a
/// [`tempfile::TempDir`]; `.0` is its path).
pub struct TempDir(
    pub std::path::PathBuf,
    #[expect(dead_code, reason = "held for its drop, which removes the directory")]
    tempfile::TempDir,
);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        TempDir::under(std::env::temp_dir(), name)
    }

    /// A fresh empty directory under the system temp dir with a short path: `prefix` and
    /// six characters (a gpg-agent's socket path must fit in a `sockaddr_un`).
    pub fn short(prefix: &str) -> TempDir {
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .expect("create temp dir");
        TempDir(dir.path().to_owned(), dir)
    }

    /// A fresh empty directory under `base` (one a sandbox sees: not under `/tmp`, which
    /// is a sandbox's own).
    pub fn under(base: impl AsRef<std::path::Path>, name: &str) -> TempDir {
        let dir = tempfile::Builder::new()
            .prefix(&format!("pty-session-test-{name}-"))
            .tempdir_in(base)
            .expect("create temp dir");
        TempDir(dir.path().to_owned(), dir)
    }
}

/// The spawner that started the session whose command is `pid`: the command's parent is
/// its shim, a fork of the spawner. Found from the session, not by counting this process's
/// spawners, since other tests' services run in the same process under `cargo test`.
pub fn spawner_of(pid: i32) -> i32 {
    let shim = pty_session_testkit::parent(pid).expect("the command's shim");
    let spawner = pty_session_testkit::parent(shim).expect("the shim's spawner");
    assert_eq!(
        pty_session_testkit::parent(spawner),
        Some(std::process::id() as i32),
        "the spawner is a child of this process"
    );
    assert!(
        pty_session_testkit::children(std::process::id(), "pty-spawner").contains(&spawner),
        "{spawner} is a spawner"
    );
    spawner
}

pub use pty_session_testkit::{alive, eventually, eventually_async, in_own_process};
