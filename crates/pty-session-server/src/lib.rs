//! The `pty-session` server: the MCP tools of docs/tools.md (`pty_open`, `pty_send`,
//! `pty_tail`, `pty_close` and the others listed there) over stdio and streamable HTTP, served from one
//! [`pty_session::PtyService`].
//!
//! The binary is a thin `main` over this library, which exists so that integration tests
//! can also drive the handler in-process.
//!
//! Four rooms, by whom they serve, and the start-up around them:
//! - `mcp`: agents: the one handler with a method per tool (`tools`), arguments and
//!   results as they travel (`wire`), the text block and the one error mapping (`reply`),
//!   progress notifications, and who calls (`owner`).
//! - [`stdio`] and [`http`]: the transports serving that handler. Under `http`: the Host
//!   and Origin rules and the one loopback rule (`front`), bearer tokens (`auth`) and the
//!   proof that a server holds one (`proof`), connections under caps (`connections`),
//!   legacy MCP sessions (`sessions`), SSE priming, and refusals logged and rate limited
//!   (`refusal`).
//! - `people`: people beside the agent: the web view and its API (`web`), its streams
//!   (`view_stream`, `stream_slots`), the one session listing they all show (`listing`),
//!   [`attach`] and [`ls`] in a person's own terminal (asking a `serve` or the background
//!   server: `remote`), the MCP App (`app`), xterm.js
//!   embedded once (`xterm`), and fields shown safely ([`shown`]).
//! - [`persist`]: `mcp --persist`: the relay, the per-user background server, the peers
//!   it refuses (`peer`) and its sessions for people (`view`).
//! - Start-up: [`cli`], [`config`], [`logs`], [`secrets`] (what no session inherits),
//!   [`memory`] (freed memory given back), and `ownership` (which files, directories and
//!   socket peers this user trusts).
//!
//! Modules are private to the crate but for what the binary and the tests call.

// The crate's docs are for its developers, who read them with private items
// (`cargo doc --document-private-items`): links into the private modules are meant.
#![allow(rustdoc::private_intra_doc_links)]

pub mod cli;
pub mod config;
pub mod http;
pub mod logs;
mod mcp;
pub mod memory;
mod ownership;
mod people;
pub mod persist;
pub mod secrets;
pub mod stdio;

pub use mcp::tools::PtyTools;
/// The tools' arguments and results as they travel, and the tools' names of the library's
/// arguments: also the shape of the Node.js package's calls.
pub use mcp::{reply, wire};
pub use people::shown::shown;
pub use people::{attach, ls};

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
