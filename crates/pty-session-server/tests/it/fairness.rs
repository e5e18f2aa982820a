//! One token against another in the same `serve`: endless streams of one token do not
//! lock another out, and one owner's output floods do not starve another's calls.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::support::*;

const ALICE: &str = "fairness-alice-0123456789abcdef";
const BOB: &str = "fairness-bobby-0123456789abcdef";

/// A live list of `token`'s sessions, never read past its head: the socket, held open.
async fn live_list(addr: std::net::SocketAddr, token: &str) -> TcpStream {
    let mut socket = TcpStream::connect(addr).await.expect("connect");
    let request = format!(
        "GET /api/sessions/live HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\r\n"
    );
    // The server may close it at once (that is what is tested); a write cut short is fine.
    let _ = socket.write_all(request.as_bytes()).await;
    socket
}

/// Reads `socket` until its answer ends (the end of the chunked body, or the connection's
/// end) within `limit`; what it read, or `None` if it still runs.
async fn ended(socket: &mut TcpStream, limit: Duration) -> Option<String> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, socket.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(String::from_utf8_lossy(&seen).into_owned()),
            Ok(Ok(n)) => {
                seen.extend_from_slice(&buf[..n]);
                if seen.ends_with(b"\r\n0\r\n\r\n") {
                    return Some(String::from_utf8_lossy(&seen).into_owned());
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tokens_endless_live_lists_lock_no_other_token_out() {
    pty_session::nofile::raise_to(8192);
    let dir = scratch("fairness-lockout");
    let tokens = tokens_file(&dir, &[("alice", ALICE), ("bob", BOB)]);
    let mut server = http_server(
        &[
            "--tokens",
            tokens.to_str().unwrap(),
            "--max-connections",
            "40",
        ],
        &[],
    )
    .await;
    // Alice: more never-ending live lists than there are connections.
    let mut streams = Vec::new();
    for _ in 0..60 {
        streams.push(live_list(server.addr, ALICE).await);
        // Each is taken in before the next, as a client that waits for its head would.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    // Bob is served, promptly.
    let start = Instant::now();
    let bob = current_client(&server.url, BOB).await;
    let tail = call(&bob, "pty_tail", json!({"id": "nosuch99"})).await;
    assert_error(&tail, "UNKNOWN_SESSION");
    let took = start.elapsed();
    assert!(took < Duration::from_secs(5), "bob served after {took:?}");

    // Alice's newer streams closed her oldest, and the log names her (not her token).
    let first = ended(&mut streams[0], Duration::from_secs(10)).await;
    assert!(
        first.is_some(),
        "alice's oldest live list was closed for her newer ones"
    );
    let newest = streams.last_mut().unwrap();
    assert!(
        ended(newest, Duration::from_millis(300)).await.is_none(),
        "alice's newest live list runs on"
    );
    let log = server.log();
    let line = log
        .lines()
        .find(|line| line.contains("cause=\"stream-cap\""))
        .unwrap_or_else(|| panic!("no stream-cap refusal in the log:\n{log}"));
    assert!(
        line.contains("token \"alice\""),
        "the line names alice: {line}"
    );
    assert!(!log.contains(ALICE), "no token in the log:\n{log}");
    drop(streams);
    drop(bob);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_past_its_requests_in_flight_gets_a_503_naming_it_and_another_is_served() {
    pty_session::nofile::raise_to(8192);
    let dir = scratch("fairness-calls");
    let tokens = tokens_file(&dir, &[("alice", ALICE), ("bob", BOB)]);
    let mut server = http_server(
        &[
            "--tokens",
            tokens.to_str().unwrap(),
            "--max-connections",
            "40",
            "--max-connections-per-token",
            "3",
        ],
        &[],
    )
    .await;
    let alice = current_client(&server.url, ALICE).await;
    // A program that waits on nothing a person can give: a tail's settle waits it out.
    let (id, _) = open(
        &alice,
        json!({"command": "exec sleep 60", "settle": "none"}),
    )
    .await;
    // Three long waits of alice fill her share of the requests in flight. They last
    // until the test ends them: on a machine busy with other tests, their starts may be
    // seconds apart, and waits that end by themselves might never all be in flight.
    let mut waits = Vec::new();
    for _ in 0..3 {
        let alice = current_client(&server.url, ALICE).await;
        let id = id.clone();
        waits.push(tokio::spawn(async move {
            let args = json!({"id": id, "until": "never-printed", "timeoutMs": 60000});
            let _ = try_call(&alice, "pty_tail", args).await;
        }));
    }
    let auth = format!("Bearer {ALICE}");
    let headers = [("Authorization", auth.as_str())];
    let addr = server.addr;
    // A request of alice's beside her waits: the web API's list of sessions.
    let alices_list = || raw_request_to(addr, "GET", "/api/sessions", &headers, "");
    eventually_async("alice's fourth request to be refused", || async {
        let refused = alices_list().await;
        refused.status == 503 && refused.body.contains("token \"alice\"")
    })
    .await;
    let bob = current_client(&server.url, BOB).await;
    let tail = call(&bob, "pty_tail", json!({"id": "nosuch99"})).await;
    assert_error(&tail, "UNKNOWN_SESSION");
    let log = server.log();
    assert!(
        log.lines()
            .any(|l| l.contains("cause=\"token-connection-cap\"") && l.contains("token \"alice\"")),
        "the refusal names alice:\n{log}"
    );
    // Alice's own calls are served again once hers in flight ended: her three waits
    // gone with their connections.
    for wait in &waits {
        wait.abort();
    }
    for wait in waits {
        let _ = wait.await;
    }
    eventually_async("alice to be served again", || async {
        alices_list().await.status == 200
    })
    .await;
    ok(&call(&alice, "pty_close", json!({"id": id})).await);
    drop((alice, bob));
    server.stop().await;
}

/// Owner B's echo stays prompt while owner A floods in the same server: a generous bound
/// that catches starvation (hundreds of ms), not a measurement (that is the bench's
/// fairness row).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_owners_floods_do_not_starve_another_owners_echo() {
    let dir = scratch("fairness-floods");
    let tokens = tokens_file(&dir, &[("alice", ALICE), ("bob", BOB)]);
    let mut server = http_server(&["--tokens", tokens.to_str().unwrap()], &[]).await;
    let alice = current_client(&server.url, ALICE).await;
    let bob = current_client(&server.url, BOB).await;
    let (echo, _) = open(&bob, json!({"command": "exec cat"})).await;
    let mut floods = Vec::new();
    for _ in 0..30 {
        let (id, _) = open(&alice, json!({"command": "exec yes", "settle": "none"})).await;
        floods.push(id);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut took = Vec::new();
    for i in 0..8 {
        let data = format!("echo-{i}");
        let start = Instant::now();
        let sent = call(&bob, "pty_send", json!({"id": echo, "data": data})).await;
        took.push(start.elapsed());
        assert_eq!(ok(&sent)["delta"], format!("{data}\n{data}\n"));
    }
    for id in &floods {
        ok(&call(&alice, "pty_close", json!({"id": id})).await);
    }
    ok(&call(&bob, "pty_close", json!({"id": echo})).await);
    drop((alice, bob));
    server.stop().await;
    let max = took.iter().max().copied().unwrap_or_default();
    eprintln!("bob's echo beside 30 floods: {took:?}");
    assert!(
        max < Duration::from_millis(250),
        "bob's echo took up to {max:?} beside alice's floods: {took:?}"
    );
}
