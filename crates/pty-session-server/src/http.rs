//! `pty-session serve`: MCP streamable HTTP at `/mcp`, behind a gate that checks the
//! `Origin` (403 unless loopback) and the bearer token (401 unless valid), and that ties
//! each legacy MCP session to the principal that opened it.
//!
//! Both the current protocol (2026-07-28, no sessions: rmcp builds a handler per request)
//! and older ones with `Mcp-Session-Id` are served by the same [`PtyTools`] over the same
//! service. DELETE of an MCP session disposes its owner; owners idle for
//! `ownerIdleTimeoutSecs` are disposed too.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, Method, StatusCode, header};
use pty_session::{PtyService, limits};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::auth::{self, Tokens};
use crate::owner::{MCP_SESSION_ID, Owners, Principal, http_owner};
use crate::tools::PtyTools;

/// How `serve` listens and authenticates.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: SocketAddr,
    /// The `--tokens` file.
    pub tokens_file: Option<PathBuf>,
    /// The value of `PTY_SESSION_TOKEN`.
    pub token_env: Option<String>,
    /// Where a generated token goes (default [`auth::default_token_path`]).
    pub token_file: Option<PathBuf>,
    pub owner_idle_timeout: Option<Duration>,
}

/// What the gate needs for every request.
struct Gate {
    tokens: Tokens,
    service: PtyService,
    owners: Owners,
    /// The principal that opened each legacy MCP session, and when the session was last
    /// used. A std mutex: it is held only to read or update the map, never across an await.
    mcp_sessions: Mutex<HashMap<String, (Principal, Instant)>>,
    /// How long rmcp keeps an unused MCP session; a binding unused for longer is dropped.
    mcp_keep_alive: Duration,
}

impl Gate {
    /// The principal that opened MCP session `id`, if it is known; marks it used.
    fn opened_by(&self, id: &str) -> Option<Principal> {
        let mut sessions = self.mcp_sessions.lock().expect("mcp sessions lock");
        let (principal, seen) = sessions.get_mut(id)?;
        *seen = Instant::now();
        Some(principal.clone())
    }

    /// Ties MCP session `id` to `principal`, forgetting sessions rmcp has expired by now.
    fn bind(&self, id: String, principal: &Principal) {
        let mut sessions = self.mcp_sessions.lock().expect("mcp sessions lock");
        sessions.retain(|_, (_, seen)| seen.elapsed() < self.mcp_keep_alive);
        sessions
            .entry(id)
            .or_insert_with(|| (principal.clone(), Instant::now()));
    }

    fn unbind(&self, id: &str) {
        self.mcp_sessions
            .lock()
            .expect("mcp sessions lock")
            .remove(id);
    }
}

/// Serves until SIGTERM or SIGINT, then closes every session.
pub async fn serve(service: PtyService, options: ServeOptions) -> anyhow::Result<()> {
    let configured = Tokens::configured(options.tokens_file.as_deref(), options.token_env)?;
    if configured.is_empty() && !options.listen.ip().is_loopback() {
        bail!(
            "refusing to listen on {} without configured tokens: anyone who can reach it could \
             run commands; give --tokens FILE or set {}, or listen on 127.0.0.1",
            options.listen,
            auth::TOKEN_ENV
        );
    }
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .with_context(|| format!("cannot listen on {}", options.listen))?;
    let local = listener.local_addr().context("no local address")?;
    let tokens = if configured.is_empty() {
        let path = options
            .token_file
            .unwrap_or_else(|| auth::default_token_path(local.port()));
        let tokens = Tokens::generated(&path)?;
        // The path, never the token: logs are often kept where others can read them.
        tracing::info!(path = %path.display(), "no tokens configured; the bearer token is in this file (mode 0600)");
        tokens
    } else {
        tracing::info!(principals = ?configured.principals(), "bearer tokens configured");
        configured
    };

    // rmcp ends a legacy MCP session after its keep-alive without traffic; it must outlive
    // the longest tool call (a send may wait 600 s), and need not end before the owner
    // would be disposed anyway.
    let longest_call = Duration::from_millis(limits::MAX_TIMEOUT_MS) + Duration::from_secs(60);
    let keep_alive = options
        .owner_idle_timeout
        .map_or(longest_call, |idle| idle.max(longest_call));
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(keep_alive);

    let stop = CancellationToken::new();
    let owners = Owners::default();
    let gate = Arc::new(Gate {
        tokens,
        service: service.clone(),
        owners: owners.clone(),
        mcp_sessions: Mutex::new(HashMap::new()),
        mcp_keep_alive: keep_alive,
    });
    let mut config =
        StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token());
    if !local.ip().is_loopback() {
        // rmcp accepts only loopback `Host` headers by default, against DNS rebinding of
        // an unauthenticated local server. Off loopback a token is always required, which
        // a rebinding page cannot present, so any Host may reach the token check.
        config = config.disable_allowed_hosts();
    }
    let mcp = {
        let service = service.clone();
        let owners = owners.clone();
        StreamableHttpService::new(
            move || Ok(PtyTools::http(service.clone(), owners.clone())),
            Arc::new(sessions),
            config,
        )
    };
    let app = axum::Router::new()
        .nest_service("/mcp", mcp)
        .layer(axum::middleware::from_fn_with_state(gate, check));

    if let Some(timeout) = options.owner_idle_timeout {
        tokio::spawn(owners.dispose_idle(service.clone(), timeout, stop.clone()));
    }
    tracing::info!("listening on http://{local}/mcp");

    let server = axum::serve(listener, app).with_graceful_shutdown(stop.clone().cancelled_owned());
    let mut server = std::pin::pin!(server.into_future());
    tokio::select! {
        result = &mut server => result.context("HTTP server failed")?,
        signal = crate::stop_signal() => {
            tracing::info!(%signal, "stopping: closing every session");
            stop.cancel();
            // Open SSE streams end with the MCP sessions; do not wait forever on a client
            // that keeps its connection.
            if tokio::time::timeout(Duration::from_secs(5), &mut server).await.is_err() {
                tracing::warn!("connections still open after 5 s; closing sessions anyway");
            }
        }
    }
    stop.cancel();
    service.shutdown().await;
    Ok(())
}

/// The gate in front of `/mcp`: Origin, then token, then MCP-session ownership.
async fn check(State(gate): State<Arc<Gate>>, mut request: Request, next: Next) -> Response {
    if let Some(origin) = request.headers().get(header::ORIGIN)
        && !is_loopback_origin(origin.as_bytes())
    {
        tracing::warn!(origin = ?origin, "refused a request from a non-loopback Origin");
        return (
            StatusCode::FORBIDDEN,
            "403 Forbidden: the Origin is not a loopback address\n",
        )
            .into_response();
    }
    let Some(principal) = gate
        .tokens
        .authenticate(request.headers().get(header::AUTHORIZATION))
    else {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "401 Unauthorized: send Authorization: Bearer <token>\n",
        )
            .into_response();
    };
    let mcp_session = mcp_session_id(request.headers());
    if let Some(id) = &mcp_session
        && gate.opened_by(id).is_some_and(|p| p != principal)
    {
        // Another token's session: answer as for an unknown one, which it is to us.
        return (
            StatusCode::NOT_FOUND,
            "404 Not Found: no such MCP session\n",
        )
            .into_response();
    }
    let deleting = request.method() == Method::DELETE;
    request.extensions_mut().insert(principal.clone());
    let response = next.run(request).await;

    if let Some(id) = mcp_session_id(response.headers()) {
        gate.bind(id, &principal);
    }
    if deleting
        && response.status().is_success()
        && let Some(id) = mcp_session
    {
        gate.unbind(&id);
        let owner = http_owner(&principal, Some(&id));
        tracing::info!(%owner, "MCP session deleted; closing its sessions");
        gate.owners.forget(&owner);
        gate.service.dispose(&owner).await;
        // rmcp answers 202 Accepted; the work is done by now (the processes are reaped),
        // and clients such as the Python SDK expect 200 or 204 for a terminated session.
        if response.status() == StatusCode::ACCEPTED {
            return StatusCode::NO_CONTENT.into_response();
        }
    }
    response
}

fn mcp_session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get(MCP_SESSION_ID)?
        .to_str()
        .ok()
        .map(str::to_owned)
}

/// Whether an `Origin` (`scheme://host[:port]`) names this machine: `localhost`, a
/// `*.localhost` name, or a loopback address. `null` and anything unparsable do not.
fn is_loopback_origin(origin: &[u8]) -> bool {
    let Ok(origin) = std::str::from_utf8(origin) else {
        return false;
    };
    let Some((_scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let host = if let Some(bracketed) = authority.strip_prefix('[') {
        match bracketed.split_once(']') {
            Some((host, _port)) => host,
            None => return false,
        }
    } else {
        authority
            .rsplit_once(':')
            .map_or(authority, |(host, _port)| host)
    };
    let host = host.to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::is_loopback_origin;

    #[test]
    fn loopback_origins() {
        for yes in [
            "http://localhost",
            "http://localhost:3000",
            "https://app.localhost:8443",
            "http://127.0.0.1:7717",
            "http://127.8.9.10",
            "http://[::1]:7717",
            "HTTP://LOCALHOST",
        ] {
            assert!(is_loopback_origin(yes.as_bytes()), "{yes}");
        }
        for no in [
            "null",
            "https://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.nip.io",
            "http://[::2]",
            "http://10.0.0.1:7717",
            "localhost",
            "",
        ] {
            assert!(!is_loopback_origin(no.as_bytes()), "{no}");
        }
    }
}
