//! The web view's terminal streams, counted in two pools so that no one without a token can
//! crowd out someone with one.
//!
//! An *authorized* stream (its token accepted) takes one of [`MAX_STREAMS`] slots; beyond
//! them a new one is refused. A stream still *waiting* for its token (a browser sends it
//! as the first message, as it cannot set a header on a WebSocket) takes one of
//! [`MAX_WAITING`] slots apart; when they are all taken, the one that has waited longest
//! is closed for the new one. A viewer sends its token as soon as the socket opens, so it
//! waits a few milliseconds; sockets that never send one are the first to go.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

/// Authorized terminal streams open at once, over all tokens: each holds a socket beyond
/// the connection cap, which no longer counts an upgraded connection.
pub const MAX_STREAMS: usize = 256;

/// Streams waiting for their token's first message at once.
pub const MAX_WAITING: usize = 64;

/// Both pools. Cheap to clone.
#[derive(Clone, Default)]
pub struct StreamSlots {
    /// No `.await` while held.
    pools: Arc<Mutex<Pools>>,
}

#[derive(Default)]
struct Pools {
    authorized: usize,
    next: u64,
    /// The waiting streams by age (the lowest id has waited longest), each with the token
    /// that closes it.
    waiting: BTreeMap<u64, CancellationToken>,
}

impl Pools {
    /// Takes an authorized slot, if one is free under `cap`.
    fn authorize(&mut self, cap: usize) -> bool {
        let free = self.authorized < cap;
        if free {
            self.authorized += 1;
        }
        free
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
    /// A slot for a stream whose token was accepted; `None` when all [`MAX_STREAMS`] are
    /// taken.
    pub fn authorized(&self) -> Option<Authorized> {
        let taken = self.lock().authorize(MAX_STREAMS);
        taken.then(|| Authorized(self.clone()))
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
    pub fn counts(&self) -> (usize, usize) {
        let pools = self.lock();
        (pools.authorized, pools.waiting.len())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pools> {
        self.pools.lock().expect("stream slots lock")
    }
}

/// An authorized stream's slot, given back when it drops.
pub struct Authorized(StreamSlots);

impl Drop for Authorized {
    fn drop(&mut self) {
        let mut pools = self.0.lock();
        pools.authorized = pools.authorized.saturating_sub(1);
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

    #[test]
    fn authorized_slots_are_capped_and_given_back() {
        let mut pools = Pools::default();
        assert!(pools.authorize(2));
        assert!(pools.authorize(2));
        assert!(!pools.authorize(2), "the third is refused");
        assert_eq!(pools.authorized, 2);
    }

    #[test]
    fn the_longest_waiting_makes_room_and_never_an_authorized_one() {
        let mut pools = Pools::default();
        let waiting: Vec<_> = (0..3).map(|_| pools.wait(3)).collect();
        assert!(pools.authorize(1));
        assert!(waiting.iter().all(|(_, token)| !token.is_cancelled()));
        let (id, _) = pools.wait(3);
        assert_eq!(id, 3);
        assert!(waiting[0].1.is_cancelled(), "the oldest goes");
        assert!(!waiting[1].1.is_cancelled() && !waiting[2].1.is_cancelled());
        assert_eq!(pools.waiting.keys().copied().collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(pools.authorized, 1, "the authorized pool is apart");
        assert!(!pools.authorize(1));
    }

    #[test]
    fn slots_are_given_back_when_they_drop() {
        let slots = StreamSlots::default();
        let held: Vec<_> = (0..MAX_STREAMS).map(|_| slots.authorized()).collect();
        assert!(held.iter().all(Option::is_some));
        assert!(slots.authorized().is_none());
        let waiting: Vec<_> = (0..MAX_WAITING + 10).map(|_| slots.waiting()).collect();
        assert_eq!(slots.counts(), (MAX_STREAMS, MAX_WAITING));
        drop(waiting);
        drop(held);
        assert_eq!(slots.counts(), (0, 0));
        assert!(slots.authorized().is_some());
    }
}
