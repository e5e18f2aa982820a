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

/// A session's id: a short random string such as `p7k2m9q4`, never reused by a service.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(Arc<str>);

impl SessionId {
    /// The id as given by a caller. Any string can name a session; one the service never
    /// issued is simply unknown.
    pub fn new(id: impl AsRef<str>) -> SessionId {
        SessionId(Arc::from(id.as_ref()))
    }

    /// A fresh random id of 8 characters from `[a-z2-9]` without `l` and `o`: no
    /// characters that read alike (`l`/`1`, `o`/`0`) when a person copies an id.
    pub(crate) fn random() -> SessionId {
        const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
        let mut bytes = [0u8; 8];
        // The OS random source does not fail on Linux once booted; should it, fall back to
        // the clock so that a session can still be opened (uniqueness is checked anyway).
        if getrandom::fill(&mut bytes).is_err() {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default();
            bytes = (nanos as u64).to_le_bytes();
        }
        let id: String = bytes
            .iter()
            .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
            .collect();
        SessionId(Arc::from(id))
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
