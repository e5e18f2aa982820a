//! Persistent sessions: `pty-session mcp --persist` relays MCP to a per-user background
//! server that holds the sessions, so that they outlive the client that opened them.
//!
//! The background server (`server`) listens on a Unix socket in this user's private
//! directory ([`ownership::private_dir`](crate::ownership)) (0700; the socket
//! 0600) and serves only peers of its own user (`SO_PEERCRED`); its clients (`mcp
//! --persist`, `ls`, `attach`, `stop`) likewise trust the directory and the server only
//! by [`crate::ownership`]'s rule, before they say anything. It serves none more confined
//! than itself, such as a process of a sandboxed session ([`crate::persist::peer`]: by the
//! peer's own `no_new_privs`, seccomp and namespaces). Each connection starts
//! with one JSON line, a `Hello` (`protocol`): `mcp` (the server answers `ACK`, then MCP lines go
//! both ways, as over stdio, for the named owner), `ls`, `attach` (a person's terminal,
//! [`crate::persist::view`]) or `stop`. A client that finds no server starts one; the
//! server holds an exclusive lock on a file beside the socket while it runs, so of two
//! started at once one serves and the other exits, and a socket left by a dead server is
//! replaced. A server on its way out (idle, or stopped) may still take a connection it
//! never serves, or hold its lock a moment after its socket is gone: a client that gets
//! no `ACK`, or whose server exits without listening, starts a new one and goes on
//! (`client`).
//! The server closes an owner's sessions after `persistIdleSecs` without a call and
//! exits `persistExitSecs` after its last session and client are gone. If it dies, its
//! sessions die with it (the shims' rule), and each client goes on with a new one
//! (`relay`). The server is nobody's child (`server::detach`): no host's death takes it.

mod client;
pub(crate) mod peer;
mod protocol;
mod relay;
mod server;
pub(crate) mod view;

pub use client::{default_owner, stop};
pub(crate) use client::{open, sessions};
pub(crate) use protocol::{Hello, socket_path};
pub use relay::relay;
pub use server::{detach, serve};
