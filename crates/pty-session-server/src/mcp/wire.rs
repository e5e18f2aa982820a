//! The tools' arguments and results as they travel: serde + JsonSchema mirrors of the
//! library's request and reply types, with the camelCase field names of docs/tools.md.
//!
//! Field docs here are the schema descriptions a client sees (pinned by the golden
//! snapshot of `tools/list`). Serde checks the types here (a bad call comes back as
//! `INVALID_ARGUMENT` naming the field); the values — ranges, names, paths, regexes — are
//! checked in one place, the library, and its errors name the argument in the library's
//! words, which [`crate::mcp::reply::error`] turns into the tool's.

use std::collections::BTreeMap;
use std::sync::Arc;

use pty_session::{
    Error, OpenRequest, Opened, Output, Rest, Sandbox, Screen, SendRequest, Sent, SessionInfo,
    Settle, SettleReason, ShellCommand, Status, Tail, TailRequest, limits,
};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The `inputSchema` of a tool taking `T`.
pub fn input_schema<T: JsonSchema>() -> Arc<serde_json::Map<String, serde_json::Value>> {
    schema::<T>(SchemaSettings::draft2020_12())
}

/// The `outputSchema` of a tool returning `T`: what its `Serialize` writes.
pub fn output_schema<T: JsonSchema>() -> Arc<serde_json::Map<String, serde_json::Value>> {
    schema::<T>(SchemaSettings::draft2020_12().for_serialize())
}

/// A self-contained schema (no `$ref`s, which some clients cannot follow) in standard
/// JSON Schema, within what strict validators accept (OpenAI's strict function calling,
/// Gemini's function declarations): without the `null` that schemars adds to optional
/// fields, in their `type` and in a string `enum` (an absent field says the same, and
/// those hosts refuse type unions and enum values of another type), without the `format`
/// it puts on integers (`uint32`, `int64`: not formats JSON Schema defines, so validators
/// such as ajv warn about each one; `minimum` already says what a model needs), without
/// `default` (the description says it) and without `$schema` (MCP's default dialect is
/// the one it names).
fn schema<T: JsonSchema>(
    settings: SchemaSettings,
) -> Arc<serde_json::Map<String, serde_json::Value>> {
    let generator = settings
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut value = serde_json::to_value(generator.into_root_schema_for::<T>())
        .expect("a schema serializes to JSON");
    standardize(&mut value);
    let serde_json::Value::Object(mut object) = value else {
        panic!(
            "the schema of {} is not an object",
            std::any::type_name::<T>()
        );
    };
    // The type's own name and doc comment are noise to a model; the tool describes it.
    object.remove("$schema");
    object.remove("title");
    object.remove("description");
    Arc::new(object)
}

/// Turns every `"type": [X, "null"]` into `"type": X`, drops `null` from every `enum`,
/// and drops the `format` of every integer and every `default`.
fn standardize(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(object) => {
            if let Some(serde_json::Value::Array(types)) = object.get_mut("type") {
                types.retain(|t| t != "null");
                if let [single] = types.as_slice() {
                    let single = single.clone();
                    object.insert("type".into(), single);
                }
            }
            if let Some(serde_json::Value::Array(values)) = object.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            object.remove("default");
            if object.get("type").is_some_and(|t| t == "integer") {
                object.remove("format");
            }
            object.values_mut().for_each(standardize);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(standardize),
        _ => {}
    }
}

/// Deserializes a tool's arguments, mapping every serde complaint (a wrong type, a
/// missing or unknown field) to `INVALID_ARGUMENT`, naming the field.
pub fn parse<T: DeserializeOwned>(
    arguments: serde_json::Map<String, serde_json::Value>,
) -> Result<T, Error> {
    serde_path_to_error::deserialize(serde_json::Value::Object(arguments)).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        let argument = if path == "." {
            "arguments".to_owned()
        } else {
            path
        };
        Error::invalid(argument, format!("{inner}; see the tool's inputSchema"))
    })
}

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

#[cfg(test)]
mod tests {
    use pty_session::limits;

    use super::*;

    /// The description of `field` in the input schema of `T`.
    fn description<T: JsonSchema>(field: &str) -> String {
        let schema = input_schema::<T>();
        schema["properties"][field]["description"]
            .as_str()
            .unwrap_or_else(|| panic!("{field} has no description"))
            .to_owned()
    }

    /// The descriptions state defaults and limits in words; they must be the library's.
    #[test]
    fn the_descriptions_state_the_library_defaults() {
        let config = pty_session::Config::default();
        for (field, stated) in [
            ("quietMs", format!("(default {})", limits::DEFAULT_QUIET_MS)),
            (
                "timeoutMs",
                format!("(default {})", limits::DEFAULT_TIMEOUT_MS),
            ),
            ("lines", format!("(default {})", config.tail_lines)),
            ("maxBytes", format!("(default {})", config.tail_bytes)),
            ("cols", format!("(default {})", limits::DEFAULT_COLS)),
            ("rows", format!("(default {})", limits::DEFAULT_ROWS)),
        ] {
            let text = description::<OpenArgs>(field);
            assert!(
                text.contains(&stated),
                "{field}: {stated} missing from {text:?}"
            );
        }
        for field in ["quietMs", "timeoutMs", "lines", "maxBytes"] {
            assert_eq!(
                description::<OpenArgs>(field),
                description::<TailArgs>(field)
            );
        }
        assert_eq!(limits::MAX_DATA_BYTES, 1024 * 1024);
        assert!(description::<SendArgs>("data").contains("at most 1 MiB"));
    }
}
