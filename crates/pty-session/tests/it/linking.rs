//! What linking the library does to a binary: its constructor leaves the binary's own
//! `main` alone, unless the service started the binary as its spawner.

use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    let mut child = Command::new(&exe)
        .arg("--list")
        .env("PTY_SESSION_SPAWNER", "1")
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // While the socket is open, the spawner waits for requests.
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the spawner serves while its socket is open"
    );
    drop(ours);
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("the spawner did not exit after its socket hung up");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out = child.wait_with_output().unwrap();
    assert!(status.success(), "{status}");
    assert!(
        out.stdout.is_empty(),
        "main did not run: {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
}
