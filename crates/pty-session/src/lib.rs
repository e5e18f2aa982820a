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
//! The full reference of the calls, their arguments, results and errors is the
//! repository's `docs/tools.md` (written for the MCP tools, which are this library's calls
//! one to one) and `docs/library.md`.
//!
//! # What linking this library does to your binary
//! Each session's command runs under a small *shim* process that owns its process tree
//! (a child subreaper that kills the whole tree when the session closes or the service
//! dies), and the shims are forked by one *spawner* process per service. Both are this
//! library's code running in **your executable**: at its first open, the service starts
//! `/proc/self/exe` once, with the environment variable `PTY_SESSION_SPAWNER=1` and a
//! socket on stdin.
//!
//! To make that work, the library puts one constructor in your binary: a function in the
//! ELF `.init_array` section, which the C runtime calls before `main` in every program
//! that links the crate (a server, a consumer's binary, a test binary).
//! - Without the marker, which is every ordinary start of your program, the constructor
//!   reads one environment variable and returns: your `main` runs as always, with the
//!   same arguments, environment, descriptors and signal dispositions.
//! - With the marker, your `main` never runs: the process serves the service as its
//!   spawner and exits (with `_exit`, running no destructors) when the service goes.
//!   Do not set `PTY_SESSION_SPAWNER` yourself.
//!
//! `ps` shows the spawner as `pty-spawner` and each shim as `pty-shim`.
//!
//! Where the current executable does not link the library — a Node.js addon, whose
//! executable is `node` — [`Config::spawner`] names another that does, such as a program
//! whose `main` is [`spawner_main`].
//!
//! Why a constructor rather than an entry point you call first thing in `main`: an entry
//! point would work only where the consumer owns `main`. Test binaries do not (libtest
//! writes their `main`), and a consumer's tests are where a missed call would show up
//! last. A constructor needs no setup at all and cannot be forgotten.
//!
//! Linux only: the shim, input-wait settling and the tree kill use `/proc`, `prctl` and
//! `signalfd` (the repository's `docs/portability.md` says what a port would take).
#![deny(missing_docs)]

// The Linux-only modules live in `linux/` and have no counterpart for another system yet:
// say so at once rather than with a page of errors.
#[cfg(not(target_os = "linux"))]
compile_error!(
    "pty-session runs on Linux only for now; docs/portability.md says what a port needs"
);

/// What talks to the kernel in Linux's own terms: the PTY pair and its foreground group,
/// the spawner and the shim (`prctl`, `signalfd`, `clone`, `TIOCSCTTY`), `/proc` (the tree
/// kill's parent links, input wait), the fine timer (`timerfd`). The rest of the crate
/// reaches them through the names re-exported below; a port to another system adds a
/// sibling module that provides the same names (docs/portability.md).
#[cfg(target_os = "linux")]
mod linux {
    pub(crate) mod blocked;
    pub(crate) mod children;
    pub(crate) mod confine;
    pub(crate) mod isolate;
    pub(crate) mod pids;
    pub(crate) mod procfs;
    pub(crate) mod pty;
    pub(crate) mod shim;
    pub(crate) mod spawn;
    pub(crate) mod spawner;
    pub(crate) mod timer;
    pub(crate) mod tree;
}
// The kill when the shim cannot be trusted with it.
#[cfg(target_os = "linux")]
use linux::{children, tree};

#[cfg(target_os = "linux")]
use linux::{blocked, confine, isolate, pids, procfs, pty, shim, spawn, spawner, timer};

mod backend;
mod config;
mod error;
pub mod nofile;
mod owned;
mod owner;
mod record;
mod registry;
mod request;
mod sandbox;
mod service;
mod session;
mod settle;
mod shell;
mod signal;
mod tap;
mod term;
pub mod timeline;
mod watch;

pub use backend::{Backend, Backends, ExecBackend, ShellBackend, quote_word};
pub use config::{Colours, Config};
pub use error::{Error, LimitScope, Result};
#[cfg(target_os = "linux")]
pub use linux::spawner::spawner_main;
pub use owned::OwnedSession;
pub use owner::{Owner, SessionId};
pub use request::{
    ExitStatus, OpenRequest, Opened, Output, Rest, SendRequest, Sent, SessionInfo, Settle,
    SettleReason, Status, Tail, TailRequest, check_window, limits,
};
pub use sandbox::{ABI_CEILING_VAR, Sandbox};
pub use service::PtyService;
pub use settle::progress::{Progress, ProgressFn};
pub use shell::commands::ShellCommand;
pub use term::screen::{Position, Screen};
pub use tokio_util::sync::CancellationToken;
pub use watch::{Watch, WatchEvent};

/// One look at a foreground group, for the benchmark's row on what a look costs (behind
/// the `bench` feature). Not a public API.
#[cfg(feature = "bench")]
#[doc(hidden)]
pub mod bench {
    /// Looks at process `pid` as settling does, with `tty` for the session's terminal
    /// (`/dev/pts/3`), keeping its records open from look to look.
    pub struct Looker {
        probe: crate::procfs::GroupProbe,
        members: Vec<i32>,
    }

    impl Looker {
        /// A looker at the group of one process.
        pub fn new(pid: i32, tty: &str) -> Looker {
            Looker {
                probe: crate::procfs::GroupProbe::new(tty),
                members: vec![pid],
            }
        }

        /// One look: `"input"`, `"soon"` (input wait with a short timer), `"timed"` (input
        /// wait with a longer timer), `"working"`, `"sleeps"` (a short sleep, nothing at
        /// the terminal), `"remote"` (the terminal and an outside source), `"cannot tell"`,
        /// or `"gone"`.
        pub fn look(&mut self) -> &'static str {
            match self.probe.sample(&self.members).map(|s| s.verdict) {
                Some(crate::blocked::Verdict::Input) => "input",
                Some(crate::blocked::Verdict::Working) => "working",
                Some(crate::blocked::Verdict::CannotTell) => "cannot tell",
                Some(crate::blocked::Verdict::Soon(_)) => "soon",
                Some(crate::blocked::Verdict::Timed) => "timed",
                Some(crate::blocked::Verdict::Remote) => "remote",
                Some(crate::blocked::Verdict::Sleeps(_)) => "sleeps",
                None => "gone",
            }
        }
    }
}

/// Pure internals for the fuzz targets (`fuzz/`), behind the `fuzzing` feature. Not a
/// public API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing {
    /// Renders `bytes` fed in pieces cut at `cuts` (offsets, ascending): the completed
    /// lines, the pending line and the replies to terminal queries.
    pub fn render(bytes: &[u8], cuts: &[usize]) -> (Vec<String>, String, Vec<u8>) {
        let mut renderer = crate::term::render::Renderer::new(120, 40);
        let mut out = crate::term::output::Rendered::default();
        let mut at = 0;
        for &cut in cuts.iter().chain([&bytes.len()]) {
            let cut = cut.clamp(at, bytes.len());
            renderer.feed(&bytes[at..cut], &mut out);
            at = cut;
        }
        renderer.fix(&mut out);
        (out.lines, renderer.pending(), out.replies)
    }

    /// The longest line the renderer emits, in bytes.
    pub const MAX_LINE_BYTES: usize = crate::term::render::MAX_LINE_BYTES;
}
