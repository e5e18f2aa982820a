//! The legacy MCP sessions (`Mcp-Session-Id`) the HTTP gate let open: which token opened
//! each, whether a request of it is in flight, and since when it has been idle.
//!
//! A token may hold at most `maxMcpSessionsPerToken` at once (an `initialize` past that is
//! refused); a session with no request in flight for `mcpSessionIdleSecs` is expired:
//! the gate closes it in rmcp and disposes its owner, as on DELETE. rmcp's own keep-alive
//! cannot do this: it counts only messages, so it would end a session in the middle of a
//! long `pty_send`, and it does not tell us when it ends one.

use std::collections::HashMap;
use std::sync::PoisonError;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::mcp::owner::Principal;

/// The default of `maxMcpSessionsPerToken`.
pub const DEFAULT_MAX_PER_TOKEN: usize = 64;
/// The default of `mcpSessionIdleSecs`: five minutes, well under the owner idle timeout.
pub const DEFAULT_IDLE_SECS: u64 = 300;

/// The sessions. Cheap to clone.
#[derive(Clone)]
pub struct McpSessions {
    max_per_token: usize,
    idle: Duration,
    // A std mutex: it is held only to read or update the maps, never across an await.
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    sessions: HashMap<String, Session>,
    /// `initialize` requests under way per principal; they count against the cap.
    opening: HashMap<Principal, usize>,
}

struct Session {
    principal: Principal,
    in_flight: usize,
    idle_since: Instant,
}

impl State {
    fn count(&self, principal: &Principal) -> usize {
        self.sessions
            .values()
            .filter(|s| s.principal == *principal)
            .count()
            + self.opening.get(principal).copied().unwrap_or(0)
    }
}

/// The sessions with no request in flight and none for `idle` by `now`, removed from
/// `sessions`.
fn take_expired(
    sessions: &mut HashMap<String, Session>,
    now: Instant,
    idle: Duration,
) -> Vec<(String, Principal)> {
    let expired: Vec<String> = sessions
        .iter()
        .filter(|(_, s)| s.in_flight == 0 && now.saturating_duration_since(s.idle_since) >= idle)
        .map(|(id, _)| id.clone())
        .collect();
    expired
        .into_iter()
        .filter_map(|id| sessions.remove(&id).map(|s| (id, s.principal)))
        .collect()
}

/// An `initialize` under way: a slot of its token's cap, held until the session is bound
/// or the request ends without one.
pub struct Opening {
    principal: Principal,
    state: Arc<Mutex<State>>,
}

impl Drop for Opening {
    fn drop(&mut self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = state.opening.get_mut(&self.principal) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                state.opening.remove(&self.principal);
            }
        }
    }
}

/// A request of a session in flight; the session is not idle until this drops.
pub struct InFlight {
    id: String,
    state: Arc<Mutex<State>>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(session) = state.sessions.get_mut(&self.id) {
            session.in_flight = session.in_flight.saturating_sub(1);
            session.idle_since = Instant::now();
        }
    }
}

impl McpSessions {
    pub fn new(max_per_token: usize, idle: Duration) -> McpSessions {
        McpSessions {
            max_per_token,
            idle,
            state: Arc::default(),
        }
    }

    pub fn max_per_token(&self) -> usize {
        self.max_per_token
    }

    pub fn idle(&self) -> Duration {
        self.idle
    }

    /// The principal that opened session `id`, if it is open.
    pub fn opened_by(&self, id: &str) -> Option<Principal> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.sessions.get(id).map(|s| s.principal.clone())
    }

    /// A slot for a new session of `principal`, or `Err(open)` when it has the most it may.
    pub fn reserve(&self, principal: &Principal) -> Result<Opening, usize> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let open = state.count(principal);
        if open >= self.max_per_token {
            return Err(open);
        }
        *state.opening.entry(principal.clone()).or_default() += 1;
        Ok(Opening {
            principal: principal.clone(),
            state: self.state.clone(),
        })
    }

    /// Records that `principal` opened session `id` (its slot, if reserved, is used up).
    pub fn bind(&self, id: String, principal: &Principal, slot: Option<Opening>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.sessions.entry(id).or_insert_with(|| Session {
            principal: principal.clone(),
            in_flight: 0,
            idle_since: Instant::now(),
        });
        drop(state);
        drop(slot);
    }

    /// Marks a request of session `id` in flight, if the session is open.
    pub fn begin(&self, id: &str) -> Option<InFlight> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let session = state.sessions.get_mut(id)?;
        session.in_flight += 1;
        Some(InFlight {
            id: id.to_owned(),
            state: self.state.clone(),
        })
    }

    /// Forgets session `id` (deleted by its client).
    pub fn unbind(&self, id: &str) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .sessions
            .remove(id);
    }

    /// Removes and returns the sessions idle for `mcpSessionIdleSecs` by `now`.
    pub fn take_expired(&self, now: Instant) -> Vec<(String, Principal)> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        take_expired(&mut state.sessions, now, self.idle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> Principal {
        Principal("alice".into())
    }

    #[test]
    fn a_token_holds_at_most_its_cap_counting_opens_under_way() {
        let sessions = McpSessions::new(2, Duration::from_secs(60));
        let bob = Principal("bob".into());
        let first = sessions.reserve(&alice()).unwrap();
        let second = sessions.reserve(&alice()).unwrap();
        assert_eq!(sessions.reserve(&alice()).err(), Some(2), "two under way");
        assert!(
            sessions.reserve(&bob).is_ok(),
            "another token has its own cap"
        );
        drop(second);
        sessions.bind("s1".into(), &alice(), Some(first));
        let third = sessions
            .reserve(&alice())
            .expect("one open, none under way");
        sessions.bind("s2".into(), &alice(), Some(third));
        assert_eq!(sessions.reserve(&alice()).err(), Some(2));
        sessions.unbind("s1");
        assert!(sessions.reserve(&alice()).is_ok());
    }

    #[test]
    fn sessions_expire_only_when_idle_long_enough() {
        let t0 = Instant::now();
        let idle = Duration::from_secs(60);
        let mut map = HashMap::new();
        let session = |in_flight, idle_since| Session {
            principal: alice(),
            in_flight,
            idle_since,
        };
        map.insert("old".to_owned(), session(0, t0));
        map.insert("busy".to_owned(), session(1, t0));
        map.insert("new".to_owned(), session(0, t0 + Duration::from_secs(30)));
        assert!(take_expired(&mut map, t0 + Duration::from_secs(59), idle).is_empty());
        let expired = take_expired(&mut map, t0 + Duration::from_secs(60), idle);
        assert_eq!(expired, vec![("old".to_owned(), alice())]);
        assert_eq!(
            take_expired(&mut map, t0 + Duration::from_secs(90), idle),
            vec![("new".to_owned(), alice())]
        );
        assert_eq!(map.len(), 1, "the busy one stays however long");
    }

    #[test]
    fn a_request_in_flight_keeps_its_session() {
        let sessions = McpSessions::new(4, Duration::ZERO);
        sessions.bind("s".into(), &alice(), None);
        let call = sessions.begin("s").unwrap();
        assert!(sessions.take_expired(Instant::now()).is_empty());
        drop(call);
        assert_eq!(sessions.take_expired(Instant::now()).len(), 1);
        assert!(sessions.begin("s").is_none(), "expired sessions are gone");
    }
}
