//! The driver's one error type, [`Error`]: a variant for each failure a caller acts on
//! differently, carrying ssh's own message.

use pty_session::ExitStatus;

/// What went wrong driving ssh.
///
/// The connection failures carry `message`: the line ssh printed about it, such as
/// `ssh: connect to host 127.0.0.1 port 2222: Connection refused`. No variant ever holds
/// a password or passphrase.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The PTY service refused a call (spawn failed, session limit, ...).
    #[error(transparent)]
    Pty(#[from] pty_session::Error),
    /// The ssh client did not run: it is not installed, or its arguments were wrong.
    #[error("ssh did not start ({}); it printed: {output:?}", describe(.status))]
    Start {
        /// How it ended, if it did.
        status: Option<ExitStatus>,
        /// What it printed.
        output: String,
    },
    /// The server's host key is not in the known-hosts file and was not accepted (the
    /// policy is [`Strict`](crate::HostKeyPolicy::Strict), or the callback said no).
    #[error(
        "the host key of {host} is not known ({fingerprint}) and was not accepted: {message}; \
         check the fingerprint and connect with HostKeyPolicy::AcceptNew, or add the key to \
         the known-hosts file"
    )]
    HostKeyUnknown {
        /// The host as ssh names it, such as `[127.0.0.1]:2222`.
        host: String,
        /// The key's fingerprint as ssh shows it, such as `SHA256:A6Kh...`.
        fingerprint: String,
        /// ssh's message (`Host key verification failed.`).
        message: String,
    },
    /// The server's host key differs from the one in the known-hosts file: the key was
    /// replaced, or someone is in the middle.
    #[error(
        "the host key of {host} has CHANGED (the server now shows {fingerprint}): {message}; \
         find out why before removing the old key from the known-hosts file"
    )]
    HostKeyChanged {
        /// The host as ssh names it.
        host: String,
        /// The fingerprint of the key the server sent.
        fingerprint: String,
        /// ssh's message.
        message: String,
    },
    /// A password or passphrase was given and authentication failed all the same: the
    /// server refused the password, or the passphrase did not open the key (ssh then
    /// moves on without a word, and the server refuses what is left).
    #[error("wrong password or passphrase: {message}")]
    WrongPassword {
        /// ssh's message, such as `user@host: Permission denied (publickey,password).`
        message: String,
    },
    /// The server accepted no credential: the key was denied and no password was given
    /// (or password authentication is off).
    #[error("authentication denied: {message}; check the user, the key and authorized_keys")]
    AuthDenied {
        /// ssh's message, such as `user@host: Permission denied (publickey).`
        message: String,
    },
    /// The server cut the connection after too many failed attempts (its
    /// `MaxAuthTries`), typically because too many keys were offered.
    #[error(
        "too many authentication failures: {message}; offer fewer keys (IdentitiesOnly) or \
         the right one first"
    )]
    TooManyAuthFailures {
        /// ssh's message.
        message: String,
    },
    /// Nothing listens on the port.
    #[error("connection refused: {message}; is the server running on that port?")]
    ConnectionRefused {
        /// ssh's message.
        message: String,
    },
    /// The host cannot be reached: its name does not resolve, there is no route, or the
    /// connection timed out.
    #[error("host unreachable: {message}")]
    Unreachable {
        /// ssh's message.
        message: String,
    },
    /// ssh asked for a secret and there was none: no secret callback was configured, or
    /// it declined.
    #[error("ssh asked {prompt:?} and no secret was given; configure SshOptions::secrets")]
    NoSecret {
        /// The prompt ssh showed.
        prompt: String,
    },
    /// ssh ended before the remote shell was usable, for a reason none of the variants
    /// above names.
    #[error("ssh ended while connecting ({}): {message}", describe(.status))]
    Connect {
        /// How ssh ended.
        status: Option<ExitStatus>,
        /// What ssh printed last.
        message: String,
    },
    /// The connection ended after it was established: the server went away, the network
    /// dropped, or the remote shell exited. The driver has closed its session; later
    /// calls fail the same way.
    #[error("the connection ended ({}): {message}; connect again", describe(.status))]
    Disconnected {
        /// How ssh ended.
        status: Option<ExitStatus>,
        /// What ssh printed last, such as `Connection to host closed by remote host.`
        message: String,
    },
    /// No answer within the timeout. A command that timed out may still run remotely:
    /// [`interrupt`](crate::Ssh::interrupt) it, or run the next command after it ends.
    #[error("no {waiting_for} within {} ms", .timeout.as_millis())]
    Timeout {
        /// What the driver waited for.
        waiting_for: String,
        /// The timeout that passed.
        timeout: std::time::Duration,
    },
    /// The command or its input cannot be typed into a remote shell as they are.
    #[error("{what} {reason}")]
    InvalidCommand {
        /// `command` or `input`.
        what: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

fn describe(status: &Option<ExitStatus>) -> String {
    match status {
        Some(status) => status.to_string(),
        None => "still running".to_owned(),
    }
}

/// The driver's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
