//! Bad input gets its error code, and touches nothing else.

use std::time::{Duration, Instant};

use pty_session::{CancellationToken, OpenRequest, SendRequest, Settle};

use crate::support::*;

#[tokio::test]
async fn invalid_open_arguments() {
    let (pty, owner) = service();
    let dir = TempDir::new("errs");
    let file = dir.0.join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let cases = [
        OpenRequest::new(""),
        OpenRequest::new("   "),
        OpenRequest::new("true").cwd("/no/such/dir"),
        OpenRequest::new("true").cwd(&file),
        OpenRequest::new("true").env("A=B", "x"),
        OpenRequest::new("true").env("", "x"),
        OpenRequest::new("true").cols(0),
        OpenRequest::new("true").rows(5000),
        OpenRequest::new("true").timeout(Duration::from_millis(600_001)),
        OpenRequest::new("true").quiet(Duration::from_millis(0)),
        OpenRequest::new("true").until("("),
    ];
    for request in cases {
        let err = pty
            .open(&owner, request.clone(), &CancellationToken::new())
            .await
            .unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT", "{request:?}: {err}");
    }
    assert!(pty.sessions(&owner).is_empty());
}

#[tokio::test]
async fn invalid_send_and_tail_arguments() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, OpenRequest::new("cat")).await;
    let id = &opened.session_id;
    let huge = "x".repeat(1024 * 1024 + 1);
    for request in [SendRequest::new(huge), SendRequest::new("x").until("[")] {
        let err = pty.send(&owner, id, request).await.unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT", "{err}");
    }
    for lines in [0, 100_001] {
        let err = pty.tail(&owner, id, Some(lines)).await.unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT", "{err}");
    }
    let sent = pty
        .send(&owner, id, SendRequest::new("fine"))
        .await
        .unwrap();
    assert_eq!(sent.delta.text, "fine\nfine\n");
    pty.shutdown().await;
}

#[tokio::test]
async fn a_program_that_never_reads_gets_write_timeout_and_others_keep_answering() {
    let (pty, owner) = service();
    let dir = TempDir::new("stuck");
    let go = dir.0.join("go");
    // The program reads nothing until the test creates `go`, so its open settles by the
    // timeout, not by input wait; then it becomes `cat`, which reads.
    let stuck = open(
        &pty,
        &owner,
        OpenRequest::new(r#"while [ ! -e "$GO" ]; do sleep 0.05; done; exec cat >/dev/null"#)
            .env("GO", go.to_str().unwrap())
            .timeout(Duration::from_millis(300)),
    )
    .await;
    assert_eq!(stuck.settled_by, pty_session::SettleReason::Timeout);
    let other = open(&pty, &owner, OpenRequest::new("cat")).await;
    let line = format!("{}\n", "y".repeat(1000));
    let flood = line.repeat(1000);
    let start = Instant::now();
    let (stuck_result, other_result) = tokio::join!(
        pty.send(
            &owner,
            &stuck.session_id,
            SendRequest::new(flood.clone()).timeout(Duration::from_millis(1500))
        ),
        async {
            // Once the stuck send has begun: the terminal echoes what enters its input
            // queue, though nothing reads it.
            eventually("the stuck send to begin", Duration::from_secs(10), || {
                pty.screen(&owner, &stuck.session_id)
                    .is_ok_and(|screen| screen.text().contains("yyyy"))
            })
            .await;
            let t = Instant::now();
            let sent = pty
                .send(&owner, &other.session_id, SendRequest::new("alive"))
                .await;
            (sent, t.elapsed())
        }
    );
    let err = stuck_result.unwrap_err();
    assert_eq!(err.code(), "WRITE_TIMEOUT", "{err}");
    let pty_session::Error::WriteTimeout { written, total, .. } = err else {
        unreachable!()
    };
    assert!(written > 0 && written < total, "{written} of {total}");
    assert!(start.elapsed() >= Duration::from_millis(1500));
    let (sent, took) = other_result;
    assert_eq!(sent.unwrap().delta.text, "alive\nalive\n");
    assert!(
        took < Duration::from_secs(1),
        "the other session answered in {took:?}"
    );
    // The stuck session is still usable: once the program reads again, the terminal's
    // input drains and a Ctrl-C ends it. (While nothing reads, the Ctrl-C waits behind
    // the full input queue, as it would in any terminal.)
    std::fs::write(&go, "").unwrap();
    let sent = pty
        .send(
            &owner,
            &stuck.session_id,
            SendRequest::new("\u{3}")
                .submit(false)
                .timeout(Duration::from_millis(30_000)),
        )
        .await
        .unwrap();
    let interrupted = pty_session::Status::Exited(pty_session::ExitStatus::Signal(libc::SIGINT));
    // The settle ends at the exit; a tail confirms it should the exit come just after.
    if sent.status != interrupted {
        eventually_async("Ctrl-C to end cat", Duration::from_secs(10), || async {
            let tail = pty.tail(&owner, &stuck.session_id, None).await.unwrap();
            tail.status == interrupted
        })
        .await;
    }
    pty.shutdown().await;
}

#[tokio::test]
async fn cancelled_send_keeps_the_output_for_the_next_read() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, bash()).await;
    let cancel = CancellationToken::new();
    let start = Instant::now();
    let (result, ()) = tokio::join!(
        pty.send(
            &owner,
            &opened.session_id,
            SendRequest::new("echo before; sleep 30").cancel_on(cancel.clone()),
        ),
        async {
            // Cancels once the send is mid-settle: bash printed `before` and runs sleep.
            eventually("bash to start sleep", Duration::from_secs(10), || {
                !pty_session_testkit::children(opened.pid, "sleep").is_empty()
            })
            .await;
            cancel.cancel();
        }
    );
    let err = result.unwrap_err();
    assert_eq!(err.code(), "CANCELLED");
    assert!(start.elapsed() < Duration::from_secs(15));
    // The line is kept for the next reads: bash wrote it before it started sleep, and the
    // drain takes it into the scrollback a moment later if it has not yet.
    let text = std::cell::RefCell::new(String::new());
    eventually_async("the line `before`", Duration::from_secs(10), || async {
        let tail = pty.tail(&owner, &opened.session_id, None).await.unwrap();
        text.borrow_mut().push_str(&tail.output.text);
        text.borrow().contains("before\n")
    })
    .await;
    pty.shutdown().await;
}

#[tokio::test]
async fn cancelled_open_closes_the_new_session() {
    let (pty, owner) = service();
    let cancel = CancellationToken::new();
    let mut started = None;
    let (result, ()) = tokio::join!(
        pty.open(
            &owner,
            OpenRequest::new("sleep 30")
                .settle(Settle::Quiet)
                .quiet(Duration::from_millis(60_000)),
            &cancel,
        ),
        async {
            // Cancels once the session runs and the open waits for its settle.
            eventually("the session to start", Duration::from_secs(10), || {
                started = pty.sessions(&owner).into_iter().next();
                started.is_some()
            })
            .await;
            cancel.cancel();
        }
    );
    let err = result.unwrap_err();
    assert_eq!(err.code(), "CANCELLED");
    assert!(pty.sessions(&owner).is_empty());
    let started = started.expect("the session was seen");
    let err = pty.tail(&owner, &started, None).await.unwrap_err();
    assert_eq!(
        err.code(),
        "UNKNOWN_SESSION",
        "the cancelled session is closed"
    );
}

#[tokio::test]
async fn fifty_concurrent_sends_across_ten_sessions() {
    let (pty, owner) = service();
    let mut ids = Vec::new();
    for _ in 0..10 {
        ids.push(open(&pty, &owner, OpenRequest::new("cat")).await.session_id);
    }
    let mut sends = tokio::task::JoinSet::new();
    for (i, id) in ids.iter().enumerate() {
        for j in 0..5 {
            let (pty, owner, id) = (pty.clone(), owner.clone(), id.clone());
            sends.spawn(async move {
                let data = format!("s{i}m{j}");
                let sent = pty.send(&owner, &id, SendRequest::new(data.clone())).await;
                (i, data, sent)
            });
        }
    }
    let mut per_session: Vec<String> = vec![String::new(); 10];
    while let Some(joined) = sends.join_next().await {
        let (i, data, sent) = joined.unwrap();
        let sent = sent.unwrap_or_else(|err| panic!("{data}: {err}"));
        assert!(
            sent.delta.text.contains(&format!("{data}\n")),
            "{data}: {:?}",
            sent.delta.text
        );
        per_session[i].push_str(&sent.delta.text);
    }
    for (i, text) in per_session.iter().enumerate() {
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort();
        let mut expected: Vec<String> = (0..5)
            .flat_map(|j| [format!("s{i}m{j}"), format!("s{i}m{j}")])
            .collect();
        expected.sort();
        assert_eq!(
            lines, expected,
            "every line once, none lost, in session {i}"
        );
    }
    pty.shutdown().await;
}
