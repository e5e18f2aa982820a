//! The event-stream framing of each protocol version: priming events (an id and a `retry`
//! with empty data, which 2025-11-25 defines for resuming a stream) only to clients of
//! versions that define them; clients of older ones parse every event's data as JSON.

use serde_json::json;

use crate::support::{RawResponse, http_server, raw_post, rpc_result};

const TOKEN: &str = "framing-token-0123456789";

/// Whether an SSE answer holds an event with empty data (a priming event).
fn has_priming(response: &RawResponse) -> bool {
    response
        .body
        .lines()
        .any(|line| line.trim_end() == "data:" || line == "data: ")
}

/// An `initialize` of protocol `version`, the session it opened, and a `tools/call` in it
/// (sent with the version header when `header`, as clients of 2025-06-18 on do).
async fn session(
    addr: std::net::SocketAddr,
    version: &str,
    header: bool,
) -> (RawResponse, RawResponse) {
    let auth = format!("Bearer {TOKEN}");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}});
    let init = raw_post(addr, &[("Authorization", &auth)], &initialize.to_string()).await;
    assert_eq!(rpc_result(&init)["protocolVersion"], version, "{init:?}");
    let id = init.header("mcp-session-id").expect("a session").to_owned();
    let mut headers = vec![("Authorization", auth.as_str()), ("Mcp-Session-Id", &id)];
    if header {
        headers.push(("MCP-Protocol-Version", version));
    }
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(raw_post(addr, &headers, initialized).await.status, 202);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "pty_list", "arguments": {}}});
    let listed = raw_post(addr, &headers, &call.to_string()).await;
    assert!(
        rpc_result(&listed)["structuredContent"]["sessions"].is_array(),
        "{listed:?}"
    );
    (init, listed)
}

#[tokio::test]
async fn priming_events_only_for_versions_that_define_them() {
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    for (version, header) in [("2025-03-26", false), ("2025-06-18", true)] {
        let (init, call) = session(server.addr, version, header).await;
        assert!(!has_priming(&init), "{version}: {init:?}");
        assert!(!has_priming(&call), "{version}: {call:?}");
        // Every event of theirs is JSON.
        for data in call.body.lines().filter_map(|l| l.strip_prefix("data:")) {
            serde_json::from_str::<serde_json::Value>(data.trim())
                .unwrap_or_else(|err| panic!("{version}: {data:?} is not JSON: {err}"));
        }
    }
    let (init, call) = session(server.addr, "2025-11-25", true).await;
    assert!(has_priming(&init), "2025-11-25 keeps its priming: {init:?}");
    assert!(has_priming(&call), "2025-11-25 keeps its priming: {call:?}");
}
