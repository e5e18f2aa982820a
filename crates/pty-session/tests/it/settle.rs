//! Each way a settle ends, and how fast input wait answers real REPLs.

use std::time::{Duration, Instant};

use pty_session::{OpenRequest, SendRequest, Settle, SettleReason};

use crate::support::*;

#[tokio::test]
async fn settle_by_exit() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, OpenRequest::new("sleep 0.2; echo done")).await;
    assert_eq!(
        (opened.settled_by, opened.initial_output.text.as_str()),
        (SettleReason::Exit, "done\n")
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn settle_by_input_after_a_pause_in_output() {
    let (pty, owner) = service();
    // Output, a pause longer than the quiet period, more output, then a read.
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("echo one; sleep 0.5; echo two; read x"),
    )
    .await;
    assert_eq!(opened.settled_by, SettleReason::Input);
    assert_eq!(
        opened.initial_output.text, "one\ntwo\n",
        "quiet does not end an auto settle"
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn settle_by_match_on_a_line_and_on_pending() {
    let (pty, owner) = service();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("echo start; echo READY; sleep 30").until("^READY$"),
    )
    .await;
    assert_eq!(opened.settled_by, SettleReason::Match);
    assert_eq!(opened.initial_output.text, "start\nREADY\n");
    let id = &opened.session_id;
    let _ = pty.close(&owner, id).await;

    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("printf 'login: '; sleep 30").until("login: $"),
    )
    .await;
    assert_eq!(
        (opened.settled_by, opened.pending.as_str()),
        (SettleReason::Match, "login: ")
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn until_ignores_output_from_before_the_send() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, OpenRequest::new("echo MARK; exec cat")).await;
    let sent = pty
        .send(
            &owner,
            &opened.session_id,
            SendRequest::new("x")
                .until("MARK")
                .timeout(Duration::from_millis(1000)),
        )
        .await
        .unwrap();
    assert_ne!(sent.settled_by, SettleReason::Match);
    pty.shutdown().await;
}

#[tokio::test]
async fn settle_by_quiet_in_quiet_mode() {
    let (pty, owner) = service();
    let start = Instant::now();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("echo a; sleep 30")
            .settle(Settle::Quiet)
            .quiet(Duration::from_millis(200)),
    )
    .await;
    assert_eq!(opened.settled_by, SettleReason::Quiet);
    assert!(start.elapsed() < Duration::from_secs(5));
    pty.shutdown().await;
}

#[tokio::test]
async fn settle_by_timeout() {
    let (pty, owner) = service();
    let start = Instant::now();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("sleep 30").timeout(Duration::from_millis(300)),
    )
    .await;
    assert_eq!(opened.settled_by, SettleReason::Timeout);
    let elapsed = start.elapsed();
    assert!(
        elapsed >= Duration::from_millis(300) && elapsed < Duration::from_secs(5),
        "{elapsed:?}"
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn settle_none_returns_at_once() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, OpenRequest::new("cat")).await;
    let start = Instant::now();
    let sent = pty
        .send(
            &owner,
            &opened.session_id,
            SendRequest::new("sleep-less").settle(Settle::None),
        )
        .await
        .unwrap();
    assert_eq!(sent.settled_by, SettleReason::None);
    assert!(start.elapsed() < Duration::from_secs(1));
    pty.shutdown().await;
}

#[tokio::test]
async fn partial_canonical_line_settles_by_input() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, OpenRequest::new("cat")).await;
    let sent = pty
        .send(
            &owner,
            &opened.session_id,
            SendRequest::new("abc").submit(false),
        )
        .await
        .unwrap();
    assert_eq!(
        (sent.settled_by, sent.pending.as_str()),
        (SettleReason::Input, "abc")
    );
    pty.shutdown().await;
}

/// The REPLs of docs/tools.md settle by input wait right after their prompt; the times are
/// printed (run with `--nocapture`), and only a generous bound is asserted.
#[tokio::test]
async fn repls_settle_by_input_wait() {
    let (pty, owner) = service();
    let python = python3();
    let mut cases = vec![
        (format!("{python} -q"), "6*7", "42"),
        (
            "bash --norc --noprofile -i".to_owned(),
            "echo $((6*7))",
            "42",
        ),
        ("cat".to_owned(), "42", "42"),
    ];
    for (tool, command) in [("node", "node"), ("gdb", "gdb -q --nx -i=mi2")] {
        if which(tool) {
            let (data, answer) = if tool == "node" {
                ("6*7", "42")
            } else {
                ("-data-evaluate-expression 6*7", "42")
            };
            cases.push((command.to_owned(), data, answer));
        } else {
            eprintln!("NOTE: {tool} is not installed; its input-wait settle is not measured");
        }
    }
    let home = TempDir::new("repls-home");
    for (command, data, answer) in cases {
        let opened = open(
            &pty,
            &owner,
            at_home(OpenRequest::new(&command), &home)
                .env("PS1", "$ ")
                .timeout(Duration::from_millis(20_000)),
        )
        .await;
        assert_eq!(
            opened.settled_by,
            SettleReason::Input,
            "{command}: {opened:?}"
        );
        let start = Instant::now();
        let sent = pty
            .send(&owner, &opened.session_id, SendRequest::new(data))
            .await
            .unwrap();
        let took = start.elapsed();
        assert_eq!(sent.settled_by, SettleReason::Input, "{command}: {sent:?}");
        assert!(sent.delta.text.contains(answer), "{command}: {sent:?}");
        assert!(took < Duration::from_secs(3), "{command} took {took:?}");
        eprintln!(
            "input-wait settle: {command:40} {:>8.2} ms",
            took.as_secs_f64() * 1000.0
        );
        pty.close(&owner, &opened.session_id).await.unwrap();
    }
}

fn which(tool: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|out| out.status.success())
}

#[tokio::test]
async fn a_pipe_reader_is_not_waiting_for_the_user() {
    let (pty, owner) = service();
    // cat sleeps in read(2) on a pipe, sleep in nanosleep: nobody waits for the terminal.
    let opened = open(&pty, &owner, OpenRequest::new("sleep 0.5 | cat; echo done")).await;
    assert_eq!(opened.settled_by, SettleReason::Exit, "{opened:?}");
    assert_eq!(opened.initial_output.text, "done\n");
}
