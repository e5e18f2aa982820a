//! Owners over HTTP: each token is one owner, whatever the protocol version and the MCP
//! session; another owner's session is FOREIGN_SESSION for send, tail and close alike;
//! DELETE of an MCP session closes none of the token's sessions; an idle timeout closes
//! the owner's processes.

use serde_json::json;

use crate::support::{
    Client, alive, assert_error, call, current_client, eventually, http_server, legacy_client, ok,
    open, raw_request, rpc_result, scratch, server_of_alice_and_bob, tokens_file,
};

const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-9876543210";

/// `intruder` cannot touch `victim`'s session, and the session is unharmed after.
async fn assert_foreign(victim: &Client, intruder: &Client) {
    let (id, pid) = open(victim, json!({"command": "exec cat"})).await;
    for (tool, arguments) in [
        ("pty_send", json!({"id": id, "data": "rm -rf /"})),
        ("pty_tail", json!({"id": id})),
        ("pty_close", json!({"id": id})),
    ] {
        assert_error(&call(intruder, tool, arguments).await, "FOREIGN_SESSION");
    }
    assert!(alive(pid), "the intruder's close did nothing");
    let tail = call(victim, "pty_tail", json!({"id": id})).await;
    assert_eq!(ok(&tail)["text"], "", "the intruder's send typed nothing");
    assert_eq!(
        ok(&call(victim, "pty_close", json!({"id": id})).await)["closed"],
        true
    );
}

#[tokio::test]
async fn two_tokens_are_two_owners() {
    let dir = scratch("owners-tokens");
    let tokens = tokens_file(&dir, &[("alice", ALICE), ("bob", BOB)]);
    let server = http_server(&["--tokens", tokens.to_str().unwrap()], &[]).await;
    let alice = current_client(&server.url, ALICE).await;
    let bob = current_client(&server.url, BOB).await;
    assert_foreign(&alice, &bob).await;
    assert_foreign(&bob, &alice).await;

    // Without MCP sessions, every client of one token is the same owner: sessions live
    // with the service, not with a request or a connection.
    let (id, _) = open(&alice, json!({"command": "exec cat"})).await;
    let alice_again = current_client(&server.url, ALICE).await;
    let tail = call(&alice_again, "pty_tail", json!({"id": id})).await;
    assert_eq!(ok(&tail)["status"], "running");
}

#[tokio::test]
async fn every_mcp_session_of_a_token_is_the_same_owner() {
    let dir = scratch("owners-mcp-sessions");
    let tokens = tokens_file(&dir, &[("alice", ALICE), ("bob", BOB)]);
    let server = http_server(&["--tokens", tokens.to_str().unwrap()], &[]).await;
    // A client that makes an MCP session per call (the Inspector's CLI), or reconnects:
    // what it opened in one is its own in the next, and in the session-less protocol.
    let first = legacy_client(&server.url, ALICE).await;
    let (id, pid) = open(&first, json!({"command": "exec cat"})).await;
    let second = legacy_client(&server.url, ALICE).await;
    let sent = call(&second, "pty_send", json!({"id": id, "data": "again\n"})).await;
    assert!(
        ok(&sent)["delta"].as_str().unwrap().contains("again"),
        "{sent:?}"
    );
    let current = current_client(&server.url, ALICE).await;
    let tail = call(&current, "pty_tail", json!({"id": id})).await;
    assert_eq!(ok(&tail)["status"], "running");
    // Another token's MCP session is another owner all the same.
    let bob = legacy_client(&server.url, BOB).await;
    assert_foreign(&first, &bob).await;
    assert_foreign(&bob, &second).await;
    assert!(alive(pid));
}

#[tokio::test]
async fn deleting_an_mcp_session_closes_none_of_the_tokens_sessions() {
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", ALICE)]).await;
    let first = legacy_client(&server.url, ALICE).await;
    let (id, pid) = open(
        &first,
        json!({"command": "exec sleep 300", "settle": "none"}),
    )
    .await;
    // Closing the client sends DELETE with its Mcp-Session-Id; the client is gone once
    // the DELETE is answered.
    first.cancel().await.unwrap();
    let again = legacy_client(&server.url, ALICE).await;
    assert_eq!(
        ok(&call(&again, "pty_tail", json!({"id": id})).await)["status"],
        "running",
        "the reconnected client reaches the session it opened"
    );
    assert!(alive(pid));
    assert_eq!(
        ok(&call(&again, "pty_close", json!({"id": id})).await)["closed"],
        true
    );
}

#[tokio::test]
async fn an_idle_owner_is_disposed() {
    let server = http_server(
        &["--owner-idle-timeout-secs", "1"],
        &[
            ("PTY_SESSION_TOKEN", ALICE),
            ("RUST_LOG", "pty_session_server=info"),
        ],
    )
    .await;
    let client = current_client(&server.url, ALICE).await;
    let (id, pid) = open(
        &client,
        json!({"command": "exec sleep 300", "settle": "none"}),
    )
    .await;
    eventually("the idle owner's process is gone", || !alive(pid)).await;
    assert_error(
        &call(&client, "pty_tail", json!({"id": id})).await,
        "UNKNOWN_SESSION",
    );
    assert!(server.log().contains("owner idle"), "{}", server.log());
}

#[tokio::test]
async fn a_long_call_keeps_its_owner_active() {
    let server = http_server(
        &["--owner-idle-timeout-secs", "1"],
        &[("PTY_SESSION_TOKEN", ALICE)],
    )
    .await;
    let client = current_client(&server.url, ALICE).await;
    let (id, pid) = open(&client, json!({"command": "exec cat"})).await;
    // A send that waits 3 s (quiet mode ignores cat's input wait) outlasts the timeout.
    let result = call(
        &client,
        "pty_send",
        json!({"id": id, "data": "x", "settle": "quiet", "quietMs": 3000, "timeoutMs": 3000}),
    )
    .await;
    assert!(ok(&result)["delta"].as_str().unwrap().contains('x'));
    assert!(alive(pid));
}

#[tokio::test]
async fn delete_ends_only_the_mcp_session_and_only_for_its_token() {
    let dir = scratch("owners-delete-raw");
    let (server, session) = server_of_alice_and_bob(&dir, ALICE, BOB).await;
    let alice = format!("Bearer {ALICE}");
    let bob = format!("Bearer {BOB}");
    let send = |auth: &str, method: &'static str, body: &'static str| {
        let auth = auth.to_owned();
        let (addr, session) = (server.addr, session.clone());
        async move {
            let headers = [
                ("Authorization", auth.as_str()),
                ("Mcp-Session-Id", session.as_str()),
                ("MCP-Protocol-Version", "2025-11-25"),
            ];
            raw_request(addr, method, &headers, body).await
        }
    };
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(send(&alice, "POST", initialized).await.status, 202);
    let open = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pty_open","arguments":{"command":"exec sleep 303","settle":"none"}}}"#;
    let opened = rpc_result(&send(&alice, "POST", open).await);
    let pid = u32::try_from(opened["structuredContent"]["pid"].as_u64().unwrap()).unwrap();
    assert!(alive(pid));

    let refused = send(&bob, "DELETE", "").await;
    assert_eq!(
        refused.status, 404,
        "bob cannot end alice's MCP session: {refused:?}"
    );
    assert!(alive(pid));

    let deleted = send(&alice, "DELETE", "").await;
    assert_eq!(
        deleted.status, 204,
        "the session is gone when DELETE answers: {deleted:?}"
    );
    let tools = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
    assert_eq!(send(&alice, "POST", tools).await.status, 404, "it is gone");
    assert!(alive(pid), "the token's PTY session stays");
    let current = current_client(&server.url, ALICE).await;
    let listed = call(&current, "pty_list", json!({})).await;
    assert_eq!(ok(&listed)["sessions"][0]["pid"], pid, "{listed:?}");
}
