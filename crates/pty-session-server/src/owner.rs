//! Who is calling: the [`Owner`] of a tool call, from the transport it came over.
//!
//! Over stdio the one client is the one owner. Over HTTP the owner is the principal of
//! the bearer token ([`Principal`], put on the request by the HTTP gate), narrowed to the
//! `Mcp-Session-Id` when the client negotiated a protocol version with sessions. The
//! [`Owners`] registry remembers when each HTTP owner was last active, so that one idle
//! for `ownerIdleTimeoutSecs` can be disposed: the current protocol has no session to end.

use std::collections::HashMap;
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

/// The owner of calls made with `principal`'s token, in MCP session `mcp_session` if any.
///
/// Principal names cannot hold `/` (see the token file rules), so the two forms cannot
/// collide.
pub fn http_owner(principal: &Principal, mcp_session: Option<&str>) -> Owner {
    match mcp_session {
        None => Owner::new(format!("token:{}", principal.0)),
        Some(id) => Owner::new(format!("token:{}/mcp-session:{id}", principal.0)),
    }
}

/// How a handler finds the owner of a call.
#[derive(Clone)]
pub enum Caller {
    /// Stdio: one client, one owner.
    Stdio(Owner),
    /// HTTP: from the request's principal and MCP session.
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
                let mcp_session = parts
                    .headers
                    .get(MCP_SESSION_ID)
                    .and_then(|value| value.to_str().ok());
                let owner = http_owner(principal, mcp_session);
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
        let mut activity = self.activity.lock().expect("owners lock");
        let entry = activity.entry(owner.clone()).or_insert(Activity {
            in_flight: 0,
            last: Instant::now(),
        });
        entry.in_flight += 1;
        entry.last = Instant::now();
    }

    fn end(&self, owner: &Owner) {
        let mut activity = self.activity.lock().expect("owners lock");
        if let Some(entry) = activity.get_mut(owner) {
            entry.in_flight = entry.in_flight.saturating_sub(1);
            entry.last = Instant::now();
        }
    }

    /// Every owner of `principal`'s token that may hold sessions: the token's own owner
    /// and one per MCP session of the token seen so far. An owner leaves this registry
    /// only when its sessions are disposed, so none of the token's sessions is missed.
    pub fn of_principal(&self, principal: &Principal) -> Vec<Owner> {
        let plain = http_owner(principal, None);
        let narrower = format!("{}/", plain.as_str());
        let activity = self.activity.lock().expect("owners lock");
        let mut owners: Vec<Owner> = activity
            .keys()
            .filter(|owner| owner.as_str().starts_with(&narrower))
            .cloned()
            .collect();
        owners.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        owners.insert(0, plain);
        owners
    }

    /// Forgets `owner`, e.g. because its MCP session was deleted.
    pub fn forget(&self, owner: &Owner) {
        self.activity.lock().expect("owners lock").remove(owner);
    }

    /// Removes and returns the owners with no call in flight and none for `timeout`.
    fn take_idle(&self, timeout: Duration) -> Vec<Owner> {
        let now = Instant::now();
        let mut activity = self.activity.lock().expect("owners lock");
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
                tracing::info!(%owner, idle_secs = timeout.as_secs(), "owner idle; closing its sessions");
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
    fn a_token_sees_its_owners_only() {
        let owners = Owners::default();
        let alice = Principal("alice".into());
        for owner in [
            http_owner(&alice, Some("u-2")),
            http_owner(&Principal("alice2".into()), None),
            http_owner(&Principal("alice2".into()), Some("u-1")),
            http_owner(&alice, Some("u-1")),
        ] {
            owners.begin(&owner);
        }
        let seen: Vec<String> = owners
            .of_principal(&alice)
            .iter()
            .map(|o| o.as_str().to_owned())
            .collect();
        assert_eq!(
            seen,
            [
                "token:alice",
                "token:alice/mcp-session:u-1",
                "token:alice/mcp-session:u-2"
            ]
        );
    }

    #[test]
    fn session_owners_are_narrower_than_token_owners() {
        let p = Principal("alice".into());
        assert_eq!(http_owner(&p, None).as_str(), "token:alice");
        assert_eq!(
            http_owner(&p, Some("u-1")).as_str(),
            "token:alice/mcp-session:u-1"
        );
    }
}
