//! Listing an owner's sessions, and the limits that count running sessions only.

use std::time::{Duration, SystemTime};

use pty_session::{Config, ExitStatus, OpenRequest, Owner, PtyService, Status};

use crate::support::*;

#[tokio::test]
async fn list_shows_every_session_of_the_owner_with_its_status() {
    let (pty, owner) = service();
    let dir = TempDir::new("list");
    let cat = open(&pty, &owner, OpenRequest::new("exec cat").cwd(&dir.0)).await;
    let done = open(&pty, &owner, OpenRequest::new("echo one; echo two; exit 3")).await;
    assert_eq!(done.status, Status::Exited(ExitStatus::Code(3)));
    let shell = open(&pty, &owner, bash()).await;
    pty.send(
        &owner,
        &shell.session_id,
        pty_session::SendRequest::new("echo hi").settle(pty_session::Settle::None),
    )
    .await
    .unwrap();
    let other = Owner::new("someone else");
    open(&pty, &other, OpenRequest::new("exec cat")).await;

    let list = pty.list(&owner);
    let ids: Vec<_> = list.iter().map(|s| s.id.clone()).collect();
    assert_eq!(
        ids,
        [
            cat.session_id.clone(),
            done.session_id.clone(),
            shell.session_id.clone()
        ],
        "the owner's, oldest first"
    );
    assert_eq!(
        (list[0].command.as_str(), list[0].status, list[0].pid),
        ("exec cat", Status::Running, cat.pid)
    );
    assert_eq!(list[0].cwd, dir.0);
    assert_eq!(list[1].status, Status::Exited(ExitStatus::Code(3)));
    assert_eq!(list[1].cwd, std::env::current_dir().unwrap());
    assert_eq!(list[2].status, Status::Running);
    let age = SystemTime::now()
        .duration_since(list[0].started_at)
        .unwrap();
    assert!(age < Duration::from_secs(60), "{age:?}");
    assert!(list[0].started_at <= list[1].started_at && list[1].started_at <= list[2].started_at);
    // bash writes the answer and its next prompt separately: wait for both.
    eventually(
        "the shell's reply and prompt arrive",
        Duration::from_secs(30),
        || {
            let shell = &pty.list(&owner)[2];
            shell.unread_lines >= 2 && shell.pending == "$ "
        },
    )
    .await;
    assert_eq!(pty.list(&owner)[2].pending, "$ ");
    let read = pty.tail(&owner, &shell.session_id, None).await.unwrap();
    assert_eq!(
        pty.list(&owner)[2].unread_lines,
        0,
        "{:?}",
        read.output.text
    );
    assert_eq!(pty.list(&other).len(), 1);
    pty.shutdown().await;
}

#[tokio::test]
async fn forty_exited_sessions_do_not_block_an_open_and_the_oldest_go_past_32() {
    let (pty, owner) = service();
    let mut ids = Vec::new();
    for i in 0..40 {
        let opened = open(&pty, &owner, OpenRequest::new(format!("echo run {i}"))).await;
        assert!(
            matches!(opened.status, Status::Exited(_)),
            "{:?}",
            opened.status
        );
        ids.push(opened.session_id);
    }
    let running = open(&pty, &owner, OpenRequest::new("exec cat")).await;
    let list = pty.list(&owner);
    let listed: Vec<_> = list.iter().map(|s| s.id.clone()).collect();
    let mut kept = ids[8..].to_vec();
    kept.push(running.session_id.clone());
    assert_eq!(
        listed, kept,
        "the 32 newest exited sessions and the running one"
    );
    for gone in &ids[..8] {
        let err = pty.tail(&owner, gone, None).await.unwrap_err();
        assert_eq!(err.code(), "UNKNOWN_SESSION");
    }
    let tail = pty
        .tail(&owner, &ids[8], pty_session::TailRequest::new().from(0))
        .await
        .unwrap();
    assert_eq!(
        tail.output.text, "run 8\n",
        "an exited session stays readable"
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn the_session_limit_counts_running_sessions_and_names_them() {
    let mut config = Config::default();
    config.max_sessions_per_owner = 2;
    config.max_exited_per_owner = 5;
    let pty = PtyService::new(config);
    let owner = Owner::new("test");
    for _ in 0..3 {
        open(&pty, &owner, OpenRequest::new("true")).await;
    }
    let first = open(&pty, &owner, OpenRequest::new("exec cat")).await;
    let second = open(
        &pty,
        &owner,
        OpenRequest::new("sleep 600").settle(pty_session::Settle::None),
    )
    .await;
    let err = pty
        .open(
            &owner,
            OpenRequest::new("exec cat"),
            &pty_session::CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "SESSION_LIMIT");
    let message = err.to_string();
    assert!(
        message.contains(&format!(
            "{} (exec cat), {} (sleep 600)",
            first.session_id, second.session_id
        )),
        "{message}"
    );
    assert_eq!(pty.list(&owner).len(), 5);
    pty.shutdown().await;
}
