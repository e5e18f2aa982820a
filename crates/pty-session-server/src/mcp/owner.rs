//! Who is calling: the [`Owner`] of a tool call, from the transport it came over.
//!
//! Over stdio the one client is the one owner. Over HTTP the owner is the principal of
//! the bearer token ([`Principal`], put on the request by the HTTP gate), whatever the
//! protocol version: an MCP session (`Mcp-Session-Id`) is only a connection, so a client
//! that reconnects, or makes an MCP session per call, keeps its sessions. The [`Owners`]
//! registry remembers when each HTTP owner was last active, so that one idle for
//! `ownerIdleTimeoutSecs` can be disposed: a token has no end of its own.

use std::collections::HashMap;
use std::sync::PoisonError;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pty_session::{Owner, PtyService};
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

/// The authenticated caller of an HTTP request: the name of its bearer token.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal(pub Arc<str>);

/// The header a client with MCP sessions names its session by.
pub const MCP_SESSION_ID: &str = "mcp-session-id";

/// The owner of calls made with `principal`'s token, over any protocol version and in any
/// MCP session.
pub fn http_owner(principal: &Principal) -> Owner {
    Owner::new(format!("token:{}", principal.0))
}

/// How a handler finds the owner of a call.
#[derive(Clone)]
pub enum Caller {
    /// Stdio: one client, one owner.
    Stdio(Owner),
    /// HTTP: from the request's principal.
    Http(Owners),
    /// A client of the background server of persistent sessions: the owner it named,
    /// whose calls `Owners` counts for idle disposal.
    Named(Owner, Owners),
}

impl Caller {
    /// The owner of the call in `ctx`, marked active until the returned guard drops.
    ///
    /// `None` over HTTP when the request carries no principal, which the gate makes
    /// impossible: the caller treats it as an internal error.
    pub fn owner(&self, ctx: &RequestContext<RoleServer>) -> Option<ActiveOwner> {
        match self {
            Caller::Stdio(owner) => Some(ActiveOwner {
                owner: owner.clone(),
                owners: None,
            }),
            Caller::Http(owners) => {
                let parts = ctx.extensions.get::<http::request::Parts>()?;
                let principal = parts.extensions.get::<Principal>()?;
                let owner = http_owner(principal);
                owners.begin(&owner);
                Some(ActiveOwner {
                    owner,
                    owners: Some(owners.clone()),
                })
            }
            Caller::Named(owner, owners) => {
                owners.begin(owner);
                Some(ActiveOwner {
                    owner: owner.clone(),
                    owners: Some(owners.clone()),
                })
            }
        }
    }
}

/// An owner with a call in flight; the registry counts it active until this drops.
pub struct ActiveOwner {
    owner: Owner,
    owners: Option<Owners>,
}

impl ActiveOwner {
    pub fn owner(&self) -> &Owner {
        &self.owner
    }
}

impl Drop for ActiveOwner {
    fn drop(&mut self) {
        if let Some(owners) = &self.owners {
            owners.end(&self.owner);
        }
    }
}

/// The HTTP owners seen so far and when each was last active. Cheap to clone.
#[derive(Clone, Default)]
pub struct Owners {
    // A std mutex: it is held only to read or update the map, never across an await.
    activity: Arc<Mutex<HashMap<Owner, Activity>>>,
}

#[derive(Debug, Clone, Copy)]
struct Activity {
    in_flight: usize,
    last: Instant,
}

impl Owners {
    fn begin(&self, owner: &Owner) {
        let mut activity = self.activity.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = activity.entry(owner.clone()).or_insert(Activity {
            in_flight: 0,
            last: Instant::now(),
        });
        entry.in_flight += 1;
        entry.last = Instant::now();
    }

    fn end(&self, owner: &Owner) {
        let mut activity = self.activity.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = activity.get_mut(owner) {
            entry.in_flight = entry.in_flight.saturating_sub(1);
            entry.last = Instant::now();
        }
    }

    /// Counts `owner` active until the returned guard drops: a person attached to one of
    /// its sessions, say.
    pub fn hold(&self, owner: &Owner) -> ActiveOwner {
        self.begin(owner);
        ActiveOwner {
            owner: owner.clone(),
            owners: Some(self.clone()),
        }
    }

    /// Every owner of `principal`'s token that may hold sessions: the token's one owner.
    pub fn of_principal(&self, principal: &Principal) -> Vec<Owner> {
        vec![http_owner(principal)]
    }

    /// Removes and returns the owners with no call in flight and none for `timeout`.
    fn take_idle(&self, timeout: Duration) -> Vec<Owner> {
        let now = Instant::now();
        let mut activity = self.activity.lock().unwrap_or_else(PoisonError::into_inner);
        let idle: Vec<Owner> = activity
            .iter()
            .filter(|(_, a)| a.in_flight == 0 && now.duration_since(a.last) >= timeout)
            .map(|(owner, _)| owner.clone())
            .collect();
        for owner in &idle {
            activity.remove(owner);
        }
        idle
    }

    /// Disposes owners idle for `timeout`, checking a few times per timeout, until `stop`.
    pub async fn dispose_idle(
        self,
        service: PtyService,
        timeout: Duration,
        stop: CancellationToken,
    ) {
        let period = (timeout / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
        let mut ticks = tokio::time::interval(period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = ticks.tick() => {}
            }
            for owner in self.take_idle(timeout) {
                tracing::info!(owner = %crate::people::shown::shown(owner.as_str()), idle_secs = timeout.as_secs(), "owner idle; closing its sessions");
                service.dispose(&owner).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_in_flight_are_never_idle() {
        let owners = Owners::default();
        let a = Owner::new("a");
        let b = Owner::new("b");
        owners.begin(&a);
        owners.begin(&b);
        owners.end(&b);
        assert_eq!(owners.take_idle(Duration::ZERO), vec![b.clone()]);
        assert!(owners.take_idle(Duration::ZERO).is_empty(), "b was removed");
        owners.end(&a);
        assert!(owners.take_idle(Duration::from_secs(3600)).is_empty());
        assert_eq!(owners.take_idle(Duration::ZERO), vec![a]);
    }

    #[test]
    fn a_token_is_one_owner() {
        let alice = Principal("alice".into());
        assert_eq!(http_owner(&alice).as_str(), "token:alice");
        assert_eq!(Owners::default().of_principal(&alice), [http_owner(&alice)]);
        assert_ne!(http_owner(&alice), http_owner(&Principal("alice2".into())));
    }
}
