//! What people see of the background server of `mcp --persist`: the list `pty-session ls`
//! prints and the terminal `pty-session attach` shows, over the server's Unix socket.
//!
//! After an `attach` first line the connection carries WebSocket frames, without an HTTP
//! handshake (the first line was the request), and the messages of the web view's
//! stream ([`crate::web`]): a `hello` text message with the window's size, the recent
//! lines (or the full-screen program's screen) as one binary message, then the output as
//! it comes, `resize`, `skipped` and `ended`; the client sends its keys as binary
//! messages and `{"type":"resize",...}` as text. A session the server does not hold gets
//! an `error` message starting `NOT_FOUND` and the close code 4404.

use std::time::UNIX_EPOCH;

use futures_util::{SinkExt as _, StreamExt as _};
use pty_session::{Owner, PtyService, SessionId, SessionInfo, Status, WatchEvent};
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_util::sync::CancellationToken;

use crate::attach::ListedSession;

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

/// `info`, a session of `owner`, as `ls` lists it.
pub fn listed(info: SessionInfo, owner: &str) -> ListedSession {
    let running = info.status == Status::Running;
    ListedSession {
        id: info.id.as_str().to_owned(),
        command: info.command,
        status: match info.status {
            Status::Running => "running".to_owned(),
            Status::Exited(exit) => exit.to_string(),
        },
        started_at_ms: info
            .started_at
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
        unread_lines: info.unread_lines,
        prompt_pending: running && !info.pending.trim().is_empty(),
        pending: info.pending,
        sandbox: Some(info.sandbox.as_str().to_owned()),
        owner: Some(owner.to_owned()),
    }
}

/// What an attached person sends as a text message.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum ViewerMessage {
    /// Their terminal's size changed; the session follows.
    Resize { cols: u16, rows: u16 },
    /// Keystrokes as text.
    Keys { data: String },
}

/// What a viewer's message asks of the session.
enum Input {
    Keys(Vec<u8>),
    Resize(u16, u16),
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
    let Some((mut watch, owner)) = watched else {
        let message = format!("NOT_FOUND: the background server has no session {id}");
        let _ = socket
            .send(text(
                serde_json::json!({"type": "error", "message": message}),
            ))
            .await;
        return close(&mut socket, CLOSE_NOT_FOUND, "no such session").await;
    };
    let first = match watch.frame.take() {
        Some(frame) => frame,
        None => std::mem::take(&mut watch.recent).into_bytes(),
    };
    let hello = serde_json::json!({
        "type": "hello", "id": id.as_str(), "cols": watch.cols, "rows": watch.rows,
    });
    if socket.send(text(hello)).await.is_err()
        || socket.send(Message::Binary(first.into())).await.is_err()
    {
        return;
    }
    tracing::debug!(session = %id, %owner, "a person attached");

    // Keys are written by a task of their own, in order, so that a program slow to read
    // them never holds back its output on the way to the person.
    let (keys_tx, mut keys_rx) = mpsc::channel::<Input>(64);
    let (errors_tx, mut errors_rx) = mpsc::channel::<String>(8);
    let writer = {
        let (service, owner, id) = (service.clone(), owner.clone(), id.clone());
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
    let mut reason = "person left";
    loop {
        let sent = tokio::select! {
            event = watch.next() => match event {
                WatchEvent::Output(bytes) => socket.send(Message::Binary(bytes.to_vec().into())).await,
                WatchEvent::Resize { cols, rows } => {
                    socket.send(text(serde_json::json!({"type": "resize", "cols": cols, "rows": rows}))).await
                }
                WatchEvent::Skipped(chunks) => {
                    socket.send(text(serde_json::json!({"type": "skipped", "chunks": chunks}))).await
                }
                _ => {
                    let _ = socket.send(text(serde_json::json!({"type": "ended"}))).await;
                    reason = "session ended";
                    break;
                }
            },
            message = socket.next() => {
                let input = match message {
                    Some(Ok(Message::Binary(bytes))) => Input::Keys(bytes.to_vec()),
                    Some(Ok(Message::Text(body))) => match serde_json::from_str(body.as_str()) {
                        Ok(ViewerMessage::Keys { data }) => Input::Keys(data.into_bytes()),
                        Ok(ViewerMessage::Resize { cols, rows }) => Input::Resize(cols, rows),
                        Err(err) => {
                            let message = format!("INVALID_ARGUMENT: {err}");
                            if socket.send(text(serde_json::json!({"type": "error", "message": message}))).await.is_err() {
                                break;
                            }
                            continue;
                        }
                    },
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => continue,
                };
                if keys_tx.send(input).await.is_err() {
                    break;
                }
                Ok(())
            }
            Some(error) = errors_rx.recv() => {
                socket.send(text(serde_json::json!({"type": "error", "message": error}))).await
            }
            () = stop.cancelled() => {
                reason = "server stopping";
                break;
            }
        };
        if sent.is_err() {
            break;
        }
    }
    drop(keys_tx);
    let _ = writer.await;
    tracing::debug!(session = %id, reason, "a person detached");
    close(&mut socket, 1000, reason).await;
}
