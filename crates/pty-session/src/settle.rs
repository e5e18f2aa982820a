//! Settling: deciding when an open or a send returns (docs/tools.md, "Settling").
//!
//! A settle waits on the session's change notifications and on short timers, and ends at
//! the first of exit, input wait, match, quiet and timeout. Input wait is sampled from
//! `/proc` only while a settle runs: the foreground group's tasks all asleep, one of them
//! in an input syscall, nothing unread on the master, no new output, and proof that the
//! program has seen what was written (it ran since, or nothing woke it for a while). The
//! state must hold before it counts, because one look at `/proc` reads the tasks one after
//! another, and a task can wake and sleep again between looks: for [`CONFIRM_STILL`] if no
//! task of the group ran in between (their `schedstat` run counts unchanged), otherwise for
//! [`CONFIRM`]. Sampling is close (yielding between looks) right after a change, every
//! [`FINE`] for a while after that, then every [`TICK`].

use std::time::{Duration, Instant};

use regex::Regex;
use tokio_util::sync::CancellationToken;

use crate::procfs::{self, GroupProbe, GroupSample};
use crate::request::{SettleOptions, limits};
use crate::session::Session;
use crate::timer::FineTimer;
use crate::{Error, Result, Settle, SettleReason};

/// How long input wait must hold, with no output and no task of the group run, before a
/// settle ends on it.
const CONFIRM_STILL: Duration = Duration::from_micros(100);
/// How long input wait must hold, with no output, when tasks ran meanwhile (a runtime's
/// helper threads, such as node's, wake and sleep again while the main thread waits).
const CONFIRM: Duration = Duration::from_micros(300);
/// After output, how long to sample closely (by yielding) before falling back to ticks.
const CLOSE_WATCH: Duration = Duration::from_millis(3);
/// The longest the close watch spins while output keeps coming: a program that has
/// written without a pause this long produces in bulk, and spinning beside it would take a
/// core from it and from the drain; it is sampled every [`FINE`] instead until it pauses.
const SPIN_LIMIT: Duration = Duration::from_millis(10);
/// After the close watch, how long to go on sampling finely: a program that is still
/// starting (an exec takes a millisecond or more on a busy VM) or answering usually
/// reaches its read within this.
const FINE_WATCH: Duration = Duration::from_millis(50);
/// The sampling period in the fine watch (tokio's timer cannot sleep less than 1 ms).
const FINE: Duration = Duration::from_micros(200);
/// The sampling period otherwise.
const TICK: Duration = Duration::from_millis(1);
/// If nothing woke the program this long after a write, it is not going to read it now
/// (a partial line in canonical mode, say): input wait may count without proof of a read.
/// Generous, because under load the kernel's tty worker can take tens of milliseconds to
/// hand written bytes to the program (seen with a load average of 25 on 2 cores).
const NO_WAKE: Duration = Duration::from_millis(150);
/// After the exit report, how long output must be quiet when a leftover process still
/// holds the terminal.
const EXIT_DRAIN: Duration = Duration::from_millis(20);
/// How often the members of the foreground group are looked up again.
const RESCAN: Duration = Duration::from_millis(50);

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
        let timeout = crate::request::timeout(options.timeout_ms)?;
        let quiet_ms = options.quiet_ms.unwrap_or(limits::DEFAULT_QUIET_MS);
        if quiet_ms == 0 || quiet_ms > limits::MAX_TIMEOUT_MS {
            return Err(Error::invalid(
                "quiet_ms",
                format!(
                    "{quiet_ms} is out of range; give 1..={}",
                    limits::MAX_TIMEOUT_MS
                ),
            ));
        }
        let until =
            match &options.until {
                None => None,
                Some(pattern) => Some(Regex::new(pattern).map_err(|err| {
                    Error::invalid("until", format!("is not a valid regex: {err}"))
                })?),
            };
        Ok(Plan {
            mode: options.settle,
            until,
            quiet: Duration::from_millis(quiet_ms),
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
    /// `None` for a tail: the pending line as it is counts for `until`.
    output_seq: Option<u64>,
}

impl Baseline {
    /// Taken right before a send writes (and for a new session, at the start).
    pub(crate) fn now(session: &Session) -> Baseline {
        let state = session.state();
        Baseline {
            line_mark: state.scrollback.line_end(),
            output_seq: Some(state.output_seq),
        }
    }

    /// Taken when a tail starts to wait: nothing is written, so the unread lines and the
    /// pending line as it is count as new for `until`.
    pub(crate) fn unread(session: &Session) -> Baseline {
        Baseline {
            line_mark: session.state().scrollback.cursor(),
            output_seq: None,
        }
    }
}

/// Waits until the session's output settled according to `plan`.
pub(crate) async fn settle(
    session: &Session,
    plan: &Plan,
    base: Baseline,
    probe: GroupProbe,
    cancel: Option<&CancellationToken>,
) -> Result<SettleReason> {
    if !plan.waits() {
        return Ok(SettleReason::None);
    }
    let mut changes = session.subscribe();
    let input_wait = plan.mode == Settle::Auto && session.input_wait_supported;
    let quiet_ends = plan.mode == Settle::Quiet || !input_wait;
    let mut watcher = InputWatcher {
        probe,
        candidate: None,
        scanned: None,
    };
    let mut checked = base.line_mark;
    let never = CancellationToken::new();
    let cancel = cancel.unwrap_or(&never);
    let mut last_change = Instant::now();
    // Since when the close watch has spun without a pause of CLOSE_WATCH in the output.
    let mut spinning_since: Option<Instant> = None;
    // Made at the first fine sleep; without it the watch falls back to ticks.
    let mut fine_timer: Option<std::io::Result<FineTimer>> = None;
    loop {
        if changes.has_changed().unwrap_or(false) {
            last_change = Instant::now();
        }
        changes.borrow_and_update();
        let now = Instant::now();
        let (seq, last_output, exited) = {
            let state = session.state();
            if state.exit.is_some()
                && (state.eof || now.duration_since(state.last_output) >= EXIT_DRAIN)
            {
                return Ok(SettleReason::Exit);
            }
            if let Some(until) = &plan.until {
                let matched = state
                    .scrollback
                    .lines_from(checked)
                    .any(|l| until.is_match(l))
                    || (base.output_seq != Some(state.output_seq)
                        && until.is_match(&state.renderer.pending()));
                if matched {
                    return Ok(SettleReason::Match);
                }
                checked = state.scrollback.line_end();
            }
            (state.output_seq, state.last_output, state.exit.is_some())
        };
        if input_wait && !exited && watcher.settled(session, seq, now) {
            return Ok(SettleReason::Input);
        }
        let quiet_at = last_output.max(plan.start) + plan.quiet;
        if quiet_ends && now >= quiet_at {
            return Ok(SettleReason::Quiet);
        }
        if now >= plan.deadline {
            return Ok(SettleReason::Timeout);
        }

        let mut wake = plan.deadline;
        let mut fine_wake = None;
        // Output keeps coming and the close watch has spun its fill: look every FINE,
        // not at every read of the output.
        let mut bulk = false;
        if quiet_ends {
            wake = wake.min(quiet_at);
        }
        if exited {
            wake = wake.min(last_output + EXIT_DRAIN);
        }
        if input_wait && !exited {
            let close = now.duration_since(last_change) < CLOSE_WATCH;
            if !close {
                spinning_since = None;
            }
            let spun = now.duration_since(*spinning_since.get_or_insert(now));
            if (close && spun < SPIN_LIMIT) || watcher.confirming() {
                // Sample closely right after output: the program usually goes back to
                // its read within microseconds, and the timer cannot wait less than 1 ms.
                // The thread also yields its CPU, so that the program it watches runs
                // first when the two share a core.
                std::thread::yield_now();
                tokio::select! {
                    () = tokio::task::yield_now() => {}
                    () = cancel.cancelled() => return Err(Error::Cancelled),
                }
                continue;
            }
            // Output for a while without a pause (a bulk producer), or some time after
            // the last: look every FINE.
            bulk = close;
            if now.duration_since(last_change) < FINE_WATCH {
                fine_wake = Some(wake.min(now + FINE));
            }
            wake = wake.min(now + TICK);
        }
        let fine = fine_wake.and_then(|at| {
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
            changed = changes.changed(), if !bulk => {
                if changed.is_err() {
                    // The session is gone; its state says why on the next round.
                    tokio::time::sleep(TICK).await;
                }
                last_change = Instant::now();
            }
            () = tokio::time::sleep_until(wake.into()) => {}
            () = cancel.cancelled() => return Err(Error::Cancelled),
        }
    }
}

/// Samples the foreground group during one settle.
struct InputWatcher {
    /// The group's open `/proc` records, closed when the settle ends.
    probe: GroupProbe,
    /// Since when the group has waited for input, and the output count and the group's
    /// run count then.
    candidate: Option<(Instant, u64, u64)>,
    /// When this settle last looked the group's members up.
    scanned: Option<Instant>,
}

impl InputWatcher {
    fn confirming(&self) -> bool {
        self.candidate.is_some()
    }

    fn settled(&mut self, session: &Session, seq: u64, now: Instant) -> bool {
        let waiting = self.waiting(session, now);
        match (waiting, self.candidate) {
            (None, _) => {
                self.candidate = None;
                false
            }
            (Some(runs), Some((since, at_seq, at_runs))) if at_seq == seq => {
                let held = now.duration_since(since);
                held >= CONFIRM || (held >= CONFIRM_STILL && runs == at_runs)
            }
            (Some(runs), _) => {
                self.candidate = Some((now, seq, runs));
                false
            }
        }
    }

    /// The group's run count if it waits for input now.
    fn waiting(&mut self, session: &Session, now: Instant) -> Option<u64> {
        let master = session.master.get_ref();
        let pgrp = crate::pty::foreground_group(master)?;
        // Members may join the group while it runs (a pipeline, a child of the shell's
        // job), so a settle looks again now and then.
        let scanned = *self.scanned.get_or_insert(now);
        let rescan = now.duration_since(scanned) >= RESCAN;
        if rescan {
            self.scanned = Some(now);
        }
        let members = session.group_members(pgrp, rescan);
        let Some(GroupSample {
            waiting_for_input,
            runs,
        }) = self.probe.sample(&members)
        else {
            // The members we knew are gone: look again next time.
            session.group_members(pgrp, true);
            return None;
        };
        if !waiting_for_input || crate::pty::output_unread(master) {
            return None;
        }
        // A program asleep in a read with input waiting for it has not been scheduled
        // yet, or has not even been handed the input: it is about to run, not waiting.
        if crate::pty::input_unread(master) == Some(true) {
            return None;
        }
        // Input written to the terminal must have reached the program: it ran since, or
        // nothing woke it for a while. A session nothing was written to needs no proof.
        let seen = session.last_write().is_none_or(|mark| {
            mark.group != Some((pgrp, runs)) || now.duration_since(mark.at) >= NO_WAKE
        });
        seen.then_some(runs)
    }
}

impl Session {
    /// The members of process group `pgrp`, from a cache that is refreshed when the group
    /// changes or when `rescan` asks (a member vanished, or a settle wants a fresh look).
    /// A scan reads every process's `stat`, so a send must not pay for one each time.
    pub(crate) fn group_members(&self, pgrp: i32, rescan: bool) -> Vec<i32> {
        let mut cache = self.group_cache.lock().unwrap_or_else(|p| p.into_inner());
        let stale = cache.as_ref().is_none_or(|(cached, _)| *cached != pgrp);
        if stale || rescan {
            *cache = Some((pgrp, procfs::group_members(pgrp)));
        }
        cache
            .as_ref()
            .map(|(_, members)| members.clone())
            .unwrap_or_default()
    }
}
