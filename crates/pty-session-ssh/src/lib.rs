//! Drives the OpenSSH client (`ssh`) through [`pty_session`]: the second consumer of its
//! facade.
//!
//! [`Ssh::connect`] starts `ssh` on a session of the caller's
//! [`Owner`](pty_session::Owner) and gets it to a usable remote shell:
//! - it answers the **host-key question** by a [`HostKeyPolicy`] — refuse an unknown key
//!   and show its fingerprint ([`HostKeyPolicy::Strict`]), trust it on first use
//!   ([`HostKeyPolicy::AcceptNew`]), or let a callback that sees ssh's prompt decide;
//! - it answers **password and passphrase prompts** with a [`Secret`] from a caller's
//!   callback ([`SshOptions::secrets`]), written to the terminal with echo off and never
//!   kept, logged or shown;
//! - failures are typed, with ssh's own message: [`Error::WrongPassword`],
//!   [`Error::AuthDenied`], [`Error::TooManyAuthFailures`], [`Error::ConnectionRefused`],
//!   [`Error::Unreachable`], [`Error::HostKeyUnknown`], [`Error::HostKeyChanged`];
//! - the server's banner and the MOTD end up in [`Ssh::greeting`], not in any result.
//!
//! Then [`Ssh::run`] runs a command in the remote shell and returns its output and exit
//! status ([`RunOutput`]), framed by markers with a fresh random token, so that prompts,
//! echo and earlier output never leak into it. [`Ssh::send`] and [`Ssh::tail`] pass
//! through to the facade for interactive use. A connection that drops surfaces as
//! [`Error::Disconnected`] on the next call, and [`Ssh::close`] leaves no local process.
//!
//! ```no_run
//! use pty_session::{Config, Owner, PtyService};
//! use pty_session_ssh::{HostKeyPolicy, Secret, Ssh, SshOptions};
//!
//! # async fn demo() -> Result<(), pty_session_ssh::Error> {
//! let pty = PtyService::new(Config::default());
//! let options = SshOptions::new("127.0.0.1")
//!     .port(2222)
//!     .user("ci")
//!     .known_hosts("/tmp/known_hosts")
//!     .host_key(HostKeyPolicy::AcceptNew)
//!     .secrets(|_prompt| std::env::var("CI_PASSWORD").ok().map(Secret::new));
//! let mut ssh = Ssh::connect(&pty, Owner::new("agent-1"), options).await?;
//! let uname = ssh.run("uname -s").await?;
//! assert_eq!((uname.output.as_str(), uname.exit_code), ("Linux\n", 0));
//! let missing = ssh.run("no-such-command").await?;
//! assert_eq!(missing.exit_code, 127);
//! ssh.close().await?;
//! # Ok(()) }
//! ```
//!
//! Limits: the remote login shell must be a POSIX shell (sh, dash, bash, ksh, zsh).
//! Commands and their input are typed into it as text lines of at most 4,000 bytes,
//! without control characters. A command's output that arrives in one burst larger than
//! the session's scrollback loses its oldest lines, which [`RunOutput::lines_lost`]
//! counts; so does a greeting (MOTD) that large, which then fails the connect.
#![deny(missing_docs)]

mod diagnosis;
mod error;
mod frame;
mod host_key;
mod options;
mod secret;
mod ssh;

pub use error::{Error, Result};
pub use host_key::{HostKeyPolicy, HostKeyPrompt};
pub use options::SshOptions;
pub use secret::{Secret, SecretKind, SecretPrompt};
pub use ssh::{RunOutput, Ssh};
