//! What goes wrong: `^error`, bad input, gdb missing, and gdb killed from outside.

use std::time::Duration;

use pty_session::{ExitStatus, Owner};
use pty_session_gdb::{Error, Gdb, GdbOptions};

use crate::support::*;

#[tokio::test]
async fn a_bad_command_is_a_command_error_and_gdb_goes_on() {
    let pty = service();
    let mut gdb = start(&pty, "t", GdbOptions::new()).await;
    let err = gdb.command("-no-such-command").await.unwrap_err();
    let Error::Command {
        command,
        message,
        code,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(command, "-no-such-command");
    assert_eq!(message, "Undefined MI command: no-such-command");
    assert_eq!(code.as_deref(), Some("undefined-command"));
    let err = gdb
        .command("-data-evaluate-expression nosuchvar")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Command { message, .. } if message.contains("nosuchvar")),
        "{err}"
    );
    // gdb still answers.
    gdb.command("-break-insert main").await.unwrap();
    gdb.exit().await.unwrap();
}

#[tokio::test]
async fn commands_must_be_one_line() {
    let pty = service();
    let mut gdb = start(&pty, "t", GdbOptions::new()).await;
    for bad in ["-break-insert main\n-exec-run", "a\rb", "", "   "] {
        let err = gdb.command(bad).await.unwrap_err();
        assert!(
            matches!(err, Error::InvalidCommand { .. }),
            "{bad:?}: {err}"
        );
    }
    gdb.command("-gdb-version").await.unwrap();
    gdb.exit().await.unwrap();
}

#[tokio::test]
async fn a_missing_gdb_is_a_start_error() {
    let pty = service();
    let options = GdbOptions::new().gdb("/nonexistent/gdb");
    let err = Gdb::start(&pty, Owner::new("t"), options)
        .await
        .unwrap_err();
    let Error::Start { status, output } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*status, Some(ExitStatus::Code(127)), "{err}");
    assert!(output.contains("/nonexistent/gdb"), "{output:?}");
    assert!(pty.sessions(&Owner::new("t")).is_empty());
}

#[tokio::test]
async fn gdb_killed_from_outside_is_a_typed_error_and_leaves_no_process() {
    let pty = service();
    let owner = Owner::new("t");
    let mut gdb = start(&pty, "t", GdbOptions::new().args(["spin"])).await;
    let run = gdb.command("-exec-run").await.unwrap();
    let inferior = inferior_pid(&run.records).expect("inferior pid");
    let gdb_pid = gdb.pid() as i32;
    assert!(alive(gdb_pid) && alive(inferior));

    // Wait for a stop that will not come, and kill gdb meanwhile: `join!` polls the wait
    // first, so the kill lands once the wait has begun and waits for output, the case
    // under test (killed before it, the wait would find gdb gone at once and fail the
    // same way).
    let (err, ()) = tokio::join!(gdb.wait_stopped_timeout(Duration::from_secs(30)), async {
        let status = std::process::Command::new("kill")
            .args(["-9", &gdb_pid.to_string()])
            .status()
            .expect("run kill");
        assert!(status.success());
    });
    let err = err.unwrap_err();
    let Error::Exited {
        status,
        waiting_for,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(*status, Some(ExitStatus::Signal(9)), "{err}");
    assert_eq!(waiting_for, "a *stopped record");
    assert!(!alive(gdb_pid), "gdb still runs");
    assert!(!alive(inferior), "the inferior outlived gdb");
    assert!(pty.sessions(&owner).is_empty(), "the session was closed");

    // Later calls say the same, and exit reports how gdb ended.
    let err = gdb.command("-gdb-version").await.unwrap_err();
    assert!(matches!(err, Error::Exited { .. }), "{err}");
    assert_eq!(gdb.exit().await.unwrap(), ExitStatus::Signal(9));
}

#[tokio::test]
async fn gdb_killed_during_a_command_is_a_typed_error() {
    let pty = service();
    let mut gdb = start(&pty, "t", GdbOptions::new().mi_async(false).args(["spin"])).await;
    gdb.command("-exec-run").await.unwrap();
    let gdb_pid = gdb.pid() as i32;
    // Without mi-async gdb reads nothing while the target runs: this command waits,
    // and the kill lands during it (as above, `join!` polls the command first, so the
    // kill comes once it has been written and waits for its answer).
    let (err, ()) = tokio::join!(
        gdb.command_with_timeout("-stack-list-frames", Duration::from_secs(30)),
        async {
            std::process::Command::new("kill")
                .args(["-9", &gdb_pid.to_string()])
                .status()
                .expect("run kill");
        }
    );
    let err = err.unwrap_err();
    assert!(
        matches!(&err, Error::Exited { waiting_for, status: Some(ExitStatus::Signal(9)) }
            if waiting_for.ends_with("-stack-list-frames")),
        "{err:?}"
    );
}
