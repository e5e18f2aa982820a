//! People beside the agent over HTTP: the web view at `/` and the API it, `pty-session ls`
//! and `pty-session attach` use, next to `/mcp` on `serve`.
//!
//! - `GET /`, `/app.js`, `/safe.js`, `/style.css`, `/vendor/xterm.{js,css}`: the page,
//!   embedded in the binary, with a Content-Security-Policy that allows nothing but this
//!   origin.
//! - `GET /api/sessions`: the token's sessions as JSON; `GET /api/sessions/live`: the same
//!   list as server-sent events, a new one whenever it changes.
//! - `GET /api/me`: the name of the token signed in, `{"name": ...}`.
//! - `GET /api/sessions/{id}/stream`: a WebSocket. The server sends a `hello` text message
//!   (the window size), the session's recent lines (or, with the alternate screen on, its
//!   current screen, every cell in its colours, and the cursor) as one binary message,
//!   then the program's output as it comes, and `{"type":"resize","cols":..,"rows":..}`
//!   whenever the window's size changes, in order with the output. The client sends its
//!   keystrokes as binary messages and `{"type":"resize",...}` as text.
//!
//! The same front as `/mcp` ([`crate::http::front`]: the Host and Origin rules), and every API
//! call needs a token. A browser cannot set a header on a WebSocket, so there the token
//! may instead be the first message, `{"token":"..."}`; it is never in a URL. Streams are
//! counted apart while they wait for that message ([`crate::people::stream_slots`]). A token sees
//! the sessions of every owner of that token (its own and those of its MCP sessions), and
//! no other's.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{Extensions, HeaderMap, HeaderValue, StatusCode, header};
use pty_session::{Owner, PtyService, SessionId};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::http::auth::Tokens;
use crate::http::connections::{self, Connection};
use crate::http::refusal::{self, Cause};
use crate::mcp::owner::{Owners, Principal};
use crate::people::listing::Listing;
use crate::people::stream_slots::{self, StreamSlots, Waiting};
use crate::people::view_stream::{self, Incoming, Input, PersonSocket};
use crate::people::xterm::{XTERM_CSS, XTERM_JS};

const INDEX_HTML: &str = include_str!("../../web/index.html");
const APP_JS: &str = include_str!("../../web/app.js");
/// What the views show and send safely; the MCP App view inlines it too.
const SAFE_JS: &str = include_str!("../../web/safe.js");
const STYLE_CSS: &str = include_str!("../../web/style.css");
/// The tab's icon (an SVG, which browsers take at `/favicon.ico` too).
const FAVICON: &str = include_str!("../../web/favicon.svg");

/// The page's policy: scripts, styles and connections from this origin only, no plugins,
/// no framing. Inline *styles* are allowed because xterm.js's renderer writes its theme
/// and cell metrics into `<style>` elements; inline *script* never is.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self'; \
     object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

/// How often the live list looks for a change.
const LIVE_PERIOD: Duration = Duration::from_millis(250);

/// How long a WebSocket without the token header has to send it as its first message.
const AUTH_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest message a viewer may send: a paste of 1 MiB, as a send takes.
const MAX_MESSAGE_BYTES: usize = pty_session::limits::MAX_DATA_BYTES;

/// What the web routes need.
pub struct Web {
    pub tokens: Arc<Tokens>,
    pub service: PtyService,
    pub owners: Owners,
    /// Ends the live lists and the streams when the server stops.
    pub stop: CancellationToken,
    streams: StreamSlots,
}

impl Web {
    /// The web routes' state; each token may have `streams_per_token` streams open
    /// (`maxStreamsPerToken`, at most `maxConnectionsPerToken`).
    pub fn new(
        tokens: Arc<Tokens>,
        service: PtyService,
        owners: Owners,
        stop: CancellationToken,
        streams_per_token: usize,
    ) -> Web {
        Web {
            tokens,
            service,
            owners,
            streams: StreamSlots::new(streams_per_token, stop.clone()),
            stop,
        }
    }

    /// A slot for a new stream of `principal`, logging the stream closed for it, if any.
    fn stream_slot(
        &self,
        principal: &Principal,
        peer: Option<SocketAddr>,
    ) -> stream_slots::Authorized {
        let (slot, closed) = self.streams.authorized(&principal.0);
        if let Some(closed) = closed {
            let detail = if closed.own_cap {
                format!(
                    " (token {:?} opened more than maxStreamsPerToken = {}: its oldest closed)",
                    &*closed.token,
                    self.streams.per_token()
                )
            } else {
                format!(
                    " ({} streams open in all: the oldest of token {:?}, which had the most, \
                     closed for token {:?})",
                    stream_slots::MAX_STREAMS,
                    &*closed.token,
                    &*principal.0
                )
            };
            refusal::log(Cause::StreamCap, peer, &detail);
        }
        slot
    }

    /// The sessions of every owner of `principal`'s token, the oldest first.
    fn sessions_of(&self, principal: &Principal) -> Vec<Listing> {
        let mut sessions: Vec<Listing> = self
            .owners
            .of_principal(principal)
            .iter()
            .flat_map(|owner| self.service.list(owner))
            .map(|info| Listing::new(info, None))
            .collect();
        sessions.sort_by_key(|s| s.started_at_ms);
        sessions
    }

    /// Which of `principal`'s owners has session `id`.
    fn owner_of(&self, principal: &Principal, id: &SessionId) -> Option<Owner> {
        self.owners
            .of_principal(principal)
            .into_iter()
            .find(|owner| self.service.sessions(owner).contains(id))
    }
}

/// The first message of a WebSocket whose request had no token header.
#[derive(Debug, Deserialize)]
struct Credentials {
    token: String,
}

/// The web routes; the API routes check the token themselves.
pub fn router(web: Arc<Web>) -> Router {
    Router::new()
        .route("/", get(|| page(INDEX_HTML, "text/html; charset=utf-8")))
        .route(
            "/app.js",
            get(|| page(APP_JS, "text/javascript; charset=utf-8")),
        )
        .route(
            "/safe.js",
            get(|| page(SAFE_JS, "text/javascript; charset=utf-8")),
        )
        .route(
            "/style.css",
            get(|| page(STYLE_CSS, "text/css; charset=utf-8")),
        )
        .route(
            "/vendor/xterm.js",
            get(|| page(XTERM_JS, "text/javascript; charset=utf-8")),
        )
        .route(
            "/vendor/xterm.css",
            get(|| page(XTERM_CSS, "text/css; charset=utf-8")),
        )
        .route("/favicon.ico", get(|| page(FAVICON, "image/svg+xml")))
        .route("/api/me", get(me))
        .route("/api/sessions", get(list))
        .route("/api/sessions/live", get(live))
        .route("/api/sessions/{id}/stream", get(stream))
        .with_state(web)
}

async fn page(body: &'static str, content_type: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

fn unauthorized() -> Response {
    refusal::refuse(
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "401 Unauthorized: send Authorization: Bearer <token>\n",
        )
            .into_response(),
        Cause::Unauthorized,
    )
}

/// The principal of a request's `Authorization` header, its connection marked authorized
/// ([`connections::authorize`]); else the answer: 401 without a valid token, 503 when the
/// token has all the requests in flight it may.
fn authenticate(
    web: &Web,
    headers: &HeaderMap,
    extensions: &Extensions,
) -> Result<Principal, Box<Response>> {
    let principal = bearer(web, headers)?;
    connections::authorize(extensions, &principal.0)
        .map_err(|at_cap| Box::new(at_cap.response()))?;
    Ok(principal)
}

/// Like [`authenticate`], for a long-lived stream: capped by its token's stream slots,
/// not by its requests in flight ([`connections::authorize_stream`]).
fn authenticate_stream(
    web: &Web,
    headers: &HeaderMap,
    extensions: &Extensions,
) -> Result<Principal, Box<Response>> {
    let principal = bearer(web, headers)?;
    connections::authorize_stream(extensions);
    Ok(principal)
}

/// The principal of the `Authorization` header, else the 401.
fn bearer(web: &Web, headers: &HeaderMap) -> Result<Principal, Box<Response>> {
    web.tokens
        .authenticate(headers.get(header::AUTHORIZATION))
        .ok_or_else(|| Box::new(unauthorized()))
}

async fn list(State(web): State<Arc<Web>>, request: axum::extract::Request) -> Response {
    let principal = match authenticate(&web, request.headers(), request.extensions()) {
        Ok(principal) => principal,
        Err(refused) => return *refused,
    };
    axum::Json(web.sessions_of(&principal)).into_response()
}

/// The token's name, for the page to say who is signed in.
async fn me(State(web): State<Arc<Web>>, request: axum::extract::Request) -> Response {
    let principal = match authenticate(&web, request.headers(), request.extensions()) {
        Ok(principal) => principal,
        Err(refused) => return *refused,
    };
    axum::Json(serde_json::json!({"name": &*principal.0})).into_response()
}

/// The token's sessions as server-sent events: a stream in the token's stream slots, so
/// that its newer streams close its oldest ([`crate::people::stream_slots`]).
async fn live(State(web): State<Arc<Web>>, request: axum::extract::Request) -> Response {
    let principal = match authenticate_stream(&web, request.headers(), request.extensions()) {
        Ok(principal) => principal,
        Err(refused) => return *refused,
    };
    let peer = request
        .extensions()
        .get::<Connection>()
        .map(Connection::peer);
    let slot = web.stream_slot(&principal, peer);
    let stream = futures_util::stream::unfold(
        (web, principal, slot, None::<String>),
        |(web, principal, slot, last)| async move {
            loop {
                if slot.closing().is_cancelled() {
                    return None;
                }
                let json = serde_json::to_string(&web.sessions_of(&principal))
                    .expect("a session list serializes");
                if last.as_deref() != Some(json.as_str()) {
                    let event = Event::default().event("sessions").data(json.clone());
                    return Some((
                        Ok::<_, Infallible>(event),
                        (web, principal, slot, Some(json)),
                    ));
                }
                tokio::select! {
                    () = slot.closing().cancelled() => return None,
                    () = tokio::time::sleep(LIVE_PERIOD) => {}
                }
            }
        },
    );
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

async fn stream(
    State(web): State<Arc<Web>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    connection: Option<axum::Extension<Connection>>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let peer = connection.as_ref().map(|c| c.peer());
    // The frame too: tungstenite's default (16 MiB) would let each stream waiting for its
    // token buffer that much of a frame that never ends.
    let upgrade = upgrade
        .max_message_size(MAX_MESSAGE_BYTES + 1024)
        .max_frame_size(MAX_MESSAGE_BYTES + 1024);
    let id = SessionId::new(id);
    if headers.get(header::AUTHORIZATION).is_none() {
        // A browser: its token comes as the first message, in a slot counted apart.
        let waiting = web.streams.waiting();
        return upgrade.on_upgrade(move |socket| async move {
            if let Some((socket, principal)) =
                first_message_token(&web, socket, waiting, peer).await
            {
                let slot = web.stream_slot(&principal, peer);
                serve_stream(web, socket, id, principal, slot).await;
            }
        });
    }
    // A client that can set headers (attach) is answered at once.
    let Some(principal) = web.tokens.authenticate(headers.get(header::AUTHORIZATION)) else {
        return unauthorized();
    };
    let slot = web.stream_slot(&principal, peer);
    upgrade.on_upgrade(move |socket| serve_stream(web, socket, id, principal, slot))
}

/// Close codes of a stream: 4401 for a missing or wrong token, 4404 for a session the
/// token does not have, 1013 (try again later) when there was no room for it, 1000 when
/// the session ended or the viewer left.
const CLOSE_UNAUTHORIZED: u16 = 4401;
const CLOSE_NOT_FOUND: u16 = 4404;
const CLOSE_TRY_AGAIN: u16 = 1013;

async fn close(mut socket: WebSocket, code: u16, reason: &str) {
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        })))
        .await;
}

fn text(value: serde_json::Value) -> Message {
    Message::Text(value.to_string().into())
}

/// Sends an error message and closes with `code`.
async fn refuse_socket(mut socket: WebSocket, code: u16, message: &str) {
    let _ = socket
        .send(text(
            serde_json::json!({"type": "error", "message": message}),
        ))
        .await;
    close(socket, code, message.split(':').next().unwrap_or_default()).await;
}

/// What a waiting stream's first message came to.
enum FirstMessage {
    Token(Principal),
    /// No valid token in it, or none within [`AUTH_TIMEOUT`].
    Refused,
    /// A newer stream took its slot first.
    Displaced,
}

/// The principal of a WebSocket's first message, within [`AUTH_TIMEOUT`] and while
/// `waiting` holds its slot; otherwise the socket is closed (4401 or 1013) and the refusal
/// logged.
async fn first_message_token(
    web: &Web,
    mut socket: WebSocket,
    waiting: Waiting,
    peer: Option<SocketAddr>,
) -> Option<(WebSocket, Principal)> {
    let outcome = tokio::select! {
        () = waiting.displaced() => FirstMessage::Displaced,
        message = tokio::time::timeout(AUTH_TIMEOUT, socket.recv()) => {
            match message.ok().flatten().and_then(Result::ok) {
                Some(Message::Text(body)) => match token_of(web, body.as_str()) {
                    Some(principal) => FirstMessage::Token(principal),
                    None => FirstMessage::Refused,
                },
                _ => FirstMessage::Refused,
            }
        }
    };
    drop(waiting);
    match outcome {
        FirstMessage::Token(principal) => Some((socket, principal)),
        FirstMessage::Refused => {
            refusal::log(Cause::StreamUnauthorized, peer, &"");
            let _ = socket
                .send(text(serde_json::json!({
                    "type": "error",
                    "message": "401 Unauthorized: the token is not valid",
                })))
                .await;
            close(socket, CLOSE_UNAUTHORIZED, "unauthorized").await;
            None
        }
        FirstMessage::Displaced => {
            refusal::log(Cause::StreamDisplaced, peer, &"");
            let message = "503 Service Unavailable: too many terminal streams wait for their \
                           token; send it as soon as the socket opens";
            refuse_socket(socket, CLOSE_TRY_AGAIN, message).await;
            None
        }
    }
}

/// The principal of a first message `{"token":"..."}`.
fn token_of(web: &Web, body: &str) -> Option<Principal> {
    let hello: Credentials = serde_json::from_str(body).ok()?;
    let value = HeaderValue::from_str(&format!("Bearer {}", hello.token)).ok()?;
    web.tokens.authenticate(Some(&value))
}

/// Serves an authorized stream; `slot` is its place among its token's streams until it
/// ends, or until a newer stream takes it (then it closes with 1013).
async fn serve_stream(
    web: Arc<Web>,
    mut socket: WebSocket,
    id: SessionId,
    principal: Principal,
    slot: stream_slots::Authorized,
) {
    let watched = web
        .owner_of(&principal, &id)
        .and_then(|owner| Some((web.service.watch(&owner, &id).ok()?, owner)));
    let Some((watch, owner)) = watched else {
        let _ = socket
            .send(text(serde_json::json!({
                "type": "error",
                "message": format!("NOT_FOUND: this token has no session {id}"),
            })))
            .await;
        return close(socket, CLOSE_NOT_FOUND, "no such session").await;
    };
    tracing::debug!(session = %id, principal = %principal.0, "a person watches");
    let service = &web.service;
    let reason = view_stream::serve(
        &mut socket,
        service,
        (&owner, &id),
        watch,
        slot.closing(),
        "viewer left",
    )
    .await;
    tracing::debug!(session = %id, reason, "a person stopped watching");
    if slot.closing().is_cancelled() && !web.stop.is_cancelled() {
        let message = "503 Service Unavailable: a newer stream of this token took this one's \
                       place (maxStreamsPerToken)";
        return refuse_socket(socket, CLOSE_TRY_AGAIN, message).await;
    }
    close(socket, 1000, reason).await;
}

impl PersonSocket for WebSocket {
    async fn send_bytes(&mut self, bytes: Vec<u8>) -> bool {
        self.send(Message::Binary(bytes.into())).await.is_ok()
    }

    async fn send_message(&mut self, message: serde_json::Value) -> bool {
        self.send(text(message)).await.is_ok()
    }

    async fn receive(&mut self) -> Incoming {
        match self.recv().await {
            Some(Ok(Message::Binary(bytes))) => Incoming::Input(Input::Keys(bytes.to_vec())),
            Some(Ok(Message::Text(body))) => Input::from_text(body.as_str()),
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => Incoming::Left,
            Some(Ok(_)) => Incoming::Other,
        }
    }
}
