//! `pty-session`: parse the command line, run the chosen transport, print the error chain.

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser as _;
use pty_session::PtyService;
use pty_session_server::attach::{self, Remote};
use pty_session_server::cli::{Cli, Command};
use pty_session_server::http::ServeOptions;
use pty_session_server::{http, stdio};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Logs go to stderr: over stdio, stdout is the protocol. Clients show a server's
    // stderr to the person, so by default only warnings and errors; `serve` adds its own
    // start-up lines (the address, the token file). RUST_LOG asks for more.
    let default_filter = match cli.command {
        Command::Mcp { .. } => "warn",
        Command::Serve { .. } => "warn,pty_session_server=info",
        Command::Ls { .. } | Command::Attach { .. } => "warn",
    };
    pty_session_server::logging::init(default_filter);
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("pty-session: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(async {
        match cli.command {
            Command::Mcp { config } => {
                let settings = config.settings(None)?;
                if std::io::stdin().is_terminal() {
                    // A person typed `pty-session mcp`: say what it waits for.
                    eprint!("{}", stdio::greeting());
                }
                stdio::serve(
                    PtyService::new(settings.service),
                    settings.max_request_bytes,
                )
                .await
            }
            Command::Serve {
                serve,
                config,
                limits,
            } => {
                let settings = config.settings(Some(&limits))?;
                let options = ServeOptions {
                    listen: serve.listen,
                    tokens_file: serve.tokens,
                    token_env: std::env::var(pty_session_server::auth::TOKEN_ENV).ok(),
                    token_file: serve.token_file,
                    owner_idle_timeout: settings.owner_idle_timeout,
                    max_sessions: settings.service.max_sessions,
                    limits: settings.http,
                };
                http::serve(PtyService::new(settings.service), options).await
            }
            Command::Ls { remote } => {
                let remote = Remote::new(&remote.url, remote.token_file.as_deref())?;
                attach::ls(&remote).await
            }
            Command::Attach { remote, id } => {
                let remote = Remote::new(&remote.url, remote.token_file.as_deref())?;
                attach::attach(&remote, &id).await
            }
        }
    });
    // Every session is closed by now; do not wait for a blocking read of stdin.
    runtime.shutdown_timeout(Duration::from_millis(500));
    result
}
