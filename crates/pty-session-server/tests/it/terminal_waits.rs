//! "Settled by input" is never false, and prompts read from `/dev/tty` settle by input
//! (docs/tools.md, "Settling"), through the real binary over MCP stdio with the default settle:
//! also a daemon's dialog outside the foreground group (pinentry) and mc's subshell.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{bash, call, ok, open, scratch, send_waiting, stdio_server, text};
use pty_session_testkit::require;

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

/// What the session's window shows now.
async fn screen(client: &crate::support::Client, id: &str) -> String {
    text(&call(client, "pty_screen", json!({"id": id})).await).to_owned()
}

/// A command typed on mc's command line runs in mc's subshell, on the subshell's own
/// terminal: the call waits for it, and ends by input once the subshell waits at its
/// prompt again, not on quiet while the command runs.
#[tokio::test]
async fn a_command_in_mcs_subshell_is_waited_for_over_mcp() {
    require("mc");
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let home = scratch("mc-subshell");
    let home_text = home.to_str().unwrap();
    let opened = call(
        client,
        "pty_open",
        json!({
            "command": "mc",
            "cwd": home_text,
            "env": {"HOME": home_text, "XDG_CONFIG_HOME": home_text, "SHELL": "/bin/bash"},
            "timeoutMs": 20000,
        }),
    )
    .await;
    let value = ok(&opened);
    let id = value["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(value["settledBy"], "input", "{}", screen(client, &id).await);
    let (sent, took) = send_waiting(client, &id, "sleep 1.5; echo slow > f").await;
    let written = std::fs::read_to_string(home.join("f")).unwrap_or_default();
    let seen = format!(
        "after {took:?}: settled by {}; {}",
        sent["settledBy"],
        screen(client, &id).await
    );
    assert_eq!(written, "slow\n", "{seen}");
    assert_eq!(sent["settledBy"], "input", "{seen}");
    assert!(took >= Duration::from_millis(1_400), "{seen}");
    ok(&call(client, "pty_close", json!({"id": id})).await);
    std::fs::remove_dir_all(&home).ok();
}

/// gpg asks for a passphrase through gpg-agent's pinentry-curses, in a private
/// GNUPGHOME: gpg waits on the agent's socket, and the pinentry (the agent's child,
/// setsid and double-forked away, under the session's shim) draws its dialog and waits
/// on the terminal. Each dialog ends its call within a moment, not at the timeout, and
/// the passphrases typed into them encrypt the file.
#[tokio::test]
async fn a_pinentry_dialog_ends_the_wait_over_mcp() {
    require("gpg");
    require("pinentry-curses");
    // gpg-agent's socket path must fit in a `sockaddr_un`: a short directory.
    let home = tempfile::Builder::new()
        .prefix("ptyg")
        .tempdir_in("/tmp")
        .unwrap();
    let home = home.path();
    let gnupg = pty_session_testkit::gnupg_home(home);
    std::fs::write(home.join("plain"), "attack at dawn\n").unwrap();
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let start = Instant::now();
    let opened = call(
        client,
        "pty_open",
        json!({
            "command": "sh -c 'GPG_TTY=$(tty) exec gpg --pinentry-mode ask --symmetric --output crypt plain'",
            "cwd": home.to_str().unwrap(),
            "env": {"GNUPGHOME": gnupg.to_str().unwrap()},
            "timeoutMs": 20000,
        }),
    )
    .await;
    let took = start.elapsed();
    let value = ok(&opened).clone();
    let id = value["sessionId"].as_str().unwrap().to_owned();
    let shown = screen(client, &id).await;
    assert_ne!(value["settledBy"], "timeout", "after {took:?}: {shown}");
    assert!(took < Duration::from_secs(12), "{took:?}: {shown}");
    assert!(shown.contains("Passphrase:"), "after {took:?}: {shown}");
    // The passphrase, then its repetition: each dialog ends its call.
    for _ in 0..2 {
        let (sent, took) = send_waiting(client, &id, "s3cret-phrase").await;
        let shown = screen(client, &id).await;
        assert_ne!(sent["settledBy"], "timeout", "after {took:?}: {shown}");
        assert!(took < Duration::from_secs(12), "{took:?}: {shown}");
        if sent["status"] != "running" {
            break;
        }
    }
    crate::support::eventually("gpg to write the file", || {
        std::fs::metadata(home.join("crypt")).is_ok_and(|m| m.len() > 0)
    })
    .await;
    ok(&call(client, "pty_close", json!({"id": id})).await);
}
