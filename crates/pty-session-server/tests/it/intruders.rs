//! A local user without a token, as an attacker would probe the server: streams opened and
//! never authenticated, foreign `Host` headers on every route, floods of refusals (logged,
//! rate limited), and what a session inherits (no secret of the server in its
//! environment, no descriptor of the server's).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

use crate::support::*;

const TOKEN: &str = "intruders-token-0123456789abcdef";

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

/// A WebSocket to session `id`'s stream, with the token as a header when `token` is given.
async fn stream(addr: SocketAddr, id: &str, token: Option<&str>) -> Result<Socket, String> {
    let mut request = format!("ws://{addr}/api/sessions/{id}/stream")
        .into_client_request()
        .unwrap();
    if let Some(token) = token {
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    match tokio::time::timeout(DEADLINE, tokio_tungstenite::connect_async(request)).await {
        Ok(Ok((socket, _))) => Ok(socket),
        Ok(Err(err)) => Err(err.to_string()),
        Err(_) => Err("no answer".to_owned()),
    }
}

/// Reads a stream until its `hello` and first binary message; what came, for messages.
async fn hello(socket: &mut Socket) -> Result<(), String> {
    let mut seen = Vec::new();
    loop {
        match tokio::time::timeout(DEADLINE, socket.next()).await {
            Ok(Some(Ok(Message::Binary(_))))
                if seen.iter().any(|s: &String| s.contains("hello")) =>
            {
                return Ok(());
            }
            Ok(Some(Ok(message))) => {
                let closed = matches!(message, Message::Close(_));
                seen.push(format!("{message:?}"));
                if closed {
                    return Err(seen.join("\n"));
                }
            }
            other => return Err(format!("{seen:?} then {other:?}")),
        }
    }
}

/// How many log lines name `cause`.
fn lines_of(log: &str, cause: &str) -> usize {
    let needle = format!("cause=\"{cause}\"");
    log.lines().filter(|line| line.contains(&needle)).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_without_a_token_do_not_crowd_out_viewers_with_one() {
    pty_session::nofile::raise_to(8192);
    let mut server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let agent = current_client(&server.url, TOKEN).await;
    let (id, _) = open(&agent, json!({"command": "cat"})).await;

    // 256 + 1 sockets that never send a token, all held open.
    let mut idle = Vec::new();
    for _ in 0..257 {
        idle.push(
            stream(server.addr, "anything", None)
                .await
                .expect("an upgrade"),
        );
    }
    // A viewer with the token as a header (attach), and one with it as its first message
    // (the browser), are served all the same.
    let mut attach = stream(server.addr, &id, Some(TOKEN)).await.expect("attach");
    hello(&mut attach).await.expect("attach is served");
    let mut browser = stream(server.addr, &id, None).await.expect("a browser");
    browser
        .send(Message::Text(json!({"token": TOKEN}).to_string().into()))
        .await
        .unwrap();
    hello(&mut browser).await.expect("the browser is served");
    let log = server.log();
    assert!(
        lines_of(&log, "stream-displaced") >= 1,
        "streams made room for newer ones, and the log says so:\n{log}"
    );

    // Authorized streams have their own cap, per token: past it, the token's newest
    // stream closes its oldest (1013), and the log names the token's name.
    let mut viewers = vec![attach, browser];
    while viewers.len() < 33 {
        viewers.push(
            stream(server.addr, &id, Some(TOKEN))
                .await
                .expect("a viewer"),
        );
    }
    let mut closed = false;
    while let Ok(Some(message)) = tokio::time::timeout(DEADLINE, viewers[0].next()).await {
        if let Ok(Message::Close(frame)) = message {
            closed = frame.is_some_and(|f| u16::from(f.code) == 1013);
            break;
        }
    }
    assert!(closed, "the oldest authorized stream was closed with 1013");
    eventually("the cap's line, naming the token", || {
        server
            .log()
            .lines()
            .any(|l| l.contains("cause=\"stream-cap\"") && l.contains("token \"default\""))
    })
    .await;
    drop(viewers);
    drop(idle);
    call(&agent, "pty_close", json!({"id": id})).await;
    drop(agent);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_request_heads_without_a_token_hold_little_memory() {
    pty_session::nofile::raise_to(8192);
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let before = rss_kib(server.child.id().unwrap());
    // 500 connections, each a head of some 360 KB that never ends.
    let mut held = Vec::new();
    for _ in 0..500 {
        let mut socket = TcpStream::connect(server.addr).await.unwrap();
        let _ = socket
            .write_all(b"GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await;
        held.push(socket);
    }
    let line = format!("X-Pad: {}\r\n", "a".repeat(8000));
    for _ in 0..45 {
        for socket in &mut held {
            // The server closes a connection whose head grew too large: that is the point.
            let _ = socket.write_all(line.as_bytes()).await;
        }
    }
    served_in_little_memory(server, before, held, "500 heads of 360 KB").await;
}

/// With `held` connections pressing on, a client of the token is served and the server's
/// RSS grew by less than 48 MiB from `before`; then the server stops cleanly.
async fn served_in_little_memory(
    mut server: HttpServer,
    before: u64,
    held: Vec<TcpStream>,
    what: &str,
) {
    let client = current_client(&server.url, TOKEN).await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 6);
    let after = rss_kib(server.child.id().unwrap());
    eprintln!("{what}: server RSS {before} -> {after} KiB");
    assert!(
        after < before + 48 * 1024,
        "{what} without a token held {} KiB",
        after - before
    );
    drop(held);
    drop(client);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_first_frames_without_a_token_hold_little_memory() {
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let before = rss_kib(server.child.id().unwrap());
    // 64 streams (as many as may wait for a token), each starting a 16 MiB frame and
    // sending 4 MiB of it.
    let mut held = Vec::new();
    for _ in 0..64 {
        let mut socket = TcpStream::connect(server.addr).await.unwrap();
        let upgrade = format!(
            "GET /api/sessions/x/stream HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
            server.addr
        );
        socket.write_all(upgrade.as_bytes()).await.unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            socket.read_exact(&mut byte).await.unwrap();
            head.push(byte[0]);
        }
        assert!(
            head.starts_with(b"HTTP/1.1 101"),
            "{}",
            String::from_utf8_lossy(&head)
        );
        // A masked text frame whose 64-bit length says 16 MiB.
        let mut frame = vec![0x81, 0x80 | 127];
        frame.extend_from_slice(&(16u64 << 20).to_be_bytes());
        frame.extend_from_slice(&[0, 0, 0, 0]);
        let _ = socket.write_all(&frame).await;
        held.push(socket);
    }
    let chunk = vec![b'a'; 256 * 1024];
    for _ in 0..16 {
        for socket in &mut held {
            // The server may close a stream whose frame is too large: that is the point.
            let _ = socket.write_all(&chunk).await;
        }
    }
    let what = "64 waiting streams with 4 MiB of a 16 MiB frame each";
    served_in_little_memory(server, before, held, what).await;
}

/// Sends `GET path` (or a POST of `body` to `/mcp`) with `Host: host`, by hand.
async fn with_host(addr: SocketAddr, path: &str, host: &str, upgrade: bool) -> RawResponse {
    let (method, body) = if path == "/mcp" {
        ("POST", INITIALIZE)
    } else {
        ("GET", "")
    };
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    request.push_str(if upgrade {
        "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    } else {
        "Connection: close\r\n"
    });
    request.push_str("\r\n");
    request.push_str(body);
    let mut socket = TcpStream::connect(addr).await.unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    // The head is enough: a live list or a stream would not end.
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    while !bytes.windows(4).any(|w| w == b"\r\n\r\n") {
        match tokio::time::timeout(DEADLINE, socket.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => bytes.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let head = text.split("\r\n\r\n").next().unwrap_or_default().to_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    RawResponse {
        status,
        head,
        body: String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_refuses_a_foreign_host() {
    let mut server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let port = server.addr.port();
    let routes = [
        ("/", false),
        ("/app.js", false),
        ("/safe.js", false),
        ("/style.css", false),
        ("/vendor/xterm.js", false),
        ("/vendor/xterm.css", false),
        ("/api/sessions", false),
        ("/api/sessions/live", false),
        ("/api/sessions/nosuch/stream", true),
        ("/mcp", false),
        ("/no/such/route", false),
    ];
    for (path, upgrade) in routes {
        for host in [
            format!("evil.example:{port}"),
            "evil.example".to_owned(),
            format!("localhost.evil.example:{port}"),
            format!("10.1.2.3:{port}"),
        ] {
            let response = with_host(server.addr, path, &host, upgrade).await;
            assert_eq!(
                response.status, 403,
                "{path} with Host {host}: {response:?}"
            );
        }
        for host in [
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ] {
            let response = with_host(server.addr, path, &host, upgrade).await;
            let expected = match path {
                "/no/such/route" => 404,
                _ if upgrade => 101,
                _ => 200,
            };
            assert_eq!(
                response.status, expected,
                "{path} with Host {host}: {response:?}"
            );
        }
    }
    let log = server.log();
    assert!(lines_of(&log, "foreign-host") >= 1, "{log}");
    assert!(log.contains("evil.example"), "the Host is named:\n{log}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_refusals_is_logged_once_a_second() {
    let mut server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let started = Instant::now();
    for i in 0..1000 {
        let (path, method) = if i % 2 == 0 {
            ("/api/sessions", "GET")
        } else {
            ("/mcp", "POST")
        };
        let response = raw_request_to(server.addr, method, path, &[], INITIALIZE).await;
        assert_eq!(response.status, 401, "{response:?}");
    }
    let took = started.elapsed();
    // Refusals go on until a second line comes: not before a second after the first.
    let mut more = 0;
    while lines_of(&server.log(), "unauthorized") < 2 {
        assert!(
            started.elapsed() < DEADLINE,
            "no second line:\n{}",
            server.log()
        );
        let again = raw_request_to(server.addr, "GET", "/api/sessions", &[], "").await;
        assert_eq!(again.status, 401);
        more += 1;
    }
    let elapsed = started.elapsed();
    let log = server.log();
    let lines = lines_of(&log, "unauthorized");
    eprintln!(
        "1,000 refusals in {took:?}, {more} more until the second line at {elapsed:?}: \
         {lines} log lines"
    );
    assert!(
        elapsed >= Duration::from_secs(1),
        "a second line after {elapsed:?}:\n{log}"
    );
    assert!(
        lines as u64 <= elapsed.as_secs() + 1,
        "{lines} lines in {elapsed:?}:\n{log}"
    );
    let line = log
        .lines()
        .find(|line| line.contains("cause=\"unauthorized\""))
        .unwrap();
    assert!(
        line.contains("peer=127.0.0.1:") && line.contains("401"),
        "the cause and the peer: {line}"
    );
    assert!(
        log.lines()
            .any(|line| line.contains("cause=\"unauthorized\"")
                && line.contains("held_back=")
                && !line.contains("held_back=0")),
        "the refusals held back are counted:\n{log}"
    );

    // A WebSocket whose first message holds a wrong token is refused (4401) and logged.
    let mut wrong = stream(server.addr, "anything", None).await.unwrap();
    wrong
        .send(Message::Text(
            json!({"token": "wrong-token-0123456789"})
                .to_string()
                .into(),
        ))
        .await
        .unwrap();
    let refused = hello(&mut wrong).await.unwrap_err();
    assert!(refused.contains("4401"), "{refused}");
    eventually("the 4401 in the log", || {
        lines_of(&server.log(), "stream-unauthorized") == 1
    })
    .await;
    // A foreign Origin, too.
    let origin = raw_request_to(
        server.addr,
        "GET",
        "/api/sessions",
        &[("Origin", "https://evil.example")],
        "",
    )
    .await;
    assert_eq!(origin.status, 403);
    eventually("the Origin in the log", || {
        lines_of(&server.log(), "foreign-origin") == 1
    })
    .await;
    assert!(!server.log().contains(TOKEN), "no token in the log");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_answers_are_neither_stored_nor_sniffed() {
    let mut server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let auth = format!("Bearer {TOKEN}");
    let with_token = [("Authorization", auth.as_str())];
    let answers = [
        raw_request_to(server.addr, "GET", "/api/sessions", &with_token, "").await,
        raw_request_to(server.addr, "GET", "/api/sessions", &[], "").await,
        raw_post(server.addr, &with_token, INITIALIZE).await,
        raw_post(server.addr, &[], INITIALIZE).await,
        with_host(
            server.addr,
            "/api/sessions/live",
            &server.addr.to_string(),
            false,
        )
        .await,
    ];
    for answer in &answers {
        assert_eq!(
            answer.header("cache-control"),
            Some("no-store"),
            "{answer:?}"
        );
        assert_eq!(
            answer.header("x-content-type-options"),
            Some("nosniff"),
            "{answer:?}"
        );
    }
    assert_eq!(
        answers.iter().map(|a| a.status).collect::<Vec<_>>(),
        [200, 401, 200, 401, 200]
    );
    let page = raw_request_to(server.addr, "GET", "/", &[], "").await;
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    server.stop().await;
}

/// The environment a session's program sees, as `env` prints it.
async fn session_env(client: &Client) -> String {
    let opened = call(client, "pty_open", json!({"command": "env; echo env-done"})).await;
    let value = ok(&opened);
    let text = value["initialOutput"].as_str().unwrap().to_owned();
    assert!(
        text.contains("env-done") && text.contains("PATH="),
        "{value}"
    );
    let id = value["sessionId"].as_str().unwrap();
    call(client, "pty_close", json!({"id": id})).await;
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_of_the_server_reaches_a_session() {
    let dir = scratch("secrets");
    let tokens = tokens_file(&dir, &[("alice", "alice-token-0123456789abcdef")]);
    let mut server = http_server(
        &["--tokens", tokens.to_str().unwrap()],
        &[("PTY_SESSION_TOKEN", TOKEN)],
    )
    .await;
    let agent = current_client(&server.url, TOKEN).await;
    let env = session_env(&agent).await;
    for secret in [
        "PTY_SESSION_TOKEN",
        TOKEN,
        "alice-token",
        tokens.to_str().unwrap(),
    ] {
        assert!(
            !env.contains(secret),
            "{secret:?} in a session's env:\n{env}"
        );
    }
    // Nor in the environment of the spawner, which every shim is a fork of.
    let server_pid = server.child.id().unwrap();
    for spawner in pty_session_testkit::children(server_pid, "pty-spawner") {
        let environ = std::fs::read(format!("/proc/{spawner}/environ")).unwrap();
        let environ = String::from_utf8_lossy(&environ);
        assert!(
            !environ.contains("PTY_SESSION_TOKEN") && !environ.contains(TOKEN),
            "the spawner holds the token"
        );
    }
    drop(agent);
    server.stop().await;

    // The same over stdio: a token meant for another server stays out of sessions too.
    let mut command = tokio::process::Command::new(BIN);
    command.arg("mcp").env("PTY_SESSION_TOKEN", TOKEN);
    let server = stdio_server_from(command).await;
    let env = session_env(&server.client).await;
    assert!(
        !env.contains("PTY_SESSION_TOKEN") && !env.contains(TOKEN),
        "{env}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The descriptors of process `pid`: each number and what it points to.
fn descriptors(pid: u32) -> Vec<(u32, String)> {
    let mut fds: Vec<(u32, String)> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let fd = entry.file_name().to_str()?.parse().ok()?;
            let target = std::fs::read_link(entry.path()).ok()?;
            Some((fd, target.display().to_string()))
        })
        .collect();
    fds.sort();
    fds
}

/// Asserts that `pid`, once it sleeps in `sleep` (past the loader, which opens files of
/// its own for a moment), holds its terminal on 0, 1 and 2, and beyond them only `opened`.
async fn assert_only_its_terminal(pid: u32, opened: &[(u32, &str)]) {
    eventually("the program sleeps in sleep", || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.contains("(sleep) S "))
    })
    .await;
    let fds = descriptors(pid);
    let terminal = &fds[0].1;
    assert!(terminal.starts_with("/dev/pts/"), "{fds:?}");
    let mut expected: Vec<(u32, String)> = (0..3).map(|fd| (fd, terminal.clone())).collect();
    expected.extend(opened.iter().map(|(fd, path)| (*fd, (*path).to_owned())));
    assert_eq!(fds, expected, "the descriptors of pid {pid}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_program_holds_its_terminal_and_nothing_of_the_server() {
    let mut server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let agent = current_client(&server.url, TOKEN).await;
    // The server holds sockets of all kinds while the session starts: MCP connections, a
    // live list, a stream.
    let (first, _) = open(&agent, json!({"command": "cat"})).await;
    let _watching = stream(server.addr, &first, Some(TOKEN)).await.unwrap();
    let live = {
        let addr = server.addr;
        tokio::spawn(async move {
            with_host(addr, "/api/sessions/live", &addr.to_string(), false).await
        })
    };
    let (plain, plain_pid) = open(
        &agent,
        json!({"command": "exec sleep 600", "settle": "none"}),
    )
    .await;
    assert_only_its_terminal(plain_pid, &[]).await;
    let (opener, opener_pid) = open(
        &agent,
        json!({"command": "exec 7</dev/null; exec sleep 600", "settle": "none"}),
    )
    .await;
    assert_only_its_terminal(opener_pid, &[(7, "/dev/null")]).await;
    for id in [first, plain, opener] {
        call(&agent, "pty_close", json!({"id": id})).await;
    }
    live.abort();
    drop(agent);
    server.stop().await;

    // Over stdio, where the server's stdin and stdout are the protocol's pipes.
    let server = stdio_server(&[]).await;
    let (id, pid) = open(
        &server.client,
        json!({"command": "exec sleep 600", "settle": "none"}),
    )
    .await;
    assert_only_its_terminal(pid, &[]).await;
    call(&server.client, "pty_close", json!({"id": id})).await;
}
