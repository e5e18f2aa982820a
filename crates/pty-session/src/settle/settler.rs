//! The settle's decision, [`Settler`]: a pure state machine, shown at each step what the
//! driver saw and answering "done, because …" or "look again then". No clock of its own,
//! no I/O; its tests play scripted timelines.

use std::time::{Duration, Instant};

use super::Plan;
use crate::procfs::Lookup;
use crate::{Settle, SettleReason};

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
pub(super) const TICK: Duration = Duration::from_millis(1);
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
/// How late a task's timer may fire after its timeout (the kernel's timer slack is 50 µs
/// for ordinary tasks), with a margin.
const TIMER_SLACK: Duration = Duration::from_millis(1);
/// Looks at the group further apart than this (and than the timers seen) leave the
/// settle blind to what it waited on between them.
const BLIND_GAP: Duration = Duration::from_millis(10);
/// How long a prompt must stay unchanged, with no output, before a remote session's
/// settle ends on it: a shell prints its prompt in one write, and a line that goes on
/// after a pause this long was not a prompt.
const PROMPT_HOLD: Duration = Duration::from_millis(50);
/// The hold for a pending line that is exactly a prompt the session's programs showed
/// before (learned from an echo line): not a guess at a shape but a text known to be
/// where a program took input. The hold is left for a prompt that arrives in pieces:
/// the remote program's writes that the server read apart come one right after the other
/// over one TCP stream and the local client relays each as it comes, so they arrive
/// apart by the scheduling of that client and of the drain: microseconds, a few
/// milliseconds on a busy machine. Ten milliseconds is several times that, and costs a
/// send 10 ms where a prompt of mere shape costs [`PROMPT_HOLD`].
const PROMPT_HOLD_LEARNED: Duration = Duration::from_millis(10);

/// The shortest refresh period a loop of waits with a timer counts as a refresh loop at:
/// shorter timers are a program's own pauses (node's REPL waits about 15 ms after each
/// evaluation), not frames a person watches.
const REFRESH_MIN: Duration = Duration::from_millis(50);

/// Whether two waits with these timers, one after the other with output between, are the
/// same refresh loop: both at least [`REFRESH_MIN`] and neither more than twice the other.
fn refreshes(before: Duration, now: Duration) -> bool {
    before >= REFRESH_MIN && now >= REFRESH_MIN && before <= now * 2 && now <= before * 2
}

/// What the foreground group was doing at a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GroupLook {
    /// It works (or is gone, or about to read what is waiting for it).
    Working,
    /// Only quiet can tell: it waits on the terminal and on another member that works,
    /// or its records cannot be read.
    CannotTell,
    /// It waits on the terminal and on an outside source at once (the `ssh` client): the
    /// prompt coming back tells, where its shape is known; otherwise quiet.
    Remote,
    /// It waits for the person, but a wait on the terminal has a timer that fires within
    /// this time, and the program acts then by itself.
    Soon(Duration),
    /// Nothing waits on the terminal: the group sleeps, at most this long, with a full
    /// screen on (`watch` between two frames). `unread`: input waits in the terminal.
    Sleeps { within: Duration, unread: bool },
    /// It waits for the person at the terminal.
    Input {
        /// Its tasks' summed run counts: equal at two looks, none of them ran between.
        runs: u64,
        /// It ran since the last write into the terminal (or nothing was written), so it
        /// has seen that write.
        ran_since_write: bool,
        /// Every wait on the terminal has a timer (longer than a short one): the program
        /// may act by itself when it fires, so a caller waiting for `until` waits on.
        timed: bool,
    },
}

/// What the driver saw at one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    pub(crate) now: Instant,
    /// The session's state changed since the last step.
    pub(crate) changed: bool,
    /// Counts the reads that brought output.
    pub(crate) output_seq: u64,
    /// When output last arrived (or the session started).
    pub(crate) last_output: Instant,
    /// The command exited; `true` once no more output can come.
    pub(crate) exit: Option<bool>,
    /// A new line or the pending line matched `until`.
    pub(crate) matched: bool,
    /// The pending line is a prompt of the settle's shape that came after the command's
    /// output (looked at only when [`Settler::wants_prompt`]).
    pub(crate) prompt: bool,
    /// That prompt is exactly one the session's programs showed before.
    pub(crate) prompt_learned: bool,
    /// The shell drew its prompt (its mark) since the settle began: its command ended.
    pub(crate) shell_prompt: bool,
    /// The look at the foreground group, when [`Settler::wants_look`] asked for one.
    pub(crate) group: Option<GroupLook>,
    /// When the last write into the terminal completed (with a look).
    pub(crate) last_write: Option<Instant>,
}

/// What the driver does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    Done(SettleReason),
    Wait(Wake),
}

/// How the driver waits before the next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wake {
    /// Step again at once, after yielding the CPU (the close watch).
    pub(crate) spin: bool,
    /// Step again at this instant (the fine timer), if sooner than `at`.
    pub(crate) fine: Option<Instant>,
    /// Step again at the latest then.
    pub(crate) at: Instant,
    /// Step again as soon as the session's state changes.
    pub(crate) on_output: bool,
}

/// The settle's decision, a pure function of what it is shown: no clock of its own, no
/// I/O. Each [`step`](Settler::step) is given what the driver saw and says whether the
/// settle is done (and why) or when to look again.
pub(crate) struct Settler {
    input_wait: bool,
    /// The shell's prompt mark ends the settle ([`Seen::shell_prompt`]): `settle: auto`.
    shell_prompts: bool,
    /// Quiet ends the settle whatever the group does (`settle: quiet`, or no input wait
    /// on this machine).
    quiet_always: bool,
    quiet: Duration,
    /// The caller said what it waits for (`until`): where input wait cannot be told, the
    /// settle waits for that rather than ending on quiet.
    until: bool,
    start: Instant,
    deadline: Instant,
    /// The latest two looks said only quiet can tell.
    cannot_tell: bool,
    /// The latest two looks said the group waits on the terminal and an outside source.
    remote: bool,
    /// The look before this step's: a verdict that lets quiet end the settle counts once
    /// two looks in a row give it, so that one look that raced the group (a process
    /// ending between two reads of its records) cannot end a settle early.
    last_look: Option<GroupLook>,
    /// When the group was last looked at.
    looked_at: Option<Instant>,
    /// A prompt shape is known for this settle: where the group is remote, the prompt
    /// coming back ends it, not quiet.
    pub(crate) prompt_known: bool,
    /// When the short timer of the wait last seen has surely fired (see
    /// [`GroupLook::Soon`]): a wait with a short timer seen after that is a new one.
    soon_fires: Option<Instant>,
    /// When the wait whose timer `soon_fires` tells was seen: where a cycle of a refresh
    /// loop starts.
    soon_seen: Option<Instant>,
    /// The longest short timer seen since the output count was `.1`: only a loop of
    /// timers well inside the quiet period counts as polling.
    soon_longest: (Duration, u64),
    /// Since when the group has waited for input, and the output count and run count then.
    candidate: Option<(Instant, u64, u64)>,
    /// When the state last changed.
    last_change: Instant,
    /// Since when the close watch has spun without a pause of [`CLOSE_WATCH`].
    spinning_since: Option<Instant>,
    /// When the members of the group were last looked up.
    scanned: Option<Instant>,
}

impl Settler {
    /// A decision for `plan`, starting at `now`; `readable`: the group's waits can be
    /// read on this machine.
    pub(crate) fn new(plan: &Plan, readable: bool, now: Instant) -> Settler {
        let input_wait = readable && plan.mode == Settle::Auto;
        Settler {
            input_wait,
            shell_prompts: plan.mode == Settle::Auto,
            quiet_always: plan.mode == Settle::Quiet || !input_wait,
            quiet: plan.quiet,
            until: plan.until.is_some(),
            start: plan.start,
            deadline: plan.deadline,
            cannot_tell: false,
            remote: false,
            last_look: None,
            looked_at: None,
            prompt_known: false,
            soon_fires: None,
            soon_seen: None,
            soon_longest: (Duration::ZERO, 0),
            candidate: None,
            last_change: now,
            spinning_since: None,
            scanned: None,
        }
    }

    /// Whether this step needs a look at the group, given what else was seen, and how
    /// freshly its members are to be looked up: all of them every [`RESCAN`], and the
    /// processes started since before input wait is confirmed (one that joined the group
    /// since the last lookup would be missed).
    pub(crate) fn wants_look(&mut self, seen: &Seen) -> Option<Lookup> {
        if !self.input_wait || seen.exit.is_some() || seen.matched {
            return None;
        }
        let due = self
            .scanned
            .is_none_or(|at| seen.now.duration_since(at) >= RESCAN);
        if due {
            self.scanned = Some(seen.now);
            Some(Lookup::All)
        } else if self.candidate.is_some() {
            Some(Lookup::New)
        } else {
            Some(Lookup::Known)
        }
    }

    /// Whether this step needs to know if the prompt came back ([`Seen::prompt`]): the
    /// group waits on the terminal and an outside source, and a shape is known.
    pub(crate) fn wants_prompt(&self) -> bool {
        self.remote && self.prompt_rules()
    }

    /// Whether the prompt's return ends this settle where the group is remote: a shape is
    /// known and the caller gave no `until` (which wins).
    fn prompt_rules(&self) -> bool {
        self.prompt_known && !self.until && !self.quiet_always
    }

    /// The state changed at `now` (seen by the driver while it slept).
    pub(crate) fn output_seen(&mut self, now: Instant) {
        self.last_change = now;
    }

    /// Decides, from what was seen now.
    pub(crate) fn step(&mut self, seen: &Seen) -> Next {
        let now = seen.now;
        if seen.changed {
            self.last_change = now;
        }
        if let Some(eof) = seen.exit
            && (eof || now.duration_since(seen.last_output) >= EXIT_DRAIN)
        {
            return Next::Done(SettleReason::Exit);
        }
        if seen.matched {
            return Next::Done(SettleReason::Match);
        }
        // The shell said its prompt is back: the command ended, the shell waits for the
        // next one. Only the person can wake it, so this holds with `until` too.
        if seen.shell_prompt && self.shell_prompts {
            return Next::Done(SettleReason::Prompt);
        }
        let exited = seen.exit.is_some();
        let quiet_at = seen.last_output.max(self.start) + self.quiet;
        if let Some(group) = seen.group {
            let twice = |look: GroupLook| group == look && self.last_look == Some(look);
            self.cannot_tell = twice(GroupLook::CannotTell);
            self.remote = twice(GroupLook::Remote);
            self.last_look = Some(group);
            let since_last_look = self.looked_at.map(|at| now.duration_since(at));
            self.looked_at = Some(now);
            let timer = match group {
                GroupLook::Soon(within) => Some((within, None)),
                GroupLook::Sleeps { within, unread } => Some((within, Some(unread))),
                _ => None,
            };
            if let Some((within, sleeps)) = timer {
                // Not input wait until the timer fired. A short-timer wait seen after the
                // last one surely fired is a new one: a program that loops on timers of
                // at most half the quiet period and has printed nothing for the quiet
                // period polls, and is quiet. (A longer timer may be an await that wakes
                // a little early and sleeps a millisecond more, as node's does.)
                // Looks further apart than the timers seen (the settle starved of CPU)
                // may have missed a longer wait between them: what was seen before is no
                // evidence of a loop of short timers, and watching starts over.
                let blind = self.soon_longest.0.max(within).max(BLIND_GAP);
                let seen_closely = since_last_look.is_none_or(|gap| gap <= blind);
                // A refresh loop (top's `-d 0.5`): the timer of the wait seen before fired,
                // the program printed (its new frame), and it waits again with a timer
                // like it. It waits for a key between frames: one such cycle seen, it
                // waits for input. (Given `until`, the match is waited for instead.)
                //
                // A full-screen loop that only sleeps between frames (`watch`) reads no
                // key: one cycle of it, the sleep seen before over and another like it
                // begun, is the screen as a person sees it settle, output or not (an
                // unchanged frame prints nothing). Input left unread counts against it only
                // if it came during that cycle: a key written before the cycle began that
                // is still unread is one the loop does not read between frames.
                let cycle = match sleeps {
                    None => self.soon_longest.1 != seen.output_seq,
                    Some(unread) => {
                        !unread
                            || seen
                                .last_write
                                .zip(self.soon_seen)
                                .is_none_or(|(write, from)| write <= from)
                    }
                };
                let repainted = self.soon_fires.is_some_and(|at| now >= at)
                    && cycle
                    && seen_closely
                    && refreshes(self.soon_longest.0, within);
                if repainted && !self.until {
                    return Next::Done(SettleReason::Input);
                }
                if self.soon_longest.1 != seen.output_seq || !seen_closely {
                    self.soon_longest = (Duration::ZERO, seen.output_seq);
                    self.soon_fires = None;
                }
                self.soon_longest.0 = self.soon_longest.0.max(within);
                let fired = self.soon_fires.is_some_and(|at| now >= at);
                let polls = self.soon_longest.0 * 2 <= self.quiet;
                if fired && polls && !self.until && now >= quiet_at {
                    return Next::Done(SettleReason::Quiet);
                }
                if fired || self.soon_fires.is_none() {
                    self.soon_fires = Some(now + within + TIMER_SLACK);
                    self.soon_seen = Some(now);
                }
            }
            if self.input_confirmed(seen, group) {
                return Next::Done(SettleReason::Input);
            }
        }
        let prompt_waits = self.remote && self.prompt_rules();
        let hold = if seen.prompt_learned {
            PROMPT_HOLD_LEARNED
        } else {
            PROMPT_HOLD
        };
        let prompt_at = seen.last_output + hold;
        if prompt_waits && seen.prompt && now >= prompt_at {
            return Next::Done(SettleReason::Prompt);
        }
        let quiet_ends = self.quiet_always
            || (self.cannot_tell && !self.until)
            || (self.remote && !self.until && !prompt_waits);
        if quiet_ends && now >= quiet_at {
            return Next::Done(SettleReason::Quiet);
        }
        if now >= self.deadline {
            return Next::Done(SettleReason::Timeout);
        }

        let mut at = self.deadline;
        if quiet_ends {
            at = at.min(quiet_at);
        }
        if exited {
            at = at.min(seen.last_output + EXIT_DRAIN);
        }
        if prompt_waits && seen.prompt {
            at = at.min(prompt_at);
        }
        let mut wake = Wake {
            spin: false,
            fine: None,
            at,
            on_output: true,
        };
        if self.input_wait && !exited {
            let close = now.duration_since(self.last_change) < CLOSE_WATCH;
            if !close {
                self.spinning_since = None;
            }
            let spun = now.duration_since(*self.spinning_since.get_or_insert(now));
            if (close && spun < SPIN_LIMIT) || self.candidate.is_some() {
                wake.spin = true;
                return Next::Wait(wake);
            }
            // Output for a while without a pause (a bulk producer): look every FINE, not
            // at every read of the output.
            wake.on_output = !close;
            if now.duration_since(self.last_change) < FINE_WATCH {
                wake.fine = Some(at.min(now + FINE));
            }
            wake.at = at.min(now + TICK);
        }
        Next::Wait(wake)
    }

    /// Whether input wait has held long enough, with `group` the look of this step.
    fn input_confirmed(&mut self, seen: &Seen, group: GroupLook) -> bool {
        let GroupLook::Input {
            runs,
            ran_since_write,
            timed,
        } = group
        else {
            self.candidate = None;
            return false;
        };
        // Given `until`, only a program that nothing but the person can wake ends the
        // call by input: one whose wait has a timer may still print the match.
        if timed && self.until {
            self.candidate = None;
            return false;
        }
        // Input written to the terminal must have reached the program: it ran since, or
        // nothing woke it for a while.
        let saw_write = ran_since_write
            || seen
                .last_write
                .is_none_or(|at| seen.now.duration_since(at) >= NO_WAKE);
        if !saw_write {
            self.candidate = None;
            return false;
        }
        match self.candidate {
            Some((since, at_seq, at_runs)) if at_seq == seen.output_seq => {
                let held = seen.now.duration_since(since);
                held >= CONFIRM || (held >= CONFIRM_STILL && runs == at_runs)
            }
            _ => {
                self.candidate = Some((seen.now, seen.output_seq, runs));
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The decision on scripted timelines: no process, no clock. A small simulator plays
    //! the driver: it shows the settler the world at each step and moves time as the
    //! settler asks (a spin is taken to last 20 µs).

    use super::*;
    use crate::request::SettleOptions;

    /// What the scripted program does, as functions of the time since the call began.
    struct World {
        /// When output arrived.
        outputs: Vec<Duration>,
        /// When the command exited, and whether its output was then all read.
        exit: Option<(Duration, bool)>,
        /// When `until` matched.
        matched: Option<Duration>,
        /// When something was last written into the terminal.
        write: Option<Duration>,
        /// A prompt shape is known for the settle, and since when the prompt is back.
        prompt_known: bool,
        prompt: Option<Duration>,
        /// Spans in which the pending line looked like the prompt but went on after.
        pieces: Vec<(Duration, Duration)>,
        /// The prompt (and each piece) is exactly one the session learned.
        prompt_learned: bool,
        /// The foreground group at a look.
        group: Box<dyn Fn(Duration) -> GroupLook>,
    }

    impl World {
        fn new(group: impl Fn(Duration) -> GroupLook + 'static) -> World {
            World {
                outputs: Vec::new(),
                exit: None,
                matched: None,
                write: None,
                prompt_known: false,
                prompt: None,
                pieces: Vec::new(),
                prompt_learned: false,
                group: Box::new(group),
            }
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// Waits for the person, having seen the write.
    fn input(_: Duration) -> GroupLook {
        GroupLook::Input {
            runs: 7,
            ran_since_write: true,
            timed: false,
        }
    }

    fn options(mode: Settle, quiet_ms: u64, timeout_ms: u64) -> SettleOptions {
        SettleOptions {
            settle: mode,
            quiet: Some(Duration::from_millis(quiet_ms)),
            timeout: Some(Duration::from_millis(timeout_ms)),
            ..SettleOptions::default()
        }
    }

    /// Plays `world` against a settle with `options` (input wait readable); how it ended,
    /// when, and how many looks at the group it took.
    #[track_caller]
    fn play(world: &World, options: SettleOptions) -> (SettleReason, Duration, usize) {
        let t0 = Instant::now();
        let plan = Plan::new(&options, t0).unwrap();
        let mut settler = Settler::new(&plan, true, t0);
        settler.prompt_known = world.prompt_known;
        let mut t = Duration::ZERO;
        let mut seen_outputs = 0;
        let mut looks = 0;
        for _ in 0..1_000_000 {
            let arrived = world.outputs.iter().filter(|&&at| at <= t).count();
            let last_output = world.outputs[..arrived].last().copied().unwrap_or_default();
            let prompt = settler.wants_prompt()
                && (world.prompt.is_some_and(|at| at <= t)
                    || world.pieces.iter().any(|&(from, to)| from <= t && t < to));
            let mut seen = Seen {
                now: t0 + t,
                changed: arrived != seen_outputs,
                output_seq: arrived as u64,
                last_output: t0 + last_output,
                exit: world.exit.filter(|&(at, _)| at <= t).map(|(_, eof)| eof),
                matched: world.matched.is_some_and(|at| at <= t),
                prompt,
                prompt_learned: prompt && world.prompt_learned,
                shell_prompt: false,
                group: None,
                last_write: None,
            };
            seen_outputs = arrived;
            if settler.wants_look(&seen).is_some() {
                looks += 1;
                seen.group = Some((world.group)(t));
                seen.last_write = world.write.map(|at| t0 + at);
            }
            let wake = match settler.step(&seen) {
                Next::Done(reason) => return (reason, t, looks),
                Next::Wait(wake) => wake,
            };
            let next = if wake.spin {
                t + us(20)
            } else {
                let mut at = wake.at.min(wake.fine.unwrap_or(wake.at)) - t0;
                if wake.on_output
                    && let Some(&output) = world.outputs.iter().find(|&&o| o > t && o < at)
                {
                    settler.output_seen(t0 + output);
                    at = output;
                }
                at
            };
            assert!(next > t || wake.spin, "time must move: {wake:?} at {t:?}");
            t = next.max(t + us(1));
        }
        panic!("the settle never ended");
    }

    /// A group that works until `until`, then waits for the person.
    fn working_until(until: Duration) -> impl Fn(Duration) -> GroupLook {
        move |t| {
            if t < until {
                GroupLook::Working
            } else {
                input(t)
            }
        }
    }

    #[test]
    fn a_repl_settles_by_input_within_a_millisecond_of_its_prompt() {
        let mut world = World::new(working_until(ms(2)));
        world.outputs = vec![ms(1), ms(2)];
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Input);
        assert!(at >= ms(2) + CONFIRM_STILL && at < ms(3), "{at:?}");
    }

    #[test]
    fn work_on_a_pipe_before_the_prompt_is_waited_out() {
        // git add -p: git reads its child's pipe for 40 ms (working), then prints the hunk
        // and its prompt and reads the terminal.
        let mut world = World::new(working_until(ms(41)));
        world.outputs = vec![ms(40), ms(41)];
        settles_by_input_after(&world, ms(41));
    }

    #[test]
    fn a_busy_member_keeps_the_settle_to_its_timeout() {
        // `yes > /dev/null & exec cat`: cat reads the terminal, yes never stops.
        let world = World::new(|_| GroupLook::Working);
        let (reason, at, _) = play(&world, options(Settle::Auto, 300, 2500));
        assert_eq!((reason, at), (SettleReason::Timeout, ms(2500)));
    }

    #[test]
    fn quiet_ends_a_settle_where_input_cannot_be_told() {
        // ssh: its client polls the terminal and its socket. `sleep 2; echo done`.
        let mut world = World::new(|_| GroupLook::CannotTell);
        world.outputs = vec![ms(1), ms(2001)];
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Quiet);
        assert!(at >= ms(301) && at < ms(303), "{at:?}");
        // With a longer quiet period the answer comes within the call.
        let (reason, at, _) = play(&world, options(Settle::Auto, 3000, 10_000));
        assert_eq!(reason, SettleReason::Quiet);
        assert!(at >= ms(5001) && at < ms(5003), "{at:?}");
    }

    #[test]
    fn one_look_that_cannot_tell_does_not_end_a_settle_on_quiet() {
        // A shell loop: `echo`, then a `sleep` longer than the quiet period. One look
        // (only one lands in a millisecond of ticks) raced the sleep's exit and could
        // not tell; the looks around it see the group work, then wait for the person.
        let raced = std::rc::Rc::new(std::cell::Cell::new(0));
        let counted = raced.clone();
        let mut world = World::new(move |t| {
            if t >= ms(600) && t < ms(601) {
                counted.set(counted.get() + 1);
                GroupLook::CannotTell
            } else {
                working_until(ms(1200))(t)
            }
        });
        world.outputs = vec![ms(1), ms(601)];
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(raced.get(), 1, "the racing look was taken");
        assert_eq!(reason, SettleReason::Input);
        assert!(at >= ms(1200) && at < ms(1202), "{at:?}");
    }

    #[test]
    fn until_waits_for_its_match_where_input_cannot_be_told() {
        // ssh with `until: "^done"`: quiet at 300 ms does not end it; the match does.
        let mut world = World::new(|_| GroupLook::CannotTell);
        world.outputs = vec![ms(1), ms(2001)];
        world.matched = Some(ms(2001));
        let options = SettleOptions {
            until: Some("^done".into()),
            ..SettleOptions::default()
        };
        let (reason, at, _) = play(&world, options);
        assert_eq!((reason, at), (SettleReason::Match, ms(2001)));
    }

    #[test]
    fn quiet_does_not_end_an_auto_settle_while_input_can_be_told() {
        let mut world = World::new(|_| GroupLook::Working);
        world.outputs = vec![ms(1)];
        let (reason, _, _) = play(&world, options(Settle::Auto, 300, 1000));
        assert_eq!(reason, SettleReason::Timeout);
    }

    #[test]
    fn settle_quiet_ignores_input_wait() {
        let mut world = World::new(input);
        world.outputs = vec![ms(1)];
        let (reason, at, looks) = play(&world, options(Settle::Quiet, 300, 5000));
        assert_eq!((reason, at, looks), (SettleReason::Quiet, ms(301), 0));
    }

    #[test]
    fn input_wait_counts_only_once_it_held() {
        // The group is seen waiting at single looks between bursts of work: a look reads
        // tasks one after another, and a task can wake between them.
        let world = World::new(|t| {
            if t < ms(20) && t.as_micros() % 200 < 40 {
                input(t)
            } else if t < ms(20) {
                GroupLook::Working
            } else {
                input(t)
            }
        });
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Input);
        assert!(at >= ms(20), "{at:?}");
    }

    #[test]
    fn a_group_whose_tasks_ran_between_looks_is_held_longer() {
        let world = World::new(|t| GroupLook::Input {
            runs: t.as_micros() as u64,
            ran_since_write: true,
            timed: false,
        });
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Input);
        assert!(at >= CONFIRM && at < CONFIRM + us(100), "{at:?}");
    }

    #[test]
    fn output_during_the_hold_starts_it_again() {
        let mut world = World::new(input);
        world.outputs = vec![us(50), us(130), us(210)];
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Input);
        assert!(at >= us(210) + CONFIRM_STILL, "{at:?}");
    }

    #[test]
    fn a_write_the_program_has_not_run_since_needs_time() {
        // A partial line in canonical mode wakes nobody: the group never runs.
        let mut world = World::new(|_| GroupLook::Input {
            runs: 7,
            ran_since_write: false,
            timed: false,
        });
        world.write = Some(Duration::ZERO);
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Input);
        assert!(at >= NO_WAKE && at < NO_WAKE + ms(2), "{at:?}");
    }

    /// node awaiting a 3 s timer: it waits on the terminal with a timer of seconds.
    fn awaits(_: Duration) -> GroupLook {
        GroupLook::Input {
            runs: 7,
            ran_since_write: true,
            timed: true,
        }
    }

    #[test]
    fn until_outlasts_a_wait_with_a_timer_and_ends_at_its_match() {
        let mut world = World::new(awaits);
        world.outputs = vec![ms(3000)];
        world.matched = Some(ms(3000));
        let options = SettleOptions {
            until: Some("^4500$".into()),
            timeout: Some(ms(10_000)),
            ..SettleOptions::default()
        };
        let (reason, at, _) = play(&world, options);
        assert_eq!((reason, at), (SettleReason::Match, ms(3000)));
        // Without `until` the same wait is input wait, as before.
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Input);
        assert!(at < ms(1), "{at:?}");
    }

    #[test]
    fn until_still_ends_by_input_where_only_the_person_can_wake_the_program() {
        // `input('name? ')` with an `until` that never comes.
        let world = World::new(input);
        let options = SettleOptions {
            until: Some("never".into()),
            timeout: Some(ms(10_000)),
            ..SettleOptions::default()
        };
        let (reason, at, _) = play(&world, options);
        assert_eq!(reason, SettleReason::Input);
        assert!(at < ms(1), "{at:?}");
        // A timed wait that never prints the match runs to the timeout.
        let world = World::new(awaits);
        let options = SettleOptions {
            until: Some("never".into()),
            timeout: Some(ms(2_000)),
            ..SettleOptions::default()
        };
        let (reason, at, _) = play(&world, options);
        assert_eq!((reason, at), (SettleReason::Timeout, ms(2_000)));
    }

    #[test]
    fn exit_waits_for_the_output_to_drain() {
        let mut world = World::new(|_| GroupLook::Working);
        world.outputs = vec![ms(5)];
        world.exit = Some((ms(10), false));
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Exit);
        assert_eq!(at, ms(5) + EXIT_DRAIN);
        world.exit = Some((ms(10), true));
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!((reason, at), (SettleReason::Exit, ms(10)));
    }

    #[test]
    fn a_match_ends_the_settle_at_once_and_before_input() {
        let mut world = World::new(|_| GroupLook::Working);
        world.outputs = vec![ms(3)];
        world.matched = Some(ms(3));
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!((reason, at), (SettleReason::Match, ms(3)));
    }

    #[test]
    fn looks_thin_out_as_the_program_stays_busy() {
        // One second of work without output: close looks at first, then ticks.
        let world = World::new(|_| GroupLook::Working);
        let (_, _, looks) = play(&world, options(Settle::Auto, 300, 1000));
        let fine = FINE_WATCH.as_micros() / FINE.as_micros();
        assert!(
            looks < 1000 + fine as usize + 200,
            "{looks} looks in a second"
        );
        assert!(looks > 900, "{looks} looks in a second");
    }

    /// A group that waits on the terminal with a short timer, one `(until, timer)` after
    /// the other, then (after its output) for the person.
    fn timers(steps: Vec<(Duration, Duration)>) -> impl Fn(Duration) -> GroupLook {
        move |t| match steps.iter().find(|(until, _)| t < *until) {
            Some(&(_, timer)) => GroupLook::Soon(timer),
            None => input(t),
        }
    }

    /// Plays `world` with the default options; asserts that it settles by input, and
    /// after `last`, its last output.
    #[track_caller]
    fn settles_by_input_after(world: &World, last: Duration) {
        let (reason, at, _) = play(world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Input);
        assert!(at > last, "{at:?}");
    }

    #[test]
    fn a_short_timer_on_the_terminal_is_not_input_wait_until_it_fired() {
        // node, `await` of a 1 s timer: its REPL waits on the terminal with a timeout
        // that ends when the timer fires, then prints the value and its prompt.
        for fires in [ms(1000), ms(300), ms(15)] {
            let mut world = World::new(timers(vec![(fires, fires)]));
            world.outputs = vec![ms(1), fires];
            let (reason, at, _) = play(&world, SettleOptions::default());
            assert_eq!(reason, SettleReason::Input, "{fires:?}");
            assert!(at > fires && at < fires + ms(2), "{fires:?}: {at:?}");
        }
    }

    #[test]
    fn a_short_timer_after_another_is_waited_out_too() {
        // node after the evaluation: a 15 ms timer, then the 980 ms one of the await, and
        // no output until it fires; the default quiet period passes meanwhile.
        let mut world = World::new(timers(vec![(ms(15), ms(15)), (ms(995), ms(980))]));
        world.outputs = vec![ms(1), ms(995)];
        settles_by_input_after(&world, ms(995));
    }

    #[test]
    fn a_timer_that_wakes_early_and_sleeps_again_is_waited_out() {
        // node's event loop wakes a millisecond before its timer is due (its clock counts
        // whole milliseconds) and sleeps once more: no loop, the value comes.
        let steps = vec![(ms(15), ms(15)), (ms(996), ms(980)), (ms(998), ms(1))];
        let mut world = World::new(timers(steps));
        world.outputs = vec![ms(1), ms(998)];
        settles_by_input_after(&world, ms(998));
    }

    #[test]
    fn an_exit_after_a_short_timer_settles_by_exit() {
        // node's `.exit`: a 14 ms timer, its exit, the exit report.
        let mut world = World::new(|t| {
            if t < ms(14) {
                GroupLook::Soon(ms(14))
            } else {
                GroupLook::Working
            }
        });
        world.outputs = vec![ms(1)];
        world.exit = Some((ms(25), true));
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!((reason, at), (SettleReason::Exit, ms(25)));
    }

    #[test]
    fn a_refresh_loop_waits_for_input_after_one_frame() {
        // `top -d 0.5`: a frame, a 500 ms wait on the terminal, a frame, the same wait.
        let world_of = |period: Duration| {
            let mut world = World::new(move |t| {
                // Each frame takes 2 ms to draw.
                if t.as_millis() % period.as_millis() < 2 {
                    GroupLook::Working
                } else {
                    GroupLook::Soon(period - ms((t.as_millis() % period.as_millis()) as u64))
                }
            });
            world.outputs = (0..20).map(|n| period * n + ms(1)).collect();
            world
        };
        let (reason, at, _) = play(&world_of(ms(500)), SettleOptions::default());
        assert_eq!(reason, SettleReason::Input);
        assert!(at > ms(500) && at < ms(520), "{at:?}");
        // Given `until`, it waits for the match (here: the timeout).
        let options = SettleOptions {
            until: Some("never".into()),
            timeout: Some(ms(2000)),
            ..SettleOptions::default()
        };
        let (reason, ..) = play(&world_of(ms(500)), options);
        assert_eq!(reason, SettleReason::Timeout);
        // Pauses shorter than a frame a person watches are not a refresh loop.
        let (reason, at, _) = play(&world_of(ms(20)), options_quiet_long());
        assert_ne!((reason, at < ms(50)), (SettleReason::Input, true), "{at:?}");
    }

    /// `watch -n 0.5`: 3 ms of work (the command, the repaint), then a sleep of 500 ms,
    /// on a full screen; input written at `write` stays unread (watch reads no key).
    fn watch(write: Option<Duration>) -> World {
        let mut world = World::new(move |t| {
            if t.as_millis() % 503 < 3 {
                GroupLook::Working
            } else {
                GroupLook::Sleeps {
                    within: ms(500),
                    unread: write.is_some_and(|w| t >= w),
                }
            }
        });
        // The clock's line changes every other frame; the frames between print nothing.
        world.outputs = (0..20).map(|n| ms(1006 * n + 2)).collect();
        world.write = write;
        world
    }

    #[test]
    fn a_full_screen_sleep_loop_waits_for_input_after_one_cycle() {
        let (reason, at, _) = play(&watch(None), SettleOptions::default());
        assert_eq!(reason, SettleReason::Input);
        assert!(at > ms(503) && at < ms(520), "{at:?}");
        // A key typed before the cycle began and still unread: watch does not read keys.
        let (reason, at, _) = play(&watch(Some(Duration::ZERO)), SettleOptions::default());
        assert_eq!(reason, SettleReason::Input);
        assert!(at > ms(503) && at < ms(520), "{at:?}");
        // A key typed during the first sleep: the loop gets a whole cycle to read it.
        let (reason, at, _) = play(&watch(Some(ms(300))), SettleOptions::default());
        assert_eq!(reason, SettleReason::Input);
        assert!(at > ms(1006) && at < ms(1020), "{at:?}");
        // Given `until`, the match is waited for (here: the timeout).
        let options = SettleOptions {
            until: Some("never".into()),
            timeout: Some(ms(2000)),
            ..SettleOptions::default()
        };
        let (reason, at, _) = play(&watch(None), options);
        assert_eq!((reason, at), (SettleReason::Timeout, ms(2000)));
    }

    fn options_quiet_long() -> SettleOptions {
        options(Settle::Auto, 5_000, 1_000)
    }

    #[test]
    fn timers_unlike_each_other_are_no_refresh_loop() {
        assert!(refreshes(ms(500), ms(480)));
        assert!(!refreshes(ms(15), ms(15)));
        assert!(!refreshes(ms(100), ms(980)));
    }

    #[test]
    fn a_loop_of_short_timers_without_output_ends_by_quiet() {
        // A program that polls the terminal every 50 ms for ever, printing nothing.
        let mut world = World::new(|_| GroupLook::Soon(ms(50)));
        world.outputs = vec![ms(1)];
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Quiet);
        assert!(at >= ms(301) && at < ms(360), "{at:?}");
        // With `until` it waits for the match.
        let options = SettleOptions {
            until: Some("never".into()),
            ..options(Settle::Auto, 300, 2000)
        };
        let (reason, _, _) = play(&world, options);
        assert_eq!(reason, SettleReason::Timeout);
    }

    #[test]
    fn a_daemons_dialog_polling_the_terminal_ends_by_quiet() {
        // gpg waits on gpg-agent while the agent starts (work), then its pinentry-curses,
        // outside the foreground group, draws the dialog and polls the terminal every
        // 70 ms: the look stands for the group (see `blocked::daemon_verdict`), a loop of
        // short timers that prints nothing, which ends on quiet.
        let mut world = World::new(|t| {
            if t < ms(1500) {
                GroupLook::Working
            } else {
                GroupLook::Soon(ms(70))
            }
        });
        world.outputs = vec![ms(10), ms(1500)];
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Quiet);
        assert!(at >= ms(1800) && at < ms(1900), "{at:?}");
    }

    /// ssh: the client waits on the terminal and its socket.
    fn remote(_: Duration) -> GroupLook {
        GroupLook::Remote
    }

    /// Plays an ssh session whose prompt's shape is known, with output at `outputs`, the
    /// last of them its prompt: when it settled, which must be by the prompt.
    #[track_caller]
    fn settled_by_the_prompt(outputs: Vec<Duration>) -> Duration {
        let mut world = World::new(remote);
        world.prompt_known = true;
        world.prompt = outputs.last().copied();
        world.outputs = outputs;
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Prompt);
        at
    }

    #[test]
    fn a_remote_session_settles_when_its_prompt_comes_back() {
        // `for i in 1 2 3; do echo $i; sleep 0.5; done` over ssh: lines with pauses
        // longer than the quiet period, then the prompt.
        let at = settled_by_the_prompt(vec![ms(1), ms(2), ms(502), ms(1002), ms(1503)]);
        assert!(at >= ms(1503) + PROMPT_HOLD && at < ms(1556), "{at:?}");
    }

    #[test]
    fn a_prompt_must_stay_unchanged_for_a_moment() {
        // A line of the prompt's shape that goes on 20 ms later was not the prompt.
        let at = settled_by_the_prompt(vec![ms(1), ms(100), ms(120), ms(400)]);
        assert!(at >= ms(450), "{at:?}");
    }

    #[test]
    fn a_remote_session_without_a_prompt_shape_ends_by_quiet() {
        let mut world = World::new(remote);
        world.outputs = vec![ms(1), ms(2001)];
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Quiet);
        assert!(at >= ms(301) && at < ms(303), "{at:?}");
    }

    #[test]
    fn until_wins_over_the_prompt() {
        let mut world = World::new(remote);
        world.prompt_known = true;
        world.outputs = vec![ms(1), ms(100), ms(2001)];
        world.prompt = Some(ms(100));
        world.matched = Some(ms(2001));
        let options = SettleOptions {
            until: Some("^done".into()),
            ..SettleOptions::default()
        };
        let (reason, at, _) = play(&world, options);
        assert_eq!((reason, at), (SettleReason::Match, ms(2001)));
    }

    #[test]
    fn a_remote_session_with_a_prompt_shape_waits_out_silence_for_it() {
        // `sleep 2; echo done`: nothing for two seconds, then the line and the prompt.
        let at = settled_by_the_prompt(vec![ms(1), ms(2001), ms(2002)]);
        assert!(at >= ms(2052) && at < ms(2055), "{at:?}");
    }

    /// An ssh session whose pending line is the prompt from `prompt` on (`learned`: one
    /// the session learned), with output at `outputs`.
    fn remote_with_prompt(outputs: Vec<Duration>, prompt: Duration, learned: bool) -> World {
        let mut world = World::new(remote);
        world.prompt_known = true;
        world.prompt = Some(prompt);
        world.prompt_learned = learned;
        world.outputs = outputs;
        world
    }

    #[test]
    fn a_learned_prompt_ends_the_wait_after_a_shorter_hold() {
        // `echo hi` over ssh: the echo, the line, the prompt the echo line showed.
        let outputs = vec![ms(1), ms(2), ms(3)];
        let world = remote_with_prompt(outputs.clone(), ms(3), true);
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Prompt);
        assert!(
            at >= ms(3) + PROMPT_HOLD_LEARNED && at < ms(5) + PROMPT_HOLD_LEARNED,
            "{at:?}"
        );
        // A prompt of mere shape is held as long as before.
        let world = remote_with_prompt(outputs, ms(3), false);
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Prompt);
        assert!(at >= ms(3) + PROMPT_HOLD, "{at:?}");
    }

    #[test]
    fn a_learned_prompt_that_goes_on_within_the_hold_was_not_the_prompt() {
        // The pending line is the learned text from 100 ms, and goes on 6 ms later (a
        // line of output that starts like the prompt, in two pieces); the prompt comes
        // back at 400 ms.
        let mut world = remote_with_prompt(vec![ms(1), ms(100), ms(106), ms(400)], ms(400), true);
        world.pieces = vec![(ms(100), ms(106))];
        let (reason, at, _) = play(&world, SettleOptions::default());
        assert_eq!(reason, SettleReason::Prompt);
        assert!(at >= ms(400) + PROMPT_HOLD_LEARNED, "{at:?}");
    }

    #[test]
    fn a_pause_after_a_completed_line_never_ends_a_remote_wait() {
        // `sleep 2; echo done` with learned prompts: after the echo line the pending line
        // is empty, which is no prompt however long it stays; the call waits on.
        let mut world = World::new(remote);
        world.prompt_known = true;
        world.prompt_learned = true;
        world.outputs = vec![ms(1), ms(2)];
        let (reason, at, _) = play(&world, options(Settle::Auto, 300, 1500));
        assert_eq!((reason, at), (SettleReason::Timeout, ms(1500)));
    }

    /// A settle with the default options, started at `t0`, its waits readable.
    fn default_settler(t0: Instant) -> Settler {
        let plan = Plan::new(&SettleOptions::default(), t0).unwrap();
        Settler::new(&plan, true, t0)
    }

    /// What a step at `at` sees: `group`, no exit, match or write, and the output count
    /// and the time of the last output `output` (since `t0`) unchanged.
    fn quiet_look(
        t0: Instant,
        output: (u64, Duration),
        at: Duration,
        group: Option<GroupLook>,
    ) -> Seen {
        Seen {
            now: t0 + at,
            changed: false,
            output_seq: output.0,
            last_output: t0 + output.1,
            exit: None,
            matched: false,
            prompt: false,
            prompt_learned: false,
            shell_prompt: false,
            group,
            last_write: None,
        }
    }

    #[test]
    fn a_settle_starved_between_two_looks_does_not_take_short_timers_for_polling() {
        // node awaiting a 300 ms timer on a machine so busy that the settle looked only
        // twice: once at its 15 ms housekeeping wait, once 300 ms later as it re-waits the
        // last millisecond of the timer. It never saw the long wait; it must not call the
        // two short ones polling and end on quiet.
        let t0 = Instant::now();
        let mut settler = default_settler(t0);
        let seen = |at, group| quiet_look(t0, (1, ms(1)), at, group);
        let first = settler.step(&seen(ms(2), Some(GroupLook::Soon(ms(15)))));
        assert!(matches!(first, Next::Wait(_)), "{first:?}");
        let starved = settler.step(&seen(ms(313), Some(GroupLook::Soon(ms(1)))));
        assert!(matches!(starved, Next::Wait(_)), "{starved:?}");
        // Watched closely from then on, a loop of short timers is polling again.
        let mut t = ms(313);
        let ended = loop {
            t += us(500);
            match settler.step(&seen(t, Some(GroupLook::Soon(ms(1))))) {
                Next::Done(reason) => break (reason, t),
                Next::Wait(_) if t < ms(400) => {}
                Next::Wait(_) => panic!("a loop of 1 ms timers never ended on quiet"),
            }
        };
        assert_eq!(ended.0, SettleReason::Quiet);
        assert!(ended.1 >= ms(315) && ended.1 < ms(317), "{:?}", ended.1);
    }

    #[test]
    fn members_are_looked_up_again_before_input_is_confirmed() {
        let t0 = Instant::now();
        let mut settler = default_settler(t0);
        let seen = |at, group| quiet_look(t0, (0, Duration::ZERO), at, group);
        assert_eq!(settler.wants_look(&seen(us(0), None)), Some(Lookup::All));
        settler.step(&seen(us(0), Some(GroupLook::Working)));
        assert_eq!(settler.wants_look(&seen(us(20), None)), Some(Lookup::Known));
        settler.step(&seen(us(20), Some(input(us(20)))));
        // A candidate: the next look adds processes started since (one may have joined).
        assert_eq!(settler.wants_look(&seen(us(40), None)), Some(Lookup::New));
        assert_eq!(settler.wants_look(&seen(ms(60), None)), Some(Lookup::All));
    }
}

/// The shell's prompt mark ([`Seen::shell_prompt`]) on scripted timelines, apart from the
/// simulator above: a step sees the group working (`make` still running, say) and the
/// mark arrives at a given time.
#[cfg(test)]
mod shell_prompt_tests {
    use super::*;
    use crate::request::SettleOptions;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// What a step at `at` sees: output at 1 ms, the group working, the mark or not.
    fn seen(t0: Instant, at: Duration, shell_prompt: bool) -> Seen {
        Seen {
            now: t0 + at,
            changed: false,
            output_seq: 1,
            last_output: t0 + ms(1),
            exit: None,
            matched: false,
            prompt: false,
            prompt_learned: false,
            shell_prompt,
            group: Some(GroupLook::Working),
            last_write: None,
        }
    }

    /// Steps every millisecond until done; the mark comes at `mark` (if ever).
    fn play(options: SettleOptions, mark: Option<Duration>) -> (SettleReason, Duration) {
        let t0 = Instant::now();
        let plan = Plan::new(&options, t0).unwrap();
        let mut settler = Settler::new(&plan, true, t0);
        let mut t = Duration::ZERO;
        loop {
            let marked = mark.is_some_and(|at| at <= t);
            if let Next::Done(reason) = settler.step(&seen(t0, t, marked)) {
                return (reason, t);
            }
            t += ms(1);
        }
    }

    #[test]
    fn the_prompt_mark_ends_the_settle_at_once() {
        assert_eq!(
            play(SettleOptions::default(), Some(ms(40))),
            (SettleReason::Prompt, ms(40))
        );
    }

    #[test]
    fn the_prompt_mark_ends_a_wait_for_until_too() {
        let options = SettleOptions {
            until: Some("never".into()),
            ..SettleOptions::default()
        };
        assert_eq!(play(options, Some(ms(7))), (SettleReason::Prompt, ms(7)));
    }

    #[test]
    fn without_the_mark_the_other_rules_hold() {
        let (reason, at) = play(SettleOptions::default(), None);
        assert_eq!(reason, SettleReason::Timeout);
        assert_eq!(
            at,
            Duration::from_millis(crate::request::limits::DEFAULT_TIMEOUT_MS)
        );
    }

    #[test]
    fn a_quiet_settle_ignores_the_mark() {
        let options = SettleOptions {
            settle: Settle::Quiet,
            ..SettleOptions::default()
        };
        let (reason, at) = play(options, Some(ms(5)));
        assert_eq!(reason, SettleReason::Quiet);
        assert!(at >= ms(300), "{at:?}");
    }
}
