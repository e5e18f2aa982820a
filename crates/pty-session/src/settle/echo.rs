//! What a send typed, so that `until` matches what the programs printed and not the
//! echo of the command just typed (`make && echo DONE` with `until: "DONE"` must not end
//! at its own echo line).
//!
//! The typed text is cut into fragments at every control character (Enter, Tab, Ctrl-C,
//! an escape sequence as a whole): what a line editor or the terminal's own echo shows is
//! the printable runs, in order. An echo comes where the cursor was, at once: the first
//! fragment's echo starts the line the send was made on, right after what that line held
//! then (the prompt); each later one is in that line or, after an Enter, in the next
//! line, after whatever prompt that line begins with. What the first line held at the
//! send (the prompt the send was made at) is no output of the send's either: `until` on
//! a prompt ends at the next prompt, not at its own echo line. Where the output is not so, nothing
//! echoed (a password prompt, a program that turned echo off and prints what it read),
//! and nothing more is taken out: a program's own print of a typed word is never taken
//! for its echo.
//!
//! Pure: fed the send's bytes and where the cursor was, then the lines as they come, by
//! number.

use std::borrow::Cow;
use std::sync::Arc;

use zeroize::Zeroizing;

/// The fragments of a send still expected to be echoed, oldest first, and where. Cheap to
/// clone (the settle looks at open rows with a copy at every step).
#[derive(Clone, Default)]
pub(crate) struct Echo {
    /// Every fragment of the send, shared by the copies; overwritten when dropped, as the
    /// send's own copy of its data: it may be a secret.
    fragments: Arc<[Zeroizing<String>]>,
    /// The first fragment still expected; past the end, none is.
    next: usize,
    /// The number of the line the next fragment's echo is in.
    line: u64,
    /// Where in that line the next fragment's echo starts (bytes): known for the first
    /// (after what the line held at the send); after it, anywhere past the last echo.
    column: Option<usize>,
    /// How far into that line echoes were taken out already (bytes of the line as shown).
    past: usize,
}

impl Echo {
    /// The echo to expect of `typed`, the bytes a send wrote while the cursor was at the
    /// end of `pending`, the text of line number `line` so far.
    pub(crate) fn of(typed: &[u8], line: u64, pending: &str) -> Echo {
        let text = Zeroizing::new(String::from_utf8_lossy(typed).into_owned());
        let mut expected = Vec::new();
        let mut run = Zeroizing::new(String::new());
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if !c.is_control() {
                run.push(c);
                continue;
            }
            if !run.is_empty() {
                expected.push(std::mem::take(&mut run));
            }
            if c == '\u{1b}' {
                skip_escape(&mut chars);
            }
        }
        if !run.is_empty() {
            expected.push(run);
        }
        Echo {
            fragments: expected.into(),
            next: 0,
            line,
            column: Some(pending.len()),
            past: 0,
        }
    }

    /// Completed line number `number` (lines come in order) without the echoes it holds;
    /// the fragments found are expected no more.
    pub(crate) fn strip<'a>(&mut self, number: u64, line: &'a str) -> Cow<'a, str> {
        self.strip_as(number, line, false)
    }

    /// The pending line, number `number`, as [`strip`](Echo::strip) leaves it, and also
    /// without its end where that starts the next fragment's echo: an echo still
    /// arriving. Look at a pending line with a clone: it is seen again once complete.
    pub(crate) fn strip_pending<'a>(&mut self, number: u64, line: &'a str) -> Cow<'a, str> {
        self.strip_as(number, line, true)
    }

    /// The next fragment expected, if any.
    fn expected(&self) -> Option<&Zeroizing<String>> {
        self.fragments.get(self.next)
    }

    fn strip_as<'a>(&mut self, number: u64, line: &'a str, pending: bool) -> Cow<'a, str> {
        if self.expected().is_none() || number < self.line {
            return Cow::Borrowed(line);
        }
        if number > self.line {
            // The line the echo was due in ended without it: nothing echoed.
            self.next = self.fragments.len();
            return Cow::Borrowed(line);
        }
        let mut kept = String::new();
        let mut at = 0;
        while let Some(next) = self.expected() {
            let found = match self.column {
                Some(column) => line
                    .get(column..)
                    .is_some_and(|rest| rest.starts_with(next.as_str()))
                    .then_some(column),
                None => line
                    .get(self.past.max(at)..)
                    .and_then(|rest| rest.find(next.as_str()))
                    .map(|start| self.past.max(at) + start),
            };
            let Some(start) = found else {
                break;
            };
            // Before the first echo stands what the line held at the send (the prompt the
            // send was made at): not output that came since.
            if self.column.is_none() {
                kept.push_str(&line[at..start]);
            }
            at = start + next.len();
            self.past = at;
            self.column = None;
            self.next += 1;
        }
        let mut end = line.len();
        // Only where the echo is known to start: elsewhere the end of a line may start a
        // fragment by chance.
        if pending
            && let (Some(next), Some(column)) = (self.expected(), self.column)
            && line
                .get(column..)
                .is_some_and(|rest| next.starts_with(rest))
        {
            // An echo still arriving after what the line held at the send: nothing new.
            (at, end) = (column, column);
        }
        if !pending {
            if self.column.is_some() {
                // The first fragment's echo is not where the cursor was.
                self.next = self.fragments.len();
            } else {
                (self.line, self.past) = (self.line + 1, 0);
            }
        }
        if at == 0 && end == line.len() {
            return Cow::Borrowed(line);
        }
        kept.push_str(&line[at..end]);
        Cow::Owned(kept)
    }
}

/// Where the first piece of text a send typed is echoed: the line the cursor was in at
/// the send, and the column (the end of the pending line then). Its start before that
/// column is where the program took the input: its prompt
/// ([`Learned`](crate::term::prompt::Learned)).
pub(crate) struct EchoLine {
    /// The number the line the cursor was in will have.
    pub(crate) line: u64,
    /// The end of the pending line at the send, in bytes.
    pub(crate) column: usize,
    /// The first piece of text the send typed; overwritten when dropped (it may be a
    /// secret, typed where nothing echoes).
    pub(crate) typed: Zeroizing<String>,
}

impl EchoLine {
    /// Where `echo`, as a send made it ([`Echo::of`]), expects its first piece; `None`
    /// when the send typed no text before its first key.
    pub(crate) fn of(echo: &Echo) -> Option<EchoLine> {
        Some(EchoLine {
            line: echo.line,
            column: echo.column?,
            typed: echo.fragments.first()?.clone(),
        })
    }
}

/// Skips the rest of an escape sequence whose ESC was just read: a CSI (`ESC [` … a final
/// byte), an OSC (`ESC ]` … BEL or `ESC \`), an SS3 key (`ESC O x`) or `ESC x` (Alt-x).
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                    break;
                }
            }
        }
        Some('O') => {
            chars.next();
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fragments(typed: &str) -> Vec<String> {
        let echo = Echo::of(typed.as_bytes(), 0, "");
        echo.fragments[echo.next..]
            .iter()
            .map(|f| f.to_string())
            .collect()
    }

    #[test]
    fn typed_text_is_cut_at_keys_and_escape_sequences() {
        assert_eq!(fragments("make && echo DONE\r"), ["make && echo DONE"]);
        assert_eq!(
            fragments("for i in 1 2:\n    print(i)\n\n"),
            ["for i in 1 2:", "    print(i)"]
        );
        assert_eq!(fragments("ls\tx\u{3}"), ["ls", "x"]);
        assert_eq!(
            fragments("\u{1b}[Aup\u{1b}OBdown\u{1b}]0;t\u{7}z\u{1b}b"),
            ["up", "down", "z"]
        );
        assert!(fragments("\r\x03\x1b[6n").is_empty());
    }

    #[test]
    fn the_echo_line_is_not_seen_and_the_output_is() {
        let mut echo = Echo::of(b"make && echo DONE\r", 7, "$ ");
        assert_eq!(echo.strip(7, "$ make && echo DONE"), "");
        assert!(echo.expected().is_none());
        assert_eq!(echo.strip(8, "DONE"), "DONE");
    }

    #[test]
    fn fragments_are_found_line_after_line_after_their_prompts() {
        let mut echo = Echo::of(b"for i in 'ab':\r  print(i)\r\r", 3, ">>> ");
        assert_eq!(echo.strip(3, ">>> for i in 'ab':"), "");
        assert_eq!(echo.strip(4, "...   print(i)"), "... ");
        assert_eq!(echo.strip(5, "..."), "...");
        assert_eq!(echo.strip(6, "a"), "a");
        // Keys between fragments on one line: each is found after the one before.
        let mut echo = Echo::of(b"ls\tx\r", 0, "$ ");
        assert_eq!(echo.strip(0, "$ ls x"), " ");
    }

    #[test]
    fn a_program_that_does_not_echo_keeps_its_own_print_of_the_typed_text() {
        // ssh with the remote echo off: `read` took "Ada" unseen, the program prints it.
        let mut echo = Echo::of(b"Ada\r", 2, "name? ");
        assert_eq!(echo.strip(2, "name? hi [Ada]"), "name? hi [Ada]");
        assert_eq!(echo.strip(3, "Ada"), "Ada");
        // A password typed at a prompt, then output holding the same word.
        let mut echo = Echo::of(b"secret\r", 0, "Password: ");
        assert_eq!(echo.strip(0, "Password: "), "Password: ");
        assert_eq!(echo.strip(1, "the secret is out"), "the secret is out");
        // The line the echo was due in never completed here; a later one did.
        let mut echo = Echo::of(b"x\r", 4, "");
        assert_eq!(echo.strip(5, "x"), "x");
    }

    #[test]
    fn an_echo_still_arriving_is_not_seen_either() {
        let mut echo = Echo::of(b"time.sleep(2); print('xyzzy')\r", 0, ">>> ");
        let pending = |line| echo.clone().strip_pending(0, line).into_owned();
        assert_eq!(pending(">>> time.sleep(2); pri"), "");
        assert_eq!(pending(">>> time.sleep(2); print('xyzzy')"), "");
        // The prompt the send was made at, unchanged, is not new either.
        assert_eq!(pending(">>> "), "");
        // Clones looked at the pending line: the echo is still expected.
        assert_eq!(echo.strip(0, ">>> time.sleep(2); print('xyzzy')"), "");
        assert_eq!(echo.strip(1, "xyzzy"), "xyzzy");
        // A pending line that is not the echo's keeps its text.
        let echo = Echo::of(b"echo x\r", 0, "$ ");
        assert_eq!(echo.clone().strip_pending(0, "$ done"), "$ done");
        assert_eq!(echo.clone().strip_pending(1, "ec"), "ec");
    }

    #[test]
    fn the_echo_line_is_where_the_first_piece_typed_goes() {
        let line = EchoLine::of(&Echo::of(b"echo hi\r", 4, "me@box:~$ ")).unwrap();
        assert_eq!((line.line, line.column), (4, 10));
        assert_eq!(line.typed.as_str(), "echo hi");
        assert_eq!(
            EchoLine::of(&Echo::of(b"\x1b[Aup\r", 0, ">>> "))
                .unwrap()
                .typed
                .as_str(),
            "up"
        );
        assert!(EchoLine::of(&Echo::of(b"\r", 0, ">>> ")).is_none());
    }

    #[test]
    fn wide_text_is_cut_on_character_boundaries() {
        let echo = Echo::of("échec é".as_bytes(), 0, "> ");
        let pending = |line| echo.clone().strip_pending(0, line).into_owned();
        assert_eq!(pending("> éch"), "");
        assert_eq!(pending("> é"), "");
        assert_eq!(pending("> e"), "> e");
        let mut echo = Echo::of("é".as_bytes(), 0, "ü");
        assert_eq!(echo.strip(0, "üé"), "");
    }
}
