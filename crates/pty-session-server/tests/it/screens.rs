//! Full-screen programs through the real binary: `pty_screen`, the screen in replies while
//! the alternate screen is on, `keys`, and `cols`/`rows` on `pty_send`.

use serde_json::json;

use crate::support::{call, ok, open, scratch, stdio_server, text};

#[tokio::test]
async fn vim_through_mcp_with_keys_and_the_screen() {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let dir = scratch("vim-mcp");
    let path = dir.join("notes.txt");
    std::fs::write(&path, "first line\n").unwrap();

    let opened = call(
        client,
        "pty_open",
        json!({"command": "vim --clean notes.txt", "cwd": dir, "timeoutMs": 15000}),
    )
    .await;
    let value = ok(&opened);
    let id = value["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(value["altScreen"], true);
    assert!(
        value["screen"]
            .as_str()
            .unwrap()
            .starts_with("first line\n~"),
        "{value}"
    );
    assert_eq!(value["cursor"], json!({"row": 0, "col": 0}));
    // The text block is the screen, then the status line.
    let block = text(&opened);
    assert!(block.starts_with("first line\n~\n"), "{block}");
    assert!(block.ends_with("· alt screen on · cursor 0,0]"), "{block}");

    let sent = call(
        client,
        "pty_send",
        json!({"id": id, "keys": ["o", "added by keys", "Escape"], "timeoutMs": 15000}),
    )
    .await;
    let value = ok(&sent);
    assert!(
        value["screen"]
            .as_str()
            .unwrap()
            .starts_with("first line\nadded by keys\n"),
        "{value}"
    );
    assert_eq!(value["cursor"], json!({"row": 1, "col": 12}));
    let sent = call(
        client,
        "pty_send",
        json!({"id": id, "keys": ["Up"], "timeoutMs": 15000}),
    )
    .await;
    assert_eq!(ok(&sent)["cursor"]["row"], 0);

    let screen = call(client, "pty_screen", json!({"id": id})).await;
    let value = ok(&screen);
    assert_eq!(value["cols"], 120);
    assert_eq!(value["rows"], 40);
    assert_eq!(value["altScreen"], true);
    assert_eq!(value["status"], "running");
    let block = text(&screen);
    assert!(
        block.starts_with("first line\nadded by keys\n~\n"),
        "{block}"
    );
    assert!(
        block.ends_with("running · screen 120×40 · alt screen on · cursor 0,9]"),
        "{block}"
    );

    let sent = call(
        client,
        "pty_send",
        json!({"id": id, "keys": [":wq", "Enter"], "timeoutMs": 15000}),
    )
    .await;
    let value = ok(&sent);
    assert_eq!(value["status"], "exited", "{value}");
    assert!(value.get("screen").is_none() && value.get("altScreen").is_none());
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "first line\nadded by keys\n"
    );
    // The screen of an exited session is still there.
    let screen = call(client, "pty_screen", json!({"id": id})).await;
    assert_eq!(ok(&screen)["status"], "exited");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn resize_through_mcp() {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let (id, _) = open(
        client,
        json!({"command": "bash --norc --noprofile -i", "env": {"PS1": "$ "}}),
    )
    .await;
    let resized = call(
        client,
        "pty_send",
        json!({"id": id, "data": "", "submit": false, "cols": 80, "rows": 24}),
    )
    .await;
    ok(&resized);
    let sent = call(client, "pty_send", json!({"id": id, "data": "tput cols"})).await;
    assert!(
        ok(&sent)["delta"].as_str().unwrap().ends_with("80\n"),
        "{sent:?}"
    );
    let screen = call(client, "pty_screen", json!({"id": id})).await;
    let value = ok(&screen);
    assert_eq!(
        (value["cols"].as_u64(), value["rows"].as_u64()),
        (Some(80), Some(24))
    );
    assert_eq!(value["screen"], "$ tput cols\n80\n$");
    assert_eq!(value["cursor"], json!({"row": 2, "col": 2}));
}
