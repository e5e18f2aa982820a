//! One session as people's views list it: the web view's `GET /api/sessions`, the
//! background server's list for `ls`, and what `ls` and `attach` read back from either.

use std::time::UNIX_EPOCH;

use pty_session::{SessionInfo, Status};
use serde::{Deserialize, Serialize};

/// A session in a list for people.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// The session's id.
    pub id: String,
    /// The command it runs.
    pub command: String,
    /// Its process id (0 when a server did not say).
    #[serde(default)]
    pub pid: u32,
    /// `running`, or how it ended (`exit code 0`, `killed by SIGKILL`).
    pub status: String,
    /// Whether it runs.
    #[serde(default)]
    pub running: bool,
    /// When it was opened, in milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    /// Lines not yet read by its owner.
    pub unread_lines: u64,
    /// The unfinished last line, such as a prompt.
    #[serde(default)]
    pub pending: String,
    /// Whether the program waits at a prompt: it runs and its last line is unfinished.
    pub prompt_pending: bool,
    /// Whether a full-screen program holds the alternate screen.
    #[serde(default)]
    pub alt_screen: bool,
    /// The sandbox it runs in: `none`, `workspace` or `read-only` (absent from servers
    /// that predate sandboxes: `none`).
    #[serde(default = "no_sandbox")]
    pub sandbox: String,
    /// The owner, on the background server of `mcp --persist` (a project directory or
    /// `--owner`); absent over HTTP, where it is the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

fn no_sandbox() -> String {
    "none".to_owned()
}

impl Listing {
    /// `info` as listed, with its `owner` where the list names owners.
    pub fn new(info: SessionInfo, owner: Option<&str>) -> Listing {
        let running = info.status == Status::Running;
        Listing {
            id: info.id.as_str().to_owned(),
            command: info.command,
            pid: info.pid,
            status: match info.status {
                Status::Running => "running".to_owned(),
                Status::Exited(exit) => exit.to_string(),
            },
            running,
            started_at_ms: info
                .started_at
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            unread_lines: info.unread_lines,
            prompt_pending: running && !info.pending.trim().is_empty(),
            pending: info.pending,
            alt_screen: info.alt_screen,
            sandbox: info.sandbox.as_str().to_owned(),
            owner: owner.map(str::to_owned),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_from_an_older_server_reads_with_defaults() {
        let old = r#"{"id":"k3v8q2mx","command":"python3","status":"running",
            "startedAtMs":1,"unreadLines":2,"promptPending":true}"#;
        let listing: Listing = serde_json::from_str(old).unwrap();
        assert_eq!(listing.sandbox, "none");
        assert_eq!(listing.owner, None);
        assert!(listing.prompt_pending);
        let again: Listing =
            serde_json::from_str(&serde_json::to_string(&listing).unwrap()).unwrap();
        assert_eq!(again, listing);
    }
}
