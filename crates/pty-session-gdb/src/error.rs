//! The driver's error ([`Error`]) and why a line is not MI ([`ParseError`]).

use std::fmt;

use pty_session::ExitStatus;

/// What went wrong driving gdb.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The PTY service refused a call (spawn failed, session limit, ...).
    #[error(transparent)]
    Pty(#[from] pty_session::Error),
    /// gdb ended before it showed its first prompt: it is not installed, or its
    /// arguments were wrong.
    #[error("gdb did not start ({}); it printed: {output:?}", describe(.status))]
    Start {
        /// How it ended, if it did.
        status: Option<ExitStatus>,
        /// What it printed.
        output: String,
    },
    /// gdb ended while the driver waited for it: it crashed or was killed. The driver
    /// has closed its session, so nothing gdb started outlives it; later calls fail the
    /// same way.
    #[error(
        "gdb ended ({}) while waiting for {waiting_for}; start a new one",
        describe(.status)
    )]
    Exited {
        /// What the driver was waiting for, such as `the answer to 3-exec-next`.
        waiting_for: String,
        /// How gdb ended.
        status: Option<ExitStatus>,
    },
    /// No answer came within the timeout. What arrives later is kept for the next call.
    #[error(
        "no {waiting_for} within {} ms; gdb may be busy (interrupt() a running \
         target) or hung (exit() it)",
        .timeout.as_millis()
    )]
    Timeout {
        /// What the driver was waiting for.
        waiting_for: String,
        /// The timeout that passed.
        timeout: std::time::Duration,
    },
    /// gdb answered `^error`.
    #[error("gdb rejected {command:?}: {message}")]
    Command {
        /// The command as given (without the token).
        command: String,
        /// gdb's `msg`.
        message: String,
        /// gdb's `code`, such as `undefined-command`, when it gives one.
        code: Option<String>,
    },
    /// The command cannot be sent as one MI command line.
    #[error("command {command:?} {reason}; give one MI command on one line")]
    InvalidCommand {
        /// The command as given.
        command: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

fn describe(status: &Option<ExitStatus>) -> String {
    match status {
        Some(status) => status.to_string(),
        None => "still running".to_owned(),
    }
}

/// The driver's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a line is not an MI record: where, and what was wrong there.
///
/// Not a variant of [`Error`]: a line that is not MI is data (most often the debugged
/// program's own output on the shared terminal), carried by
/// [`Record::Unparsed`](crate::Record::Unparsed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at byte {at}: {problem}")]
pub struct ParseError {
    /// The byte offset in the line.
    pub at: usize,
    /// What was wrong there.
    pub problem: Problem,
}

/// What was wrong in a line that does not parse: see [`ParseError`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// The line is empty.
    Empty,
    /// The line starts with none of the record prefixes `^*+=~@&(` (after a token).
    NotARecord,
    /// A token is too large for a `u64`.
    TokenTooLarge,
    /// `^` is followed by no class MI knows.
    UnknownResultClass(String),
    /// Something else was expected here, such as `"'=' after a name"`.
    Expected(&'static str),
    /// A c-string has no closing quote.
    UnterminatedString,
    /// A c-string has an escape MI does not know.
    BadEscape(char),
    /// Values nest deeper than the parser follows.
    TooDeep,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Empty => f.write_str("empty line"),
            Problem::NotARecord => f.write_str("not an MI record"),
            Problem::TokenTooLarge => f.write_str("token too large"),
            Problem::UnknownResultClass(class) => write!(f, "unknown result class {class:?}"),
            Problem::Expected(what) => write!(f, "expected {what}"),
            Problem::UnterminatedString => f.write_str("unterminated c-string"),
            Problem::BadEscape(c) => write!(f, "unknown escape \\{c}"),
            Problem::TooDeep => f.write_str("values nested too deep"),
        }
    }
}
