//! "Settled by input" is never false, and prompts read from `/dev/tty` settle by input
//! (docs/tools.md, "Settling"), through the real binary over MCP stdio with the default settle.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{bash, call, ok, open, scratch, stdio_server, text};

/// Sends `data` to session `id` with the default settle; the result and how long it took.
async fn send(client: &crate::support::Client, id: &str, data: &str) -> (Value, Duration) {
    let start = Instant::now();
    let result = call(client, "pty_send", json!({"id": id, "data": data})).await;
    let took = start.elapsed();
    (ok(&result).clone(), took)
}

fn has_line(value: &Value, field: &str, line: &str) -> bool {
    value[field]
        .as_str()
        .is_some_and(|text| text.lines().any(|l| l.trim() == line))
}

#[tokio::test]
async fn node_await_and_exit_settle_truthfully() {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let opened = call(
        client,
        "pty_open",
        json!({"command": "node", "timeoutMs": 20000}),
    )
    .await;
    let value = ok(&opened);
    assert_eq!(
        (value["settledBy"].as_str(), value["pending"].as_str()),
        (Some("input"), Some("> ")),
        "{value}"
    );
    let id = value["sessionId"].as_str().unwrap().to_owned();
    let (sent, took) = send(
        client,
        &id,
        "await new Promise(r => setTimeout(() => r(42), 1000))",
    )
    .await;
    assert_eq!(
        (sent["settledBy"].as_str(), sent["pending"].as_str()),
        (Some("input"), Some("> ")),
        "after {took:?}: {sent}"
    );
    assert!(has_line(&sent, "delta", "42"), "after {took:?}: {sent}");
    let (sent, took) = send(client, &id, ".exit").await;
    assert_eq!(
        (sent["settledBy"].as_str(), sent["status"].as_str()),
        (Some("exit"), Some("exited")),
        "after {took:?}: {sent}"
    );
}

#[tokio::test]
async fn read_with_a_timeout_and_password_prompts_settle_by_input() {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let (id, _) = open(client, bash()).await;
    let (sent, took) = send(client, &id, "read -t 0.7 x; echo rc=$?").await;
    assert_eq!(sent["settledBy"], "input", "after {took:?}: {sent}");
    assert!(has_line(&sent, "delta", "rc=142"), "after {took:?}: {sent}");

    let (sent, took) = send(
        client,
        &id,
        "read -s -p 'pw: ' x < /dev/tty; echo; echo len=${#x}",
    )
    .await;
    assert_eq!(
        (sent["settledBy"].as_str(), sent["pending"].as_str()),
        (Some("input"), Some("pw: ")),
        "after {took:?}: {sent}"
    );
    let (sent, took) = send(client, &id, "hello").await;
    assert!(has_line(&sent, "delta", "len=5"), "after {took:?}: {sent}");

    let key = scratch("mcp-keygen").join("key");
    let (sent, took) = send(
        client,
        &id,
        &format!("ssh-keygen -q -t ed25519 -C test -f {}", key.display()),
    )
    .await;
    assert_eq!(sent["settledBy"], "input", "after {took:?}: {sent}");
    assert!(
        sent["pending"]
            .as_str()
            .is_some_and(|p| p.starts_with("Enter passphrase")),
        "after {took:?}: {sent}"
    );
    let (sent, took) = send(client, &id, "pass phrase").await;
    assert_eq!(
        (sent["settledBy"].as_str(), sent["pending"].as_str()),
        (Some("input"), Some("Enter same passphrase again: ")),
        "after {took:?}: {sent}"
    );
    let status = text(&call(client, "pty_send", json!({"id": id, "data": "pass phrase"})).await)
        .rsplit('\n')
        .next()
        .unwrap()
        .to_owned();
    assert!(status.contains("settled by input"), "{status}");
    assert!(key.exists(), "ssh-keygen wrote the key");
}
