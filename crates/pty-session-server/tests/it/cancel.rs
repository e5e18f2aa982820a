//! Cancellation: a cancelled request ends its settle promptly with CANCELLED and keeps the
//! output for the next read.
//!
//! MCP sends no response to a cancelled request, so a client never sees the CANCELLED
//! result itself: the in-process test checks the code through the handler with a token
//! it cancels; the stdio test checks what a client does see — the abandoned call frees the
//! session at once and the output is still there.

use std::time::{Duration, Instant};

use pty_session::{Config, Owner, PtyService};
use pty_session_server::PtyTools;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::{assert_error, call, eventually, ok, open, stdio_server, try_call};

fn object(value: Value) -> rmcp::model::JsonObject {
    let Value::Object(object) = value else {
        unreachable!()
    };
    object
}

/// Waits until the session's window shows `text`.
async fn shown(service: &PtyService, owner: &Owner, id: &str, text: &str) {
    let id = pty_session::SessionId::new(id);
    eventually(&format!("the window to show {text:?}"), || {
        service
            .screen(owner, &id)
            .is_ok_and(|screen| screen.text().contains(text))
    })
    .await;
}

/// A send that would wait ten minutes: quiet mode ignores cat's input wait.
fn endless_send(id: &str) -> Value {
    json!({"id": id, "data": "kept", "settle": "quiet", "quietMs": 600000, "timeoutMs": 600000})
}

#[tokio::test]
async fn a_cancelled_send_is_cancelled_and_keeps_its_output() {
    let service = PtyService::new(Config::default());
    let owner = Owner::new("in-process");
    let tools = PtyTools::stdio(service.clone(), owner.clone());
    let opened = tools
        .open(
            &owner,
            object(json!({"command": "exec cat"})),
            &CancellationToken::new(),
        )
        .await;
    let id = opened.structured_content.as_ref().unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();

    let cancel = CancellationToken::new();
    let start = Instant::now();
    let send = tools.send(&owner, object(endless_send(&id)), &cancel);
    let canceller = async {
        // Once the line is written (the terminal echoes it), the send settles: cancel it.
        shown(&service, &owner, &id, "kept").await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(send, canceller);
    assert_error(&result, "CANCELLED");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "promptly: {:?}",
        start.elapsed()
    );

    let tail = tools
        .tail(&owner, object(json!({"id": id})), &CancellationToken::new())
        .await;
    let text = ok(&tail)["text"].as_str().unwrap().to_owned();
    assert!(
        text.contains("kept"),
        "the output is kept for the next read: {text:?}"
    );
    service.shutdown().await;
}

#[tokio::test]
async fn an_abandoned_call_frees_the_session_over_stdio() {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let (id, _) = open(client, json!({"command": "exec cat"})).await;
    // Dropping the call's future makes the client send notifications/cancelled.
    let abandoned = tokio::time::timeout(
        Duration::from_millis(500),
        try_call(client, "pty_send", endless_send(&id)),
    )
    .await;
    assert!(abandoned.is_err(), "the send was still waiting");

    let start = Instant::now();
    let tail = call(client, "pty_tail", json!({"id": id})).await;
    assert!(start.elapsed() < Duration::from_secs(5));
    let text = ok(&tail)["text"].as_str().unwrap();
    assert!(text.contains("kept"), "{text:?}");
    let sent = call(client, "pty_send", json!({"id": id, "data": "next"})).await;
    assert!(ok(&sent)["delta"].as_str().unwrap().contains("next"));
}

#[tokio::test]
async fn a_cancelled_waiting_tail_is_cancelled_and_keeps_its_output() {
    let service = PtyService::new(Config::default());
    let owner = Owner::new("in-process");
    let tools = PtyTools::stdio(service.clone(), owner.clone());
    let never = CancellationToken::new();
    let opened = tools
        .open(
            &owner,
            object(json!({"command": "sleep 0.3; echo kept; exec cat", "settle": "none"})),
            &never,
        )
        .await;
    let id = ok(&opened)["sessionId"].as_str().unwrap().to_owned();
    let cancel = CancellationToken::new();
    let start = Instant::now();
    let endless = json!({"id": id, "settle": "quiet", "quietMs": 600000, "timeoutMs": 600000});
    let tail = tools.tail(&owner, object(endless), &cancel);
    let canceller = async {
        // The line comes while the tail waits for ten minutes of quiet: cancel it then.
        shown(&service, &owner, &id, "kept").await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(tail, canceller);
    assert_error(&result, "CANCELLED");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let tail = tools.tail(&owner, object(json!({"id": id})), &never).await;
    assert!(ok(&tail)["text"].as_str().unwrap().contains("kept"));
    service.shutdown().await;
}
