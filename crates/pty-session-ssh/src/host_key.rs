//! [`HostKeyPolicy`]: what to do when ssh meets a host key that is not in the known-hosts
//! file, and the [`HostKeyPrompt`] a caller's callback sees.

use std::fmt;
use std::sync::Arc;

/// What [`Ssh::connect`](crate::Ssh::connect) answers when ssh asks whether to trust a
/// host key it does not know.
///
/// Whatever the policy, a key that differs from the one in the known-hosts file is
/// [`Error::HostKeyChanged`](crate::Error::HostKeyChanged): ssh refuses it, and so does
/// the driver.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum HostKeyPolicy {
    /// Refuse an unknown key: the connection fails with
    /// [`Error::HostKeyUnknown`](crate::Error::HostKeyUnknown), which shows the key's
    /// fingerprint so that a person can check it. The default.
    #[default]
    Strict,
    /// Accept an unknown key and add it to the known-hosts file (trust on first use),
    /// like ssh's `StrictHostKeyChecking=accept-new`.
    AcceptNew,
    /// Ask the callback, which sees ssh's prompt and returns whether to accept the key.
    Ask(Arc<dyn Fn(&HostKeyPrompt) -> bool + Send + Sync>),
}

impl HostKeyPolicy {
    /// [`HostKeyPolicy::Ask`] with `decide`.
    ///
    /// ```
    /// use pty_session_ssh::HostKeyPolicy;
    /// let pinned = "SHA256:A6KhQKA07s6TgALzJTabcjnX6FAbwLWhRnMXrz8kEKU";
    /// let policy = HostKeyPolicy::ask(move |prompt| prompt.fingerprint == pinned);
    /// ```
    pub fn ask(decide: impl Fn(&HostKeyPrompt) -> bool + Send + Sync + 'static) -> HostKeyPolicy {
        HostKeyPolicy::Ask(Arc::new(decide))
    }
}

impl fmt::Debug for HostKeyPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostKeyPolicy::Strict => f.write_str("Strict"),
            HostKeyPolicy::AcceptNew => f.write_str("AcceptNew"),
            HostKeyPolicy::Ask(_) => f.write_str("Ask(..)"),
        }
    }
}

/// ssh's question about a host key it does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostKeyPrompt {
    /// The host as ssh names it, such as `[127.0.0.1]:2222`.
    pub host: String,
    /// The key's type as ssh shows it, such as `ED25519`.
    pub key_type: String,
    /// The key's fingerprint, such as `SHA256:A6Kh...` (compare it with
    /// `ssh-keygen -lf` on the server's public host key).
    pub fingerprint: String,
    /// ssh's whole prompt, lines joined with `\n`, ending with
    /// `Are you sure you want to continue connecting (yes/no/[fingerprint])? `.
    pub text: String,
}
