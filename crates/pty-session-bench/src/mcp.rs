//! The workloads over MCP: the real binary, `pty-session mcp` on stdio or `pty-session
//! serve` over streamable HTTP on one kept-alive connection, driven by the rmcp client as
//! an agent's client would drive it.
//!
//! The client runs on a single-threaded runtime of its own, as in a client process of its
//! own: on the bench's multi-threaded runtime, which also holds the facade's sessions,
//! each of rmcp's task hand-offs could wake the other worker, and that cost (0.1 ms a
//! call here) is the bench's, not the server's. Its calls block, like the raw loops.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest, Implementation,
    PingRequest, ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::facade::Complete;

/// The bench as an MCP client.
#[derive(Clone)]
struct BenchClient;

impl ClientHandler for BenchClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("pty-session-bench", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

/// The bench's bearer token for `pty-session serve`.
const TOKEN: &str = "pty-session-bench-token";

/// `pty-session mcp` with the bench's client on its stdin/stdout, or `pty-session serve`
/// with the bench's client over HTTP. Its methods block; call them outside the bench's
/// runtime or in `block_in_place`.
pub struct Server {
    /// Taken only by `drop`.
    runtime: Option<tokio::runtime::Runtime>,
    client: RunningService<RoleClient, BenchClient>,
    child: Child,
    /// Whether the client talks HTTP (the server then stops on SIGTERM, not on EOF).
    http: bool,
    /// Where `serve` listens (HTTP only).
    addr: Option<SocketAddr>,
}

impl Server {
    /// Starts `binary mcp` and completes the MCP handshake.
    pub fn start(binary: &Path) -> Result<Server> {
        Self::start_with(binary, false, None)
    }

    /// Starts `binary serve` on a free loopback port and completes the MCP handshake over
    /// HTTP (2025-11-25, with an MCP session); every call then goes over the one
    /// kept-alive connection of the client's pool.
    pub fn start_http(binary: &Path) -> Result<Server> {
        Self::start_with(binary, true, None)
    }

    /// [`start`](Self::start) (`http` false) or [`start_http`](Self::start_http), the
    /// server writing the timeline of each call to `timeline`
    /// (`pty_session::timeline`).
    pub fn start_traced(binary: &Path, http: bool, timeline: &Path) -> Result<Server> {
        Self::start_with(binary, http, Some(timeline))
    }

    fn start_with(binary: &Path, http: bool, timeline: Option<&Path>) -> Result<Server> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("the client's runtime")?;
        let (client, child, addr) = if http {
            let (client, child, addr) = runtime.block_on(Self::connect_http(binary, timeline))?;
            (client, child, Some(addr))
        } else {
            let (client, child) = runtime.block_on(Self::connect(binary, timeline))?;
            (client, child, None)
        };
        Ok(Server {
            runtime: Some(runtime),
            client,
            child,
            http,
            addr,
        })
    }

    /// Where `serve` listens, and its token (HTTP only).
    pub fn http_addr(&self) -> Option<(SocketAddr, &'static str)> {
        self.addr.map(|addr| (addr, TOKEN))
    }

    /// The server's pid.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        let runtime = self.runtime.as_ref().expect("the runtime lives until drop");
        runtime.block_on(future)
    }

    async fn connect(
        binary: &Path,
        timeline: Option<&Path>,
    ) -> Result<(RunningService<RoleClient, BenchClient>, Child)> {
        let mut command = Command::new(binary);
        command.env_remove(pty_session::timeline::ENV);
        if let Some(path) = timeline {
            command.env(pty_session::timeline::ENV, path);
        }
        let mut child = command
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("spawn {} mcp", binary.display()))?;
        let stdout = child.stdout.take().context("stdout")?;
        let stdin = child.stdin.take().context("stdin")?;
        let client = BenchClient
            .serve((stdout, stdin))
            .await
            .context("MCP handshake over stdio")?;
        Ok((client, child))
    }

    async fn connect_http(
        binary: &Path,
        timeline: Option<&Path>,
    ) -> Result<(RunningService<RoleClient, BenchClient>, Child, SocketAddr)> {
        let mut command = Command::new(binary);
        command.env_remove(pty_session::timeline::ENV);
        if let Some(path) = timeline {
            command.env(pty_session::timeline::ENV, path);
        }
        let mut child = command
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env("PTY_SESSION_TOKEN", TOKEN)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("spawn {} serve", binary.display()))?;
        let mut lines = BufReader::new(child.stderr.take().context("stderr")?).lines();
        let find = async {
            while let Some(line) = lines.next_line().await? {
                if let Some(rest) = line.split("listening on http://").nth(1)
                    && let Some(addr) = rest.strip_suffix("/mcp")
                {
                    return Ok(addr.parse::<SocketAddr>()?);
                }
            }
            bail!("pty-session serve ended without listening")
        };
        let addr = tokio::time::timeout(Duration::from_secs(20), find)
            .await
            .context("pty-session serve did not listen within 20 s")??;
        // The rest of its log goes nowhere, without ever filling the pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let config = StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"))
            .auth_header(TOKEN);
        let client = BenchClient
            .serve(StreamableHttpClientTransport::from_config(config))
            .await
            .context("MCP handshake over HTTP")?;
        Ok((client, child, addr))
    }

    /// An MCP `ping`: the protocol's round trip alone, no tool.
    pub fn ping(&self) -> Result<Duration> {
        let ping = ClientRequest::PingRequest(PingRequest {
            method: Default::default(),
            extensions: Default::default(),
        });
        let start = Instant::now();
        let call = tokio::time::timeout(Duration::from_secs(60), self.client.send_request(ping));
        self.block_on(call)
            .context("ping: no answer within 60 s")??;
        Ok(start.elapsed())
    }

    /// Calls `tool`; fails on a protocol error or a tool error.
    pub fn call(&self, tool: &str, arguments: Value) -> Result<Value> {
        Ok(self.call_sized(tool, arguments)?.0)
    }

    /// [`call`](Self::call), with the size in bytes of the whole result as JSON (the
    /// structured result and the text block: what a client takes in).
    pub fn call_sized(&self, tool: &str, arguments: Value) -> Result<(Value, usize)> {
        let Value::Object(arguments) = arguments else {
            bail!("arguments must be an object")
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let call = tokio::time::timeout(Duration::from_secs(60), self.client.call_tool(params));
        let result = self
            .block_on(call)
            .with_context(|| format!("{tool}: no answer within 60 s"))??;
        let size = serde_json::to_vec(&result)?.len();
        let value = result
            .structured_content
            .context("a result without structuredContent")?;
        ensure!(result.is_error != Some(true), "{tool} failed: {value}");
        Ok((value, size))
    }

    /// Opens `command`; its session id.
    pub fn open(&self, command: &str) -> Result<String> {
        let opened = self.call("pty_open", json!({"command": command, "timeoutMs": 20_000}))?;
        ensure!(opened["status"] == "running", "{command} ended: {opened}");
        Ok(opened["sessionId"]
            .as_str()
            .context("sessionId")?
            .to_owned())
    }

    /// Closes the stdio, or sends SIGTERM to the HTTP server (either way the server
    /// closes its sessions and exits), and reaps it.
    pub fn stop(mut self) -> Result<()> {
        let runtime = self.runtime.take().expect("the runtime lives until drop");
        runtime.block_on(async {
            let _ = self.client.close().await;
            if self.http
                && let Some(pid) = self.child.id()
            {
                // SAFETY: kill(2) with a pid of our own child, not yet reaped.
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
            }
            match tokio::time::timeout(Duration::from_secs(20), self.child.wait()).await {
                Ok(status) => {
                    status?;
                }
                Err(_) => {
                    self.child.kill().await?;
                    bail!("pty-session did not exit within 20 s of being told to");
                }
            }
            Ok(())
        })
    }
}

impl Drop for Server {
    /// Without a `stop` (a workload failed): the child is killed (`kill_on_drop`), and the
    /// runtime is let go without waiting, which is allowed on the bench's runtime too.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A `cat` session over MCP for the echo round trip.
pub struct Echo<'a> {
    server: &'a Server,
    id: String,
    pub complete: Complete,
}

impl<'a> Echo<'a> {
    pub fn start(server: &'a Server) -> Result<Echo<'a>> {
        Ok(Echo {
            id: server.open("cat")?,
            server,
            complete: Complete::default(),
        })
    }

    /// `pty_tail` with nothing new: the cost of an MCP call alone, without a PTY or a
    /// settle.
    pub fn tail(&self) -> Result<Duration> {
        let start = Instant::now();
        self.server.call("pty_tail", json!({"id": self.id}))?;
        Ok(start.elapsed())
    }

    /// `pty_send` of `data`; complete when the one reply holds the echo and `cat`'s copy.
    pub fn round(&mut self, data: &str) -> Result<Duration> {
        Ok(self.stamped_round(data)?.0)
    }

    /// [`round`](Self::round), with the monotonic clock (`pty_session::timeline::now_ns`)
    /// at the call's start and at its reply, for the timeline of the server's stages.
    pub fn stamped_round(&mut self, data: &str) -> Result<(Duration, [u64; 2])> {
        let called = pty_session::timeline::now_ns();
        let start = Instant::now();
        let sent = self
            .server
            .call("pty_send", json!({"id": self.id, "data": data}))?;
        let elapsed = start.elapsed();
        let replied = pty_session::timeline::now_ns();
        let whole = sent["delta"] == format!("{data}\n{data}\n") && sent["settledBy"] == "input";
        self.complete.count(whole, || {
            format!("sent {data:?}, got {sent} after {elapsed:?}")
        });
        Ok((elapsed, [called, replied]))
    }
}

/// A python REPL over MCP for the REPL answer.
pub struct Repl<'a> {
    server: &'a Server,
    id: String,
    pub complete: Complete,
}

impl<'a> Repl<'a> {
    pub fn start(server: &'a Server, python: &str) -> Result<Repl<'a>> {
        Ok(Repl {
            id: server.open(&format!("{python} -q"))?,
            server,
            complete: Complete::default(),
        })
    }

    /// `pty_send` of `6*7`; complete when the one reply holds `42` and the prompt.
    pub fn round(&mut self) -> Result<Duration> {
        let start = Instant::now();
        let sent = self
            .server
            .call("pty_send", json!({"id": self.id, "data": "6*7"}))?;
        let elapsed = start.elapsed();
        self.complete.all += 1;
        let delta = sent["delta"].as_str().unwrap_or_default();
        if delta.ends_with("\n42\n") && sent["pending"] == ">>> " && sent["settledBy"] == "input" {
            self.complete.good += 1;
        }
        Ok(elapsed)
    }
}
