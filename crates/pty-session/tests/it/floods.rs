//! Floods: a gigabyte of output with bounded memory and nothing lost at the end.

use std::time::{Duration, Instant};

use pty_session::{OpenRequest, SettleReason, Status};

use crate::support::*;

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Runs in a process of its own, so that the process's peak RSS is this service's alone
/// (the session's processes are separate).
#[tokio::test]
async fn a_gigabyte_of_output_keeps_memory_bounded_and_delivers_the_final_line() {
    if !pty_session_testkit::heavy(
        "a_gigabyte_of_output_keeps_memory_bounded_and_delivers_the_final_line",
    ) {
        return;
    }
    if !in_own_process(
        "floods::a_gigabyte_of_output_keeps_memory_bounded_and_delivers_the_final_line",
    ) {
        return;
    }
    let (pty, owner) = service();
    let before = status_kib("VmRSS:");
    let start = Instant::now();
    // 768 MiB of zeros in base64 is 1 GiB of text in 76-column lines, then a last line.
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("head -c 805306368 /dev/zero | base64 -w 76; echo THE-END")
            .timeout(Duration::from_millis(600_000)),
    )
    .await;
    let took = start.elapsed();
    assert_eq!(
        opened.settled_by,
        SettleReason::Exit,
        "{:?}",
        opened.settled_by
    );
    assert_eq!(
        opened.status,
        Status::Exited(pty_session::ExitStatus::Code(0))
    );
    let out = &opened.initial_output;
    assert!(
        out.text.ends_with("THE-END\n"),
        "the final line is delivered"
    );
    assert!(out.truncated);
    // 1 GiB / 77 bytes a line, plus the last: every line is either delivered or skipped.
    assert_eq!(out.skipped + out.lines as u64, 805306368 / 57 + 1 + 1);
    let peak = status_kib("VmHWM:");
    eprintln!(
        "1 GiB in {took:?}; RSS before {before} kB, peak {peak} kB (+{} MiB)",
        (peak.saturating_sub(before)) / 1024
    );
    assert!(
        peak.saturating_sub(before) < 64 * 1024,
        "peak RSS grew by {peak} - {before} kB"
    );
    assert!(took < Duration::from_secs(600));
}
