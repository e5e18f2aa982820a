//! Thirty sends in a row to python3, node and bash through the real binary over MCP
//! stdio, each reply holding exactly its own step: the echo of what it typed, the step's
//! output, the prompt pending; never a line of the step before (a reply a step behind)
//! nor after.

use serde_json::{Value, json};

use crate::support::{at_home, bash, call, ok, open, scratch, send_waiting, stdio_server};

/// The real python3 interpreter, not a shim on PATH that reads its pipes while it starts.
fn python3() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 must be installed for these tests");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// One program's round trips: `pty_open`'s arguments, its prompt, what may end a step's
/// wait, sends whose replies are not checked beyond their prompt, and step `n`'s send
/// (every fifth one pauses before its line: the reply must wait for it).
struct Program {
    open: Value,
    prompt: &'static str,
    settled_by: &'static [&'static str],
    setup: &'static [&'static str],
    step: fn(u64, bool) -> String,
}

async fn round_trips(name: &str, program: Program) {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let home = scratch(&format!("{name}-round-trips"));
    let (id, _) = open(client, at_home(program.open, &home)).await;
    for data in program.setup {
        let result = call(client, "pty_send", json!({"id": id, "data": data})).await;
        assert_eq!(ok(&result)["pending"], program.prompt, "{name}: {data:?}");
    }
    for n in 0..30u64 {
        let data = (program.step)(n, n % 5 == 4);
        let (sent, took) = send_waiting(client, &id, &data).await;
        let lines: Vec<&str> = sent["delta"].as_str().unwrap_or_default().lines().collect();
        let seen = format!(
            "{name} step {n} ({data:?}): settled by {} after {:?}; lines {lines:?}; pending {}",
            sent["settledBy"], took, sent["pending"]
        );
        let settled_by = sent["settledBy"].as_str().unwrap_or_default();
        assert!(program.settled_by.contains(&settled_by), "{seen}");
        let echo = format!("{}{data}", program.prompt);
        let printed = (1000 + n * 7).to_string();
        assert_eq!(lines, [echo.as_str(), printed.as_str()], "{seen}");
        assert_eq!(sent["pending"], program.prompt, "{seen}");
    }
    ok(&call(client, "pty_close", json!({"id": id})).await);
    std::fs::remove_dir_all(&home).ok();
}

#[tokio::test]
async fn thirty_sends_to_python_over_mcp_each_reply_holds_its_own_step() {
    let program = Program {
        open: json!({"command": format!("{} -q", python3()), "timeoutMs": 20000}),
        prompt: ">>> ",
        settled_by: &["input"],
        setup: &["import time"],
        step: |n, slow| {
            if slow {
                format!("time.sleep(0.15) or print(1000 + {n} * 7)")
            } else {
                format!("print(1000 + {n} * 7)")
            }
        },
    };
    round_trips("python", program).await;
}

#[tokio::test]
async fn thirty_sends_to_node_over_mcp_each_reply_holds_its_own_step() {
    let program = Program {
        open: json!({"command": "node", "timeoutMs": 20000}),
        prompt: "> ",
        settled_by: &["input"],
        setup: &[],
        step: |n, slow| {
            if slow {
                format!("await new Promise(r => setTimeout(() => r(1000 + {n} * 7), 150))")
            } else {
                format!("1000 + {n} * 7")
            }
        },
    };
    round_trips("node", program).await;
}

#[tokio::test]
async fn thirty_sends_to_bash_over_mcp_each_reply_holds_its_own_step() {
    let mut open = bash();
    open["timeoutMs"] = json!(20000);
    let program = Program {
        open,
        prompt: "$ ",
        // The shell's prompt mark (shell integration), or input wait at its prompt.
        settled_by: &["prompt", "input"],
        setup: &[],
        step: |n, slow| {
            if slow {
                format!("sleep 0.15; echo $((1000 + {n} * 7))")
            } else {
                format!("echo $((1000 + {n} * 7))")
            }
        },
    };
    round_trips("bash", program).await;
}
