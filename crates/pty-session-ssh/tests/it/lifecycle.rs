//! The end of a connection: sshd killed mid-session, and close.

use std::time::Duration;

use pty_session::{ExitStatus, Owner};
use pty_session_ssh::{Error, Ssh};

use crate::support::*;

#[tokio::test]
async fn sshd_killed_mid_session_is_a_typed_error_on_the_next_call() {
    let mut sshd = Sshd::start().await;
    let pty = service();
    let owner = Owner::new("t");
    let mut ssh = Ssh::connect(&pty, owner.clone(), sshd.key_options())
        .await
        .unwrap();
    assert_eq!(ssh.run("echo up").await.unwrap().output, "up\n");
    let (ssh_pid, sshd_pid) = (ssh.pid(), sshd.pid);

    // Kill sshd and the connection's processes with it, with SIGKILL.
    let connection = children(sshd_pid);
    assert!(!connection.is_empty(), "sshd forked no connection process");
    sshd.kill().await;
    assert!(!alive(sshd_pid));
    assert!(connection.iter().all(|&pid| !alive(pid)));

    let err = ssh.run("echo down").await.unwrap_err();
    let Error::Disconnected { status, message } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*status, Some(ExitStatus::Code(255)), "{err}");
    assert_eq!(message, "Connection to 127.0.0.1 closed by remote host.");
    // Every later call fails the same way, and no local ssh is left.
    let again = ssh.run("echo again").await.unwrap_err();
    assert!(
        matches!(&again, Error::Disconnected { status: s, message: m } if s == status && m == message),
        "{again:?}"
    );
    assert!(!alive(ssh_pid));
    assert!(pty.sessions(&owner).is_empty());
    ssh.close().await.unwrap();
}

#[tokio::test]
async fn a_server_that_stops_answering_is_a_disconnect_once_keepalives_fail() {
    let sshd = Sshd::start().await;
    let pty = service();
    let options = sshd
        .key_options()
        .option("ServerAliveInterval=1")
        .option("ServerAliveCountMax=1");
    let mut ssh = Ssh::connect(&pty, Owner::new("t"), options).await.unwrap();
    assert_eq!(ssh.run("echo up").await.unwrap().output, "up\n");
    // Nothing answers any more, and nothing closes the connection either.
    sshd.freeze();
    let err = ssh
        .run_with("echo lost", "", Duration::from_secs(20))
        .await
        .unwrap_err();
    let Error::Disconnected { status, message } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*status, Some(ExitStatus::Code(255)), "{err}");
    assert!(message.contains("not responding"), "{message}");
    assert!(!alive(ssh.pid()));
}

#[tokio::test]
async fn close_leaves_no_local_ssh_process() {
    let sshd = Sshd::start().await;
    let pty = service();
    let owner = Owner::new("t");
    let mut ssh = Ssh::connect(&pty, owner.clone(), sshd.key_options())
        .await
        .unwrap();
    // Something running remotely does not keep anything alive locally.
    ssh.run_with("sleep 60 & echo started", "", Duration::from_secs(10))
        .await
        .unwrap();
    let pid = ssh.pid();
    assert!(alive(pid));
    ssh.close().await.unwrap();
    assert!(!alive(pid), "ssh {pid} outlived close");
    assert!(pty.sessions(&owner).is_empty());

    // Dropped without close, it goes too.
    let ssh = Ssh::connect(&pty, owner.clone(), sshd.key_options())
        .await
        .unwrap();
    let pid = ssh.pid();
    drop(ssh);
    eventually(
        "the dropped connection's ssh to end",
        Duration::from_secs(10),
        || !alive(pid),
    )
    .await;
}
