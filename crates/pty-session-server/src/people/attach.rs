//! `pty-session attach`: a person's own terminal as a client of a running `pty-session
//! serve`, through the API of [`crate::people::web`], or of the background server of
//! `mcp --persist`, through its socket ([`crate::persist::view`]).
//!
//! Without `--url`, `--token-file` or `--persist`, both are asked (`remote`), and `attach
//! ID` finds the session on whichever holds it (the background server first: it needs no
//! token); `ls` ([`crate::people::ls`]) lists them.
//!
//! `attach` puts the terminal in raw mode and restores it on every way out: a detach,
//! the session's end, a lost connection, an error, SIGTERM, SIGINT or SIGHUP (handled,
//! not fatal), and a panic (the guard's `Drop` runs as the stack unwinds). Only SIGKILL
//! leaves it raw, as it does for every program; `reset` repairs that.
//!
//! While attached, the terminal draws with the session's default colours, those its
//! programs are told they have (the hello names them; OSC 10, 11 and 12 set them), and
//! on the way out it gets its own back (OSC 110, 111 and 112).
//!
//! On the way out the terminal is also given back as it was: off the alternate screen a
//! full-screen program left it on, with the attributes, cursor, scroll region, key,
//! paste, mouse and focus modes a terminal starts with, and at its own size. Which
//! screen the terminal is on is followed through the session's bytes
//! ([`AlternateScreen`]): on the main screen (a shell, python) the cursor stays on the
//! row after the session's last output, so the person's prompt comes on the next free
//! row and nothing they had above it is overwritten. The session
//! goes back to the size it had before the attach, unless an agent resized it meanwhile
//! (then the agent's size stays), or it ended. The terminal is asked to take an agent's
//! size; one that has not within [`REFUSED_AFTER`] (tmux refuses) is said to have refused,
//! at once and again on the way out, where no program's redraw covers the note.

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::time::Duration;

use anyhow::{Context as _, bail};
use futures_util::{SinkExt as _, StreamExt as _};
use rustix::termios::{self, OptionalActions, Termios};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::protocol::Role;

use crate::cli::RemoteArgs;
use crate::http::proof;
use crate::people::remote::{PERSIST_NAME, Places, Remote, default_serve, remote_of};
use crate::people::shown::shown;
use crate::persist::{self, Hello};

/// The key that detaches: Ctrl-] (as in telnet), a byte that programs rarely need.
pub const DETACH_KEY: u8 = 0x1d;

/// The person's terminal in raw mode until this drops.
struct RawMode {
    saved: Termios,
}

impl RawMode {
    fn enter() -> anyhow::Result<RawMode> {
        let stdin = std::io::stdin();
        let saved = termios::tcgetattr(&stdin).context("cannot read the terminal's modes")?;
        let mut raw = saved.clone();
        raw.make_raw();
        termios::tcsetattr(&stdin, OptionalActions::Now, &raw)
            .context("cannot put the terminal in raw mode")?;
        Ok(RawMode { saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(std::io::stdin(), OptionalActions::Now, &self.saved);
    }
}

/// Why an attach ended.
enum End {
    Detached,
    Ended,
    Lost,
    Signal(&'static str),
}

/// Why a stream gave no `hello`.
struct NoHello {
    message: String,
    /// The server holds no such session (for this token).
    not_found: bool,
}

/// What a stream's `hello` says.
struct Greeting {
    /// The session's window, `(cols, rows)`.
    size: (u16, u16),
    /// The OSC sequences that give the person's terminal the session's default colours
    /// (empty when the hello names none): what a program in the session is told it has.
    colours: String,
}

/// The OSC 10, 11 and 12 sequences that set the default text, background and cursor
/// colours of a hello's `colours` (each `#rrggbb`; one of another form is left out).
fn colour_sequences(colours: &serde_json::Value) -> String {
    [("foreground", 10), ("background", 11), ("cursor", 12)]
        .iter()
        .filter_map(|(key, osc)| {
            let colour = colours[key].as_str()?;
            pty_session::Colours::parse_hex(colour)?;
            Some(format!("\x1b]{osc};{colour}\x1b\\"))
        })
        .collect()
}

/// What gives the person's terminal its own default colours back (OSC 110, 111, 112).
const COLOURS_BACK: &str = "\x1b]110\x1b\\\x1b]111\x1b\\\x1b]112\x1b\\";

/// The first message of a stream: the session's window size and colours, or why there
/// is none.
async fn hello<T>(socket: &mut WebSocketStream<T>) -> Result<Greeting, NoHello>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    let refused = |message: String| NoHello {
        not_found: message.starts_with("NOT_FOUND"),
        message,
    };
    match socket.next().await {
        Some(Ok(Message::Text(body))) => {
            let message: serde_json::Value =
                serde_json::from_str(body.as_str()).unwrap_or_default();
            if message["type"] != "hello" {
                return Err(refused(
                    message["message"]
                        .as_str()
                        .unwrap_or(body.as_str())
                        .to_owned(),
                ));
            }
            let size = size_of(&message)
                .ok_or_else(|| refused("the server's hello has no window size".into()))?;
            Ok(Greeting {
                size,
                colours: colour_sequences(&message["colours"]),
            })
        }
        Some(Ok(Message::Close(frame))) => Err(refused(format!(
            "the server closed the stream: {}",
            frame.map(|f| f.reason.to_string()).unwrap_or_default()
        ))),
        other => Err(refused(format!("no hello from the server: {other:?}"))),
    }
}

/// A stream of session `id` on the `serve` of `remote`, once it proved that it holds the
/// token ([`proof::identified`]), its hello read.
async fn serve_stream(
    remote: &Remote,
    id: &str,
) -> anyhow::Result<(WebSocketStream<tokio::net::TcpStream>, Greeting)> {
    let mut request = format!("ws://{}/api/sessions/{id}/stream", remote.authority)
        .into_client_request()
        .context("cannot build the request")?;
    request.headers_mut().insert(
        http::header::AUTHORIZATION,
        remote
            .bearer()
            .parse()
            .context("the token is not a header value")?,
    );
    let stream = proof::identified(&remote.authority, &remote.token).await?;
    let (mut socket, _) = match tokio_tungstenite::client_async(request, stream).await {
        Ok(connected) => connected,
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            let body = response.body().as_deref().unwrap_or_default();
            bail!(
                "the server answered {}",
                shown(String::from_utf8_lossy(body).trim())
            );
        }
        Err(err) => {
            return Err(err).with_context(|| format!("cannot connect to {}", remote.authority));
        }
    };
    match hello(&mut socket).await {
        Ok(greeting) => Ok((socket, greeting)),
        Err(no) => bail!("{}", shown(&no.message)),
    }
}

/// A stream of session `id` on the background server: `Ok(None)` when none runs,
/// `Err(NoHello)` when it refused.
async fn persist_stream(
    id: &str,
) -> anyhow::Result<Option<Result<(WebSocketStream<tokio::net::UnixStream>, Greeting), NoHello>>> {
    let Some(stream) = persist::open(&Hello::Attach { id: id.to_owned() }).await? else {
        return Ok(None);
    };
    let mut socket = crate::persist::view::websocket(stream, Role::Client).await;
    Ok(Some(
        hello(&mut socket).await.map(|greeting| (socket, greeting)),
    ))
}

/// `pty-session attach [--url URL | --persist] ID`: the session in this terminal until the
/// detach key, from the background server or the `serve` that holds it.
pub async fn attach(remote: &RemoteArgs, persist_only: bool, id: &str) -> anyhow::Result<()> {
    if !std::io::stdin().is_terminal() {
        bail!("attach needs a terminal on stdin");
    }
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        bail!("{id:?} is not a session id (see `pty-session ls`)");
    }
    let places = Places::of(remote, persist_only);
    let mut not_here = String::new();
    if matches!(places, Places::Persist | Places::Both) {
        match persist_stream(id).await? {
            Some(Ok((socket, greeting))) => return attached(socket, id, greeting).await,
            Some(Err(no)) if no.not_found && matches!(places, Places::Both) => {
                not_here = format!("{PERSIST_NAME} has no session {id}");
            }
            Some(Err(no)) => bail!("{}", shown(&no.message)),
            None if matches!(places, Places::Persist) => {
                bail!(
                    "no background server of `pty-session mcp --persist` runs (no {})",
                    persist::socket_path()
                );
            }
            None => {
                not_here = "no background server of `pty-session mcp --persist` runs".to_owned()
            }
        }
    }
    let args = match places {
        Places::Persist => unreachable!("answered above"),
        Places::Serve(args) => args,
        Places::Both => {
            let (authority, listening) = default_serve().await?;
            if !listening {
                bail!(
                    "no session {id}: {not_here}, and no `pty-session serve` listens at \
                     {authority} (--url names another)"
                );
            }
            remote
        }
    };
    let remote = remote_of(args)?;
    let (socket, greeting) = serve_stream(&remote, id).await.map_err(|err| {
        if not_here.is_empty() {
            err
        } else {
            err.context(format!(
                "{not_here}; on `pty-session serve` at {}",
                remote.authority
            ))
        }
    })?;
    attached(socket, id, greeting).await
}

/// The session in this terminal, on `socket` whose hello said the window is `before`
/// and its colours `colours`, until the detach key, the session's end, a lost
/// connection or a signal.
async fn attached<T>(
    mut socket: WebSocketStream<T>,
    id: &str,
    Greeting {
        size: before,
        colours,
    }: Greeting,
) -> anyhow::Result<()>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    // Handled before the terminal goes raw: a signal in between would end attach with
    // the terminal left raw.
    let mut signals = Signals::watch()?;
    let raw = RawMode::enter()?;
    let say = |text: String| {
        let _ = std::io::stderr().write_all(format!("\r\n[pty-session: {text}]\r\n").as_bytes());
    };
    say(format!("attached to {id}; Ctrl-] detaches"));
    let mut stdout = tokio::io::stdout();
    {
        // The terminal draws with the colours the session's programs are told it has (vim
        // picks its palette by the background), until the way out gives its own back.
        use tokio::io::AsyncWriteExt as _;
        let _ = stdout.write_all(colours.as_bytes()).await;
    }
    let mut sizes = Sizes::new(before, own_size());
    let mut screen = AlternateScreen::default();
    let end = relay(
        &mut socket,
        &mut stdout,
        &mut sizes,
        &mut signals,
        &mut screen,
    )
    .await;
    let session_back = match end {
        // A session that ended has no window to go back to.
        Ok(End::Ended) => None,
        _ => sizes.restore(),
    };
    if let Some((cols, rows)) = session_back {
        let _ =
            tokio::time::timeout(Duration::from_secs(1), socket.send(resize_to(cols, rows))).await;
    }
    let _ = tokio::time::timeout(Duration::from_secs(1), socket.close(None)).await;
    use tokio::io::AsyncWriteExt as _;
    let _ = stdout.write_all(restore(screen.on).as_bytes()).await;
    if !colours.is_empty() {
        let _ = stdout.write_all(COLOURS_BACK.as_bytes()).await;
    }
    if sizes.asked_terminal {
        // The terminal was asked to follow an agent's resize: ask for its own size back.
        let (cols, rows) = sizes.own;
        let _ = stdout
            .write_all(format!("\x1b[8;{rows};{cols}t").as_bytes())
            .await;
    }
    let _ = stdout.flush().await;
    drop(raw);
    if let Some((cols, rows)) = session_back {
        say(format!("the session is back to its {cols}x{rows} window"));
    }
    if let Some((cols, rows)) = sizes.refused {
        say(format!(
            "an agent resized the session to {cols}x{rows} while you were attached, and \
             your terminal did not follow (it refuses window-size requests): the session \
             was drawn for a window of that size"
        ));
    }
    match end? {
        End::Detached => say(format!("detached from {id}; it keeps running")),
        End::Ended => say(format!("session {id} ended")),
        End::Lost => say("the server closed the connection".to_owned()),
        End::Signal(name) => say(format!("{name}: detached from {id}; it keeps running")),
    }
    Ok(())
}

/// What a program may have left on, undone, for a terminal on the alternate screen: the
/// scroll region, origin mode and the attributes first (while still on its screen), then
/// off the alternate screen (which puts the cursor back where the shell had it), then
/// [`MODES_OFF`].
const RESTORE_ALTERNATE: &str = "\x1b[0m\x1b[r\x1b[?6l\x1b[?1049l";

/// The same for a terminal on its main screen, where the person's lines and the
/// session's are, and the cursor must stay where the session's output left it (on the
/// next free row after it): resetting the scroll region and origin mode homes the
/// cursor, so the cursor is saved before and restored after (DECSC, DECRC), and the
/// alternate screen is not left (`?1049l` off it restores a cursor nobody saved, tmux's
/// and xterm's included).
const RESTORE_MAIN: &str = "\x1b[0m\x1b7\x1b[?6l\x1b[r\x1b8";

/// The modes a terminal starts with, on either screen: the cursor shown, the cursor keys
/// and keypad normal, insert mode off, autowrap on, bracketed paste, mouse and focus
/// reports and synchronized output off. None of these moves the cursor.
const MODES_OFF: &str = "\x1b[?25h\x1b[?1l\x1b>\x1b[4l\x1b[?7h\
     \x1b[?2004l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\
     \x1b[?1004l\x1b[?2026l";

/// The bytes that give the terminal back, on the alternate screen or not.
fn restore(alternate: bool) -> String {
    let screen = if alternate {
        RESTORE_ALTERNATE
    } else {
        RESTORE_MAIN
    };
    format!("{screen}{MODES_OFF}")
}

/// Whether the terminal is on the alternate screen, followed through the bytes it is
/// given: the private modes 1049, 1047 and 47 set (`h`) or reset (`l`), in sequences
/// that may be split between two reads.
#[derive(Default)]
struct AlternateScreen {
    on: bool,
    /// The sequence read so far: `None` outside one, else the bytes after `ESC`.
    pending: Option<Vec<u8>>,
}

impl AlternateScreen {
    /// Follows `bytes`.
    fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            match &mut self.pending {
                None => {
                    if byte == 0x1b {
                        self.pending = Some(Vec::new());
                    }
                }
                Some(seq) => {
                    if byte == 0x1b {
                        seq.clear();
                        continue;
                    }
                    seq.push(byte);
                    let seq_len = seq.len();
                    if (seq_len == 1 && byte != b'[') || (seq_len == 2 && byte != b'?') {
                        self.pending = None;
                    } else if seq_len > 2 && (0x40..=0x7e).contains(&byte) {
                        let seq = self.pending.take().unwrap_or_default();
                        if byte == b'h' || byte == b'l' {
                            let params = &seq[2..seq.len() - 1];
                            if params
                                .split(|b| *b == b';')
                                .any(|p| matches!(p, b"1049" | b"1047" | b"47"))
                            {
                                self.on = byte == b'h';
                            }
                        }
                    } else if seq_len > 64 {
                        self.pending = None;
                    }
                }
            }
        }
    }
}

/// The window sizes an attach keeps track of.
struct Sizes {
    /// The session's size before the attach, while it is to be put back: until an agent
    /// resizes the session.
    before: Option<(u16, u16)>,
    /// The person's terminal's size when the attach began.
    own: (u16, u16),
    /// The sizes this attach asked the session for, latest last: a resize the server
    /// reports that is none of these is an agent's.
    sent: Vec<(u16, u16)>,
    /// Whether the person's terminal was asked to change its size.
    asked_terminal: bool,
    /// The size the terminal was last asked for, while it has not taken it, and until
    /// when it has to ([`REFUSED_AFTER`]).
    asked: Option<((u16, u16), tokio::time::Instant)>,
    /// An agent's size the person's terminal did not take: what they see is drawn for
    /// another window.
    refused: Option<(u16, u16)>,
}

/// How long a terminal asked to take an agent's size has to do it (and so to send
/// SIGWINCH) before `attach` takes it as refused (tmux, and terminals that do not allow
/// window operations, refuse).
const REFUSED_AFTER: Duration = Duration::from_secs(1);

impl Sizes {
    fn new(before: (u16, u16), own: (u16, u16)) -> Sizes {
        Sizes {
            before: Some(before),
            own,
            sent: Vec::new(),
            asked_terminal: false,
            asked: None,
            refused: None,
        }
    }

    /// The session was resized to `size`: whether an agent did it.
    fn resized(&mut self, size: (u16, u16)) -> bool {
        if self.sent.contains(&size) {
            return false;
        }
        self.before = None;
        true
    }

    /// The size to put the session back to on the way out, if any.
    fn restore(&self) -> Option<(u16, u16)> {
        let before = self.before?;
        (self.sent.last() != Some(&before) && !self.sent.is_empty()).then_some(before)
    }

    /// The message that asks for the person's window now, remembered as sent.
    fn follow_person(&mut self) -> Message {
        let (cols, rows) = own_size();
        if self.sent.len() >= 16 {
            self.sent.remove(0);
        }
        self.sent.push((cols, rows));
        resize_to(cols, rows)
    }
}

/// `cols` and `rows` of a `hello` or `resize` message.
fn size_of(message: &serde_json::Value) -> Option<(u16, u16)> {
    let cols = u16::try_from(message["cols"].as_u64()?).ok()?;
    let rows = u16::try_from(message["rows"].as_u64()?).ok()?;
    Some((cols, rows))
}

/// The signals `attach` handles: the window's changes, and those that end it.
struct Signals {
    winch: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    /// Handles them from now on, in place of their default actions.
    fn watch() -> anyhow::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            winch: signal(SignalKind::window_change()).context("cannot watch SIGWINCH")?,
            term: signal(SignalKind::terminate()).context("cannot handle SIGTERM")?,
            int: signal(SignalKind::interrupt()).context("cannot handle SIGINT")?,
            hup: signal(SignalKind::hangup()).context("cannot handle SIGHUP")?,
        })
    }
}

/// Carries keys to the session and output to the terminal until one side ends.
async fn relay<T>(
    socket: &mut WebSocketStream<T>,
    stdout: &mut tokio::io::Stdout,
    sizes: &mut Sizes,
    signals: &mut Signals,
    screen: &mut AlternateScreen,
) -> anyhow::Result<End>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    use tokio::io::AsyncWriteExt as _;
    socket.send(sizes.follow_person()).await?;

    // A thread of its own reads the terminal: a blocking read that is simply left behind
    // when the command exits, so stdin is never made non-blocking under the person's shell.
    let (keys_tx, mut keys) = mpsc::channel::<Vec<u8>>(16);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = [0u8; 4096];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if keys_tx.blocking_send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
            }
        }
    });

    loop {
        tokio::select! {
            message = socket.next() => match message {
                Some(Ok(Message::Binary(bytes))) => {
                    screen.feed(&bytes);
                    stdout.write_all(&bytes).await?;
                    stdout.flush().await?;
                }
                Some(Ok(Message::Text(body))) => {
                    let message: serde_json::Value = serde_json::from_str(body.as_str()).unwrap_or_default();
                    match message["type"].as_str() {
                        Some("ended") => return Ok(End::Ended),
                        Some("resize") => {
                            if let Some((cols, rows)) = size_of(&message)
                                && sizes.resized((cols, rows))
                            {
                                // An agent resized the session: ask this terminal to follow
                                // (terminals that allow it do) and say so.
                                sizes.asked_terminal = true;
                                sizes.asked = Some(((cols, rows), tokio::time::Instant::now() + REFUSED_AFTER));
                                stdout.write_all(format!("\x1b[8;{rows};{cols}t").as_bytes()).await?;
                                stdout.flush().await?;
                                let note = format!("\r\n[pty-session: the session was resized to {cols}x{rows}]\r\n");
                                let _ = std::io::stderr().write_all(note.as_bytes());
                            }
                        }
                        Some("error") => {
                            let text = shown(message["message"].as_str().unwrap_or_default());
                            let _ = std::io::stderr().write_all(format!("\r\n[pty-session: {text}]\r\n").as_bytes());
                        }
                        _ => {}
                    }
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return Ok(End::Lost),
                Some(Ok(_)) => {}
            },
            keys = keys.recv() => {
                let Some(keys) = keys else { return Ok(End::Detached) };
                if let Some(at) = keys.iter().position(|b| *b == DETACH_KEY) {
                    if at > 0 {
                        socket.send(Message::Binary(keys[..at].to_vec().into())).await?;
                    }
                    return Ok(End::Detached);
                }
                socket.send(Message::Binary(keys.into())).await?;
            }
            _ = signals.winch.recv() => {
                if sizes.asked.is_some_and(|(size, _)| own_size() == size) {
                    sizes.asked = None;
                }
                // From now on the session follows this window again.
                sizes.refused = None;
                socket.send(sizes.follow_person()).await?;
            }
            () = refused_at(sizes.asked) => {
                let Some(((cols, rows), _)) = sizes.asked.take() else { continue };
                if own_size() != (cols, rows) {
                    // The terminal refused: say so now, and again on the way out, where
                    // no program's redraw covers it.
                    sizes.refused = Some((cols, rows));
                    let note = format!(
                        "\r\n[pty-session: your terminal did not take the session's new size \
                         {cols}x{rows}; what you see is drawn for it: resize your window to \
                         take the session back to your size]\r\n"
                    );
                    let _ = std::io::stderr().write_all(note.as_bytes());
                }
            }
            _ = signals.term.recv() => return Ok(End::Signal("SIGTERM")),
            _ = signals.int.recv() => return Ok(End::Signal("SIGINT")),
            _ = signals.hup.recv() => return Ok(End::Signal("SIGHUP")),
        }
    }
}

/// When a terminal asked for a size has refused it: never while none was asked.
async fn refused_at(asked: Option<((u16, u16), tokio::time::Instant)>) {
    match asked {
        Some((_, deadline)) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// The person's window size, `(cols, rows)`.
fn own_size() -> (u16, u16) {
    let size = termios::tcgetwinsize(std::io::stdin()).unwrap_or(termios::Winsize {
        ws_row: 24,
        ws_col: 80,
        ws_xpixel: 0,
        ws_ypixel: 0,
    });
    (size.ws_col.max(1), size.ws_row.max(1))
}

/// The message that resizes the session to `cols`×`rows`.
fn resize_to(cols: u16, rows: u16) -> Message {
    Message::Text(
        serde_json::json!({"type": "resize", "cols": cols, "rows": rows})
            .to_string()
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hello's colours become OSC 10, 11 and 12; a colour of another form (which could
    /// carry a sequence of its own) is left out, and no colours give nothing to undo.
    #[test]
    fn the_hellos_colours_set_the_terminals() {
        let colours = serde_json::json!({
            "foreground": "#dddddd", "background": "#102030", "cursor": "\u{1b}]0;x",
        });
        assert_eq!(
            colour_sequences(&colours),
            "\x1b]10;#dddddd\x1b\\\x1b]11;#102030\x1b\\"
        );
        assert_eq!(colour_sequences(&serde_json::Value::Null), "");
    }

    #[test]
    fn the_alternate_screen_is_followed_through_split_sequences() {
        let mut screen = AlternateScreen::default();
        screen.feed(b"plain \x1b[1;31mred\x1b[0m \x1b[?25l");
        assert!(
            !screen.on,
            "no alternate screen in colours and cursor modes"
        );
        screen.feed(b"\x1b[?10");
        screen.feed(b"49h");
        assert!(screen.on, "1049 set, split between two reads");
        screen.feed(b"\x1b[?1;1049l");
        assert!(!screen.on, "reset among other modes");
        screen.feed(b"\x1b[?47h");
        assert!(screen.on, "47 set");
        screen.feed(b"\x1b[?1047l\x1b[?2004h");
        assert!(!screen.on, "1047 reset; another mode leaves it");
    }

    #[test]
    fn the_main_screen_is_given_back_with_the_cursor_where_it_was() {
        let main = restore(false);
        assert!(!main.contains("\x1b[?1049l"), "{main:?}");
        let region = main.find("\x1b[r").unwrap();
        assert!(main.find("\x1b7").unwrap() < region && region < main.find("\x1b8").unwrap());
        assert!(restore(true).starts_with("\x1b[0m\x1b[r\x1b[?6l\x1b[?1049l"));
    }
}
