//! Thirty sends in a row to node, python3 and bash, each reply holding exactly its own
//! step: the echo of what it typed, the step's output, the prompt pending; never a line
//! of the step before (a reply a step behind) nor of the step after.

use std::time::{Duration, Instant};

use pty_session::{OpenRequest, Owner, PtyService, SendRequest, SettleReason};

use crate::support::*;

/// How many sends each program gets.
const STEPS: u64 = 30;

/// One program's round trips: how to open it, its prompt, and step `n`'s send with the
/// line it prints.
struct Program {
    name: &'static str,
    open: OpenRequest,
    prompt: &'static str,
    step: fn(u64) -> (String, String),
}

/// Step `n`'s number: no two steps print the same, and no echo holds another's.
fn value(n: u64) -> u64 {
    1000 + n * 7
}

/// Every fifth step pauses (a timer, a sleep) before its line: the reply must wait for
/// it rather than come back with the echo alone.
fn slow(n: u64) -> bool {
    n % 5 == 4
}

fn node_step(n: u64) -> (String, String) {
    let sent = if slow(n) {
        format!(
            "await new Promise(r => setTimeout(() => r({}), 150))",
            value(n)
        )
    } else {
        format!("{} + {n} * 7", 1000)
    };
    (sent, value(n).to_string())
}

fn python_step(n: u64) -> (String, String) {
    let sent = if slow(n) {
        format!("time.sleep(0.15) or print(1000 + {n} * 7)")
    } else {
        format!("print(1000 + {n} * 7)")
    };
    (sent, value(n).to_string())
}

fn bash_step(n: u64) -> (String, String) {
    let sent = if slow(n) {
        format!("sleep 0.15; echo $((1000 + {n} * 7))")
    } else {
        format!("echo $((1000 + {n} * 7))")
    };
    (sent, value(n).to_string())
}

/// Opens `program`, runs `setup` (sends whose replies are not checked beyond their
/// settle), then the thirty steps, each checked whole.
async fn round_trips(pty: &PtyService, owner: &Owner, program: Program, setup: &[&str]) {
    let opened = open(pty, owner, program.open).await;
    assert_eq!(
        (opened.settled_by, opened.pending.as_str()),
        (SettleReason::Input, program.prompt),
        "{}: {:?}",
        program.name,
        opened.initial_output.text
    );
    let id = opened.session_id;
    let send = |data: String| {
        let request = SendRequest::new(data).timeout(Duration::from_millis(20_000));
        pty.send(owner, &id, request)
    };
    for data in setup {
        let sent = send((*data).to_owned()).await.unwrap();
        assert_eq!(sent.pending, program.prompt, "{}: {data:?}", program.name);
    }
    for n in 0..STEPS {
        let (data, printed) = (program.step)(n);
        let start = Instant::now();
        let sent = send(data.clone()).await.unwrap();
        let took = start.elapsed();
        let lines: Vec<&str> = sent.delta.text.lines().collect();
        let echo = format!("{}{data}", program.prompt);
        let seen = format!(
            "{} step {n} ({data:?}): settled by {} after {took:?}; lines {lines:?}; pending {:?}",
            program.name, sent.settled_by, sent.pending
        );
        assert!(
            matches!(sent.settled_by, SettleReason::Input | SettleReason::Prompt),
            "{seen}"
        );
        assert_eq!(lines, [echo.as_str(), printed.as_str()], "{seen}");
        assert_eq!(sent.pending, program.prompt, "{seen}");
        assert!(!sent.delta.truncated, "{seen}");
    }
    pty.close(owner, &id).await.unwrap();
}

#[tokio::test]
async fn thirty_sends_to_node_each_reply_holds_its_own_step() {
    require("node");
    let (pty, owner) = service();
    let home = TempDir::new("node-round-trips");
    let program = Program {
        name: "node",
        open: at_home(OpenRequest::new("node"), &home).timeout(Duration::from_millis(20_000)),
        prompt: "> ",
        step: node_step,
    };
    round_trips(&pty, &owner, program, &[]).await;
    pty.shutdown().await;
}

#[tokio::test]
async fn thirty_sends_to_python_each_reply_holds_its_own_step() {
    let (pty, owner) = service();
    let home = TempDir::new("python-round-trips");
    let program = Program {
        name: "python3",
        open: at_home(OpenRequest::new(format!("{} -q", python3())), &home)
            .timeout(Duration::from_millis(20_000)),
        prompt: ">>> ",
        step: python_step,
    };
    round_trips(&pty, &owner, program, &["import time"]).await;
    pty.shutdown().await;
}

#[tokio::test]
async fn thirty_sends_to_bash_each_reply_holds_its_own_step() {
    let (pty, owner) = service();
    let program = Program {
        name: "bash",
        open: bash().timeout(Duration::from_millis(20_000)),
        prompt: "$ ",
        step: bash_step,
    };
    round_trips(&pty, &owner, program, &[]).await;
    pty.shutdown().await;
}
