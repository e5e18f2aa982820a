//! People beside the agent: `pty-session attach` and `ls` in a terminal of the test, and
//! the web API's gate. The browser test is in `browser.rs`.

use std::io::{Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rustix::termios::{self, LocalModes, Termios, Winsize};
use serde_json::json;
use tokio::process::{Child, Command};

use crate::support::*;

const TOKEN: &str = "people-token-0123456789abcdef";

/// A terminal of the test's own: the person's side of `attach`.
pub(crate) struct Terminal {
    controller: std::fs::File,
    pub(crate) user: OwnedFd,
    /// Everything `attach` wrote to it.
    seen: Arc<Mutex<Vec<u8>>>,
    reader: std::thread::JoinHandle<()>,
}

impl Terminal {
    pub(crate) fn open(cols: u16, rows: u16) -> Terminal {
        let size = Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = rustix_openpty::openpty(None, Some(&size)).expect("openpty");
        let controller = std::fs::File::from(pty.controller);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let reader = {
            let mut controller = controller.try_clone().unwrap();
            let seen = seen.clone();
            // Ends with EIO once every descriptor of the user side is closed.
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = controller.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    seen.lock().unwrap().extend_from_slice(&buf[..n]);
                }
            })
        };
        Terminal {
            controller,
            user: pty.user,
            seen,
            reader,
        }
    }

    pub(crate) fn modes(&self) -> Termios {
        termios::tcgetattr(&self.user).unwrap()
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }

    pub(crate) fn type_keys(&mut self, keys: &[u8]) {
        self.controller.write_all(keys).unwrap();
    }

    /// `pty-session attach` on this terminal (not its controlling one: SIGWINCH comes from
    /// the test).
    fn attach(&self, server: &HttpServer, token_file: &std::path::Path, id: &str) -> Child {
        let mut command = Command::new(BIN);
        command
            .args(["attach", "--url", &format!("http://{}", server.addr)])
            .arg("--token-file")
            .arg(token_file)
            .arg(id)
            .env_remove("PTY_SESSION_TOKEN");
        self.spawn(command)
    }

    /// `command` with this terminal as its stdin, stdout and stderr.
    pub(crate) fn spawn(&self, mut command: Command) -> Child {
        command
            .stdin(Stdio::from(self.user.try_clone().unwrap()))
            .stdout(Stdio::from(self.user.try_clone().unwrap()))
            .stderr(Stdio::from(self.user.try_clone().unwrap()))
            .kill_on_drop(true)
            .spawn()
            .expect("spawn a command on the test's terminal")
    }

    pub(crate) async fn wait_for(&self, what: &str, needle: &str) {
        let what = format!("the terminal to show {what} ({needle:?})");
        eventually(&what, || self.text().contains(needle)).await;
    }

    pub(crate) fn close(self) -> String {
        drop(self.user);
        self.reader.join().unwrap();
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }
}

#[track_caller]
pub(crate) fn assert_same_modes(before: &Termios, after: &Termios) {
    assert_eq!(
        before.local_modes, after.local_modes,
        "local modes restored"
    );
    assert_eq!(
        before.input_modes, after.input_modes,
        "input modes restored"
    );
    assert_eq!(
        before.output_modes, after.output_modes,
        "output modes restored"
    );
    assert_eq!(
        before.control_modes, after.control_modes,
        "control modes restored"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_shows_output_types_keys_follows_the_window_and_detaches() {
    let dir = scratch("attach");
    let token_file = token_file(&dir);
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let agent = current_client(&server.url, TOKEN).await;
    let (id, _pid) = open(&agent, at_home(json!({"command": "python3 -q"}), &dir)).await;

    // `ls` lists the token's session.
    let listed = Command::new(BIN)
        .args(["ls", "--url", &format!("http://{}", server.addr)])
        .arg("--token-file")
        .arg(&token_file)
        .env_remove("PTY_SESSION_TOKEN")
        .output()
        .await
        .unwrap();
    let listing = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.status.success(), "ls: {listed:?}");
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with(&id) && l.contains("python3 -q") && l.contains(" >>> ")),
        "ls shows the session's prompt:\n{listing}"
    );

    let mut terminal = Terminal::open(100, 30);
    let before = terminal.modes();
    assert!(
        before
            .local_modes
            .contains(LocalModes::ICANON | LocalModes::ECHO)
    );
    let mut attach = terminal.attach(&server, &token_file, &id);
    terminal.wait_for("the prompt", ">>> ").await;
    terminal.wait_for("the detach key", "Ctrl-] detaches").await;
    let raw = terminal.modes();
    assert!(
        !raw.local_modes
            .intersects(LocalModes::ICANON | LocalModes::ECHO),
        "attach puts the terminal in raw mode: {:?}",
        raw.local_modes
    );

    // The session follows the person's window, at once and on SIGWINCH.
    eventually_async("the window of the person", || async {
        screen(&agent, &id).await["cols"] == 100
    })
    .await;
    termios::tcsetwinsize(
        &terminal.user,
        Winsize {
            ws_row: 25,
            ws_col: 90,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )
    .unwrap();
    signal(&attach, "WINCH");
    eventually_async("the new window", || async {
        let s = screen(&agent, &id).await;
        s["cols"] == 90 && s["rows"] == 25
    })
    .await;

    // Keys reach the program; its output reaches the terminal.
    terminal.type_keys(b"6*7\r");
    terminal.wait_for("the answer", "42\r\n").await;

    // Detach: attach exits, the terminal is as it was, the session runs on.
    terminal.type_keys(&[0x1d]);
    assert!(exit_success(&mut attach).await, "attach exits 0 on detach");
    terminal.wait_for("the detach note", "keeps running").await;
    assert_same_modes(&before, &terminal.modes());
    let tail = call(&agent, "pty_tail", json!({"id": id})).await;
    let tail = ok(&tail);
    assert_eq!(tail["status"], "running", "{tail}");
    assert!(
        tail["text"].as_str().unwrap().contains("6*7\n42\n"),
        "the agent sees the echoed line and the answer: {tail}"
    );
    let sent = call(&agent, "pty_send", json!({"id": id, "data": "1+1"})).await;
    assert!(
        ok(&sent)["delta"].as_str().unwrap().contains("1+1\n2\n"),
        "the session still runs: {sent:?}"
    );

    // A signal ends attach too, and the terminal still comes back.
    let mut attach = terminal.attach(&server, &token_file, &id);
    terminal.wait_for("a second attach", "attached to").await;
    eventually_async("raw mode again", || async {
        !terminal.modes().local_modes.contains(LocalModes::ICANON)
    })
    .await;
    signal(&attach, "TERM");
    assert!(exit_success(&mut attach).await, "attach exits 0 on SIGTERM");
    assert_same_modes(&before, &terminal.modes());

    // A wrong token: an error before the terminal is touched, and before the token is
    // sent (the server cannot prove it holds it).
    let wrong = dir.join("wrong");
    std::fs::write(&wrong, "wrong-token-0123456789\n").unwrap();
    let mut refused = terminal.attach(&server, &wrong, &id);
    assert!(!exit_success(&mut refused).await, "a wrong token fails");
    assert_same_modes(&before, &terminal.modes());

    let seen = terminal.close();
    assert!(
        seen.contains("not a pty-session serve holding your token"),
        "the refusal says why:\n{seen}"
    );
    call(&agent, "pty_close", json!({"id": id})).await;
    finish(agent, server, &dir).await;
}

/// The end of a test with a server: its agent gone, the server stopped, `dir` removed.
async fn finish(agent: Client, mut server: HttpServer, dir: &std::path::Path) {
    drop(agent);
    server.stop().await;
    let _ = std::fs::remove_dir_all(dir);
}

/// A file in `dir` holding the test's token, for `attach --token-file`.
fn token_file(dir: &std::path::Path) -> std::path::PathBuf {
    let file = dir.join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
    file
}

async fn screen(agent: &Client, id: &str) -> serde_json::Value {
    ok(&call(agent, "pty_screen", json!({"id": id})).await).clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_api_needs_the_token_and_a_loopback_origin_and_the_page_a_strict_policy() {
    let dir = scratch("web-api");
    let alice = "alice-token-0123456789abcdef";
    let bob = "bob-token-0123456789abcdef00";
    let tokens = tokens_file(&dir, &[("alice", alice), ("bob", bob)]);
    let server = http_server(&["--tokens", tokens.to_str().unwrap()], &[]).await;
    let agent = legacy_client(&server.url, alice).await;
    let (id, _) = open(&agent, json!({"command": "cat"})).await;

    let page = raw_request_to(server.addr, "GET", "/", &[], "").await;
    assert_eq!(page.status, 200);
    let policy = page.header("content-security-policy").unwrap_or_default();
    assert!(
        policy.contains("default-src 'self'") && policy.contains("script-src 'self';"),
        "{policy}"
    );
    assert!(!page.body.contains("<script>"), "no inline script");
    let none = raw_request_to(server.addr, "GET", "/api/sessions", &[], "").await;
    assert_eq!(none.status, 401);
    let list = |token: &str, origin: Option<&str>| {
        let bearer = format!("Bearer {token}");
        let addr = server.addr;
        let origin = origin.map(str::to_owned);
        async move {
            let mut headers = vec![("Authorization", bearer.as_str())];
            if let Some(origin) = &origin {
                headers.push(("Origin", origin.as_str()));
            }
            raw_request_to(addr, "GET", "/api/sessions", &headers, "").await
        }
    };
    assert_eq!(list(alice, Some("https://evil.example")).await.status, 403);
    // Alice's session, opened in an MCP session of hers, is hers alone.
    let mine = list(alice, Some("http://127.0.0.1:1")).await;
    assert_eq!(mine.status, 200);
    let mine: serde_json::Value = serde_json::from_str(&mine.body).unwrap();
    assert_eq!(mine[0]["id"], id.as_str(), "{mine}");
    assert_eq!(mine[0]["command"], "cat");
    let theirs = list(bob, None).await;
    assert_eq!((theirs.status, theirs.body.trim()), (200, "[]"));
    // Who is signed in: the token's name, and only with the token.
    let bearer = format!("Bearer {bob}");
    let me = raw_request_to(
        server.addr,
        "GET",
        "/api/me",
        &[("Authorization", &bearer)],
        "",
    )
    .await;
    assert_eq!((me.status, me.body.trim()), (200, r#"{"name":"bob"}"#));
    let me = raw_request_to(server.addr, "GET", "/api/me", &[], "").await;
    assert_eq!(me.status, 401);
    // The tab's icon is there, so a browser's console shows no 404.
    let icon = raw_request_to(server.addr, "GET", "/favicon.ico", &[], "").await;
    assert_eq!(icon.status, 200);
    assert_eq!(icon.header("content-type"), Some("image/svg+xml"));
    assert!(icon.body.starts_with("<svg"), "{}", icon.body);

    // Streams: Bob cannot watch it; a wrong first message is refused with 4401.
    let stream_url = format!("ws://{}/api/sessions/{id}/stream", server.addr);
    let first = |token: &str| {
        let (url, token) = (stream_url.clone(), token.to_owned());
        async move {
            use futures_util::{SinkExt as _, StreamExt as _};
            use tokio_tungstenite::tungstenite::Message;
            let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
            socket
                .send(Message::Text(json!({"token": token}).to_string().into()))
                .await
                .unwrap();
            let mut seen = Vec::new();
            while let Ok(Some(Ok(message))) = tokio::time::timeout(DEADLINE, socket.next()).await {
                let done = matches!(message, Message::Close(_) | Message::Binary(_));
                seen.push(format!("{message:?}"));
                if done {
                    break;
                }
            }
            seen.join("\n")
        }
    };
    let wrong = first("wrong-token-0123456789").await;
    assert!(
        wrong.contains("4401") || wrong.contains("Unauthorized"),
        "{wrong}"
    );
    let foreign = first(bob).await;
    assert!(
        foreign.contains("NOT_FOUND") && foreign.contains("4404"),
        "{foreign}"
    );
    let own = first(alice).await;
    assert!(own.contains("hello") && own.contains("Binary"), "{own}");
    assert!(!server.log().contains(alice), "no token in the log");

    finish(agent, server, &dir).await;
}

/// A viewer's key, through the WebSocket to `cat` and its echo back: the round trip that
/// bounds how long a keystroke takes to reach the program. Loose bound (a shared CI
/// machine); the measured median is printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_viewers_keys_reach_the_program_promptly() {
    use futures_util::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::Message;

    let mut server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let agent = current_client(&server.url, TOKEN).await;
    let (id, _) = open(&agent, json!({"command": "stty -echo; exec cat"})).await;
    let request = server.stream_request(&id, TOKEN);
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    // The hello and the recent lines.
    for _ in 0..2 {
        socket.next().await.unwrap().unwrap();
    }
    let mut round_trips = Vec::new();
    for i in 0..50u32 {
        let key = format!("{}\r", i % 10);
        let start = std::time::Instant::now();
        socket
            .send(Message::Binary(key.clone().into_bytes().into()))
            .await
            .unwrap();
        // cat writes the line back once the line discipline hands it over.
        let mut got = Vec::new();
        while !got.ends_with(b"\r\n") {
            match tokio::time::timeout(DEADLINE, socket.next()).await {
                Ok(Some(Ok(Message::Binary(bytes)))) => got.extend_from_slice(&bytes),
                Ok(Some(Ok(_))) => {}
                other => panic!("no echo of key {i}: {other:?}"),
            }
        }
        round_trips.push(start.elapsed());
        assert_eq!(String::from_utf8_lossy(&got), format!("{}\r\n", i % 10));
    }
    round_trips.sort();
    let p50 = round_trips[round_trips.len() / 2];
    eprintln!(
        "viewer key -> cat -> viewer: p50 {p50:?}, p90 {:?}",
        round_trips[round_trips.len() * 9 / 10]
    );
    assert!(p50 < std::time::Duration::from_millis(100), "p50 {p50:?}");
    drop(socket);
    call(&agent, "pty_close", json!({"id": id})).await;
    drop(agent);
    server.stop().await;
}

/// A viewer who comes while a full-screen program runs starts from its screen, in its
/// colours, not from lines the program has long drawn over; and it learns of every
/// resize, in order with the output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_viewer_of_a_full_screen_program_starts_from_its_screen() {
    use futures_util::StreamExt as _;
    use tokio_tungstenite::tungstenite::Message;

    let mut server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let agent = current_client(&server.url, TOKEN).await;
    let drawing = concat!(
        r"before\n\033[?1049h\033[H\033[2Jtop row",
        r"\033[3;1H\033[1;31mbold red\033[0m \033[7m inverse bar \033[0m",
        r"\033[4;1H\033[38;5;208;44mindexed on blue\033[0m\033[K",
        r"\033[5;3Hfifth row",
    );
    let program = format!("printf '{drawing}'; sleep 60");
    let (id, _) = open(
        &agent,
        json!({"command": program, "settle": "quiet", "quietMs": 300}),
    )
    .await;
    let request = server.stream_request(&id, TOKEN);
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let hello = socket.next().await.unwrap().unwrap();
    assert!(matches!(hello, Message::Text(_)), "{hello:?}");
    let Message::Binary(first) = socket.next().await.unwrap().unwrap() else {
        panic!("the screen comes as one binary message")
    };
    // Drawn on a fresh terminal, the first message shows what the window shows.
    let mut parser = vt100::Parser::new(40, 120, 0);
    parser.process(&first);
    let contents = parser.screen().contents();
    assert!(
        parser.screen().alternate_screen(),
        "the alternate screen is on"
    );
    assert!(contents.starts_with("top row\n"), "{contents:?}");
    assert!(
        contents.contains("\nindexed on blue\n  fifth row"),
        "{contents:?}"
    );
    assert!(!contents.contains("before"), "{contents:?}");
    assert_eq!(parser.screen().cursor_position(), (4, 11));
    // Every cell as the program drew it, colours and attributes included (a cell never
    // written and a space look the same).
    let mut drawn = vt100::Parser::new(40, 120, 0);
    drawn.process(
        drawing
            .replace(r"\033", "\x1b")
            .replace(r"\n", "\r\n")
            .as_bytes(),
    );
    let shown = |cell: &vt100::Cell| {
        let text = match cell.contents() {
            "" => " ",
            text => text,
        }
        .to_owned();
        (
            text,
            cell.fgcolor(),
            cell.bgcolor(),
            cell.bold(),
            cell.inverse(),
        )
    };
    for row in 0..40 {
        for col in 0..120 {
            assert_eq!(
                shown(drawn.screen().cell(row, col).unwrap()),
                shown(parser.screen().cell(row, col).unwrap()),
                "row {row} column {col}"
            );
        }
    }
    assert_eq!(
        parser.screen().cell(2, 0).unwrap().fgcolor(),
        vt100::Color::Idx(1),
        "red"
    );

    // The agent resizes the window: the viewer is told the new size.
    call(
        &agent,
        "pty_send",
        json!({"id": id, "data": "", "cols": 80, "rows": 24, "settle": "none"}),
    )
    .await;
    let resized = tokio::time::timeout(DEADLINE, async {
        loop {
            match socket.next().await {
                Some(Ok(Message::Text(body))) => {
                    let message: serde_json::Value = serde_json::from_str(body.as_str()).unwrap();
                    if message["type"] == "resize" {
                        return message;
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("the stream ended: {other:?}"),
            }
        }
    })
    .await
    .expect("a resize message");
    assert_eq!(resized, json!({"type": "resize", "cols": 80, "rows": 24}));
    drop(socket);
    call(&agent, "pty_close", json!({"id": id})).await;
    drop(agent);
    server.stop().await;
}

/// Detached from vim, the person's terminal is as before the attach: on the main screen
/// with what it showed, its modes and size; the session is back to its own size. An
/// agent's resize while attached is followed, and then kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_gives_the_terminal_back_from_vim_and_the_session_its_size() {
    let dir = scratch("attach-vim");
    let token_file = token_file(&dir);
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let agent = current_client(&server.url, TOKEN).await;
    std::fs::write(dir.join("notes.txt"), "hello from vim\n").unwrap();
    let command = format!(
        "vim -u NONE -N -c 'set laststatus=2' {}",
        dir.join("notes.txt").display()
    );
    let (id, _) = open(
        &agent,
        json!({"command": command, "cols": 90, "rows": 20, "settle": "quiet", "quietMs": 300}),
    )
    .await;

    // The person's terminal shows their shell before the attach.
    let mut terminal = Terminal::open(100, 30);
    let before = terminal.modes();
    let shell = "$ echo ready\r\nready\r\n$ pty-session attach\r\n";
    let mut attach = terminal.attach(&server, &token_file, &id);
    terminal.wait_for("vim's status line", "notes.txt").await;
    eventually_async("the window of the person", || async {
        let s = screen(&agent, &id).await;
        s["cols"] == 100 && s["rows"] == 30
    })
    .await;
    terminal
        .wait_for("vim redrawn at 30 rows", "\x1b[29;")
        .await;
    terminal.type_keys(&[0x1d]);
    assert!(exit_success(&mut attach).await, "attach exits 0 on detach");
    terminal.wait_for("the detach note", "keeps running").await;
    eventually_async("the session's own size again", || async {
        let s = screen(&agent, &id).await;
        s["cols"] == 90 && s["rows"] == 20
    })
    .await;
    assert_same_modes(&before, &terminal.modes());
    let size = termios::tcgetwinsize(&terminal.user).unwrap();
    assert_eq!((size.ws_col, size.ws_row), (100, 30), "the terminal's size");

    // What the person sees: their shell, on the main screen, in its usual modes.
    let mut person = vt100::Parser::new(30, 100, 0);
    person.process(shell.as_bytes());
    person.process(terminal.text().as_bytes());
    let shown = person.screen();
    let contents = shown.contents();
    assert!(!shown.alternate_screen(), "off the alternate screen");
    assert!(
        contents.starts_with("$ echo ready\nready\n$ pty-session attach"),
        "{contents}"
    );
    assert!(
        !contents.contains("~\n~"),
        "none of vim's screen: {contents}"
    );
    assert!(!shown.hide_cursor(), "the cursor shows");
    assert!(!shown.application_cursor() && !shown.application_keypad());
    assert!(!shown.bracketed_paste());
    assert_eq!(shown.mouse_protocol_mode(), vt100::MouseProtocolMode::None);
    assert_eq!(
        (
            shown.fgcolor(),
            shown.bgcolor(),
            shown.bold(),
            shown.inverse()
        ),
        (vt100::Color::Default, vt100::Color::Default, false, false)
    );

    // Attached again, an agent resizes the session: attach follows (asks the terminal
    // for that size and says so), and on detach the agent's size stays.
    let seen = terminal.text().len();
    let mut attach = terminal.attach(&server, &token_file, &id);
    terminal.wait_for("a second attach", "attached to").await;
    eventually_async("the window of the person", || async {
        screen(&agent, &id).await["cols"] == 100
    })
    .await;
    call(
        &agent,
        "pty_send",
        json!({"id": id, "data": "", "cols": 70, "rows": 22, "settle": "none"}),
    )
    .await;
    terminal
        .wait_for("the resize request", "\x1b[8;22;70t")
        .await;
    terminal
        .wait_for("the resize note", "resized to 70x22")
        .await;
    terminal.type_keys(&[0x1d]);
    assert!(exit_success(&mut attach).await, "attach exits 0 on detach");
    terminal
        .wait_for("the size asked back", "\x1b[8;30;100t")
        .await;
    let s = screen(&agent, &id).await;
    assert_eq!(
        (&s["cols"], &s["rows"]),
        (&json!(70), &json!(22)),
        "the agent's size stays"
    );
    assert!(terminal.text()[seen..].contains("\x1b[?1049l"));
    assert_same_modes(&before, &terminal.modes());

    terminal.close();
    call(&agent, "pty_close", json!({"id": id})).await;
    finish(agent, server, &dir).await;
}

/// A flood of output to a viewer that reads nothing is skipped, not buffered: the
/// server's memory stays bounded and the viewer learns what it missed. The flood's time
/// unwatched and with a reading viewer, and the sizes, are printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_skips_a_stalled_viewer_and_memory_stays_bounded() {
    use futures_util::StreamExt as _;
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

    let mut server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let server_pid = server.child.id().unwrap();
    let agent = current_client(&server.url, TOKEN).await;
    let connect = |id: String| {
        let addr = server.addr;
        async move {
            let mut request = format!("ws://{addr}/api/sessions/{id}/stream")
                .into_client_request()
                .unwrap();
            request
                .headers_mut()
                .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
            // A small receive buffer, so that a viewer that reads nothing stalls soon.
            let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
                .read_buffer_size(4096);
            let (socket, _) =
                tokio_tungstenite::connect_async_with_config(request, Some(config), false)
                    .await
                    .unwrap();
            socket
        }
    };
    let flood =
        |lines: u32| json!({"command": format!("sleep 0.5; seq 1 {lines}"), "timeoutMs": 120000});
    const LINES: u32 = 2_000_000;

    // Unwatched.
    let started = std::time::Instant::now();
    let (alone, _) = open(&agent, flood(LINES)).await;
    let unwatched = started.elapsed();

    // Watched by one that keeps up.
    let (id, _) = open(
        &agent,
        json!({"command": "sleep 1; seq 1 2000000", "timeoutMs": 100}),
    )
    .await;
    let mut reader = connect(id.clone()).await;
    let started = std::time::Instant::now();
    let read = tokio::spawn(async move {
        let (mut bytes, mut skips) = (0usize, 0u32);
        while let Some(Ok(message)) = reader.next().await {
            match message {
                Message::Binary(chunk) => bytes += chunk.len(),
                Message::Text(text) if text.contains("ended") => break,
                Message::Text(text) if text.contains("skipped") => skips += 1,
                _ => {}
            }
        }
        (bytes, skips)
    });
    let done = call(&agent, "pty_tail", json!({"id": id, "timeoutMs": 120000})).await;
    assert_eq!(ok(&done)["status"], "exited");
    let watched = started.elapsed();
    let (viewed, skips) = tokio::time::timeout(DEADLINE, read).await.unwrap().unwrap();
    assert!(viewed > 0, "the viewer saw the flood");

    // Watched by one that reads nothing until the end.
    let rss_before = rss_kib(server_pid);
    let (id, _) = open(
        &agent,
        json!({"command": "sleep 1; seq 1 2000000", "timeoutMs": 100}),
    )
    .await;
    let mut stalled = connect(id.clone()).await;
    let done = call(&agent, "pty_tail", json!({"id": id, "timeoutMs": 120000})).await;
    assert_eq!(ok(&done)["status"], "exited");
    let rss_after = rss_kib(server_pid);
    let mut skipped = false;
    while let Ok(Some(Ok(message))) = tokio::time::timeout(DEADLINE, stalled.next()).await {
        if let Message::Text(text) = &message {
            skipped |= text.contains("skipped");
            if text.contains("ended") {
                break;
            }
        }
    }
    eprintln!(
        "seq 1 {LINES}: unwatched {unwatched:?}, with a reading viewer {watched:?} \
         ({viewed} bytes viewed, {skips} skips); server RSS {rss_before} KiB -> {rss_after} KiB around a \
         stalled viewer"
    );
    assert!(skipped, "the stalled viewer was told what it missed");
    assert!(
        rss_after < rss_before + 64 * 1024,
        "a stalled viewer is not buffered for: {rss_before} KiB -> {rss_after} KiB"
    );
    for id in [alone, id] {
        call(&agent, "pty_close", json!({"id": id})).await;
    }
    drop(agent);
    server.stop().await;
}

/// A tmux server of the test's own (its own socket, no configuration) with one pane: the
/// terminal a person attaches from. Killed on drop.
struct Tmux {
    socket: std::path::PathBuf,
}

impl Tmux {
    /// A pane of `cols`×`rows` running `sh` with the prompt `$ `.
    fn start(dir: &std::path::Path, cols: u16, rows: u16) -> Tmux {
        let tmux = Tmux {
            socket: dir.join("tmux.sock"),
        };
        let status = tmux
            .command()
            .args(["-f", "/dev/null", "new-session", "-d", "-x"])
            .arg(cols.to_string())
            .arg("-y")
            .arg(rows.to_string())
            .args(["env", "PS1=$ ", "sh"])
            .status()
            .expect("tmux runs");
        assert!(status.success(), "tmux new-session");
        tmux
    }

    fn command(&self) -> std::process::Command {
        let mut command = std::process::Command::new("tmux");
        command.arg("-S").arg(&self.socket);
        command
    }

    /// `keys` typed into the pane (tmux key names, as `send-keys` takes them).
    fn keys(&self, keys: &[&str]) {
        let status = self
            .command()
            .args(["send-keys", "-t", "0"])
            .args(keys)
            .status()
            .unwrap();
        assert!(status.success(), "tmux send-keys {keys:?}");
    }

    /// The pane's text, its history included, trailing blank rows left out.
    fn text(&self) -> Vec<String> {
        let out = self
            .command()
            .args(["capture-pane", "-p", "-S", "-", "-t", "0"])
            .output()
            .unwrap();
        let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim_end().to_owned())
            .collect();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        lines
    }

    /// The cursor's row in the pane's visible screen, and the number of history rows.
    fn cursor_row(&self) -> (usize, usize) {
        let out = self
            .command()
            .args([
                "display-message",
                "-p",
                "-t",
                "0",
                "#{cursor_y} #{history_size}",
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let mut fields = text.split_whitespace().map(|f| f.parse().unwrap());
        (fields.next().unwrap(), fields.next().unwrap())
    }

    /// `pty-session attach` typed at the pane's shell, to `server`'s session `id`.
    fn attach(&self, server: &HttpServer, token_file: &std::path::Path, id: &str) {
        let attach = format!(
            "{BIN} attach --url http://{} --token-file {} {id}",
            server.addr,
            token_file.display()
        );
        self.keys(&[&attach, "Enter"]);
    }

    /// The pane's default background: `#rrggbb` as a program set it (OSC 11), or
    /// `default`.
    fn pane_background(&self) -> String {
        let out = self
            .command()
            .args(["display-message", "-p", "-t", "0", "#{pane_bg}"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    async fn wait_for(&self, what: &str, needle: &str) {
        let what = format!("the pane to show {what} ({needle:?})");
        eventually(&what, || self.text().iter().any(|l| l.contains(needle))).await;
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").status();
    }
}

/// Attach from a tmux pane to a session on the main screen (python, a shell) and on the
/// alternate screen (vim), and detach: each time the pane's lines from before the attach
/// are as they were, the attach's lines follow them, and the person's prompt comes on
/// the next free row after the detach note.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_in_tmux_leaves_the_panes_lines_and_the_prompt_below_them() {
    let dir = scratch("attach-tmux");
    let token_file = token_file(&dir);
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let agent = current_client(&server.url, TOKEN).await;
    let tmux = Tmux::start(&dir, 200, 40);
    tmux.wait_for("the shell's prompt", "$").await;
    tmux.keys(&["printf 'mine-1\\nmine-2\\n'", "Enter"]);
    tmux.wait_for("the person's lines", "mine-2").await;

    let sessions = [
        ("python3 -q", "print(6*7)", "42"),
        ("bash --norc --noprofile", "echo $((6*7))", "42"),
        ("vim -u NONE -N -n", "", ""),
    ];
    for (command, line, answer) in sessions {
        let (id, _) = open(&agent, at_home(json!({"command": command}), &dir)).await;
        if command.starts_with("vim") {
            eventually_async("vim's screen", || async {
                screen(&agent, &id).await["screen"]
                    .as_str()
                    .is_some_and(|t| t.contains('~'))
            })
            .await;
        }
        let before = tmux.text();
        tmux.attach(&server, &token_file, &id);
        if line.is_empty() {
            // The pane shows vim's screen (the alternate one) at once.
            tmux.wait_for("vim's screen", "~").await;
            tmux.keys(&["ihello from vim", "Escape"]);
            tmux.wait_for("the typed text", "hello from vim").await;
        } else {
            eventually("the attach note", || {
                tmux.text()
                    .iter()
                    .skip(before.len())
                    .any(|l| l.contains("Ctrl-] detaches"))
            })
            .await;
            tmux.keys(&[line, "Enter"]);
            eventually(&format!("{command}'s answer"), || {
                tmux.text().iter().skip(before.len()).any(|l| l == answer)
            })
            .await;
        }
        tmux.keys(&["C-]"]);
        eventually("the detach note", || {
            tmux.text()
                .iter()
                .skip(before.len())
                .any(|l| l.contains("it keeps running"))
        })
        .await;
        eventually("the person's prompt after the note", || {
            tmux.text().last().is_some_and(|l| l == "$")
        })
        .await;
        let after = tmux.text();
        // The lines from before, as they were, then the command typed.
        let typed = before.len() - 1;
        assert_eq!(
            after[..typed],
            before[..typed],
            "{command}: the pane's lines before the attach are kept:\n{}",
            after.join("\n")
        );
        assert!(
            after[typed].starts_with("$ ") && after[typed].ends_with(&id),
            "{command}: the attach command's line is kept: {:?}",
            after[typed]
        );
        // Then the attach's lines: its note, the session's lines (not vim's screen,
        // which went with the alternate screen), the detach note, the prompt.
        let ours = &after[typed + 1..];
        let note = ours
            .iter()
            .position(|l| l.contains("Ctrl-] detaches"))
            .unwrap_or_else(|| panic!("{command}: the attach note:\n{}", after.join("\n")));
        let detached = ours.len() - 2;
        assert!(
            ours[detached].contains(&format!("detached from {id}; it keeps running")),
            "{command}: the detach note is just above the prompt:\n{}",
            after.join("\n")
        );
        let session_lines = &ours[note + 1..detached];
        if answer.is_empty() {
            assert!(
                !session_lines
                    .iter()
                    .any(|l| l.contains("hello from vim") || l == "~"),
                "{command}: vim's screen is gone with the alternate screen:\n{}",
                after.join("\n")
            );
        } else {
            assert!(
                session_lines.iter().any(|l| l.ends_with(line))
                    && session_lines.iter().any(|l| l == answer),
                "{command}: the session's lines stay above the note:\n{}",
                after.join("\n")
            );
        }
        // The cursor is on the prompt's row, the last one written.
        let (row, history) = tmux.cursor_row();
        assert_eq!(
            history + row,
            after.len() - 1,
            "{command}: the cursor is on the prompt's row"
        );
        call(&agent, "pty_close", json!({"id": id})).await;
    }
    drop(tmux);
    finish(agent, server, &dir).await;
}

/// A red line that scrolled out of the session's window before the person attached
/// comes in red in the person's terminal (tmux's `capture-pane -e` shows the SGR of each
/// cell), the lines after it in the default colours; while attached, the pane draws on
/// the server's configured background, and after the detach on its own again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_in_tmux_shows_lines_scrolled_out_of_the_window_in_their_colours() {
    let dir = scratch("attach-history");
    let token_file = token_file(&dir);
    let (server, agent, id) = a_red_line_scrolled_out(&dir, TOKEN).await;
    let tmux = Tmux::start(&dir, 200, 40);
    tmux.wait_for("the shell's prompt", "$").await;
    tmux.attach(&server, &token_file, &id);
    eventually("the session's last line", || {
        tmux.text().iter().any(|l| l == "40")
    })
    .await;
    let out = tmux
        .command()
        .args(["capture-pane", "-p", "-e", "-S", "-", "-t", "0"])
        .output()
        .unwrap();
    let coloured = String::from_utf8_lossy(&out.stdout).into_owned();
    let red = coloured
        .lines()
        .find(|l| l.contains("error: red"))
        .unwrap_or_else(|| panic!("no red line in the pane:\n{coloured}"));
    assert!(
        red.starts_with("\x1b[31merror: red"),
        "the line is drawn in red: {red:?}"
    );
    let next = coloured
        .lines()
        .skip_while(|l| !l.contains("error: red"))
        .nth(1)
        .unwrap_or_default();
    assert!(
        next.ends_with('1') && !next.contains("[31m"),
        "the next line in the default colours: {next:?}"
    );
    assert_eq!(
        tmux.pane_background(),
        BACKGROUND,
        "the server's background"
    );
    tmux.keys(&["C-]"]);
    tmux.wait_for("the detach note", "it keeps running").await;
    assert_eq!(
        tmux.pane_background(),
        "default",
        "the pane's own background"
    );
    call(&agent, "pty_close", json!({"id": id})).await;
    drop(tmux);
    finish(agent, server, &dir).await;
}

/// The colours a server is configured with are the ones a program that asks is told
/// (OSC 10 and 11), each in one answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_background_is_what_a_program_is_told() {
    let server = stdio_server(&["--background", BACKGROUND, "--foreground", "#FDF6E3"]).await;
    let script = r#"
import os, select, sys, termios, time, tty
old = termios.tcgetattr(0)
tty.setraw(0)
os.write(1, b"\x1b]10;?\x07\x1b]11;?\x07")
got = b""
end = time.time() + 5
while got.count(b"\x07") < 2 and time.time() < end:
    ready, _, _ = select.select([0], [], [], max(0, end - time.time()))
    if ready:
        got += os.read(0, 4096)
termios.tcsetattr(0, termios.TCSADRAIN, old)
print("got=%r" % got)
"#;
    let result = call(
        &server.client,
        "pty_open",
        json!({"command": "python3 -c \"$SCRIPT\"", "env": {"SCRIPT": script}, "until": "got=b'.*'"}),
    )
    .await;
    // The line may still be pending when the match is found.
    let reply = ok(&result);
    let text = [&reply["initialOutput"], &reply["pending"]]
        .map(|part| part.as_str().unwrap_or_default())
        .concat();
    assert!(
        text.contains(r"got=b'\x1b]10;rgb:fdfd/f6f6/e3e3\x07\x1b]11;rgb:1010/2020/3030\x07'"),
        "{reply:?}"
    );
}

/// A session that ends under `attach` has no window to go back to: `attach` says that it
/// ended, and nothing of its size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_to_a_session_that_ends_says_only_that_it_ended() {
    let dir = scratch("attach-ends");
    let token_file = token_file(&dir);
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let agent = current_client(&server.url, TOKEN).await;
    let (id, _) = open(&agent, at_home(json!({"command": "python3 -q"}), &dir)).await;
    // Another size than the session's: the attach resizes it.
    let mut terminal = Terminal::open(100, 30);
    let mut attach = terminal.attach(&server, &token_file, &id);
    terminal.wait_for("the prompt", ">>> ").await;
    eventually_async("the window of the person", || async {
        screen(&agent, &id).await["cols"] == 100
    })
    .await;
    terminal.type_keys(b"exit()\r");
    assert!(exit_success(&mut attach).await, "attach exits 0 at the end");
    let seen = terminal.close();
    assert!(seen.contains(&format!("session {id} ended")), "{seen}");
    assert!(
        !seen.contains("back to its"),
        "no window to go back to: {seen}"
    );
    finish(agent, server, &dir).await;
}

/// An agent resizes a session while a person is attached from tmux, which refuses to
/// change the pane's size: after the detach, the pane says so, below whatever vim
/// redrew.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_in_tmux_tells_of_a_resize_the_terminal_refused() {
    let dir = scratch("attach-refused");
    let token_file = token_file(&dir);
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let agent = current_client(&server.url, TOKEN).await;
    let (id, _) = open(
        &agent,
        at_home(json!({"command": "vim -u NONE -N -n"}), &dir),
    )
    .await;
    let tmux = Tmux::start(&dir, 200, 40);
    tmux.wait_for("the shell's prompt", "$").await;
    tmux.attach(&server, &token_file, &id);
    tmux.wait_for("vim's screen", "~").await;
    eventually_async("the pane's size", || async {
        screen(&agent, &id).await["cols"] == 200
    })
    .await;
    call(
        &agent,
        "pty_send",
        json!({"id": id, "data": "", "submit": false, "cols": 100, "rows": 30, "timeoutMs": 1000}),
    )
    .await;
    // The terminal has a second to take the size; tmux never does.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    tmux.keys(&["C-]"]);
    tmux.wait_for("the detach note", "it keeps running").await;
    let text = tmux.text().join("\n");
    assert!(
        text.contains("an agent resized the session to 100x30 while you were attached")
            && text.contains("did not follow"),
        "the pane tells of the refused resize:\n{text}"
    );
    call(&agent, "pty_close", json!({"id": id})).await;
    drop(tmux);
    finish(agent, server, &dir).await;
}
