//! Running the real `pty-session` binary and talking to it with the rmcp client: over
//! stdio, and over HTTP with the current protocol or a legacy one with MCP sessions.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio as ProcessStdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

pub const BIN: &str = env!("CARGO_BIN_EXE_pty-session");

/// Generous: the machine is shared with other builds.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// A test client that names the protocol version it asks for in `initialize`.
#[derive(Clone)]
pub struct TestClient {
    protocol: ProtocolVersion,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("pty-session-it", "0"),
        )
        .with_protocol_version(self.protocol.clone())
    }
}

pub type Client = RunningService<RoleClient, TestClient>;

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pty-session-it-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `pty-session mcp` with an rmcp client on its stdin/stdout.
pub struct StdioServer {
    pub client: Client,
    pub child: Child,
}

pub async fn stdio_server(args: &[&str]) -> StdioServer {
    let mut command = Command::new(BIN);
    command.arg("mcp").args(home_args()).args(args);
    stdio_server_from(command).await
}

/// The flags that give every session of a test's server the tests' home (`HOME`,
/// `XDG_CONFIG_HOME`: [`pty_session_testkit::tests_home`]). A test's own `--default-env`
/// after them wins.
pub fn home_args() -> [String; 4] {
    let home = pty_session_testkit::tests_home(env!("CARGO_TARGET_TMPDIR"));
    let home = home.display();
    [
        "--default-env".into(),
        format!("HOME={home}"),
        "--default-env".into(),
        format!("XDG_CONFIG_HOME={home}"),
    ]
}

/// Like [`stdio_server`], for a command that ends up running `pty-session mcp` (e.g. under
/// `unshare`).
pub async fn stdio_server_from(mut command: Command) -> StdioServer {
    let mut child = command
        .stdin(ProcessStdio::piped())
        .stdout(ProcessStdio::piped())
        .stderr(ProcessStdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn pty-session mcp");
    let stdout = child.stdout.take().unwrap();
    let stdin = child.stdin.take().unwrap();
    let client = TestClient {
        protocol: ProtocolVersion::V_2025_11_25,
    }
    .serve((stdout, stdin))
    .await
    .expect("MCP handshake over stdio");
    StdioServer { client, child }
}

/// `pty-session serve` on a free loopback port.
pub struct HttpServer {
    pub child: Child,
    pub addr: SocketAddr,
    pub url: String,
    /// Everything it logged, for assertions and for failure messages.
    pub log: Arc<Mutex<String>>,
}

impl HttpServer {
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// SIGTERM, and the server must exit cleanly.
    pub async fn stop(&mut self) {
        signal(&self.child, "TERM");
        assert!(
            exit_success(&mut self.child).await,
            "serve exits cleanly on SIGTERM; its log:\n{}",
            self.log()
        );
    }

    /// The request that opens session `id`'s terminal stream with `token` in its header.
    pub fn stream_request(
        &self,
        id: &str,
        token: &str,
    ) -> tokio_tungstenite::tungstenite::handshake::client::Request {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
        let mut request = format!("ws://{}/api/sessions/{id}/stream", self.addr)
            .into_client_request()
            .unwrap();
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        request
    }
}

/// Starts `pty-session serve --listen 127.0.0.1:0 <args>` with `env` and waits until it
/// listens. Panics with its output if it does not.
pub async fn http_server(args: &[&str], env: &[(&str, &str)]) -> HttpServer {
    let mut command = Command::new(BIN);
    command
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(home_args())
        .args(args);
    http_server_from(command, env).await
}

/// Like [`http_server`], for a command that ends up running `pty-session serve` on
/// 127.0.0.1:0 (e.g. under `sh -c "ulimit ..."`).
pub async fn http_server_from(mut command: Command, env: &[(&str, &str)]) -> HttpServer {
    command
        .env_remove("PTY_SESSION_TOKEN")
        .envs(env.iter().copied())
        .stdin(ProcessStdio::null())
        .stdout(ProcessStdio::null())
        .stderr(ProcessStdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("spawn pty-session serve");
    let stderr = child.stderr.take().unwrap();
    let log = Arc::new(Mutex::new(String::new()));
    let (addr_tx, addr_rx) = tokio::sync::oneshot::channel();
    {
        let log = log.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            let mut addr_tx = Some(addr_tx);
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("[server] {line}");
                {
                    let mut log = log.lock().unwrap();
                    log.push_str(&line);
                    log.push('\n');
                }
                if let Some(rest) = line.split("listening on http://").nth(1)
                    && let Some(addr) = rest.strip_suffix("/mcp")
                    && let Some(tx) = addr_tx.take()
                {
                    let _ = tx.send(addr.parse::<SocketAddr>().unwrap());
                }
            }
        });
    }
    let addr = match tokio::time::timeout(DEADLINE, addr_rx).await {
        Ok(Ok(addr)) => addr,
        _ => panic!(
            "the server did not listen; it logged:\n{}",
            log.lock().unwrap()
        ),
    };
    HttpServer {
        child,
        addr,
        url: format!("http://{addr}/mcp"),
        log,
    }
}

fn http_config(url: &str, token: &str) -> StreamableHttpClientTransportConfig {
    StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token)
}

/// A client of the current protocol (2026-07-28): no MCP session, no `initialize`.
pub async fn current_client(url: &str, token: &str) -> Client {
    let client = TestClient {
        protocol: ProtocolVersion::V_2026_07_28,
    }
    .serve_with_lifecycle(
        StreamableHttpClientTransport::from_config(http_config(url, token)),
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .expect("discover over HTTP");
    let version = client.peer_info().map(|info| info.protocol_version.clone());
    assert_eq!(version, Some(ProtocolVersion::V_2026_07_28));
    client
}

/// A client of a legacy protocol (2025-11-25), which gets an `Mcp-Session-Id`.
pub async fn legacy_client(url: &str, token: &str) -> Client {
    let client = TestClient {
        protocol: ProtocolVersion::V_2025_11_25,
    }
    .serve_with_lifecycle(
        StreamableHttpClientTransport::from_config(http_config(url, token)),
        ClientLifecycleMode::Initialize,
    )
    .await
    .expect("initialize over HTTP");
    let version = client.peer_info().map(|info| info.protocol_version.clone());
    assert_eq!(version, Some(ProtocolVersion::V_2025_11_25));
    client
}

/// Calls `tool` with `arguments` (a JSON object); panics on a protocol error or if no
/// answer comes within the deadline.
pub async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    try_call(client, tool, arguments)
        .await
        .unwrap_or_else(|err| panic!("{tool}: protocol error {err}"))
}

pub async fn try_call(
    client: &Client,
    tool: &str,
    arguments: Value,
) -> Result<CallToolResult, rmcp::ServiceError> {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    match tokio::time::timeout(DEADLINE, client.call_tool(params)).await {
        Ok(result) => result,
        Err(_) => panic!("{tool}: no answer within {DEADLINE:?}"),
    }
}

/// The `structuredContent` of a result.
pub fn structured(result: &CallToolResult) -> &Value {
    result
        .structured_content
        .as_ref()
        .expect("a result with structuredContent")
}

/// The one text block of a result.
pub fn text(result: &CallToolResult) -> &str {
    assert_eq!(result.content.len(), 1, "one content block: {result:?}");
    &result.content[0].as_text().expect("a text block").text
}

/// Asserts that `result` is the tool error `code` as docs/tools.md has it: `isError`, one
/// text block `CODE: message`, and no `structuredContent` (which clients would check
/// against the tool's `outputSchema`).
#[track_caller]
pub fn assert_error(result: &CallToolResult, code: &str) {
    assert_eq!(result.is_error, Some(true), "an error result: {result:?}");
    assert_eq!(
        result.structured_content, None,
        "an error has no structuredContent: {result:?}"
    );
    let text = text(result);
    assert!(
        text.strip_prefix(&format!("{code}: "))
            .is_some_and(|message| !message.is_empty()),
        "text is the code, then a message: {text:?}"
    );
}

/// The message of a tool error: its text after `CODE: `.
#[track_caller]
pub fn error_message(result: &CallToolResult) -> &str {
    let text = text(result);
    text.split_once(": ")
        .unwrap_or_else(|| panic!("an error text `CODE: message`: {text:?}"))
        .1
}

/// Asserts success and returns the structured result.
#[track_caller]
pub fn ok(result: &CallToolResult) -> &Value {
    assert_eq!(
        result.is_error,
        Some(false),
        "a successful result: {result:?}"
    );
    structured(result)
}

/// `pty_open`'s `arguments` with a home of its own, `home` (`HOME` and `XDG_CONFIG_HOME` in
/// its `env`): a real program that a test runs reads none of the configuration of the user
/// who runs the tests (a toprc, python's history) and writes none.
pub fn at_home(mut arguments: Value, home: &Path) -> Value {
    let home = home.to_str().expect("a UTF-8 temp path");
    let env = arguments["env"].as_object_mut().map(std::mem::take);
    let mut env = env.unwrap_or_default();
    env.insert("HOME".into(), home.into());
    env.insert("XDG_CONFIG_HOME".into(), home.into());
    arguments["env"] = Value::Object(env);
    arguments
}

/// The arguments of `pty_open` for an interactive bash without rc files, with the prompt
/// `$ `.
pub fn bash() -> Value {
    serde_json::json!({"command": "bash --norc --noprofile -i", "env": {"PS1": "$ "}})
}

/// Opens `command` and returns its session id and pid.
pub async fn open(client: &Client, arguments: Value) -> (String, u32) {
    let result = call(client, "pty_open", arguments).await;
    let value = ok(&result);
    let id = value["sessionId"].as_str().unwrap().to_owned();
    let pid = u32::try_from(value["pid"].as_u64().unwrap()).unwrap();
    (id, pid)
}

/// Polls `condition` until it holds, panicking with `what` after the deadline.
pub async fn eventually(what: &str, condition: impl FnMut() -> bool) {
    pty_session_testkit::eventually(what, DEADLINE, condition).await;
}

/// Polls the future `condition` makes until it yields true (a call to the server, say),
/// panicking with `what` after the deadline.
pub async fn eventually_async<F, Fut>(what: &str, condition: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    pty_session_testkit::eventually_async(what, DEADLINE, condition).await;
}

/// A `serve` that knows two tokens, `alice`'s and `bob`'s (from a tokens file in `dir`),
/// and a legacy MCP session that alice's token initialized by hand: the server and the
/// session's id.
pub async fn server_of_alice_and_bob(dir: &Path, alice: &str, bob: &str) -> (HttpServer, String) {
    let tokens = tokens_file(dir, &[("alice", alice), ("bob", bob)]);
    let server = http_server(&["--tokens", tokens.to_str().unwrap()], &[]).await;
    let auth = format!("Bearer {alice}");
    let init = raw_post(server.addr, &[("Authorization", &auth)], INITIALIZE).await;
    let session = init
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no legacy MCP session: {init:?}"))
        .to_owned();
    (server, session)
}

/// A tokens file with `name token` lines.
pub fn tokens_file(dir: &Path, tokens: &[(&str, &str)]) -> PathBuf {
    let path = dir.join("tokens");
    let text: String = tokens
        .iter()
        .map(|(name, token)| format!("{name} {token}\n"))
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// The answer to a hand-written HTTP/1.1 request.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }
}

/// An `initialize` request body of protocol 2025-11-25.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

/// POSTs `body` to `/mcp` with `headers`, by hand, so that any header can be sent.
pub async fn raw_post(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> RawResponse {
    raw_request(addr, "POST", headers, body).await
}

/// The JSON-RPC message with a `result` in an SSE or JSON response body.
pub fn rpc_result(response: &RawResponse) -> Value {
    response
        .body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .chain(std::iter::once(response.body.as_str()))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message.get("result").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC result in {response:?}"))["result"]
        .clone()
}

/// Sends `method /mcp` with `headers` and `body`, by hand, so that any header can be sent.
pub async fn raw_request(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> RawResponse {
    raw_request_to(addr, method, "/mcp", headers, body).await
}

/// Sends `method path` with `headers` and `body`, by hand.
pub async fn raw_request_to(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> RawResponse {
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    // The server may answer before it has read the whole body (a refused size) and close:
    // the request is written beside the read, and a write cut short by that is no error.
    // The write half is kept until the answer is read: dropping it would half-close the
    // connection, which the server takes for the client's going away.
    let writing = tokio::spawn(async move {
        match writer.write_all(request.as_bytes()).await {
            Err(err)
                if !matches!(
                    err.kind(),
                    ErrorKind::BrokenPipe | ErrorKind::ConnectionReset
                ) =>
            {
                panic!("writing the request: {err}")
            }
            _ => writer,
        }
    });
    let mut bytes = Vec::new();
    // An SSE answer ends when its one response is sent; bound the read all the same. What
    // was read before a reset is kept.
    let _ = tokio::time::timeout(Duration::from_secs(10), reader.read_to_end(&mut bytes)).await;
    if writing.is_finished() {
        drop(writing.await.expect("the request was written"));
    } else {
        writing.abort();
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    RawResponse {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

/// Sends `signal` (e.g. "TERM") to `child`.
pub fn signal(child: &Child, signal: &str) {
    let pid = child.id().expect("the child runs");
    let status = std::process::Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status();
    assert!(status.unwrap().success(), "kill -{signal} {pid}");
}

/// Waits for `child` to exit and returns whether it exited successfully.
pub async fn exit_success(child: &mut Child) -> bool {
    match tokio::time::timeout(DEADLINE, child.wait()).await {
        Ok(status) => status.unwrap().success(),
        Err(_) => panic!("the server did not exit within {DEADLINE:?}"),
    }
}

pub use pty_session_testkit::alive;

/// The resident memory of process `pid`, in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// How many descriptors process `pid` has open.
pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// The background the colour tests configure a server with.
pub const BACKGROUND: &str = "#102030";

/// `serve` with [`BACKGROUND`] and `token`, its agent, and a session (at `dir`) whose red
/// line scrolled out of its 10-row window before anyone looked: 40 lines follow it, then
/// `cat` waits. Returns the server, the agent and the session's id.
pub async fn a_red_line_scrolled_out(dir: &Path, token: &str) -> (HttpServer, Client, String) {
    let server = http_server(
        &["--background", BACKGROUND],
        &[("PTY_SESSION_TOKEN", token)],
    )
    .await;
    let agent = current_client(&server.url, token).await;
    let (id, _) = open(
        &agent,
        at_home(
            serde_json::json!({
                "command": "printf '\\033[31merror: red\\033[0m\\n'; seq 1 40; exec cat",
                "rows": 10, "until": "^40$",
            }),
            dir,
        ),
    )
    .await;
    (server, agent, id)
}

/// Sends `data` to session `id` with the default settle and a timeout of 20 s; the
/// result, and how long the call took.
pub async fn send_waiting(client: &Client, id: &str, data: &str) -> (Value, Duration) {
    let start = std::time::Instant::now();
    let result = call(
        client,
        "pty_send",
        serde_json::json!({"id": id, "data": data, "timeoutMs": 20000}),
    )
    .await;
    let took = start.elapsed();
    (ok(&result).clone(), took)
}
