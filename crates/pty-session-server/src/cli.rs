//! The command line: `pty-session mcp` and `pty-session serve`, with their help.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::{ConfigArgs, PersistFlags, ServeFlags};

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
                  pty-session mcp --persist            # sessions outlive the agent's restarts\n  \
                  pty-session serve                    # http://127.0.0.1:7717/mcp, token in a 0600 file\n  \
                  PTY_SESSION_TOKEN=... pty-session serve --listen 0.0.0.0:7717\n  \
                  pty-session ls                       # your token's sessions on that server\n  \
                  pty-session attach p7k2m9q4          # watch and type in one; Ctrl-] detaches\n\n\
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
                            before exit.\n\n\
                            With --persist the sessions outlive it: they live in a background \
                            server of your user (started if none runs, reached over a 0600 \
                            Unix socket in $XDG_RUNTIME_DIR/pty-session), owned by --owner \
                            (default: the working directory), so a restarted agent finds them \
                            again. `pty-session ls --persist` lists them, `pty-session stop` \
                            closes them and stops that server."
    )]
    Mcp {
        #[command(flatten)]
        config: ConfigArgs,
        #[command(flatten)]
        persist: PersistFlags,
    },
    /// The background server of `mcp --persist` (started by it; not for people)
    #[command(hide = true)]
    PersistServer {
        #[command(flatten)]
        config: ConfigArgs,
        #[command(flatten)]
        persist: PersistFlags,
    },
    /// Close every session of the background server of `mcp --persist` and stop it
    #[command(
        long_about = "Close every session of your background server of `pty-session mcp \
                      --persist` (the one reached through $XDG_RUNTIME_DIR/pty-session, \
                      else ~/.local/state/pty-session) and wait until it has exited."
    )]
    Stop,
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
    /// List the sessions of your token on a running `pty-session serve`
    #[command(
        long_about = "List the sessions of your token on a running `pty-session serve`: \
                      those opened with the token and with its MCP sessions, each with its \
                      status, age, unread lines and whether it waits at a prompt."
    )]
    Ls {
        #[command(flatten)]
        remote: RemoteArgs,
        /// List the sessions of your background server of `mcp --persist` instead
        #[arg(long)]
        persist: bool,
    },
    /// Attach this terminal to a session on a running `pty-session serve`; Ctrl-] detaches
    #[command(
        long_about = "Attach this terminal to a session on a running `pty-session serve`, as \
                      the web view does in a browser: you see what the program writes and \
                      your keys go to it (they are never recorded, and reach an agent only if \
                      the program echoes them; a password prompt does not). The session \
                      follows your window's size.\n\n\
                      Press Ctrl-] to detach: the session keeps running. The terminal is put \
                      back as it was on every way out, SIGTERM, SIGINT and SIGHUP included."
    )]
    Attach {
        #[command(flatten)]
        remote: RemoteArgs,
        /// The session's id (see `pty-session ls`)
        id: String,
    },
}

/// How `ls` and `attach` reach the server.
#[derive(Debug, clap::Args)]
pub struct RemoteArgs {
    /// The server's address
    #[arg(long, value_name = "URL", default_value = crate::attach::DEFAULT_URL)]
    pub url: String,
    /// A file holding the token [default: $PTY_SESSION_TOKEN, else the token file a
    /// `serve` on the URL's port generated]
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
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
