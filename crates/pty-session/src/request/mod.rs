//! What callers ask for ([`OpenRequest`], [`SendRequest`], [`TailRequest`]) and what they
//! get back ([`Opened`], [`Sent`], [`Tail`]), with the fields of docs/tools.md:
//!
//! - here: the requests and their builders;
//! - `settle`: how a wait ends ([`Settle`]) and what ended it ([`SettleReason`]);
//! - `status`: whether a process runs and how it ended;
//! - `reply`: the replies;
//! - `checks`: the limits ([`limits`]) and the checks of every argument beside them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

mod checks;
mod reply;
mod settle;
mod status;

pub use checks::*;
pub use reply::*;
pub use settle::*;
pub use status::*;

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
