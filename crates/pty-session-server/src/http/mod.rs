//! `pty-session serve`: MCP streamable HTTP at `/mcp`, behind the front every route has
//! ([`crate::http::front`]: Host and Origin) and a gate that checks the bearer token (401 unless
//! valid) and ties each legacy MCP session to the principal that opened it.
//!
//! Both the current protocol (2026-07-28, no sessions: rmcp builds a handler per request)
//! and older ones with `Mcp-Session-Id` are served by the same [`PtyTools`] over the same
//! service, and the owner is the token for all of them: an MCP session is a connection,
//! which DELETE or its expiry after `mcpSessionIdleSecs` without a request ends
//! ([`crate::http::sessions`]) without closing any PTY session. Owners idle for
//! `ownerIdleTimeoutSecs` are disposed. Clients of versions before 2025-11-25 get no SSE
//! priming events ([`crate::http::priming`]), and a resumed stream the server no longer holds
//! is answered empty without a warning ([`crate::http::resume`]). Connections are served under a cap and timeouts
//! ([`crate::http::connections`]); POST bodies are read here, within a size and a time, and one
//! that is not JSON gets a JSON-RPC parse error.

pub(crate) mod auth;
pub(crate) mod connections;
pub(crate) mod front;
pub(crate) mod priming;
pub(crate) mod proof;
pub(crate) mod refusal;
pub(crate) mod resume;
pub(crate) mod sessions;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, Method, StatusCode, header};
use pty_session::{PtyService, limits};
use rmcp::transport::streamable_http_server::session::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use self::auth::Tokens;
use self::connections::{ConnectionLimits, Connections, hold_until_sent};
use self::front::Front;
use self::refusal::Cause;
use self::sessions::McpSessions;
use crate::logs;
use crate::mcp::owner::{MCP_SESSION_ID, Owners, Principal};
use crate::mcp::tools::{PtyTools, Stopping};

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
    /// The service's `maxSessions`, whose descriptors the connection cap leaves alone.
    pub max_sessions: usize,
    pub limits: HttpLimits,
}

/// The limits `serve` holds clients to (see the configuration keys of the same names).
#[derive(Debug, Clone, Copy)]
pub struct HttpLimits {
    /// `maxConnections`; `None`: sized by the limit of open files.
    pub max_connections: Option<usize>,
    /// `maxConnectionsPerToken`; `None`: a quarter of the connection cap.
    pub max_connections_per_token: Option<usize>,
    /// `maxStreamsPerToken`: live lists and terminal streams one token may hold open.
    pub max_streams_per_token: usize,
    /// `httpIdleTimeoutSecs`: a connection without a whole request head for this long is
    /// closed (one that sends nothing or dribbles, or one kept alive between requests).
    pub idle_timeout: Duration,
    /// `httpBodyTimeoutSecs`: how long a request body may take to arrive.
    pub body_timeout: Duration,
    /// `maxRequestBytes`: the largest request body.
    pub max_body_bytes: usize,
    /// `maxMcpSessionsPerToken`.
    pub max_mcp_sessions_per_token: usize,
    /// `mcpSessionIdleSecs`: an MCP session without a request for this long is closed.
    pub mcp_session_idle: Duration,
}

/// What the gate needs for every request.
struct Gate {
    tokens: Arc<Tokens>,
    /// The legacy MCP sessions and the principal that opened each.
    mcp: McpSessions,
    /// rmcp's sessions, to close the ones that expire.
    manager: Arc<resume::Resumable>,
    limits: HttpLimits,
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
        let path = match options.token_file {
            Some(path) => path,
            None => auth::default_token_path(local.port()).context(
                "no place for a generated token: give --token-file PATH, or configure tokens \
                 (--tokens FILE or PTY_SESSION_TOKEN)",
            )?,
        };
        let tokens = Tokens::generated(&path)?;
        // The path, never the token: logs are often kept where others can read them.
        tracing::info!(target: logs::STARTUP, path = %path.display(), "no tokens configured; the bearer token is in this file (mode 0600)");
        tokens
    } else {
        tracing::info!(target: logs::STARTUP, principals = ?configured.principals(), "bearer tokens configured");
        configured
    };
    let limits = options.limits;
    let max_connections = connection_cap(limits.max_connections, options.max_sessions);
    let connection_limits = ConnectionLimits {
        max_connections,
        idle_timeout: limits.idle_timeout,
        max_per_token: limits
            .max_connections_per_token
            .unwrap_or_else(|| connections::default_max_per_token(max_connections)),
    };

    // rmcp ends a legacy MCP session after its keep-alive without a message, even in the
    // middle of a call; the gate expires idle sessions itself (it sees calls in flight),
    // so rmcp's keep-alive is only a backstop beyond the longest call.
    let longest_call = Duration::from_millis(limits::MAX_TIMEOUT_MS) + Duration::from_secs(60);
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(longest_call.max(limits.mcp_session_idle * 2));
    let manager = Arc::new(resume::Resumable(sessions));

    // `stop` ends rmcp's streams and sessions and the background tasks; `stopping` the
    // tool calls, first.
    let stop = CancellationToken::new();
    let stopping = Stopping::default();
    let owners = Owners::default();
    let tokens = Arc::new(tokens);
    // The web view's live lists and terminal streams end with the tool calls, first:
    // they would otherwise hold their connections open through the graceful close.
    let web_stop = CancellationToken::new();
    let web = Arc::new(crate::people::web::Web::new(
        tokens.clone(),
        service.clone(),
        owners.clone(),
        web_stop.clone(),
        // A live list holds a connection without counting against its token's requests
        // in flight: at most as many streams as requests keeps a token within half the
        // connections (twice a quarter) by default.
        limits
            .max_streams_per_token
            .min(connection_limits.max_per_token),
    ));
    let proofs = crate::http::proof::router(tokens.clone());
    let gate = Arc::new(Gate {
        tokens,
        mcp: McpSessions::new(limits.max_mcp_sessions_per_token, limits.mcp_session_idle),
        manager: manager.clone(),
        limits,
    });
    // rmcp's own Host check is off: the front applies one rule to every route, `/mcp`
    // and the web view alike.
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_max_request_body_bytes(limits.max_body_bytes)
        .disable_allowed_hosts();
    let front = Front {
        loopback_host: local.ip().is_loopback(),
    };
    let mcp = {
        let service = service.clone();
        let owners = owners.clone();
        let stopping = stopping.clone();
        StreamableHttpService::new(
            move || {
                Ok(PtyTools::http(
                    service.clone(),
                    owners.clone(),
                    stopping.clone(),
                ))
            },
            manager,
            config,
        )
    };
    let app = axum::Router::new()
        .nest_service("/mcp", mcp)
        .layer(axum::middleware::from_fn_with_state(gate.clone(), check))
        .merge(crate::people::web::router(web))
        .merge(proofs)
        .layer(axum::middleware::from_fn_with_state(front, front::check));

    if let Some(timeout) = options.owner_idle_timeout {
        tokio::spawn(owners.dispose_idle(service.clone(), timeout, stop.clone()));
    }
    tokio::spawn(expire_mcp_sessions(gate, stop.clone()));
    tracing::info!(
        target: logs::STARTUP,
        "at most {} requests in flight and {} streams a token; at most {} connections; listening on http://{local}/mcp",
        connection_limits.max_per_token,
        limits.max_streams_per_token.min(connection_limits.max_per_token),
        connection_limits.max_connections
    );
    tracing::info!(target: logs::STARTUP, "the web view for people is at http://{local}/");

    let connections = Connections::new(connection_limits);
    let accepting = CancellationToken::new();
    let serving = connections.serve(listener, app, accepting.clone());
    let signal = tokio::select! {
        () = serving => unreachable!("the accept loop ends only when told"),
        signal = crate::stop_signal() => signal,
    };
    tracing::info!(%signal, "stopping: closing every session");
    // Calls in flight end with CANCELLED and their replies go out; then the connections
    // close as their responses end, and rmcp's streams (the SSE of MCP sessions) end.
    stopping.stop();
    web_stop.cancel();
    if tokio::time::timeout(Duration::from_secs(5), stopping.calls_ended())
        .await
        .is_err()
    {
        tracing::warn!("tool calls still running after 5 s; stopping anyway");
    }
    accepting.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(1), connections.closed()).await;
    stop.cancel();
    if tokio::time::timeout(Duration::from_secs(5), connections.closed())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after 5 s; closing sessions anyway");
    }
    service.shutdown().await;
    Ok(())
}

/// The connection cap: `configured`, or sized by the soft limit of open files after the
/// share of `max_sessions` sessions; the limit is raised for it as far as allowed.
fn connection_cap(configured: Option<usize>, max_sessions: usize) -> usize {
    let reserved = pty_session::nofile::needed_for(max_sessions);
    let wanted = configured.unwrap_or(connections::DEFAULT_MAX_CONNECTIONS);
    let soft = pty_session::nofile::raise_to(reserved.saturating_add(wanted as u64));
    match configured {
        Some(cap) => {
            if soft.is_some_and(|soft| soft < reserved.saturating_add(cap as u64)) {
                tracing::warn!(
                    max_connections = cap,
                    soft_limit = soft,
                    "the limit of open files leaves less room for sessions than maxSessions needs"
                );
            }
            cap
        }
        None => connections::default_max_connections(soft, reserved),
    }
}

/// Closes the legacy MCP sessions idle for `mcpSessionIdleSecs` (their token's PTY sessions
/// stay), a few times per idle period, until `stop`.
async fn expire_mcp_sessions(gate: Arc<Gate>, stop: CancellationToken) {
    let period = (gate.mcp.idle() / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticks.tick() => {}
        }
        for (id, principal) in gate.mcp.take_expired(Instant::now()) {
            tracing::debug!(principal = %principal.0, mcp_session = %id, idle_secs = gate.mcp.idle().as_secs(), "MCP session idle; closing it");
            if let Err(err) = gate.manager.close_session(&Arc::from(id.as_str())).await {
                tracing::warn!(principal = %principal.0, mcp_session = %id, %err, "cannot close an idle MCP session");
            }
        }
    }
}

/// The gate of `/mcp`, behind the front: token, then MCP-session ownership, then the
/// body of a POST (its size, its time, whether it is JSON) and the token's MCP sessions.
async fn check(State(gate): State<Arc<Gate>>, mut request: Request, next: Next) -> Response {
    let Some(principal) = gate
        .tokens
        .authenticate(request.headers().get(header::AUTHORIZATION))
    else {
        let (challenge, body) = auth::refusal(request.headers().get(header::AUTHORIZATION));
        let refused = (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, challenge)],
            body,
        );
        return refusal::refuse(refused.into_response(), Cause::Unauthorized);
    };
    if let Err(at_cap) = connections::authorize(request.extensions(), &principal.0) {
        return at_cap.response();
    }
    let mcp_session = mcp_session_id(request.headers());
    let mut in_flight = None;
    if let Some(id) = &mcp_session {
        match gate.mcp.opened_by(id) {
            // Another token's session: answer as for an unknown one, which it is to us.
            Some(opener) if opener != principal => {
                return (
                    StatusCode::NOT_FOUND,
                    "404 Not Found: no such MCP session\n",
                )
                    .into_response();
            }
            Some(_) => in_flight = gate.mcp.begin(id),
            None => {}
        }
    }
    let mut slot = None;
    let mut checked_json = false;
    let mut version = priming::header_version(request.headers()).map(str::to_owned);
    if request.method() == Method::POST && is_json(request.headers()) {
        let (parts, body) = request.into_parts();
        let bytes = match read_body(&gate.limits, body).await {
            Ok(bytes) => bytes,
            Err(response) => return response,
        };
        pty_session::timeline::mark("http.body");
        let peek = match peek(&bytes) {
            Ok(peek) => peek,
            Err(err) => {
                tracing::info!(principal = %principal.0, %err, "answered a request body that is not JSON with a parse error");
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    serde_json::Value::Null,
                    -32700,
                    &format!("Parse error: the request body is not JSON ({err})"),
                );
            }
        };
        checked_json = true;
        if mcp_session.is_none() && peek.method.as_deref() == Some("initialize") {
            version = requested_version(&bytes);
            match gate.mcp.reserve(&principal) {
                Ok(reserved) => slot = Some(reserved),
                Err(open) => {
                    let response = session_limit(&gate, &principal, open, peek.id);
                    let detail = format!(" (token {:?}, {open} open)", &*principal.0);
                    return refusal::refuse_with(response, Cause::McpSessionLimit, detail);
                }
            }
        }
        request = Request::from_parts(parts, Body::from(bytes));
    }
    let deleting = request.method() == Method::DELETE;
    request.extensions_mut().insert(principal.clone());
    let mut response = next.run(request).await;
    if pty_session::timeline::enabled() {
        use http_body_util::BodyExt as _;
        pty_session::timeline::mark("http.response");
        response = response.map(|body| {
            Body::new(body.map_frame(|frame| {
                pty_session::timeline::mark("http.frame");
                frame
            }))
        });
    }

    if checked_json && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        // rmcp's answer to JSON that is not a JSON-RPC message.
        response = rpc_error(
            StatusCode::BAD_REQUEST,
            serde_json::Value::Null,
            -32600,
            "Invalid Request: the body is JSON but not a JSON-RPC message",
        );
    }
    if let Some(id) = mcp_session_id(response.headers())
        && gate.mcp.opened_by(&id).is_none()
    {
        gate.mcp.bind(id, &principal, slot);
    }
    if deleting
        && response.status().is_success()
        && let Some(id) = mcp_session
    {
        // The connection ends; the token's PTY sessions stay (an owner is the token).
        gate.mcp.unbind(&id);
        tracing::debug!(principal = %principal.0, mcp_session = %id, "MCP session deleted");
        // rmcp answers 202 Accepted; the session is gone by now, and clients such as the
        // Python SDK expect 200 or 204 for a terminated session.
        if response.status() == StatusCode::ACCEPTED {
            return StatusCode::NO_CONTENT.into_response();
        }
    }
    if !priming::defined_for(version.as_deref()) {
        response = priming::without_priming(response);
    }
    match in_flight {
        Some(in_flight) => hold_until_sent(response, in_flight),
        None => response,
    }
}

/// Whether a request says its body is JSON (else rmcp answers 415 itself).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split(';').next().unwrap_or_default();
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// How much of a body past `maxRequestBytes` is read and dropped before the 413 goes out.
/// A client that writes its whole request before it reads (most do) would otherwise meet
/// a connection reset instead of the answer: closing a socket with unread bytes resets it.
const DRAIN_BYTES: usize = 64 * 1024 * 1024;

/// Reads a request body within `maxRequestBytes` and `httpBodyTimeoutSecs`. A body too
/// large is read on and dropped, up to [`DRAIN_BYTES`] more and within the same time,
/// so that its client reads the 413.
async fn read_body(limits: &HttpLimits, body: Body) -> Result<Bytes, Response> {
    let deadline = tokio::time::Instant::now() + limits.body_timeout;
    let mut read = BodyRead::default();
    let outcome =
        tokio::time::timeout_at(deadline, read.collect(body, limits.max_body_bytes)).await;
    let timed_out = || {
        (
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "408 Request Timeout: the request body did not arrive within {} s \
                 (httpBodyTimeoutSecs)\n",
                limits.body_timeout.as_secs()
            ),
        )
            .into_response()
    };
    match outcome {
        Ok(Ok(())) if read.total <= limits.max_body_bytes => Ok(read.kept.freeze()),
        Ok(Ok(())) => Err(too_large(limits)),
        // Past the drain's bound, or out of time while draining: the answer goes out all
        // the same (the client may miss it).
        Err(_) if read.total > limits.max_body_bytes => Err(too_large(limits)),
        Err(_) => Err(timed_out()),
        Ok(Err(err)) => Err((
            StatusCode::BAD_REQUEST,
            format!("400 Bad Request: cannot read the request body: {err}\n"),
        )
            .into_response()),
    }
}

/// What [`read_body`] has read so far.
#[derive(Default)]
struct BodyRead {
    /// The body, while it is within the limit.
    kept: bytes::BytesMut,
    /// Bytes read in all.
    total: usize,
}

impl BodyRead {
    /// Reads `body` to its end, keeping it while it is within `limit`; past the limit it
    /// reads on without keeping, and stops after [`DRAIN_BYTES`] more.
    async fn collect(&mut self, mut body: Body, limit: usize) -> Result<(), axum::Error> {
        use http_body_util::BodyExt as _;
        while let Some(frame) = body.frame().await {
            let Ok(data) = frame?.into_data() else {
                continue;
            };
            self.total = self.total.saturating_add(data.len());
            if self.total <= limit {
                self.kept.extend_from_slice(&data);
            } else {
                self.kept = bytes::BytesMut::new();
                if self.total - limit > DRAIN_BYTES {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// The answer to a body past `maxRequestBytes`.
fn too_large(limits: &HttpLimits) -> Response {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "413 Payload Too Large: a request body may have at most {} bytes \
             (maxRequestBytes)\n",
            limits.max_body_bytes
        ),
    )
        .into_response()
}

/// What the gate looks at in a JSON-RPC request body: its method and id.
#[derive(Debug, Default, Deserialize)]
struct Peek {
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    id: Option<serde_json::Value>,
}

/// The protocol version an `initialize` body asks for (and gets: rmcp answers with the
/// version asked for when it knows it), if it names one.
fn requested_version(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Initialize {
        params: Params,
    }
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "protocolVersion")]
        protocol_version: String,
    }
    let initialize: Initialize = serde_json::from_slice(body).ok()?;
    Some(initialize.params.protocol_version)
}

/// The method and id of a body, `Peek::default()` for JSON of another shape, an error for
/// a body that is not JSON. One pass over the body when it is an object.
fn peek(body: &[u8]) -> Result<Peek, serde_json::Error> {
    match serde_json::from_slice::<Peek>(body) {
        Ok(peek) => Ok(peek),
        Err(err) if err.is_data() => {
            serde_json::from_slice::<serde::de::IgnoredAny>(body)?;
            Ok(Peek::default())
        }
        Err(err) => Err(err),
    }
}

/// A JSON-RPC error response.
fn rpc_error(status: StatusCode, id: serde_json::Value, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The answer to an `initialize` of a token that has all the MCP sessions it may.
fn session_limit(
    gate: &Gate,
    principal: &Principal,
    open: usize,
    id: Option<serde_json::Value>,
) -> Response {
    let message = format!(
        "SESSION_LIMIT: token {:?} has {open} open MCP sessions, the most it may \
         (maxMcpSessionsPerToken = {}); end sessions you no longer use with DELETE, or wait \
         until idle ones close after {} s (mcpSessionIdleSecs)",
        &*principal.0,
        gate.mcp.max_per_token(),
        gate.mcp.idle().as_secs()
    );
    // 200 with a JSON-RPC error: every client shows that to its user, some drop the body
    // of a 429.
    rpc_error(
        StatusCode::OK,
        id.unwrap_or(serde_json::Value::Null),
        -32000,
        &message,
    )
}

fn mcp_session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get(MCP_SESSION_ID)?
        .to_str()
        .ok()
        .map(str::to_owned)
}
