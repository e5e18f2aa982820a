//! What each tool takes, as it travels, and the library's request it becomes.

use std::collections::BTreeMap;

use pty_session::{Error, OpenRequest, Sandbox, SendRequest, Settle, TailRequest, limits};
use schemars::JsonSchema;
use serde::Deserialize;

/// Which signals end a settle.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SettleMode {
    // Exit, input wait, `until`, timeout (and quiet where input wait is not observable).
    #[default]
    Auto,
    // Exit, `until`, quiet, timeout: for programs that poll their input while they work.
    Quiet,
    // Return right after the write.
    None,
}

impl From<SettleMode> for Settle {
    fn from(mode: SettleMode) -> Settle {
        match mode {
            SettleMode::Auto => Settle::Auto,
            SettleMode::Quiet => Settle::Quiet,
            SettleMode::None => Settle::None,
        }
    }
}

/// The settle options and budgets shared by `pty_open`, `pty_send` and `pty_tail`, taken
/// out of their arguments.
#[derive(Debug, Default)]
pub struct SettleArgs {
    pub settle: Option<SettleMode>,
    pub until: Option<String>,
    pub quiet_ms: Option<u64>,
    pub timeout_ms: Option<u64>,
    pub lines: Option<u64>,
    pub max_bytes: Option<u64>,
}

/// Declares an argument struct with the settle fields appended. (Serde cannot combine
/// `flatten` with `deny_unknown_fields`, so the fields are repeated by this macro.)
macro_rules! with_settle_fields {
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $($fields:tt)* }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $($fields)*
            /// "auto" (default): return at exit, an input wait (over ssh: the prompt back),
            /// an `until` match or the timeout; "quiet": ignore input waits, return after
            /// quietMs without output (for programs that read input while busy); "none":
            /// return after the write.
            pub settle: Option<SettleMode>,
            /// A regex: also return when a new line or the pending line matches it (e.g.
            /// "\\(gdb\\) $").
            pub until: Option<String>,
            /// Milliseconds without output that count as quiet (default 300).
            #[schemars(range(min = 1, max = limits::MAX_TIMEOUT_MS))]
            pub quiet_ms: Option<u64>,
            /// The longest wait in ms (default 5000); for pty_send it also bounds the write.
            #[schemars(range(max = limits::MAX_TIMEOUT_MS))]
            pub timeout_ms: Option<u64>,
            /// The most lines in the reply (default 200); the newest come, skipped counts
            /// the rest.
            #[schemars(range(min = 1, max = limits::MAX_LINES))]
            pub lines: Option<u64>,
            /// The most bytes of lines in the reply (default 32768); a longer line is cut
            /// to it (cutLines).
            #[schemars(range(min = limits::MIN_BYTES, max = limits::MAX_BYTES))]
            pub max_bytes: Option<u64>,
        }

        impl $name {
            fn take_settle(&mut self) -> SettleArgs {
                SettleArgs {
                    settle: self.settle,
                    until: self.until.take(),
                    quiet_ms: self.quiet_ms,
                    timeout_ms: self.timeout_ms,
                    lines: self.lines,
                    max_bytes: self.max_bytes,
                }
            }
        }
    };
}

with_settle_fields! {
/// Arguments of `pty_open`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpenArgs {
    /// The command line, e.g. "python3 -q" (run by /bin/sh -c by default).
    pub command: String,
    /// The working directory (default: the server's).
    pub cwd: Option<String>,
    /// Environment variables, name to value, set literally.
    pub env: Option<BTreeMap<String, String>>,
    /// Terminal width (default 120).
    #[schemars(range(min = 1, max = limits::MAX_WINDOW))]
    pub cols: Option<u64>,
    /// Terminal height (default 40).
    #[schemars(range(min = 1, max = limits::MAX_WINDOW))]
    pub rows: Option<u64>,
    /// Whether the terminal echoes input (default true).
    #[serde(default = "yes")]
    pub echo: bool,
    /// "none", "workspace" (write only cwd and the temp dir, no network) or "read-only"
    /// (write nothing); default from the server's config, itself "none".
    #[schemars(extend("enum" = Sandbox::ALL.map(Sandbox::as_str)))]
    pub sandbox: Option<String>,
    /// Report each command's exit status in an interactive bash, zsh or fish (default
    /// true; the server's config may turn it off).
    pub shell_integration: Option<bool>,
}
}

with_settle_fields! {
/// Arguments of `pty_send`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendArgs {
    /// The sessionId from pty_open.
    pub id: String,
    /// Text to type, written exactly (at most 1 MiB; "\u0003" is Ctrl-C). Give data or
    /// keys.
    pub data: Option<String>,
    /// Keys to press, tmux names: Enter, Tab, BTab, Escape, Space, BSpace, Up, Down,
    /// Left, Right, Home, End, PageUp, PageDown, Insert, Delete, F1..F12, C-x (Ctrl), M-x
    /// (Alt); other strings are typed. Give data or keys.
    pub keys: Option<Vec<String>>,
    /// Press Enter after (default true with data, false with keys).
    pub submit: Option<bool>,
    /// Resize to this many columns first.
    #[schemars(range(min = 1, max = limits::MAX_WINDOW))]
    pub cols: Option<u64>,
    /// Resize to this many rows first.
    #[schemars(range(min = 1, max = limits::MAX_WINDOW))]
    pub rows: Option<u64>,
    /// Read the new lines into delta (default true); false only types: no delta, and
    /// the lines stay unread for the next pty_send or pty_tail.
    pub read: Option<bool>,
}
}

with_settle_fields! {
/// Arguments of `pty_tail`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TailArgs {
    /// The sessionId from pty_open.
    pub id: String,
    /// Re-read lines from this number on (from 0; lineBegin..lineEnd are kept), leaving
    /// unread lines unread.
    pub from: Option<u64>,
}
}

/// Arguments of `pty_screen`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScreenArgs {
    /// The sessionId from pty_open.
    pub id: String,
    /// Also return frame, for terminal viewers (default false).
    pub frame: Option<bool>,
}

/// Arguments of `pty_list`: none.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {}

/// Arguments of `pty_close`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CloseArgs {
    /// The sessionId from pty_open.
    pub id: String,
}

fn yes() -> bool {
    true
}

macro_rules! apply_settle {
    ($request:expr, $args:expr) => {{
        let args = $args;
        let mut request = $request;
        if let Some(settle) = args.settle {
            request = request.settle(settle.into());
        }
        if let Some(until) = args.until {
            request = request.until(until);
        }
        if let Some(ms) = args.quiet_ms {
            request = request.quiet(std::time::Duration::from_millis(ms));
        }
        if let Some(ms) = args.timeout_ms {
            request = request.timeout(std::time::Duration::from_millis(ms));
        }
        if let Some(lines) = args.lines {
            request = request.lines(lines);
        }
        if let Some(bytes) = args.max_bytes {
            request = request.max_bytes(bytes);
        }
        request
    }};
}

/// A window size from JSON as the library takes it. The library checks the range; a
/// number too large for its type is refused by the library's own check.
fn window(argument: &str, value: Option<u64>) -> Result<Option<u16>, Error> {
    value
        .map(|value| match u16::try_from(value) {
            Ok(value) => Ok(value),
            Err(_) => Err(pty_session::check_window(argument, value)
                .expect_err("a window wider than u16 is out of range")),
        })
        .transpose()
}

/// The one check that is the server's own, not the library's: an empty `until` matches
/// at once, which a consumer may mean but a model never does.
fn check_until(until: Option<&String>) -> Result<(), Error> {
    match until {
        Some(until) if until.is_empty() => Err(Error::invalid(
            "until",
            "is empty, which would match at once; give a regex, or leave it out",
        )),
        _ => Ok(()),
    }
}

impl OpenArgs {
    /// The library's request; the library checks the values.
    pub fn into_request(mut self) -> Result<OpenRequest, Error> {
        check_until(self.until.as_ref())?;
        let settle = self.take_settle();
        let mut request = OpenRequest::new(self.command).echo(self.echo);
        if let Some(sandbox) = self.sandbox {
            request = request.sandbox(pty_session::Sandbox::parse("sandbox", &sandbox)?);
        }
        if let Some(on) = self.shell_integration {
            request = request.shell_integration(on);
        }
        if let Some(cwd) = self.cwd {
            request = request.cwd(cwd);
        }
        for (name, value) in self.env.unwrap_or_default() {
            request = request.env(name, value);
        }
        if let Some(cols) = window("cols", self.cols)? {
            request = request.cols(cols);
        }
        if let Some(rows) = window("rows", self.rows)? {
            request = request.rows(rows);
        }
        Ok(apply_settle!(request, settle))
    }
}

impl SendArgs {
    /// The session and the library's request; the library checks the values.
    pub fn into_request(mut self) -> Result<(String, SendRequest), Error> {
        check_until(self.until.as_ref())?;
        let settle = self.take_settle();
        // Which of data and keys is a shape of this tool's arguments, so it is checked
        // here; their values (size, key names) and the window are the library's to check.
        let request = match (self.data.take(), self.keys.take()) {
            (Some(data), None) => SendRequest::new(data).submit(self.submit.unwrap_or(true)),
            (None, Some(keys)) => SendRequest::keys(keys).submit(self.submit.unwrap_or(false)),
            (Some(_), Some(_)) => {
                return Err(Error::invalid(
                    "data",
                    "give either data or keys, not both; send them in two calls",
                ));
            }
            (None, None) => {
                return Err(Error::invalid(
                    "data",
                    "give data (text to type) or keys (key names such as [\"Escape\", \":wq\", \"Enter\"]); \
                     data \"\" with submit false only waits (or resizes, with cols/rows)",
                ));
            }
        };
        let size = (window("cols", self.cols)?, window("rows", self.rows)?);
        let request = match size {
            (Some(cols), Some(rows)) => request.size(cols, rows),
            (Some(cols), None) => request.cols(cols),
            (None, Some(rows)) => request.rows(rows),
            (None, None) => request,
        }
        .read(self.read.unwrap_or(true));
        Ok((self.id, apply_settle!(request, settle)))
    }
}

impl TailArgs {
    /// The session and the facade's request, after the checks a schema cannot express.
    pub fn into_request(mut self) -> Result<(String, TailRequest), Error> {
        check_until(self.until.as_ref())?;
        let settle = self.take_settle();
        let mut request = TailRequest::new();
        if let Some(from) = self.from {
            request = request.from(from);
        }
        Ok((self.id, apply_settle!(request, settle)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::mcp::wire::parse;

    /// The argument an `INVALID_ARGUMENT` names, or a panic naming what came instead.
    fn refused<T: std::fmt::Debug>(result: Result<T, Error>) -> String {
        match result {
            Err(Error::InvalidArgument { argument, .. }) => argument,
            other => panic!("not an INVALID_ARGUMENT: {other:?}"),
        }
    }

    fn object(arguments: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        match arguments {
            serde_json::Value::Object(arguments) => arguments,
            other => panic!("arguments are an object, not {other}"),
        }
    }

    fn send(arguments: serde_json::Value) -> Result<(String, SendRequest), Error> {
        parse::<SendArgs>(object(arguments))?.into_request()
    }

    #[test]
    fn a_send_takes_data_or_keys_never_both_nor_neither() {
        assert_eq!(
            refused(send(json!({"id": "s", "data": "x", "keys": ["Enter"]}))),
            "data"
        );
        assert_eq!(refused(send(json!({"id": "s"}))), "data");
        let (id, _) = send(json!({"id": "s", "keys": ["C-c"]})).expect("keys alone");
        assert_eq!(id, "s");
        send(json!({"id": "s", "data": "", "submit": false})).expect("an empty write waits");
    }

    #[test]
    fn an_empty_until_is_refused_by_every_tool_that_waits() {
        assert_eq!(
            refused(send(json!({"id": "s", "data": "x", "until": ""}))),
            "until"
        );
        let open: OpenArgs = parse(object(json!({"command": "cat", "until": ""}))).unwrap();
        assert_eq!(refused(open.into_request()), "until");
        let tail: TailArgs = parse(object(json!({"id": "s", "until": ""}))).unwrap();
        assert_eq!(refused(tail.into_request()), "until");
    }

    #[test]
    fn a_window_too_large_for_the_library_is_refused_by_its_own_check() {
        let err = send(json!({"id": "s", "data": "", "cols": 70_000})).unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT");
        assert!(err.to_string().starts_with("cols:"), "{err}");
        let open: OpenArgs = parse(object(json!({"command": "cat", "rows": u64::MAX}))).unwrap();
        assert_eq!(refused(open.into_request()), "rows");
    }

    #[test]
    fn unknown_and_mistyped_arguments_are_named() {
        let err = send(json!({"id": "s", "data": "x", "timeout": 5})).unwrap_err();
        assert!(err.to_string().contains("timeout"), "{err}");
        assert_eq!(
            refused(send(json!({"id": "s", "data": 5}))),
            "data",
            "a mistyped field is named by its path"
        );
    }
}
