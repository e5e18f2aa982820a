//! The workloads over MCP: the real `pty-session mcp` binary on stdio, driven by the rmcp
//! client as an agent's client would drive it.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
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

/// `pty-session mcp` with the bench's client on its stdin/stdout.
pub struct Server {
    client: RunningService<RoleClient, BenchClient>,
    child: Child,
}

impl Server {
    /// Starts `binary mcp` and completes the MCP handshake.
    pub async fn start(binary: &Path) -> Result<Server> {
        let mut child = Command::new(binary)
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
        Ok(Server { client, child })
    }

    /// Calls `tool`; fails on a protocol error or a tool error.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<Value> {
        let Value::Object(arguments) = arguments else {
            bail!("arguments must be an object")
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let result = tokio::time::timeout(Duration::from_secs(60), self.client.call_tool(params))
            .await
            .with_context(|| format!("{tool}: no answer within 60 s"))??;
        let value = result
            .structured_content
            .context("a result without structuredContent")?;
        ensure!(result.is_error != Some(true), "{tool} failed: {value}");
        Ok(value)
    }

    /// Opens `command`; its session id.
    pub async fn open(&self, command: &str) -> Result<String> {
        let opened = self
            .call("pty_open", json!({"command": command, "timeoutMs": 20_000}))
            .await?;
        ensure!(opened["status"] == "running", "{command} ended: {opened}");
        Ok(opened["sessionId"]
            .as_str()
            .context("sessionId")?
            .to_owned())
    }

    /// Closes the stdio (the server closes its sessions and exits) and reaps it.
    pub async fn stop(mut self) -> Result<()> {
        let _ = self.client.cancel().await;
        match tokio::time::timeout(Duration::from_secs(20), self.child.wait()).await {
            Ok(status) => {
                status?;
            }
            Err(_) => {
                self.child.kill().await?;
                bail!("pty-session mcp did not exit within 20 s of EOF");
            }
        }
        Ok(())
    }
}

/// A `cat` session over MCP for the echo round trip.
pub struct Echo<'a> {
    server: &'a Server,
    id: String,
    pub complete: Complete,
}

impl<'a> Echo<'a> {
    pub async fn start(server: &'a Server) -> Result<Echo<'a>> {
        Ok(Echo {
            id: server.open("cat").await?,
            server,
            complete: Complete::default(),
        })
    }

    /// `pty_tail` with nothing new: the cost of an MCP call alone, without a PTY or a
    /// settle.
    pub async fn tail(&self) -> Result<Duration> {
        let start = Instant::now();
        self.server.call("pty_tail", json!({"id": self.id})).await?;
        Ok(start.elapsed())
    }

    /// `pty_send` of `data`; complete when the one reply holds the echo and `cat`'s copy.
    pub async fn round(&mut self, data: &str) -> Result<Duration> {
        let start = Instant::now();
        let sent = self
            .server
            .call("pty_send", json!({"id": self.id, "data": data}))
            .await?;
        let elapsed = start.elapsed();
        let whole = sent["delta"] == format!("{data}\n{data}\n") && sent["settledBy"] == "input";
        self.complete.count(whole, || {
            format!("sent {data:?}, got {sent} after {elapsed:?}")
        });
        Ok(elapsed)
    }
}

/// A python REPL over MCP for the REPL answer.
pub struct Repl<'a> {
    server: &'a Server,
    id: String,
    pub complete: Complete,
}

impl<'a> Repl<'a> {
    pub async fn start(server: &'a Server, python: &str) -> Result<Repl<'a>> {
        Ok(Repl {
            id: server.open(&format!("{python} -q")).await?,
            server,
            complete: Complete::default(),
        })
    }

    /// `pty_send` of `6*7`; complete when the one reply holds `42` and the prompt.
    pub async fn round(&mut self) -> Result<Duration> {
        let start = Instant::now();
        let sent = self
            .server
            .call("pty_send", json!({"id": self.id, "data": "6*7"}))
            .await?;
        let elapsed = start.elapsed();
        self.complete.all += 1;
        let delta = sent["delta"].as_str().unwrap_or_default();
        if delta.ends_with("\n42\n") && sent["pending"] == ">>> " && sent["settledBy"] == "input" {
            self.complete.good += 1;
        }
        Ok(elapsed)
    }
}
