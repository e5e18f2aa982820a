//! Plain `ssh` to a local sshd through the real binary over MCP stdio, with the default
//! settle: ssh sleeps in poll on the terminal *and* its socket, so a settle
//! there never ends on input, but when the remote prompt comes back (`settledBy:
//! "prompt"`), at the open and after every command.

use std::time::{Duration, Instant};

use pty_session_testkit::sshd::{PROFILE_GREETING, Sshd, is_shell_prompt};
use serde_json::{Value, json};

use crate::support::{Client, call, ok, send_waiting, stdio_server};

/// Sends `data` to session `id` with the default settle; the reply and what it showed.
async fn send(client: &Client, id: &str, data: &str) -> (Value, String) {
    let (sent, took) = send_waiting(client, id, data).await;
    let seen = shows(data, &sent, "delta", took);
    (sent, seen)
}

/// What a reply showed, for failure messages.
fn shows(what: &str, reply: &Value, output: &str, took: Duration) -> String {
    format!(
        "{what:?}: settled by {} after {took:?}; {output} {}; pending {}",
        reply["settledBy"], reply[output], reply["pending"]
    )
}

/// Whether `field` of `reply` has the line `line` (not merely the echoed command holding it).
fn has_line(reply: &Value, field: &str, line: &str) -> bool {
    reply[field]
        .as_str()
        .is_some_and(|text| text.lines().any(|l| l.trim_end() == line))
}

fn pending(reply: &Value) -> &str {
    reply["pending"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn ssh_over_mcp_with_the_default_settle_ends_when_the_prompt_comes_back() {
    let sshd = Sshd::start().await;
    let server = stdio_server(&[]).await;
    let client = &server.client;

    // The open: ssh is silent while it connects and logs in, longer than the quiet
    // period; the open ends at the remote prompt.
    let start = Instant::now();
    let opened = open_ssh(client, &sshd).await;
    let seen = shows("open", &opened, "initialOutput", start.elapsed());
    assert_eq!(
        opened["settledBy"],
        "prompt",
        "{seen}\nsshd's log:\n{}",
        sshd.log().await
    );
    assert!(is_shell_prompt(pending(&opened), "~"), "{seen}");
    assert!(
        has_line(&opened, "initialOutput", PROFILE_GREETING),
        "{seen}"
    );
    let id = opened["sessionId"].as_str().unwrap().to_owned();

    // Two seconds of silence, then the line: whole in the send's own reply.
    let (sent, seen) = send(client, &id, "sleep 2; echo done").await;
    assert_eq!(sent["settledBy"], "prompt", "{seen}");
    assert!(has_line(&sent, "delta", "done"), "{seen}");
    assert!(is_shell_prompt(pending(&sent), "~"), "{seen}");

    // `cd` changes the prompt; the next command still ends at it, with its output.
    let (sent, seen) = send(client, &id, "cd /tmp").await;
    assert_eq!(sent["settledBy"], "prompt", "{seen}");
    assert!(is_shell_prompt(pending(&sent), "/tmp"), "{seen}");
    let (sent, seen) = send(client, &id, "sleep 0.5; pwd").await;
    assert_eq!(sent["settledBy"], "prompt", "{seen}");
    assert!(has_line(&sent, "delta", "/tmp"), "{seen}");
    assert!(is_shell_prompt(pending(&sent), "/tmp"), "{seen}");

    // A remote python REPL: its prompt `>>> `, at the start and after a slow statement.
    send_to_prompt(client, &id, "/usr/bin/python3 -q", ">>> ").await;
    let (sent, seen) = send_to_prompt(
        client,
        &id,
        "import time; time.sleep(0.6); print(6*7)",
        ">>> ",
    )
    .await;
    assert!(has_line(&sent, "delta", "42"), "{seen}");

    let closed = call(client, "pty_close", json!({"id": id})).await;
    ok(&closed);
}

/// Opens plain `ssh` to `sshd` with its key, with a timeout of 20 s; the result.
async fn open_ssh(client: &Client, sshd: &Sshd) -> Value {
    let command = sshd.ssh_command("id_ed25519", true);
    let result = call(
        client,
        "pty_open",
        json!({"command": command, "timeoutMs": 20000}),
    )
    .await;
    ok(&result).clone()
}

/// Sends `data` to session `id` with the default settle and asserts that it ended by the
/// remote prompt, with `prompt` pending; the reply and what it showed.
async fn send_to_prompt(client: &Client, id: &str, data: &str, prompt: &str) -> (Value, String) {
    let (sent, seen) = send(client, id, data).await;
    assert_eq!(
        (sent["settledBy"].as_str(), pending(&sent)),
        (Some("prompt"), prompt),
        "{seen}"
    );
    (sent, seen)
}

/// Sends `data` to session `id` with the default settle, or with `until`; the reply and
/// what it showed.
async fn send_until(client: &Client, id: &str, data: &str, until: &str) -> (Value, String) {
    let start = Instant::now();
    let result = call(
        client,
        "pty_send",
        json!({"id": id, "data": data, "until": until, "timeoutMs": 20000}),
    )
    .await;
    let sent = ok(&result).clone();
    let seen = shows(data, &sent, "delta", start.elapsed());
    (sent, seen)
}

/// Remote programs' own prompts, not a shell's, end the wait by the prompt the first
/// time they show: python's continuation `... `, `(gdb) ` and its questions, pdb's
/// `(Pdb) `. A prompt of no known shape ends it too once the session learned it from an
/// echo line (the text before the echo of a send is where the program took the input).
#[tokio::test]
async fn remote_programs_prompts_end_the_wait_over_mcp() {
    let sshd = Sshd::start().await;
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let opened = open_ssh(client, &sshd).await;
    assert_eq!(
        opened["settledBy"],
        "prompt",
        "{opened}\nsshd's log:\n{}",
        sshd.log().await
    );
    let id = opened["sessionId"].as_str().unwrap().to_owned();
    let script = std::env::temp_dir().join(format!("pdb-mcp-{}.py", std::process::id()));
    std::fs::write(&script, "x = 6\nprint(x * 7)\n").unwrap();
    let pdb = format!("/usr/bin/python3 -m pdb {}", script.display());
    let steps: &[(&str, &str)] = &[
        ("/usr/bin/python3 -q", ">>> "),
        ("def f():", "... "),
        ("  return 6*7", "... "),
        ("", ">>> "),
        ("exit()", "$ "),
        ("gdb -q -nx", "(gdb) "),
        ("break nosuch", "(y or [n]) "),
        ("y", "(gdb) "),
        ("delete", "(y or n) "),
        ("y", "(gdb) "),
        ("quit", "$ "),
        (&pdb, "(Pdb) "),
        ("next", "(Pdb) "),
        ("quit", "$ "),
    ];
    for (data, prompt) in steps {
        let (sent, seen) = send(client, &id, data).await;
        assert_eq!(sent["settledBy"], "prompt", "{seen}");
        assert!(pending(&sent).ends_with(prompt), "{seen}");
    }
    std::fs::remove_file(&script).ok();

    // A prompt of no known ending (`go! `): set by a wait for it, then learned from the
    // echo line of a command typed at it.
    let (sent, seen) = send_until(client, &id, "PS1='go! '", "^go! $").await;
    assert_eq!(sent["settledBy"], "match", "{seen}");
    let (sent, seen) = send_to_prompt(client, &id, "echo one", "go! ").await;
    assert!(has_line(&sent, "delta", "one"), "{seen}");
    // A shell inside, with a prompt of its own; leaving it, the send was made at that
    // prompt and `go! ` has neither its shape nor a known ending: it is the learned text
    // that ends the wait.
    send_to_prompt(
        client,
        &id,
        "PS1='inner$ ' bash --norc --noprofile",
        "inner$ ",
    )
    .await;
    send_to_prompt(client, &id, "exit", "go! ").await;

    ok(&call(client, "pty_close", json!({"id": id})).await);
}
