//! What a successful call returns, through the real binary over stdio: the structured
//! result with the camelCase fields of docs/tools.md, and a text block that is the output as it is
//! plus one bracketed status line (not a copy of the JSON).

use serde_json::json;

use std::cell::{Cell, RefCell};

use crate::support::{bash, call, eventually_async, ok, open, stdio_server, text};

/// The status line: the last line of the text block.
fn status_line(text: &str) -> &str {
    let line = text.rsplit('\n').next().unwrap();
    assert!(
        line.starts_with('[') && line.ends_with(']'),
        "a bracketed status line: {text:?}"
    );
    line
}

#[tokio::test]
async fn open_send_tail_close_round_trip() {
    let server = stdio_server(&[]).await;
    let client = &server.client;

    let opened = call(
        client,
        "pty_open",
        json!({"command": "printf 'hello\\n> '; exec cat"}),
    )
    .await;
    let value = ok(&opened);
    let id = value["sessionId"].as_str().unwrap();
    assert_eq!(id.len(), 8, "a short id: {id}");
    assert!(value["pid"].as_u64().unwrap() > 1);
    assert_eq!(value["status"], "running");
    assert_eq!(value["initialOutput"], "hello\n");
    assert_eq!(value["pending"], "> ");
    assert_eq!(value["truncated"], false);
    assert_eq!(value["skipped"], 0);
    assert_eq!(value["settledBy"], "input");
    assert!(value.get("exitCode").is_none() && value.get("signal").is_none());
    let text = text(&opened);
    assert!(
        text.starts_with("hello\n["),
        "output first, as it is: {text:?}"
    );
    assert_eq!(
        status_line(text),
        format!(
            "[{id} running · pid {} · settled by input · pending: \"> \"]",
            value["pid"]
        )
    );

    let sent = call(client, "pty_send", json!({"id": id, "data": "abc"})).await;
    let value = ok(&sent);
    assert_eq!(value["status"], "running");
    assert_eq!(value["settledBy"], "input");
    let delta = value["delta"].as_str().unwrap();
    assert!(
        delta.ends_with("abc\n"),
        "cat wrote the line back: {delta:?}"
    );
    assert!(text_has_no_json(crate::support::text(&sent)));

    let tail = call(client, "pty_tail", json!({"id": id})).await;
    let value = ok(&tail);
    assert_eq!(value["text"], "", "every line is delivered once");
    assert_eq!(value["lines"], 0);
    assert!(value["totalLines"].as_u64().unwrap() >= 2);
    assert_eq!(value["lineEnd"], value["totalLines"]);
    assert!(value.get("lineBegin").is_some());
    assert_eq!(value["status"], "running");

    let closed = call(client, "pty_close", json!({"id": id})).await;
    assert_eq!(ok(&closed)["closed"], true);
    assert_eq!(crate::support::text(&closed), format!("[{id} closed]"));
    let again = call(client, "pty_close", json!({"id": id})).await;
    assert_eq!(ok(&again)["closed"], false, "close is idempotent");
}

fn text_has_no_json(text: &str) -> bool {
    !text.contains("\"settledBy\"") && !text.contains("\"delta\"")
}

#[tokio::test]
async fn exit_codes_and_signals_are_reported() {
    let server = stdio_server(&[]).await;
    let client = &server.client;

    let result = call(client, "pty_open", json!({"command": "echo bye; exit 3"})).await;
    let value = ok(&result);
    assert_eq!(value["status"], "exited");
    assert_eq!(value["exitCode"], 3);
    assert_eq!(value["settledBy"], "exit");
    assert_eq!(value["initialOutput"], "bye\n");
    assert!(
        status_line(text(&result)).contains("exited · exit code 3"),
        "{}",
        text(&result)
    );

    let result = call(client, "pty_open", json!({"command": "kill -KILL $$"})).await;
    let value = ok(&result);
    assert_eq!(value["status"], "exited");
    assert_eq!(value["signal"], "SIGKILL");
    assert!(value.get("exitCode").is_none());
    assert!(
        status_line(text(&result)).contains("killed by SIGKILL"),
        "{}",
        text(&result)
    );
}

#[tokio::test]
async fn truncation_is_reported_with_the_skipped_count() {
    let server = stdio_server(&["--tail-lines", "5", "--scrollback-lines", "50"]).await;
    let client = &server.client;

    // Over the reply's budget (tailLines 5): the newest lines, and how many were left out.
    let result = call(client, "pty_open", json!({"command": "seq 1 12"})).await;
    let value = ok(&result);
    assert_eq!(
        value["initialOutput"], "8\n9\n10\n11\n12\n",
        "the newest lines"
    );
    assert_eq!(value["truncated"], true);
    assert_eq!(value["skipped"], 7);
    assert!(status_line(text(&result)).contains("truncated: 7 unread lines skipped"));

    // A call's own budget, over or under tailLines.
    let result = call(
        client,
        "pty_open",
        json!({"command": "seq 1 12", "lines": 12}),
    )
    .await;
    assert_eq!(ok(&result)["skipped"], 0);
    assert_eq!(
        ok(&result)["initialOutput"]
            .as_str()
            .unwrap()
            .lines()
            .count(),
        12
    );
    let (id, _) = open(client, json!({"command": "cat"})).await;
    let result = call(
        client,
        "pty_send",
        json!({"id": id, "data": "a\nb\nc", "lines": 2}),
    )
    .await;
    // The terminal echoes the three lines before cat copies them: the newest two are
    // cat's last two.
    assert_eq!(ok(&result)["delta"], "b\nc\n");
    assert_eq!(ok(&result)["skipped"], 4);

    // Out of the scrollback (50 lines) before they were read.
    let result = call(
        client,
        "pty_open",
        json!({"command": "seq 1 80", "timeoutMs": 20000}),
    )
    .await;
    let value = ok(&result);
    assert_eq!(value["truncated"], true);
    assert_eq!(
        value["skipped"], 75,
        "30 fell out of the scrollback, 45 over the budget"
    );
    assert_eq!(value["initialOutput"], "76\n77\n78\n79\n80\n");

    // A tail budget: each reply at most `lines`, and every line counted once, read or
    // skipped.
    let (id, _) = open(
        client,
        json!({"command": "seq 1 30; exec cat", "settle": "none"}),
    )
    .await;
    let (read, skipped, last) = (Cell::new(0), Cell::new(0), RefCell::new(String::new()));
    eventually_async("the 30 lines", || async {
        let result = call(client, "pty_tail", json!({"id": id, "lines": 2})).await;
        let value = ok(&result).clone();
        let lines = value["lines"].as_u64().unwrap();
        assert!(lines <= 2, "{value}");
        assert_eq!(
            value["truncated"],
            value["skipped"].as_u64().unwrap() > 0,
            "{value}"
        );
        read.set(read.get() + lines);
        skipped.set(skipped.get() + value["skipped"].as_u64().unwrap());
        if lines > 0 {
            *last.borrow_mut() = value["text"].as_str().unwrap().to_owned();
        }
        let counted = read.get() + skipped.get();
        if value["totalLines"] == 30 && counted == 30 {
            return true;
        }
        assert!(counted < 30, "no line counted twice: {value}");
        false
    })
    .await;
    let last = last.into_inner();
    assert!(last.ends_with("30\n"), "{last:?}");
}

#[tokio::test]
async fn ctrl_c_and_the_alternate_screen() {
    let server = stdio_server(&[]).await;
    let client = &server.client;

    let script = "trap 'echo GOT_INT; exit 5' INT; echo ready; while :; do sleep 0.1; done";
    let (id, _) = open(client, json!({"command": script, "until": "^ready$"})).await;
    let result = call(
        client,
        "pty_send",
        json!({"id": id, "data": "\u{3}", "submit": false}),
    )
    .await;
    let value = ok(&result);
    assert!(
        value["delta"].as_str().unwrap().contains("GOT_INT"),
        "{value}"
    );
    assert_eq!(value["status"], "exited");
    assert_eq!(value["exitCode"], 5);

    let result = call(
        client,
        "pty_open",
        json!({"command": "printf 'before\\n\\033[?1049hdrawn'; exec cat"}),
    )
    .await;
    let value = ok(&result);
    assert_eq!(value["altScreen"], true, "{value}");
    assert!(status_line(text(&result)).contains("alt screen on"));
}

#[tokio::test]
async fn env_cwd_size_and_echo_reach_the_process() {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let result = call(
        client,
        "pty_open",
        json!({
            // No `$(...)`: while the shell reads a command substitution, the core takes
            // its blocked read for an input wait (reported to the core).
            "command": "echo \"$GREETING\"; pwd; stty size",
            "env": {"GREETING": "hi $HOME"},
            "cwd": "/tmp",
            "cols": 90,
            "rows": 20,
        }),
    )
    .await;
    assert_eq!(ok(&result)["initialOutput"], "hi $HOME\n/tmp\n20 90\n");

    let (id, _) = open(client, json!({"command": "exec cat", "echo": false})).await;
    let result = call(client, "pty_send", json!({"id": id, "data": "secret"})).await;
    assert_eq!(ok(&result)["delta"], "secret\n", "only cat's copy, no echo");
}

/// `read: false` types without reading: the reply has no `delta` and says the output was
/// left unread; the agent's next `pty_tail` gets the input's echo and the answer.
#[tokio::test]
async fn a_send_with_read_false_leaves_the_output_unread() {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let (id, _) = open(client, bash()).await;
    let typed = call(
        client,
        "pty_send",
        json!({"id": id, "data": "echo $((6*7))", "read": false}),
    )
    .await;
    let value = ok(&typed);
    assert!(value.get("delta").is_none(), "no delta: {value}");
    assert_eq!(value["status"], "running");
    let line = status_line(text(&typed));
    assert!(line.contains("output left unread (read: false)"), "{line}");
    assert_eq!(text(&typed), line, "nothing but the status line: {typed:?}");
    let tail = call(client, "pty_tail", json!({"id": id})).await;
    assert!(
        ok(&tail)["text"]
            .as_str()
            .unwrap()
            .contains("echo $((6*7))\n42\n"),
        "{:?}",
        ok(&tail)
    );
    call(client, "pty_close", json!({"id": id})).await;
}
