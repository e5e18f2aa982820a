//! The limit of open files. A session holds two descriptors (the terminal's master and the
//! shim's control socket), so the default `maxSessions = 1024` needs more than the soft
//! limit most systems start a process with (1,024): past about 500 sessions every open
//! failed with "Too many open files". The service raises its soft limit as far as its
//! configuration needs, never beyond the hard limit; the spawner puts back the limit the
//! process started with before it forks anything, so commands get the usual one (a
//! program may size a table by it, or close every descriptor up to it). A server that
//! holds other descriptors too (connections) reserves the sessions' share with
//! [`needed_for`] and raises the limit for the rest with [`raise_to`].

use std::sync::OnceLock;

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// The environment variable that hands the original soft limit to the spawner.
pub(crate) const ORIGINAL_VAR: &str = "PTY_SESSION_NOFILE";

/// Descriptors counted per session: its two, and one for what it may hold briefly (the
/// `/proc` records a settle reads, a connection).
const PER_SESSION: u64 = 3;
/// Descriptors for everything else: the runtime, listeners, the spawner's socket, logs.
const HEADROOM: u64 = 256;

/// The soft limit this process had before the first raise (`None`: unlimited).
static ORIGINAL: OnceLock<Option<u64>> = OnceLock::new();

/// Raises this process's soft limit so that `max_sessions` sessions fit. Never lowers it,
/// never goes beyond the hard limit (then opens past it fail with `SPAWN_FAILED`).
pub(crate) fn raise_for(max_sessions: usize) {
    raise_to(needed_for(max_sessions));
}

/// The descriptors a service with `max_sessions` sessions counts on: three per session and
/// a fixed headroom for the runtime, listeners and logs.
pub fn needed_for(max_sessions: usize) -> u64 {
    (max_sessions as u64)
        .saturating_mul(PER_SESSION)
        .saturating_add(HEADROOM)
}

/// Raises this process's soft limit of open files to `wanted`, never lowering it and never
/// beyond the hard limit, and returns the soft limit now (`None`: unlimited). Commands
/// spawned by a service still get the limit the process started with.
pub fn raise_to(wanted: u64) -> Option<u64> {
    let limit = getrlimit(Resource::Nofile);
    ORIGINAL.get_or_init(|| limit.current);
    let current = limit.current?;
    let raised = limit.maximum.map_or(wanted, |hard| wanted.min(hard));
    if raised > current {
        set_soft(raised, limit.maximum);
    }
    getrlimit(Resource::Nofile).current
}

/// Sets the soft limit, keeping the hard one. A refusal leaves the limit as it was, which
/// only means fewer sessions fit (or commands keep the raised limit).
fn set_soft(soft: u64, hard: Option<u64>) {
    let _ = setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(soft),
            maximum: hard,
        },
    );
}

/// The soft limit to give back to commands, when this process raised its own.
pub(crate) fn original() -> Option<u64> {
    let original = (*ORIGINAL.get()?)?;
    let now = getrlimit(Resource::Nofile).current;
    (now != Some(original)).then_some(original)
}

/// In the spawner, before it forks: puts back the soft limit named by [`ORIGINAL_VAR`].
pub(crate) fn restore_from_env() {
    let Some(original) = std::env::var(ORIGINAL_VAR)
        .ok()
        .and_then(|value| value.parse::<u64>().ok())
    else {
        return;
    };
    set_soft(original, getrlimit(Resource::Nofile).maximum);
}
