//! A sleep with microsecond precision on tokio's reactor.
//!
//! tokio's timer counts in whole milliseconds, so its shortest sleep lasts 1–2 ms. A settle
//! that samples a program between "it is still starting" and "it waits for input" wants
//! to look again after a fraction of that without spinning; a `timerfd` gives it that.

use std::io;
use std::os::fd::OwnedFd;
use std::time::Instant;

use rustix::time::{
    Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec, timerfd_create,
    timerfd_settime,
};
use tokio::io::unix::AsyncFd;

/// A one-shot timer, reusable: each [`sleep_until`](FineTimer::sleep_until) re-arms it.
pub(crate) struct FineTimer {
    fd: AsyncFd<OwnedFd>,
}

impl FineTimer {
    /// A timer on the current runtime's reactor.
    pub(crate) fn new() -> io::Result<FineTimer> {
        let fd = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )?;
        Ok(FineTimer {
            fd: crate::pty::register(fd)?,
        })
    }

    /// Sleeps until `at`, give or take the reactor's wake-up; returns at once if `at` has
    /// passed. On an error of the timer it returns early, which only means an early look.
    pub(crate) async fn sleep_until(&self, at: Instant) {
        let left = at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        let value = Timespec {
            tv_sec: left.as_secs() as _,
            tv_nsec: left.subsec_nanos() as _,
        };
        let zero = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let spec = Itimerspec {
            it_interval: zero,
            it_value: value,
        };
        if timerfd_settime(self.fd.get_ref(), TimerfdTimerFlags::empty(), &spec).is_err() {
            return;
        }
        loop {
            let Ok(mut guard) = self.fd.readable().await else {
                return;
            };
            let mut expirations = [0u8; 8];
            match rustix::io::read(self.fd.get_ref(), &mut expirations) {
                Err(rustix::io::Errno::AGAIN) => guard.clear_ready(),
                _ => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn sleeps_about_as_long_as_asked_and_can_be_reused() {
        let timer = FineTimer::new().unwrap();
        for micros in [200, 500, 3_000] {
            let start = Instant::now();
            let sleep = timer.sleep_until(start + Duration::from_micros(micros));
            // Generous: this catches a timer that never fires, not a slow machine.
            tokio::time::timeout(Duration::from_secs(5), sleep)
                .await
                .expect("the timer fires");
            let slept = start.elapsed();
            assert!(
                slept >= Duration::from_micros(micros),
                "{slept:?} < {micros} µs"
            );
        }
        let past = Instant::now() - Duration::from_millis(1);
        tokio::time::timeout(Duration::from_secs(5), timer.sleep_until(past))
            .await
            .expect("a sleep until the past returns at once");
    }
}
