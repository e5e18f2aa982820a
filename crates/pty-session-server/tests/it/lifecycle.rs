//! Stopping: EOF on stdin, SIGTERM and SIGINT close every session, process trees reaped,
//! before the server exits; the same for `serve` on SIGTERM.

use serde_json::json;

use crate::support::{
    alive, call, current_client, eventually, exit_success, http_server, ok, signal, stdio_server,
};

/// Opens a session whose command leaves a grandchild in its own session; returns both pids.
async fn open_tree(client: &crate::support::Client) -> (u32, u32) {
    let result = call(
        client,
        "pty_open",
        json!({"command": "setsid sleep 311 & echo bg=$!; exec sleep 310", "until": "^bg="}),
    )
    .await;
    let value = ok(&result);
    let pid = u32::try_from(value["pid"].as_u64().unwrap()).unwrap();
    let output = value["initialOutput"].as_str().unwrap();
    let bg = output
        .lines()
        .find_map(|line| line.strip_prefix("bg="))
        .unwrap_or_else(|| panic!("no bg= line in {output:?}"))
        .parse()
        .unwrap();
    assert!(alive(pid) && alive(bg));
    (pid, bg)
}

#[tokio::test]
async fn stdin_eof_kills_every_child() {
    let mut server = stdio_server(&[]).await;
    let (a, a_bg) = open_tree(&server.client).await;
    let (b, b_bg) = open_tree(&server.client).await;
    // Dropping the client closes the server's stdin.
    server.client.cancel().await.unwrap();
    assert!(
        exit_success(&mut server.child).await,
        "a clean exit after EOF"
    );
    for pid in [a, a_bg, b, b_bg] {
        assert!(!alive(pid), "{pid} outlived the server");
    }
}

#[tokio::test]
async fn sigterm_and_sigint_kill_every_child_of_a_stdio_server() {
    for name in ["TERM", "INT"] {
        let mut server = stdio_server(&[]).await;
        let (pid, bg) = open_tree(&server.client).await;
        signal(&server.child, name);
        assert!(
            exit_success(&mut server.child).await,
            "a clean exit on SIG{name}"
        );
        assert!(!alive(pid) && !alive(bg), "SIG{name} left a process");
    }
}

#[tokio::test]
async fn sigterm_kills_every_child_of_an_http_server() {
    let token = "lifecycle-token-0123456789";
    let mut server = http_server(&[], &[("PTY_SESSION_TOKEN", token)]).await;
    let client = current_client(&server.url, token).await;
    let (pid, bg) = open_tree(&client).await;
    signal(&server.child, "TERM");
    assert!(
        exit_success(&mut server.child).await,
        "a clean exit on SIGTERM"
    );
    assert!(!alive(pid) && !alive(bg));
}

/// The server cannot clean up after SIGKILL; the shims see their control socket close and
/// kill their trees themselves, and the spawner sees its socket close (docs/tools.md: within 2
/// seconds).
#[tokio::test]
async fn sigkill_of_the_server_leaves_no_orphan_within_2_seconds() {
    let mut server = stdio_server(&[]).await;
    let dir = std::env::temp_dir().join(format!("pty-sigkill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("pids");
    // Escapes of every kind, each recording its final pid; the leader ignores HUP and TERM.
    let command = r#"trap '' HUP TERM; echo $$ >> "$F"
        setsid sh -c 'echo $$ >> "$F"; exec sleep 1002' &
        nohup sh -c 'echo $$ >> "$F"; exec sleep 1003' >/dev/null 2>&1 &
        ( sh -c 'echo $$ >> "$F"; exec sleep 1004' & )
        setsid sh -c '( sh -c "echo \$\$ >> \"\$F\"; exec sleep 1005" & )' &
        env -i F="$F" setsid sh -c 'echo $$ >> "$F"; exec sleep 1006' &
        sh -c 'trap "" HUP TERM; echo $$ >> "$F"; sleep 1007; :' &
        sleep 1000"#;
    let mut pids = Vec::new();
    for _ in 0..2 {
        let _ = std::fs::remove_file(&file);
        let result = call(
            &server.client,
            "pty_open",
            json!({"command": command, "env": {"F": file.to_str().unwrap()}, "settle": "none"}),
        )
        .await;
        ok(&result);
        let mut found: Vec<u32> = Vec::new();
        eventually("the 7 escapes to record their pids", || {
            found = std::fs::read_to_string(&file)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect();
            found.len() == 7
        })
        .await;
        pids.extend(found);
    }
    // The spawner, its spare and the shims go too.
    let server_pid = server.child.id().expect("the server runs");
    let spawners = pty_session_testkit::children(server_pid, "pty-spawner");
    assert_eq!(spawners.len(), 1, "one spawner: {spawners:?}");
    let shims = pty_session_testkit::children(spawners[0], "pty-shim");
    assert_eq!(shims.len(), 2, "a shim per session: {shims:?}");
    let spare = [pty_session_testkit::spare_of(spawners[0]).await];
    pids.extend(
        spawners
            .iter()
            .chain(&shims)
            .chain(&spare)
            .map(|&pid| pid as u32),
    );
    assert!(pids.iter().all(|&pid| alive(pid)));
    signal(&server.child, "KILL");
    let _ = server.child.wait().await;
    let killed = std::time::Instant::now();
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(2),
        eventually("every process to go", || {
            !pids.iter().any(|&pid| alive(pid))
        }),
    )
    .await;
    let survivors: Vec<u32> = pids.iter().copied().filter(|&pid| alive(pid)).collect();
    let took = killed.elapsed();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        survivors.is_empty(),
        "alive 2 s after SIGKILL: {survivors:?}"
    );
    eprintln!(
        "all {} processes gone {took:?} after the server's SIGKILL",
        pids.len()
    );
}

/// A client that dies while a `pty_send` waits (600 s) takes the server and every session
/// with it at once: EOF on stdin cancels the wait rather than waiting it out.
#[tokio::test]
async fn stdin_closed_during_a_long_send_ends_everything_within_half_a_second() {
    let mut server = stdio_server(&[]).await;
    let dir = crate::support::scratch("dying-client");
    let file = dir.join("read");
    let (a, a_bg) = open_tree(&server.client).await;
    // Reads one line, then sleeps: the send's wait has nothing to end on but its timeout.
    let result = call(
        &server.client,
        "pty_open",
        json!({"command": "head -n1 > \"$F\"; exec sleep 312", "env": {"F": file.to_str().unwrap()}}),
    )
    .await;
    let value = ok(&result);
    let id = value["sessionId"].as_str().unwrap().to_owned();
    let waiter = u32::try_from(value["pid"].as_u64().unwrap()).unwrap();
    let server_pid = server.child.id().unwrap();
    let spawner = pty_session_testkit::children(server_pid, "pty-spawner");
    let shims = pty_session_testkit::children(spawner[0], "pty-shim");
    assert_eq!(shims.len(), 2, "a shim per session: {shims:?}");
    let peer = server.client.peer().clone();
    let send = tokio::spawn(async move {
        let arguments =
            json!({"id": id, "data": "go", "timeoutMs": 600_000, "until": "never-printed"});
        let serde_json::Value::Object(arguments) = arguments else {
            unreachable!()
        };
        peer.call_tool(
            rmcp::model::CallToolRequestParams::new("pty_send").with_arguments(arguments),
        )
        .await
    });
    // The line reached the program: the send now waits.
    eventually("the program to read the line", || {
        assert!(!send.is_finished(), "the send ended early");
        std::fs::read_to_string(&file).is_ok_and(|text| text == "go\n")
    })
    .await;
    let closed = std::time::Instant::now();
    server.client.cancel().await.unwrap();
    let mut pids: Vec<u32> = vec![a, a_bg, waiter, server_pid];
    pids.extend(spawner.iter().chain(&shims).map(|&pid| pid as u32));
    let _ = server.child.wait().await;
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(2),
        eventually("every process to go", || {
            !pids.iter().any(|&pid| alive(pid))
        }),
    )
    .await;
    let took = closed.elapsed();
    let survivors: Vec<u32> = pids.iter().copied().filter(|&pid| alive(pid)).collect();
    assert!(survivors.is_empty(), "alive 2 s after EOF: {survivors:?}");
    eprintln!("server and sessions gone {took:?} after the client's stdin closed");
    assert!(
        took.as_millis() <= 500,
        "the server and its sessions took {took:?} to go after EOF"
    );
    let _ = send.await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// An HTTP client that drops its connection while a `pty_send` waits is an expected event:
/// the call is cancelled and its reply has nowhere to go, which is logged as no error.
#[tokio::test]
async fn an_http_client_dropping_mid_call_logs_no_error() {
    use tokio::io::AsyncWriteExt as _;
    let token = "lifecycle-token-0123456789";
    let mut server = http_server(
        &[],
        &[
            ("PTY_SESSION_TOKEN", token),
            (
                "RUST_LOG",
                "warn,pty_session_server=info,rmcp::service=info",
            ),
        ],
    )
    .await;
    let dir = crate::support::scratch("dropping-http-client");
    let file = dir.join("read");
    let client = current_client(&server.url, token).await;
    let result = call(
        &client,
        "pty_open",
        json!({"command": "head -n1 > \"$F\"; exec sleep 313", "env": {"F": file.to_str().unwrap()}}),
    )
    .await;
    let id = ok(&result)["sessionId"].as_str().unwrap().to_owned();
    // The current protocol by hand: one request, its reply on this connection only.
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "pty_send",
        "arguments": {"id": id, "data": "go", "timeoutMs": 600_000, "until": "never-printed"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    }})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: pty_send\r\n\
         Content-Length: {}\r\n\r\n{body}",
        server.addr,
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    crate::support::eventually("the send's line to be read", || {
        std::fs::read_to_string(&file).is_ok_and(|text| text == "go\n")
    })
    .await;
    let finished = server.log().matches("quit_reason=Cancelled").count();
    drop(stream);
    // rmcp ends the request's service once its reply has been tried.
    crate::support::eventually("the dropped request's service to finish", || {
        server.log().matches("quit_reason=Cancelled").count() > finished
    })
    .await;
    let log = server.log();
    assert!(!log.contains("ERROR"), "an error was logged:\n{log}");
    // The session stays, and answers.
    let tail = call(&client, "pty_tail", json!({"id": id})).await;
    ok(&tail);
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
