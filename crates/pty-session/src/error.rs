//! The one error type of the library, whose variants map one-to-one to the error codes of
//! docs/tools.md.

use std::fmt;
use std::io;
use std::sync::Arc;

use crate::SessionId;

/// What went wrong in a call to [`PtyService`](crate::PtyService).
///
/// Each variant is one error code of the contract; [`Error::code`] gives the string. The
/// `Display` form is the message for the caller: what was wrong and what to do. Where an
/// OS error is the cause, [`source`](std::error::Error::source) gives it too.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The session belongs to another owner.
    #[error("session {id} belongs to another owner; use a session this owner opened")]
    ForeignSession {
        /// The session that was named.
        id: SessionId,
    },
    /// No open session has this id (it never existed, or it was closed).
    #[error("no open session {id}; it was closed or never existed: open a new session")]
    UnknownSession {
        /// The session that was named.
        id: SessionId,
    },
    /// An argument is out of range or malformed.
    #[error("{argument}: {problem}")]
    InvalidArgument {
        /// The argument, by the library's name for it (`command`, `cwd`, `env`,
        /// `timeout_ms`, `lines`, …: the request builder's method).
        argument: String,
        /// What is wrong with it, and what to give instead.
        problem: String,
    },
    /// The process could not be started.
    #[error("could not start {command:?}{}", spawn_reason(.reason))]
    SpawnFailed {
        /// The command as the caller gave it.
        command: String,
        /// What failed, e.g. `cannot run "make"` (may be empty when the OS error says it
        /// all); the OS error, if any, is `source`.
        reason: String,
        /// The OS error behind it, if one was.
        #[source]
        source: Option<Arc<io::Error>>,
    },
    /// The owner, or the whole service, has as many running sessions as it may.
    #[error("{}", session_limit_message(*.limit, *.scope, .running))]
    SessionLimit {
        /// The limit that was reached.
        limit: usize,
        /// Which limit: the owner's or the service's.
        scope: LimitScope,
        /// The owner's running sessions with their commands, which it could close to make
        /// room.
        running: Vec<(SessionId, String)>,
    },
    /// The session's process has exited; its output can still be read with tail.
    #[error(
        "session {id} has exited ({status}); its output can still be read with a tail, or \
         open a new session"
    )]
    NotRunning {
        /// The session that was named.
        id: SessionId,
        /// How it ended, e.g. `exit code 0`.
        status: String,
    },
    /// The session's window could not be resized (`TIOCSWINSZ` failed): its terminal is
    /// going away with its process. Its output can still be read with tail. (The message
    /// is worded as [`NotRunning`](Error::NotRunning)'s, whose code it shares.)
    #[error(
        "session {id} has exited (its terminal cannot be resized); its output can still be \
         read with a tail, or open a new session"
    )]
    ResizeFailed {
        /// The session that was named.
        id: SessionId,
        /// The OS error of the resize.
        #[source]
        source: Arc<io::Error>,
    },
    /// The program did not take the input within the timeout.
    #[error(
        "session {id}: the program took {written} of {total} bytes within {} ms and is \
         not reading its input; send Ctrl-C (\"\\u0003\"), read its output, or close the \
         session",
        .timeout.as_millis()
    )]
    WriteTimeout {
        /// The session that was named.
        id: SessionId,
        /// Bytes that went in before the timeout.
        written: usize,
        /// Bytes the call meant to write (data and the Enter key).
        total: usize,
        /// The timeout that expired.
        timeout: std::time::Duration,
    },
    /// The caller cancelled the request; output that arrived is kept for the next read.
    #[error("the request was cancelled; output that arrived is kept for the next read")]
    Cancelled,
    /// The kernel cannot enforce the asked sandbox; nothing was started.
    #[error(
        "this kernel cannot enforce the {sandbox:?} sandbox: it lacks {missing}; nothing was \
         started. Open without a sandbox (sandbox \"none\") only if the program may have \
         every right of the service's user"
    )]
    SandboxUnavailable {
        /// The asked mode, e.g. `"workspace"`.
        sandbox: String,
        /// What the kernel lacks, e.g. `"Landlock ABI 4 for TCP rules …"`.
        missing: String,
    },
}

/// Which limit on running sessions an open reached ([`Error::SessionLimit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitScope {
    /// The owner's: [`Config::max_sessions_per_owner`](crate::Config::max_sessions_per_owner).
    Owner,
    /// The whole service's: [`Config::max_sessions`](crate::Config::max_sessions).
    Service,
}

impl fmt::Display for LimitScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LimitScope::Owner => "owner",
            LimitScope::Service => "service",
        })
    }
}

/// `: ` and what failed (`cannot run "x"`), if anything is said beyond the OS error, which
/// is the error's source and not repeated here.
fn spawn_reason(reason: &str) -> String {
    if reason.is_empty() {
        String::new()
    } else {
        format!(": {reason}")
    }
}

/// The longest command a limit message quotes, in characters.
const COMMAND_QUOTE_CHARS: usize = 60;

fn session_limit_message(
    limit: usize,
    scope: LimitScope,
    running: &[(SessionId, String)],
) -> String {
    let sessions = running
        .iter()
        .map(|(id, command)| {
            let mut shown: String = command.chars().take(COMMAND_QUOTE_CHARS).collect();
            if shown.len() < command.len() {
                shown.push('…');
            }
            format!("{id} ({shown})")
        })
        .collect::<Vec<_>>()
        .join(", ");
    match scope {
        LimitScope::Owner => format!(
            "this owner already has {limit} running sessions (the limit): {sessions}; close one \
             first (exited sessions do not count)"
        ),
        LimitScope::Service => format!(
            "the service has {limit} running sessions (its limit); this owner's running \
             sessions: [{sessions}]; close one or try later"
        ),
    }
}

impl Error {
    /// The error code of docs/tools.md, such as `"UNKNOWN_SESSION"`.
    ///
    /// ```
    /// use pty_session::Error;
    /// assert_eq!(Error::Cancelled.code(), "CANCELLED");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            Error::ForeignSession { .. } => "FOREIGN_SESSION",
            Error::UnknownSession { .. } => "UNKNOWN_SESSION",
            Error::InvalidArgument { .. } => "INVALID_ARGUMENT",
            Error::SpawnFailed { .. } => "SPAWN_FAILED",
            Error::SessionLimit { .. } => "SESSION_LIMIT",
            // A terminal that cannot be resized is one whose session is ending: the
            // contract's code for it is the one of a session that no longer runs.
            Error::NotRunning { .. } | Error::ResizeFailed { .. } => "NOT_RUNNING",
            Error::WriteTimeout { .. } => "WRITE_TIMEOUT",
            Error::Cancelled => "CANCELLED",
            Error::SandboxUnavailable { .. } => "SANDBOX_UNAVAILABLE",
        }
    }

    /// The error for a bad `argument` (the library's name for it): what is wrong with it
    /// and what to give instead.
    pub fn invalid(argument: impl Into<String>, problem: impl Into<String>) -> Error {
        Error::InvalidArgument {
            argument: argument.into(),
            problem: problem.into(),
        }
    }

    /// The error for a process that could not be started: `reason` says what failed,
    /// `source` is the OS error behind it, if one was.
    pub(crate) fn spawn_failed(
        command: impl Into<String>,
        reason: impl Into<String>,
        source: Option<io::Error>,
    ) -> Error {
        Error::SpawnFailed {
            command: command.into(),
            reason: reason.into(),
            source: source.map(Arc::new),
        }
    }
}

/// The result type of the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn a_limit_message_names_its_scope() {
        let running = vec![(SessionId::new("abc"), "python3 -q".to_owned())];
        let owner = Error::SessionLimit {
            limit: 2,
            scope: LimitScope::Owner,
            running: running.clone(),
        };
        assert_eq!(
            owner.to_string(),
            "this owner already has 2 running sessions (the limit): abc (python3 -q); close \
             one first (exited sessions do not count)"
        );
        let service = Error::SessionLimit {
            limit: 9,
            scope: LimitScope::Service,
            running,
        };
        assert_eq!(
            service.to_string(),
            "the service has 9 running sessions (its limit); this owner's running sessions: \
             [abc (python3 -q)]; close one or try later"
        );
    }

    #[test]
    fn a_spawn_failure_keeps_its_os_error() {
        let enoent = io::Error::from_raw_os_error(libc::ENOENT);
        let text = enoent.to_string();
        let err = Error::spawn_failed("x", "cannot run \"x\"", Some(enoent));
        // The message says what failed; the OS error is its source, said once in a chain.
        assert_eq!(err.to_string(), "could not start \"x\": cannot run \"x\"");
        let source = err.source().expect("the OS error is the source");
        assert_eq!(source.to_string(), text);
        let bare = Error::spawn_failed("x", "", Some(io::Error::from_raw_os_error(libc::EMFILE)));
        assert_eq!(bare.to_string(), "could not start \"x\"");
        let none = Error::spawn_failed("x", "the shim did not report", None);
        assert_eq!(
            none.to_string(),
            "could not start \"x\": the shim did not report"
        );
        assert!(none.source().is_none());
    }
}
