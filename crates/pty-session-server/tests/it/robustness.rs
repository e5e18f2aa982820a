//! Bad calls never take the server down: after each one — wrong types, unknown ids, huge
//! strings, unknown tools — the same connection still answers, over stdio and over HTTP.

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::support::{
    Client, call, current_client, http_server, legacy_client, ok, open, stdio_server,
};

/// Calls that must fail without needing a session (checked at the boundary or by rmcp).
fn boundary_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("pty_open", json!({"command": {"nested": ["deep"]}})),
        (
            "pty_open",
            json!({"command": "x".repeat(2 * 1024 * 1024), "cols": "wide"}),
        ),
        (
            "pty_send",
            json!({"id": "abcd2345", "data": "z".repeat(3 * 1024 * 1024)}),
        ),
        ("pty_send", json!({"id": true, "data": null})),
        ("pty_tail", json!({"id": "abcd2345", "lines": 1e300})),
        ("pty_close", json!({"id": {"$gt": ""}})),
    ]
}

/// Calls that reach the service with ids it never issued.
fn unknown_id_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("pty_send", json!({"id": "nosuch99", "data": "x"})),
        ("pty_tail", json!({"id": "../../etc"})),
        ("pty_tail", json!({"id": "i".repeat(100_000)})),
        ("pty_close", json!({"id": ""})),
    ]
}

async fn assert_alive(client: &Client) {
    let tools = client
        .list_all_tools()
        .await
        .expect("the server still answers");
    assert_eq!(tools.len(), 6);
}

async fn unknown_tool(client: &Client) {
    let params = CallToolRequestParams::new("pty_explode");
    let err = client
        .call_tool(params)
        .await
        .expect_err("an unknown tool is a protocol error");
    assert!(err.to_string().contains("tool not found"), "{err}");
}

async fn bad_calls_then_alive(client: &Client, with_service: bool) {
    for (tool, arguments) in boundary_calls() {
        let result = call(client, tool, arguments).await;
        assert_eq!(result.is_error, Some(true));
        assert_alive(client).await;
    }
    unknown_tool(client).await;
    assert_alive(client).await;
    if with_service {
        for (tool, arguments) in unknown_id_calls() {
            let result = call(client, tool, arguments).await;
            assert!(result.is_error == Some(true) || ok(&result)["closed"] == false);
            assert_alive(client).await;
        }
        // And a real session works after all of it.
        let (id, _) = open(client, json!({"command": "exec cat"})).await;
        let sent = call(client, "pty_send", json!({"id": id, "data": "still here"})).await;
        assert!(ok(&sent)["delta"].as_str().unwrap().contains("still here"));
    }
}

#[tokio::test]
async fn stdio_survives_bad_calls() {
    let server = stdio_server(&[]).await;
    bad_calls_then_alive(&server.client, false).await;
}

#[tokio::test]
async fn http_survives_bad_calls() {
    let token = "robust-token-0123456789";
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", token)]).await;
    bad_calls_then_alive(&current_client(&server.url, token).await, false).await;
    bad_calls_then_alive(&legacy_client(&server.url, token).await, false).await;
}

#[tokio::test]
async fn unknown_ids_never_take_the_server_down() {
    let server = stdio_server(&[]).await;
    bad_calls_then_alive(&server.client, true).await;
    let token = "robust-token-0123456789";
    let http = http_server(&[], &[("PTY_SESSION_TOKEN", token)]).await;
    bad_calls_then_alive(&current_client(&http.url, token).await, true).await;
    bad_calls_then_alive(&legacy_client(&http.url, token).await, true).await;
}
