//! The lines of `pty-session mcp`, between the pipes and rmcp.
//!
//! rmcp's own line transport drops a line it cannot parse without a word, and reads
//! requests as fast as they come whether or not their replies can be written. This layer
//! reads stdin as lines of at most `max_line` bytes and:
//! - answers every line that is not a JSON-RPC message itself, with a parse error
//!   (`-32700`, id null) or an invalid request (`-32600`, its id when it has one), and a
//!   log line;
//! - reads the next line only while fewer than [`MAX_IN_FLIGHT`] requests wait for their
//!   reply to be written: a client that writes requests without reading replies stops
//!   being read once the pipe to it is full, so memory stays flat whatever it does.

use std::collections::HashMap;
use std::io;
use std::sync::PoisonError;
use std::sync::{Arc, Mutex};

use bytes::BytesMut;
use futures_util::StreamExt as _;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::codec::{Decoder, FramedRead};
use tokio_util::sync::{CancellationToken, PollSender};

/// Requests read whose reply is not written yet, at most.
pub const MAX_IN_FLIGHT: usize = 64;

/// What rmcp serves over: the messages read, and where its replies go.
pub type Transport = (
    PollSender<ServerJsonRpcMessage>,
    ReceiverStream<ClientJsonRpcMessage>,
);

/// Frames `reader` and `writer` for rmcp, with lines of at most `max_line` bytes; the two
/// tasks doing it end when either side goes away. `input_ended` is cancelled when no
/// more is read: the reader reached its end or failed (rmcp itself would wait for the
/// calls in flight to end and answer them before it says so).
pub fn transport<R, W>(
    reader: R,
    writer: W,
    max_line: usize,
    input_ended: CancellationToken,
) -> Transport
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (replies_tx, replies_rx) = mpsc::channel::<ServerJsonRpcMessage>(16);
    let (errors_tx, errors_rx) = mpsc::channel::<String>(16);
    let (requests_tx, requests_rx) = mpsc::channel::<ClientJsonRpcMessage>(1);
    let in_flight = InFlight::default();
    tokio::spawn(write_lines(
        writer,
        replies_rx,
        errors_rx,
        in_flight.clone(),
    ));
    tokio::spawn(async move {
        read_lines(
            FramedRead::new(reader, Lines::new(max_line)),
            requests_tx,
            errors_tx,
            in_flight,
        )
        .await;
        input_ended.cancel();
    });
    (
        PollSender::new(replies_tx),
        ReceiverStream::new(requests_rx),
    )
}

/// The requests read and not answered yet, each holding a permit of [`MAX_IN_FLIGHT`].
#[derive(Clone)]
struct InFlight {
    permits: Arc<Semaphore>,
    waiting: Arc<Mutex<HashMap<RequestId, Vec<OwnedSemaphorePermit>>>>,
}

impl Default for InFlight {
    fn default() -> InFlight {
        InFlight {
            permits: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            waiting: Arc::default(),
        }
    }
}

impl InFlight {
    fn hold(&self, id: RequestId, permit: OwnedSemaphorePermit) {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        waiting.entry(id).or_default().push(permit);
    }

    /// Frees one permit of request `id` (answered, or cancelled: then no reply comes).
    fn release(&self, id: &RequestId) {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(permits) = waiting.get_mut(id) {
            permits.pop();
            if permits.is_empty() {
                waiting.remove(id);
            }
        }
    }
}

async fn read_lines<R: AsyncRead + Unpin>(
    mut lines: FramedRead<R, Lines>,
    requests: mpsc::Sender<ClientJsonRpcMessage>,
    errors: mpsc::Sender<String>,
    in_flight: InFlight,
) {
    let max_line = lines.decoder().max;
    loop {
        let Ok(permit) = in_flight.permits.clone().acquire_owned().await else {
            return;
        };
        let line = match lines.next().await {
            None => return,
            Some(Err(err)) => {
                tracing::warn!(%err, "cannot read stdin; stopping");
                return;
            }
            Some(Ok(Line::TooLong)) => {
                tracing::warn!(
                    max_line,
                    "stdin: a line longer than maxRequestBytes; answered with a parse error"
                );
                let message = format!("Parse error: a line may have at most {max_line} bytes");
                if errors
                    .send(error_line(Value::Null, -32700, &message))
                    .await
                    .is_err()
                {
                    return;
                }
                continue;
            }
            Some(Ok(Line::Text(line))) => line,
        };
        pty_session::timeline::start("read");
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<ClientJsonRpcMessage>(&line) {
            Ok(message) => {
                pty_session::timeline::mark("parsed");
                match &message {
                    JsonRpcMessage::Request(request) => in_flight.hold(request.id.clone(), permit),
                    JsonRpcMessage::Notification(notification) => {
                        if let ClientNotification::CancelledNotification(cancelled) =
                            &notification.notification
                            && let Some(id) = &cancelled.params.request_id
                        {
                            in_flight.release(id);
                        }
                    }
                    JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
                }
                if requests.send(message).await.is_err() {
                    return;
                }
            }
            Err(err) => {
                let answer = answer_unparsable(&line, &err);
                if errors.send(answer).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// The error line for a line that is not a JSON-RPC message, logged.
fn answer_unparsable(line: &[u8], err: &serde_json::Error) -> String {
    match serde_json::from_slice::<Value>(line) {
        Ok(value) => {
            let id = value
                .get("id")
                .filter(|id| id.is_string() || id.is_i64())
                .cloned()
                .unwrap_or(Value::Null);
            tracing::warn!(bytes = line.len(), %err, "stdin: JSON that is not a JSON-RPC message of MCP; answered with an invalid-request error");
            error_line(
                id,
                -32600,
                &format!("Invalid Request: not a JSON-RPC message of MCP ({err})"),
            )
        }
        Err(err) => {
            tracing::warn!(bytes = line.len(), %err, "stdin: a line that is not JSON; answered with a parse error");
            error_line(
                Value::Null,
                -32700,
                &format!("Parse error: the line is not JSON ({err})"),
            )
        }
    }
}

fn error_line(id: Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut replies: mpsc::Receiver<ServerJsonRpcMessage>,
    mut errors: mpsc::Receiver<String>,
    in_flight: InFlight,
) {
    loop {
        let (mut line, answered) = tokio::select! {
            Some(reply) = replies.recv() => {
                let answered = match &reply {
                    JsonRpcMessage::Response(response) => Some(response.id.clone()),
                    JsonRpcMessage::Error(error) => error.id.clone(),
                    JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
                };
                match serde_json::to_string(&reply) {
                    Ok(line) => {
                        pty_session::timeline::mark("serialised");
                        (line, answered)
                    }
                    Err(err) => {
                        tracing::error!(%err, "cannot serialize a reply");
                        continue;
                    }
                }
            }
            Some(line) = errors.recv() => (line, None),
            else => return,
        };
        line.push('\n');
        if let Err(err) = write(&mut writer, line.as_bytes()).await {
            tracing::info!(%err, "cannot write stdout; the client went away");
            return;
        }
        if let Some(id) = answered {
            pty_session::timeline::finish("flushed");
            in_flight.release(&id);
        }
    }
}

async fn write<W: AsyncWrite + Unpin>(writer: &mut W, bytes: &[u8]) -> io::Result<()> {
    writer.write_all(bytes).await?;
    writer.flush().await
}

/// A line of stdin, without its `\n` (and `\r`).
#[derive(Debug, PartialEq)]
enum Line {
    Text(BytesMut),
    /// A line longer than the limit, skipped.
    TooLong,
}

/// Splits bytes into [`Line`]s of at most `max` bytes, skipping the rest of longer ones
/// without keeping them; never fails, so one bad line does not end the stream.
struct Lines {
    max: usize,
    /// Where to look for the next `\n` (bytes before it have none).
    searched: usize,
    /// In a line that is too long: drop bytes up to its end.
    skipping: bool,
}

impl Lines {
    fn new(max: usize) -> Lines {
        Lines {
            max,
            searched: 0,
            skipping: false,
        }
    }
}

impl Decoder for Lines {
    type Item = Line;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line>> {
        match memchr::memchr(b'\n', &buf[self.searched..]) {
            Some(at) => {
                let mut line = buf.split_to(self.searched + at + 1);
                self.searched = 0;
                if std::mem::take(&mut self.skipping) {
                    return Ok(Some(Line::TooLong));
                }
                line.truncate(line.len() - 1);
                if line.last() == Some(&b'\r') {
                    line.truncate(line.len() - 1);
                }
                if line.len() > self.max {
                    return Ok(Some(Line::TooLong));
                }
                Ok(Some(Line::Text(line)))
            }
            None if self.skipping || buf.len() > self.max => {
                self.skipping = true;
                buf.clear();
                self.searched = 0;
                Ok(None)
            }
            None => {
                self.searched = buf.len();
                Ok(None)
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line>> {
        if let Some(line) = self.decode(buf)? {
            return Ok(Some(line));
        }
        self.searched = 0;
        if std::mem::take(&mut self.skipping) {
            buf.clear();
            return Ok(Some(Line::TooLong));
        }
        if buf.is_empty() {
            return Ok(None);
        }
        Ok(Some(Line::Text(buf.split())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(max: usize, chunks: &[&[u8]]) -> Vec<Line> {
        let mut lines = Lines::new(max);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for chunk in chunks {
            buf.extend_from_slice(chunk);
            while let Some(line) = lines.decode(&mut buf).unwrap() {
                out.push(line);
            }
        }
        while let Some(line) = lines.decode_eof(&mut buf).unwrap() {
            out.push(line);
        }
        out
    }

    fn text(s: &str) -> Line {
        Line::Text(BytesMut::from(s))
    }

    #[test]
    fn lines_split_across_chunks_and_long_ones_are_skipped() {
        assert_eq!(
            decode_all(8, &[b"ab", b"c\r\nde\n\n", b"fgh"]),
            vec![text("abc"), text("de"), text(""), text("fgh")]
        );
        assert_eq!(
            decode_all(4, &[b"abcdef", b"ghij", b"kl\nok\n", b"toolongtail"]),
            vec![Line::TooLong, text("ok"), Line::TooLong]
        );
        assert_eq!(
            decode_all(4, &[b"12345\nabcd\n"]),
            vec![Line::TooLong, text("abcd")]
        );
    }

    #[test]
    fn unparsable_lines_get_errors_with_what_id_there_is() {
        let parse = |line: &[u8]| -> Value {
            let err = serde_json::from_slice::<ClientJsonRpcMessage>(line).unwrap_err();
            serde_json::from_str(&answer_unparsable(line, &err)).unwrap()
        };
        for bad in [
            &b"{"[..],
            b"\xff\xfe{\"id\":1}",
            br#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"\ud800"}}"#,
        ] {
            let answer = parse(bad);
            assert_eq!(answer["error"]["code"], -32700, "{answer}");
            assert_eq!(answer["id"], Value::Null, "{answer}");
        }
        let answer = parse(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":3}"#);
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        assert_eq!(answer["id"], 7);
        assert_eq!(parse(b"[1,2]")["id"], Value::Null);
    }
}
