//! SSE priming events only for the protocol versions that define them.
//!
//! rmcp starts every event stream of an MCP session with a priming event: an event id and
//! a `retry` with empty data, which lets a 2025-11-25 client resume a stream the server
//! closed. Earlier versions define no such event, and their clients may parse every
//! event's data as JSON (Gemini CLI's does, and drops the connection). The HTTP gate
//! passes the streams of those clients through [`without_priming`].

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use http::{HeaderMap, Response, header};
use hyper::body::{Frame, SizeHint};

/// The first protocol version with priming events (SEP-1699).
pub const FIRST_VERSION: &str = "2025-11-25";

/// The header a client names its protocol version by after `initialize`.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// Whether a client of protocol `version` may be sent priming events. `None` (no version
/// header) is 2025-03-26, as MCP has it. Versions are dates, so they compare as strings.
pub fn defined_for(version: Option<&str>) -> bool {
    version.is_some_and(|version| version >= FIRST_VERSION)
}

/// The protocol version a request names in its header.
pub fn header_version(headers: &HeaderMap) -> Option<&str> {
    headers.get(PROTOCOL_VERSION_HEADER)?.to_str().ok()
}

/// `response` without its priming events, if it is an event stream.
pub fn without_priming(response: Response<Body>) -> Response<Body> {
    let is_sse = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    if !is_sse {
        return response;
    }
    response.map(|inner| Body::new(NoPriming { inner }))
}

/// Whether an SSE frame is a priming event: an event whose data lines are all empty (a
/// message always has JSON data; a keep-alive is a comment and has no data line).
fn is_priming(frame: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(frame) else {
        return false;
    };
    let mut data_lines = 0;
    for line in text.lines() {
        if let Some(data) = line.strip_prefix("data:") {
            if !data.trim().is_empty() {
                return false;
            }
            data_lines += 1;
        } else if line.starts_with("event:") {
            return false;
        }
    }
    data_lines > 0
}

/// An event stream body without its priming events. rmcp writes each event as one frame.
struct NoPriming {
    inner: Body,
}

impl hyper::body::Body for NoPriming {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        loop {
            let polled = Pin::new(&mut self.inner).poll_frame(cx);
            if let Poll::Ready(Some(Ok(frame))) = &polled
                && frame.data_ref().is_some_and(|data| is_priming(data))
            {
                continue;
            }
            return polled;
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        // Frames may be dropped: only the upper bound still holds.
        let mut hint = SizeHint::new();
        if let Some(upper) = self.inner.size_hint().upper() {
            hint.set_upper(upper);
        }
        hint
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_with_priming() {
        assert!(!defined_for(None), "no header: 2025-03-26");
        assert!(!defined_for(Some("2025-03-26")));
        assert!(!defined_for(Some("2025-06-18")));
        assert!(defined_for(Some("2025-11-25")));
        assert!(defined_for(Some("2026-07-28")));
    }

    #[test]
    fn priming_events_and_others() {
        assert!(is_priming(b"data: \nid: 0\nretry: 3000\n\n"));
        assert!(is_priming(b"data:\nid: 0/1\nretry: 3000\n\n"));
        assert!(!is_priming(b"data: {\"jsonrpc\":\"2.0\"}\nid: 1\n\n"));
        assert!(!is_priming(b":\n\n"), "a keep-alive comment");
        assert!(!is_priming(b"event: ping\ndata:\n\n"));
        assert!(!is_priming(b"retry: 3000\n\n"), "no data: no event");
    }

    #[tokio::test]
    async fn a_stream_loses_only_its_priming_events() {
        let frames: Vec<Result<Frame<Bytes>, std::convert::Infallible>> = [
            &b"data: \nid: 0\nretry: 3000\n\n"[..],
            b"data: {\"id\":1}\nid: 1\n\n",
            b":\n\n",
        ]
        .into_iter()
        .map(|chunk| Ok(Frame::data(Bytes::from_static(chunk))))
        .collect();
        let body = Body::new(http_body_util::StreamBody::new(futures_util::stream::iter(
            frames,
        )));
        let response = Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .body(body)
            .unwrap();
        let bytes = axum::body::to_bytes(without_priming(response).into_body(), 1 << 20)
            .await
            .unwrap();
        assert_eq!(&bytes[..], b"data: {\"id\":1}\nid: 1\n\n:\n\n");
    }
}
