//! What linking the library does to a binary: its constructor leaves the binary's own
//! `main` alone, unless the service started the binary as its spawner.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::time::Duration;

use pty_session_testkit::{eventually_blocking, waiting_for_input};

/// This test binary links the library and has a `main` of its own (libtest's), like any
/// consumer's binary: started normally, its `main` runs and lists the tests.
#[test]
fn a_binary_that_links_the_library_runs_its_own_main() {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(&exe)
        .arg("--list")
        .env_remove("PTY_SESSION_SPAWNER")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}: {stdout}", out.status);
    assert!(
        stdout.contains("linking::a_binary_that_links_the_library_runs_its_own_main: test"),
        "main listed the tests: {stdout}"
    );
}

/// Started with the marker, as the service starts it, the same binary never reaches its
/// `main`: it is a spawner, and it exits once its socket hangs up.
#[test]
fn with_the_marker_the_binary_is_a_spawner_and_exits_with_its_socket() {
    let exe = std::env::current_exe().unwrap();
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let mut child = Reaped(
        Command::new(&exe)
            .arg("--list")
            .env("PTY_SESSION_SPAWNER", "1")
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // While the socket is open, the spawner waits for requests: it waits to read it
    // (had it taken the marker for nothing, it would have run main and exited).
    eventually_blocking(
        "the spawner to read its socket",
        Duration::from_secs(10),
        || waiting_for_input(child.0.id()),
    );
    assert!(
        child.0.try_wait().unwrap().is_none(),
        "the spawner serves while its socket is open"
    );
    drop(ours);
    let mut status = None;
    eventually_blocking(
        "the spawner to exit after its socket hung up",
        Duration::from_secs(10),
        || {
            status = child.0.try_wait().unwrap();
            status.is_some()
        },
    );
    let status = status.unwrap();
    let mut stdout = Vec::new();
    child
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    assert!(status.success(), "{status}");
    assert!(
        stdout.is_empty(),
        "main did not run: {:?}",
        String::from_utf8_lossy(&stdout)
    );
}

/// A child that is killed and reaped however the test ends.
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `Config::spawner` names the executable the service starts as its spawner, for a host
/// whose own executable does not link the library (node): here a second name of this
/// test binary, which `/proc/<spawner>/exe` then shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_spawner_names_the_spawner_executable() {
    use pty_session::{CancellationToken, Config, OpenRequest, Owner, PtyService, SendRequest};

    let exe = std::env::current_exe().unwrap();
    let other = exe.with_file_name(format!("other-spawner-{}", std::process::id()));
    let _ = std::fs::remove_file(&other);
    std::fs::hard_link(&exe, &other).unwrap();
    let _removed = Removed(other.clone());
    let mut config = Config::default();
    config.spawner = Some(other.clone());
    let pty = PtyService::try_new(config).unwrap();
    let owner = Owner::new("test");
    let opened = pty
        .open(&owner, OpenRequest::new("cat"), &CancellationToken::new())
        .await
        .unwrap();
    let spawner = crate::support::spawner_of(opened.pid as i32);
    assert_eq!(
        std::fs::read_link(format!("/proc/{spawner}/exe")).unwrap(),
        other,
        "the spawner runs the named executable"
    );
    let sent = pty
        .send(&owner, &opened.session_id, SendRequest::new("hi"))
        .await
        .unwrap();
    assert_eq!(sent.delta.text, "hi\nhi\n");
    pty.shutdown().await;
}

/// A spawner that is not an absolute path to a file is refused when the service is made,
/// naming the field, rather than at the first open.
#[test]
fn config_spawner_must_be_an_absolute_path_to_a_file() {
    use pty_session::{Config, PtyService};

    for bad in ["relative/spawner", "/no/such/spawner", "/"] {
        let mut config = Config::default();
        config.spawner = Some(bad.into());
        let err = PtyService::try_new(config).err().expect("refused");
        assert_eq!(err.code(), "INVALID_ARGUMENT", "{bad}: {err}");
        assert!(err.to_string().contains("spawner"), "{bad}: {err}");
    }
}

/// Removes a file however the test ends.
struct Removed(std::path::PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
