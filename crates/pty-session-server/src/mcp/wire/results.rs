//! What each tool answers, as it travels, made from the library's replies.

use pty_session::{
    Opened, Output, Rest, Sandbox, Screen, Sent, SessionInfo, SettleReason, ShellCommand, Status,
    Tail,
};
use schemars::JsonSchema;
use serde::Serialize;

fn is_false(value: &bool) -> bool {
    !*value
}

/// How the process ended, present only once it has.
#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExitFields {
    /// The exit code, once exited normally.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that killed it, e.g. "SIGKILL".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
}

impl From<Status> for ExitFields {
    fn from(status: Status) -> ExitFields {
        match status.exit() {
            None => ExitFields::default(),
            Some(exit) => ExitFields {
                exit_code: exit.code(),
                signal: exit.signal_name(),
            },
        }
    }
}

/// A shell command that finished, in `commands`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandResult {
    /// The command line as the shell read it.
    pub command: String,
    /// Its exit status (absent if the shell did not say).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// How long it ran.
    pub duration_ms: u64,
}

impl CommandResult {
    fn all(commands: Vec<ShellCommand>) -> Vec<CommandResult> {
        commands
            .into_iter()
            .map(|c| CommandResult {
                command: c.command,
                exit_code: c.exit_code,
                duration_ms: u64::try_from(c.duration.as_millis()).unwrap_or(u64::MAX),
            })
            .collect()
    }
}

/// The result of `pty_open`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenResult {
    /// The id for the other tools.
    pub session_id: String,
    /// The process id.
    pub pid: u32,
    /// "running" or "exited".
    #[schemars(extend("enum" = Status::NAMES))]
    pub status: &'static str,
    #[serde(flatten)]
    pub exit: ExitFields,
    /// The completed lines so far, each ending in "\n".
    pub initial_output: String,
    /// The unfinished last line (a prompt); "" if none.
    pub pending: String,
    /// Whether unread lines were left out.
    pub truncated: bool,
    /// How many.
    pub skipped: u64,
    /// Lines cut to maxBytes.
    pub cut_lines: usize,
    /// What ended the wait.
    #[schemars(extend("enum" = SettleReason::ALL.map(SettleReason::as_str)))]
    pub settled_by: &'static str,
    /// True while a full-screen program has the alternate screen on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub alt_screen: bool,
    /// While altScreen: the visible rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<String>,
    /// While altScreen: the cursor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<CursorPosition>,
    /// Shell sessions: the commands that finished since the last read, oldest first;
    /// absent if none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandResult>,
    /// Left-out lines the scrollback still holds (for the text block's hint).
    #[serde(skip)]
    pub rest: Option<Rest>,
}

impl OpenResult {
    pub fn new(opened: Opened) -> OpenResult {
        OpenResult {
            session_id: opened.session_id.to_string(),
            pid: opened.pid,
            status: opened.status.as_str(),
            exit: opened.status.into(),
            initial_output: opened.initial_output.text,
            pending: opened.pending,
            truncated: opened.initial_output.truncated,
            skipped: opened.initial_output.skipped,
            cut_lines: opened.initial_output.cut_lines,
            settled_by: opened.settled_by.as_str(),
            alt_screen: opened.alt_screen,
            screen: opened.screen.as_ref().map(Screen::text),
            cursor: opened.screen.as_ref().map(CursorPosition::of),
            rest: opened.initial_output.rest,
            commands: CommandResult::all(opened.commands),
        }
    }
}

/// The result of `pty_send`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendResult {
    /// The lines not delivered before, each ending in "\n"; absent with read false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<String>,
    /// "running" or "exited".
    #[schemars(extend("enum" = Status::NAMES))]
    pub status: &'static str,
    #[serde(flatten)]
    pub exit: ExitFields,
    /// The unfinished last line (a prompt); "" if none.
    pub pending: String,
    /// Whether unread lines were left out.
    pub truncated: bool,
    /// How many.
    pub skipped: u64,
    /// Lines cut to maxBytes.
    pub cut_lines: usize,
    /// What ended the wait.
    #[schemars(extend("enum" = SettleReason::ALL.map(SettleReason::as_str)))]
    pub settled_by: &'static str,
    /// True while a full-screen program has the alternate screen on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub alt_screen: bool,
    /// While altScreen: the visible rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<String>,
    /// While altScreen: the cursor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<CursorPosition>,
    /// Shell sessions: the commands that finished since the last read, oldest first;
    /// absent if none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandResult>,
    /// Left-out lines the scrollback still holds (for the text block's hint).
    #[serde(skip)]
    pub rest: Option<Rest>,
}

impl SendResult {
    pub fn new(sent: Sent) -> SendResult {
        SendResult {
            delta: sent.read.then_some(sent.delta.text),
            status: sent.status.as_str(),
            exit: sent.status.into(),
            pending: sent.pending,
            truncated: sent.delta.truncated,
            skipped: sent.delta.skipped,
            cut_lines: sent.delta.cut_lines,
            settled_by: sent.settled_by.as_str(),
            alt_screen: sent.alt_screen,
            screen: sent.screen.as_ref().map(Screen::text),
            cursor: sent.screen.as_ref().map(CursorPosition::of),
            rest: sent.delta.rest,
            commands: CommandResult::all(sent.commands),
        }
    }
}

/// The result of `pty_tail`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TailResult {
    /// The unread lines (with from: the re-read ones), each ending in "\n".
    pub text: String,
    /// How many lines `text` holds.
    pub lines: usize,
    /// Whether lines were left out (see skipped; with from, also later lines).
    pub truncated: bool,
    /// Unread lines left out; with from, asked-for lines gone from the scrollback.
    pub skipped: u64,
    /// Lines cut to maxBytes.
    pub cut_lines: usize,
    /// The unfinished last line (a prompt); "" if none.
    pub pending: String,
    /// "running" or "exited".
    #[schemars(extend("enum" = Status::NAMES))]
    pub status: &'static str,
    #[serde(flatten)]
    pub exit: ExitFields,
    /// Lines completed since the start.
    pub total_lines: u64,
    /// The number of the oldest kept line (from 0).
    pub line_begin: u64,
    /// One past the newest kept line (= totalLines).
    pub line_end: u64,
    /// What ended the wait, if it waited.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = SettleReason::ALL.map(SettleReason::as_str)))]
    pub settled_by: Option<&'static str>,
    /// True while a full-screen program has the alternate screen on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub alt_screen: bool,
    /// The number of the first line in `text` (for the text block).
    #[serde(skip)]
    pub first_line: u64,
    /// Whether this was a re-read with `from` (for the text block).
    #[serde(skip)]
    pub reread: bool,
    /// Shell sessions: the commands that finished since the last read, oldest first;
    /// absent if none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandResult>,
    /// Left-out lines the scrollback still holds (for the text block's hint).
    #[serde(skip)]
    pub rest: Option<Rest>,
}

impl TailResult {
    pub fn new(tail: Tail, reread: bool) -> TailResult {
        let Output {
            text,
            lines,
            truncated,
            skipped,
            cut_lines,
            first_line,
            rest,
        } = tail.output;
        TailResult {
            text,
            lines,
            truncated,
            skipped,
            cut_lines,
            pending: tail.pending,
            status: tail.status.as_str(),
            exit: tail.status.into(),
            total_lines: tail.total_lines,
            line_begin: tail.line_begin,
            line_end: tail.total_lines,
            settled_by: tail.settled_by.map(|reason| reason.as_str()),
            alt_screen: tail.alt_screen,
            first_line,
            reread,
            rest,
            commands: CommandResult::all(tail.commands),
        }
    }
}

/// A cell of the screen, 0-based from the top left.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
pub struct CursorPosition {
    /// The row, 0 at the top.
    pub row: u16,
    /// The column, 0 at the left.
    pub col: u16,
}

impl CursorPosition {
    fn of(screen: &Screen) -> CursorPosition {
        CursorPosition {
            row: screen.cursor.row,
            col: screen.cursor.col,
        }
    }
}

/// The result of `pty_screen`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScreenResult {
    /// The visible rows, trailing blanks trimmed, joined by "\n".
    pub screen: String,
    /// Where the cursor is.
    pub cursor: CursorPosition,
    /// The terminal's width.
    pub cols: u16,
    /// The terminal's height.
    pub rows: u16,
    /// Whether a full-screen program has the alternate screen on.
    pub alt_screen: bool,
    /// "running" or "exited".
    #[schemars(extend("enum" = Status::NAMES))]
    pub status: &'static str,
    #[serde(flatten)]
    pub exit: ExitFields,
    /// With frame true: ANSI bytes that redraw the screen in its colours.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
}

impl ScreenResult {
    pub fn new(screen: Screen) -> ScreenResult {
        ScreenResult {
            frame: None,
            screen: screen.text(),
            cursor: CursorPosition::of(&screen),
            cols: screen.cols,
            rows: screen.rows,
            alt_screen: screen.alt_screen,
            status: screen.status.as_str(),
            exit: screen.status.into(),
        }
    }
}

/// The result of `pty_list`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListResult {
    /// Your sessions, oldest first, exited ones until closed.
    pub sessions: Vec<ListedSession>,
}

/// One session in `pty_list`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListedSession {
    /// The session's id.
    pub id: String,
    /// The command it was opened with.
    pub command: String,
    /// The pid of its process.
    pub pid: u32,
    /// "running" or "exited".
    #[schemars(extend("enum" = Status::NAMES))]
    pub status: &'static str,
    #[serde(flatten)]
    pub exit: ExitFields,
    /// Its working directory (a shell's current one, where it reports it).
    pub cwd: String,
    /// Shell sessions: the exit status of the last command that finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_exit_code: Option<i32>,
    /// When it was opened (RFC 3339, UTC).
    pub started_at: String,
    /// Lines not yet delivered.
    pub unread_lines: u64,
    /// The unfinished last line (a prompt); "" if none.
    pub pending: String,
    /// Whether a full-screen program has the alternate screen on.
    pub alt_screen: bool,
    /// The sandbox it runs in: "none", "workspace" or "read-only".
    #[schemars(extend("enum" = Sandbox::ALL.map(Sandbox::as_str)))]
    pub sandbox: &'static str,
}

impl ListedSession {
    pub fn new(info: SessionInfo) -> ListedSession {
        let started_at: chrono::DateTime<chrono::Utc> = info.started_at.into();
        ListedSession {
            id: info.id.to_string(),
            command: info.command,
            pid: info.pid,
            status: info.status.as_str(),
            exit: info.status.into(),
            cwd: info.cwd.to_string_lossy().into_owned(),
            last_exit_code: info.last_exit_code,
            started_at: started_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            unread_lines: info.unread_lines,
            pending: info.pending,
            alt_screen: info.alt_screen,
            sandbox: info.sandbox.as_str(),
        }
    }
}

/// The result of `pty_close`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloseResult {
    /// False if it was already closed or never existed.
    pub closed: bool,
}
