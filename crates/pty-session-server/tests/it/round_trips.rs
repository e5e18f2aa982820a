//! Thirty sends in a row to python3 through the real binary over MCP stdio, each reply
//! holding exactly its own step: the echo of what it typed, the step's output, the prompt
//! pending; never a line of the step before (a reply a step behind) nor after.

use std::time::Instant;

use serde_json::json;

use crate::support::{at_home, call, ok, open, scratch, stdio_server};

/// The real python3 interpreter, not a shim on PATH that reads its pipes while it starts.
fn python3() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 must be installed for these tests");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[tokio::test]
async fn thirty_sends_to_python_over_mcp_each_reply_holds_its_own_step() {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let home = scratch("python-round-trips");
    let arguments = json!({"command": format!("{} -q", python3()), "timeoutMs": 20000});
    let (id, _) = open(client, at_home(arguments, &home)).await;
    let setup = call(client, "pty_send", json!({"id": id, "data": "import time"})).await;
    assert_eq!(ok(&setup)["pending"], ">>> ");
    for n in 0..30u64 {
        // Every fifth step pauses before its line: the reply must wait for it.
        let data = if n % 5 == 4 {
            format!("time.sleep(0.15) or print(1000 + {n} * 7)")
        } else {
            format!("print(1000 + {n} * 7)")
        };
        let start = Instant::now();
        let result = call(
            client,
            "pty_send",
            json!({"id": id, "data": data, "timeoutMs": 20000}),
        )
        .await;
        let sent = ok(&result);
        let lines: Vec<&str> = sent["delta"].as_str().unwrap_or_default().lines().collect();
        let seen = format!(
            "step {n} ({data:?}): settled by {} after {:?}; lines {lines:?}; pending {}",
            sent["settledBy"],
            start.elapsed(),
            sent["pending"]
        );
        assert_eq!(sent["settledBy"], "input", "{seen}");
        let (echo, printed) = (format!(">>> {data}"), (1000 + n * 7).to_string());
        assert_eq!(lines, [echo.as_str(), printed.as_str()], "{seen}");
        assert_eq!(sent["pending"], ">>> ", "{seen}");
    }
    ok(&call(client, "pty_close", json!({"id": id})).await);
    std::fs::remove_dir_all(&home).ok();
}
