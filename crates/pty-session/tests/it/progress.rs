//! Progress reports during a long settle, through the facade.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pty_session::{OpenRequest, Progress, SettleReason, TailRequest};

use crate::support::*;

#[tokio::test]
async fn a_three_second_wait_reports_the_newest_lines_a_few_times_a_second() {
    let (pty, owner) = service();
    let job = "for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.5; done";
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(job).settle(pty_session::Settle::None),
    )
    .await;
    let reports: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = reports.clone();
    let follow = TailRequest::new()
        .until("tick 6")
        .timeout(Duration::from_millis(30_000))
        .on_progress(move |report| sink.lock().unwrap().push(report));
    let tail = pty.tail(&owner, &opened.session_id, follow).await.unwrap();
    assert_eq!(tail.settled_by, Some(SettleReason::Match));
    let reports = reports.lock().unwrap().clone();
    assert!(reports.len() >= 2, "{reports:?}");
    assert!(reports.len() <= 12, "a few a second at most: {reports:?}");
    assert!(reports.iter().all(|r| r.elapsed >= Duration::from_secs(1)));
    let lines: Vec<&String> = reports.iter().flat_map(|r| &r.lines).collect();
    assert!(lines.iter().any(|l| l.starts_with("tick")), "{reports:?}");
    // Each report carries lines that came after the last one's.
    let numbers: Vec<u32> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("tick ")?.parse().ok())
        .collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");

    let quick = TailRequest::new()
        .timeout(Duration::from_millis(100))
        .on_progress(|report| panic!("{report:?}"));
    pty.tail(&owner, &opened.session_id, quick).await.unwrap();
    pty.shutdown().await;
}
