//! Open, send, tail and close; the cursor, the budget, pending lines, env, cwd, echo.

use std::time::Duration;

use pty_session::{Config, ExitStatus, OpenRequest, PtyService, SendRequest, SettleReason, Status};

use crate::support::*;

#[tokio::test]
async fn echo_exits_and_its_output_is_delivered() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, OpenRequest::new("echo hello; echo world")).await;
    assert_eq!(opened.initial_output.text, "hello\nworld\n");
    assert_eq!(opened.settled_by, SettleReason::Exit);
    assert_eq!(opened.status, Status::Exited(ExitStatus::Code(0)));
    assert!(opened.pid > 0);
    assert!(pty.close(&owner, &opened.session_id).await.unwrap());
}

#[tokio::test]
async fn exit_code_and_signal_are_reported() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, OpenRequest::new("exit 3")).await;
    assert_eq!(opened.status, Status::Exited(ExitStatus::Code(3)));
    let opened = open(&pty, &owner, OpenRequest::new("kill -9 $$")).await;
    assert_eq!(opened.status, Status::Exited(ExitStatus::Signal(9)));
    assert_eq!(
        opened.status.exit().unwrap().signal_name().as_deref(),
        Some("SIGKILL")
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn cat_echoes_and_settles_by_input() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, OpenRequest::new("cat")).await;
    assert_eq!(opened.settled_by, SettleReason::Input, "{opened:?}");
    let sent = pty
        .send(&owner, &opened.session_id, SendRequest::new("hi"))
        .await
        .unwrap();
    assert_eq!(sent.delta.text, "hi\nhi\n");
    assert_eq!(sent.settled_by, SettleReason::Input);
    assert!(pty.close(&owner, &opened.session_id).await.unwrap());
    assert!(!pty.close(&owner, &opened.session_id).await.unwrap());
}

#[tokio::test]
async fn concatenated_replies_are_the_transcript_and_never_resend() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, OpenRequest::new("seq 1 5000; exec cat")).await;
    let mut transcript = opened.initial_output.text.clone();
    let mut skipped = opened.initial_output.skipped;
    // Small budgets: each tail takes the newest 200 and reports the rest as skipped, so
    // read with a large budget instead to get everything.
    loop {
        let tail = pty
            .tail(&owner, &opened.session_id, Some(100_000))
            .await
            .unwrap();
        if tail.output.lines == 0 {
            break;
        }
        skipped += tail.output.skipped;
        transcript.push_str(&tail.output.text);
    }
    let expected: String = (1..=5000).map(|n| format!("{n}\n")).collect();
    let got_lines = transcript.lines().count() as u64;
    assert_eq!(got_lines + skipped, 5000);
    assert!(
        expected.ends_with(&transcript),
        "delivered lines are the newest, in order"
    );
    // Nothing is ever delivered twice.
    let again = pty.tail(&owner, &opened.session_id, None).await.unwrap();
    assert_eq!(again.output.text, "");
    assert_eq!(again.total_lines, 5000);
    pty.shutdown().await;
}

#[tokio::test]
async fn whole_transcript_through_a_big_budget() {
    let mut config = Config::default();
    config.tail_lines = 10_000;
    let pty = PtyService::new(config);
    let owner = pty_session::Owner::new("t");
    let opened = open(&pty, &owner, OpenRequest::new("seq 1 5000")).await;
    let tail = pty.tail(&owner, &opened.session_id, None).await.unwrap();
    let transcript = opened.initial_output.text + &tail.output.text;
    let expected: String = (1..=5000).map(|n| format!("{n}\n")).collect();
    assert_eq!(transcript, expected);
    pty.shutdown().await;
}

#[tokio::test]
async fn over_budget_gives_the_newest_lines_with_skipped() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, OpenRequest::new("seq 1 1000; exec cat")).await;
    let out = &opened.initial_output;
    assert_eq!(out.lines, 200);
    assert!(out.truncated);
    assert_eq!(out.skipped, 800);
    assert!(
        out.text.starts_with("801\n") && out.text.ends_with("1000\n"),
        "{}",
        out.text
    );
    let tail = pty.tail(&owner, &opened.session_id, Some(5)).await.unwrap();
    assert_eq!(tail.output.lines, 0);
    pty.shutdown().await;
}

#[tokio::test]
async fn open_and_send_take_a_budget_of_lines() {
    let (pty, owner) = service();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("seq 1 1000; exec cat").lines(1000),
    )
    .await;
    let out = &opened.initial_output;
    assert_eq!((out.lines, out.truncated, out.skipped), (1000, false, 0));
    assert!(out.text.starts_with("1\n"), "{}", out.text);
    let id = &opened.session_id;
    let sent = pty
        .send(&owner, id, SendRequest::new("a").lines(1))
        .await
        .unwrap();
    assert_eq!(
        (sent.delta.text.as_str(), sent.delta.skipped),
        ("a\n", 1),
        "the echo and cat's copy: the budget keeps the newest"
    );
    for bad in [0, 100_001] {
        let err = pty
            .send(&owner, id, SendRequest::new("b").lines(bad))
            .await
            .unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT", "{err}");
        let err = pty
            .open(
                &owner,
                OpenRequest::new("true").lines(bad),
                &pty_session::CancellationToken::new(),
            )
            .await
            .unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT", "{err}");
    }
    pty.shutdown().await;
}

#[tokio::test]
async fn lines_that_fell_out_of_the_scrollback_are_skipped() {
    let mut config = Config::default();
    config.scrollback_lines = 100;
    let pty = PtyService::new(config);
    let owner = pty_session::Owner::new("t");
    let opened = open(&pty, &owner, OpenRequest::new("seq 1 1000")).await;
    let out = &opened.initial_output;
    assert_eq!((out.lines, out.truncated, out.skipped), (100, true, 900));
    assert!(out.text.starts_with("901\n"), "{}", out.text);
    let tail = pty.tail(&owner, &opened.session_id, None).await.unwrap();
    assert_eq!(
        (tail.line_begin, tail.total_lines, tail.output.lines),
        (900, 1000, 0)
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn a_prompt_is_pending_until_its_line_completes() {
    let (pty, owner) = service();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(r#"read -p "Password: " answer; echo "got $answer"; exec cat"#),
    )
    .await;
    assert_eq!(opened.pending, "Password: ");
    assert_eq!(opened.initial_output.text, "");
    assert_eq!(opened.settled_by, SettleReason::Input);
    let tail = pty.tail(&owner, &opened.session_id, None).await.unwrap();
    assert_eq!(
        (tail.pending.as_str(), tail.output.lines),
        ("Password: ", 0)
    );
    let sent = pty
        .send(&owner, &opened.session_id, SendRequest::new("s3cret"))
        .await
        .unwrap();
    assert_eq!(sent.delta.text, "Password: s3cret\ngot s3cret\n");
    assert_eq!(sent.pending, "");
    let tail = pty.tail(&owner, &opened.session_id, None).await.unwrap();
    assert_eq!(
        tail.output.text, "",
        "the completed prompt line is delivered once"
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn env_values_arrive_unchanged() {
    let (pty, owner) = service();
    let tricky = r#"a b "quoted" 'single' $HOME `date` \n ; | & *"#;
    let request =
        OpenRequest::new(r#"printf '%s\n' "$TRICKY" "$TERM" "$PAGER""#).env("TRICKY", tricky);
    let opened = open(&pty, &owner, request).await;
    assert_eq!(
        opened.initial_output.text,
        format!("{tricky}\nxterm-256color\ncat\n")
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn a_large_environment_arrives_whole() {
    // Ten values of 100,000 bytes: about 1 MB, several times what one write to the
    // spawner's socket takes, so the request goes in pieces.
    let (pty, owner) = service();
    let mut request = OpenRequest::new(r#"echo "${#BIG0} ${#BIG9} $BIG_LAST""#);
    for i in 0..10 {
        let value: String = (0..100_000)
            .map(|j| (b'a' + ((i + j) % 26) as u8) as char)
            .collect();
        request = request.env(format!("BIG{i}"), value);
    }
    let opened = open(&pty, &owner, request.env("BIG_LAST", "é=1")).await;
    assert_eq!(opened.initial_output.text, "100000 100000 é=1\n");
    pty.shutdown().await;
}

#[tokio::test]
async fn without_cwd_a_session_starts_in_the_services_directory_of_the_moment() {
    // The working directory is the process's: the test changes it in a process of its own,
    // where no other test runs.
    if !in_own_process(
        "basics::without_cwd_a_session_starts_in_the_services_directory_of_the_moment",
    ) {
        return;
    }
    let (pty, owner) = service();
    let first = open(&pty, &owner, OpenRequest::new("pwd")).await;
    let here = std::env::current_dir().unwrap();
    assert_eq!(first.initial_output.text, format!("{}\n", here.display()));
    let dir = TempDir::new("moved");
    std::env::set_current_dir(&dir.0).unwrap();
    let second = open(&pty, &owner, OpenRequest::new("pwd")).await;
    std::env::set_current_dir(&here).unwrap();
    assert_eq!(second.initial_output.text, format!("{}\n", dir.0.display()));
    pty.shutdown().await;
}

#[tokio::test]
async fn exec_backend_runs_without_a_shell() {
    let mut config = Config::default();
    config.backend_type = "exec".into();
    let pty = PtyService::new(config);
    let owner = pty_session::Owner::new("t");
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(r#"printf "%s|" "a b" '$HOME' "" c ''"#),
    )
    .await;
    assert_eq!(opened.pending, "a b|$HOME||c||", "empty words are words");
    let err = pty
        .open(
            &owner,
            OpenRequest::new("no-such-program-xyz"),
            &Default::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "SPAWN_FAILED", "{err}");
    // The message says what failed; the OS error is its source, said once.
    let cause = std::error::Error::source(&err).map(ToString::to_string);
    assert!(
        cause.is_some_and(|cause| cause.contains("No such file")),
        "{err:?}"
    );
    assert!(!err.to_string().contains("No such file"), "{err}");
    pty.shutdown().await;
}

#[tokio::test]
async fn cwd_window_and_echo() {
    let (pty, owner) = service();
    let dir = TempDir::new("cwd");
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("pwd; stty size").cwd(&dir.0).size(100, 30),
    )
    .await;
    let canonical = std::fs::canonicalize(&dir.0).unwrap();
    assert_eq!(
        opened.initial_output.text,
        format!("{}\n30 100\n", canonical.display())
    );
    let opened = open(&pty, &owner, OpenRequest::new("cat").echo(false)).await;
    let sent = pty
        .send(&owner, &opened.session_id, SendRequest::new("quiet"))
        .await
        .unwrap();
    assert_eq!(sent.delta.text, "quiet\n", "only cat's copy, no echo");
    let opened = open(&pty, &owner, OpenRequest::new("stty size")).await;
    assert_eq!(opened.initial_output.text, "40 120\n");
    pty.shutdown().await;
}

#[tokio::test]
async fn ctrl_c_interrupts_sleep_in_bash() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, bash()).await;
    assert_eq!(opened.pending, "$ ");
    let id = &opened.session_id;
    let sent = pty
        .send(
            &owner,
            id,
            SendRequest::new("sleep 100")
                .settle(pty_session::Settle::Quiet)
                .quiet(Duration::from_millis(200)),
        )
        .await
        .unwrap();
    assert_eq!(sent.settled_by, SettleReason::Quiet);
    let start = std::time::Instant::now();
    let sent = pty
        .send(&owner, id, SendRequest::new("\u{3}").submit(false))
        .await
        .unwrap();
    assert!(start.elapsed().as_secs() < 5);
    assert_eq!(sent.settled_by, SettleReason::Input);
    assert_eq!(sent.pending, "$ ");
    let sent = pty
        .send(&owner, id, SendRequest::new("echo after"))
        .await
        .unwrap();
    assert!(sent.delta.text.contains("after\n"), "{:?}", sent.delta.text);
    pty.shutdown().await;
}

#[tokio::test]
async fn python_repl_round_trip() {
    let (pty, owner) = service();
    let home = TempDir::new("python-home");
    let python = at_home(OpenRequest::new(format!("{} -q", python3())), &home);
    let opened = open(&pty, &owner, python).await;
    assert_eq!(
        (opened.pending.as_str(), opened.settled_by),
        (">>> ", SettleReason::Input)
    );
    let sent = pty
        .send(&owner, &opened.session_id, SendRequest::new("6*7"))
        .await
        .unwrap();
    assert_eq!(sent.delta.text, ">>> 6*7\n42\n", "{sent:?}");
    assert_eq!(
        (sent.pending.as_str(), sent.settled_by),
        (">>> ", SettleReason::Input)
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn a_program_waiting_for_a_cursor_report_gets_one() {
    let (pty, owner) = service();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(
            r#"bash -c 'stty -echo; printf "ab\e[6n"; IFS= read -r -d R pos; stty echo; echo; echo "pos=${pos#*[}"'"#,
        )
        .timeout(Duration::from_millis(3000)),
    )
    .await;
    assert_eq!(opened.settled_by, SettleReason::Exit, "{opened:?}");
    assert_eq!(opened.initial_output.text, "ab\npos=1;3\n");
}

#[tokio::test]
async fn the_alternate_screen_stays_out_of_the_scrollback() {
    let (pty, owner) = service();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(r#"echo before; printf '\e[?1049hFULL SCREEN\r\n'; read x; printf '\e[?1049l'; echo after; read y"#),
    )
    .await;
    assert!(opened.alt_screen);
    assert_eq!(opened.initial_output.text, "before\n");
    let sent = pty
        .send(&owner, &opened.session_id, SendRequest::new("q"))
        .await
        .unwrap();
    assert!(!sent.alt_screen);
    assert_eq!(
        sent.delta.text, "after\n",
        "the typed q was drawn on the alternate screen"
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn a_simple_command_is_the_session_process() {
    let (pty, owner) = service();
    let home = TempDir::new("python-home");
    let python = at_home(OpenRequest::new(format!("{} -q", python3())), &home);
    let opened = open(&pty, &owner, python).await;
    let comm = std::fs::read_to_string(format!("/proc/{}/comm", opened.pid)).unwrap();
    assert!(comm.starts_with("python"), "pid {} is {comm:?}", opened.pid);
    let id = &opened.session_id;
    // Ctrl-C is python's KeyboardInterrupt; the session lives on and exits cleanly.
    let sent = pty
        .send(&owner, id, SendRequest::new("\u{3}").submit(false))
        .await
        .unwrap();
    assert!(sent.delta.text.contains("KeyboardInterrupt"), "{sent:?}");
    let sent = pty
        .send(&owner, id, SendRequest::new("exit(5)"))
        .await
        .unwrap();
    assert_eq!(sent.status, Status::Exited(ExitStatus::Code(5)), "{sent:?}");
    pty.shutdown().await;
}
