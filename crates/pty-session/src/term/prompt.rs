//! The shape of a prompt, for sessions whose waits cannot be seen (the `ssh` client waits
//! on the terminal and its socket at once): their settle ends when the prompt comes back.
//! Pure: no I/O, no clock.
//!
//! A shape is learned from the pending line a send was made at (`user@host:~$ `), with
//! the working directory or a counter in it allowed to change (`user@host:/tmp$ `,
//! `In [2]: `); any line ending as prompts end (`$ `, `# `, `> `, `% `, `: `, `? `, `) `,
//! `] `, `... `) has a prompt's shape too, so a send that starts a REPL (`python3` at a
//! shell) ends at its prompt (`>>> `), and so do a program's own prompts the first time
//! they show: python's continuation `... `, `(gdb) `, `(Pdb) `, `(y or n) `, `[Y/n] `.
//!
//! A session also keeps the prompts its programs showed ([`Learned`]): the text an echo
//! line holds before the echo of what a send typed is where the program took that input,
//! its prompt. A pending line that is exactly one of them is a prompt of any settle's
//! shape, and is trusted sooner (see the settle's hold).

use std::collections::VecDeque;

/// How prompts end: a sign and a space.
pub(crate) const ENDINGS: [&str; 9] = ["$ ", "# ", "> ", "% ", ": ", "? ", ") ", "] ", "... "];

/// The characters where the part of a prompt that may change begins: a path (`~`, `/`)
/// or a counter.
fn varies(c: char) -> bool {
    c == '~' || c == '/' || c.is_ascii_digit()
}

/// What a prompt looks like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PromptShape {
    /// Learned from a pending line: its start up to the part that may change, and its
    /// last sign with the spaces after it.
    learned: Option<(String, String)>,
}

impl PromptShape {
    /// Any line ending as prompts end (at open, where no prompt was seen yet).
    pub(crate) fn any() -> PromptShape {
        PromptShape { learned: None }
    }

    /// The shape of `pending`, the line a send was made at; `None` when it is not a
    /// prompt: empty, or not ending in a space (a prompt's last sign is followed by one).
    pub(crate) fn learn(pending: &str) -> Option<PromptShape> {
        let body = pending.trim_end_matches(' ');
        let last = body.chars().last()?;
        if body.len() == pending.len() {
            return None;
        }
        let sign_at = body.len() - last.len_utf8();
        let ending = pending[sign_at..].to_owned();
        let start = &body[..sign_at];
        let head = match start.find(varies) {
            Some(at) => &start[..at],
            None => start,
        };
        Some(PromptShape {
            learned: Some((head.to_owned(), ending)),
        })
    }

    /// Whether `line` has this shape.
    pub(crate) fn matches(&self, line: &str) -> bool {
        if line.trim().is_empty() {
            return false;
        }
        if ENDINGS.iter().any(|ending| line.ends_with(ending)) {
            return true;
        }
        self.learned.as_ref().is_some_and(|(head, ending)| {
            line.len() >= head.len() + ending.len()
                && line.starts_with(head.as_str())
                && line.ends_with(ending.as_str())
                && line[head.len()..line.len() - ending.len()]
                    .chars()
                    .all(|c| !c.is_control())
        })
    }
}

/// How many prompts a session keeps: the newest (a shell's, a REPL's, a debugger's and
/// their questions fit).
const LEARNED_MAX: usize = 8;
/// The longest text taken for a prompt: a longer start of an echo line is output the
/// send's input was typed after, not a prompt.
const PROMPT_MAX: usize = 256;

/// The prompts a session's programs showed, learned from echo lines: exact texts, newest
/// first.
#[derive(Debug, Default)]
pub(crate) struct Learned {
    prompts: VecDeque<String>,
}

impl Learned {
    /// Learns what `line`, the line a send's typed text was echoed in, shows before the
    /// echo: `column` is where the cursor stood at the send (the end of the pending line
    /// then), `typed` the first piece of text the send typed. Nothing is learned where the
    /// echo is not there (nothing echoed: a password), or the text before it has no
    /// prompt's shape (blank, or not ending in a space).
    pub(crate) fn learn_from_echo(&mut self, line: &str, column: usize, typed: &str) {
        if typed.is_empty() || column > PROMPT_MAX {
            return;
        }
        let Some((before, after)) = line.split_at_checked(column) else {
            return;
        };
        if !after.starts_with(typed) || PromptShape::learn(before).is_none() {
            return;
        }
        if let Some(at) = self.prompts.iter().position(|known| known == before) {
            self.prompts.remove(at);
        }
        self.prompts.push_front(before.to_owned());
        self.prompts.truncate(LEARNED_MAX);
    }

    /// Whether `line` is exactly a prompt learned before.
    pub(crate) fn knows(&self, line: &str) -> bool {
        self.prompts.iter().any(|known| known == line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_before_the_echo_is_learned_as_a_prompt() {
        let mut learned = Learned::default();
        learned.learn_from_echo("me@box:~$ echo hi", 10, "echo hi");
        assert!(learned.knows("me@box:~$ "));
        assert!(!learned.knows("me@box:/tmp$ "), "exact texts only");
        learned.learn_from_echo("λ :t map", 3, ":t map");
        assert!(learned.knows("λ "));
        // No echo where the cursor was (a password, echo off): nothing learned.
        learned.learn_from_echo("Password: ", 10, "secret");
        assert!(!learned.knows("Password: "));
        // Output the input was typed after, not a prompt: no space before the echo.
        learned.learn_from_echo("50%ls", 3, "ls");
        assert!(!learned.knows("50%"));
        // Nothing typed, or the cursor's column inside a character.
        learned.learn_from_echo(">>> ", 4, "");
        assert!(!learned.knows(">>> "));
        learned.learn_from_echo("é x", 1, "x");
        assert!(!learned.knows("é"));
        // The newest are kept.
        for n in 0..LEARNED_MAX + 2 {
            learned.learn_from_echo(&format!("[{n}] x"), format!("[{n}] ").len(), "x");
        }
        assert!(learned.knows(&format!("[{}] ", LEARNED_MAX + 1)));
        assert!(!learned.knows("λ "));
    }

    #[test]
    fn lines_ending_as_prompts_end() {
        let any = PromptShape::any();
        for line in [
            "user@host:~$ ",
            "root@box:/# ",
            ">>> ",
            "mysql> ",
            "% ",
            "Password: ",
            "Are you sure you want to continue connecting (yes/no/[fingerprint])? ",
            "... ",
            "(gdb) ",
            "(Pdb) ",
            "Delete all breakpoints? (y or n) ",
            "Make breakpoint pending on future shared library load? (y or [n]) ",
            "Do you want to continue? [Y/n] ",
        ] {
            assert!(any.matches(line), "{line:?}");
        }
        for line in [
            "",
            "   ",
            "done",
            "50%",
            "user@host:~$",
            "a $ b",
            "(gdb)",
            "Loading. ",
            "x) y",
        ] {
            assert!(!any.matches(line), "{line:?}");
        }
    }

    #[test]
    fn a_learned_prompt_allows_its_directory_and_counter_to_change() {
        let shell = PromptShape::learn("user@host:~$ ").unwrap();
        assert!(shell.matches("user@host:/tmp$ "));
        assert!(shell.matches("user@host:~/src/project$ "));
        let gdb = PromptShape::learn("(gdb) ").unwrap();
        assert!(gdb.matches("(gdb) "));
        let custom = PromptShape::learn("mybox λ ").unwrap();
        assert!(custom.matches("mybox λ "));
        assert!(!custom.matches("other λ "), "the start must stay");
        assert!(!custom.matches("mybox λ"));
        let irb = PromptShape::learn("irb(main):001:0> ").unwrap();
        assert!(irb.matches("irb(main):002:0> "));
        let lisp = PromptShape::learn("[1] ").unwrap();
        assert!(lisp.matches("[12] "));
        assert!(!lisp.matches("12 "), "the start must stay");
    }

    #[test]
    fn only_a_pending_line_ending_in_a_space_teaches_a_shape() {
        assert_eq!(PromptShape::learn(""), None);
        assert_eq!(PromptShape::learn("   "), None);
        assert_eq!(PromptShape::learn("Downloading 50%"), None);
        assert!(PromptShape::learn("sqlite> ").is_some());
    }
}
