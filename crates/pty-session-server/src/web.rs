//! People beside the agent over HTTP: the web view at `/` and the API it, `pty-session ls`
//! and `pty-session attach` use, next to `/mcp` on `serve`.
//!
//! - `GET /`, `/app.js`, `/style.css`, `/vendor/xterm.{js,css}`: the page, embedded in the
//!   binary, with a Content-Security-Policy that allows nothing but this origin.
//! - `GET /api/sessions`: the token's sessions as JSON; `GET /api/sessions/live`: the same
//!   list as server-sent events, a new one whenever it changes.
//! - `GET /api/sessions/{id}/stream`: a WebSocket. The server sends a `hello` text message
//!   (the window size), the session's recent lines (or, with the alternate screen on, its
//!   current screen) as one binary message, then the program's output as it comes. The
//!   client sends its keystrokes as binary messages and `{"type":"resize",...}` as text.
//!
//! The same gate as `/mcp`: a non-loopback `Origin` gets 403, and every API call needs a
//! token. A browser cannot set a header on a WebSocket, so there the token may instead be
//! the first message, `{"token":"..."}`; it is never in a URL. A token sees the sessions of
//! every owner of that token (its own and those of its MCP sessions), and no other's.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Request, State};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use pty_session::{Owner, PtyService, Screen, SessionId, Status, WatchEvent};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::auth::Tokens;
use crate::owner::{Owners, Principal};

const INDEX_HTML: &str = include_str!("../web/index.html");
const APP_JS: &str = include_str!("../web/app.js");
const STYLE_CSS: &str = include_str!("../web/style.css");
const XTERM_JS: &str = include_str!("../web/vendor/xterm.js");
const XTERM_CSS: &str = include_str!("../web/vendor/xterm.css");

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

/// How many terminal streams may be open at once, over all tokens: each holds a socket
/// beyond the connection cap, which no longer counts an upgraded connection.
const MAX_STREAMS: usize = 256;

/// The largest message a viewer may send: a paste of 1 MiB, as a send takes.
const MAX_MESSAGE_BYTES: usize = pty_session::limits::MAX_DATA_BYTES;

/// What the web routes need.
pub struct Web {
    pub tokens: Arc<Tokens>,
    pub service: PtyService,
    pub owners: Owners,
    /// Ends the live lists and the streams when the server stops.
    pub stop: CancellationToken,
    streams: AtomicUsize,
}

impl Web {
    pub fn new(
        tokens: Arc<Tokens>,
        service: PtyService,
        owners: Owners,
        stop: CancellationToken,
    ) -> Web {
        Web {
            tokens,
            service,
            owners,
            stop,
            streams: AtomicUsize::new(0),
        }
    }

    /// The sessions of every owner of `principal`'s token, the oldest first.
    fn sessions_of(&self, principal: &Principal) -> Vec<WebSession> {
        let mut sessions: Vec<WebSession> = self
            .owners
            .of_principal(principal)
            .iter()
            .flat_map(|owner| self.service.list(owner))
            .map(WebSession::new)
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

/// One session in the list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebSession {
    pub id: String,
    pub command: String,
    pub pid: u32,
    /// `running`, or how it ended (`exit code 0`, `killed by SIGKILL`).
    pub status: String,
    pub running: bool,
    /// When it was opened, in milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    pub unread_lines: u64,
    /// The unfinished last line, such as a prompt.
    pub pending: String,
    /// Whether the program waits at a prompt: it runs and its last line is unfinished.
    pub prompt_pending: bool,
    pub alt_screen: bool,
    /// The sandbox it runs in: `none`, `workspace` or `read-only`.
    pub sandbox: &'static str,
}

impl WebSession {
    fn new(info: pty_session::SessionInfo) -> WebSession {
        let running = info.status == Status::Running;
        WebSession {
            id: info.id.as_str().to_owned(),
            command: info.command,
            pid: info.pid,
            status: match info.status {
                Status::Running => "running".to_owned(),
                Status::Exited(exit) => exit.to_string(),
            },
            running,
            started_at_ms: info
                .started_at
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            unread_lines: info.unread_lines,
            prompt_pending: running && !info.pending.trim().is_empty(),
            pending: info.pending,
            alt_screen: info.alt_screen,
            sandbox: info.sandbox.as_str(),
        }
    }
}

/// What a viewer sends as a text message.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum ViewerMessage {
    /// Its terminal's size changed (`attach`); the session follows.
    Resize { cols: u16, rows: u16 },
    /// Keystrokes as text, for a viewer that does not send binary messages.
    Keys { data: String },
}

/// The first message of a WebSocket whose request had no token header.
#[derive(Debug, Deserialize)]
struct Hello {
    token: String,
}

/// The web routes, behind the Origin check; the API routes check the token themselves.
pub fn router(web: Arc<Web>) -> Router {
    Router::new()
        .route("/", get(|| page(INDEX_HTML, "text/html; charset=utf-8")))
        .route(
            "/app.js",
            get(|| page(APP_JS, "text/javascript; charset=utf-8")),
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
        .route("/api/sessions", get(list))
        .route("/api/sessions/live", get(live))
        .route("/api/sessions/{id}/stream", get(stream))
        .layer(axum::middleware::from_fn(check_origin))
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

/// 403 for a request from a page of another origin, as on `/mcp`.
async fn check_origin(request: Request, next: Next) -> Response {
    if let Some(origin) = request.headers().get(header::ORIGIN)
        && !crate::http::is_loopback_origin(origin.as_bytes())
    {
        tracing::warn!(origin = ?origin, "refused a web request from a non-loopback Origin");
        return (
            StatusCode::FORBIDDEN,
            "403 Forbidden: the Origin is not a loopback address\n",
        )
            .into_response();
    }
    next.run(request).await
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        "401 Unauthorized: send Authorization: Bearer <token>\n",
    )
        .into_response()
}

async fn list(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    let Some(principal) = web.tokens.authenticate(headers.get(header::AUTHORIZATION)) else {
        return unauthorized();
    };
    axum::Json(web.sessions_of(&principal)).into_response()
}

async fn live(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    let Some(principal) = web.tokens.authenticate(headers.get(header::AUTHORIZATION)) else {
        return unauthorized();
    };
    let stream = futures_util::stream::unfold(
        (web, principal, None::<String>),
        |(web, principal, last)| async move {
            loop {
                if web.stop.is_cancelled() {
                    return None;
                }
                let json = serde_json::to_string(&web.sessions_of(&principal))
                    .expect("a session list serializes");
                if last.as_deref() != Some(json.as_str()) {
                    let event = Event::default().event("sessions").data(json.clone());
                    return Some((Ok::<_, Infallible>(event), (web, principal, Some(json))));
                }
                tokio::select! {
                    () = web.stop.cancelled() => return None,
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
    upgrade: WebSocketUpgrade,
) -> Response {
    let principal = match headers.get(header::AUTHORIZATION) {
        // A client that can set headers (attach) is answered at once.
        Some(value) => match web.tokens.authenticate(Some(value)) {
            Some(principal) => Some(principal),
            None => return unauthorized(),
        },
        None => None,
    };
    if web.streams.fetch_add(1, Ordering::SeqCst) >= MAX_STREAMS {
        web.streams.fetch_sub(1, Ordering::SeqCst);
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("503 Service Unavailable: {MAX_STREAMS} terminal streams are open\n"),
        )
            .into_response();
    }
    let counted = StreamCount(web.clone());
    upgrade
        .max_message_size(MAX_MESSAGE_BYTES + 1024)
        .on_upgrade(move |socket| async move {
            let _counted = counted;
            serve_stream(web, socket, SessionId::new(id), principal).await;
        })
}

/// One open stream, counted against [`MAX_STREAMS`] until it drops.
struct StreamCount(Arc<Web>);

impl Drop for StreamCount {
    fn drop(&mut self) {
        self.0.streams.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Close codes of a stream: 4401 for a missing or wrong token, 4404 for a session the
/// token does not have, 1000 when the session ended or the viewer left.
const CLOSE_UNAUTHORIZED: u16 = 4401;
const CLOSE_NOT_FOUND: u16 = 4404;

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

/// The token of a WebSocket's first message.
async fn first_message_token(web: &Web, socket: &mut WebSocket) -> Option<Principal> {
    let message = tokio::time::timeout(AUTH_TIMEOUT, socket.recv())
        .await
        .ok()??
        .ok()?;
    let Message::Text(body) = message else {
        return None;
    };
    let hello: Hello = serde_json::from_str(body.as_str()).ok()?;
    let value = HeaderValue::from_str(&format!("Bearer {}", hello.token)).ok()?;
    web.tokens.authenticate(Some(&value))
}

async fn serve_stream(
    web: Arc<Web>,
    mut socket: WebSocket,
    id: SessionId,
    principal: Option<Principal>,
) {
    let principal = match principal {
        Some(principal) => principal,
        None => match first_message_token(&web, &mut socket).await {
            Some(principal) => principal,
            None => {
                let _ = socket
                    .send(text(serde_json::json!({
                        "type": "error",
                        "message": "401 Unauthorized: the token is not valid",
                    })))
                    .await;
                return close(socket, CLOSE_UNAUTHORIZED, "unauthorized").await;
            }
        },
    };
    let watched = web
        .owner_of(&principal, &id)
        .and_then(|owner| Some((web.service.watch(&owner, &id).ok()?, owner)));
    let Some((mut watch, owner)) = watched else {
        let _ = socket
            .send(text(serde_json::json!({
                "type": "error",
                "message": format!("NOT_FOUND: this token has no session {id}"),
            })))
            .await;
        return close(socket, CLOSE_NOT_FOUND, "no such session").await;
    };
    let first = if watch.alt_screen {
        match web.service.screen(&owner, &id) {
            Ok(screen) => screen_as_ansi(&screen),
            Err(_) => watch.recent.clone().into_bytes(),
        }
    } else {
        std::mem::take(&mut watch.recent).into_bytes()
    };
    let hello = serde_json::json!({
        "type": "hello", "id": id.as_str(), "cols": watch.cols, "rows": watch.rows,
    });
    if socket.send(text(hello)).await.is_err()
        || socket.send(Message::Binary(first.into())).await.is_err()
    {
        return;
    }
    tracing::debug!(session = %id, principal = %principal.0, "a person watches");

    // Keystrokes are written by a task of their own, in order, so that a program slow
    // to read them never holds back its output on the way to the viewer.
    let (keys_tx, mut keys_rx) = mpsc::channel::<Input>(64);
    let (errors_tx, mut errors_rx) = mpsc::channel::<String>(8);
    let writer = {
        let (service, owner, id) = (web.service.clone(), owner.clone(), id.clone());
        tokio::spawn(async move {
            while let Some(input) = keys_rx.recv().await {
                let result = match input {
                    Input::Keys(bytes) => service.person_input(&owner, &id, &bytes).await,
                    Input::Resize(cols, rows) => {
                        service.person_resize(&owner, &id, cols, rows).await
                    }
                };
                if let Err(err) = result {
                    let _ = errors_tx.try_send(format!("{}: {err}", err.code()));
                }
            }
        })
    };
    let mut reason = "viewer left";
    loop {
        tokio::select! {
            event = watch.next() => match event {
                WatchEvent::Output(bytes) => {
                    if socket.send(Message::Binary(Bytes::copy_from_slice(&bytes))).await.is_err() {
                        break;
                    }
                }
                WatchEvent::Skipped(chunks) => {
                    let skipped = serde_json::json!({"type": "skipped", "chunks": chunks});
                    if socket.send(text(skipped)).await.is_err() {
                        break;
                    }
                }
                _ => {
                    let _ = socket.send(text(serde_json::json!({"type": "ended"}))).await;
                    reason = "session ended";
                    break;
                }
            },
            message = socket.recv() => {
                let input = match message {
                    Some(Ok(Message::Binary(bytes))) => Input::Keys(bytes.to_vec()),
                    Some(Ok(Message::Text(body))) => match serde_json::from_str(body.as_str()) {
                        Ok(ViewerMessage::Keys { data }) => Input::Keys(data.into_bytes()),
                        Ok(ViewerMessage::Resize { cols, rows }) => Input::Resize(cols, rows),
                        Err(err) => {
                            let _ = errors_tx_message(&mut socket, &format!("INVALID_ARGUMENT: {err}")).await;
                            continue;
                        }
                    },
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => continue,
                };
                if keys_tx.send(input).await.is_err() {
                    break;
                }
            }
            Some(error) = errors_rx.recv() => {
                if errors_tx_message(&mut socket, &error).await.is_err() {
                    break;
                }
            }
            () = web.stop.cancelled() => {
                reason = "server stopping";
                break;
            }
        }
    }
    drop(keys_tx);
    let _ = writer.await;
    tracing::debug!(session = %id, reason, "a person stopped watching");
    close(socket, 1000, reason).await;
}

/// What a viewer's message asks of the session.
enum Input {
    Keys(Vec<u8>),
    Resize(u16, u16),
}

async fn errors_tx_message(socket: &mut WebSocket, message: &str) -> Result<(), axum::Error> {
    socket
        .send(text(
            serde_json::json!({"type": "error", "message": message}),
        ))
        .await
}

/// A screen as the bytes that draw it on an empty terminal: the alternate screen on, the
/// rows top to bottom, the cursor where the program left it. Colours are not kept.
pub fn screen_as_ansi(screen: &Screen) -> Vec<u8> {
    let mut out = String::from("\x1b[?1049h\x1b[H\x1b[2J");
    for (row, line) in screen.lines.iter().enumerate() {
        out.push_str(&format!("\x1b[{};1H{line}", row + 1));
    }
    out.push_str(&format!(
        "\x1b[{};{}H",
        screen.cursor.row + 1,
        screen.cursor.col + 1
    ));
    out.into_bytes()
}
