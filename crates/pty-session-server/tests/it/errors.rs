//! Every error code of docs/tools.md, reached through the tools of the real binary: a result
//! with `isError: true`, text `CODE: message`, and no `structuredContent`.
//! FOREIGN_SESSION is in `owners`, CANCELLED in `cancel`.

use serde_json::json;

use crate::support::{assert_error, call, error_message, ok, open, stdio_server};

/// INVALID_ARGUMENT at the boundary: types, shapes and ranges, before any session is
/// touched.
#[tokio::test]
async fn bad_arguments_are_invalid_argument() {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let cases = [
        ("pty_open", json!({}), "missing field `command`"),
        ("pty_open", json!({"command": ""}), "command: is empty"),
        ("pty_open", json!({"command": "   "}), "command: is empty"),
        ("pty_open", json!({"command": 7}), "command:"),
        ("pty_open", json!({"command": "true", "cols": 0}), "cols: 0"),
        (
            "pty_open",
            json!({"command": "true", "rows": 1001}),
            "rows: 1001",
        ),
        (
            "pty_open",
            json!({"command": "true", "cols": 70_000}),
            "cols: 70000 is out of range; give 1..=1000",
        ),
        (
            "pty_send",
            json!({"id": "abcd2345", "data": "", "rows": 65_536}),
            "rows: 65536 is out of range; give 1..=1000",
        ),
        ("pty_open", json!({"command": "true", "cols": -3}), "cols:"),
        ("pty_open", json!({"command": "true", "cols": 1.5}), "cols:"),
        (
            "pty_open",
            json!({"command": "true", "timeoutMs": 600001}),
            "timeoutMs: 600001",
        ),
        (
            "pty_open",
            json!({"command": "true", "quietMs": 10_000_000}),
            "quietMs",
        ),
        (
            "pty_open",
            json!({"command": "true", "quietMs": 0}),
            "quietMs: 0",
        ),
        (
            "pty_open",
            json!({"command": "true", "settle": "sometimes"}),
            "`auto`, `quiet`, `none`",
        ),
        (
            "pty_open",
            json!({"command": "true", "echo": "yes"}),
            "echo:",
        ),
        (
            "pty_open",
            json!({"command": "true", "env": {"A=B": "x"}}),
            r#""A=B""#,
        ),
        (
            "pty_open",
            json!({"command": "true", "env": {"": "x"}}),
            "env",
        ),
        (
            "pty_open",
            json!({"command": "true", "env": {"A": 1}}),
            "env.A:",
        ),
        (
            "pty_open",
            json!({"command": "true", "env": ["A=1"]}),
            "env:",
        ),
        ("pty_open", json!({"command": "true", "until": ""}), "until"),
        (
            "pty_open",
            json!({"command": "true", "timeout_ms": 5}),
            "unknown field `timeout_ms`",
        ),
        ("pty_open", json!({"command": "a\u{0}b"}), "NUL"),
        ("pty_send", json!({"data": "x"}), "missing field `id`"),
        (
            "pty_send",
            json!({"id": "abcd2345"}),
            "give data (text to type) or keys",
        ),
        (
            "pty_send",
            json!({"id": "abcd2345", "data": "x", "keys": ["Enter"]}),
            "either data or keys, not both",
        ),
        (
            "pty_send",
            json!({"id": "abcd2345", "keys": ["C-"]}),
            "modifier without a key",
        ),
        (
            "pty_send",
            json!({"id": "abcd2345", "data": "", "cols": 0}),
            "cols: 0 is out of range",
        ),
        ("pty_screen", json!({}), "missing field `id`"),
        ("pty_send", json!({"id": 5, "data": "x"}), "id:"),
        (
            "pty_send",
            json!({"id": "abcd2345", "data": "x", "submit": 1}),
            "submit:",
        ),
        (
            "pty_send",
            json!({"id": "abcd2345", "data": "x", "timeoutMs": "soon"}),
            "timeoutMs:",
        ),
        (
            "pty_send",
            json!({"id": "abcd2345", "data": "x".repeat(1024 * 1024 + 1)}),
            "1 MiB",
        ),
        ("pty_tail", json!({}), "missing field `id`"),
        (
            "pty_tail",
            json!({"id": "abcd2345", "lines": 0}),
            "lines: 0",
        ),
        (
            "pty_open",
            json!({"command": "true", "lines": 0}),
            "lines: 0",
        ),
        (
            "pty_send",
            json!({"id": "abcd2345", "data": "x", "lines": 0}),
            "lines: 0",
        ),
        (
            "pty_tail",
            json!({"id": "abcd2345", "lines": 100_001}),
            "lines: 100001",
        ),
        ("pty_tail", json!({"id": null}), "id:"),
        ("pty_close", json!({}), "missing field `id`"),
        ("pty_close", json!({"id": ["abcd2345"]}), "id:"),
        (
            "pty_close",
            json!({"id": "abcd2345", "force": true}),
            "unknown field `force`",
        ),
    ];
    for (tool, arguments, expected) in cases {
        let result = call(client, tool, arguments.clone()).await;
        assert_error(&result, "INVALID_ARGUMENT");
        let message = error_message(&result);
        assert!(
            message.contains(expected),
            "{tool} {arguments:.80}: {message:?} names {expected:?}"
        );
    }
}

/// INVALID_ARGUMENT from the service: what only it can check.
#[tokio::test]
async fn a_missing_cwd_is_invalid_argument() {
    let server = stdio_server(&[]).await;
    for cwd in ["/nonexistent/dir", "/etc/passwd"] {
        let result = call(
            &server.client,
            "pty_open",
            json!({"command": "true", "cwd": cwd}),
        )
        .await;
        assert_error(&result, "INVALID_ARGUMENT");
    }
}

#[tokio::test]
async fn unknown_sessions() {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    for (tool, arguments) in [
        ("pty_send", json!({"id": "nosuch99", "data": "x"})),
        ("pty_tail", json!({"id": "nosuch99"})),
    ] {
        assert_error(&call(client, tool, arguments).await, "UNKNOWN_SESSION");
    }
    let result = call(client, "pty_close", json!({"id": "nosuch99"})).await;
    assert_eq!(
        ok(&result)["closed"],
        false,
        "close of an unknown id is not an error"
    );

    // A closed session answers UNKNOWN_SESSION from then on.
    let (id, _) = open(client, json!({"command": "exec cat"})).await;
    assert_eq!(
        ok(&call(client, "pty_close", json!({"id": id})).await)["closed"],
        true
    );
    assert_error(
        &call(client, "pty_tail", json!({"id": id})).await,
        "UNKNOWN_SESSION",
    );
    assert_error(
        &call(client, "pty_send", json!({"id": id, "data": "x"})).await,
        "UNKNOWN_SESSION",
    );
}

#[tokio::test]
async fn spawn_failed() {
    let server = stdio_server(&["--backend-type", "exec"]).await;
    let result = call(
        &server.client,
        "pty_open",
        json!({"command": "/nonexistent/program --flag"}),
    )
    .await;
    assert_error(&result, "SPAWN_FAILED");
}

#[tokio::test]
async fn session_limit_lists_the_open_sessions() {
    let server = stdio_server(&["--max-sessions-per-owner", "2"]).await;
    let client = &server.client;
    let (a, _) = open(client, json!({"command": "exec cat"})).await;
    let (b, _) = open(client, json!({"command": "exec cat"})).await;
    let result = call(client, "pty_open", json!({"command": "exec cat"})).await;
    assert_error(&result, "SESSION_LIMIT");
    let message = error_message(&result).to_owned();
    assert!(
        message.contains(&a) && message.contains(&b),
        "lists the open ids: {message}"
    );

    // Closing one makes room.
    call(client, "pty_close", json!({"id": a})).await;
    let _ = open(client, json!({"command": "exec cat"})).await;
}

#[tokio::test]
async fn not_running() {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let (id, _) = open(client, json!({"command": "echo done"})).await;
    let result = call(client, "pty_send", json!({"id": id, "data": "more"})).await;
    assert_error(&result, "NOT_RUNNING");
    // Its output can still be tailed.
    let tail = call(client, "pty_tail", json!({"id": id})).await;
    assert_eq!(ok(&tail)["status"], "exited");
}

#[tokio::test]
async fn write_timeout_says_how_much_went_in() {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    // Raw mode without a reader: the terminal's input queue fills and writes block.
    let (id, _) = open(
        client,
        json!({"command": "stty raw -echo; exec sleep 300", "settle": "quiet"}),
    )
    .await;
    let result = call(
        client,
        "pty_send",
        json!({"id": id, "data": "y".repeat(1024 * 1024), "timeoutMs": 1000}),
    )
    .await;
    assert_error(&result, "WRITE_TIMEOUT");
    let message = error_message(&result).to_owned();
    assert!(message.contains("bytes"), "{message}");
}
