//! What no session inherits from the server, nor reads from it. A session gets the
//! server's environment (the programs an agent runs expect the user's `PATH`, `HOME`,
//! locale ...), so the server's secrets leave that environment before anything is
//! started: no thread, runtime, spawner or session exists yet to copy or read it.
//!
//! Leaving the C library's `environ` is not enough: `/proc/<pid>/environ`, which any
//! process of the same user may read (a session's too: the server is its ancestor, and
//! reading it needs no more than that), shows the block the kernel copied onto the stack
//! at exec, whatever `environ` holds since. So the secrets' bytes in that block are
//! overwritten as well (`erase_from_initial_block`).
//!
//! `serve` does not identify its TCP peers by process, as the background server does its
//! Unix ones: the kernel names no process for a TCP connection, and finding one means
//! matching `/proc/net/tcp` to a socket inode and then reading every process's
//! descriptors for it, per connection (tens of milliseconds on a busy machine), with a
//! socket that may be shared after a fork or passed on, and other users' processes
//! unreadable. Over HTTP the token is the gate, and no session can read it from the
//! server: not from its environment, not from `/proc`.
//!
//! Nor do sandboxed sessions read the server's secrets from files: the places below
//! ([`secret_places`]: the directories of generated tokens and of the background
//! server's socket, the recordings; `serve` adds its `--tokens` and `--token-file`) are
//! hidden from them (`sandbox_hidden`), where the user's own `sandboxHidden` paths join
//! them. With the network on, a token read there would let a sandbox call `serve` as
//! its owner, outside every sandbox.
//!
//! Descriptors need no step here: everything the server opens is close-on-exec, and the
//! shim closes whatever else a session's program would inherit (`pty_session`'s `shim`).

use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};

use crate::http::auth::TOKEN_ENV;

/// The environment variables that hold a secret of the server.
pub const SECRET_VARS: &[&str] = &[TOKEN_ENV];

/// Takes [`SECRET_VARS`] out of the process's environment, and their bytes out of the
/// block `/proc/<pid>/environ` shows, and returns the value of [`TOKEN_ENV`], if it was
/// set and is UTF-8.
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
    // SAFETY: the caller guarantees a single thread, and the variables are out of
    // `environ`, so nothing reads the bytes erased.
    unsafe { erase_from_initial_block(SECRET_VARS) };
    token
}

/// The places a server keeps secrets in, which sandboxed sessions must not see: the
/// directories generated tokens and the background server's socket live in (under
/// `$XDG_RUNTIME_DIR` and under `~/.local/state`, whichever this server uses: another
/// server of the user's may use the other), and `record_dir` (recordings hold what
/// sessions showed, passwords typed at a prompt that echoes included).
///
/// `~/.local/state/pty-session` is made (0700) if missing: a directory made after a
/// session opened would not be hidden from it.
pub fn secret_places(record_dir: Option<&Path>) -> Vec<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    let runtime = absolute("XDG_RUNTIME_DIR").map(|dir| dir.join("pty-session"));
    let state = absolute("HOME").map(|home| home.join(".local/state/pty-session"));
    if let Some(state) = &state
        && let Err(err) = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(state)
    {
        tracing::debug!(path = %state.display(), %err, "cannot make the state directory to hide it from sandboxes");
    }
    [runtime, state, record_dir.map(Path::to_path_buf)]
        .into_iter()
        .flatten()
        .collect()
}

/// Where the kernel put the process's initial environment block (`env_start`, `env_end`
/// of `/proc/self/stat`, fields 50 and 51), read from the text of that file.
pub fn initial_block(stat: &str) -> Option<(usize, usize)> {
    // Fields after the command name, which is in parentheses and may hold anything; the
    // first of them is field 3 (the state).
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let mut fields = rest.split(' ').skip(50 - 3);
    let start = fields.next()?.parse().ok()?;
    let end = fields.next()?.trim().parse().ok()?;
    (start < end).then_some((start, end))
}

/// The ranges of `block` (an environment block: `NAME=value` entries, each ended by a
/// NUL) that hold one of `names`, each whole entry without its NUL.
pub fn secret_entries(block: &[u8], names: &[&str]) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut at = 0;
    for entry in block.split(|&b| b == 0) {
        let secret = names.iter().any(|name| {
            entry.len() > name.len()
                && entry.starts_with(name.as_bytes())
                && entry[name.len()] == b'='
        });
        if secret {
            ranges.push(at..at + entry.len());
        }
        at += entry.len() + 1;
    }
    ranges
}

/// Overwrites with NUL bytes every entry of `names` in the initial environment block,
/// which is what `/proc/<pid>/environ` shows. Does nothing if the block cannot be found.
///
/// # Safety
///
/// Single-threaded, and no entry of `names` may still be in `environ` (the entries erased
/// would change under whoever reads them).
unsafe fn erase_from_initial_block(names: &[&str]) {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return;
    };
    let Some((start, end)) = initial_block(&stat) else {
        return;
    };
    // SAFETY: the kernel says the process's initial environment strings lie at
    // `start..end` of its own address space (on its stack, mapped read-write for the
    // life of the process). No Rust object refers to them; `environ` points into them
    // for the entries other than `names`, which are left as they are.
    let block = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, end - start) };
    for range in secret_entries(block, names) {
        block[range].fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_entries_are_whole_entries_of_those_names() {
        let block = b"A=1\0PTY_SESSION_TOKEN=s3cret\0PTY_SESSION_TOKENS=x\0B=PTY_SESSION_TOKEN=y\0PTY_SESSION_TOKEN=\0";
        let ranges = secret_entries(block, &["PTY_SESSION_TOKEN"]);
        let entries: Vec<&[u8]> = ranges.iter().map(|r| &block[r.clone()]).collect();
        assert_eq!(
            entries,
            [&b"PTY_SESSION_TOKEN=s3cret"[..], b"PTY_SESSION_TOKEN="]
        );
    }

    #[test]
    fn the_initial_block_is_where_proc_says() {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        let (start, end) = initial_block(&stat).unwrap();
        // What /proc shows is what lies there.
        let shown = std::fs::read("/proc/self/environ").unwrap();
        // SAFETY: the range is this process's initial environment block (see
        // `erase_from_initial_block`), only read here.
        let block = unsafe { std::slice::from_raw_parts(start as *const u8, end - start) };
        assert_eq!(block, &shown[..]);
        assert_eq!(initial_block("1 (a) b c"), None);
    }
}
