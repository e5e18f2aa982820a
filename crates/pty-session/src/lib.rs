//! Long-lived interactive processes on pseudo-terminals, for AI agents and the programs
//! written for them.
//!
//! A [`PtyService`] runs sessions: each is one command on its own PTY, drained
//! continuously and rendered into lines the way a terminal shows them. Every call names an
//! [`Owner`]; a session belongs to the owner that opened it. Each session has one read
//! cursor: every line is delivered once, in order, across [`open`](PtyService::open),
//! [`send`](PtyService::send) and [`tail`](PtyService::tail). Open and send return once the
//! output has *settled* ([`SettleReason`]): the process exited, it waits for input, a line
//! matched `until`, it went quiet, or the timeout passed. [`close`](PtyService::close)
//! kills the whole process tree and reaps it.
//!
//! ```no_run
//! use pty_session::{Config, OpenRequest, Owner, PtyService, SendRequest};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn demo() -> Result<(), pty_session::Error> {
//! let pty = PtyService::new(Config::default());
//! let owner = Owner::new("agent-1");
//! let opened = pty.open(&owner, OpenRequest::new("python3 -q"), &CancellationToken::new()).await?;
//! assert_eq!(opened.pending, ">>> ");
//! let sent = pty.send(&owner, &opened.session_id, SendRequest::new("6*7")).await?;
//! assert_eq!(sent.delta.text, ">>> 6*7\n42\n"); // the prompt line completes with the echo
//! assert_eq!(sent.pending, ">>> ");
//! pty.close(&owner, &opened.session_id).await?;
//! # Ok(()) }
//! ```
//!
//! # The shim
//! Each session's command runs under a small *shim* process: this library's own code. At
//! its first open the service starts the current executable (`/proc/self/exe`) once with
//! the environment marker `PTY_SESSION_SPAWNER=1`; a constructor of this library, which
//! runs before `main` in every program that links it (a server, a consumer's binary, a
//! test binary), sees the marker and becomes the *spawner* instead: a small
//! single-threaded process that forks one shim per session. Nothing needs configuring,
//! and every program built on the library gets the same guarantee: the shim is a child
//! subreaper that kills the whole process tree when the session closes or the service
//! dies. `ps` shows the spawner as `pty-spawner` and each shim as `pty-session-shim`.
//!
//! Linux only: the shim, input-wait settling and the tree kill use `/proc`, `prctl` and
//! `signalfd`.
#![deny(missing_docs)]

mod answer;
mod backend;
mod config;
mod error;
mod keys;
mod nofile;
mod owner;
mod procfs;
mod pty;
mod record;
mod render;
mod request;
mod screen;
mod scrollback;
mod service;
mod session;
mod settle;
mod shim;
mod signal;
mod spawn;
mod spawner;
mod tap;
mod timer;
mod watch;

pub use backend::{Backend, Backends, ExecBackend, ShellBackend, quote_word};
pub use config::Config;
pub use error::{Error, Result};
pub use owner::{Owner, SessionId};
pub use request::{
    ExitStatus, OpenRequest, Opened, Output, SendRequest, Sent, Settle, SettleReason, Status, Tail,
    limits,
};
pub use screen::{Position, Screen};
pub use service::PtyService;
pub use tokio_util::sync::CancellationToken;
pub use watch::{Watch, WatchEvent};

/// Pure internals for the fuzz targets (`fuzz/`), behind the `fuzzing` feature. Not a
/// public API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing {
    /// Renders `bytes` fed in pieces cut at `cuts` (offsets, ascending): the completed
    /// lines, the pending line and the replies to terminal queries.
    pub fn render(bytes: &[u8], cuts: &[usize]) -> (Vec<String>, String, Vec<u8>) {
        let mut renderer = crate::render::Renderer::new(40);
        let mut out = crate::render::Rendered::default();
        let mut at = 0;
        for &cut in cuts.iter().chain([&bytes.len()]) {
            let cut = cut.clamp(at, bytes.len());
            renderer.feed(&bytes[at..cut], &mut out);
            at = cut;
        }
        (out.lines, renderer.pending(), out.replies)
    }

    /// The longest line the renderer emits, in bytes.
    pub const MAX_LINE_BYTES: usize = crate::render::MAX_LINE_BYTES;
}
