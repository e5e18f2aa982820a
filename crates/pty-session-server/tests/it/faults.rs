//! Faults and floods: the PTY table running out, and thousands of malformed calls.

use std::collections::HashSet;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

use crate::support::{BIN, assert_error, call, error_message, ok, open, stdio_server_from};

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .any(|line| line.starts_with("Uid:") && line.split_whitespace().nth(2) == Some("0"))
    })
}

/// Runs the server in a mount namespace of its own with a private devpts instance that
/// holds at most `max` terminals, so the kernel's refusal is real and touches nothing else
/// on the machine. Needs root (CI runs as root).
fn server_with_pty_limit(max: u32) -> Option<Command> {
    if !is_root() {
        eprintln!("NOTE: not root: the PTY-exhaustion test needs a private devpts (unshare -m)");
        return None;
    }
    let mut command = Command::new("unshare");
    command.args([
        "--mount",
        "sh",
        "-c",
        &format!(
            "mount -t devpts -o newinstance,ptmxmode=0666,max={max} devpts /dev/pts && \
             mount --bind /dev/pts/ptmx /dev/ptmx && exec \"$0\" mcp"
        ),
        BIN,
    ]);
    Some(command)
}

#[tokio::test]
async fn when_the_kernel_has_no_pty_left_open_fails_and_recovers() {
    let Some(command) = server_with_pty_limit(4) else {
        assert!(!is_root());
        return;
    };
    let server = stdio_server_from(command).await;
    let client = &server.client;
    let mut ids = Vec::new();
    let failure = loop {
        let result = call(client, "pty_open", json!({"command": "cat"})).await;
        if result.is_error == Some(true) {
            break result;
        }
        ids.push(ok(&result)["sessionId"].as_str().unwrap().to_owned());
        assert!(ids.len() <= 4, "the limit of 4 terminals was not enforced");
    };
    assert_eq!(ids.len(), 4, "every terminal of the instance was usable");
    assert_error(&failure, "SPAWN_FAILED");
    let message = error_message(&failure).to_owned();
    assert!(message.contains("pseudo-terminal"), "{message}");
    // The open sessions are untouched and still answer.
    let sent = call(
        client,
        "pty_send",
        json!({"id": ids[0], "data": "still here"}),
    )
    .await;
    assert_eq!(ok(&sent)["delta"], "still here\nstill here\n");
    for id in &ids {
        assert_eq!(
            ok(&call(client, "pty_close", json!({"id": id})).await)["closed"],
            true
        );
    }
    // Everything works again once they are closed.
    let (id, _) = open(client, json!({"command": "cat"})).await;
    let sent = call(client, "pty_send", json!({"id": id, "data": "again"})).await;
    assert_eq!(ok(&sent)["delta"], "again\nagain\n");
}

/// One malformed `tools/call` line of JSON-RPC, number `n` of a deterministic mix.
fn malformed(n: usize, victim: &str) -> String {
    let id = n + 100;
    let args: Value = match n % 12 {
        0 => json!({"command": n}),
        1 => json!({"command": "", "cols": -1}),
        2 => json!({"id": victim.to_uppercase(), "data": "x"}),
        3 => json!({"id": format!("nosuch{n}"), "data": "x", "timeoutMs": "soon"}),
        4 => json!({"id": [victim], "data": {"a": 1}}),
        5 => json!({"id": "x".repeat(n % 5000), "lines": -5}),
        6 => json!(null),
        7 => json!({"command": "true", "env": {"": "x", "A=B": 1}}),
        8 => json!({"id": victim, "data": "x", "submit": "yes"}),
        9 => json!({"id": victim, "lines": 0}),
        10 => json!({"command": "true", "cwd": "\u{0}/etc"}),
        _ => json!({"id": victim, "settle": "sometime", "data": "x"}),
    };
    let tool = ["pty_open", "pty_send", "pty_tail", "pty_close", "pty_nope"][n % 5];
    let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": tool, "arguments": args}})
    .to_string();
    match n % 50 {
        // Invalid UTF-8 through JSON escapes: a lone surrogate, which no string can hold.
        7 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"pty_send","arguments":{{"id":"{victim}","data":"\ud800\udfff\udc00"}}}}}}"#
        ),
        // Not JSON at all, and JSON that is not JSON-RPC.
        13 => "{\"jsonrpc\": \"2.0\", \"id\": ".to_owned(),
        17 => json!([1, 2, 3]).to_string(),
        _ => line,
    }
}

async fn write_line(stdin: &mut tokio::process::ChildStdin, line: &str) {
    stdin.write_all(line.as_bytes()).await.unwrap();
    stdin.write_all(b"\n").await.unwrap();
}

#[tokio::test]
async fn ten_thousand_malformed_calls_leave_the_server_and_other_sessions_alone() {
    let mut child = Command::new(BIN)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "flood", "version": "0"}}});
    write_line(&mut stdin, &initialize.to_string()).await;
    let _ = lines.next_line().await.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    write_line(&mut stdin, &initialized.to_string()).await;
    let open = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "pty_open", "arguments": {"command": "cat"}}});
    write_line(&mut stdin, &open.to_string()).await;
    let opened: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    let victim = opened["result"]["structuredContent"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();

    // Every well-formed request gets an answer; the three broken lines of each fifty get
    // none with an id. Calls run concurrently, so answers come in any order: the reader
    // waits for the check's answer *and* for every malformed request's.
    let expected: HashSet<u64> = (0..10_000)
        .filter(|n| ![7, 13, 17].contains(&(n % 50)))
        .map(|n| n as u64 + 100)
        .collect();
    // Read while writing, so that neither pipe fills up.
    let reader = tokio::spawn(async move {
        let mut errors = HashSet::new();
        let mut check = None;
        while let Ok(Some(line)) = lines.next_line().await {
            let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            let Some(id) = message["id"].as_u64() else {
                continue;
            };
            if id == 99 {
                check = Some(message);
            } else if message["result"]["isError"] == json!(true) || message.get("error").is_some()
            {
                errors.insert(id);
            } else {
                panic!("a malformed call succeeded: {message}");
            }
            if expected.is_subset(&errors)
                && let Some(check) = check.take()
            {
                return (errors.len(), check);
            }
        }
        panic!(
            "the server closed stdout after {} error answers",
            errors.len()
        );
    });
    for n in 0..10_000 {
        write_line(&mut stdin, &malformed(n, &victim)).await;
    }
    let check = json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                       "params": {"name": "pty_send",
                                  "arguments": {"id": victim, "data": "untouched"}}});
    write_line(&mut stdin, &check.to_string()).await;
    let (answered, last) = tokio::time::timeout(Duration::from_secs(120), reader)
        .await
        .expect("every well-formed call is answered within 2 minutes")
        .unwrap();
    assert_eq!(
        last["result"]["structuredContent"]["delta"], "untouched\nuntouched\n",
        "the other session lost or gained something: {last}"
    );
    assert_eq!(
        answered, 9_400,
        "each well-formed bad call got one error answer"
    );
    assert!(
        child.try_wait().unwrap().is_none(),
        "the server is still running"
    );
}

/// The default `maxSessions` needs more descriptors than a common soft limit of 1,024
/// allows. With a soft limit of 128, 80 sessions (160 descriptors) open all the same, and
/// a command still gets 128.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_open_beyond_the_soft_open_file_limit_and_commands_keep_it() {
    let mut command = Command::new("sh");
    command.args([
        "-c",
        "ulimit -Sn 128 && exec \"$0\" mcp --max-sessions-per-owner 100",
        BIN,
    ]);
    let server = stdio_server_from(command).await;
    let client = &server.client;
    let mut ids = Vec::new();
    for _ in 0..80 {
        let result = call(client, "pty_open", json!({"command": "cat"})).await;
        ids.push(ok(&result)["sessionId"].as_str().unwrap().to_owned());
    }
    let opened = call(client, "pty_open", json!({"command": "ulimit -Sn; cat"})).await;
    let shown = ok(&opened)["initialOutput"].as_str().unwrap().to_owned();
    ids.push(ok(&opened)["sessionId"].as_str().unwrap().to_owned());
    for id in &ids {
        ok(&call(client, "pty_close", json!({"id": id})).await);
    }
    assert_eq!(shown.trim(), "128", "the command's soft limit");
}
