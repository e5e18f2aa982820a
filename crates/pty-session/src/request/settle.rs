//! How a wait ends: the modes a caller picks ([`Settle`]) and the signal that ended it
//! ([`SettleReason`]).

use std::fmt;

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
