//! The one error type of the library, whose variants map one-to-one to the error codes of
//! docs/tools.md.

use crate::SessionId;

/// What went wrong in a call to [`PtyService`](crate::PtyService).
///
/// Each variant is one error code of the contract; [`Error::code`] gives the string. The
/// `Display` form is the message for the caller: what was wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
    #[error("could not start {command:?}: {reason}")]
    SpawnFailed {
        /// The command as the caller gave it.
        command: String,
        /// Why it failed, e.g. the OS error.
        reason: String,
    },
    /// The owner, or the whole service, has as many running sessions as it may.
    #[error("{}", session_limit_message(*.limit, .scope, .running))]
    SessionLimit {
        /// The limit that was reached.
        limit: usize,
        /// `"owner"` or `"service"`: which limit.
        scope: &'static str,
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
    /// The program did not take the input within the timeout.
    #[error(
        "session {id}: the program took {written} of {total} bytes within {timeout_ms} ms and is \
         not reading its input; send Ctrl-C (\"\\u0003\"), read its output, or close the \
         session"
    )]
    WriteTimeout {
        /// The session that was named.
        id: SessionId,
        /// Bytes that went in before the timeout.
        written: usize,
        /// Bytes the call meant to write (data and the Enter key).
        total: usize,
        /// The timeout that expired.
        timeout_ms: u64,
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

/// The longest command a limit message quotes, in characters.
const COMMAND_QUOTE_CHARS: usize = 60;

fn session_limit_message(limit: usize, scope: &str, running: &[(SessionId, String)]) -> String {
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
        "owner" => format!(
            "this owner already has {limit} running sessions (the limit): {sessions}; close one \
             first (exited sessions do not count)"
        ),
        _ => format!(
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
            Error::NotRunning { .. } => "NOT_RUNNING",
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
}

/// The result type of the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;
