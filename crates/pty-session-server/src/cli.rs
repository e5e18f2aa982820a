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
                  pty-session ls                       # your sessions: on that server and the background one\n  \
                  pty-session attach p7k2m9q4          # watch and type in one; Ctrl-] detaches\n  \
                  pty-session stop                     # close the background server's sessions, stop it\n\n\
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
                            again. `pty-session ls` lists them, `pty-session attach ID` shows \
                            one in your terminal, `pty-session stop` closes them and stops \
                            that server."
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
                            owner, whatever protocol version its clients speak: its sessions are \
                            invisible to other tokens. An MCP session (Mcp-Session-Id, older \
                            protocols) is a connection, not an owner: DELETE of an MCP session, \
                            or its expiry after --mcp-session-idle-secs without a request, closes \
                            none of the token's sessions. An owner without a call for \
                            --owner-idle-timeout-secs is disposed: its sessions are closed.\n\n\
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
    /// List your sessions: on a running `pty-session serve` and on the background server
    #[command(
        long_about = "List your sessions, marked by where they live (WHERE): those of your \
                      token on a running `pty-session serve` (`serve`: opened with the token \
                      and with its MCP sessions) and those of the background server of `mcp \
                      --persist` (`persist:` and their owner, the project directory), each \
                      with its status, age, unread lines and the prompt it waits at.\n\n\
                      Without options both are asked: the background server, and a `serve` \
                      on the default URL if one listens there. --url or --token-file ask \
                      that `serve` alone, --persist the background server alone. Another \
                      program at the default URL (one that is not a `serve`) is named, and \
                      the background server's sessions are still listed. Fails when nothing \
                      runs, or when one that runs cannot be asked (a missing token)."
    )]
    Ls {
        #[command(flatten)]
        remote: RemoteArgs,
        /// Ask only your background server of `mcp --persist`
        #[arg(long, conflicts_with_all = ["url", "token_file"])]
        persist: bool,
    },
    /// Attach this terminal to a session, on `pty-session serve` or the background server; Ctrl-] detaches
    #[command(
        long_about = "Attach this terminal to a session, as the web view does in a browser: \
                      you see what the program writes and your keys go to it (they are never \
                      recorded, and reach an agent only if the program echoes it; a password \
                      prompt does not). The session follows your window's size.\n\n\
                      The session is looked for on your background server of `mcp --persist` \
                      first, then on a running `pty-session serve` (default URL); --url or \
                      --token-file ask that `serve` alone, --persist the background server \
                      alone.\n\n\
                      Press Ctrl-] to detach: the session keeps running. The terminal is put \
                      back as it was on every way out, SIGTERM, SIGINT and SIGHUP included."
    )]
    Attach {
        #[command(flatten)]
        remote: RemoteArgs,
        /// Look only on your background server of `mcp --persist`
        #[arg(long, conflicts_with_all = ["url", "token_file"])]
        persist: bool,
        /// The session's id (see `pty-session ls`)
        id: String,
    },
}

/// How `ls` and `attach` reach the server.
#[derive(Debug, clap::Args)]
pub struct RemoteArgs {
    /// The address of a `pty-session serve` [default: $PTY_SESSION_URL, else
    /// http://127.0.0.1:7717]. The server must prove it holds your token before it is sent
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// A file holding the token, yours and writable by no one else [default:
    /// $PTY_SESSION_TOKEN, else the token file a `serve` on the URL's port generated]
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}

/// Where `serve` listens unless told, and where `ls` and `attach` look for it.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7717";

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The address to listen on; a non-loopback one needs configured tokens
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// A file of `name token` lines, one owner per line (# starts a comment), yours and
    /// writable by no one else. The environment variable PTY_SESSION_TOKEN adds one token,
    /// for owner "default"
    #[arg(long, value_name = "FILE")]
    pub tokens: Option<PathBuf>,
    /// Where to write the generated token when none is configured, in a directory of
    /// yours that no one else can write [default: $XDG_RUNTIME_DIR/pty-session/token-PORT,
    /// else ~/.local/state/pty-session/token-PORT; neither set: an error, no /tmp]
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::Cli;

    /// `text` with its runs of white space made one space and without Markdown's `**`.
    fn flat(text: &str) -> String {
        text.replace("**", "")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// What `serve --help` says of owners and MCP sessions is what docs/configuration.md
    /// says: each claim is in both, and the old rules (an MCP session narrowing the owner,
    /// DELETE closing sessions) in neither.
    #[test]
    fn serve_help_says_what_the_docs_say_of_owners() {
        let command = Cli::command();
        let serve = command
            .find_subcommand("serve")
            .expect("a serve subcommand");
        let help = flat(&serve.get_long_about().expect("a long help").to_string());
        let docs = flat(include_str!("../../../docs/configuration.md"));
        for claim in [
            "Each token is one owner, whatever protocol version its clients speak",
            "is a connection, not an owner",
            "DELETE of an MCP session, or its expiry",
            "closes none of",
        ] {
            assert!(help.contains(claim), "serve --help lacks {claim:?}: {help}");
            assert!(
                docs.contains(claim),
                "docs/configuration.md lacks {claim:?}"
            );
        }
        for flag in ["--mcp-session-idle-secs", "--owner-idle-timeout-secs"] {
            assert!(help.contains(flag), "serve --help lacks {flag}");
            assert!(docs.contains(&format!("`{flag}`")), "the docs lack {flag}");
        }
        for stale in [
            "narrowed",
            "closes its PTY sessions",
            "DELETE of the session",
        ] {
            assert!(!help.contains(stale), "serve --help still says {stale:?}");
            assert!(!docs.contains(stale), "the docs still say {stale:?}");
        }
    }
}
