//! `pty-session mcp`: MCP over stdio, the one client being the one owner. When stdin ends,
//! or on SIGTERM or SIGINT, every session is closed (process trees reaped) before exit.
//! The lines in between go through [`crate::stdio_framing`].

use anyhow::Context;
use pty_session::{Owner, PtyService};
use rmcp::ServiceExt;

use crate::stdio_framing;
use crate::tools::PtyTools;

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

/// Serves the client on stdin/stdout until it goes away or a signal asks to stop; a line
/// of stdin may have `max_line` bytes.
pub async fn serve(service: PtyService, max_line: usize) -> anyhow::Result<()> {
    let tools = PtyTools::stdio(service.clone(), Owner::new("stdio"));
    let served = async {
        // Non-blocking pipes where the client gave us pipes, so that a pending read of
        // stdin cannot hold up the exit; framed by us, so that every bad line is answered
        // and requests are read only as fast as replies are written.
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        let running = tools
            .serve(stdio_framing::transport(stdin, stdout, max_line))
            .await
            .context("MCP start-up over stdio failed")?;
        let reason = running
            .waiting()
            .await
            .context("the MCP service task failed")?;
        tracing::info!(?reason, "the client went away; closing every session");
        anyhow::Ok(())
    };
    let result = tokio::select! {
        result = served => result,
        signal = crate::stop_signal() => {
            tracing::info!(%signal, "stopping: closing every session");
            Ok(())
        }
    };
    service.shutdown().await;
    result
}
