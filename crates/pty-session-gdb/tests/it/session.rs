//! A whole debugging session: break, run, step, next, finish, print, backtrace, a
//! watchpoint, and continue to the exit code.

use pty_session::{ExitStatus, Owner};
use pty_session_gdb::{Record, ResultClass, Variable};

use crate::support::*;

#[tokio::test]
async fn break_run_step_next_finish_print_backtrace_watch_and_exit() {
    let pty = service();
    let mut gdb = start(&pty, "alice", pty_session_gdb::GdbOptions::new()).await;
    assert_eq!(
        pty.sessions(&Owner::new("alice")),
        [gdb.session_id().clone()]
    );

    let bkpt = gdb.command("-break-insert square").await.unwrap();
    assert_eq!(bkpt.result.class, ResultClass::Done);
    let bkpt = bkpt.get("bkpt").expect("bkpt");
    assert_eq!(
        (bkpt.str("number"), bkpt.str("func")),
        (Some("1"), Some("square"))
    );

    let run = gdb.command("-exec-run").await.unwrap();
    assert_eq!(run.result.class, ResultClass::Running);
    let inferior = inferior_pid(&run.records).expect("=thread-group-started with a pid");
    assert!(alive(inferior));

    let stop = gdb.wait_stopped().await.unwrap();
    assert_eq!(stop.reason.as_deref(), Some("breakpoint-hit"));
    let frame = stop.frame.expect("frame");
    assert_eq!(
        (frame.func.as_deref(), frame.line),
        (Some("square"), Some(21))
    );
    assert_eq!(frame.args[0].name, "n");
    assert_eq!(frame.args[0].value.as_deref(), Some("1"));

    // Backtrace: square called from main. The console lines of the stop ("Breakpoint 1,
    // square (n=1) ...") arrived after -exec-run's answer and come with this response.
    let frames = gdb.command("-stack-list-frames").await.unwrap();
    assert!(
        frames.console().contains("Breakpoint 1, square (n=1)"),
        "{:?}",
        frames.records
    );
    let funcs: Vec<_> = frames
        .get("stack")
        .expect("stack")
        .items()
        .map(|frame| frame.str("func").unwrap_or("?"))
        .collect();
    assert_eq!(funcs, ["square", "main"]);

    // next: one line on, still in square.
    gdb.command("-exec-next").await.unwrap();
    let stop = gdb.wait_stopped().await.unwrap();
    assert_eq!(stop.reason.as_deref(), Some("end-stepping-range"));
    assert_eq!(stop.frame.as_ref().and_then(|f| f.line), Some(22));
    let result = gdb
        .command("-data-evaluate-expression result")
        .await
        .unwrap();
    assert_eq!(result.str("value"), Some("1"));

    // finish: back in main, with square's return value.
    gdb.command("-exec-finish").await.unwrap();
    let stop = gdb.wait_stopped().await.unwrap();
    assert_eq!(stop.reason.as_deref(), Some("function-finished"));
    assert_eq!(
        stop.frame.as_ref().and_then(|f| f.func.as_deref()),
        Some("main")
    );
    assert_eq!(stop.record.results.str("return-value"), Some("1"));

    // print a variable and a struct, and the locals.
    let total = gdb
        .command("-data-evaluate-expression total")
        .await
        .unwrap();
    assert_eq!(total.str("value"), Some("0"), "total += is not done yet");
    let p = gdb.command("-data-evaluate-expression p").await.unwrap();
    let p = p.str("value").expect("value");
    assert!(
        p.starts_with("{x = 3, y = 4, name = 0x") && p.ends_with(r#" "origin\t\"quoted\" é"}"#),
        "{p}"
    );
    let px = gdb
        .command("-data-evaluate-expression p.x+p.y")
        .await
        .unwrap();
    assert_eq!(px.str("value"), Some("7"));
    let locals = gdb
        .command("-stack-list-locals --all-values")
        .await
        .unwrap();
    let locals: Vec<Variable> = locals
        .get("locals")
        .expect("locals")
        .items()
        .map(Variable::from_value)
        .collect();
    let names: Vec<_> = locals.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["i", "p", "total"]);

    // step: through the loop (finish left us inside line 38, the loop's increment is
    // line 37) and into square again, with n = 2. Without the breakpoint, which would
    // make the step's stop a breakpoint hit.
    gdb.command("-break-delete 1").await.unwrap();
    let mut lines = Vec::new();
    let frame = loop {
        gdb.command("-exec-step").await.unwrap();
        let stop = gdb.wait_stopped().await.unwrap();
        assert_eq!(stop.reason.as_deref(), Some("end-stepping-range"));
        let frame = stop.frame.expect("frame");
        lines.push((frame.func.clone(), frame.line));
        if frame.func.as_deref() == Some("square") || lines.len() == 4 {
            break frame;
        }
    };
    assert_eq!(frame.func.as_deref(), Some("square"), "steps: {lines:?}");
    assert_eq!(frame.args[0].value.as_deref(), Some("2"));

    // A watchpoint on the global: the next change is counter 1 -> 5.
    let watch = gdb.command("-break-watch counter").await.unwrap();
    assert_eq!(watch.get("wpt").and_then(|w| w.str("exp")), Some("counter"));
    gdb.command("-exec-continue").await.unwrap();
    let stop = gdb.wait_stopped().await.unwrap();
    assert_eq!(stop.reason.as_deref(), Some("watchpoint-trigger"));
    let value = stop.record.results.get("value").expect("value");
    assert_eq!((value.str("old"), value.str("new")), (Some("1"), Some("5")));

    // Continue to the end: prog returns 28 % 16 = 12, which gdb prints as octal "014".
    gdb.command("-break-delete").await.unwrap();
    gdb.command("-exec-continue").await.unwrap();
    let stop = gdb.wait_stopped().await.unwrap();
    assert_eq!(stop.reason.as_deref(), Some("exited"));
    assert_eq!(stop.exit_code, Some(12));
    assert!(stop.exited());

    // The program's own output came through the shared terminal, as an unparsed line.
    let events = gdb.events().await.unwrap();
    assert!(
        events
            .iter()
            .any(|r| matches!(r, Record::Unparsed(u) if u.text == "total=28")),
        "{events:?}"
    );
    assert!(!alive(inferior));

    assert_eq!(gdb.lines_lost(), 0);

    let gdb_pid = gdb.pid() as i32;
    assert_eq!(gdb.exit().await.unwrap(), ExitStatus::Code(0));
    assert!(pty.sessions(&Owner::new("alice")).is_empty());
    assert!(!alive(gdb_pid));
}

#[tokio::test]
async fn tokens_match_answers_and_cli_commands_work_too() {
    let pty = service();
    let mut gdb = start(&pty, "bob", pty_session_gdb::GdbOptions::new()).await;
    let first = gdb.command("-gdb-version").await.unwrap();
    let second = gdb.command("-gdb-version").await.unwrap();
    let (Some(a), Some(b)) = (first.result.token, second.result.token) else {
        panic!("results without tokens");
    };
    assert_eq!(b, a + 1);
    // The first response also carries what gdb printed as it started.
    assert!(
        first.console().starts_with("Reading symbols from"),
        "{}",
        first.console()
    );
    assert!(first.console().contains("\nGNU gdb"), "{}", first.console());
    assert!(
        second.console().starts_with("GNU gdb"),
        "{}",
        second.console()
    );
    // A CLI command through MI: its output is console stream text.
    let printed = gdb.command("print 6*7").await.unwrap();
    assert!(printed.console().contains("= 42"), "{}", printed.console());
    assert_eq!(gdb.lines_lost(), 0);
    gdb.exit().await.unwrap();
}

#[tokio::test]
async fn dropping_gdb_closes_its_session() {
    let pty = service();
    let gdb = start(&pty, "carol", pty_session_gdb::GdbOptions::new()).await;
    let pid = gdb.pid() as i32;
    drop(gdb);
    eventually(
        "the session to close",
        std::time::Duration::from_secs(10),
        || pty.sessions(&Owner::new("carol")).is_empty() && !alive(pid),
    )
    .await;
}

/// The driver's futures can run on a multi-threaded runtime's tasks.
#[allow(dead_code)]
fn futures_are_send(gdb: &mut pty_session_gdb::Gdb, pty: &pty_session::PtyService) {
    fn send<T: Send>(_: T) {}
    send(pty_session_gdb::Gdb::start(
        pty,
        Owner::new("x"),
        pty_session_gdb::GdbOptions::new(),
    ));
    send(gdb.command("-gdb-version"));
    send(gdb.wait_stopped());
    send(gdb.interrupt());
    send(gdb.events());
    fn exit(gdb: pty_session_gdb::Gdb) {
        send(gdb.exit());
    }
    let _ = exit;
}
