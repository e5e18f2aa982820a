//! `pty-session mcp`: MCP over stdio, the one client being the one owner. When stdin ends,
//! or on SIGTERM or SIGINT, every session is closed (process trees reaped) before exit.
//! The lines in between go through [`crate::stdio::framing`].

pub(crate) mod framing;

use std::time::Duration;

use anyhow::Context;
use pty_session::{Owner, PtyService};
use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::mcp::tools::PtyTools;

/// Two lines for a person who started `pty-session mcp` on a terminal, which would
/// otherwise wait in silence for JSON-RPC: what it is, and how a client starts it.
pub fn greeting() -> String {
    let program = std::env::current_exe()
        .ok()
        .and_then(|path| path.to_str().map(str::to_owned))
        .unwrap_or_else(|| "pty-session".to_owned());
    format!(
        "pty-session mcp speaks MCP (JSON-RPC) on stdin/stdout: an MCP client starts it, a person \
         does not type at it (Ctrl-C stops it).\n\
         Add it to a client as a stdio server: command {program:?}, args [\"mcp\"] \
         (e.g. `claude mcp add pty-session -- {program} mcp`).\n"
    )
}

/// How long the calls a departed client left in flight have, once cancelled, to write
/// their `CANCELLED` replies (a client that closed its end of stdin may still read).
const ANSWER_GRACE: Duration = Duration::from_millis(200);

/// Serves the client on stdin/stdout until it goes away or a signal asks to stop; a line
/// of stdin may have `max_line` bytes.
pub async fn serve(service: PtyService, max_line: usize) -> anyhow::Result<()> {
    let tools = PtyTools::stdio(service.clone(), Owner::new("stdio"));
    // Non-blocking pipes where the client gave us pipes, so that a pending read of stdin
    // cannot hold up the exit.
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let result = tokio::select! {
        result = serve_lines(tools, stdin, stdout, max_line) => result,
        signal = crate::stop_signal() => {
            tracing::info!(%signal, "stopping: closing every session");
            Ok(())
        }
    };
    service.shutdown().await;
    result
}

/// Serves one client of `tools` on line-framed `reader` and `writer` until its input
/// ends (then its calls in flight end with `CANCELLED` at once, rather than when their
/// waits would have) or rmcp stops. The sessions are the caller's to close or keep.
pub(crate) async fn serve_lines<R, W>(
    tools: PtyTools,
    reader: R,
    writer: W,
    max_line: usize,
) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let stopping = tools.stopping().clone();
    let input_ended = CancellationToken::new();
    // Framed by us, so that every bad line is answered and requests are read only as
    // fast as replies are written.
    let running = tools
        .serve(framing::transport(
            reader,
            writer,
            max_line,
            input_ended.clone(),
        ))
        .await
        .context("MCP start-up failed")?;
    let waiting = running.waiting();
    let mut waiting = std::pin::pin!(waiting);
    tokio::select! {
        reason = waiting.as_mut() => {
            let reason = reason.context("the MCP service task failed")?;
            tracing::info!(?reason, "the client went away");
        }
        () = input_ended.cancelled() => {
            tracing::info!("the client's input ended; cancelling its calls");
            stopping.stop();
            if tokio::time::timeout(ANSWER_GRACE, waiting).await.is_err() {
                tracing::info!("calls of a departed client still unanswered; leaving them");
            }
        }
    }
    Ok(())
}
