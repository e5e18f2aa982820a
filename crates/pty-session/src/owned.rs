//! [`OwnedSession`]: one session held by a value, closed when the value goes, for a
//! consumer built on a single session (a protocol driver).

use crate::{Owner, PtyService, Result, SendRequest, Sent, SessionId, Tail, TailRequest};

/// One session of one owner, held by a value that drives it: its calls need no owner or
/// id, and dropping it without [`close`](Self::close) closes the session in the background
/// ([`PtyService::close_in_background`]), so a driver that is dropped leaves no process
/// behind.
///
/// ```no_run
/// use pty_session::{CancellationToken, Config, OpenRequest, OwnedSession, Owner, PtyService};
/// use pty_session::{SendRequest, TailRequest};
///
/// # async fn demo() -> Result<(), pty_session::Error> {
/// let pty = PtyService::try_new(Config::default())?;
/// let owner = Owner::new("driver");
/// let opened = pty.open(&owner, OpenRequest::new("bc -q"), &CancellationToken::new()).await?;
/// let mut bc = OwnedSession::new(&pty, owner, opened.session_id);
/// bc.send(SendRequest::new("6*7")).await?;
/// let everything = bc.tail(TailRequest::everything()).await?;
/// bc.close().await; // or drop it
/// # Ok(()) }
/// ```
pub struct OwnedSession {
    pty: PtyService,
    owner: Owner,
    id: SessionId,
    closed: bool,
}

impl OwnedSession {
    /// Takes charge of `owner`'s session `id` of `pty`.
    pub fn new(pty: &PtyService, owner: Owner, id: SessionId) -> OwnedSession {
        OwnedSession {
            pty: pty.clone(),
            owner,
            id,
            closed: false,
        }
    }

    /// The service the session runs in.
    pub fn service(&self) -> &PtyService {
        &self.pty
    }

    /// The session's owner.
    pub fn owner(&self) -> &Owner {
        &self.owner
    }

    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.id
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// [`PtyService::send`] to the session.
    pub async fn send(&self, request: SendRequest) -> Result<Sent> {
        self.pty.send(&self.owner, &self.id, request).await
    }

    /// [`PtyService::tail`] of the session.
    pub async fn tail(&self, request: impl Into<TailRequest>) -> Result<Tail> {
        self.pty.tail(&self.owner, &self.id, request).await
    }

    /// Closes the session, waiting until its tree is reaped ([`PtyService::close`]); later
    /// calls do nothing. A session already gone is not an error: there is nothing left to
    /// do either way.
    pub async fn close(&mut self) {
        if !self.closed {
            self.closed = true;
            let _ = self.pty.close(&self.owner, &self.id).await;
        }
    }
}

impl Drop for OwnedSession {
    fn drop(&mut self) {
        if !self.closed {
            self.pty.close_in_background(&self.owner, &self.id);
        }
    }
}

impl std::fmt::Debug for OwnedSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedSession")
            .field("owner", &self.owner)
            .field("id", &self.id)
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}
