//! [`PtyService`]: the facade. One core behind a cheap-to-clone handle.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::{Config, OpenRequest, Opened, Owner, Result, SendRequest, Sent, SessionId, Tail};

/// The service: every session of every owner. Cheap to clone; clones share one core.
#[derive(Clone)]
pub struct PtyService {
    shared: Arc<Shared>,
}

struct Shared {
    config: Config,
}

impl PtyService {
    /// A service with `config`.
    ///
    /// # Panics
    /// If [`Config::validate`] fails: check the config first where it comes from a user.
    pub fn new(config: Config) -> PtyService {
        if let Err(err) = config.validate() {
            panic!("invalid pty-session config: {err}");
        }
        PtyService { shared: Arc::new(Shared { config }) }
    }

    /// The configuration the service runs with.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// Starts a session for `owner` and waits until its first output settled.
    pub async fn open(
        &self,
        owner: &Owner,
        request: OpenRequest,
        cancel: &CancellationToken,
    ) -> Result<Opened> {
        let _ = (owner, request, cancel);
        todo!()
    }

    /// Writes to a session and waits until the output settled.
    pub async fn send(&self, owner: &Owner, id: &SessionId, request: SendRequest) -> Result<Sent> {
        let _ = (owner, id, request);
        todo!()
    }

    /// Reads the unread lines, at most `lines` (default `tail_lines`).
    pub async fn tail(&self, owner: &Owner, id: &SessionId, lines: Option<u64>) -> Result<Tail> {
        let _ = (owner, id, lines);
        todo!()
    }

    /// Kills the session's process tree and forgets it. `Ok(false)` if it was already gone.
    pub async fn close(&self, owner: &Owner, id: &SessionId) -> Result<bool> {
        let _ = (owner, id);
        todo!()
    }

    /// Closes every session of `owner`.
    pub async fn dispose(&self, owner: &Owner) {
        let _ = owner;
        todo!()
    }

    /// Closes every session of every owner.
    pub async fn shutdown(&self) {
        todo!()
    }

    /// The ids of `owner`'s open sessions.
    pub fn sessions(&self, owner: &Owner) -> Vec<SessionId> {
        let _ = owner;
        todo!()
    }
}
