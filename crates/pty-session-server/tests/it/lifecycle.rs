//! Stopping: EOF on stdin, SIGTERM and SIGINT close every session, process trees reaped,
//! before the server exits; the same for `serve` on SIGTERM.

use serde_json::json;

use crate::support::{
    alive, call, current_client, exit_success, http_server, ok, signal, stdio_server,
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
