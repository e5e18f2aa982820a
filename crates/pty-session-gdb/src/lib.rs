//! Drives gdb's machine interface (GDB/MI) through [`pty_session`]: the first consumer of
//! its facade.
//!
//! Two layers:
//! - a pure **MI parser**: [`parse_line`] turns one line of gdb's output into
//!   [`Record`]s — result records ([`ResultRecord`], with tokens), async records
//!   ([`AsyncRecord`]: `*` exec, `+` status, `=` notify), stream records
//!   ([`StreamRecord`]: `~` console, `@` target, `&` log), the `(gdb)` prompt — whose
//!   [`Value`]s (c-strings, tuples, lists) it decodes. A line that is not MI becomes
//!   [`Record::Unparsed`], never a panic. [`LineFramer`] splits a raw byte stream into
//!   lines for it;
//! - a **driver**, [`Gdb`]: it starts `gdb -q --nx -i=mi2` on a session of the caller's
//!   [`Owner`](pty_session::Owner) with terminal echo off, sends commands with unique
//!   tokens and returns each answer ([`Response`]) with the records that came with it,
//!   waits for stops ([`Stopped`]), interrupts a running target, and exits. It uses the
//!   facade's `until` to wait, never sleeps or polls.
//!
//! ```no_run
//! use pty_session::{Config, Owner, PtyService};
//! use pty_session_gdb::{Gdb, GdbOptions};
//!
//! # async fn demo() -> Result<(), pty_session_gdb::Error> {
//! let pty = PtyService::new(Config::default());
//! let options = GdbOptions::new().program("./prog");
//! let mut gdb = Gdb::start(&pty, Owner::new("agent-1"), options).await?;
//! gdb.command("-break-insert main").await?;
//! gdb.command("-exec-run").await?; // ^running
//! let stop = gdb.wait_stopped().await?;
//! assert_eq!(stop.reason.as_deref(), Some("breakpoint-hit"));
//! let frames = gdb.command("-stack-list-frames").await?;
//! for frame in frames.get("stack").into_iter().flat_map(|s| s.items()) {
//!     println!("{:?} at line {:?}", frame.str("func"), frame.str("line"));
//! }
//! gdb.exit().await?;
//! # Ok(()) }
//! ```
//!
//! The debugged program shares gdb's terminal unless [`GdbOptions::tty`] gives it
//! another: its output arrives among gdb's records as [`Record::Unparsed`] lines.
#![deny(missing_docs)]

mod error;
mod framer;
mod gdb;
mod options;
mod parse;
mod record;
mod stopped;
mod value;

pub use error::{Error, ParseError, Problem, Result};
pub use framer::LineFramer;
pub use gdb::{Gdb, Response};
pub use options::GdbOptions;
pub use parse::{parse_line, parse_record, parse_value};
pub use record::{
    AsyncKind, AsyncRecord, Record, ResultClass, ResultRecord, StreamKind, StreamRecord, Unparsed,
};
pub use stopped::{Frame, Stopped, Variable};
pub use value::{Items, Results, Value};

#[cfg(test)]
mod test_support {
    /// A tiny deterministic generator of chunk sizes, 1..=17.
    fn chunk_sizes(seed: u64) -> impl Iterator<Item = usize> {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        std::iter::from_fn(move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            Some(1 + (state % 17) as usize)
        })
    }

    /// `input` cut into chunks of random sizes.
    pub(crate) fn chunked(input: &[u8], seed: u64) -> Vec<&[u8]> {
        let mut chunks = Vec::new();
        let mut rest = input;
        for size in chunk_sizes(seed) {
            if rest.is_empty() {
                break;
            }
            let (chunk, tail) = rest.split_at(size.min(rest.len()));
            chunks.push(chunk);
            rest = tail;
        }
        chunks
    }
}
