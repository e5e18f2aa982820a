//! What the background server and its clients say: the socket's place, the first line
//! of a connection (a [`Hello`]) and the server's [`ACK`].

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::UnixStream;

use crate::ownership;

/// The socket's name in [`socket_dir`].
pub(crate) const SOCKET: &str = "persist.sock";
/// The lock file the running server holds.
pub(crate) const LOCK: &str = "persist.lock";
/// Where the background server logs.
pub(crate) const LOG: &str = "persist.log";
/// The longest first line of a connection.
const MAX_HELLO: usize = 64 * 1024;
/// How long a new connection has to say what it wants.
pub(crate) const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// The server's answer to an `mcp` first line: from here on it serves the connection.
pub const ACK: &str = "{\"ok\":true}";

/// The first line of a connection: what the client wants.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum Hello {
    /// MCP lines follow, for `owner`; sessions opened without a `cwd` start in `cwd`.
    Mcp { owner: String, cwd: Option<String> },
    /// The sessions of every owner, as a JSON array of [`Listing`].
    Ls,
    /// A person's terminal on session `id`: WebSocket frames follow
    /// ([`crate::persist::view`]).
    Attach { id: String },
    /// Close every session and exit.
    Stop,
}

/// The directory of the socket: this user's private directory of pty-session
/// ([`ownership::private_dir`]: `$XDG_RUNTIME_DIR/pty-session`, else
/// `~/.local/state/pty-session`).
pub fn socket_dir() -> anyhow::Result<PathBuf> {
    ownership::private_dir()
}

/// Writes `hello` as the connection's first line.
pub(crate) async fn say_hello(stream: &mut UnixStream, hello: &Hello) -> anyhow::Result<()> {
    let mut line = serde_json::to_string(hello)?;
    line.push('\n');
    stream.write_all(line.as_bytes()).await?;
    Ok(())
}

/// Where the background server's socket is, for messages.
pub fn socket_path() -> String {
    socket_dir().map_or_else(
        |_| SOCKET.to_owned(),
        |dir| dir.join(SOCKET).display().to_string(),
    )
}

/// Why a connection was closed before it was served: its first line was no request, or
/// it sent none in time.
#[derive(Debug)]
pub(crate) struct BadHello;

impl std::fmt::Display for BadHello {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no request")
    }
}

/// Reads the first line, byte by byte so that nothing after it is taken.
pub(crate) async fn read_hello<R: AsyncRead + Unpin>(reader: &mut R) -> anyhow::Result<Hello> {
    let line = read_line(reader)
        .await
        .context("the client left before its first line")?;
    serde_json::from_slice(&line).context("a first line that is not a known request")
}

/// Reads one line of at most [`MAX_HELLO`] bytes, byte by byte so that nothing after it
/// is taken, without its newline.
pub(crate) async fn read_line<R: AsyncRead + Unpin>(reader: &mut R) -> anyhow::Result<Vec<u8>> {
    let mut line = Vec::new();
    loop {
        let byte = reader.read_u8().await.context("the connection ended")?;
        if byte == b'\n' {
            return Ok(line);
        }
        if line.len() >= MAX_HELLO {
            bail!("a line longer than {MAX_HELLO} bytes");
        }
        line.push(byte);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_lines_name_their_op() {
        let line = serde_json::to_string(&Hello::Mcp {
            owner: "/src/app".into(),
            cwd: None,
        })
        .unwrap();
        assert_eq!(line, r#"{"op":"mcp","owner":"/src/app","cwd":null}"#);
        assert!(matches!(
            serde_json::from_str::<Hello>(r#"{"op":"stop"}"#),
            Ok(Hello::Stop)
        ));
        assert!(serde_json::from_str::<Hello>(r#"{"op":"rm"}"#).is_err());
    }
}
