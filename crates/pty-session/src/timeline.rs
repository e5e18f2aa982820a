//! The timeline of one call, for the benchmark's latency breakdown (BENCHMARKS.md): the
//! monotonic time at each stage a call passes (the server's read of the request, the
//! write into the terminal, each read of the drain, each look of the settle, the reply,
//! the transport's write), written one call a line to a file.
//!
//! Off unless the environment names the file (`PTY_SESSION_TIMELINE=/path`) or a program
//! linking the library calls [`enable`]; off, a stage costs two atomic loads. The times
//! are `CLOCK_MONOTONIC` in nanoseconds, the clock every process of the machine shares,
//! so a client's own stamps ([`now_ns`]) line up with the server's. One call at a time is
//! followed: the stages of calls that overlap (two sessions' sends at once) mix, so a
//! breakdown is taken with one call in flight.
//!
//! A line is the stages in order, `name=ns` separated by spaces. A stage may occur more
//! than once (`drain`, `look`).

use std::fs::File;
use std::io::{self, Write as _};
use std::path::Path;
use std::sync::{Mutex, Once, OnceLock, PoisonError};

/// The environment variable that names the file (appended to).
pub const ENV: &str = "PTY_SESSION_TIMELINE";

/// The recorder: the call followed now, and where finished calls go.
struct Recorder {
    /// The stages of the call followed now; `None` between calls. Held for a push only.
    open: Mutex<Option<Vec<(&'static str, u64)>>>,
    /// Held for the write of one line.
    file: Mutex<File>,
}

/// On once set: by [`enable`], or from the environment at the first stage.
static RECORDER: OnceLock<Recorder> = OnceLock::new();
/// The environment is read once.
static FROM_ENV: Once = Once::new();

fn recorder() -> Option<&'static Recorder> {
    if let Some(recorder) = RECORDER.get() {
        return Some(recorder);
    }
    FROM_ENV.call_once(|| {
        let Some(path) = std::env::var_os(ENV) else {
            return;
        };
        match open(Path::new(&path)) {
            Ok(recorder) => {
                let _ = RECORDER.set(recorder);
            }
            Err(err) => tracing::warn!(path = ?path, "cannot open the timeline file: {err}"),
        }
    });
    RECORDER.get()
}

fn open(path: &Path) -> io::Result<Recorder> {
    let file = File::options().create(true).append(true).open(path)?;
    Ok(Recorder {
        open: Mutex::new(None),
        file: Mutex::new(file),
    })
}

/// Turns the timeline on, writing to `path` (appended to), for a program that follows its
/// own calls to the library (the benchmark). Fails if it is on already.
pub fn enable(path: &Path) -> io::Result<()> {
    let recorder = open(path)?;
    RECORDER
        .set(recorder)
        .map_err(|_| io::Error::other("the timeline is on already"))
}

/// Whether the timeline is on.
pub fn enabled() -> bool {
    recorder().is_some()
}

/// The monotonic clock in nanoseconds (`CLOCK_MONOTONIC`, shared by every process).
pub fn now_ns() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u64::try_from(now.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(now.tv_nsec).unwrap_or(0)
}

/// Starts following a new call at `stage`, writing out the one followed until now if it
/// was not finished (a notification, which has no reply; an HTTP request, whose reply
/// streams on after the server's last look at it).
pub fn start(stage: &'static str) {
    if let Some(recorder) = recorder() {
        let now = now_ns();
        let before = lock(&recorder.open).replace(vec![(stage, now)]);
        if let Some(stages) = before {
            write(recorder, stages);
        }
    }
}

/// Marks `stage` in the call followed now; nothing between calls.
pub fn mark(stage: &'static str) {
    if let Some(recorder) = recorder() {
        let now = now_ns();
        if let Some(stages) = lock(&recorder.open).as_mut() {
            stages.push((stage, now));
        }
    }
}

/// Marks `stage`, starting a call if none is followed: `true` if this started one (the
/// caller then [`finish`]es it). A library call marks so, whether a server started the
/// call at its read of the request or the library is called directly.
pub fn enter(stage: &'static str) -> bool {
    let Some(recorder) = recorder() else {
        return false;
    };
    let now = now_ns();
    let mut open = lock(&recorder.open);
    match open.as_mut() {
        Some(stages) => {
            stages.push((stage, now));
            false
        }
        None => {
            *open = Some(vec![(stage, now)]);
            true
        }
    }
}

/// Marks `stage` and writes the call followed now out as one line.
pub fn finish(stage: &'static str) {
    let Some(recorder) = recorder() else {
        return;
    };
    let now = now_ns();
    let Some(mut stages) = lock(&recorder.open).take() else {
        return;
    };
    stages.push((stage, now));
    write(recorder, stages);
}

fn write(recorder: &Recorder, stages: Vec<(&'static str, u64)>) {
    let mut line = String::with_capacity(stages.len() * 24);
    for (name, at) in stages {
        line.push_str(name);
        line.push('=');
        line.push_str(&at.to_string());
        line.push(' ');
    }
    line.pop();
    line.push('\n');
    // A lost line costs the breakdown one sample, nothing else.
    let _ = lock(&recorder.file).write_all(line.as_bytes());
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
