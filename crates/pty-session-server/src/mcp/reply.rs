//! Tool results as MCP sees them: `structuredContent` (the wire types) plus one text block
//! in the readable form of docs/tools.md — the output lines as they are, then one bracketed status
//! line — and [`error`], the one mapping from the library's error to a tool error (text only).

use std::fmt::Write as _;

use pty_session::{Error, Rest, Sandbox};
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;

use crate::mcp::wire::{
    CloseResult, CommandResult, CursorPosition, ExitFields, ListResult, OpenResult, ScreenResult,
    SendResult, TailResult,
};

/// The longest pending line the status line quotes; the structured result has all of it.
const PENDING_QUOTE_CHARS: usize = 200;

/// A successful result: `structured` as `structuredContent`, `text` as the one text block.
fn success(structured: &impl Serialize, text: String) -> CallToolResult {
    let value = serde_json::to_value(structured).expect("wire results serialize to JSON");
    let mut result = CallToolResult::structured(value);
    // `structured` fills the text block with a copy of the JSON; a model reads the text,
    // so it gets the readable form instead of the same data twice.
    result.content = vec![ContentBlock::text(text)];
    result
}

/// The tool error for `err`: `isError: true` and one text block, `CODE: message`. No
/// `structuredContent`: some clients (the TypeScript SDK 1.x, the Inspector) check every
/// `structuredContent` against the tool's `outputSchema`, error or not, and would throw
/// instead of showing the message. Every failed call goes through here.
pub fn error(err: &Error) -> CallToolResult {
    let text = format!("{}: {}", err.code(), message(err));
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The message of a tool error: the library's, told the way of the tools. The library
/// names arguments by its own names (`timeout_ms`) and says "open a new session"; a model
/// reads the tools' names (`timeoutMs`, `pty_open`).
pub fn message(err: &Error) -> String {
    match err {
        Error::InvalidArgument { argument, problem } => {
            format!("{}: {problem}", wire_name(argument))
        }
        Error::UnknownSession { id } => format!(
            "no open session {id}; it was closed or never existed, open a new one with pty_open"
        ),
        Error::NotRunning { id, status } => format!(
            "session {id} has exited ({status}); read its output with pty_tail, or open a new \
             session with pty_open"
        ),
        // The contract's code for a terminal that cannot be resized is NOT_RUNNING, and
        // its text is the one of a session that ended.
        Error::ResizeFailed { id, source } => format!(
            "session {id} has exited (its terminal cannot be resized ({source})); read its \
             output with pty_tail, or open a new session with pty_open"
        ),
        Error::WriteTimeout {
            id,
            written,
            total,
            timeout,
        } => format!(
            "session {id}: the program took {written} of {total} bytes within {} ms \
             and is not reading its input; send Ctrl-C (\"\\u0003\"), read with pty_tail, or \
             close it with pty_close",
            timeout.as_millis()
        ),
        Error::SessionLimit { .. } => format!("{err}; pty_close closes one"),
        _ => with_causes(err),
    }
}

/// `err` and each of its causes, once each: `could not start "x": cannot run "x": No such
/// file or directory (os error 2)`.
fn with_causes(err: &Error) -> String {
    let mut text = err.to_string();
    let mut cause = std::error::Error::source(err);
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}

/// The tools' name of an argument the library names in snake case: `timeout_ms` →
/// `timeoutMs`. Names that are already the tools' come back as they are.
pub fn wire_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

pub fn opened(result: &OpenResult, sandbox: Sandbox) -> CallToolResult {
    let mut status = Status::new(&result.session_id, result.status, &result.exit);
    status.last_command(&result.commands);
    status.sandbox(sandbox);
    status.part(format!("pid {}", result.pid));
    status.settled_by(result.settled_by);
    status.unread_left_out(result.skipped, result.rest);
    status.cut(result.cut_lines);
    status.pending(&result.pending);
    status.alt_screen(result.alt_screen);
    status.cursor(result.cursor);
    let text = status.after_screen(&result.initial_output, result.screen.as_deref());
    success(result, text)
}

pub fn sent(id: &str, sandbox: Sandbox, result: &SendResult) -> CallToolResult {
    let mut status = Status::new(id, result.status, &result.exit);
    status.last_command(&result.commands);
    status.sandbox(sandbox);
    status.settled_by(result.settled_by);
    status.unread_left_out(result.skipped, result.rest);
    status.cut(result.cut_lines);
    status.pending(&result.pending);
    status.alt_screen(result.alt_screen);
    status.cursor(result.cursor);
    if result.delta.is_none() {
        status.part("output left unread (read: false)");
    }
    let delta = result.delta.as_deref().unwrap_or_default();
    let text = status.after_screen(delta, result.screen.as_deref());
    success(result, text)
}

pub fn tail(id: &str, sandbox: Sandbox, result: &TailResult) -> CallToolResult {
    let mut status = Status::new(id, result.status, &result.exit);
    status.last_command(&result.commands);
    status.sandbox(sandbox);
    if let Some(reason) = result.settled_by {
        status.settled_by(reason);
    }
    if result.reread {
        let lines = match result.lines {
            0 => "no lines".to_owned(),
            1 => format!("line {}", result.first_line),
            n => format!(
                "lines {}..{}",
                result.first_line,
                result.first_line + n as u64
            ),
        };
        status.part(format!("{lines} re-read, {} in total", result.total_lines));
        if result.skipped > 0 {
            status.part(format!(
                "{} asked-for lines gone from the scrollback (it keeps {}..{})",
                result.skipped, result.line_begin, result.line_end
            ));
        }
        if let Some(rest) = result.rest {
            status.part(format!(
                "… {} later lines: pty_tail from {}",
                rest.lines, rest.from
            ));
        }
    } else {
        status.part(format!(
            "{} new lines, {} in total",
            result.lines, result.total_lines
        ));
        status.unread_left_out(result.skipped, result.rest);
    }
    status.cut(result.cut_lines);
    status.pending(&result.pending);
    status.alt_screen(result.alt_screen);
    success(result, status.after(&result.text))
}

pub fn screen(id: &str, sandbox: Sandbox, result: &ScreenResult) -> CallToolResult {
    let mut status = Status::new(id, result.status, &result.exit);
    status.sandbox(sandbox);
    status.part(format!("screen {}×{}", result.cols, result.rows));
    status.alt_screen(result.alt_screen);
    status.cursor(Some(result.cursor));
    let text = status.after_screen("", Some(&result.screen));
    success(result, text)
}

/// One line per session: id, status, pid, unread lines, pending, start, cwd, command.
pub fn listed(result: &ListResult) -> CallToolResult {
    let mut text = String::new();
    for session in &result.sessions {
        let mut status = Status::new(&session.id, session.status, &session.exit);
        if session.sandbox != Sandbox::None.as_str() {
            status.part(format!("sandbox {}", session.sandbox));
        }
        status.part(format!("pid {}", session.pid));
        status.part(format!("{} unread lines", session.unread_lines));
        if let Some(code) = session.last_exit_code {
            status.part(format!("last command exit {code}"));
        }
        status.pending(&session.pending);
        status.alt_screen(session.alt_screen);
        status.part(format!("started {}", session.started_at));
        status.part(format!("cwd {}", session.cwd));
        status.part(format!("command {}", quote(&session.command)));
        text.push_str(&status.after(""));
        text.push('\n');
    }
    if result.sessions.is_empty() {
        text.push_str("[no sessions]");
    } else {
        text.pop();
    }
    success(result, text)
}

pub fn closed(id: &str, result: &CloseResult) -> CallToolResult {
    let text = if result.closed {
        format!("[{id} closed]")
    } else {
        format!("[{id} was not open: nothing to close]")
    };
    success(result, text)
}

/// The bracketed status line, e.g. `[p7k2m9q4 running · settled by input · pending: ">>> "]`.
struct Status {
    line: String,
}

impl Status {
    fn new(id: &str, status: &str, exit: &ExitFields) -> Status {
        let mut line = format!("[{id} {status}");
        if let Some(code) = exit.exit_code {
            let _ = write!(line, " · exit code {code}");
        }
        if let Some(signal) = &exit.signal {
            let _ = write!(line, " · killed by {signal}");
        }
        Status { line }
    }

    /// The last shell command of the reply, when it failed: `exit 1`.
    fn last_command(&mut self, commands: &[CommandResult]) {
        if let Some(CommandResult {
            exit_code: Some(code),
            ..
        }) = commands.last()
            && *code != 0
        {
            self.part(format!("exit {code}"));
        }
    }

    fn part(&mut self, part: impl AsRef<str>) {
        self.line.push_str(" · ");
        self.line.push_str(part.as_ref());
    }

    /// The sandbox, when there is one: a session without says nothing.
    fn sandbox(&mut self, sandbox: Sandbox) {
        if sandbox != Sandbox::None {
            self.part(format!("sandbox {sandbox}"));
        }
    }

    fn settled_by(&mut self, reason: &str) {
        self.part(format!("settled by {reason}"));
    }

    /// Unread lines a reply left out, and how to get those still kept.
    fn unread_left_out(&mut self, skipped: u64, rest: Option<Rest>) {
        if skipped == 0 {
            return;
        }
        self.part(format!("truncated: {skipped} unread lines skipped"));
        if let Some(rest) = rest {
            self.part(format!(
                "… {} earlier lines: pty_tail from {}",
                rest.lines, rest.from
            ));
        }
    }

    /// Lines cut to the byte budget.
    fn cut(&mut self, cut_lines: usize) {
        if cut_lines > 0 {
            self.part(format!("{cut_lines} line longer than maxBytes cut to it"));
        }
    }

    fn pending(&mut self, pending: &str) {
        if pending.is_empty() {
            return;
        }
        let count = pending.chars().count();
        let quoted = if count > PENDING_QUOTE_CHARS {
            let head: String = pending.chars().take(PENDING_QUOTE_CHARS).collect();
            format!("{} (+{} chars)", quote(&head), count - PENDING_QUOTE_CHARS)
        } else {
            quote(pending)
        };
        self.part(format!("pending: {quoted}"));
    }

    fn alt_screen(&mut self, on: bool) {
        if on {
            self.part("alt screen on");
        }
    }

    fn cursor(&mut self, cursor: Option<CursorPosition>) {
        if let Some(cursor) = cursor {
            self.part(format!("cursor {},{}", cursor.row, cursor.col));
        }
    }

    /// The text block: `output` as it is, then the screen's rows if there is a screen, then
    /// the status line.
    fn after_screen(self, output: &str, screen: Option<&str>) -> String {
        match screen {
            None => self.after(output),
            Some(screen) => {
                let mut text = String::with_capacity(output.len() + screen.len() + 1);
                text.push_str(output);
                text.push_str(screen);
                if !screen.is_empty() {
                    text.push('\n');
                }
                self.after(&text)
            }
        }
    }

    /// The text block: `output` as it is (every line ends in `\n`), then the status line.
    fn after(mut self, output: &str) -> String {
        self.line.push(']');
        let mut text = String::with_capacity(output.len() + self.line.len());
        text.push_str(output);
        text.push_str(&self.line);
        text
    }
}

/// A string in JSON quotes, so that control characters and quotes in a prompt stay visible.
fn quote(text: &str) -> String {
    serde_json::to_string(text).expect("a string serializes to JSON")
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    #[track_caller]
    fn check(result: CallToolResult, expect: Expect) {
        let text = result.content[0]
            .as_text()
            .expect("a text block")
            .text
            .clone();
        let json = serde_json::to_string(&result.structured_content).unwrap();
        expect.assert_eq(&format!(
            "{text}\n---\n{json}\nisError={:?}",
            result.is_error
        ));
    }

    #[test]
    fn open_reply_has_output_then_one_status_line() {
        check(
            opened(
                &OpenResult {
                    commands: Vec::new(),
                    session_id: "p7k2m9q4".into(),
                    pid: 4242,
                    status: "running",
                    exit: ExitFields::default(),
                    initial_output: "Python 3.13.5\n".into(),
                    pending: ">>> ".into(),
                    truncated: false,
                    skipped: 0,
                    cut_lines: 0,
                    settled_by: "input",
                    alt_screen: false,
                    screen: None,
                    cursor: None,
                    rest: None,
                },
                Sandbox::Workspace,
            ),
            expect![[r#"
                Python 3.13.5
                [p7k2m9q4 running · sandbox workspace · pid 4242 · settled by input · pending: ">>> "]
                ---
                {"cutLines":0,"initialOutput":"Python 3.13.5\n","pending":">>> ","pid":4242,"sessionId":"p7k2m9q4","settledBy":"input","skipped":0,"status":"running","truncated":false}
                isError=Some(false)"#]],
        );
    }

    #[test]
    fn exited_truncated_send_says_so() {
        check(
            sent(
                "abcd2345",
                Sandbox::None,
                &SendResult {
                    commands: Vec::new(),
                    delta: Some("line 9\n".into()),
                    status: "exited",
                    exit: ExitFields {
                        exit_code: None,
                        signal: Some("SIGKILL".into()),
                    },
                    pending: String::new(),
                    truncated: true,
                    skipped: 9,
                    cut_lines: 1,
                    settled_by: "exit",
                    alt_screen: true,
                    screen: Some("~\n\"x\" 1L written".into()),
                    cursor: Some(CursorPosition { row: 1, col: 0 }),
                    rest: Some(Rest {
                        lines: 4,
                        from: 1234,
                    }),
                },
            ),
            expect![[r#"
                line 9
                ~
                "x" 1L written
                [abcd2345 exited · killed by SIGKILL · settled by exit · truncated: 9 unread lines skipped · … 4 earlier lines: pty_tail from 1234 · 1 line longer than maxBytes cut to it · alt screen on · cursor 1,0]
                ---
                {"altScreen":true,"cursor":{"col":0,"row":1},"cutLines":1,"delta":"line 9\n","pending":"","screen":"~\n\"x\" 1L written","settledBy":"exit","signal":"SIGKILL","skipped":9,"status":"exited","truncated":true}
                isError=Some(false)"#]],
        );
    }

    #[test]
    fn tail_reply_counts_lines_and_quotes_long_pending() {
        check(
            tail(
                "abcd2345",
                Sandbox::None,
                &TailResult {
                    commands: Vec::new(),
                    text: String::new(),
                    lines: 0,
                    truncated: false,
                    skipped: 0,
                    cut_lines: 0,
                    pending: format!("\u{1b}{}", "x".repeat(250)),
                    status: "exited",
                    exit: ExitFields {
                        exit_code: Some(3),
                        signal: None,
                    },
                    total_lines: 12,
                    line_begin: 0,
                    line_end: 12,
                    settled_by: None,
                    alt_screen: false,
                    first_line: 12,
                    reread: false,
                    rest: None,
                },
            ),
            expect![[r#"
                [abcd2345 exited · exit code 3 · 0 new lines, 12 in total · pending: "\u001bxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" (+51 chars)]
                ---
                {"cutLines":0,"exitCode":3,"lineBegin":0,"lineEnd":12,"lines":0,"pending":"\u001bxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx","skipped":0,"status":"exited","text":"","totalLines":12,"truncated":false}
                isError=Some(false)"#]],
        );
    }

    #[test]
    fn a_reread_says_which_lines_came_and_where_the_rest_is() {
        check(
            tail(
                "abcd2345",
                Sandbox::None,
                &TailResult {
                    commands: Vec::new(),
                    text: "5\n6\n".into(),
                    lines: 2,
                    truncated: true,
                    skipped: 3,
                    cut_lines: 0,
                    pending: "$ ".into(),
                    status: "running",
                    exit: ExitFields::default(),
                    total_lines: 40,
                    line_begin: 5,
                    line_end: 40,
                    settled_by: Some("match"),
                    alt_screen: false,
                    first_line: 5,
                    reread: true,
                    rest: Some(Rest { lines: 33, from: 7 }),
                },
            ),
            expect![[r#"
                5
                6
                [abcd2345 running · settled by match · lines 5..7 re-read, 40 in total · 3 asked-for lines gone from the scrollback (it keeps 5..40) · … 33 later lines: pty_tail from 7 · pending: "$ "]
                ---
                {"cutLines":0,"lineBegin":5,"lineEnd":40,"lines":2,"pending":"$ ","settledBy":"match","skipped":3,"status":"running","text":"5\n6\n","totalLines":40,"truncated":true}
                isError=Some(false)"#]],
        );
    }

    #[test]
    fn a_failed_last_command_is_named() {
        let command = |command: &str, exit_code| CommandResult {
            command: command.into(),
            exit_code: Some(exit_code),
            duration_ms: 3,
        };
        let result = |commands| SendResult {
            delta: Some("$ false\n".into()),
            status: "running",
            exit: ExitFields::default(),
            pending: "$ ".into(),
            truncated: false,
            skipped: 0,
            cut_lines: 0,
            settled_by: "prompt",
            alt_screen: false,
            screen: None,
            cursor: None,
            rest: None,
            commands,
        };
        check(
            sent(
                "k3v8q2mx",
                Sandbox::None,
                &result(vec![command("true", 0), command("false", 1)]),
            ),
            expect![[r#"
                $ false
                [k3v8q2mx running · exit 1 · settled by prompt · pending: "$ "]
                ---
                {"commands":[{"command":"true","durationMs":3,"exitCode":0},{"command":"false","durationMs":3,"exitCode":1}],"cutLines":0,"delta":"$ false\n","pending":"$ ","settledBy":"prompt","skipped":0,"status":"running","truncated":false}
                isError=Some(false)"#]],
        );
        // A failure before a success is not the last command's.
        let text = sent(
            "k3v8q2mx",
            Sandbox::None,
            &result(vec![command("false", 1), command("true", 0)]),
        );
        check(
            text,
            expect![[r#"
                $ false
                [k3v8q2mx running · settled by prompt · pending: "$ "]
                ---
                {"commands":[{"command":"false","durationMs":3,"exitCode":1},{"command":"true","durationMs":3,"exitCode":0}],"cutLines":0,"delta":"$ false\n","pending":"$ ","settledBy":"prompt","skipped":0,"status":"running","truncated":false}
                isError=Some(false)"#]],
        );
    }

    #[test]
    fn errors_start_with_the_code() {
        check(
            error(&Error::UnknownSession {
                id: "zzzz9999".into(),
            }),
            expect![[r#"
                UNKNOWN_SESSION: no open session zzzz9999; it was closed or never existed, open a new one with pty_open
                ---
                null
                isError=Some(true)"#]],
        );
    }

    #[test]
    fn close_reply() {
        check(
            closed("abcd2345", &CloseResult { closed: false }),
            expect![[r#"
                [abcd2345 was not open: nothing to close]
                ---
                {"closed":false}
                isError=Some(false)"#]],
        );
    }
}
