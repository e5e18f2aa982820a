//! What calls answer: the output read, and the replies of open, send and tail.

use crate::SessionId;
use std::path::PathBuf;

use crate::request::{SettleReason, Status};

/// The lines a reply delivers: those after the cursor (or, for a re-read, from the line
/// asked for), within the budgets of lines and bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Output {
    /// The completed lines, each ending in `\n`.
    pub text: String,
    /// How many lines `text` holds.
    pub lines: usize,
    /// Whether lines were left out: unread lines over the budget or gone from the
    /// scrollback; for a re-read, also later lines that did not fit.
    pub truncated: bool,
    /// How many asked-for lines were left out and cannot be in this reply: for a read
    /// after the cursor, the unread lines not delivered; for a re-read, the asked-for
    /// lines that are gone from the scrollback.
    pub skipped: u64,
    /// How many lines were longer than the whole byte budget and come cut to it (the
    /// first line delivered, if any).
    pub cut_lines: usize,
    /// The number of the first line in `text` (where it would be when `text` is empty).
    pub first_line: u64,
    /// Lines left out that the scrollback still holds, and where a re-read gets them.
    pub rest: Option<Rest>,
}

/// Lines a reply left out that can still be re-read: `lines` of them, from line `from` on
/// (earlier than the reply for a read after the cursor, later for a re-read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rest {
    /// How many lines.
    pub lines: u64,
    /// The number of the first of them: give it as [`TailRequest::from`](crate::TailRequest::from).
    pub from: u64,
}

/// The reply to [`PtyService::open`](crate::PtyService::open).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Opened {
    /// The new session's id.
    pub session_id: SessionId,
    /// The pid of the command's process.
    pub pid: u32,
    /// Whether it still runs.
    pub status: Status,
    /// The lines it printed before the settle (`initialOutput`).
    pub initial_output: Output,
    /// The text after the last line end, such as a prompt.
    pub pending: String,
    /// What ended the settle.
    pub settled_by: SettleReason,
    /// Whether a full-screen program has the alternate screen on.
    pub alt_screen: bool,
    /// The screen, while a full-screen program has the alternate screen on.
    pub screen: Option<crate::Screen>,
    /// The sandbox the session runs in.
    pub sandbox: crate::Sandbox,
    /// The shell commands that finished before the reply, oldest first (see
    /// [`ShellCommand`](crate::ShellCommand)).
    pub commands: Vec<crate::ShellCommand>,
}

/// The reply to [`PtyService::send`](crate::PtyService::send).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Sent {
    /// The lines that arrived after the cursor (`delta`); empty, the cursor left alone,
    /// when the request did not [`read`](crate::SendRequest::read).
    pub delta: Output,
    /// Whether the output was read: false for [`SendRequest::read(false)`](crate::SendRequest::read).
    pub read: bool,
    /// Whether the process still runs.
    pub status: Status,
    /// The text after the last line end.
    pub pending: String,
    /// What ended the settle.
    pub settled_by: SettleReason,
    /// Whether a full-screen program has the alternate screen on.
    pub alt_screen: bool,
    /// The screen, while a full-screen program has the alternate screen on.
    pub screen: Option<crate::Screen>,
    /// The shell commands that finished since the last read, oldest first, delivered
    /// with the read cursor: empty, and kept for a later read, when the request did not
    /// [`read`](crate::SendRequest::read).
    pub commands: Vec<crate::ShellCommand>,
}

/// The reply to [`PtyService::tail`](crate::PtyService::tail).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Tail {
    /// The unread lines (`text`, `lines`, `truncated`, `skipped`).
    pub output: Output,
    /// The text after the last line end.
    pub pending: String,
    /// Whether the process still runs.
    pub status: Status,
    /// Lines completed since the session started (`totalLines`, also `lineEnd`).
    pub total_lines: u64,
    /// The number of the oldest line still in the scrollback (`lineBegin`).
    pub line_begin: u64,
    /// Whether a full-screen program has the alternate screen on.
    pub alt_screen: bool,
    /// What ended the wait, when the tail was asked to wait.
    pub settled_by: Option<SettleReason>,
    /// The shell commands that finished since the last read, oldest first; a re-read
    /// ([`TailRequest::from`](crate::TailRequest::from)) leaves them for the next read.
    pub commands: Vec<crate::ShellCommand>,
}

/// One of an owner's sessions, as [`PtyService::list`](crate::PtyService::list) shows it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionInfo {
    /// The session's id.
    pub id: SessionId,
    /// The command as it was given to open.
    pub command: String,
    /// The pid of the command's process.
    pub pid: u32,
    /// Whether it still runs, or how it ended.
    pub status: Status,
    /// The shell's working directory as it last said (shell sessions), otherwise the
    /// one it started in.
    pub cwd: PathBuf,
    /// The exit status of the last shell command that finished (shell sessions).
    pub last_exit_code: Option<i32>,
    /// When it was opened.
    pub started_at: std::time::SystemTime,
    /// Completed lines after the read cursor.
    pub unread_lines: u64,
    /// The text after the last line end, such as a prompt.
    pub pending: String,
    /// Whether a full-screen program has the alternate screen on.
    pub alt_screen: bool,
    /// The sandbox it runs in.
    pub sandbox: crate::Sandbox,
}
