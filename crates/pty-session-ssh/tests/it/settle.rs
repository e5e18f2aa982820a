//! Plain `ssh` on a pty-session session, as an agent using the tools runs it, without this
//! crate's driver (issue 15): the client sleeps in poll on the terminal *and* its socket,
//! so it may be waiting for either, and a settle must end on quiet, never on input.

use std::time::Instant;

use pty_session::{
    OpenRequest, Opened, Owner, PtyService, SendRequest, Sent, Settle, SettleReason, quote_word,
};

use crate::support::*;

/// The remote command: two seconds of work, then a line.
const SLOW_COMMAND: &str = "sleep 2; echo done";

/// Opens plain `ssh` to `sshd` as the test account with its key, and waits for the login
/// shell's prompt (a quiet settle with `until`, so that the set-up does not depend on
/// input wait).
async fn ssh_shell(sshd: &Sshd, pty: &PtyService, owner: &Owner) -> Opened {
    sshd.trust_host_key();
    let path = |name: &str| quote_word(sshd.dir.join(name).to_str().unwrap()).into_owned();
    let command = format!(
        "exec ssh -F /dev/null -tt -p {port} -i {key} -o IdentitiesOnly=yes \
         -o IdentityAgent=none -o BatchMode=yes -o StrictHostKeyChecking=yes \
         -o UserKnownHostsFile={known_hosts} -o GlobalKnownHostsFile=/dev/null \
         -l {USER} 127.0.0.1",
        port = sshd.port,
        key = path("id_ed25519"),
        known_hosts = path("known_hosts"),
    );
    let request = OpenRequest::new(command)
        .settle(Settle::Quiet)
        .quiet_ms(20_000)
        .until(r"\$ $")
        .timeout_ms(20_000);
    let opened = match pty.open(owner, request, &Default::default()).await {
        Ok(opened) => opened,
        Err(err) => panic!("open ssh: {err}"),
    };
    assert_eq!(
        opened.settled_by,
        SettleReason::Match,
        "no shell prompt: {:?} {:?}\nsshd's log:\n{}",
        opened.initial_output.text,
        opened.pending,
        sshd.log().await
    );
    opened
}

/// What a reply showed, for failure messages.
fn shows(sent: &Sent, start: Instant) -> String {
    format!(
        "settled by {} after {:?}; lines {:?}; pending {:?}",
        sent.settled_by,
        start.elapsed(),
        sent.delta.text,
        sent.pending
    )
}

/// Whether the reply has the remote command's own line `done` (not the echoed command).
fn has_done(sent: &Sent) -> bool {
    sent.delta
        .text
        .lines()
        .any(|line| line.trim_end() == "done")
}

#[tokio::test]
async fn ssh_with_the_default_settle_ends_on_quiet_never_on_input() {
    let sshd = Sshd::start().await;
    let (pty, owner) = (service(), Owner::new("t"));
    let opened = ssh_shell(&sshd, &pty, &owner).await;
    let start = Instant::now();
    let sent = pty
        .send(&owner, &opened.session_id, SendRequest::new(SLOW_COMMAND))
        .await
        .unwrap();
    assert_eq!(
        sent.settled_by,
        SettleReason::Quiet,
        "{}",
        shows(&sent, start)
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn ssh_with_a_long_quiet_period_returns_the_output_in_one_send() {
    let sshd = Sshd::start().await;
    let (pty, owner) = (service(), Owner::new("t"));
    let opened = ssh_shell(&sshd, &pty, &owner).await;
    let start = Instant::now();
    let request = SendRequest::new(SLOW_COMMAND)
        .quiet_ms(3_000)
        .timeout_ms(30_000);
    let sent = pty.send(&owner, &opened.session_id, request).await.unwrap();
    let seen = shows(&sent, start);
    assert_eq!(sent.settled_by, SettleReason::Quiet, "{seen}");
    assert!(has_done(&sent), "{seen}");
    pty.shutdown().await;
}

#[tokio::test]
async fn ssh_with_until_settles_by_match() {
    let sshd = Sshd::start().await;
    let (pty, owner) = (service(), Owner::new("t"));
    let opened = ssh_shell(&sshd, &pty, &owner).await;
    let start = Instant::now();
    // `^done` and not `done`: the echoed command line holds `done` too.
    let request = SendRequest::new(SLOW_COMMAND)
        .until("^done")
        .timeout_ms(30_000);
    let sent = pty.send(&owner, &opened.session_id, request).await.unwrap();
    let seen = shows(&sent, start);
    assert_eq!(sent.settled_by, SettleReason::Match, "{seen}");
    assert!(has_done(&sent), "{seen}");
    pty.shutdown().await;
}
