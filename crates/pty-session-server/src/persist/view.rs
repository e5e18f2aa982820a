//! What people see of the background server of `mcp --persist`: the list `pty-session ls`
//! prints and the terminal `pty-session attach` shows, over the server's Unix socket.
//!
//! After an `attach` first line the connection carries WebSocket frames, without an HTTP
//! handshake (the first line was the request), and the messages of the web view's
//! stream ([`crate::people::web`]): a `hello` text message with the window's size, the recent
//! lines (or the full-screen program's screen) as one binary message, then the output as
//! it comes, `resize`, `skipped` and `ended`; the client sends its keys as binary
//! messages and `{"type":"resize",...}` as text. A session the server does not hold gets
//! an `error` message starting `NOT_FOUND` and the close code 4404.

use futures_util::{SinkExt as _, StreamExt as _};
use pty_session::{Owner, PtyService, SessionId};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_util::sync::CancellationToken;

use crate::people::shown::shown;
use crate::people::view_stream::{self, Incoming, Input, PersonSocket};

/// The largest message either side may send: a paste of 1 MiB, as a send takes.
const MAX_MESSAGE_BYTES: usize = pty_session::limits::MAX_DATA_BYTES + 1024;

/// The close code of a stream for a session the server does not hold.
const CLOSE_NOT_FOUND: u16 = 4404;

/// `stream` as a WebSocket in `role`, after the first line.
pub async fn websocket<S>(stream: S, role: Role) -> WebSocketStream<S>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES));
    WebSocketStream::from_raw_socket(stream, role, Some(config)).await
}

fn text(value: serde_json::Value) -> Message {
    Message::Text(value.to_string().into())
}

async fn close<S>(socket: &mut WebSocketStream<S>, code: u16, reason: &str)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let frame = CloseFrame {
        code: CloseCode::from(code),
        reason: reason.to_owned().into(),
    };
    let _ = socket.close(Some(frame)).await;
}

/// Serves one attached person on `socket`: session `id` of `owner` (`None`: the server
/// holds no such session), until the person leaves, the session ends or `stop`.
pub async fn stream<S>(
    service: &PtyService,
    owner: Option<Owner>,
    id: SessionId,
    mut socket: WebSocketStream<S>,
    stop: &CancellationToken,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let watched = owner.and_then(|owner| Some((service.watch(&owner, &id).ok()?, owner)));
    let Some((watch, owner)) = watched else {
        let message = format!("NOT_FOUND: the background server has no session {id}");
        let _ = socket
            .send(text(
                serde_json::json!({"type": "error", "message": message}),
            ))
            .await;
        return close(&mut socket, CLOSE_NOT_FOUND, "no such session").await;
    };
    tracing::debug!(session = %id, owner = %shown(owner.as_str()), "a person attached");
    let reason = view_stream::serve(
        &mut socket,
        service,
        (&owner, &id),
        watch,
        stop,
        "person left",
    )
    .await;
    tracing::debug!(session = %id, reason, "a person detached");
    close(&mut socket, 1000, reason).await;
}

impl<S: AsyncRead + AsyncWrite + Unpin> PersonSocket for WebSocketStream<S> {
    async fn send_bytes(&mut self, bytes: Vec<u8>) -> bool {
        self.send(Message::Binary(bytes.into())).await.is_ok()
    }

    async fn send_message(&mut self, message: serde_json::Value) -> bool {
        self.send(text(message)).await.is_ok()
    }

    async fn receive(&mut self) -> Incoming {
        match self.next().await {
            Some(Ok(Message::Binary(bytes))) => Incoming::Input(Input::Keys(bytes.to_vec())),
            Some(Ok(Message::Text(body))) => Input::from_text(body.as_str()),
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => Incoming::Left,
            Some(Ok(_)) => Incoming::Other,
        }
    }
}
