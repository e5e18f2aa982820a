//! Helpers shared by the integration tests.

use std::time::{Duration, Instant};

use pty_session::{CancellationToken, Config, OpenRequest, Opened, Owner, PtyService};

/// A service with default config, and one owner.
pub fn service() -> (PtyService, Owner) {
    (PtyService::new(Config::default()), Owner::new("test"))
}

/// Opens `request` and panics with the error if that fails.
pub async fn open(pty: &PtyService, owner: &Owner, request: OpenRequest) -> Opened {
    match pty.open(owner, request, &CancellationToken::new()).await {
        Ok(opened) => opened,
        Err(err) => panic!("open failed: {} {err}", err.code()),
    }
}

/// Whether process `pid` exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|rest| rest.trim_start().chars().next());
            !matches!(state, Some('Z') | Some('X') | None)
        }
        Err(_) => false,
    }
}

/// Polls `f` until it is true or `deadline` passes; panics with `what` on timeout.
pub async fn eventually(what: &str, deadline: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        if start.elapsed() > deadline {
            panic!("timed out after {deadline:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
