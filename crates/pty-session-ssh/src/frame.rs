//! Framing on the remote shell: the text the driver types (the setup line, each framed
//! command) and [`Collector`], which finds one command's output and exit status between
//! its markers. Pure: no I/O.
//!
//! Every marker carries a fresh random token, and the typed text never contains a marker
//! as it is printed: the shell's `printf` joins the marker from two words
//! (`printf '%s_%s\n' PTYSSH_B 1f0e...` prints `PTYSSH_B_1f0e...`). So an echo of the
//! typed text, a prompt, the MOTD or an earlier command's output cannot be mistaken for a
//! marker, and whatever is not between a command's markers is not its output.

use crate::Error;

/// The longest line the driver types. A terminal in canonical mode (the remote shell
/// reads that way once line editing is off) keeps at most 4,095 bytes of one line.
pub(crate) const MAX_LINE: usize = 4000;

/// The markers of one connection or one command, from one token.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    token: String,
}

impl Frame {
    /// A frame for `token` (letters and digits).
    pub(crate) fn new(token: String) -> Frame {
        debug_assert!(token.bytes().all(|b| b.is_ascii_alphanumeric()));
        Frame { token }
    }

    /// A fresh random frame.
    pub(crate) fn fresh() -> Frame {
        let mut bytes = [0u8; 8];
        // Without the OS's randomness, the time and the pid still make a token no
        // output will hold by chance.
        if getrandom::fill(&mut bytes).is_err() {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            bytes = (nanos ^ u64::from(std::process::id()) << 32).to_le_bytes();
        }
        Frame::new(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The token.
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// The line ssh's `LocalCommand` prints once it has authenticated.
    pub(crate) fn ready(&self) -> String {
        format!("PTYSSH_READY_{}", self.token)
    }

    /// The local command that prints [`ready`](Self::ready).
    pub(crate) fn local_command(&self) -> String {
        format!("echo {}", self.ready())
    }

    /// The line the remote shell prints once the setup took effect.
    pub(crate) fn up(&self) -> String {
        format!("PTYSSH_UP_{}", self.token)
    }

    /// What the driver types into a fresh login shell: echo off, empty prompts, a marker,
    /// then line editing off, so that later input is read as plain lines (a tab is a tab,
    /// `!` is not history). Two lines: the first is short because line editors redraw
    /// a long echoed line in pieces; once it ran, nothing typed is echoed any more.
    /// Errors of shells that lack an option are silenced, and come after the marker.
    pub(crate) fn setup(&self) -> String {
        let token = &self.token;
        format!(
            " stty -echo #{token}\n PS1= PS2= PS3= PS4=; unset PROMPT_COMMAND; printf \
             '%s_%s\\n' PTYSSH_UP {token}; {{ unsetopt zle; set +o emacs; set +o vi; set +H; \
             }} 2>/dev/null\n"
        )
    }

    /// The text that runs `command` with `input` as its standard input (a here-document,
    /// so the command never reads the terminal) between this frame's markers, in the
    /// remote shell itself (`eval`: `cd` and variables persist). The exit status is
    /// printed after the command, and echo is turned off again in case the command
    /// turned it on.
    pub(crate) fn command(&self, command: &str, input: &str) -> Result<String, Error> {
        check("command", command)?;
        check("input", input)?;
        if command.trim().is_empty() {
            return Err(Error::InvalidCommand {
                what: "command",
                reason: "is empty".to_owned(),
            });
        }
        let token = &self.token;
        let quoted = command.replace('\'', r"'\''");
        let mut text = format!(
            " printf '%s_%s\\n' PTYSSH_B {token}; eval '{quoted}' <<'PTYSSH_IN_{token}'; \
             PTYSSH_S=$?; stty -echo 2>/dev/null; printf '%s_%s:%s\\n' PTYSSH_E {token} \
             \"$PTYSSH_S\"; unset PTYSSH_S\n"
        );
        text.push_str(input);
        if !input.is_empty() && !input.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("PTYSSH_IN_{token}\n"));
        if let Some(line) = text.lines().find(|line| line.len() > MAX_LINE) {
            return Err(Error::InvalidCommand {
                what: if line.starts_with(" printf") {
                    "command"
                } else {
                    "input"
                },
                reason: format!(
                    "has a line of {} bytes once framed; a terminal takes at most {MAX_LINE} \
                     bytes a line: split it, or copy a script over first",
                    line.len()
                ),
            });
        }
        Ok(text)
    }

    /// A collector for this frame's command.
    pub(crate) fn collector(&self) -> Collector {
        Collector {
            begin: format!("PTYSSH_B_{}", self.token),
            end: format!("PTYSSH_E_{}:", self.token),
            seen_begin: false,
            before: String::new(),
            output: String::new(),
            exit_code: None,
        }
    }
}

/// Refuses what a terminal would not pass through as typed: control characters (Ctrl-C
/// interrupts, Ctrl-D ends input, Ctrl-U erases the line, ...). Newlines and tabs are
/// fine.
fn check(what: &'static str, text: &str) -> Result<(), Error> {
    match text
        .chars()
        .find(|&c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{7f}')
    {
        Some(c) => Err(Error::InvalidCommand {
            what,
            reason: format!(
                "holds the control character {c:?}, which the terminal would act on; send \
                 keys with send(), or pass binary data encoded (base64)"
            ),
        }),
        None => Ok(()),
    }
}

/// One command's output, collected from the lines that arrive.
#[derive(Debug)]
pub(crate) struct Collector {
    begin: String,
    end: String,
    seen_begin: bool,
    /// Lines before the begin marker: kept only in case the marker is lost.
    before: String,
    output: String,
    exit_code: Option<i32>,
}

impl Collector {
    /// Takes one completed line (without its `\n`).
    pub(crate) fn push(&mut self, line: &str) {
        if self.exit_code.is_some() {
            return;
        }
        if !self.seen_begin && line.ends_with(&self.begin) {
            self.seen_begin = true;
            self.before.clear();
            return;
        }
        // A command whose output does not end with a newline leaves its last piece in
        // front of the end marker, on the same line.
        if let Some(at) = line.rfind(&self.end) {
            let status = &line[at + self.end.len()..];
            if let Ok(code) = status.parse::<i32>() {
                let text = if self.seen_begin {
                    &mut self.output
                } else {
                    // The begin marker fell out of the scrollback: what came before
                    // is the best there is.
                    &mut self.before
                };
                text.push_str(&line[..at]);
                if !self.seen_begin {
                    self.output = std::mem::take(&mut self.before);
                }
                self.exit_code = Some(code);
                return;
            }
        }
        let text = if self.seen_begin {
            &mut self.output
        } else {
            &mut self.before
        };
        text.push_str(line);
        text.push('\n');
    }

    /// The output and the exit status, once the end marker came.
    pub(crate) fn finished(&mut self) -> Option<(String, i32)> {
        let code = self.exit_code?;
        Some((std::mem::take(&mut self.output), code))
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    fn frame() -> Frame {
        Frame::new("0123abcd".to_owned())
    }

    /// Feeds `lines` to a collector and shows what it found.
    #[track_caller]
    fn check(lines: &[&str], expect: Expect) {
        let mut collector = frame().collector();
        for line in lines {
            collector.push(line);
        }
        expect.assert_debug_eq(&collector.finished());
    }

    #[test]
    fn output_between_the_markers_is_the_result() {
        check(
            &[
                "Welcome to the MOTD",
                "$ ",
                "PTYSSH_B_0123abcd",
                "hello",
                "",
                "world",
                "PTYSSH_E_0123abcd:0",
                "$ after",
            ],
            expect![[r#"
                Some(
                    (
                        "hello\n\nworld\n",
                        0,
                    ),
                )
            "#]],
        );
    }

    #[test]
    fn output_without_a_final_newline_shares_the_end_markers_line() {
        check(
            &["PTYSSH_B_0123abcd", "one", "twoPTYSSH_E_0123abcd:127"],
            expect![[r#"
                Some(
                    (
                        "one\ntwo",
                        127,
                    ),
                )
            "#]],
        );
        check(
            &["prompt$ PTYSSH_B_0123abcd", "PTYSSH_E_0123abcd:1"],
            expect![[r#"
                Some(
                    (
                        "",
                        1,
                    ),
                )
            "#]],
        );
    }

    #[test]
    fn other_tokens_and_echoes_are_not_markers() {
        check(
            &[
                " printf '%s_%s\\n' PTYSSH_B 0123abcd; eval 'x'",
                "PTYSSH_E_99999999:0",
                "PTYSSH_B_0123abcd",
                "PTYSSH_E_0123abcd:not a number",
                "PTYSSH_B_0123abcd",
            ],
            expect![[r#"
                None
            "#]],
        );
    }

    #[test]
    fn a_lost_begin_marker_keeps_what_came() {
        check(
            &["line 9998", "line 9999", "PTYSSH_E_0123abcd:0"],
            expect![[r#"
                Some(
                    (
                        "line 9998\nline 9999\n",
                        0,
                    ),
                )
            "#]],
        );
    }

    #[test]
    fn the_typed_command_quotes_and_frames() {
        let text = frame().command("echo 'a b'\necho $HOME", "x\ny").unwrap();
        expect![[r#"
             printf '%s_%s\n' PTYSSH_B 0123abcd; eval 'echo '\''a b'\''
            echo $HOME' <<'PTYSSH_IN_0123abcd'; PTYSSH_S=$?; stty -echo 2>/dev/null; printf '%s_%s:%s\n' PTYSSH_E 0123abcd "$PTYSSH_S"; unset PTYSSH_S
            x
            y
            PTYSSH_IN_0123abcd
        "#]]
        .assert_eq(&text);
        assert!(!text.contains("PTYSSH_B_0123abcd") && !text.contains("PTYSSH_E_0123abcd"));
        assert!(!frame().setup().contains(&frame().up()));
    }

    #[test]
    fn what_a_terminal_would_act_on_is_refused() {
        for (command, input) in [("echo \u{3}", ""), ("cat", "a\u{4}"), ("", ""), (" \n", "")] {
            let err = frame().command(command, input).unwrap_err();
            assert!(matches!(err, Error::InvalidCommand { .. }), "{err}");
        }
        let long = "x".repeat(MAX_LINE + 1);
        let err = frame().command("cat", &long).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidCommand { what: "input", .. }),
            "{err}"
        );
        assert!(frame().command("printf 'a\\tb'\t", "tab\there\n").is_ok());
    }
}
