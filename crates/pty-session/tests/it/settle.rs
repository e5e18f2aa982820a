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
async fn until_mode_ends_only_at_the_match_the_exit_or_the_timeout() {
    let (pty, owner) = service();
    // A pause longer than the quiet period, then input wait: neither ends it; the match does.
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("echo one; sleep 0.6; echo DONE; read x; read y; echo bye")
            .settle(Settle::Until)
            .until("^DONE$")
            .quiet(Duration::from_millis(100))
            .timeout(Duration::from_secs(20)),
    )
    .await;
    assert_eq!(
        (opened.settled_by, opened.initial_output.text.as_str()),
        (SettleReason::Match, "one\nDONE\n")
    );
    // Input wait with no match to come: the timeout ends it.
    let start = Instant::now();
    let sent = pty
        .send(
            &owner,
            &opened.session_id,
            SendRequest::new("")
                .settle(Settle::Until)
                .until("^NEVER$")
                .timeout(Duration::from_millis(800))
                .everything(),
        )
        .await
        .unwrap();
    assert_eq!(sent.settled_by, SettleReason::Timeout);
    assert!(start.elapsed() >= Duration::from_millis(800));
    // The exit ends it too (`read y` takes this line; the shell prints and ends).
    let sent = pty
        .send(
            &owner,
            &opened.session_id,
            SendRequest::new("y")
                .settle(Settle::Until)
                .timeout(Duration::from_secs(20)),
        )
        .await
        .unwrap();
    assert_eq!(sent.settled_by, SettleReason::Exit);
    assert!(sent.delta.text.contains("bye\n"), "{:?}", sent.delta.text);
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

/// Sends `data` with `until` and returns how it settled and what it showed.
async fn send_until(
    pty: &pty_session::PtyService,
    owner: &pty_session::Owner,
    id: &pty_session::SessionId,
    data: &str,
    until: &str,
) -> (SettleReason, String) {
    let sent = pty
        .send(
            owner,
            id,
            SendRequest::new(data)
                .submit(true)
                .until(until)
                .timeout(Duration::from_millis(20_000)),
        )
        .await
        .unwrap();
    (sent.settled_by, sent.delta.text + &sent.pending)
}

/// node awaiting a timer of seconds waits on the terminal with a timer: given `until`,
/// the call ends at the value, not at once by input with nothing.
#[tokio::test]
async fn until_outlasts_node_awaiting_a_timer() {
    require("node");
    let (pty, owner) = service();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("node --no-warnings -i").env("NODE_NO_READLINE", "1"),
    )
    .await;
    assert_eq!(opened.settled_by, SettleReason::Input, "{opened:?}");
    let id = &opened.session_id;
    let started = Instant::now();
    let (reason, shown) = send_until(
        &pty,
        &owner,
        id,
        "await new Promise(r => setTimeout(() => r(4500), 1500))",
        "^4500$",
    )
    .await;
    assert_eq!(reason, SettleReason::Match, "{shown}");
    assert!(started.elapsed() >= Duration::from_millis(1400), "{shown}");
    assert!(shown.lines().any(|line| line == "4500"), "{shown}");
    // Without `until`, the next step is one reply, as before.
    let sent = pty
        .send(&owner, id, SendRequest::new("6 * 7").submit(true))
        .await
        .unwrap();
    assert_eq!(sent.settled_by, SettleReason::Input, "{sent:?}");
    // node's prompt after the awaited value may come after this send's echo: `> 42`.
    assert!(
        sent.delta
            .text
            .lines()
            .any(|line| line.trim_start_matches("> ") == "42"),
        "{sent:?}"
    );
    pty.shutdown().await;
}

/// `until` does not match the echo of the command just typed: a shell's, python's.
#[tokio::test]
async fn until_does_not_match_the_echo_of_what_was_typed() {
    let (pty, owner) = service();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("bash --norc --noprofile -i").env("PS1", "$ "),
    )
    .await;
    let started = Instant::now();
    let (reason, shown) = send_until(
        &pty,
        &owner,
        &opened.session_id,
        "sleep 0.5 && echo DONE",
        "DONE",
    )
    .await;
    assert_eq!(reason, SettleReason::Match, "{shown}");
    assert!(started.elapsed() >= Duration::from_millis(400), "{shown}");
    assert!(shown.lines().any(|line| line == "DONE"), "{shown}");
    // Typed where nothing echoes, and printed by the program: its print is seen.
    let (reason, shown) = send_until(
        &pty,
        &owner,
        &opened.session_id,
        "read -rs -p 'pw: ' x; echo \"[$x]\"",
        "pw: $",
    )
    .await;
    assert_eq!(reason, SettleReason::Match, "{shown}");
    let (reason, shown) =
        send_until(&pty, &owner, &opened.session_id, "hunter2", r"\[hunter2\]").await;
    assert_eq!(reason, SettleReason::Match, "{shown}");
    let python = open(
        &pty,
        &owner,
        OpenRequest::new(format!("{} -q -i", python3())).env("PYTHON_BASIC_REPL", "1"),
    )
    .await;
    let started = Instant::now();
    let (reason, shown) = send_until(
        &pty,
        &owner,
        &python.session_id,
        "import time; time.sleep(0.8); print('xyzzy')",
        "xyzzy",
    )
    .await;
    assert_eq!(reason, SettleReason::Match, "{shown}");
    assert!(started.elapsed() >= Duration::from_millis(700), "{shown}");
    assert!(shown.lines().any(|line| line == "xyzzy"), "{shown}");
    pty.shutdown().await;
}

/// `until` on the prompt itself ends at the prompt after the command, never at the one
/// the send was made at, which its echo line begins with (the bench's `until` on a
/// prompt, an agent's `until: "\$ $"`).
#[tokio::test]
async fn until_does_not_match_the_prompt_the_send_was_made_at() {
    let (pty, owner) = service();
    let python = OpenRequest::new(format!("{} -q -i", python3())).env("PYTHON_BASIC_REPL", "1");
    let steps = [
        (bash(), "sleep 0.5; echo hi", r"^\$ $", "hi"),
        (
            python,
            "import time; time.sleep(0.5); print(6*7)",
            r"^>>> $",
            "42",
        ),
    ];
    for (request, data, until, answer) in steps {
        let session = open(&pty, &owner, request).await;
        let started = Instant::now();
        let (reason, shown) = send_until(&pty, &owner, &session.session_id, data, until).await;
        assert_eq!(reason, SettleReason::Match, "{shown}");
        assert!(started.elapsed() >= Duration::from_millis(400), "{shown}");
        assert!(shown.lines().any(|line| line == answer), "{shown}");
    }
    pty.shutdown().await;
}
