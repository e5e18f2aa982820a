//! The limits of every argument, and their checks, in one place: a value out of range is
//! an [`InvalidArgument`](crate::Error::InvalidArgument) naming the argument.

use std::time::Duration;

use crate::request::{OpenRequest, SendRequest};

/// The limits of docs/tools.md on numeric arguments, so that the server can state them too.
pub mod limits {
    /// The longest line, in bytes of UTF-8: a longer one comes cut into lines of at most
    /// this many bytes, never inside a character (so each piece but the last holds at
    /// least `MAX_LINE_BYTES - 3`), counted in `cutLines` where a budget cut it further.
    pub const MAX_LINE_BYTES: usize = 64 * 1024;
    /// The largest `timeoutMs`.
    pub const MAX_TIMEOUT_MS: u64 = 600_000;
    /// The default `timeoutMs`.
    pub const DEFAULT_TIMEOUT_MS: u64 = 5_000;
    /// The default `quietMs`.
    pub const DEFAULT_QUIET_MS: u64 = 300;
    /// The largest `data` of a send, in bytes.
    pub const MAX_DATA_BYTES: usize = 1024 * 1024;
    /// The largest `cols` and `rows`.
    pub const MAX_WINDOW: u64 = 1000;
    // A window fits the requests' `u16`: whatever is wider is out of range.
    const _: () = assert!(MAX_WINDOW <= u16::MAX as u64);
    /// The default window.
    pub const DEFAULT_COLS: u16 = 120;
    /// The default window.
    pub const DEFAULT_ROWS: u16 = 40;
    /// The largest `lines` budget of a tail.
    pub const MAX_LINES: u64 = 100_000;
    /// The smallest `maxBytes` budget of a reply.
    pub const MIN_BYTES: u64 = 1024;
    /// The largest `maxBytes` budget of a reply.
    pub const MAX_BYTES: u64 = 1024 * 1024;
    /// The default `maxBytes` budget of a reply (config `tailBytes`).
    pub const DEFAULT_BYTES: u64 = 32 * 1024;
    /// The smallest size cap of a recording ([`Config::record_max_bytes`](crate::Config)).
    pub const MIN_RECORD_BYTES: u64 = 4096;
    /// The most finished shell commands a session keeps for its next read; past it the
    /// oldest are dropped.
    pub const MAX_COMMANDS_KEPT: usize = 1000;
}

/// Checks a reply's budget of bytes (`maxBytes` of tail, open and send).
pub(crate) fn max_bytes(bytes: Option<u64>) -> Result<Option<u64>, crate::Error> {
    match bytes {
        Some(n) if !(limits::MIN_BYTES..=limits::MAX_BYTES).contains(&n) => {
            Err(crate::Error::invalid(
                "max_bytes",
                format!(
                    "{n} is out of range; give {}..={}",
                    limits::MIN_BYTES,
                    limits::MAX_BYTES
                ),
            ))
        }
        _ => Ok(bytes),
    }
}

/// Checks a reply's budget of lines (`lines` of tail, open and send).
pub(crate) fn lines(lines: Option<u64>) -> Result<Option<u64>, crate::Error> {
    match lines {
        Some(n) if n == 0 || n > limits::MAX_LINES => Err(crate::Error::invalid(
            "lines",
            format!("{n} is out of range; give 1..={}", limits::MAX_LINES),
        )),
        _ => Ok(lines),
    }
}

/// The quiet time asked for, checked: 1..=[`limits::MAX_TIMEOUT_MS`], default
/// [`limits::DEFAULT_QUIET_MS`].
pub(crate) fn quiet(ms: Option<u64>) -> Result<Duration, crate::Error> {
    let ms = ms.unwrap_or(limits::DEFAULT_QUIET_MS);
    if ms == 0 || ms > limits::MAX_TIMEOUT_MS {
        return Err(crate::Error::invalid(
            "quiet_ms",
            format!("{ms} is out of range; give 1..={}", limits::MAX_TIMEOUT_MS),
        ));
    }
    Ok(Duration::from_millis(ms))
}

/// The timeout asked for, checked: 0..=[`limits::MAX_TIMEOUT_MS`], default
/// [`limits::DEFAULT_TIMEOUT_MS`].
pub(crate) fn timeout(ms: Option<u64>) -> Result<Duration, crate::Error> {
    let ms = ms.unwrap_or(limits::DEFAULT_TIMEOUT_MS);
    if ms > limits::MAX_TIMEOUT_MS {
        return Err(crate::Error::invalid(
            "timeout_ms",
            format!("{ms} is out of range; give 0..={}", limits::MAX_TIMEOUT_MS),
        ));
    }
    Ok(Duration::from_millis(ms))
}

/// Whether `name` can name an environment variable: non-empty, without `=` or NUL. The
/// rule of a call's `env` and of the config's `default_env`.
pub(crate) fn is_env_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('=') && !name.contains('\0')
}

/// Checks what an open asks for that needs no session: the command, the working
/// directory, the environment and the window.
pub(crate) fn check_open(request: &OpenRequest) -> Result<(), crate::Error> {
    if request.command.trim().is_empty() {
        return Err(crate::Error::invalid(
            "command",
            "is empty; give the program to run, e.g. \"bash\"",
        ));
    }
    if request.command.contains('\0') {
        return Err(crate::Error::invalid(
            "command",
            "contains a NUL character, which a process cannot receive",
        ));
    }
    if let Some(cwd) = &request.cwd {
        check_cwd(cwd)?;
    }
    for (name, value) in &request.env {
        if !is_env_name(name) {
            return Err(crate::Error::invalid(
                "env",
                format!("{name:?} is not a valid name; names are non-empty, without '=' or NUL"),
            ));
        }
        if value.contains('\0') {
            return Err(crate::Error::invalid(
                "env",
                format!(
                    "the value of {name} contains a NUL character, which a process cannot receive"
                ),
            ));
        }
    }
    window(request.cols, request.rows)
}

/// Checks the names of a send's `keys`. Their bytes depend on the modes the program set,
/// known once the session is found; the names are checked before anything else.
pub(crate) fn check_key_names(keys: Option<&[String]>) -> Result<(), crate::Error> {
    if let Some(keys) = keys {
        crate::term::keys::encode(keys, Default::default())
            .map_err(|problem| crate::Error::invalid("keys", problem))?;
    }
    Ok(())
}

/// Checks the size of what one write types (`what`: `data`, or a person's `input`):
/// at most [`limits::MAX_DATA_BYTES`].
pub(crate) fn check_data(what: &str, len: usize) -> Result<(), crate::Error> {
    if len > limits::MAX_DATA_BYTES {
        return Err(crate::Error::invalid(
            what,
            format!(
                "is {len} bytes, over the limit of {} bytes (1 MiB); send it in parts",
                limits::MAX_DATA_BYTES
            ),
        ));
    }
    Ok(())
}

/// Checks the size of what a send writes (`data`, `keys`) and its window.
pub(crate) fn check_send(request: &SendRequest) -> Result<(), crate::Error> {
    check_data("data", request.data.len())?;
    let keys_len: usize = request.keys.iter().flatten().map(String::len).sum();
    if keys_len > limits::MAX_DATA_BYTES {
        return Err(crate::Error::invalid(
            "keys",
            format!(
                "hold {keys_len} bytes; send at most {} bytes per call",
                limits::MAX_DATA_BYTES
            ),
        ));
    }
    window(request.cols, request.rows)
}

/// Checks a window size: each in 1..=[`limits::MAX_WINDOW`].
pub(crate) fn window(cols: Option<u16>, rows: Option<u16>) -> Result<(), crate::Error> {
    for (what, value) in [("cols", cols), ("rows", rows)] {
        if let Some(value) = value {
            check_window(what, value.into())?;
        }
    }
    Ok(())
}

/// Checks one side of a window (`what`: `cols` or `rows`): in 1..=[`limits::MAX_WINDOW`].
/// Public so that a caller holding wider numbers than the requests' `u16` (a JSON server)
/// refuses one out of range in the same words.
///
/// ```
/// assert!(pty_session::check_window("cols", 80).is_ok());
/// assert!(pty_session::check_window("rows", 70_000).is_err());
/// ```
pub fn check_window(what: &str, value: u64) -> Result<(), crate::Error> {
    if value == 0 || value > limits::MAX_WINDOW {
        return Err(crate::Error::invalid(
            what,
            format!("{value} is out of range; give 1..={}", limits::MAX_WINDOW),
        ));
    }
    Ok(())
}

/// Checks a working directory: an existing directory, its path without NUL.
fn check_cwd(cwd: &std::path::Path) -> Result<(), crate::Error> {
    use std::os::unix::ffi::OsStrExt as _;
    if cwd.as_os_str().as_bytes().contains(&0) {
        return Err(crate::Error::invalid(
            "cwd",
            "contains a NUL character, which a path cannot hold",
        ));
    }
    match std::fs::metadata(cwd) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(crate::Error::invalid(
            "cwd",
            format!(
                "{} is not a directory; give an existing directory",
                cwd.display()
            ),
        )),
        Err(err) => Err(crate::Error::invalid(
            "cwd",
            format!(
                "{} cannot be used ({err}); give an existing directory",
                cwd.display()
            ),
        )),
    }
}
