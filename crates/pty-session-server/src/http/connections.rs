//! Serving HTTP/1.1 connections under a cap, so that nobody on the machine can take every
//! descriptor and lock the agents out.
//!
//! hyper serves each connection, with its `header_read_timeout`: a connection that has not
//! sent a whole request head that long after the server began waiting for one — one that
//! sends nothing, one that dribbles a head, one kept alive between requests — is closed.
//! At most `maxConnections` are open at once. A connection accepted beyond that closes
//! the open one that has been idle longest among those not serving an authorized request
//! (waiting for a head, or answering without a token: a page, a 401), as nginx drains its
//! reusable connections when it runs out. A route marks its request authorized through
//! the request's [`Connection`] once the token checks out. So a client that sends its
//! request promptly is served however many connections others hold open, however slowly
//! they read their answers, and a new connection is refused only when every open one is
//! serving an authorized request.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::PoisonError;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::body::Bytes;
use http::{Request, Response};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt as _;

/// The default of `maxConnections` when the descriptor limit leaves room for it.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// The fewest connections a default cap allows, however low the descriptor limit.
const MIN_CONNECTIONS: usize = 16;

/// What a connection may buffer, a request head included (a larger head gets 431, from
/// hyper when it comes in pieces, from [`crate::http::front`] when it came in one read): hyper's
/// default, some 400 KiB, would let a thousand connections without a token hold 400 MB
/// until their heads time out. Bodies are read through it in pieces, not whole.
const MAX_BUFFER_BYTES: usize = 64 * 1024;

/// The default connection cap for a soft limit of open files `soft` (`None`: unlimited)
/// of which `reserved` are the sessions' share: what the limit leaves, at most
/// [`DEFAULT_MAX_CONNECTIONS`]; when it leaves less than 16, a quarter of
/// the limit (sessions then fit fewer than `maxSessions`, as they would anyway).
pub fn default_max_connections(soft: Option<u64>, reserved: u64) -> usize {
    let Some(soft) = soft else {
        return DEFAULT_MAX_CONNECTIONS;
    };
    let left = usize::try_from(soft.saturating_sub(reserved)).unwrap_or(usize::MAX);
    if left >= MIN_CONNECTIONS {
        left.min(DEFAULT_MAX_CONNECTIONS)
    } else {
        usize::try_from(soft / 4)
            .unwrap_or(usize::MAX)
            .max(MIN_CONNECTIONS)
    }
}

/// What [`Connections`] enforces.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Connections open at once.
    pub max_connections: usize,
    /// hyper's `header_read_timeout`: how long a connection may wait without a whole
    /// request head (new, dribbling, or kept alive between requests).
    pub idle_timeout: Duration,
    /// Authorized requests in flight at once per token (`maxConnectionsPerToken`).
    pub max_per_token: usize,
}

/// The default of `maxConnectionsPerToken` under a connection cap of `max_connections`:
/// a quarter of it (at least one), so that a token alone cannot take the connections
/// another token needs.
pub fn default_max_per_token(max_connections: usize) -> usize {
    (max_connections / 4).max(1)
}

/// The open connections. Cheap to clone.
#[derive(Clone)]
pub struct Connections {
    limits: ConnectionLimits,
    table: Arc<Mutex<Table>>,
    tasks: TaskTracker,
}

#[derive(Default)]
struct Table {
    next: u64,
    open: HashMap<u64, Entry>,
    /// Authorized requests in flight by the name of their token.
    tokens: HashMap<Arc<str>, usize>,
}

struct Entry {
    /// Requests in flight: from the call of the service until its response body is done.
    busy: usize,
    /// Of those, the ones with an accepted token: the connection is not closed for a new
    /// one while it serves any.
    authorized: usize,
    /// When it last became idle (accepted, or its last response ended).
    idle_since: Instant,
    /// Cancelled to close it at once.
    evict: CancellationToken,
}

/// The connection to close for a new one when the table is full: among those serving no
/// authorized request (`authorized == 0`: idle, or answering someone without a token),
/// the one idle since the earliest instant; `None` when every one serves an authorized
/// request. Ties go to the lowest id (the oldest connection).
fn victim(open: impl IntoIterator<Item = (u64, usize, Instant)>) -> Option<u64> {
    open.into_iter()
        .filter(|(_, authorized, _)| *authorized == 0)
        .min_by_key(|(id, _, since)| (*since, *id))
        .map(|(id, _, _)| id)
}

/// Whether a token that has `held` authorized requests in flight may have one more under
/// a cap of `per_token`.
fn token_has_room(held: usize, per_token: usize) -> bool {
    held < per_token.max(1)
}

/// What to do with a connection just accepted.
enum Admission {
    /// Serve it as `id`; it closes at once when `evict` is cancelled.
    Serve { id: u64, evict: CancellationToken },
    /// Every open connection is serving an authorized request: close it. The token with
    /// the most requests in flight and their count, for the log.
    Refuse(Option<(Arc<str>, usize)>),
}

impl Table {
    fn admit(&mut self, cap: usize, now: Instant) -> Admission {
        if self.open.len() >= cap {
            let candidates = self
                .open
                .iter()
                .map(|(id, e)| (*id, e.authorized, e.idle_since));
            let Some(old) = victim(candidates) else {
                let busiest = self
                    .tokens
                    .iter()
                    .max_by(|(a, x), (b, y)| x.cmp(y).then_with(|| b.cmp(a)))
                    .map(|(name, held)| (name.clone(), *held));
                return Admission::Refuse(busiest);
            };
            if let Some(entry) = self.open.remove(&old) {
                entry.evict.cancel();
            }
        }
        let id = self.next;
        self.next += 1;
        let evict = CancellationToken::new();
        self.open.insert(
            id,
            Entry {
                busy: 0,
                authorized: 0,
                idle_since: now,
                evict: evict.clone(),
            },
        );
        Admission::Serve { id, evict }
    }
}

/// A request in flight on connection `id`; the connection counts as busy until it drops,
/// and as serving an authorized request once [`Connection::authorize`] says so.
struct Busy {
    table: Arc<Mutex<Table>>,
    id: u64,
    /// Set under the table's lock once the request is authorized: with the token it counts
    /// against, or `None` for a stream (capped apart, [`crate::people::stream_slots`]).
    authorized: Arc<OnceLock<Option<Arc<str>>>>,
}

impl Busy {
    fn begin(table: &Arc<Mutex<Table>>, id: u64) -> Busy {
        if let Some(entry) = table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .open
            .get_mut(&id)
        {
            entry.busy += 1;
        }
        Busy {
            table: table.clone(),
            id,
            authorized: Arc::default(),
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(Some(token)) = self.authorized.get()
            && let Some(held) = table.tokens.get_mut(token)
        {
            *held = held.saturating_sub(1);
            if *held == 0 {
                table.tokens.remove(token);
            }
        }
        if let Some(entry) = table.open.get_mut(&self.id) {
            entry.busy = entry.busy.saturating_sub(1);
            if self.authorized.get().is_some() {
                entry.authorized = entry.authorized.saturating_sub(1);
            }
            entry.idle_since = Instant::now();
        }
    }
}

/// The connection a request came on, in the request's extensions: who is at the other end,
/// and a way to say that the request carries an accepted token.
#[derive(Clone)]
pub struct Connection {
    peer: SocketAddr,
    /// The address the client reached: where this server listens, as that client sees it.
    local: Option<SocketAddr>,
    table: Arc<Mutex<Table>>,
    id: u64,
    authorized: Arc<OnceLock<Option<Arc<str>>>>,
    per_token: usize,
}

/// A token at its cap of requests in flight (`maxConnectionsPerToken`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenAtCap {
    /// The token's name.
    pub token: Arc<str>,
    /// Its requests in flight.
    pub held: usize,
    /// `maxConnectionsPerToken`.
    pub cap: usize,
}

impl TokenAtCap {
    /// The 503 answer, marked as a refusal that names the token (never the token itself).
    pub fn response(&self) -> axum::response::Response {
        use axum::response::IntoResponse as _;
        let message = format!(
            "503 Service Unavailable: token {:?} has {} requests in flight, the most it may \
             (maxConnectionsPerToken = {}); wait for one to end\n",
            &*self.token, self.held, self.cap
        );
        let detail = format!(
            " (token {:?}, {} in flight, maxConnectionsPerToken = {})",
            &*self.token, self.held, self.cap
        );
        crate::http::refusal::refuse_with(
            (http::StatusCode::SERVICE_UNAVAILABLE, message).into_response(),
            crate::http::refusal::Cause::TokenConnectionCap,
            detail,
        )
    }
}

impl Connection {
    /// The address of the client.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// The address of this server the client connected to (`None` if the kernel would
    /// not say).
    pub fn local(&self) -> Option<SocketAddr> {
        self.local
    }

    /// Marks the request authorized with `token` (its name): until its answer is sent, its
    /// connection is not closed to make room for a new one. Refused when the token has
    /// `maxConnectionsPerToken` requests in flight already; the request then stays
    /// unauthorized.
    pub fn authorize(&self, token: &Arc<str>) -> Result<(), TokenAtCap> {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if self.authorized.get().is_some() {
            return Ok(());
        }
        let held = table.tokens.get(token).copied().unwrap_or(0);
        if !token_has_room(held, self.per_token) {
            return Err(TokenAtCap {
                token: token.clone(),
                held,
                cap: self.per_token,
            });
        }
        let _ = self.authorized.set(Some(token.clone()));
        *table.tokens.entry(token.clone()).or_default() += 1;
        if let Some(entry) = table.open.get_mut(&self.id) {
            entry.authorized += 1;
        }
        Ok(())
    }

    /// Marks the request authorized as a long-lived stream: its connection is not closed
    /// for a new one, and it does not count against its token's requests in flight (its
    /// token's streams are capped apart, [`crate::people::stream_slots`], at most as many).
    pub fn authorize_stream(&self) {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if self.authorized.set(None).is_ok()
            && let Some(entry) = table.open.get_mut(&self.id)
        {
            entry.authorized += 1;
        }
    }
}

/// Marks the request in `extensions` authorized as a stream (see
/// [`Connection::authorize_stream`]); nothing for a request that came another way.
pub fn authorize_stream(extensions: &http::Extensions) {
    if let Some(connection) = extensions.get::<Connection>() {
        connection.authorize_stream();
    }
}

/// Marks the request in `extensions` authorized with `token` (see
/// [`Connection::authorize`]); nothing for a request that came another way.
pub fn authorize(extensions: &http::Extensions, token: &Arc<str>) -> Result<(), TokenAtCap> {
    match extensions.get::<Connection>() {
        Some(connection) => connection.authorize(token),
        None => Ok(()),
    }
}

/// `response` with `guard` kept alive until its body is done or dropped.
pub fn hold_until_sent<G: Send + Unpin + 'static>(
    response: Response<Body>,
    guard: G,
) -> Response<Body> {
    response.map(|inner| {
        Body::new(Guarded {
            inner,
            _guard: guard,
        })
    })
}

/// A body that holds a guard; everything else, its size included, is its inner body's.
struct Guarded<G> {
    inner: Body,
    _guard: G,
}

impl<G: Unpin> hyper::body::Body for Guarded<G> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Connections {
    pub fn new(limits: ConnectionLimits) -> Connections {
        Connections {
            limits,
            table: Arc::default(),
            tasks: TaskTracker::new(),
        }
    }

    /// Accepts and serves connections with `app` until `stop`, then asks every open one to
    /// close once its requests are answered (see [`Connections::closed`]).
    pub async fn serve(&self, listener: TcpListener, app: Router, stop: CancellationToken) {
        let mut last_complaint: Option<Instant> = None;
        loop {
            let accepted = tokio::select! {
                () = stop.cancelled() => break,
                accepted = listener.accept() => accepted,
            };
            match accepted {
                Ok((stream, peer)) => self.admit(stream, peer, &app, &stop),
                Err(err) => {
                    // Out of descriptors, mostly: those in use are freed by the caps and
                    // timeouts; retry shortly, without a log line per attempt.
                    if last_complaint.is_none_or(|at| at.elapsed() >= Duration::from_secs(10)) {
                        tracing::warn!(%err, "cannot accept a connection; retrying");
                        last_complaint = Some(Instant::now());
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
        self.tasks.close();
    }

    /// Waits until every connection is closed (after `stop` of [`Connections::serve`]).
    pub async fn closed(&self) {
        self.tasks.close();
        self.tasks.wait().await;
    }

    fn admit(&self, stream: TcpStream, peer: SocketAddr, app: &Router, stop: &CancellationToken) {
        // Replies are not held back for Nagle's algorithm.
        let _ = stream.set_nodelay(true);
        let admission = self
            .table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .admit(self.limits.max_connections, Instant::now());
        let (id, evict) = match admission {
            Admission::Serve { id, evict } => (id, evict),
            Admission::Refuse(busiest) => {
                let mut cap = format!(" (maxConnections = {}", self.limits.max_connections);
                if let Some((token, held)) = busiest {
                    cap.push_str(&format!(
                        "; token {:?} has the most in flight: {held}",
                        &*token
                    ));
                }
                cap.push(')');
                crate::http::refusal::log(
                    crate::http::refusal::Cause::ConnectionCap,
                    Some(peer),
                    &cap,
                );
                return;
            }
        };
        let table = self.table.clone();
        let app = app.clone();
        let local = stream.local_addr().ok();
        let per_token = self.limits.max_per_token;
        let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            let busy = Busy::begin(&table, id);
            request.extensions_mut().insert(Connection {
                peer,
                local,
                table: table.clone(),
                id,
                authorized: busy.authorized.clone(),
                per_token,
            });
            let app = app.clone();
            async move {
                let response = app.oneshot(request).await?;
                Ok::<_, Infallible>(hold_until_sent(response, busy))
            }
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.limits.idle_timeout)
            .max_buf_size(MAX_BUFFER_BYTES);
        let stop = stop.clone();
        let table = self.table.clone();
        self.tasks.spawn(async move {
            // With upgrades: the web view's terminal streams are WebSockets.
            let connection = builder
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            let mut connection = std::pin::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => Some(result),
                () = evict.cancelled() => None,
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    tokio::select! {
                        result = connection.as_mut() => Some(result),
                        () = evict.cancelled() => None,
                    }
                }
            };
            if let Some(Err(err)) = result {
                tracing::debug!(%err, "connection ended");
            }
            table
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .open
                .remove(&id);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_idle_connection_makes_room() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        assert_eq!(
            victim([(1, 0, at(30)), (2, 0, at(10)), (3, 1, at(0))]),
            Some(2)
        );
        assert_eq!(victim([(4, 0, at(10)), (2, 0, at(10))]), Some(2), "a tie");
        assert_eq!(
            victim([(1, 2, at(0)), (2, 1, at(0))]),
            None,
            "all authorized"
        );
        assert_eq!(victim([]), None);
    }

    #[test]
    fn a_full_table_closes_the_longest_idle_or_refuses() {
        let t0 = Instant::now();
        let mut table = Table::default();
        let mut evicts = Vec::new();
        for ms in 0..3 {
            let Admission::Serve { id, evict } = table.admit(3, t0 + Duration::from_millis(ms))
            else {
                panic!("room for three")
            };
            evicts.push((id, evict));
        }
        let entry = table.open.get_mut(&0).unwrap();
        (entry.busy, entry.authorized) = (1, 1);
        let Admission::Serve { id, .. } = table.admit(3, t0 + Duration::from_millis(5)) else {
            panic!("an idle one makes room")
        };
        assert_eq!(id, 3);
        assert!(!evicts[0].1.is_cancelled(), "the authorized one stays");
        assert!(evicts[1].1.is_cancelled(), "the longest idle goes");
        assert_eq!(table.open.len(), 3);
        // One answering someone without a token (a page, a 401) makes room too.
        for entry in table.open.values_mut() {
            entry.busy = 1;
        }
        assert!(
            matches!(
                table.admit(3, t0 + Duration::from_millis(6)),
                Admission::Serve { .. }
            ),
            "an unauthorized request makes room"
        );
        assert!(evicts[2].1.is_cancelled(), "the oldest unauthorized goes");
        assert_eq!(table.open.len(), 3);
        for entry in table.open.values_mut() {
            (entry.busy, entry.authorized) = (1, 1);
        }
        assert!(matches!(table.admit(3, t0), Admission::Refuse(None)));
        assert_eq!(table.open.len(), 3);
    }

    #[test]
    fn a_token_at_its_cap_is_refused_and_another_is_not() {
        let table: Arc<Mutex<Table>> = Arc::default();
        let Admission::Serve { id, .. } = table.lock().unwrap().admit(10, Instant::now()) else {
            panic!("room")
        };
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("a"), Arc::from("b"));
        let request = |table: &Arc<Mutex<Table>>| {
            let busy = Busy::begin(table, id);
            let connection = Connection {
                peer: "127.0.0.1:1".parse().unwrap(),
                local: None,
                table: table.clone(),
                id,
                authorized: busy.authorized.clone(),
                per_token: 2,
            };
            (busy, connection)
        };
        let held: Vec<_> = (0..2)
            .map(|_| {
                let (busy, connection) = request(&table);
                assert_eq!(connection.authorize(&a), Ok(()));
                assert_eq!(connection.authorize(&a), Ok(()), "once a request");
                busy
            })
            .collect();
        let (third, connection) = request(&table);
        let refused = connection.authorize(&a).unwrap_err();
        assert_eq!((refused.held, refused.cap, &*refused.token), (2, 2, "a"));
        let (_other, connection) = request(&table);
        assert_eq!(connection.authorize(&b), Ok(()), "another token has room");
        drop(third);
        drop(held);
        let (_again, connection) = request(&table);
        assert_eq!(
            connection.authorize(&a),
            Ok(()),
            "room again once they ended"
        );
        assert_eq!(table.lock().unwrap().tokens.get(&a), Some(&1));
        assert!(token_has_room(0, 0), "a cap of 0 is read as 1");
        assert!(!token_has_room(1, 0));
    }

    #[test]
    fn default_caps_leave_the_sessions_their_share() {
        assert_eq!(default_max_connections(None, 3328), DEFAULT_MAX_CONNECTIONS);
        assert_eq!(default_max_connections(Some(20_000), 3328), 1024);
        assert_eq!(default_max_connections(Some(3328 + 300), 3328), 300);
        assert_eq!(default_max_connections(Some(512), 3328), 128);
        assert_eq!(default_max_connections(Some(20), 3328), MIN_CONNECTIONS);
    }
}
