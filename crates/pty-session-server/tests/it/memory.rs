//! Memory after load: what sixty sessions used goes back to the system once they close.

use serde_json::json;

use crate::support::{call, eventually, ok, rss_kib, stdio_server};

/// What the server may keep over its starting size once sixty sessions with full
/// scrollbacks and screens were opened and closed. Before the allocator was trimmed it
/// kept some 25 MB (debug build: 21 → 46 MB, growing by 5 MB each round).
const KEPT_KIB: u64 = 10 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_goes_back_after_sixty_sessions_close() {
    let server = stdio_server(&["--max-sessions-per-owner", "100"]).await;
    let pid = server.child.id().unwrap();
    call(&server.client, "pty_list", json!({})).await;
    let start = rss_kib(pid);
    let mut peak = start;
    for round in 0..2 {
        let mut ids = Vec::new();
        for _ in 0..60 {
            let result = call(
                &server.client,
                "pty_open",
                json!({"command": "seq 1 3000; exec cat", "until": "^3000$"}),
            )
            .await;
            ids.push(ok(&result)["sessionId"].as_str().unwrap().to_owned());
        }
        for id in &ids {
            let sent = call(
                &server.client,
                "pty_send",
                json!({"id": id, "data": "hello ".repeat(40), "until": "hello"}),
            )
            .await;
            ok(&sent);
            ok(&call(&server.client, "pty_screen", json!({"id": id})).await);
        }
        peak = peak.max(rss_kib(pid));
        for id in &ids {
            let closed = call(&server.client, "pty_close", json!({"id": id})).await;
            assert_eq!(ok(&closed)["closed"], true);
        }
        eventually(
            &format!("round {round}: memory back near {start} KiB"),
            || rss_kib(pid) <= start + KEPT_KIB,
        )
        .await;
    }
    eprintln!(
        "RSS: {start} KiB at start, {peak} KiB at the peak, {} KiB after closing",
        rss_kib(pid)
    );
    assert!(
        peak > start + KEPT_KIB,
        "the load used memory: {start} → {peak} KiB"
    );
}
