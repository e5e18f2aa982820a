//! Refused requests in the log: each with its cause and its peer, at most a line a second
//! per cause, so that a flood of refusals does not flood the log.
//!
//! A route marks a refusal by putting a [`Refusal`] in the response's extensions
//! ([`refuse`]); the front of the server ([`crate::http::front`]) logs it with the peer. What
//! has no response to mark (a WebSocket closed after the upgrade, a connection closed
//! before its first request) calls [`log`] itself.

use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::sync::PoisonError;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use axum::response::Response;

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cause {
    /// 401: no valid bearer token.
    Unauthorized,
    /// WebSocket close 4401: a terminal stream's first message held no valid token.
    StreamUnauthorized,
    /// A stream (terminal or live list) closed for a newer one: its token had
    /// `maxStreamsPerToken` open, or all tokens together every slot and its token the most.
    StreamCap,
    /// WebSocket close 1013: a stream still waiting for its token made room for a newer
    /// one.
    StreamDisplaced,
    /// 403: a `Host` that does not name this machine.
    ForeignHost,
    /// 403: an `Origin` that is not loopback.
    ForeignOrigin,
    /// 431: a request head larger than 64 KiB.
    HeadTooLarge,
    /// A connection closed at once: every open one was serving an authorized request.
    ConnectionCap,
    /// 503: the token has `maxConnectionsPerToken` requests in flight.
    TokenConnectionCap,
    /// `SESSION_LIMIT`: the token has all the MCP sessions it may.
    McpSessionLimit,
    /// The background server closed a connection from a process more confined than
    /// itself: a sandboxed session's, or one sandboxed otherwise.
    SandboxedPeer,
    /// The background server closed a connection whose process it cannot read.
    UnknownPeer,
    /// The background server closed a connection from another user.
    ForeignUser,
    /// The background server closed a connection whose first line was no request (or
    /// that sent none in time).
    BadHello,
    /// The background server closed a connection whose user it cannot tell.
    UnknownUser,
}

impl Cause {
    /// The cause as the log names it (`cause=...`).
    pub fn name(self) -> &'static str {
        match self {
            Cause::Unauthorized => "unauthorized",
            Cause::StreamUnauthorized => "stream-unauthorized",
            Cause::StreamCap => "stream-cap",
            Cause::StreamDisplaced => "stream-displaced",
            Cause::ForeignHost => "foreign-host",
            Cause::ForeignOrigin => "foreign-origin",
            Cause::HeadTooLarge => "head-too-large",
            Cause::ConnectionCap => "connection-cap",
            Cause::TokenConnectionCap => "token-connection-cap",
            Cause::McpSessionLimit => "mcp-session-limit",
            Cause::SandboxedPeer => "sandboxed-peer",
            Cause::UnknownPeer => "unknown-peer",
            Cause::ForeignUser => "foreign-user",
            Cause::BadHello => "bad-hello",
            Cause::UnknownUser => "unknown-user",
        }
    }

    /// What the person reading the log is told.
    fn describe(self) -> &'static str {
        match self {
            Cause::Unauthorized => "401: no valid bearer token",
            Cause::StreamUnauthorized => {
                "WebSocket 4401: a terminal stream's first message held no valid token"
            }
            Cause::StreamCap => "a stream closed to make room for a newer one",
            Cause::StreamDisplaced => {
                "WebSocket 1013: a terminal stream waited for its token while newer ones came"
            }
            Cause::ForeignHost => "403: the Host is not a loopback name",
            Cause::ForeignOrigin => "403: the Origin is not a loopback address",
            Cause::HeadTooLarge => "431: a request head larger than 64 KiB",
            Cause::ConnectionCap => "a connection closed: every open one serves a request",
            Cause::TokenConnectionCap => "503: a token has all the requests in flight it may",
            Cause::McpSessionLimit => "SESSION_LIMIT: the token has all the MCP sessions it may",
            Cause::SandboxedPeer => {
                "a sandboxed process (more confined than the server) connected to the background server"
            }
            Cause::UnknownPeer => "a process the background server cannot read connected to it",
            Cause::ForeignUser => "a client of another user",
            Cause::BadHello => "a client whose first line is no request",
            Cause::UnknownUser => "a client whose user cannot be told",
        }
    }
}

/// At most one log line per cause per period. The refusals held back in between are
/// counted and told with the next line of their cause.
#[derive(Debug)]
pub struct RateLimit {
    period: Duration,
    causes: HashMap<Cause, Slot>,
}

#[derive(Debug)]
struct Slot {
    /// When the last line of this cause was written.
    last: Instant,
    /// Refusals since then without a line.
    held_back: u64,
}

impl RateLimit {
    pub fn new(period: Duration) -> RateLimit {
        RateLimit {
            period,
            causes: HashMap::new(),
        }
    }

    /// Whether a refusal of `cause` at `now` gets a line; if so, how many refusals of the
    /// cause were held back since its last line.
    pub fn admit(&mut self, cause: Cause, now: Instant) -> Option<u64> {
        match self.causes.get_mut(&cause) {
            Some(slot) if now.saturating_duration_since(slot.last) < self.period => {
                slot.held_back += 1;
                None
            }
            Some(slot) => {
                let held_back = std::mem::take(&mut slot.held_back);
                slot.last = now;
                Some(held_back)
            }
            None => {
                self.causes.insert(
                    cause,
                    Slot {
                        last: now,
                        held_back: 0,
                    },
                );
                Some(0)
            }
        }
    }
}

/// The process's log has one rate limit, as it is one log.
static LIMIT: LazyLock<Mutex<RateLimit>> =
    LazyLock::new(|| Mutex::new(RateLimit::new(Duration::from_secs(1))));

/// Logs a refusal of `cause` from `peer` (with `detail`, such as the Host it sent), unless
/// a line of the same cause was written less than a second ago.
pub fn log(cause: Cause, peer: Option<SocketAddr>, detail: &dyn fmt::Display) {
    let admitted = LIMIT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .admit(cause, Instant::now());
    let Some(held_back) = admitted else {
        return;
    };
    let peer = Peer(peer);
    tracing::warn!(
        cause = cause.name(),
        %peer,
        held_back,
        "refused: {}{detail}",
        cause.describe()
    );
}

/// A refusal as a route marks it on its response, for the front to log.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub cause: Cause,
    /// What the line adds after the cause's description, such as ` (token "alice")`.
    pub detail: String,
}

/// `response`, marked as a refusal of `cause` for the front to log.
pub fn refuse(response: Response, cause: Cause) -> Response {
    refuse_with(response, cause, String::new())
}

/// `response`, marked as a refusal of `cause` with `detail` for the front to log.
pub fn refuse_with(mut response: Response, cause: Cause, detail: String) -> Response {
    response.extensions_mut().insert(Refusal { cause, detail });
    response
}

/// A peer address, or `unknown`.
struct Peer(Option<SocketAddr>);

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(addr) => addr.fmt(f),
            None => f.write_str("unknown"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds refusals at the given milliseconds and returns what each one got.
    #[track_caller]
    fn check(period_ms: u64, refusals: &[(u64, Cause)], expected: &[Option<u64>]) {
        let t0 = Instant::now();
        let mut limit = RateLimit::new(Duration::from_millis(period_ms));
        let got: Vec<Option<u64>> = refusals
            .iter()
            .map(|(ms, cause)| limit.admit(*cause, t0 + Duration::from_millis(*ms)))
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn one_line_a_period_per_cause_with_the_count_held_back() {
        use Cause::*;
        check(
            1000,
            &[
                (0, Unauthorized),
                (1, Unauthorized),
                (999, Unauthorized),
                (1000, Unauthorized),
                (1500, Unauthorized),
                (2000, Unauthorized),
                (9000, Unauthorized),
            ],
            &[Some(0), None, None, Some(2), None, Some(1), Some(0)],
        );
        // Causes do not hold each other back.
        check(
            1000,
            &[(0, ForeignHost), (1, ForeignOrigin), (2, ForeignHost)],
            &[Some(0), Some(0), None],
        );
    }

    #[test]
    fn a_flood_of_a_thousand_in_two_seconds_gets_two_lines() {
        let t0 = Instant::now();
        let mut limit = RateLimit::new(Duration::from_secs(1));
        let lines: Vec<u64> = (0..1000u64)
            .filter_map(|i| limit.admit(Cause::StreamCap, t0 + Duration::from_millis(i * 2)))
            .collect();
        assert_eq!(lines, [0, 499]);
    }

    #[test]
    fn a_clock_that_goes_back_does_not_open_the_gate() {
        let t0 = Instant::now() + Duration::from_secs(10);
        let mut limit = RateLimit::new(Duration::from_secs(1));
        assert_eq!(limit.admit(Cause::Unauthorized, t0), Some(0));
        assert_eq!(
            limit.admit(Cause::Unauthorized, t0 - Duration::from_secs(5)),
            None
        );
    }
}
