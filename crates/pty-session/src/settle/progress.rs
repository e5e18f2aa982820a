//! Progress during a long settle: a caller's callback that sees the newest lines while a
//! call waits, so that a person watching sees the work scroll by. The library knows no
//! protocol; the server turns each report into an MCP progress notification.
//!
//! When to report is decided by [`Pacer`], a pure function of the times and of whether
//! anything changed; [`watch`] only gathers those inputs and sleeps.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::session::Session;

/// No report before a settle has run this long.
const FIRST_AFTER: Duration = Duration::from_secs(1);
/// At most one report per this period.
const PERIOD: Duration = Duration::from_millis(250);
/// Without news, one report per this period all the same, to say the call is alive.
const HEARTBEAT: Duration = Duration::from_secs(1);
/// The most lines one report carries.
const NEWEST_LINES: usize = 3;
/// The most characters of one line a report carries.
const LINE_CHARS: usize = 200;

/// What a progress report carries.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// How long the call has waited.
    pub elapsed: Duration,
    /// The newest completed lines since the last report (at most three, each at most 200
    /// characters), oldest first; empty when no line completed since.
    pub lines: Vec<String>,
    /// The text after the last line end, such as a prompt.
    pub pending: String,
    /// Lines completed since the session started.
    pub total_lines: u64,
}

/// A callback that receives [`Progress`] while a call waits (a few times a second at
/// most, the first after a second). It runs on the service's task: it must not block.
#[derive(Clone)]
pub struct ProgressFn(Arc<dyn Fn(Progress) + Send + Sync>);

impl ProgressFn {
    /// Wraps `f`.
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> ProgressFn {
        ProgressFn(Arc::new(f))
    }
}

impl fmt::Debug for ProgressFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressFn")
    }
}

/// Decides when to report: not before [`FIRST_AFTER`], then at most every [`PERIOD`]
/// when something changed, and every [`HEARTBEAT`] when nothing did.
#[derive(Debug)]
pub(crate) struct Pacer {
    start: Instant,
    last: Option<Instant>,
}

impl Pacer {
    pub(crate) fn new(start: Instant) -> Pacer {
        Pacer { start, last: None }
    }

    /// When to look next.
    pub(crate) fn next_look(&self) -> Instant {
        match self.last {
            None => self.start + FIRST_AFTER,
            Some(last) => last + PERIOD,
        }
    }

    /// Whether to report at `now`, given whether anything changed since the last report;
    /// records the report if so.
    pub(crate) fn report(&mut self, now: Instant, changed: bool) -> bool {
        let due = match self.last {
            None => now >= self.start + FIRST_AFTER,
            Some(last) => now >= last + PERIOD && (changed || now >= last + HEARTBEAT),
        };
        if due {
            self.last = Some(now);
        }
        due
    }
}

/// Runs `settled` to its end, reporting to `progress` meanwhile.
pub(crate) async fn watch<T>(
    session: &Session,
    progress: Option<&ProgressFn>,
    start: Instant,
    settled: impl Future<Output = T>,
) -> T {
    let Some(progress) = progress else {
        return settled.await;
    };
    let mut settled = std::pin::pin!(settled);
    let mut pacer = Pacer::new(start);
    let mut reported = (session.state().lines_end(), String::new());
    loop {
        tokio::select! {
            result = &mut settled => return result,
            () = tokio::time::sleep_until(pacer.next_look().into()) => {}
        }
        let now = Instant::now();
        let (lines, pending, total_lines) = {
            let state = session.state();
            // The rows the program may still redraw count as the newest lines.
            let end = state.lines_end();
            let from = reported.0.max(end.saturating_sub(NEWEST_LINES as u64));
            let lines: Vec<String> = state
                .lines_from(from)
                .map(|line| line.chars().take(LINE_CHARS).collect())
                .collect();
            (lines, state.pending(), end)
        };
        let changed = total_lines != reported.0 || pending != reported.1;
        if pacer.report(now, changed) {
            reported = (total_lines, pending.clone());
            (progress.0)(Progress {
                elapsed: now.duration_since(start),
                lines,
                pending,
                total_lines,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scripted timeline: (milliseconds after the start, whether output changed) →
    /// the times a report went out.
    #[track_caller]
    fn check(timeline: &[(u64, bool)], expected: &[u64]) {
        let start = Instant::now();
        let mut pacer = Pacer::new(start);
        let at = |ms| start + Duration::from_millis(ms);
        let sent: Vec<u64> = timeline
            .iter()
            .filter(|&&(ms, changed)| pacer.report(at(ms), changed))
            .map(|&(ms, _)| ms)
            .collect();
        assert_eq!(sent, expected);
    }

    #[test]
    fn nothing_in_the_first_second() {
        check(
            &[(0, true), (500, true), (999, true), (1000, true)],
            &[1000],
        );
    }

    #[test]
    fn news_at_most_four_times_a_second() {
        check(
            &[
                (1000, true),
                (1100, true),
                (1250, true),
                (1300, true),
                (1500, true),
                (1600, true),
            ],
            &[1000, 1250, 1500],
        );
    }

    #[test]
    fn without_news_one_heartbeat_a_second() {
        check(
            &[
                (1000, false),
                (1250, false),
                (1750, false),
                (2000, false),
                (2250, true),
                (2400, false),
            ],
            &[1000, 2000, 2250],
        );
    }

    #[test]
    fn the_next_look_follows_the_last_report() {
        let start = Instant::now();
        let mut pacer = Pacer::new(start);
        assert_eq!(pacer.next_look(), start + FIRST_AFTER);
        assert!(pacer.report(start + Duration::from_millis(1100), false));
        assert_eq!(pacer.next_look(), start + Duration::from_millis(1350));
    }
}
