//! Interrupting the endless loop: `-exec-interrupt` with mi-async, Ctrl-C without.

use std::time::Duration;

use pty_session_gdb::{Error, GdbOptions, ResultClass};

use crate::support::*;

/// Runs the program into its endless loop and leaves it running there; the inferior's
/// pid. (Interrupted any earlier, it would stop in the dynamic loader.)
async fn run_into_spin(gdb: &mut pty_session_gdb::Gdb) -> i32 {
    gdb.command("-break-insert spin").await.unwrap();
    let run = gdb.command("-exec-run").await.unwrap();
    assert_eq!(run.result.class, ResultClass::Running);
    let inferior = inferior_pid(&run.records).expect("inferior pid");
    let stop = gdb.wait_stopped().await.unwrap();
    assert_eq!(stop.reason.as_deref(), Some("breakpoint-hit"));
    gdb.command("-break-delete").await.unwrap();
    let resumed = gdb.command("-exec-continue").await.unwrap();
    assert_eq!(resumed.result.class, ResultClass::Running);
    inferior
}

#[tokio::test]
async fn exec_interrupt_stops_an_endless_loop_and_exit_kills_it() {
    let pty = service();
    let mut gdb = start(&pty, "t", GdbOptions::new().args(["spin"])).await;
    let inferior = run_into_spin(&mut gdb).await;

    // It spins: no stop comes. The wait times out and gdb still answers.
    let err = gdb
        .wait_stopped_timeout(Duration::from_millis(300))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Timeout {
                timeout,
                ..
            } if timeout == Duration::from_millis(300)
        ),
        "{err}"
    );
    let threads = gdb.command("-thread-info").await.unwrap();
    let thread = threads
        .get("threads")
        .and_then(|t| t.items().next())
        .expect("a thread");
    assert_eq!(thread.str("state"), Some("running"));

    let stop = gdb.interrupt().await.unwrap();
    assert_eq!(stop.reason.as_deref(), Some("signal-received"));
    assert_eq!(stop.signal_name.as_deref(), Some("SIGINT"));
    assert_eq!(
        stop.frame.as_ref().and_then(|f| f.func.as_deref()),
        Some("spin")
    );

    // Resume, interrupt again, resume, and exit while it runs: gdb kills it.
    gdb.command("-exec-continue").await.unwrap();
    gdb.interrupt().await.unwrap();
    let run = gdb.command("-exec-continue").await.unwrap();
    assert_eq!(run.result.class, ResultClass::Running);
    assert!(alive(inferior));
    gdb.exit().await.unwrap();
    assert!(!alive(inferior), "the inferior outlived gdb's exit");
}

#[tokio::test]
async fn ctrl_c_interrupts_without_mi_async() {
    let pty = service();
    let options = GdbOptions::new().args(["spin"]).mi_async(false);
    let mut gdb = start(&pty, "t", options).await;
    let inferior = run_into_spin(&mut gdb).await;

    let stop = gdb.interrupt().await.unwrap();
    assert_eq!(stop.signal_name.as_deref(), Some("SIGINT"));
    assert_eq!(
        stop.frame.as_ref().and_then(|f| f.func.as_deref()),
        Some("spin")
    );
    // gdb reads commands again once the target stopped.
    let frame = gdb.command("-stack-info-frame").await.unwrap();
    assert_eq!(frame.get("frame").and_then(|f| f.str("func")), Some("spin"));
    gdb.exit().await.unwrap();
    assert!(!alive(inferior));
}
