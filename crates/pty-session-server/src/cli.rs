//! The command line: `pty-session mcp` and `pty-session serve`, with their help.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::{ConfigArgs, ServeFlags};

/// Long-lived interactive processes on pseudo-terminals for AI agents, as six MCP tools:
/// pty_open, pty_send, pty_tail, pty_screen, pty_list and pty_close.
#[derive(Debug, Parser)]
#[command(
    name = "pty-session",
    version,
    long_about = "Long-lived interactive processes on pseudo-terminals for AI agents, as six MCP \
                  tools.\n\n\
                  An agent opens a shell, a REPL, a debugger, ssh or a database console with \
                  pty_open, types into it with pty_send (which waits until the output settled, \
                  e.g. at the next prompt), reads more output with pty_tail, shows the terminal window \
                  with pty_screen, lists its sessions with pty_list and kills the whole \
                  process tree with pty_close. Output comes as terminal-rendered lines, each \
                  delivered once; the unfinished last line (a prompt) is `pending`.",
    after_help = "Examples:\n  \
                  pty-session mcp                      # for an agent that starts its MCP servers itself\n  \
                  pty-session serve                    # http://127.0.0.1:7717/mcp, token in a 0600 file\n  \
                  PTY_SESSION_TOKEN=... pty-session serve --listen 0.0.0.0:7717\n\n\
                  Logs go to stderr; set RUST_LOG (e.g. RUST_LOG=debug) for more."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdio, for one agent that starts the server itself
    #[command(
        long_about = "Serve MCP over stdio: the agent (Claude Code, Codex, Goose, ...) \
                            starts `pty-session mcp` and talks JSON-RPC on its stdin and \
                            stdout. That agent is the one owner of every session. When stdin \
                            ends, or on SIGTERM/SIGINT, every session's process tree is killed \
                            before exit."
    )]
    Mcp {
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Serve MCP over streamable HTTP at /mcp, for several agents with bearer tokens
    #[command(
        long_about = "Serve MCP over streamable HTTP at http://<listen>/mcp, for the \
                            current protocol (2026-07-28, without sessions) and for clients that \
                            negotiate older versions with Mcp-Session-Id.\n\n\
                            Every request needs `Authorization: Bearer <token>` (else 401); a \
                            request whose Origin is not loopback gets 403. Each token is one \
                            owner: its sessions are invisible to other tokens. A client with an \
                            MCP session is narrowed to that session, and DELETE of the session \
                            closes its PTY sessions, as does --mcp-session-idle-secs without a \
                            request. An owner without a call for --owner-idle-timeout-secs is \
                            closed too.\n\n\
                            With no token configured, one is generated and written to a file \
                            only you can read (its path is logged); binding a non-loopback \
                            address needs configured tokens."
    )]
    Serve {
        #[command(flatten)]
        serve: ServeArgs,
        #[command(flatten)]
        config: ConfigArgs,
        #[command(flatten)]
        limits: ServeFlags,
    },
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The address to listen on; a non-loopback one needs configured tokens
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7717")]
    pub listen: SocketAddr,
    /// A file of `name token` lines, one owner per line (# starts a comment). The
    /// environment variable PTY_SESSION_TOKEN adds one token, for owner "default"
    #[arg(long, value_name = "FILE")]
    pub tokens: Option<PathBuf>,
    /// Where to write the generated token when none is configured [default:
    /// $XDG_RUNTIME_DIR/pty-session/token-PORT, else ~/.local/state/pty-session/token-PORT]
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
}
