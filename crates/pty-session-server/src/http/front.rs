//! What every route of `serve` meets first, `/mcp` and the web view alike: one rule for
//! the `Host` (a loopback name while the server listens on loopback, against DNS
//! rebinding), one for the `Origin` (loopback if sent, against other sites' pages), the
//! headers every answer carries, and the log line of every refusal ([`crate::http::refusal`]).

use std::net::{IpAddr, SocketAddr};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};

use crate::http::connections::Connection;
use crate::http::refusal::{self, Cause, Refusal};

/// What the front checks.
#[derive(Debug, Clone, Copy)]
pub struct Front {
    /// Whether a `Host` must name this machine: when the server listens on loopback. Off
    /// loopback every API call needs a token, which a rebinding page cannot present.
    pub loopback_host: bool,
}

/// The middleware: the head's size, Host, then Origin, then the route; the answer gets
/// `nosniff`, and `Cache-Control: no-store` when it comes from the API or `/mcp`; a
/// refusal is logged.
pub async fn check(State(front): State<Front>, request: Request, next: Next) -> Response {
    // The timeline (the benchmark's breakdown) follows a request from its head on.
    pty_session::timeline::start("http.head");
    let peer = peer_of(&request);
    let api = is_api(request.uri().path());
    let host = host_of(&request);
    let head = head_bytes(&request);
    let response = if head > MAX_HEAD_BYTES {
        let detail = format!(" ({head} bytes)");
        refusal::log(Cause::HeadTooLarge, peer, &detail);
        let mut response = (
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "431 Request Header Fields Too Large: a request head is at most 64 KiB\n",
        )
            .into_response();
        // The connection is not kept for a next request: its client sends heads it
        // should not.
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        response
    } else if front.loopback_host && !host.as_deref().is_some_and(is_loopback_host) {
        refusal::log(Cause::ForeignHost, peer, &Quoted("Host", host.as_deref()));
        (
            StatusCode::FORBIDDEN,
            "403 Forbidden: the Host is not a loopback name\n",
        )
            .into_response()
    } else if let Some(origin) = request.headers().get(header::ORIGIN)
        && !is_loopback_origin(origin.as_bytes())
    {
        let origin = String::from_utf8_lossy(origin.as_bytes()).into_owned();
        refusal::log(Cause::ForeignOrigin, peer, &Quoted("Origin", Some(&origin)));
        (
            StatusCode::FORBIDDEN,
            "403 Forbidden: the Origin is not a loopback address\n",
        )
            .into_response()
    } else {
        let response = next.run(request).await;
        if let Some(refused) = response.extensions().get::<Refusal>() {
            refusal::log(refused.cause, peer, &refused.detail);
        }
        response
    };
    with_headers(response, api)
}

/// The largest request head served: 64 KiB, as the connection's buffer holds. hyper
/// refuses a larger head only when it comes in several reads; one that arrives in one
/// write (up to some 114 KiB fit the first read) is parsed whole, so the size is checked
/// here as well, on what was parsed.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// The size of `request`'s head as sent, at least: the request line and every header
/// line with their separators and line ends, and the blank line that ends the head.
fn head_bytes(request: &Request) -> usize {
    let target = request
        .uri()
        .path_and_query()
        .map_or(1, |target| target.as_str().len());
    let line = request.method().as_str().len() + 1 + target + " HTTP/1.1\r\n".len();
    let headers: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + ": ".len() + value.len() + 2)
        .sum();
    line + headers + 2
}

/// Whether `path` is the API's or MCP's: answers that hold a token's data.
fn is_api(path: &str) -> bool {
    path == "/mcp" || path.starts_with("/mcp/") || path.starts_with("/api/")
}

/// Every answer: never sniffed; the API's and MCP's never stored (the page's own files
/// keep their `no-cache`: they hold no one's data).
fn with_headers(mut response: Response, api: bool) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if api {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// The host a request names: its `Host` header, else the authority of its target.
fn host_of(request: &Request) -> Option<String> {
    match request.headers().get(header::HOST) {
        Some(host) => Some(String::from_utf8_lossy(host.as_bytes()).into_owned()),
        None => request.uri().authority().map(|a| a.as_str().to_owned()),
    }
}

/// Whether a `Host` (`name[:port]`) names this machine: `localhost`, a `*.localhost`
/// name, or a loopback address — the names the Origin rule accepts.
pub fn is_loopback_host(host: &str) -> bool {
    let Ok(authority) = host.parse::<http::uri::Authority>() else {
        return false;
    };
    let name = authority.host();
    let name = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(name)
        .to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether an `Origin` (`scheme://host[:port]`) names this machine, by the rule of
/// [`is_loopback_host`]. `null`, user information and anything unparsable do not.
pub(crate) fn is_loopback_origin(origin: &[u8]) -> bool {
    let Some((_scheme, rest)) = std::str::from_utf8(origin)
        .ok()
        .and_then(|origin| origin.split_once("://"))
    else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or_default();
    !authority.contains('@') && is_loopback_host(authority)
}

/// ` (Host "evil.example")` in a log line: the value as sent, quoted and escaped.
struct Quoted<'a>(&'static str, Option<&'a str>);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            Some(value) => write!(f, " ({} {:?})", self.0, value),
            None => write!(f, " (no {})", self.0),
        }
    }
}

/// The peer of a request, if the connection told it.
pub fn peer_of(request: &Request) -> Option<SocketAddr> {
    request
        .extensions()
        .get::<Connection>()
        .map(Connection::peer)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            "http://user@localhost",
            "",
        ] {
            assert!(!is_loopback_origin(no.as_bytes()), "{no}");
        }
    }

    #[test]
    fn loopback_hosts() {
        for yes in [
            "localhost",
            "localhost:7717",
            "LOCALHOST:1",
            "app.localhost:8443",
            "127.0.0.1",
            "127.0.0.1:7717",
            "127.8.9.10:1",
            "[::1]:7717",
            "[::1]",
        ] {
            assert!(is_loopback_host(yes), "{yes}");
        }
        for no in [
            "evil.example",
            "evil.example:7717",
            "localhost.evil.example",
            "127.0.0.1.nip.io:7717",
            "10.0.0.1:7717",
            "[::2]:7717",
            "0.0.0.0:7717",
            "",
            "local host",
        ] {
            assert!(!is_loopback_host(no), "{no}");
        }
    }

    #[test]
    fn the_api_and_mcp_are_told_apart_from_the_page() {
        for api in ["/mcp", "/mcp/", "/api/sessions", "/api/sessions/x/stream"] {
            assert!(is_api(api), "{api}");
        }
        for page in ["/", "/app.js", "/vendor/xterm.js", "/mcpx", "/apis"] {
            assert!(!is_api(page), "{page}");
        }
    }
}
