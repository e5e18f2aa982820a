//! Helpers that the workspace's tests and its benchmark share: whether a process is still
//! alive, a process's children by name, and waiting until a condition holds. Not published.

use std::time::{Duration, Instant};

/// Whether process `pid` exists and runs: a zombie (or a dead task) counts as gone.
///
/// ```
/// assert!(pty_session_testkit::alive(std::process::id()));
/// assert!(!pty_session_testkit::alive(-1));
/// ```
pub fn alive(pid: impl Into<i64>) -> bool {
    let pid = pid.into();
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The command name is in parentheses and may hold anything; the state follows.
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|rest| rest.trim_start().chars().next());
            !matches!(state, Some('Z' | 'X') | None)
        }
        Err(_) => false,
    }
}

/// The live children of `parent` whose command name (`/proc/<pid>/comm`) is `name`.
///
/// ```
/// let me = std::process::id();
/// assert!(pty_session_testkit::children(me, "no-such-name").is_empty());
/// ```
pub fn children(parent: impl Into<i64>, name: &str) -> Vec<i32> {
    let parent = parent.into().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // `pid (comm) state ppid ...`; the name may hold anything, so split around it.
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                return false;
            };
            let ppid = stat[close + 1..].split_whitespace().nth(1);
            &stat[open + 1..close] == name && ppid == Some(parent.as_str()) && alive(pid)
        })
        .collect()
}

/// Polls `f` every 10 ms until it is true; panics naming `what` once `deadline` passed.
pub async fn eventually(what: &str, deadline: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        if start.elapsed() > deadline {
            panic!("timed out after {deadline:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
