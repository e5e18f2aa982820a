//! What `serve` logs without `RUST_LOG`: its start-up lines, then only warnings and errors
//! of its own; a client's mistakes (a tool or method that does not exist, a connection
//! dropped mid-call) and the ordinary course (MCP sessions ending, the stop) say nothing.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::Command;

use crate::support::{
    BIN, HttpServer, INITIALIZE, current_client, http_server_from, open, raw_post, raw_request,
};

const TOKEN: &str = "logs-token-0123456789ab";

#[tokio::test]
async fn serve_is_quiet_about_what_clients_do() {
    let mut server = serve(None).await;
    let addr = server.addr;
    let auth = format!("Bearer {TOKEN}");

    // A legacy MCP session: a tool that does not exist, a method that does not exist.
    let init = raw_post(addr, &[("Authorization", &auth)], INITIALIZE).await;
    let id = init.header("mcp-session-id").expect("a session").to_owned();
    let headers = [
        ("Authorization", auth.as_str()),
        ("Mcp-Session-Id", id.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    raw_post(addr, &headers, initialized).await;
    let no_tool =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#;
    assert!(
        raw_post(addr, &headers, no_tool)
            .await
            .body
            .contains("tool not found")
    );
    let no_method = r#"{"jsonrpc":"2.0","id":3,"method":"no/such"}"#;
    assert!(
        raw_post(addr, &headers, no_method)
            .await
            .body
            .contains("-32601")
    );

    // A client that drops its connection in the middle of a call, then ends its session.
    let client = current_client(&server.url, TOKEN).await;
    let (pty, _) = open(&client, json!({"command": "exec cat"})).await;
    let send = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "pty_send", "arguments": {"id": pty, "data": "x",
                   "settle": "quiet", "quietMs": 60000, "timeoutMs": 60000}}})
    .to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        send.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&send);
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    // The call is under way once its stream has begun (with the priming event of
    // 2025-11-25).
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("retry:") {
        let mut buf = [0u8; 1024];
        let n = tokio::time::timeout(Duration::from_secs(30), stream.read(&mut buf))
            .await
            .expect("the call's stream begins")
            .unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    drop(stream);
    assert_eq!(raw_request(addr, "DELETE", &headers, "").await.status, 204);

    server.stop().await;
    let log = server.log();
    for line in log.lines() {
        assert!(
            line.contains("pty_session_server::startup"),
            "only start-up lines without RUST_LOG; this one is not:\n{line}\n\nthe log:\n{log}"
        );
    }
    assert!(log.contains("listening on http://"), "{log}");
}

/// `RUST_LOG=debug` shows the server's debug lines but not what an agent types nor what
/// the program printed (rmcp's message dumps stay off unless `RUST_LOG` names rmcp).
#[tokio::test]
async fn debug_logs_hold_no_keys_and_no_output() {
    let mut server = serve(Some("debug")).await;
    let client = current_client(&server.url, TOKEN).await;
    let (id, _) = open(&client, json!({"command": "cat"})).await;
    let sent = crate::support::call(
        &client,
        "pty_send",
        json!({"id": id, "data": "typed-secret-4711"}),
    )
    .await;
    assert!(
        crate::support::ok(&sent)["delta"]
            .as_str()
            .unwrap()
            .contains("typed-secret-4711")
    );
    crate::support::call(&client, "pty_close", json!({"id": id})).await;
    drop(client);
    server.stop().await;
    let log = server.log();
    assert!(log.contains("opened"), "debug lines are on: {log}");
    assert!(!log.contains("typed-secret"), "{log}");
}

/// Gemini CLI resumes each event stream that ended with `GET /mcp` and the id of the last
/// event it read. The stream of an answered request is gone by then: the answer is an
/// empty stream, and the ordinary course logs no warning (rmcp's own answer logs one).
#[tokio::test]
async fn a_resumed_stream_is_answered_without_a_warning() {
    let mut server = serve(None).await;
    let addr = server.addr;
    let auth = format!("Bearer {TOKEN}");

    // Gemini CLI's protocol version, as its requests carry it.
    let init = INITIALIZE.replace("2025-11-25", "2025-06-18");
    let init = raw_post(addr, &[("Authorization", &auth)], &init).await;
    let id = init.header("mcp-session-id").expect("a session").to_owned();
    let headers = [
        ("Authorization", auth.as_str()),
        ("Mcp-Session-Id", id.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    raw_post(addr, &headers, initialized).await;
    let list = raw_post(
        addr,
        &headers,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    )
    .await;
    let last_event = list
        .body
        .lines()
        .filter_map(|line| line.strip_prefix("id:"))
        .next_back()
        .unwrap_or_else(|| panic!("the answer's events have ids: {list:?}"))
        .trim()
        .to_owned();

    // The resumptions: the answered request's stream, and an id that was never ours.
    for last in [last_event.as_str(), "not-an-event-id"] {
        let mut resume = headers.to_vec();
        resume.push(("Last-Event-ID", last));
        let resumed = raw_request(addr, "GET", &resume, "").await;
        assert_eq!(resumed.status, 200, "{resumed:?}");
        assert!(
            !resumed.body.contains("data:"),
            "nothing left to replay after {last}: {resumed:?}"
        );
    }

    server.stop().await;
    let log = server.log();
    assert!(
        !log.contains("WARN"),
        "a resumed stream is no cause for a warning; the log:\n{log}"
    );
}

/// `serve` on a free port with the test's token, logging at `RUST_LOG` `log` (the default
/// level without).
async fn serve(log: Option<&str>) -> HttpServer {
    let mut command = Command::new(BIN);
    command.args(["serve", "--listen", "127.0.0.1:0"]);
    match log {
        Some(level) => command.env("RUST_LOG", level),
        None => command.env_remove("RUST_LOG"),
    };
    http_server_from(command, &[("PTY_SESSION_TOKEN", TOKEN)]).await
}
