//! What a session's marks tell: [`ShellState`] follows them (pure; the instant each was
//! read is given) into the commands that finished and are not delivered yet, the one
//! running, the shell's directory, the last status, and a count of prompts for the settle.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::marks::Mark;
use crate::request::limits;

/// A command the shell ran, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellCommand {
    /// The command line as the shell read it (empty when the shell did not say).
    pub command: String,
    /// Its exit status; `None` when the shell did not say.
    pub exit_code: Option<i32>,
    /// From its start to its end, as the service read the marks.
    pub duration: Duration,
}

/// The marks of one session, followed.
#[derive(Debug, Default)]
pub(crate) struct ShellState {
    /// Only the end of a prompt (`B`) counts as its return (our hooks send it); otherwise
    /// its start counts too until a `B` was seen.
    prompt_end_only: bool,
    /// A `B` has been seen.
    seen_prompt_end: bool,
    /// Prompts drawn so far with nothing typed ahead: the shell waits for the person.
    pub(crate) prompts: u64,
    /// The command running: its text and when its start was read.
    running: Option<(String, Instant)>,
    /// Finished commands not delivered yet, oldest first, at most
    /// [`limits::MAX_COMMANDS_KEPT`].
    finished: VecDeque<ShellCommand>,
    /// The shell's directory, as it last said.
    pub(crate) cwd: Option<PathBuf>,
    /// The exit status of the last command that finished.
    pub(crate) last_status: Option<i32>,
}

impl ShellState {
    /// Follows the marks of a session; `hooks`: our hooks send them (`B` after every
    /// prompt).
    pub(crate) fn new(hooks: bool) -> ShellState {
        ShellState {
            prompt_end_only: hooks,
            ..ShellState::default()
        }
    }

    /// Takes in `mark`, read at `now`; `typed_ahead`: input the shell has not read yet
    /// waited in the terminal then (a prompt then is not the shell waiting: a send of two
    /// command lines ends at the second one's prompt).
    pub(crate) fn apply(&mut self, mark: Mark, now: Instant, typed_ahead: bool) {
        match mark {
            Mark::PromptStart => {
                if !self.prompt_end_only && !self.seen_prompt_end && !typed_ahead {
                    self.prompts += 1;
                }
            }
            Mark::PromptEnd => {
                self.seen_prompt_end = true;
                if !typed_ahead {
                    self.prompts += 1;
                }
            }
            Mark::CommandStart(command) => {
                self.running = Some((command.unwrap_or_default(), now));
            }
            Mark::CommandEnd(status) => {
                if let Some((command, started)) = self.running.take() {
                    self.finish(command, status, now.duration_since(started));
                }
            }
            Mark::Cwd(cwd) => self.cwd = Some(cwd),
        }
    }

    fn finish(&mut self, command: String, exit_code: Option<i32>, duration: Duration) {
        if self.finished.len() == limits::MAX_COMMANDS_KEPT {
            self.finished.pop_front();
        }
        self.last_status = exit_code;
        self.finished.push_back(ShellCommand {
            command,
            exit_code,
            duration,
        });
    }

    /// Hands out the finished commands, once. `exited`: the shell's own exit status, if
    /// it ended: a command still running then (`exit`, `exec`) ended with it.
    pub(crate) fn take(&mut self, exited: Option<Option<i32>>, now: Instant) -> Vec<ShellCommand> {
        if let Some(code) = exited
            && let Some((command, started)) = self.running.take()
        {
            self.finish(command, code, now.duration_since(started));
        }
        self.finished.drain(..).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_delivered_once_in_order() {
        let t = Instant::now();
        let ms = |n| t + Duration::from_millis(n);
        let mut state = ShellState::new(true);
        state.apply(Mark::PromptStart, ms(0), false);
        assert_eq!(state.prompts, 0, "our hooks: the prompt's end counts");
        state.apply(Mark::PromptEnd, ms(0), false);
        assert_eq!(state.prompts, 1);
        state.apply(Mark::CommandStart(Some("false".into())), ms(10), false);
        state.apply(Mark::CommandEnd(Some(1)), ms(15), false);
        state.apply(Mark::CommandStart(Some("sleep 1".into())), ms(20), false);
        let got = state.take(None, ms(30));
        assert_eq!(
            got,
            [ShellCommand {
                command: "false".into(),
                exit_code: Some(1),
                duration: Duration::from_millis(5)
            }]
        );
        assert_eq!(state.last_status, Some(1));
        assert!(state.take(None, ms(40)).is_empty(), "delivered once");
        state.apply(Mark::CommandEnd(Some(0)), ms(1020), false);
        let got = state.take(None, ms(1030));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].command, "sleep 1");
        assert_eq!(got[0].duration, Duration::from_millis(1000));
        // An end without a start (a program's stray mark) is no command.
        state.apply(Mark::CommandEnd(Some(3)), ms(1040), false);
        assert!(state.take(None, ms(1050)).is_empty());
    }

    #[test]
    fn the_shells_exit_ends_its_command() {
        let t = Instant::now();
        let mut state = ShellState::new(true);
        state.apply(Mark::CommandStart(Some("exit 4".into())), t, false);
        assert!(state.take(None, t).is_empty());
        let got = state.take(Some(Some(4)), t + Duration::from_millis(2));
        assert_eq!(got[0].command, "exit 4");
        assert_eq!(got[0].exit_code, Some(4));
    }

    #[test]
    fn without_hooks_a_prompt_start_counts_until_ends_are_seen() {
        let t = Instant::now();
        let mut state = ShellState::new(false);
        state.apply(Mark::PromptStart, t, false);
        assert_eq!(state.prompts, 1);
        state.apply(Mark::PromptEnd, t, false);
        state.apply(Mark::PromptStart, t, false);
        assert_eq!(state.prompts, 2, "once ends are seen, only they count");
    }

    #[test]
    fn the_kept_commands_are_bounded() {
        let t = Instant::now();
        let mut state = ShellState::new(true);
        for n in 0..limits::MAX_COMMANDS_KEPT + 5 {
            state.apply(Mark::CommandStart(Some(n.to_string())), t, false);
            state.apply(Mark::CommandEnd(Some(0)), t, false);
        }
        let got = state.take(None, t);
        assert_eq!(got.len(), limits::MAX_COMMANDS_KEPT);
        assert_eq!(got[0].command, "5");
    }
}
