//! Who calls ([`Owner`]) and what they name ([`SessionId`]).

use std::fmt;
use std::sync::Arc;

/// The calling agent. Every operation names one; a session belongs to the owner that opened
/// it, and any other owner gets [`Error::ForeignSession`](crate::Error::ForeignSession).
///
/// Owners are compared by their name, so the server builds them from whatever identifies a
/// caller (a token's principal, an MCP session) and a library user from whatever it likes.
///
/// ```
/// use pty_session::Owner;
/// let a = Owner::new("alice");
/// assert_eq!(a, Owner::new("alice"));
/// assert_ne!(a, Owner::new("bob"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Owner(Arc<str>);

impl Owner {
    /// An owner with this name.
    pub fn new(name: impl AsRef<str>) -> Owner {
        Owner(Arc::from(name.as_ref()))
    }

    /// The owner's name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Owner({:?})", &*self.0)
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A session's id: a short random-looking string such as `p7k2m9q4`, never reused by a
/// service: a counter sent through a keyed permutation, so nothing is remembered per id.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(Arc<str>);

impl SessionId {
    /// The id as given by a caller. Any string can name a session; one the service never
    /// issued is simply unknown.
    pub fn new(id: impl AsRef<str>) -> SessionId {
        SessionId(Arc::from(id.as_ref()))
    }

    /// The id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId({:?})", &*self.0)
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for SessionId {
    fn from(id: &str) -> SessionId {
        SessionId::new(id)
    }
}

impl From<String> for SessionId {
    fn from(id: String) -> SessionId {
        SessionId::new(id)
    }
}

/// Where a service's session ids come from: a counter sent through a keyed permutation of
/// 40 bits, spelled as 8 characters of a 32-letter alphabet. Distinct counts give distinct
/// ids, so none is ever reused, with nothing remembered per id; the random key makes them
/// look random and differ between services. (Past 2^40 opens the count above 40 bits is
/// appended, so ids stay unique, only longer.)
pub(crate) struct IdSource {
    keys: [u64; ROUNDS],
    next: u64,
}

/// The 32 letters of an id: `[a-z2-9]` without `l` and `o`, so that no two read alike
/// (`l`/`1`, `o`/`0`) when a person copies an id.
const ALPHABET: &[u8; 32] = b"abcdefghijkmnpqrstuvwxyz23456789";
const HALF_BITS: u32 = 20;
const HALF_MASK: u64 = (1 << HALF_BITS) - 1;
const ROUNDS: usize = 4;

impl Default for IdSource {
    fn default() -> IdSource {
        IdSource::new()
    }
}

impl IdSource {
    /// A source with a fresh random key.
    pub(crate) fn new() -> IdSource {
        let mut bytes = [0u8; 8 * ROUNDS];
        // The OS random source does not fail on Linux once booted; should it, the clock
        // keys the permutation (ids stay unique, only more predictable).
        if getrandom::fill(&mut bytes).is_err() {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default();
            for (i, chunk) in bytes.chunks_mut(16).enumerate() {
                chunk.copy_from_slice(&(nanos ^ i as u128).to_le_bytes());
            }
        }
        let mut keys = [0u64; ROUNDS];
        for (key, chunk) in keys.iter_mut().zip(bytes.chunks(8)) {
            *key = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        }
        IdSource { keys, next: 0 }
    }

    /// The next id.
    pub(crate) fn next_id(&mut self) -> SessionId {
        let count = self.next;
        self.next += 1;
        let mut id = spell(self.permute(count & ((1 << (2 * HALF_BITS)) - 1)), 8);
        let high = count >> (2 * HALF_BITS);
        if high > 0 {
            id.push_str(&spell(high, 13));
        }
        SessionId(Arc::from(id))
    }

    /// A Feistel network over two 20-bit halves: a bijection of `0..2^40` whatever the
    /// round function.
    fn permute(&self, value: u64) -> u64 {
        let (mut left, mut right) = (value >> HALF_BITS, value & HALF_MASK);
        for key in self.keys {
            (left, right) = (right, left ^ (mix(right ^ key) & HALF_MASK));
        }
        (left << HALF_BITS) | right
    }
}

/// The splitmix64 finaliser: every input bit affects every output bit.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// `value` in `digits` letters of [`ALPHABET`], 5 bits each, most significant first;
/// leading `a`s (zeros) dropped beyond the 8th letter from the end.
fn spell(value: u64, digits: u32) -> String {
    let mut text: String = (0..digits)
        .rev()
        .map(|i| ALPHABET[((value >> (5 * i)) & 31) as usize] as char)
        .collect();
    if digits > 8 {
        let zeros = text.len() - text.trim_start_matches('a').len();
        text.drain(..zeros.min(text.len() - 1));
    }
    text
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn ids_are_short_distinct_and_keyed() {
        let mut source = IdSource::new();
        let ids: Vec<SessionId> = (0..200_000).map(|_| source.next_id()).collect();
        let distinct: HashSet<&SessionId> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len(), "no id repeats");
        for id in &ids {
            assert_eq!(id.as_str().len(), 8, "{id}");
            assert!(id.as_str().bytes().all(|b| ALPHABET.contains(&b)), "{id}");
        }
        let other: Vec<SessionId> = {
            let mut source = IdSource::new();
            (0..4).map(|_| source.next_id()).collect()
        };
        assert_ne!(ids[..4], other[..], "another service's ids differ");
    }

    #[test]
    fn the_permutation_is_a_bijection() {
        let source = IdSource {
            keys: [1, 2, 3, 4],
            next: 0,
        };
        // Inverting the rounds gives every input back.
        for value in (0..1u64 << 40).step_by(999_983).take(2_000) {
            let mut permuted = source.permute(value);
            let (mut left, mut right) = (permuted >> HALF_BITS, permuted & HALF_MASK);
            for key in source.keys.iter().rev() {
                (left, right) = (right ^ (mix(left ^ key) & HALF_MASK), left);
            }
            permuted = (left << HALF_BITS) | right;
            assert_eq!(permuted, value);
        }
    }

    #[test]
    fn past_two_to_the_forty_ids_grow_but_stay_distinct() {
        let mut source = IdSource {
            keys: [5, 6, 7, 8],
            next: (1 << 40) - 1,
        };
        let last_short = source.next_id();
        let first_long = source.next_id();
        assert_eq!(last_short.as_str().len(), 8);
        assert_eq!(first_long.as_str().len(), 9, "{first_long}");
        assert_ne!(&first_long.as_str()[..8], last_short.as_str());
    }
}
