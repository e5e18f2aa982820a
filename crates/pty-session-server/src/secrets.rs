//! What no session inherits from the server. A session gets the server's environment (the
//! programs an agent runs expect the user's `PATH`, `HOME`, locale ...), so the server's
//! secrets leave that environment before anything is started: no thread, runtime, spawner
//! or session exists yet to copy or read it.
//!
//! Descriptors need no step here: everything the server opens is close-on-exec, and the
//! shim closes whatever else a session's program would inherit (`pty_session`'s `shim`).

use crate::auth::TOKEN_ENV;

/// The environment variables that hold a secret of the server.
pub const SECRET_VARS: &[&str] = &[TOKEN_ENV];

/// Takes [`SECRET_VARS`] out of the process's environment and returns the value of
/// [`TOKEN_ENV`], if it was set and is UTF-8.
///
/// # Safety
///
/// No other thread may be running: one could be reading the environment while it changes
/// (see [`std::env::remove_var`]).
pub unsafe fn take_from_environment() -> Option<String> {
    let token = std::env::var(TOKEN_ENV).ok();
    for name in SECRET_VARS {
        // SAFETY: the caller guarantees the process runs a single thread.
        unsafe { std::env::remove_var(name) };
    }
    token
}
