//! Owners over HTTP: each token is one owner, narrowed to the MCP session for legacy
//! clients; another owner's session is FOREIGN_SESSION for send, tail and close alike;
//! DELETE of an MCP session and an idle timeout close the owner's processes.

use serde_json::json;

use crate::support::{
    Client, INITIALIZE, alive, assert_error, call, current_client, eventually, http_server,
    legacy_client, ok, open, raw_post, raw_request, rpc_result, scratch, tokens_file,
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
async fn two_mcp_sessions_under_one_token_are_two_owners() {
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", ALICE)]).await;
    let first = legacy_client(&server.url, ALICE).await;
    let second = legacy_client(&server.url, ALICE).await;
    assert_foreign(&first, &second).await;
    assert_foreign(&second, &first).await;
    // The token's session-less owner is a third one.
    let current = current_client(&server.url, ALICE).await;
    assert_foreign(&first, &current).await;
    assert_foreign(&current, &second).await;
}

#[tokio::test]
async fn deleting_an_mcp_session_closes_its_processes() {
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", ALICE)]).await;
    let first = legacy_client(&server.url, ALICE).await;
    let second = legacy_client(&server.url, ALICE).await;
    let (_, pid_a) = open(
        &first,
        json!({"command": "exec sleep 300", "settle": "none"}),
    )
    .await;
    let (_, pid_b) = open(
        &first,
        json!({"command": "exec sleep 301", "settle": "none"}),
    )
    .await;
    let (other, pid_c) = open(
        &second,
        json!({"command": "exec sleep 302", "settle": "none"}),
    )
    .await;
    assert!(alive(pid_a) && alive(pid_b) && alive(pid_c));

    // Closing the client sends DELETE with its Mcp-Session-Id.
    first.cancel().await.unwrap();
    eventually("the first client's processes are gone", || {
        !alive(pid_a) && !alive(pid_b)
    })
    .await;
    assert!(alive(pid_c), "the other MCP session keeps its process");
    assert_eq!(
        ok(&call(&second, "pty_tail", json!({"id": other})).await)["status"],
        "running"
    );
    assert!(
        server.log().contains("MCP session deleted"),
        "{}",
        server.log()
    );
}

#[tokio::test]
async fn an_idle_owner_is_disposed() {
    let server = http_server(
        &["--owner-idle-timeout-secs", "1"],
        &[("PTY_SESSION_TOKEN", ALICE)],
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
async fn delete_answers_once_the_processes_are_reaped_and_only_for_its_token() {
    let dir = scratch("owners-delete-raw");
    let tokens = tokens_file(&dir, &[("alice", ALICE), ("bob", BOB)]);
    let server = http_server(&["--tokens", tokens.to_str().unwrap()], &[]).await;
    let alice = format!("Bearer {ALICE}");
    let bob = format!("Bearer {BOB}");

    let init = raw_post(server.addr, &[("Authorization", &alice)], INITIALIZE).await;
    let session = init
        .header("mcp-session-id")
        .expect("an MCP session")
        .to_owned();
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
    assert!(
        !alive(pid),
        "the DELETE answered after the process was reaped"
    );
}
