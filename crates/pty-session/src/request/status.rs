//! Whether a session's process runs, and how it ended.

use std::fmt;

/// How a session's process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// It exited with this code.
    Code(i32),
    /// A signal killed it (the signal's number).
    Signal(i32),
}

impl ExitStatus {
    /// The exit code, if it exited normally.
    pub fn code(self) -> Option<i32> {
        match self {
            ExitStatus::Code(code) => Some(code),
            ExitStatus::Signal(_) => None,
        }
    }

    /// The signal's name (`"SIGKILL"`), if a signal killed it.
    pub fn signal_name(self) -> Option<String> {
        match self {
            ExitStatus::Code(_) => None,
            ExitStatus::Signal(number) => Some(crate::signal::name(number)),
        }
    }
}

impl fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitStatus::Code(code) => write!(f, "exit code {code}"),
            ExitStatus::Signal(number) => write!(f, "killed by {}", crate::signal::name(*number)),
        }
    }
}

/// Whether a session's process runs (`status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The process runs.
    Running,
    /// The process ended.
    Exited(ExitStatus),
}

impl Status {
    /// The wire names of the two states, as [`as_str`](Self::as_str) gives them.
    pub const NAMES: [&'static str; 2] = ["running", "exited"];

    /// `"running"` or `"exited"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Exited(_) => "exited",
        }
    }

    /// How the process ended, if it did.
    pub fn exit(self) -> Option<ExitStatus> {
        match self {
            Status::Running => None,
            Status::Exited(exit) => Some(exit),
        }
    }
}
