//! Settling: deciding when an open or a send returns (docs/tools.md, "Settling").
//!
//! The decision is [`Settler`], a pure state machine: each step it is shown the time, the
//! session's output counters, the exit, whether `until` matched and (when it asks) a look
//! at the terminal's foreground group, and it answers "done, because …" or "look again
//! then". [`settle`] is its driver: it gathers those inputs and sleeps as told.
//!
//! Input wait is read from `/proc` only while a settle runs (see `blocked`): every task
//! of the foreground group asleep, one of them waiting for the person at the terminal and
//! none for anything else, nothing unread on the master, no new output, and proof that
//! the program has seen what was written (it ran since, or nothing woke it for a while).
//! The state must hold before it counts, because one look at `/proc` reads the tasks one
//! after another, and a task can wake and sleep again between looks: for
//! [`CONFIRM_STILL`](settler::CONFIRM_STILL) if no task of the group ran in between (their `schedstat` run counts
//! unchanged), otherwise for [`CONFIRM`](settler::CONFIRM). A wait on the terminal with a timer of a second
//! or less is not input wait until the timer fired (a loop of such waits without output
//! ends on quiet). A loop that waits so, or only sleeps so on a full screen (`watch`),
//! and repaints between waits like each other waits for a key after one cycle. A group
//! that waits on the terminal and on an outside source at once
//! (the `ssh` client) ends when its prompt comes back ([`crate::term::prompt`]; sooner
//! where it is exactly one the session learned from an echo line), or on quiet where no
//! prompt shape is known; one whose records cannot be read, or that waits on a
//! working member, can only be told by quiet. Sampling is close (yielding between looks)
//! right after a change, every [`FINE`](settler::FINE) for a while after that, then every [`TICK`].

use std::time::{Duration, Instant};

use regex::Regex;
use tokio_util::sync::CancellationToken;

use crate::blocked::Verdict;
use crate::procfs::{GroupProbe, GroupSample, Lookup};
use crate::request::SettleOptions;
use crate::session::Session;
use crate::term::prompt::PromptShape;
use crate::timer::FineTimer;
use crate::{Error, Result, Settle, SettleReason};

mod echo;
pub(crate) mod progress;
mod settler;

use echo::{Echo, EchoLine};
use settler::TICK;
pub(crate) use settler::{GroupLook, Next, Seen, Settler};

/// A settle's options, checked.
pub(crate) struct Plan {
    mode: Settle,
    until: Option<Regex>,
    quiet: Duration,
    start: Instant,
    deadline: Instant,
}

impl Plan {
    /// Checks `options`; the call's clock starts at `start`.
    pub(crate) fn new(options: &SettleOptions, start: Instant) -> Result<Plan> {
        let timeout = crate::request::timeout(options.timeout_ms())?;
        let quiet = crate::request::quiet(options.quiet_ms())?;
        let until =
            match &options.until {
                None => None,
                Some(pattern) => Some(Regex::new(pattern).map_err(|err| {
                    Error::invalid("until", format!("is not a valid regex: {err}"))
                })?),
            };
        // `until` mode is quiet mode whose quiet never comes before the deadline.
        let (mode, quiet) = match options.settle {
            Settle::Until => (Settle::Quiet, timeout + Duration::from_secs(1)),
            mode => (mode, quiet),
        };
        Ok(Plan {
            mode,
            until,
            quiet,
            start,
            deadline: start + timeout,
        })
    }

    /// The instant the call must give up by.
    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether to wait at all.
    pub(crate) fn waits(&self) -> bool {
        self.mode != Settle::None
    }
}

/// What the session looked like when the call began, to tell later what is new.
pub(crate) struct Baseline {
    line_mark: u64,
    /// The lines a read would have delivered by then, the window's open rows counted:
    /// a line completed since, fixed or still open, tells the command's echo came.
    lines_mark: u64,
    /// `None` for a tail: the pending line as it is counts for `until`.
    output_seq: Option<u64>,
    /// The shape of the prompt whose return ends the settle where waits cannot be seen;
    /// `None`: no shape is known, quiet ends it.
    prompt: Option<PromptShape>,
    /// The prompt counts only after a line completed since (the command's echo): a send.
    prompt_after_line: bool,
    /// What the send typed, whose echo `until` does not see.
    echo: Echo,
    /// Where the send's typed text is echoed: what stands before it there is learned as
    /// a prompt of the session's.
    echo_line: Option<EchoLine>,
    /// The shell's prompts drawn by then ([`crate::shell`]).
    prompts: u64,
    /// How many more make the shell back: one a line the send typed (the shell draws its
    /// prompt again after each line it reads, so the prompt after the first of two lines
    /// typed at once is not the end), at least one.
    prompts_due: u64,
}

impl Baseline {
    /// Taken for a new session, at the start: any line ending as prompts end is one.
    pub(crate) fn at_open(session: &Session) -> Baseline {
        let state = session.state();
        Baseline {
            line_mark: state.line_end(),
            lines_mark: state.lines_end(),
            output_seq: Some(state.output_seq),
            prompt: Some(PromptShape::any()),
            prompt_after_line: false,
            echo: Echo::default(),
            echo_line: None,
            prompts: state.shell.prompts,
            prompts_due: 1,
        }
    }

    /// Taken right before a send writes. `submits`: the write ends with Enter, so a
    /// prompt pending now (not on a full screen) gives the shape of the one to come back.
    pub(crate) fn before_send(session: &Session, submits: bool) -> Baseline {
        let state = session.state();
        let prompt = if submits && !state.in_alt_screen() {
            PromptShape::learn(&state.pending())
        } else {
            None
        };
        Baseline {
            line_mark: state.line_end(),
            lines_mark: state.lines_end(),
            output_seq: Some(state.output_seq),
            prompt,
            prompt_after_line: true,
            echo: Echo::default(),
            echo_line: None,
            prompts: state.shell.prompts,
            prompts_due: 1,
        }
    }

    /// `until` does not see the echo of `typed`, what the send writes (only where the
    /// plan has an `until`: no copy of the data is kept otherwise).
    pub(crate) fn typed(mut self, session: &Session, plan: &Plan, typed: &[u8]) -> Baseline {
        let lines = typed.iter().filter(|&&b| b == b'\r' || b == b'\n').count();
        self.prompts_due = u64::try_from(lines).unwrap_or(u64::MAX).max(1);
        let state = session.state();
        // Only a line the send completes is an echo line: its end comes with the echo.
        let learns = lines > 0 && !state.in_alt_screen();
        if learns || plan.until.is_some() {
            let echo = Echo::of(typed, state.lines_end(), &state.pending());
            if learns {
                self.echo_line = EchoLine::of(&echo);
            }
            if plan.until.is_some() {
                self.echo = echo;
            }
        }
        drop(state);
        self
    }

    /// Taken when a tail starts to wait: nothing is written, so the unread lines and the
    /// pending line as it is count as new for `until`.
    pub(crate) fn unread(session: &Session) -> Baseline {
        let state = session.state();
        Baseline {
            line_mark: state.read_cursor(),
            lines_mark: state.lines_end(),
            output_seq: None,
            prompt: None,
            prompt_after_line: false,
            echo: Echo::default(),
            echo_line: None,
            prompts: state.shell.prompts,
            prompts_due: 1,
        }
    }
}

/// Waits until the session's output settled according to `plan`: the driver of
/// [`Settler`]. It only gathers what the decision needs (the session's state, a look at
/// the foreground group when asked for) and sleeps as the decision says.
pub(crate) async fn settle(
    session: &Session,
    plan: &Plan,
    mut base: Baseline,
    mut probe: GroupProbe,
    cancel: Option<&CancellationToken>,
) -> Result<SettleReason> {
    if !plan.waits() {
        return Ok(SettleReason::None);
    }
    let mut changes = session.subscribe();
    let mut settler = Settler::new(plan, session.input_wait_supported, Instant::now());
    let mut checked = base.line_mark;
    let mut echo = std::mem::take(&mut base.echo);
    let never = CancellationToken::new();
    let cancel = cancel.unwrap_or(&never);
    // Made at the first fine sleep; without it the driver falls back to ticks.
    let mut fine_timer: Option<std::io::Result<FineTimer>> = None;
    loop {
        let changed = changes.has_changed().unwrap_or(false);
        changes.borrow_and_update();
        let now = Instant::now();
        let mut seen = {
            let mut state = session.state();
            // The echo line, once complete, teaches the prompt before the echo (once).
            if let Some(echo_line) = &base.echo_line
                && let Some(line) = state.line_text(echo_line.line)
            {
                let line = line.to_owned();
                state
                    .prompts
                    .learn_from_echo(&line, echo_line.column, &echo_line.typed);
                base.echo_line = None;
            }
            let matched = plan.until.as_ref().is_some_and(|until| {
                // Lines are looked at without the echo of what the send typed, once each
                // (the echo expected next advances over them); the rows still open and
                // the pending line each time, with a copy of what is expected: the
                // program may redraw them until they are read.
                let fixed = (checked.max(state.line_begin())..)
                    .zip(state.fixed_lines_from(checked))
                    .any(|(n, l)| until.is_match(&echo.strip(n, l)));
                let mut ahead = echo.clone();
                let open = (checked.max(state.line_end())..)
                    .zip(state.open_rows_from(checked))
                    .any(|(n, l)| until.is_match(&ahead.strip(n, l)));
                let pending = base.output_seq != Some(state.output_seq)
                    && until.is_match(&ahead.strip_pending(state.lines_end(), &state.pending()));
                checked = state.line_end();
                fixed || open || pending
            });
            // A full screen has no prompt line: quiet ends the settle there.
            settler.prompt_known = base.prompt.is_some() && !state.in_alt_screen();
            // The prompt has come back: a pending line of its shape, or exactly one the
            // session's programs showed before, after the command's output (a line
            // completed since a send: its echo at least, which may still be one of the
            // window's open rows, not yet a numbered line).
            let (prompt, prompt_learned) = if settler.wants_prompt()
                && base.output_seq != Some(state.output_seq)
                && (!base.prompt_after_line || state.lines_end() > base.lines_mark)
            {
                let pending = state.pending();
                let learned = state.prompts.knows(&pending);
                let shaped = base
                    .prompt
                    .as_ref()
                    .is_some_and(|shape| shape.matches(&pending));
                (learned || shaped, learned)
            } else {
                (false, false)
            };
            Seen {
                now,
                changed,
                output_seq: state.output_seq,
                last_output: state.last_output,
                exit: state.exit.map(|_| state.eof),
                matched,
                prompt,
                prompt_learned,
                shell_prompt: state.shell.prompts >= base.prompts.saturating_add(base.prompts_due),
                group: None,
                last_write: None,
            }
        };
        if let Some(lookup) = settler.wants_look(&seen) {
            let group = look(session, &mut probe, lookup);
            crate::timeline::mark(match group {
                GroupLook::Input { .. } => "look.input",
                _ => "look",
            });
            seen.group = Some(group);
            seen.last_write = session.last_write().map(|mark| mark.at);
        }
        let wake = match settler.step(&seen) {
            Next::Done(reason) => return Ok(reason),
            Next::Wait(wake) => wake,
        };
        if wake.spin {
            // Sample closely right after output: the program usually goes back to its
            // read within microseconds, and the timer cannot wait less than 1 ms. The
            // thread also yields its CPU, so that the program it watches runs first when
            // the two share a core.
            std::thread::yield_now();
            tokio::select! {
                () = tokio::task::yield_now() => {}
                () = cancel.cancelled() => return Err(Error::Cancelled),
            }
            continue;
        }
        let fine = wake.fine.and_then(|at| {
            let timer = fine_timer
                .get_or_insert_with(FineTimer::new)
                .as_ref()
                .ok()?;
            Some((timer, at))
        });
        let fine_sleep = async {
            match fine {
                Some((timer, at)) => timer.sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = fine_sleep => {}
            changed = changes.changed(), if wake.on_output => {
                if changed.is_err() {
                    // The session is gone; its state says why on the next round.
                    tokio::time::sleep(TICK).await;
                }
                settler.output_seen(Instant::now());
            }
            () = tokio::time::sleep_until(wake.at.into()) => {}
            () = cancel.cancelled() => return Err(Error::Cancelled),
        }
    }
}

/// One look at the foreground group: what [`Settler`] weighs.
fn look(session: &Session, probe: &mut GroupProbe, lookup: Lookup) -> GroupLook {
    let master = session.master.get_ref();
    let Some(pgrp) = crate::pty::foreground_group(master) else {
        return GroupLook::Working;
    };
    let members = session.group.members(pgrp, lookup);
    let Some(GroupSample { verdict, runs }) = probe.sample(&members) else {
        // The members we knew are gone: look again next time.
        session.group.members(pgrp, Lookup::All);
        return GroupLook::Working;
    };
    match verdict {
        Verdict::Working => GroupLook::Working,
        Verdict::CannotTell => GroupLook::CannotTell,
        Verdict::Remote => GroupLook::Remote,
        Verdict::Soon(within) => GroupLook::Soon(within),
        // A sleep between two frames counts only on a full screen: a loop that prints
        // lines between its sleeps (a shell loop, a progress bar) is work.
        Verdict::Sleeps(_) if crate::pty::output_unread(master) => GroupLook::Working,
        Verdict::Sleeps(within) if session.state().in_alt_screen() => GroupLook::Sleeps {
            within,
            unread: crate::pty::input_unread(master) == Some(true),
        },
        Verdict::Sleeps(_) => GroupLook::Working,
        // Output unread by the service, or input unread by the program (not scheduled
        // yet, or not even handed the input): about to run, not waiting.
        Verdict::Input | Verdict::Timed
            if crate::pty::output_unread(master)
                || crate::pty::input_unread(master) == Some(true) =>
        {
            GroupLook::Working
        }
        Verdict::Input | Verdict::Timed => GroupLook::Input {
            runs,
            ran_since_write: session
                .last_write()
                .is_none_or(|mark| mark.group != Some((pgrp, runs))),
            timed: verdict == Verdict::Timed,
        },
    }
}
