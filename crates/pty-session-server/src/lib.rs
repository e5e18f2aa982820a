//! The `pty-session` server: the MCP tools of docs/tools.md (`pty_open`, `pty_send`,
//! `pty_tail`, `pty_close` and the others listed there) over stdio and streamable HTTP, served from one
//! [`pty_session::PtyService`].
//!
//! The binary is a thin `main` over this library, which exists so that integration tests
//! can also drive the handler in-process.
//!
//! - [`cli`]: the command line; [`config`]: the config file and flags.
//! - [`tools`]: the one handler, a method per tool; [`wire`]: arguments and results as
//!   they travel; [`reply`]: the text block and the one error mapping.
//! - [`memory`]: freed memory given back to the system.
//! - [`persist`]: `mcp --persist`, its relay and the per-user background server;
//!   [`persist_view`]: its sessions as `ls` and `attach` show them.
//! - [`owner`]: who is calling; [`auth`]: bearer tokens; [`proof`]: a `serve` proving it
//!   holds a client's token before the client sends it; [`ownership`]: which files,
//!   directories and socket peers this user trusts; [`secrets`]: what no session
//!   inherits; [`logs`]: the stderr logger.
//! - [`stdio`], [`http`]: the transports, serving the same handler; [`stdio_framing`]:
//!   the lines of stdio, parse errors answered and requests in flight bounded;
//!   [`front`]: the Host and Origin rules of every HTTP route and the headers of every
//!   answer; [`refusal`]: refused requests logged, rate limited; [`connections`]: HTTP
//!   connections under a cap; [`mcp_sessions`]: legacy MCP sessions per token, capped and
//!   expired; [`priming`]: SSE priming events only for the protocol versions that define
//!   them.
//! - [`web`]: the web view and the API beside `/mcp` for people, its terminal streams
//!   counted in [`stream_slots`]; [`attach`]: the
//!   `attach` and `ls` commands, its clients in a person's own terminal; [`app`]: the
//!   MCP App, the same terminal inline in a chat host; `xterm`: xterm.js, vendored and embedded once
//!   for both.

pub mod app;
pub mod attach;
pub mod auth;
pub mod cli;
pub mod config;
pub mod connections;
pub mod front;
pub mod http;
pub mod logs;
pub mod mcp_sessions;
pub mod memory;
pub mod owner;
pub mod ownership;
pub mod persist;
pub mod persist_peer;
pub mod persist_view;
pub mod priming;
pub mod progress;
pub mod proof;
pub mod refusal;
pub mod reply;
pub mod secrets;
pub mod shown;
pub mod stdio;
pub mod stdio_framing;
pub mod stream_slots;
pub mod tools;
mod view_stream;
pub mod web;
pub mod wire;
mod xterm;

/// Waits for SIGTERM or SIGINT and names the one that came.
pub(crate) async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::warn!("cannot listen for SIGTERM/SIGINT; stop the server by closing its input");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    }
}
