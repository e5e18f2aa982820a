//! Reply budgets and re-reads through real MCP clients, over stdio and over HTTP: no reply
//! is larger than `maxBytes`, a truncated reply says which `from` gets the rest, and a
//! re-read gives exactly the kept lines asked for without changing what is unread.

use serde_json::{Value, json};

use crate::support::{
    Client, assert_error, call, current_client, http_server, ok, stdio_server, text,
};

/// The lines `first..=last` of `seq`, each with its `\n`.
fn seq(first: u64, last: u64) -> String {
    (first..=last).map(|n| format!("{n}\n")).collect()
}

async fn tail(client: &Client, arguments: Value) -> Value {
    let result = call(client, "pty_tail", arguments).await;
    let mut value = ok(&result).clone();
    value["_text"] = text(&result).into();
    value
}

/// The checks, on a server that keeps 4,000 lines a session.
async fn rereads_and_budgets(client: &Client) {
    let result = call(client, "pty_open", json!({"command": "seq 1 5000"})).await;
    let value = ok(&result);
    let id = value["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(value["initialOutput"], seq(4801, 5000));
    assert_eq!(value["skipped"], 4800);
    assert!(
        text(&result).contains("… 3800 earlier lines: pty_tail from 1000"),
        "the text says how to get the kept rest: {}",
        text(&result)
    );

    let page = tail(client, json!({"id": id, "from": 1234})).await;
    assert_eq!(page["text"], seq(1235, 1434));
    assert_eq!(
        (page["lines"].as_u64(), page["skipped"].as_u64()),
        (Some(200), Some(0))
    );
    assert_eq!(
        (page["lineBegin"].as_u64(), page["lineEnd"].as_u64()),
        (Some(1000), Some(5000))
    );
    assert_eq!(page["truncated"], true);
    let said = page["_text"].as_str().unwrap();
    assert!(
        said.contains("… 3566 later lines: pty_tail from 1434"),
        "{said}"
    );

    let whole = tail(
        client,
        json!({"id": id, "from": 4000, "lines": 5000, "maxBytes": 1048576}),
    )
    .await;
    assert_eq!(whole["text"], seq(4001, 5000));
    assert_eq!(whole["truncated"], false);

    let gone = tail(client, json!({"id": id, "from": 500})).await;
    assert_eq!(
        gone["skipped"], 500,
        "lines 500..1000 fell out of the scrollback"
    );
    assert_eq!(gone["text"], seq(1001, 1200));

    let unread = tail(client, json!({"id": id})).await;
    assert_eq!(
        unread["lines"], 0,
        "re-reads did not move the cursor: {unread}"
    );

    let result = call(
        client,
        "pty_open",
        json!({"command": "python3 -c \"print('x' * 100000)\""}),
    )
    .await;
    let value = ok(&result);
    assert_eq!(value["initialOutput"].as_str().unwrap().len(), 32768);
    assert_eq!(
        (value["cutLines"].as_u64(), value["skipped"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(text(&result).contains("1 line longer than maxBytes cut to it"));

    let long_lines = "python3 -c \"for i in range(300): print(str(i).rjust(5, '0') + 'y' * 9995)\"";
    let result = call(
        client,
        "pty_open",
        json!({"command": long_lines, "maxBytes": 1048576}),
    )
    .await;
    let value = ok(&result);
    assert_eq!(value["initialOutput"].as_str().unwrap().len(), 104 * 10_001);
    assert_eq!(
        (value["skipped"].as_u64(), value["cutLines"].as_u64()),
        (Some(196), Some(0))
    );
    let id = value["sessionId"].as_str().unwrap();
    let page = tail(client, json!({"id": id, "from": 0})).await;
    assert_eq!(
        (page["lines"].as_u64(), page["text"].as_str().unwrap().len()),
        (Some(3), 30003)
    );

    let result = call(client, "pty_tail", json!({"id": id, "maxBytes": 100})).await;
    assert_error(&result, "INVALID_ARGUMENT");
    assert!(text(&result).contains("maxBytes"), "{}", text(&result));
}

/// A tail with settle arguments waits, as a send does, and says what ended the wait.
async fn waiting_tail(client: &Client) {
    let job = "for i in $(seq 1 20); do echo step $i; sleep 0.3; done";
    let result = call(
        client,
        "pty_open",
        json!({"command": job, "settle": "none"}),
    )
    .await;
    let id = ok(&result)["sessionId"].as_str().unwrap().to_owned();
    let at_once = tail(client, json!({"id": id})).await;
    assert!(at_once.get("settledBy").is_none(), "{at_once}");
    let waited = tail(
        client,
        json!({"id": id, "until": "step 20", "timeoutMs": 30000}),
    )
    .await;
    assert_eq!(waited["settledBy"], "match");
    assert!(
        waited["text"].as_str().unwrap().ends_with("step 20\n"),
        "{waited}"
    );
    assert!(
        waited["_text"]
            .as_str()
            .unwrap()
            .contains("settled by match")
    );
}

#[tokio::test]
async fn rereads_and_byte_budgets_over_stdio() {
    let server = stdio_server(&["--scrollback-lines", "4000"]).await;
    rereads_and_budgets(&server.client).await;
}

#[tokio::test]
async fn a_waiting_tail_over_stdio_and_http() {
    let server = stdio_server(&[]).await;
    let token = "tok-waiting-0123456789";
    let http = http_server(&[], &[("PTY_SESSION_TOKEN", token)]).await;
    let client = current_client(&http.url, token).await;
    tokio::join!(waiting_tail(&server.client), waiting_tail(&client));
}

#[tokio::test]
async fn rereads_and_byte_budgets_over_http() {
    let token = "tok-budgets-0123456789";
    let server = http_server(
        &["--scrollback-lines", "4000"],
        &[("PTY_SESSION_TOKEN", token)],
    )
    .await;
    let client = current_client(&server.url, token).await;
    rereads_and_budgets(&client).await;
}
