//! Secrets: the [`Secret`] a caller's callback returns, and the [`SecretPrompt`] it
//! answers.

use std::fmt;
use std::sync::Arc;

/// The callback that answers ssh's password and passphrase prompts: see
/// [`SshOptions::secrets`](crate::SshOptions::secrets).
pub(crate) type SecretSource = Arc<dyn Fn(&SecretPrompt) -> Option<Secret> + Send + Sync>;

/// A password or passphrase, from a caller's callback.
///
/// The driver writes it to ssh's terminal (with echo off, so it never appears in the
/// output) and drops it at once: it is never logged, never part of an error, and not kept.
/// Its `Debug` form hides it, and dropping it overwrites its bytes.
pub struct Secret(String);

impl Secret {
    /// Wraps `secret`.
    pub fn new(secret: impl Into<String>) -> Secret {
        Secret(secret.into())
    }

    /// The secret, for writing it to the terminal.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.0);
    }
}

/// What kind of secret ssh asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SecretKind {
    /// The account's password (`user@host's password: `).
    Password,
    /// The passphrase of a private key (`Enter passphrase for key '...': `).
    Passphrase {
        /// The key file, as ssh names it.
        key: String,
    },
    /// Another keyboard-interactive question, such as a one-time code.
    Other,
}

/// ssh's prompt for a secret, as a [`secrets`](crate::SshOptions::secrets) callback
/// sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SecretPrompt {
    /// What is asked for.
    pub kind: SecretKind,
    /// The prompt as ssh shows it.
    pub text: String,
    /// 1 for the first prompt of this connection, 2 after a refused answer, ...
    pub attempt: u32,
}
