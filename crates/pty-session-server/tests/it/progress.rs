//! MCP progress notifications during a long settle, received by rmcp's client over stdio
//! and over HTTP, for a client that sent a progressToken.

use std::process::Stdio as ProcessStdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, NumberOrString,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, RequestParamsMeta,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::process::Command;

use crate::support::{BIN, DEADLINE, http_server, ok};

/// A client that keeps every progress notification it gets.
#[derive(Clone)]
struct ProgressClient {
    protocol: ProtocolVersion,
    seen: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for ProgressClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("pty-session-progress", "0"),
        )
        .with_protocol_version(self.protocol.clone())
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.seen.lock().unwrap().push(params);
    }
}

fn client(protocol: ProtocolVersion) -> ProgressClient {
    ProgressClient {
        protocol,
        seen: Arc::default(),
    }
}

/// Calls `tool` with a progressToken and returns its structured result.
async fn call_with_progress(
    client: &RunningService<RoleClient, ProgressClient>,
    tool: &str,
    arguments: Value,
) -> Value {
    let Value::Object(arguments) = arguments else {
        unreachable!()
    };
    let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    params.set_progress_token(ProgressToken(NumberOrString::Number(17)));
    let result = tokio::time::timeout(DEADLINE, client.call_tool(params))
        .await
        .expect("an answer")
        .expect("no protocol error");
    ok(&result).clone()
}

/// A three-second job followed by a waiting tail and by a send: both report progress with
/// the newest lines.
async fn progress_during_settles(client: &RunningService<RoleClient, ProgressClient>) {
    let seen = client.service().seen.clone();
    let job = "for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.5; done";
    let opened = call_with_progress(
        client,
        "pty_open",
        json!({"command": job, "settle": "none"}),
    )
    .await;
    let id = opened["sessionId"].as_str().unwrap().to_owned();
    let tail = call_with_progress(
        client,
        "pty_tail",
        json!({"id": id, "until": "tick 6", "timeoutMs": 30000}),
    )
    .await;
    assert_eq!(tail["settledBy"], "match");
    crate::support::eventually("progress notifications arrive", || {
        seen.lock().unwrap().len() >= 2
    })
    .await;
    let notes = seen.lock().unwrap().clone();
    assert!(
        notes
            .iter()
            .all(|n| n.progress_token == notes[0].progress_token),
        "one token, the request's (rmcp's client puts its own in place of ours): {notes:?}"
    );
    assert!(
        notes.iter().all(|n| n.progress >= 1000.0),
        "none in the first second: {notes:?}"
    );
    assert!(
        notes.windows(2).all(|w| w[0].progress < w[1].progress),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.message.as_deref().is_some_and(|m| m.contains("tick"))),
        "they carry the lines: {notes:?}"
    );
    assert!(notes.len() <= 12, "a few a second at most: {notes:?}");

    seen.lock().unwrap().clear();
    let shell = call_with_progress(
        client,
        "pty_open",
        json!({"command": "bash --norc --noprofile", "env": {"PS1": "$ "}}),
    )
    .await;
    let shell = shell["sessionId"].as_str().unwrap().to_owned();
    let sent = call_with_progress(
        client,
        "pty_send",
        json!({"id": shell, "data": "for i in 1 2 3; do echo send $i; sleep 0.6; done"}),
    )
    .await;
    assert!(
        sent["delta"].as_str().unwrap().contains("send 3"),
        "the send waits out the loop: {sent}"
    );
    crate::support::eventually("progress of a send", || {
        seen.lock()
            .unwrap()
            .iter()
            .any(|n| n.message.as_deref().is_some_and(|m| m.contains("send")))
    })
    .await;
}

#[tokio::test]
async fn progress_notifications_over_stdio() {
    let mut child = Command::new(BIN)
        .arg("mcp")
        .stdin(ProcessStdio::piped())
        .stdout(ProcessStdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = client(ProtocolVersion::V_2025_11_25)
        .serve((stdout, stdin))
        .await
        .unwrap();
    progress_during_settles(&client).await;
}

#[tokio::test]
async fn progress_notifications_over_http() {
    let token = "tok-progress-0123456789";
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", token)]).await;
    let config =
        StreamableHttpClientTransportConfig::with_uri(server.url.clone()).auth_header(token);
    let client = client(ProtocolVersion::V_2026_07_28)
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    progress_during_settles(&client).await;
}
