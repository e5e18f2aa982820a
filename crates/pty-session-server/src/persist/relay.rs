//! `pty-session mcp --persist`: the host's MCP lines relayed to the background server, and
//! what the relay does when that server goes away under it.
//!
//! The relay reads whole lines each way and looks into them only as far as it needs: the
//! host's `initialize` and `notifications/initialized` (kept, to say again to a new
//! server), the ids of the host's requests (to know which are in flight) and the server's
//! answers to them. When the server's end closes while the host's is open (the server
//! was stopped, or died), every request in flight gets an answer that says so; the host's
//! next line starts (or finds) a new server, to which the host's `initialize` is said
//! again (its answer kept from the host, which has one), and the relay goes on: the host
//! is never left with a dead transport. The first `UNKNOWN_SESSION` a tool answers after that says why the
//! session is unknown: it was the old server's.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Context as _;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWriteExt as _, BufReader};
use tokio::net::UnixStream;
use tokio::sync::mpsc;

use crate::persist::protocol::{Hello, socket_dir};

/// The longest line relayed; a longer one ends the relay (the server refuses far less).
const MAX_LINE: usize = 256 * 1024 * 1024;

/// What a request in flight was, to answer it the way its method is answered.
#[derive(Debug, Clone, PartialEq)]
enum Pending {
    /// A `tools/call`: answered with a tool error, as the tools answer.
    ToolCall,
    /// Anything else: answered with a JSON-RPC error.
    Other,
}

/// The host's side of the relay: what it said that a new server must hear again, and what
/// it waits for.
#[derive(Debug, Default)]
pub(crate) struct Host {
    /// The host's `initialize` request, as sent, and its id.
    initialize: Option<(Vec<u8>, Value)>,
    /// The host's `notifications/initialized`, as sent.
    initialized: Option<Vec<u8>>,
    /// The host's requests the server has not answered, by id (as JSON text).
    in_flight: HashMap<String, Pending>,
    /// Set when the server was replaced: the next `UNKNOWN_SESSION` says why.
    replaced: Option<String>,
}

impl Host {
    /// Notes a line from the host.
    pub(crate) fn heard_from_host(&mut self, line: &[u8]) {
        let Ok(message) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let method = message.get("method").and_then(Value::as_str);
        match (method, message.get("id")) {
            (Some("initialize"), Some(id)) => {
                self.initialize = Some((line.to_vec(), id.clone()));
                self.in_flight.insert(id.to_string(), Pending::Other);
            }
            (Some("notifications/initialized"), None) => self.initialized = Some(line.to_vec()),
            (Some(method), Some(id)) => {
                let pending = if method == "tools/call" {
                    Pending::ToolCall
                } else {
                    Pending::Other
                };
                self.in_flight.insert(id.to_string(), pending);
            }
            _ => {}
        }
    }

    /// Notes a line from the server and gives what the host is to get: the line, or, for
    /// the first `UNKNOWN_SESSION` after the server was replaced, the line with why.
    pub(crate) fn heard_from_server(&mut self, line: Vec<u8>) -> Vec<u8> {
        let Ok(mut message) = serde_json::from_slice::<Value>(&line) else {
            return line;
        };
        let is_answer = message.get("result").is_some() || message.get("error").is_some();
        if let (true, Some(id)) = (is_answer, message.get("id")) {
            self.in_flight.remove(&id.to_string());
        }
        let Some(why) = &self.replaced else {
            return line;
        };
        let text = message
            .pointer_mut("/result/content/0/text")
            .filter(|text| {
                text.as_str()
                    .is_some_and(|t| t.starts_with("UNKNOWN_SESSION:"))
            });
        let Some(text) = text else {
            return line;
        };
        let said = format!("{} ({why})", text.as_str().unwrap_or_default());
        *text = Value::String(said);
        self.replaced = None;
        let mut line = serde_json::to_vec(&message).unwrap_or(line);
        line.push(b'\n');
        line
    }

    /// The answers to every request in flight, now that the server that had them is gone
    /// (`why`), each a line; none is in flight after.
    pub(crate) fn orphaned(&mut self, why: &str) -> Vec<Vec<u8>> {
        let mut answers: Vec<(String, Pending)> = self.in_flight.drain().collect();
        answers.sort_by(|a, b| a.0.cmp(&b.0));
        answers
            .into_iter()
            .filter_map(|(id, pending)| {
                let id: Value = serde_json::from_str(&id).ok()?;
                let answer = match pending {
                    Pending::ToolCall => json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "result": {
                            "content": [{"type": "text", "text": format!("UNKNOWN_SESSION: {why}")}],
                            "isError": true,
                        },
                    }),
                    Pending::Other => json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": {"code": -32603, "message": why},
                    }),
                };
                let mut line = serde_json::to_vec(&answer).ok()?;
                line.push(b'\n');
                Some(line)
            })
            .collect()
    }
}

/// Why the calls in flight failed, and what is true now.
fn replaced_why() -> String {
    let at = chrono::Utc::now().format("%H:%M:%S UTC");
    format!(
        "the background server of `pty-session mcp --persist` went away (stopped or died) at \
         {at}; a new one serves this client, and the sessions opened before are gone: open \
         new ones with pty_open"
    )
}

/// Lines read from `reader` into a channel, ending with its end (or a read error).
fn lines_of<R: AsyncRead + Unpin + Send + 'static>(reader: R) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        let mut reader = BufReader::new(reader);
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) if line.len() > MAX_LINE => return,
                Ok(_) => {
                    if !line.ends_with(b"\n") {
                        line.push(b'\n');
                    }
                    if tx.send(line).await.is_err() {
                        return;
                    }
                }
            }
        }
    });
    rx
}

/// Says the host's `initialize` (and `initialized`) again to a new server, and reads the
/// answer, which the host, answered before, does not get.
async fn reintroduce(host: &Host, stream: &mut UnixStream) -> anyhow::Result<()> {
    let Some((line, id)) = &host.initialize else {
        return Ok(());
    };
    stream.write_all(line).await?;
    let mut reader = BufReader::new(&mut *stream);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let mut answer = Vec::new();
        let read = tokio::time::timeout_at(deadline, reader.read_until(b'\n', &mut answer))
            .await
            .context("the new background server did not answer `initialize`")??;
        if read == 0 {
            anyhow::bail!("the new background server closed before it answered `initialize`");
        }
        let answered = serde_json::from_slice::<Value>(&answer)
            .ok()
            .is_some_and(|message| message.get("id") == Some(id));
        if answered {
            break;
        }
    }
    drop(reader);
    if let Some(line) = &host.initialized {
        stream.write_all(line).await?;
    }
    Ok(())
}

/// A connection to a background server: where the host's lines go, and the server's
/// lines as they come.
struct Connection {
    to_server: tokio::net::unix::OwnedWriteHalf,
    from_server: mpsc::Receiver<Vec<u8>>,
}

impl Connection {
    /// A connection to the running server for `hello`, one started if none runs; to a
    /// server that replaces one gone, the host's `initialize` is said again.
    async fn open(
        dir: &Path,
        server_args: &[String],
        hello: &Hello,
        host: &Host,
    ) -> anyhow::Result<Connection> {
        let mut stream = crate::persist::client::mcp_connection(dir, server_args, hello).await?;
        if host.replaced.is_some() {
            reintroduce(host, &mut stream).await?;
        }
        let (reader, to_server) = stream.into_split();
        Ok(Connection {
            to_server,
            from_server: lines_of(reader),
        })
    }
}

/// `pty-session mcp --persist`: relays stdin/stdout to the background server for `owner`,
/// starting it if needed, and a new one should it go away, until the host's side ends.
/// `server_args` configure a server it starts.
pub async fn relay(owner: String, server_args: &[String]) -> anyhow::Result<()> {
    let dir = socket_dir()?;
    crate::ownership::make_private_dir(&dir)?;
    let cwd = std::env::current_dir()
        .ok()
        .map(|cwd| cwd.to_string_lossy().into_owned());
    relay_lines(&dir, server_args, &Hello::Mcp { owner, cwd }).await
}

/// Relays the host's stdin and stdout to the background server for `hello` (started if
/// need be with `server_args`) until the host's side ends or a stop signal comes. When
/// the server goes away, the calls in flight are answered, and the host's next line
/// starts or finds another: a `pty-session stop` leaves no server running until a host
/// calls again.
async fn relay_lines(dir: &Path, server_args: &[String], hello: &Hello) -> anyhow::Result<()> {
    let (stdin, mut stdout) = rmcp::transport::stdio_pipes();
    let mut from_host = lines_of(stdin);
    let mut host = Host::default();
    let mut connection = Some(Connection::open(dir, server_args, hello, &host).await?);
    let mut signal = std::pin::pin!(crate::stop_signal());
    loop {
        let from_server = async {
            match connection.as_mut() {
                Some(connection) => connection.from_server.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            line = from_host.recv() => {
                let Some(line) = line else {
                    break;
                };
                if connection.is_none() {
                    connection = Some(Connection::open(dir, server_args, hello, &host).await?);
                }
                host.heard_from_host(&line);
                if let Some(connection) = connection.as_mut() {
                    // A server gone shows as the end of its lines.
                    let _ = connection.to_server.write_all(&line).await;
                }
            }
            line = from_server => match line {
                Some(line) => {
                    stdout.write_all(&host.heard_from_server(line)).await?;
                    stdout.flush().await?;
                }
                None => {
                    connection = None;
                    let why = replaced_why();
                    tracing::warn!("{why}");
                    for answer in host.orphaned(&why) {
                        stdout.write_all(&answer).await?;
                    }
                    stdout.flush().await?;
                    host.replaced = Some(why);
                }
            },
            name = signal.as_mut() => {
                tracing::info!(signal = %name, "stopping; the sessions stay with the background server");
                return Ok(());
            }
        }
    }
    // The host's end: the server sees it, cancels its calls and keeps its sessions; what
    // it still answers reaches the host.
    if let Some(mut connection) = connection {
        let _ = connection.to_server.shutdown().await;
        while let Some(line) = connection.from_server.recv().await {
            stdout.write_all(&host.heard_from_server(line)).await?;
        }
        let _ = stdout.flush().await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(value: Value) -> Vec<u8> {
        let mut line = serde_json::to_vec(&value).unwrap();
        line.push(b'\n');
        line
    }

    #[test]
    fn calls_in_flight_are_answered_when_the_server_goes() {
        let mut host = Host::default();
        host.heard_from_host(&line(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}),
        ));
        host.heard_from_host(&line(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ));
        host.heard_from_server(line(json!({"jsonrpc": "2.0", "id": 0, "result": {}})));
        host.heard_from_host(&line(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "pty_send"}})));
        host.heard_from_host(&line(
            json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}),
        ));
        host.heard_from_host(&line(
            json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}),
        ));
        host.heard_from_server(line(
            json!({"jsonrpc": "2.0", "id": 8, "result": {"tools": []}}),
        ));
        let answers: Vec<Value> = host
            .orphaned("gone")
            .iter()
            .map(|line| serde_json::from_slice(line).unwrap())
            .collect();
        assert_eq!(answers.len(), 2, "{answers:?}");
        let tool = answers.iter().find(|a| a["id"] == 7).unwrap();
        assert_eq!(tool["result"]["isError"], true);
        assert_eq!(
            tool["result"]["content"][0]["text"],
            "UNKNOWN_SESSION: gone"
        );
        let ping = answers.iter().find(|a| a["id"] == "p").unwrap();
        assert_eq!(ping["error"]["message"], "gone");
        assert!(host.orphaned("again").is_empty(), "each is answered once");
        assert!(host.initialize.is_some() && host.initialized.is_some());
    }

    #[test]
    fn the_first_unknown_session_after_a_replacement_says_why() {
        let mut host = Host {
            replaced: Some("the old server went away".into()),
            ..Host::default()
        };
        let unknown = json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [
            {"type": "text", "text": "UNKNOWN_SESSION: no open session k3v8q2mx"}], "isError": true}});
        let first: Value =
            serde_json::from_slice(&host.heard_from_server(line(unknown.clone()))).unwrap();
        assert_eq!(
            first["result"]["content"][0]["text"],
            "UNKNOWN_SESSION: no open session k3v8q2mx (the old server went away)"
        );
        let second: Value = serde_json::from_slice(&host.heard_from_server(line(unknown))).unwrap();
        assert_eq!(
            second["result"]["content"][0]["text"],
            "UNKNOWN_SESSION: no open session k3v8q2mx"
        );
        // Lines that are not JSON pass as they are.
        assert_eq!(host.heard_from_server(b"garbage\n".to_vec()), b"garbage\n");
    }
}
