//! `pty-session`: parse the command line, run the chosen transport, print the error chain.

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser as _;
use pty_session::PtyService;
use pty_session_server::attach;
use pty_session_server::cli::{Cli, Command};
use pty_session_server::http::ServeOptions;
use pty_session_server::{http, logs, stdio};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The commands that start sessions take the token out of the environment first, so
    // that no session inherits it; `ls` and `attach` read it where they need it.
    let token_env = match cli.command {
        // SAFETY: nothing has started a thread yet: no runtime, no logger, no spawner.
        Command::Mcp { .. } | Command::Serve { .. } | Command::PersistServer { .. } => unsafe {
            pty_session_server::secrets::take_from_environment()
        },
        Command::Ls { .. } | Command::Attach { .. } | Command::Stop => None,
    };
    // Logs go to stderr: over stdio, stdout is the protocol. Clients show a server's
    // stderr to the person, so by default only warnings and errors; `serve` adds its own
    // start-up lines (the address, the token file). RUST_LOG asks for more.
    let default_filter = match cli.command {
        Command::Serve { .. } => format!("warn,{}=info", logs::STARTUP),
        Command::PersistServer { .. } => "warn,pty_session_server=info".to_owned(),
        Command::Mcp { .. } | Command::Stop | Command::Ls { .. } | Command::Attach { .. } => {
            "warn".to_owned()
        }
    };
    logs::init(&default_filter);
    if matches!(cli.command, Command::PersistServer { .. }) {
        // SAFETY: nothing has started a thread yet: no runtime, no spawner (the logger
        // writes from the calling thread).
        if let Some(code) = unsafe { pty_session_server::persist::detach() } {
            return code;
        }
    }
    match run(cli, token_env) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("pty-session: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli, token_env: Option<String>) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(async {
        if matches!(
            cli.command,
            Command::Mcp { .. } | Command::Serve { .. } | Command::PersistServer { .. }
        ) {
            tokio::spawn(pty_session_server::memory::return_freed());
        }
        match cli.command {
            Command::Mcp { config, persist } => {
                let settings = config.settings(None)?.with_persist_flags(&persist);
                if settings.persist.enabled {
                    let owner = match persist.owner {
                        Some(owner) => owner,
                        None => pty_session_server::persist::default_owner()?,
                    };
                    return pty_session_server::persist::relay(owner, &server_args()).await;
                }
                if std::io::stdin().is_terminal() {
                    // A person typed `pty-session mcp`: say what it waits for.
                    eprint!("{}", stdio::greeting());
                }
                stdio::serve(service(settings.service)?, settings.max_request_bytes).await
            }
            Command::Serve {
                serve,
                config,
                limits,
            } => {
                let mut settings = config.settings(Some(&limits))?;
                // The tokens this server reads, hidden like its other secrets.
                (settings.service.sandbox_hidden)
                    .extend(serve.tokens.iter().chain(&serve.token_file).cloned());
                let options = ServeOptions {
                    listen: serve.listen,
                    tokens_file: serve.tokens,
                    token_env,
                    token_file: serve.token_file,
                    owner_idle_timeout: settings.owner_idle_timeout,
                    max_sessions: settings.service.max_sessions,
                    limits: settings.http,
                };
                http::serve(service(settings.service)?, options).await
            }
            Command::PersistServer { config, persist } => {
                let settings = config.settings(None)?.with_persist_flags(&persist);
                pty_session_server::persist::serve(
                    service(settings.service)?,
                    settings.persist,
                    settings.max_request_bytes,
                )
                .await
            }
            Command::Stop => pty_session_server::persist::stop().await,
            Command::Ls { remote, persist } => pty_session_server::ls::ls(&remote, persist).await,
            Command::Attach {
                remote,
                persist,
                id,
            } => attach::attach(&remote, persist, &id).await,
        }
    });
    // Every session is closed by now (or, with --persist, kept by the background server); do not wait for a blocking read of stdin.
    runtime.shutdown_timeout(Duration::from_millis(500));
    result
}

/// The arguments of `mcp` for the background server it may start: its own, without
/// `--persist` and `--owner` (the server is not a client). It starts in this directory, so
/// a relative `--config` names the same file.
/// The library's service with the settings' config (checked already where it was read;
/// this says so again rather than panic should the two checks ever differ).
fn service(config: pty_session::Config) -> anyhow::Result<PtyService> {
    PtyService::try_new(config).context("invalid configuration")
}

fn server_args() -> Vec<String> {
    let mut args = std::env::args().skip_while(|arg| arg != "mcp").skip(1);
    let mut kept = Vec::new();
    while let Some(arg) = args.next() {
        if arg == "--persist" || arg.starts_with("--owner=") {
            continue;
        }
        if arg == "--owner" {
            args.next();
            continue;
        }
        kept.push(arg);
    }
    kept
}
