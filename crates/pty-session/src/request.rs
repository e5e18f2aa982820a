//! What callers ask for ([`OpenRequest`], [`SendRequest`]) and what they get back
//! ([`Opened`], [`Sent`], [`Tail`]), with the fields of docs/tools.md.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::SessionId;

/// Which signals end a settle. See docs/tools.md, "Settling".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Settle {
    /// Exit, input wait, `until`, timeout; quiet too where the input-wait signal is absent.
    #[default]
    Auto,
    /// Exit, `until`, quiet, timeout: input wait is ignored. For programs that read input
    /// while they keep working.
    Quiet,
    /// Return right after the write with what had already arrived.
    None,
    /// Exit, `until`, timeout: neither input wait nor quiet ends it, and `quiet` is not
    /// used. For a driver that knows the marker its program prints when done (gdb's
    /// `(gdb) `, a framed command's end line); without `until` it waits for the exit.
    Until,
}

impl Settle {
    /// The wire name: `"auto"`, `"quiet"`, `"none"` or `"until"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Settle::Auto => "auto",
            Settle::Quiet => "quiet",
            Settle::None => "none",
            Settle::Until => "until",
        }
    }
}

/// Which signal ended a settle (`settledBy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SettleReason {
    /// The process exited and all of its output was read.
    Exit,
    /// The foreground processes wait for input and no output is coming.
    Input,
    /// The session waits on the terminal and an outside source (an `ssh` client), and
    /// its prompt came back: a pending line of the prompt's shape stayed unchanged.
    Prompt,
    /// A new line or the pending line matched `until`.
    Match,
    /// No output for `quiet_ms`.
    Quiet,
    /// `timeout_ms` passed.
    Timeout,
    /// `settle: none`: no waiting.
    None,
}

impl SettleReason {
    /// Every reason, in the order docs and schemas list them.
    pub const ALL: [SettleReason; 7] = [
        SettleReason::Exit,
        SettleReason::Input,
        SettleReason::Prompt,
        SettleReason::Match,
        SettleReason::Quiet,
        SettleReason::Timeout,
        SettleReason::None,
    ];

    /// The wire name, e.g. `"input"`.
    pub fn as_str(self) -> &'static str {
        match self {
            SettleReason::Exit => "exit",
            SettleReason::Input => "input",
            SettleReason::Prompt => "prompt",
            SettleReason::Match => "match",
            SettleReason::Quiet => "quiet",
            SettleReason::Timeout => "timeout",
            SettleReason::None => "none",
        }
    }
}

impl fmt::Display for SettleReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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

/// The settle options shared by open and send.
#[derive(Debug, Clone, Default)]
pub(crate) struct SettleOptions {
    pub(crate) settle: Settle,
    pub(crate) until: Option<String>,
    pub(crate) quiet: Option<Duration>,
    pub(crate) timeout: Option<Duration>,
    /// Whether any of them was given (a tail waits only then).
    pub(crate) given: bool,
    /// Who hears of the newest lines while the settle runs.
    pub(crate) progress: Option<crate::ProgressFn>,
}

impl SettleOptions {
    /// The quiet period in whole milliseconds, as the limits count it.
    pub(crate) fn quiet_ms(&self) -> Option<u64> {
        self.quiet.map(whole_millis)
    }

    /// The hard cap in whole milliseconds, as the limits count it.
    pub(crate) fn timeout_ms(&self) -> Option<u64> {
        self.timeout.map(whole_millis)
    }
}

/// `duration` in whole milliseconds, a part of one counted as one (so 0.5 ms is 1 ms, not
/// the 0 that a timeout of none would be), `u64::MAX` past it.
fn whole_millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX)
}

macro_rules! settle_builders {
    () => {
        /// Calls `f` with the newest lines while the settle runs longer than a second, a
        /// few times a second at most (see [`Progress`](crate::Progress)). `f` runs on the
        /// service's task and must not block.
        pub fn on_progress(self, f: impl Fn(crate::Progress) + Send + Sync + 'static) -> Self {
            self.reporting_to(crate::ProgressFn::new(f))
        }

        /// [`on_progress`](Self::on_progress) with a callback already wrapped.
        pub fn reporting_to(mut self, progress: crate::ProgressFn) -> Self {
            self.settle.progress = Some(progress);
            self
        }

        /// Which signals end the settle (default [`Settle::Auto`]).
        pub fn settle(mut self, settle: Settle) -> Self {
            self.settle.settle = settle;
            self.settle.given = true;
            self
        }

        /// Also settle when a new completed line, or the pending line, matches this regex.
        pub fn until(mut self, regex: impl Into<String>) -> Self {
            self.settle.until = Some(regex.into());
            self.settle.given = true;
            self
        }

        /// How long without output counts as quiet (default 300 ms; 1 ms to 600 s,
        /// counted in whole milliseconds, a part of one rounded up; out of range is an
        /// [`InvalidArgument`](crate::Error::InvalidArgument) for `quiet_ms`).
        pub fn quiet(mut self, quiet: std::time::Duration) -> Self {
            self.settle.quiet = Some(quiet);
            self.settle.given = true;
            self
        }

        /// The hard cap on the wait (default 5 s; at most 600 s, counted in whole
        /// milliseconds, a part of one rounded up; more is an [`InvalidArgument`](crate::Error::InvalidArgument) for
        /// `timeout_ms`). For send it is also the write timeout.
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.settle.timeout = Some(timeout);
            self.settle.given = true;
            self
        }
    };
}

macro_rules! budget_builders {
    () => {
        /// The reply's budget of lines, 1..=100,000 (default [`Config::tail_lines`]): when
        /// more lines are due, the newest come (the oldest for a re-read). A consumer that
        /// must see every line (a protocol driver) asks for more than its output can hold.
        ///
        /// [`Config::tail_lines`]: crate::Config::tail_lines
        pub fn lines(mut self, lines: u64) -> Self {
            self.lines = Some(lines);
            self
        }

        /// The reply's budget of bytes, 1,024..=1,048,576 (default
        /// [`Config::tail_bytes`]): the lines that fit, each with its `\n`; a single line
        /// longer than the whole budget comes cut to it (counted in
        /// [`Output::cut_lines`]).
        ///
        /// [`Config::tail_bytes`]: crate::Config::tail_bytes
        pub fn max_bytes(mut self, bytes: u64) -> Self {
            self.max_bytes = Some(bytes);
            self
        }
    };
}

/// What to start: `pty_open`'s arguments.
///
/// ```
/// use std::time::Duration;
/// use pty_session::{OpenRequest, Settle};
/// let request = OpenRequest::new("python3 -q")
///     .env("PYTHONSTARTUP", "")
///     .size(100, 30)
///     .settle(Settle::Auto)
///     .timeout(Duration::from_secs(10));
/// ```
#[derive(Debug, Clone)]
pub struct OpenRequest {
    pub(crate) command: String,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) cols: Option<u16>,
    pub(crate) rows: Option<u16>,
    pub(crate) echo: bool,
    pub(crate) lines: Option<u64>,
    pub(crate) max_bytes: Option<u64>,
    pub(crate) settle: SettleOptions,
    /// The sandbox; `None` takes [`Config::sandbox`](crate::Config::sandbox).
    pub(crate) sandbox: Option<crate::Sandbox>,
    /// Shell integration; `None` takes
    /// [`Config::shell_integration`](crate::Config::shell_integration).
    pub(crate) shell_integration: Option<bool>,
}

impl OpenRequest {
    /// Reads the first output with the largest budgets ([`limits::MAX_LINES`],
    /// [`limits::MAX_BYTES`]), as [`TailRequest::everything`] does: for a protocol driver.
    pub fn everything(self) -> OpenRequest {
        self.lines(limits::MAX_LINES).max_bytes(limits::MAX_BYTES)
    }

    /// Runs `command` with the configured backend (by default `/bin/sh -c`).
    pub fn new(command: impl Into<String>) -> OpenRequest {
        OpenRequest {
            command: command.into(),
            cwd: None,
            env: BTreeMap::new(),
            cols: None,
            rows: None,
            echo: true,
            lines: None,
            max_bytes: None,
            settle: SettleOptions::default(),
            sandbox: None,
            shell_integration: None,
        }
    }

    /// Whether an interactive bash, zsh or fish gets our hooks, which report each
    /// command's exit status and the shell's directory (default:
    /// [`Config::shell_integration`](crate::Config::shell_integration), itself true by
    /// default). Marks a program sends itself are read either way.
    pub fn shell_integration(mut self, on: bool) -> OpenRequest {
        self.shell_integration = Some(on);
        self
    }

    /// Runs the session in `sandbox` (default: [`Config::sandbox`](crate::Config::sandbox),
    /// itself `none` by default). A kernel that cannot enforce it fails the open with
    /// [`Error::SandboxUnavailable`](crate::Error::SandboxUnavailable).
    pub fn sandbox(mut self, sandbox: crate::Sandbox) -> OpenRequest {
        self.sandbox = Some(sandbox);
        self
    }

    /// The working directory; it must exist and be a directory.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> OpenRequest {
        self.cwd = Some(cwd.into());
        self
    }

    /// Sets one environment variable (literally, no expansion); it wins over every default.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> OpenRequest {
        self.env.insert(name.into(), value.into());
        self
    }

    /// The window size (default 120×40); each in 1..=1000.
    pub fn size(mut self, cols: u16, rows: u16) -> OpenRequest {
        self.cols = Some(cols);
        self.rows = Some(rows);
        self
    }

    /// The window width alone.
    pub fn cols(mut self, cols: u16) -> OpenRequest {
        self.cols = Some(cols);
        self
    }

    /// The window height alone.
    pub fn rows(mut self, rows: u16) -> OpenRequest {
        self.rows = Some(rows);
        self
    }

    /// Whether the terminal echoes input (default true).
    pub fn echo(mut self, echo: bool) -> OpenRequest {
        self.echo = echo;
        self
    }

    budget_builders!();
    settle_builders!();
}

/// What to type: `pty_send`'s arguments.
///
/// ```
/// use std::time::Duration;
/// use pty_session::SendRequest;
/// let enter_a_line = SendRequest::new("print(6*7)");
/// let ctrl_c = SendRequest::new("\u{3}").submit(false);
/// let wait_for_prompt = SendRequest::new("make")
///     .until(r"\$ $")
///     .timeout(Duration::from_secs(60));
/// ```
#[derive(Debug, Clone)]
pub struct SendRequest {
    pub(crate) data: String,
    /// Named keys instead of `data` ([`SendRequest::keys`]).
    pub(crate) keys: Option<Vec<String>>,
    pub(crate) submit: bool,
    /// A new window size, applied before anything is written.
    pub(crate) cols: Option<u16>,
    pub(crate) rows: Option<u16>,
    pub(crate) lines: Option<u64>,
    pub(crate) max_bytes: Option<u64>,
    pub(crate) settle: SettleOptions,
    pub(crate) cancel: Option<CancellationToken>,
    /// Whether the reply reads the unread lines (see [`SendRequest::read`]).
    pub(crate) read: bool,
}

/// The data is overwritten when the request is dropped (the service drops it when the
/// call ends), so a password typed with a send does not linger in freed memory.
impl Drop for SendRequest {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.data);
        if let Some(keys) = &mut self.keys {
            keys.iter_mut().for_each(zeroize::Zeroize::zeroize);
        }
    }
}

impl SendRequest {
    /// Writes `data` as UTF-8 bytes exactly, then the Enter key (`\r`) unless
    /// [`submit(false)`](Self::submit).
    pub fn new(data: impl Into<String>) -> SendRequest {
        SendRequest {
            data: data.into(),
            keys: None,
            submit: true,
            cols: None,
            rows: None,
            lines: None,
            max_bytes: None,
            settle: SettleOptions::default(),
            cancel: None,
            read: true,
        }
    }

    /// Presses keys named as tmux's `send-keys` takes them, each encoded the way the
    /// program asked the terminal to send it (cursor keys in application mode after
    /// `ESC[?1h`, for instance): `Enter`, `Tab`, `BTab`, `Escape`, `Space`, `BSpace`,
    /// `Up`, `Down`, `Left`, `Right`, `Home`, `End`, `PageUp`, `PageDown`, `Insert`,
    /// `Delete`, `F1`–`F12`, `C-x` (control), `M-x` (meta); any other string is typed as
    /// text. Enter is not pressed after them unless [`submit(true)`](Self::submit).
    ///
    /// ```
    /// use pty_session::SendRequest;
    /// let save_and_quit = SendRequest::keys(["Escape", ":wq", "Enter"]);
    /// ```
    pub fn keys<K: Into<String>>(keys: impl IntoIterator<Item = K>) -> SendRequest {
        let mut request = SendRequest::new("");
        request.keys = Some(keys.into_iter().map(Into::into).collect());
        request.submit = false;
        request
    }

    /// Resizes the window to `cols`×`rows` (each 1..=1000) before anything is written: the
    /// program gets SIGWINCH and the screen follows. With empty data and
    /// [`submit(false)`](Self::submit) the send only resizes and waits.
    pub fn size(mut self, cols: u16, rows: u16) -> SendRequest {
        self.cols = Some(cols);
        self.rows = Some(rows);
        self
    }

    /// Resizes the window's width alone (see [`size`](Self::size)).
    pub fn cols(mut self, cols: u16) -> SendRequest {
        self.cols = Some(cols);
        self
    }

    /// Resizes the window's height alone (see [`size`](Self::size)).
    pub fn rows(mut self, rows: u16) -> SendRequest {
        self.rows = Some(rows);
        self
    }

    /// Whether to press Enter after the data (default true; false for
    /// [`keys`](Self::keys)).
    pub fn submit(mut self, submit: bool) -> SendRequest {
        self.submit = submit;
        self
    }

    /// Whether the reply reads the output (default true). With `read(false)` the send
    /// writes and settles as usual but reads nothing: [`Sent::delta`] is empty and the
    /// session's cursor stays where it was, so the lines stay unread for the next reader
    /// (an agent's next send or tail). For a writer that only types, such as a person's
    /// view beside the agent's.
    ///
    /// ```
    /// use pty_session::SendRequest;
    /// let typed = SendRequest::new("6*7").read(false);
    /// assert!(!typed.reads());
    /// ```
    pub fn read(mut self, read: bool) -> SendRequest {
        self.read = read;
        self
    }

    /// Whether the reply reads the output ([`read`](Self::read)).
    pub fn reads(&self) -> bool {
        self.read
    }

    /// Reads the reply with the largest budgets ([`limits::MAX_LINES`],
    /// [`limits::MAX_BYTES`]), as [`TailRequest::everything`] does: for a protocol driver,
    /// which must see every line.
    ///
    /// ```
    /// use std::time::Duration;
    /// use pty_session::{SendRequest, Settle};
    /// let step = SendRequest::new("-exec-next")
    ///     .settle(Settle::Until)
    ///     .until("^\\(gdb\\) $")
    ///     .timeout(Duration::from_secs(10))
    ///     .everything();
    /// ```
    pub fn everything(self) -> SendRequest {
        self.lines(limits::MAX_LINES).max_bytes(limits::MAX_BYTES)
    }

    budget_builders!();

    /// Ends the settle with [`Error::Cancelled`](crate::Error::Cancelled) when `token`
    /// fires; the output stays unread for the next call. Dropping the future does the same
    /// without an answer.
    pub fn cancel_on(mut self, token: CancellationToken) -> SendRequest {
        self.cancel = Some(token);
        self
    }

    settle_builders!();
}

/// How to read: [`tail`](crate::PtyService::tail)'s options. By default it returns the
/// unread lines at once; [`from`](Self::from) re-reads instead, and any settle option makes
/// it wait first, as a send does, without writing.
///
/// ```
/// use std::time::Duration;
/// use pty_session::TailRequest;
/// let unread = TailRequest::new().lines(50);
/// let reread = TailRequest::new().from(1200).max_bytes(4096);
/// let follow = TailRequest::new().until("step 20").timeout(Duration::from_secs(60));
/// let all = TailRequest::everything();
/// // `None` and `Some(n)` are the plain read with a line budget.
/// let plain: TailRequest = Some(100).into();
/// ```
#[derive(Debug, Clone, Default)]
pub struct TailRequest {
    pub(crate) lines: Option<u64>,
    pub(crate) max_bytes: Option<u64>,
    pub(crate) from: Option<u64>,
    pub(crate) settle: SettleOptions,
    pub(crate) cancel: Option<CancellationToken>,
}

impl TailRequest {
    /// Reads the unread lines at once.
    pub fn new() -> TailRequest {
        TailRequest::default()
    }

    /// Reads the unread lines at once with the largest budgets
    /// ([`limits::MAX_LINES`], [`limits::MAX_BYTES`]): for a protocol driver, which must
    /// see every line.
    pub fn everything() -> TailRequest {
        TailRequest::new()
            .lines(limits::MAX_LINES)
            .max_bytes(limits::MAX_BYTES)
    }

    /// Re-reads completed lines from line `number` on (from the oldest kept if it fell out
    /// of the scrollback), the oldest first, within the budgets, without moving the cursor.
    pub fn from(mut self, number: u64) -> TailRequest {
        self.from = Some(number);
        self
    }

    /// Whether this is a re-read ([`from`](Self::from) given).
    pub fn rereads(&self) -> bool {
        self.from.is_some()
    }

    /// Ends a wait with [`Error::Cancelled`](crate::Error::Cancelled) when `token` fires;
    /// the output stays unread for the next call.
    pub fn cancel_on(mut self, token: CancellationToken) -> TailRequest {
        self.cancel = Some(token);
        self
    }

    budget_builders!();
    settle_builders!();
}

/// The plain read of the unread lines, with `lines` as the line budget if given.
impl From<Option<u64>> for TailRequest {
    fn from(lines: Option<u64>) -> TailRequest {
        TailRequest {
            lines,
            ..TailRequest::default()
        }
    }
}

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
    /// The number of the first of them: give it as [`TailRequest::from`].
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
    /// when the request did not [`read`](SendRequest::read).
    pub delta: Output,
    /// Whether the output was read: false for [`SendRequest::read(false)`](SendRequest::read).
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
    /// [`read`](SendRequest::read).
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
    /// ([`TailRequest::from`]) leaves them for the next read.
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

/// The limits of docs/tools.md on numeric arguments, so that the server can state them too.
pub mod limits {
    /// The longest line, in bytes of UTF-8: a longer one comes cut into lines of at most
    /// this many bytes, never inside a character (so each piece but the last holds at
    /// least `MAX_LINE_BYTES - 3`), counted in `cutLines` where a budget cut it further.
    pub const MAX_LINE_BYTES: usize = 64 * 1024;
    /// The largest `timeoutMs`.
    pub const MAX_TIMEOUT_MS: u64 = 600_000;
    /// The default `timeoutMs`.
    pub const DEFAULT_TIMEOUT_MS: u64 = 5_000;
    /// The default `quietMs`.
    pub const DEFAULT_QUIET_MS: u64 = 300;
    /// The largest `data` of a send, in bytes.
    pub const MAX_DATA_BYTES: usize = 1024 * 1024;
    /// The largest `cols` and `rows`.
    pub const MAX_WINDOW: u64 = 1000;
    // A window fits the requests' `u16`: whatever is wider is out of range.
    const _: () = assert!(MAX_WINDOW <= u16::MAX as u64);
    /// The default window.
    pub const DEFAULT_COLS: u16 = 120;
    /// The default window.
    pub const DEFAULT_ROWS: u16 = 40;
    /// The largest `lines` budget of a tail.
    pub const MAX_LINES: u64 = 100_000;
    /// The smallest `maxBytes` budget of a reply.
    pub const MIN_BYTES: u64 = 1024;
    /// The largest `maxBytes` budget of a reply.
    pub const MAX_BYTES: u64 = 1024 * 1024;
    /// The default `maxBytes` budget of a reply (config `tailBytes`).
    pub const DEFAULT_BYTES: u64 = 32 * 1024;
    /// The smallest size cap of a recording ([`Config::record_max_bytes`](crate::Config)).
    pub const MIN_RECORD_BYTES: u64 = 4096;
    /// The most finished shell commands a session keeps for its next read; past it the
    /// oldest are dropped.
    pub const MAX_COMMANDS_KEPT: usize = 1000;
}

/// Checks a reply's budget of bytes (`maxBytes` of tail, open and send).
pub(crate) fn max_bytes(bytes: Option<u64>) -> Result<Option<u64>, crate::Error> {
    match bytes {
        Some(n) if !(limits::MIN_BYTES..=limits::MAX_BYTES).contains(&n) => {
            Err(crate::Error::invalid(
                "max_bytes",
                format!(
                    "{n} is out of range; give {}..={}",
                    limits::MIN_BYTES,
                    limits::MAX_BYTES
                ),
            ))
        }
        _ => Ok(bytes),
    }
}

/// Checks a reply's budget of lines (`lines` of tail, open and send).
pub(crate) fn lines(lines: Option<u64>) -> Result<Option<u64>, crate::Error> {
    match lines {
        Some(n) if n == 0 || n > limits::MAX_LINES => Err(crate::Error::invalid(
            "lines",
            format!("{n} is out of range; give 1..={}", limits::MAX_LINES),
        )),
        _ => Ok(lines),
    }
}

/// The quiet time asked for, checked: 1..=[`limits::MAX_TIMEOUT_MS`], default
/// [`limits::DEFAULT_QUIET_MS`].
pub(crate) fn quiet(ms: Option<u64>) -> Result<Duration, crate::Error> {
    let ms = ms.unwrap_or(limits::DEFAULT_QUIET_MS);
    if ms == 0 || ms > limits::MAX_TIMEOUT_MS {
        return Err(crate::Error::invalid(
            "quiet_ms",
            format!("{ms} is out of range; give 1..={}", limits::MAX_TIMEOUT_MS),
        ));
    }
    Ok(Duration::from_millis(ms))
}

/// The timeout asked for, checked: 0..=[`limits::MAX_TIMEOUT_MS`], default
/// [`limits::DEFAULT_TIMEOUT_MS`].
pub(crate) fn timeout(ms: Option<u64>) -> Result<Duration, crate::Error> {
    let ms = ms.unwrap_or(limits::DEFAULT_TIMEOUT_MS);
    if ms > limits::MAX_TIMEOUT_MS {
        return Err(crate::Error::invalid(
            "timeout_ms",
            format!("{ms} is out of range; give 0..={}", limits::MAX_TIMEOUT_MS),
        ));
    }
    Ok(Duration::from_millis(ms))
}

/// Whether `name` can name an environment variable: non-empty, without `=` or NUL. The
/// rule of a call's `env` and of the config's `default_env`.
pub(crate) fn is_env_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('=') && !name.contains('\0')
}

/// Checks what an open asks for that needs no session: the command, the working
/// directory, the environment and the window.
pub(crate) fn check_open(request: &OpenRequest) -> Result<(), crate::Error> {
    if request.command.trim().is_empty() {
        return Err(crate::Error::invalid(
            "command",
            "is empty; give the program to run, e.g. \"bash\"",
        ));
    }
    if request.command.contains('\0') {
        return Err(crate::Error::invalid(
            "command",
            "contains a NUL character, which a process cannot receive",
        ));
    }
    if let Some(cwd) = &request.cwd {
        check_cwd(cwd)?;
    }
    for (name, value) in &request.env {
        if !is_env_name(name) {
            return Err(crate::Error::invalid(
                "env",
                format!("{name:?} is not a valid name; names are non-empty, without '=' or NUL"),
            ));
        }
        if value.contains('\0') {
            return Err(crate::Error::invalid(
                "env",
                format!(
                    "the value of {name} contains a NUL character, which a process cannot receive"
                ),
            ));
        }
    }
    window(request.cols, request.rows)
}

/// Checks the names of a send's `keys`. Their bytes depend on the modes the program set,
/// known once the session is found; the names are checked before anything else.
pub(crate) fn check_key_names(keys: Option<&[String]>) -> Result<(), crate::Error> {
    if let Some(keys) = keys {
        crate::term::keys::encode(keys, Default::default())
            .map_err(|problem| crate::Error::invalid("keys", problem))?;
    }
    Ok(())
}

/// Checks the size of what one write types (`what`: `data`, or a person's `input`):
/// at most [`limits::MAX_DATA_BYTES`].
pub(crate) fn check_data(what: &str, len: usize) -> Result<(), crate::Error> {
    if len > limits::MAX_DATA_BYTES {
        return Err(crate::Error::invalid(
            what,
            format!(
                "is {len} bytes, over the limit of {} bytes (1 MiB); send it in parts",
                limits::MAX_DATA_BYTES
            ),
        ));
    }
    Ok(())
}

/// Checks the size of what a send writes (`data`, `keys`) and its window.
pub(crate) fn check_send(request: &SendRequest) -> Result<(), crate::Error> {
    check_data("data", request.data.len())?;
    let keys_len: usize = request.keys.iter().flatten().map(String::len).sum();
    if keys_len > limits::MAX_DATA_BYTES {
        return Err(crate::Error::invalid(
            "keys",
            format!(
                "hold {keys_len} bytes; send at most {} bytes per call",
                limits::MAX_DATA_BYTES
            ),
        ));
    }
    window(request.cols, request.rows)
}

/// Checks a window size: each in 1..=[`limits::MAX_WINDOW`].
pub(crate) fn window(cols: Option<u16>, rows: Option<u16>) -> Result<(), crate::Error> {
    for (what, value) in [("cols", cols), ("rows", rows)] {
        if let Some(value) = value {
            check_window(what, value.into())?;
        }
    }
    Ok(())
}

/// Checks one side of a window (`what`: `cols` or `rows`): in 1..=[`limits::MAX_WINDOW`].
/// Public so that a caller holding wider numbers than the requests' `u16` (a JSON server)
/// refuses one out of range in the same words.
///
/// ```
/// assert!(pty_session::check_window("cols", 80).is_ok());
/// assert!(pty_session::check_window("rows", 70_000).is_err());
/// ```
pub fn check_window(what: &str, value: u64) -> Result<(), crate::Error> {
    if value == 0 || value > limits::MAX_WINDOW {
        return Err(crate::Error::invalid(
            what,
            format!("{value} is out of range; give 1..={}", limits::MAX_WINDOW),
        ));
    }
    Ok(())
}

/// Checks a working directory: an existing directory, its path without NUL.
fn check_cwd(cwd: &std::path::Path) -> Result<(), crate::Error> {
    use std::os::unix::ffi::OsStrExt as _;
    if cwd.as_os_str().as_bytes().contains(&0) {
        return Err(crate::Error::invalid(
            "cwd",
            "contains a NUL character, which a path cannot hold",
        ));
    }
    match std::fs::metadata(cwd) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(crate::Error::invalid(
            "cwd",
            format!(
                "{} is not a directory; give an existing directory",
                cwd.display()
            ),
        )),
        Err(err) => Err(crate::Error::invalid(
            "cwd",
            format!(
                "{} cannot be used ({err}); give an existing directory",
                cwd.display()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_of_names_hold_every_variant() {
        // A new variant fails to compile here until it is listed.
        let listed = |reason: SettleReason| match reason {
            SettleReason::Exit
            | SettleReason::Input
            | SettleReason::Prompt
            | SettleReason::Match
            | SettleReason::Quiet
            | SettleReason::Timeout
            | SettleReason::None => SettleReason::ALL.contains(&reason),
        };
        assert!(SettleReason::ALL.into_iter().all(listed));
        let exited = Status::Exited(ExitStatus::Code(0));
        assert_eq!(Status::NAMES, [Status::Running.as_str(), exited.as_str()]);
    }

    #[test]
    fn a_part_of_a_millisecond_counts_as_one() {
        assert_eq!(whole_millis(Duration::ZERO), 0);
        assert_eq!(whole_millis(Duration::from_micros(1)), 1);
        assert_eq!(whole_millis(Duration::from_micros(1500)), 2);
        assert_eq!(whole_millis(Duration::from_millis(300)), 300);
        assert_eq!(whole_millis(Duration::MAX), u64::MAX);
        let options = SettleOptions {
            quiet: Some(Duration::from_micros(200)),
            ..SettleOptions::default()
        };
        assert_eq!(options.quiet_ms(), Some(1));
        assert!(quiet(Some(0)).is_err() && quiet(Some(1)).is_ok());
    }

    fn problem(result: Result<(), crate::Error>) -> String {
        result
            .expect_err("the arguments should be refused")
            .to_string()
    }

    #[test]
    fn env_names_are_non_empty_without_equals_or_nul() {
        assert!(is_env_name("PAGER"));
        for name in ["", "A=B", "A\0"] {
            assert!(!is_env_name(name), "{name:?}");
        }
    }

    #[test]
    fn an_open_is_checked_before_anything_runs() {
        assert!(check_open(&OpenRequest::new("true").size(1000, 1)).is_ok());
        for (request, word) in [
            (OpenRequest::new("  "), "command"),
            (OpenRequest::new("a\0b"), "command"),
            (OpenRequest::new("true").env("A=B", "x"), "\"A=B\""),
            (OpenRequest::new("true").env("A", "x\0"), "value of A"),
            (
                OpenRequest::new("true").cwd("/nonexistent/dir"),
                "/nonexistent/dir",
            ),
            (OpenRequest::new("true").size(0, 40), "cols"),
            (OpenRequest::new("true").size(80, 1001), "1..=1000"),
        ] {
            let problem = problem(check_open(&request));
            assert!(problem.contains(word), "{word:?} missing from {problem:?}");
        }
    }

    #[test]
    fn a_send_holds_at_most_the_data_limit() {
        let at_limit = "x".repeat(limits::MAX_DATA_BYTES);
        assert!(check_send(&SendRequest::new(at_limit.clone())).is_ok());
        let over = problem(check_send(&SendRequest::new(at_limit + "x")));
        assert!(over.contains("over the limit of 1048576 bytes"), "{over}");
        let keys = vec!["x".repeat(limits::MAX_DATA_BYTES + 1)];
        let over = problem(check_send(&SendRequest::keys(keys)));
        assert!(over.contains("send at most 1048576 bytes"), "{over}");
        assert!(problem(check_key_names(Some(&["C-".to_owned()]))).contains("keys"));
    }
}
