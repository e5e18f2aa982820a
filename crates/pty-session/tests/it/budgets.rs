//! Reply budgets and re-reads: nothing read is lost while the scrollback holds it, and no
//! reply is larger than its budgets, whatever the program prints.

use std::time::Duration;

use pty_session::{Config, OpenRequest, Owner, PtyService, Rest, SettleReason, TailRequest};

use crate::support::*;

/// `seq 1 5000` after a pause, opened without settling, so that the cursor is still at 0
/// when the lines are all there.
async fn seq_5000(pty: &PtyService, owner: &Owner) -> pty_session::SessionId {
    let request = OpenRequest::new("sleep 0.2; seq 1 5000").settle(pty_session::Settle::None);
    let opened = open(pty, owner, request).await;
    assert_eq!(opened.initial_output.lines, 0);
    let id = opened.session_id;
    let follow = TailRequest::new()
        .from(5000)
        .until("^5000$")
        .timeout(Duration::from_millis(30_000));
    let tail = pty.tail(owner, &id, follow).await.unwrap();
    assert_eq!(tail.total_lines, 5000, "{:?}", tail.settled_by);
    id
}

/// The lines `first..=last` of `seq`, each with its `\n`.
fn seq(first: u64, last: u64) -> String {
    (first..=last).map(|n| format!("{n}\n")).collect()
}

#[tokio::test]
async fn a_reread_of_seq_5000_from_any_line_gives_exactly_those_lines_and_keeps_the_cursor() {
    let (pty, owner) = service();
    let id = seq_5000(&pty, &owner).await;
    for from in [0, 1, 137, 2500, 4799, 4999] {
        // All at once with the largest budgets.
        let whole = TailRequest::new()
            .from(from)
            .lines(100_000)
            .max_bytes(1 << 20);
        let tail = pty.tail(&owner, &id, whole).await.unwrap();
        let out = &tail.output;
        assert_eq!(out.text, seq(from + 1, 5000), "from {from}");
        assert_eq!(
            (out.lines as u64, out.skipped, out.truncated),
            (5000 - from, 0, false)
        );
        assert_eq!((tail.line_begin, tail.total_lines), (0, 5000));
        // Page by page with the default budgets, following where each says the rest is.
        let mut text = String::new();
        let mut next = Some(from);
        let mut pages = 0;
        while let Some(from) = next {
            let page = pty
                .tail(&owner, &id, TailRequest::new().from(from))
                .await
                .unwrap();
            assert!(page.output.lines <= 200 && page.output.text.len() <= 32 * 1024);
            assert_eq!(page.output.first_line, from);
            text.push_str(&page.output.text);
            next = page.output.rest.map(|rest| rest.from);
            pages += 1;
        }
        assert_eq!(text, seq(from + 1, 5000), "paged from {from}");
        assert_eq!(pages, (5000 - from).div_ceil(200), "from {from}");
    }
    let end = pty
        .tail(&owner, &id, TailRequest::new().from(5000))
        .await
        .unwrap();
    assert_eq!((end.output.lines, end.output.truncated), (0, false));
    // Nothing above moved the cursor: the plain read gets every line once.
    let all = pty.tail(&owner, &id, Some(100_000)).await.unwrap();
    assert_eq!(
        all.output.text,
        seq(1, 5000).split_off(seq(1, 5000).len() - all.output.text.len())
    );
    assert_eq!(all.output.lines as u64 + all.output.skipped, 5000);
    let again = pty.tail(&owner, &id, None).await.unwrap();
    assert_eq!(again.output.lines, 0);
    pty.shutdown().await;
}

#[tokio::test]
async fn a_reread_from_a_line_that_fell_out_counts_what_is_gone() {
    let mut config = Config::default();
    config.scrollback_lines = 1000;
    let pty = PtyService::new(config);
    let owner = Owner::new("test");
    let opened = open(&pty, &owner, OpenRequest::new("seq 1 5000")).await;
    assert_eq!(opened.settled_by, SettleReason::Exit);
    let out = &opened.initial_output;
    assert_eq!((out.lines, out.skipped), (200, 4800));
    assert_eq!(
        out.rest,
        Some(Rest {
            lines: 800,
            from: 4000
        }),
        "the kept unread lines"
    );

    let tail = pty
        .tail(&owner, &opened.session_id, TailRequest::new().from(3500))
        .await
        .unwrap();
    assert_eq!(tail.line_begin, 4000);
    let out = &tail.output;
    assert_eq!(out.skipped, 500, "lines 3500..4000 are gone");
    assert_eq!((out.first_line, out.lines), (4000, 200));
    assert_eq!(out.text, seq(4001, 4200));
    assert_eq!(
        out.rest,
        Some(Rest {
            lines: 800,
            from: 4200
        })
    );
    assert!(out.truncated);
    pty.shutdown().await;
}

#[tokio::test]
async fn a_100000_character_line_comes_cut_to_the_byte_budget() {
    let (pty, owner) = service();
    let python = python3();
    let command = format!("{python} -c \"print('x' * 100000)\"");
    let opened = open(&pty, &owner, OpenRequest::new(command.clone())).await;
    let out = &opened.initial_output;
    // The terminal's 64 KiB line cut makes two lines of 65,536 and 34,464 bytes; the newer
    // is longer than the 32 KiB budget.
    assert_eq!(out.text, format!("{}\n", "x".repeat(32 * 1024 - 1)));
    assert_eq!((out.lines, out.cut_lines, out.skipped), (1, 1, 1));
    assert_eq!(
        out.rest,
        Some(Rest { lines: 1, from: 0 }),
        "the first part can be re-read"
    );
    let whole = TailRequest::new().from(0).max_bytes(1 << 20);
    let tail = pty.tail(&owner, &opened.session_id, whole).await.unwrap();
    assert_eq!(tail.output.text.len(), 100_002);
    assert_eq!((tail.output.lines, tail.output.cut_lines), (2, 0));

    let small = OpenRequest::new(command).max_bytes(1024);
    let opened = open(&pty, &owner, small).await;
    assert_eq!(opened.initial_output.text.len(), 1024);
    assert_eq!(opened.initial_output.cut_lines, 1);
    pty.shutdown().await;
}

#[tokio::test]
async fn three_hundred_lines_of_10000_characters_fit_three_to_a_reply() {
    let (pty, owner) = service();
    let python = python3();
    let command =
        format!("{python} -c \"for i in range(300): print(str(i).rjust(5, '0') + 'y' * 9995)\"");
    let opened = open(&pty, &owner, OpenRequest::new(command)).await;
    let out = &opened.initial_output;
    assert!(out.text.len() <= 32 * 1024);
    assert_eq!((out.lines, out.skipped, out.cut_lines), (3, 297, 0));
    assert!(out.text.starts_with("00297y") && out.text.ends_with("y\n"));
    assert_eq!(
        out.rest,
        Some(Rest {
            lines: 297,
            from: 0
        })
    );
    // The rest, re-read page by page in the same budget.
    let mut next = Some(0);
    let mut lines = 0;
    while let Some(from) = next {
        let tail = pty
            .tail(&owner, &opened.session_id, TailRequest::new().from(from))
            .await
            .unwrap();
        assert!(tail.output.text.len() <= 32 * 1024);
        assert_eq!(tail.output.cut_lines, 0);
        let first = tail.output.text.get(..5).map(|n| n.parse::<u64>().unwrap());
        assert_eq!(first, Some(from));
        lines += tail.output.lines;
        next = tail.output.rest.map(|rest| rest.from);
    }
    assert_eq!(lines, 300);
    let err = pty
        .tail(
            &owner,
            &opened.session_id,
            TailRequest::new().max_bytes(1023),
        )
        .await;
    assert_eq!(err.unwrap_err().code(), "INVALID_ARGUMENT");
    pty.shutdown().await;
}

#[tokio::test]
async fn a_waiting_tail_follows_a_20_step_job_in_one_call() {
    let (pty, owner) = service();
    let job = "for i in $(seq 1 20); do echo step $i; sleep 0.3; done";
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(job).settle(pty_session::Settle::None),
    )
    .await;
    let id = opened.session_id;
    let at_once = pty.tail(&owner, &id, None).await.unwrap();
    assert_eq!(
        at_once.settled_by, None,
        "without settle options a tail does not wait"
    );
    let follow = TailRequest::new()
        .until("step 20")
        .timeout(Duration::from_millis(30_000));
    let tail = pty.tail(&owner, &id, follow).await.unwrap();
    assert_eq!(tail.settled_by, Some(SettleReason::Match));
    assert!(
        tail.output.text.ends_with("step 20\n"),
        "{:?}",
        tail.output.text
    );
    let all = format!("{}{}", at_once.output.text, tail.output.text);
    let expected: String = (1..=20).map(|i| format!("step {i}\n")).collect();
    assert_eq!(all, expected, "every step once, across the two reads");
    // The job has ended: a wait ends at once, on exit.
    let again = TailRequest::new()
        .until("step 21")
        .timeout(Duration::from_millis(30_000));
    let tail = pty.tail(&owner, &id, again).await.unwrap();
    assert_eq!(tail.settled_by, Some(SettleReason::Exit));
    pty.shutdown().await;
}

#[tokio::test]
async fn a_cancelled_waiting_tail_is_cancelled_and_keeps_the_output() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, OpenRequest::new("exec cat")).await;
    let id = opened.session_id;
    pty.send(&owner, &id, pty_session::SendRequest::new("kept").lines(1))
        .await
        .unwrap();
    let cancel = pty_session::CancellationToken::new();
    let endless = TailRequest::new()
        .settle(pty_session::Settle::Quiet)
        .quiet(Duration::from_millis(600_000))
        .timeout(Duration::from_millis(600_000))
        .cancel_on(cancel.clone());
    // The tail's first progress report says it waits (it comes after a second).
    let waiting = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let endless = endless.on_progress({
        let waiting = waiting.clone();
        move |_| waiting.store(true, std::sync::atomic::Ordering::Relaxed)
    });
    let start = std::time::Instant::now();
    let canceller = async {
        eventually(
            "the tail to wait",
            std::time::Duration::from_secs(30),
            || waiting.load(std::sync::atomic::Ordering::Relaxed),
        )
        .await;
        pty.send(
            &owner,
            &id,
            pty_session::SendRequest::new("later").settle(pty_session::Settle::None),
        )
        .await
        .unwrap();
        // cat's copy of the line, after the terminal's echo: it came during the wait.
        eventually(
            "cat to copy the line",
            std::time::Duration::from_secs(30),
            || {
                let screen = pty.screen(&owner, &id).unwrap();
                screen.lines.iter().filter(|line| *line == "later").count() == 2
            },
        )
        .await;
        cancel.cancel();
    };
    let (tail, ()) = tokio::join!(pty.tail(&owner, &id, endless), canceller);
    assert_eq!(tail.unwrap_err().code(), "CANCELLED");
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    let tail = pty.tail(&owner, &id, None).await.unwrap();
    assert!(tail.output.text.contains("later"), "{:?}", tail.output.text);
    pty.shutdown().await;
}
