//! The long-lived streams of the web view (terminal streams and live lists), counted in
//! two pools so that no one without a token can crowd out someone with one, and per token
//! so that no token can crowd out another.
//!
//! An *authorized* stream (its token accepted) takes a slot of its token. A token has at
//! most `maxStreamsPerToken` ([`DEFAULT_MAX_STREAMS_PER_TOKEN`]); its newest stream beyond
//! that closes its own oldest (a tab reloaded, a client that reconnects without closing:
//! the newest is the one someone looks at). All tokens together have at most
//! [`MAX_STREAMS`]; a new stream beyond that closes the oldest stream of the token holding
//! the most. So a token never loses a stream to another token holding fewer, and one that
//! opens streams without end only closes its own. A stream still *waiting* for its token
//! (a browser sends it as the first message, as it cannot set a header on a WebSocket)
//! takes one of [`MAX_WAITING`] slots apart; when they are all taken, the one that has
//! waited longest is closed for the new one. A viewer sends its token as soon as the
//! socket opens, so it waits a few milliseconds; sockets that never send one are the first
//! to go.

use std::collections::{BTreeMap, HashMap};
use std::sync::PoisonError;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

/// Authorized streams open at once, over all tokens: each terminal stream holds a socket
/// beyond the connection cap, which no longer counts an upgraded connection.
pub const MAX_STREAMS: usize = 256;

/// The default of `maxStreamsPerToken`: a person's tabs (a live list and a terminal each)
/// and `attach`es, with room to spare.
pub const DEFAULT_MAX_STREAMS_PER_TOKEN: usize = 32;

/// Streams waiting for their token's first message at once.
pub const MAX_WAITING: usize = 64;

/// Both pools. Cheap to clone.
#[derive(Clone)]
pub struct StreamSlots {
    /// No `.await` while held.
    pools: Arc<Mutex<Pools>>,
    /// `maxStreamsPerToken`.
    per_token: usize,
    /// What every slot's closing token is a child of: the server's stop.
    stop: CancellationToken,
}

#[derive(Default)]
struct Pools {
    next: u64,
    /// The authorized streams by age (the lowest id is the oldest).
    authorized: BTreeMap<u64, Held>,
    /// The waiting streams by age (the lowest id has waited longest), each with the token
    /// that closes it.
    waiting: BTreeMap<u64, CancellationToken>,
}

/// An authorized stream in the pool.
struct Held {
    /// The name of its token.
    token: Arc<str>,
    /// Cancelled to close it.
    close: CancellationToken,
}

/// A stream closed to make room for a new one: whose it was, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closed {
    /// The name of the token whose stream was closed.
    pub token: Arc<str>,
    /// Whether it was closed because its own token reached its cap (else: all tokens
    /// together reached [`MAX_STREAMS`], and it was the token holding the most).
    pub own_cap: bool,
}

impl Pools {
    /// Takes an authorized slot for `token` with `close`, first closing the stream that
    /// must make room for it, if any (see the module's doc): its token's oldest when the
    /// token has `per_token`, else the oldest of the token holding the most when all have
    /// `cap`.
    fn authorize(
        &mut self,
        token: &Arc<str>,
        per_token: usize,
        cap: usize,
        close: CancellationToken,
    ) -> (u64, Option<Closed>) {
        let mut counts: HashMap<&Arc<str>, usize> = HashMap::new();
        for held in self.authorized.values() {
            *counts.entry(&held.token).or_default() += 1;
        }
        let own = counts.get(token).copied().unwrap_or(0);
        let victim = if own >= per_token.max(1) {
            Some((token.clone(), true))
        } else if self.authorized.len() >= cap.max(1) {
            // The token holding the most; of equals, the one whose oldest stream is oldest.
            let most = counts.values().copied().max().unwrap_or(0);
            self.authorized
                .values()
                .find(|held| counts.get(&held.token) == Some(&most))
                .map(|held| (held.token.clone(), false))
        } else {
            None
        };
        let closed = victim.and_then(|(victim, own_cap)| {
            let oldest = self
                .authorized
                .iter()
                .find(|(_, held)| held.token == victim)
                .map(|(id, _)| *id)?;
            let held = self.authorized.remove(&oldest)?;
            held.close.cancel();
            Some(Closed {
                token: held.token,
                own_cap,
            })
        });
        let id = self.next;
        self.next += 1;
        self.authorized.insert(
            id,
            Held {
                token: token.clone(),
                close,
            },
        );
        (id, closed)
    }

    /// Takes a waiting slot under `cap`, closing the longest waiting stream if there is
    /// no room; returns the new stream's id and the token that closes it.
    fn wait(&mut self, cap: usize) -> (u64, CancellationToken) {
        while self.waiting.len() >= cap.max(1) {
            let Some((_, displaced)) = self.waiting.pop_first() else {
                break;
            };
            displaced.cancel();
        }
        let id = self.next;
        self.next += 1;
        let displaced = CancellationToken::new();
        self.waiting.insert(id, displaced.clone());
        (id, displaced)
    }
}

impl StreamSlots {
    /// Empty pools with `per_token` authorized streams a token (`maxStreamsPerToken`);
    /// every stream also closes when `stop` is cancelled.
    pub fn new(per_token: usize, stop: CancellationToken) -> StreamSlots {
        StreamSlots {
            pools: Arc::default(),
            per_token,
            stop,
        }
    }

    /// The most authorized streams a token may have.
    pub fn per_token(&self) -> usize {
        self.per_token
    }

    /// A slot for a stream of token `token` whose token was accepted, and the stream that
    /// was closed to make room for it, if one was (the caller logs it).
    pub fn authorized(&self, token: &Arc<str>) -> (Authorized, Option<Closed>) {
        let close = self.stop.child_token();
        let (id, closed) = self
            .lock()
            .authorize(token, self.per_token, MAX_STREAMS, close.clone());
        let slot = Authorized {
            slots: self.clone(),
            id,
            close,
        };
        (slot, closed)
    }

    /// A slot for a stream that has yet to send its token (see the module's doc).
    pub fn waiting(&self) -> Waiting {
        let (id, displaced) = self.lock().wait(MAX_WAITING);
        Waiting {
            slots: self.clone(),
            id,
            displaced,
        }
    }

    /// How many streams are authorized and how many wait.
    #[cfg(test)]
    pub fn counts(&self) -> (usize, usize) {
        let pools = self.lock();
        (pools.authorized.len(), pools.waiting.len())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pools> {
        self.pools.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// An authorized stream's slot, given back when it drops.
pub struct Authorized {
    slots: StreamSlots,
    id: u64,
    close: CancellationToken,
}

impl Authorized {
    /// Cancelled when the stream must close: a newer stream took its place, or the server
    /// stops.
    pub fn closing(&self) -> &CancellationToken {
        &self.close
    }
}

impl Drop for Authorized {
    fn drop(&mut self) {
        self.slots.lock().authorized.remove(&self.id);
    }
}

/// A waiting stream's slot, given back when it drops.
pub struct Waiting {
    slots: StreamSlots,
    id: u64,
    displaced: CancellationToken,
}

impl Waiting {
    /// Resolves when a newer stream took this one's place.
    pub async fn displaced(&self) {
        self.displaced.cancelled().await;
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.slots.lock().waiting.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Arc<str> {
        Arc::from(s)
    }

    /// Authorizes streams of the given tokens under `per_token` and `cap`; what each one
    /// closed, as `token` (own cap) or `token*` (the total cap), and the tokens left.
    #[track_caller]
    fn check(per_token: usize, cap: usize, tokens: &[&str], closed: &[&str], left: &[&str]) {
        let mut pools = Pools::default();
        let got: Vec<String> = tokens
            .iter()
            .map(|token| {
                let (_, c) =
                    pools.authorize(&name(token), per_token, cap, CancellationToken::new());
                c.map_or(String::new(), |c| {
                    format!("{}{}", c.token, if c.own_cap { "" } else { "*" })
                })
            })
            .collect();
        assert_eq!(got, closed);
        let held: Vec<&str> = pools.authorized.values().map(|h| &*h.token).collect();
        assert_eq!(held, left);
    }

    #[test]
    fn a_token_past_its_cap_closes_its_own_oldest_and_never_another_tokens() {
        check(
            2,
            10,
            &["a", "b", "a", "a", "a"],
            &["", "", "", "a", "a"],
            &["b", "a", "a"],
        );
    }

    #[test]
    fn past_the_total_the_token_holding_the_most_loses_its_oldest() {
        check(
            3,
            4,
            &["a", "a", "a", "b", "b", "b"],
            &["", "", "", "", "a*", "a*"],
            &["a", "b", "b", "b"],
        );
    }

    #[test]
    fn the_longest_waiting_makes_room_and_never_an_authorized_one() {
        let mut pools = Pools::default();
        let waiting: Vec<_> = (0..3).map(|_| pools.wait(3)).collect();
        let (_, closed) = pools.authorize(&name("a"), 1, 1, CancellationToken::new());
        assert_eq!(closed, None);
        assert!(waiting.iter().all(|(_, token)| !token.is_cancelled()));
        let (id, _) = pools.wait(3);
        assert_eq!(id, 4);
        assert!(waiting[0].1.is_cancelled(), "the oldest goes");
        assert!(!waiting[1].1.is_cancelled() && !waiting[2].1.is_cancelled());
        assert_eq!(pools.waiting.keys().copied().collect::<Vec<_>>(), [1, 2, 4]);
        assert_eq!(pools.authorized.len(), 1, "the authorized pool is apart");
    }

    #[test]
    fn slots_are_given_back_when_they_drop_and_closed_ones_are_cancelled() {
        let stop = CancellationToken::new();
        let slots = StreamSlots::new(2, stop.clone());
        let a = name("a");
        let (first, _) = slots.authorized(&a);
        let (second, _) = slots.authorized(&a);
        let (third, closed) = slots.authorized(&a);
        assert_eq!(closed.map(|c| c.own_cap), Some(true));
        assert!(first.closing().is_cancelled(), "the oldest was closed");
        assert!(!second.closing().is_cancelled());
        let waiting: Vec<_> = (0..MAX_WAITING + 10).map(|_| slots.waiting()).collect();
        assert_eq!(slots.counts(), (2, MAX_WAITING));
        drop(waiting);
        drop((first, second));
        assert_eq!(slots.counts(), (1, 0));
        stop.cancel();
        assert!(
            third.closing().is_cancelled(),
            "the server's stop closes every stream"
        );
        drop(third);
        assert_eq!(slots.counts(), (0, 0));
    }
}
