//! Programs that redraw rows of the main screen, through the real binary over stdio: two
//! progress bars moved over with cursor-up, `top` repainting its window, `watch`. Each
//! reads as a terminal shows it, not once per frame.

use serde_json::{Value, json};

use crate::support::{at_home, call, eventually_async, ok, scratch, stdio_server};

/// A shell script drawing two progress bars as uv, pip and rich do (each frame after the
/// first goes up two rows and draws each row again); with `gate`, it waits for a line
/// typed without echo after the first frame.
fn two_bars(gate: bool) -> String {
    let wait = if gate { "stty -echo; read go; " } else { "" };
    format!(
        "bar() {{ printf '\\033[2A\\r\\033[2Kget a.whl %3d%%\\r\\n\\r\\033[2Kget b.whl %3d%%\\r\\n' $1 $2; sleep 0.02; }}; \
         printf 'get a.whl %3d%%\\r\\nget b.whl %3d%%\\r\\n' 0 0; {wait}\
         bar 25 10; bar 50 20; bar 75 35; bar 100 50; echo done"
    )
}

#[tokio::test]
async fn two_bars_through_mcp_read_as_last_drawn() {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    // Read once, after the program ended.
    let opened = call(
        client,
        "pty_open",
        json!({"command": two_bars(false), "timeoutMs": 15000}),
    )
    .await;
    let value = ok(&opened);
    assert_eq!(value["status"], "exited", "{value}");
    assert_eq!(
        value["initialOutput"], "get a.whl 100%\nget b.whl  50%\ndone\n",
        "{value}"
    );

    // Read mid-way: the rows read stay as delivered, the rest come as last drawn.
    let opened = call(
        client,
        "pty_open",
        json!({"command": two_bars(true), "timeoutMs": 15000}),
    )
    .await;
    let value = ok(&opened);
    assert_eq!(
        value["initialOutput"], "get a.whl   0%\nget b.whl   0%\n",
        "{value}"
    );
    let id = value["sessionId"].as_str().unwrap().to_owned();
    let sent = call(
        client,
        "pty_send",
        json!({"id": id, "data": "", "timeoutMs": 15000}),
    )
    .await;
    assert_eq!(
        ok(&sent)["delta"],
        "get a.whl 100%\nget b.whl  50%\ndone\n",
        "{:?}",
        ok(&sent)
    );
}

/// The visible text of a session's window.
async fn screen(client: &crate::support::Client, id: &str) -> String {
    let result = call(client, "pty_screen", json!({"id": id})).await;
    ok(&result)["screen"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Polls the screen until its first line moved on from `before`'s.
async fn until_repainted(client: &crate::support::Client, id: &str, before: &str) {
    eventually_async("a repaint", || async {
        screen(client, id).await.lines().next() != before.lines().next()
    })
    .await;
}

/// Checks that a reply's lines hold at most one frame, none merged into another's line.
#[track_caller]
fn one_frame_at_most(value: &Value, field: &str, header: &str) {
    let text = value[field].as_str().unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() <= 40, "{} lines:\n{text}", lines.len());
    let frames = lines.iter().filter(|l| l.contains(header)).count();
    assert!(frames <= 1, "{frames} frames:\n{text}");
    assert!(
        lines
            .iter()
            .all(|l| !l.contains(header) || l.starts_with(header)),
        "frames merged into a line:\n{text}"
    );
}

#[tokio::test]
async fn top_through_mcp_reads_one_frame_per_reply() {
    let home = scratch("top-home");
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let opened = call(
        client,
        "pty_open",
        // top reads its layout from the user's toprc: a home of its own keeps its own.
        at_home(json!({"command": "top -d 0.3", "timeoutMs": 15000}), &home),
    )
    .await;
    let value = ok(&opened);
    assert_ne!(value["altScreen"], true, "{value}");
    one_frame_at_most(value, "initialOutput", "top - ");
    let id = value["sessionId"].as_str().unwrap().to_owned();
    for _ in 0..2 {
        let before = screen(client, &id).await;
        until_repainted(client, &id, &before).await;
    }
    let tail = call(client, "pty_tail", json!({"id": id})).await;
    one_frame_at_most(ok(&tail), "text", "top - ");
    assert!(screen(client, &id).await.starts_with("top - "));
    let sent = call(
        client,
        "pty_send",
        json!({"id": id, "keys": ["q"], "timeoutMs": 15000}),
    )
    .await;
    one_frame_at_most(ok(&sent), "delta", "top - ");
    let _ = std::fs::remove_dir_all(home);
}

#[tokio::test]
async fn watch_through_mcp_reads_one_frame_per_reply() {
    watch_through_mcp(json!({})).await;
}

/// On a terminal without an alternate screen (TERM=vt100), curses repaints `watch` on the
/// main screen: its rows are lines, the header once per reply at most.
#[tokio::test]
async fn watch_on_the_main_screen_through_mcp_reads_one_frame_per_reply() {
    watch_through_mcp(json!({"TERM": "vt100"})).await;
}

async fn watch_through_mcp(env: Value) {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let opened = call(
        client,
        "pty_open",
        json!({"command": "watch -n 0.5 date", "settle": "none", "env": env}),
    )
    .await;
    let value = ok(&opened);
    let id = value["sessionId"].as_str().unwrap().to_owned();
    // Its first frame, then two refreshes (the clock in the first row moves on), read
    // after each.
    for _ in 0..3 {
        let before = screen(client, &id).await;
        until_repainted(client, &id, &before).await;
        let tail = call(client, "pty_tail", json!({"id": id})).await;
        one_frame_at_most(ok(&tail), "text", "Every 0.5s");
    }
    let now = screen(client, &id).await;
    assert_eq!(now.matches("Every 0.5s: date").count(), 1, "{now}");
}
