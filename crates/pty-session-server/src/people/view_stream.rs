//! The terminal stream a person watches and types through, apart from the socket that
//! carries it: the web view's WebSocket (`web`) and `attach` on the background server's
//! Unix socket (`persist_view`) speak the same messages.
//!
//! Out: a `hello` (the session's id, size and default colours), the first frame (the screen's frame, or
//! the recent lines), then the program's bytes and `resize`, `skipped`, `error` and
//! `ended` messages. In: bytes or `keys` (keystrokes) and `resize` (the person's window).

use pty_session::{Owner, PtyService, SessionId, Watch, WatchEvent};
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// What a person sends as a text message.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum ViewerMessage {
    /// Its terminal's size changed (`attach`); the session follows.
    Resize { cols: u16, rows: u16 },
    /// Keystrokes as text, for a viewer that does not send binary messages.
    Keys { data: String },
}

/// What a person's message asks of the session.
pub(crate) enum Input {
    /// Keystrokes.
    Keys(Vec<u8>),
    /// The person's window, in columns and rows.
    Resize(u16, u16),
}

impl Input {
    /// What a text message brings.
    pub(crate) fn from_text(body: &str) -> Incoming {
        match serde_json::from_str(body) {
            Ok(ViewerMessage::Keys { data }) => Incoming::Input(Input::Keys(data.into_bytes())),
            Ok(ViewerMessage::Resize { cols, rows }) => Incoming::Input(Input::Resize(cols, rows)),
            Err(err) => Incoming::Invalid(format!("INVALID_ARGUMENT: {err}")),
        }
    }
}

/// What goes out to the person next.
enum Out {
    /// The program's bytes.
    Bytes(Vec<u8>),
    /// A message (`resize`, `skipped`, `error`, `ended`).
    Text(serde_json::Value),
}

/// The stream's opening: the `hello` message and the first frame's bytes.
fn opening(id: &SessionId, watch: &mut Watch) -> (serde_json::Value, Vec<u8>) {
    let first = match watch.frame.take() {
        Some(frame) => frame,
        None => std::mem::take(&mut watch.recent).into_bytes(),
    };
    let hello = serde_json::json!({
        "type": "hello", "id": id.as_str(), "cols": watch.cols, "rows": watch.rows,
        "colours": colours(&watch.colours),
    });
    (hello, first)
}

/// The session's default colours as a `hello` gives them (`#rrggbb`): what a program
/// that asks is told, so what the view draws with.
pub(crate) fn colours(colours: &pty_session::Colours) -> serde_json::Value {
    use pty_session::Colours;
    serde_json::json!({
        "foreground": Colours::hex(colours.foreground),
        "background": Colours::hex(colours.background),
        "cursor": Colours::hex(colours.cursor),
    })
}

/// What to send for a watch event; `None` once the session ended (after which the
/// `ended` message, [`ended`], is the last).
fn event(event: WatchEvent) -> Option<Out> {
    match event {
        WatchEvent::Output(bytes) => Some(Out::Bytes(bytes.to_vec())),
        WatchEvent::Resize { cols, rows } => Some(Out::Text(
            serde_json::json!({"type": "resize", "cols": cols, "rows": rows}),
        )),
        WatchEvent::Skipped(chunks) => Some(Out::Text(
            serde_json::json!({"type": "skipped", "chunks": chunks}),
        )),
        _ => None,
    }
}

/// The message that says the session ended.
fn ended() -> serde_json::Value {
    serde_json::json!({"type": "ended"})
}

/// An `error` message.
fn error(message: &str) -> serde_json::Value {
    serde_json::json!({"type": "error", "message": message})
}

/// The writer of a person's input: a task of its own that writes keys and resizes in
/// order, so that a program slow to read them never holds back its output on the way to
/// the person. Failures come back on `errors`, as the `error` messages' texts.
struct Writer {
    /// Where the stream hands each input.
    input: mpsc::Sender<Input>,
    /// What a write or a resize failed with.
    errors: mpsc::Receiver<String>,
    task: JoinHandle<()>,
}

impl Writer {
    /// A writer into session `id` of `owner`.
    fn spawn(service: PtyService, owner: Owner, id: SessionId) -> Writer {
        let (input, mut inputs) = mpsc::channel::<Input>(64);
        let (errors_tx, errors) = mpsc::channel::<String>(8);
        let task = tokio::spawn(async move {
            while let Some(input) = inputs.recv().await {
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
        });
        Writer {
            input,
            errors,
            task,
        }
    }

    /// Stops taking input and waits until what was handed over is written.
    async fn finish(self) {
        drop(self.input);
        let _ = self.task.await;
    }
}

/// What came from the person.
pub(crate) enum Incoming {
    /// Keys or a resize.
    Input(Input),
    /// A text message that is neither: the `error` message's text that answers it.
    Invalid(String),
    /// The person left (a close, the end of the socket, a failed read).
    Left,
    /// Anything else (a ping): nothing to do.
    Other,
}

/// The socket a person's stream travels on, whatever carries it.
pub(crate) trait PersonSocket {
    /// Sends the program's bytes; `false` when the person is gone.
    async fn send_bytes(&mut self, bytes: Vec<u8>) -> bool;
    /// Sends a message; `false` when the person is gone.
    async fn send_message(&mut self, message: serde_json::Value) -> bool;
    /// The next thing the person sent.
    async fn receive(&mut self) -> Incoming;
}

/// Serves session `id` of `owner`, watched through `watch`, to the person on `socket`:
/// the opening, then output out and input in, until the person leaves (`left` is then
/// the reason), the session ends or `stop`. Returns why it ended.
pub(crate) async fn serve(
    socket: &mut impl PersonSocket,
    service: &PtyService,
    (owner, id): (&Owner, &SessionId),
    mut watch: Watch,
    stop: &tokio_util::sync::CancellationToken,
    left: &'static str,
) -> &'static str {
    let (hello, first) = opening(id, &mut watch);
    if !socket.send_message(hello).await || !socket.send_bytes(first).await {
        return left;
    }
    let mut writer = Writer::spawn(service.clone(), owner.clone(), id.clone());
    let mut reason = left;
    loop {
        let sent = tokio::select! {
            next = watch.next() => match event(next) {
                Some(Out::Bytes(bytes)) => socket.send_bytes(bytes).await,
                Some(Out::Text(message)) => socket.send_message(message).await,
                None => {
                    socket.send_message(ended()).await;
                    reason = "session ended";
                    break;
                }
            },
            incoming = socket.receive() => match incoming {
                Incoming::Input(input) => writer.input.send(input).await.is_ok(),
                Incoming::Invalid(message) => socket.send_message(error(&message)).await,
                Incoming::Left => break,
                Incoming::Other => true,
            },
            Some(message) = writer.errors.recv() => socket.send_message(error(&message)).await,
            () = stop.cancelled() => {
                reason = "server stopping";
                break;
            }
        };
        if !sent {
            break;
        }
    }
    writer.finish().await;
    reason
}
