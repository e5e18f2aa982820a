//! Full-screen programs through the real binary: `pty_screen`, the screen in replies while
//! the alternate screen is on, `keys`, and `cols`/`rows` on `pty_send`.

use serde_json::json;

use crate::support::{bash, call, eventually_async, ok, open, scratch, stdio_server, text};

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
    let (id, _) = open(client, bash()).await;
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

/// `frame: true` adds the bytes that redraw the window: drawn on an empty terminal (vt100,
/// an emulator other than the server's), they give every cell as the program drew it, in
/// its colours and attributes, with the cursor and the modes. Without it the result is as
/// it always was.
#[tokio::test]
async fn a_screen_frame_redraws_the_cells_in_their_colours() {
    const COLS: u16 = 40;
    const ROWS: u16 = 10;
    let program = concat!(
        "\x1b[?1049h\x1b[H\x1b[2J",
        "\x1b[1;31mbold red\x1b[0m plain \x1b[7minverse\x1b[0m\r\n",
        "\x1b[38;5;208;48;5;17mindexed\x1b[38;2;1;2;3;48;2;250;251;252m rgb \x1b[0m\r\n",
        "\x1b[2;3;4mdim italic under\x1b[0m\r\n",
        "\x1b[92;104mbright\x1b[0m wide 漢字 é\r\n",
        "\x1b[44m\x1b[K\x1b[0m\r\n",
        "\x1b[10;1H\x1b[46m status bar in cyan \x1b[0m",
        "\x1b[?25l\x1b[?1h\x1b[?2004h\x1b[5;7H",
    );
    let dir = scratch("screen-frame");
    std::fs::write(dir.join("screen.bin"), program).unwrap();
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let (id, _) = open(
        client,
        json!({
            "command": "cat screen.bin; exec sleep 600", "cwd": dir,
            "cols": COLS, "rows": ROWS, "settle": "none",
        }),
    )
    .await;

    let value = std::cell::RefCell::new(serde_json::Value::Null);
    eventually_async("the program's screen", || async {
        let result = call(client, "pty_screen", json!({"id": id, "frame": true})).await;
        *value.borrow_mut() = ok(&result).clone();
        value.borrow()["screen"]
            .as_str()
            .unwrap()
            .contains("status bar")
    })
    .await;
    let value = value.into_inner();
    let frame = value["frame"].as_str().expect("a frame").as_bytes();

    let mut drawn = vt100::Parser::new(ROWS, COLS, 0);
    drawn.process(program.as_bytes());
    let mut redrawn = vt100::Parser::new(ROWS, COLS, 0);
    redrawn.process(frame);
    let (before, after) = (drawn.screen(), redrawn.screen());
    let shown = |screen: &vt100::Screen, row, col| {
        let cell = screen.cell(row, col).unwrap();
        // A cell never written and a written blank look the same.
        let text = match cell.contents() {
            "" => " ",
            text => text,
        };
        (
            text.to_owned(),
            cell.fgcolor(),
            cell.bgcolor(),
            (
                cell.bold(),
                cell.dim(),
                cell.italic(),
                cell.underline(),
                cell.inverse(),
            ),
        )
    };
    for row in 0..ROWS {
        for col in 0..COLS {
            assert_eq!(
                shown(before, row, col),
                shown(after, row, col),
                "row {row} column {col}; frame {:?}",
                String::from_utf8_lossy(frame)
            );
        }
    }
    // The colours are really there, not the defaults on both sides.
    assert_eq!(after.cell(0, 0).unwrap().fgcolor(), vt100::Color::Idx(1));
    assert!(after.cell(0, 0).unwrap().bold());
    assert_eq!(after.cell(1, 0).unwrap().fgcolor(), vt100::Color::Idx(208));
    assert_eq!(
        after.cell(1, 8).unwrap().bgcolor(),
        vt100::Color::Rgb(250, 251, 252)
    );
    assert_eq!(
        after.cell(4, COLS - 1).unwrap().bgcolor(),
        vt100::Color::Idx(4)
    );
    assert!(after.cell(0, 15).unwrap().inverse());
    assert_eq!(after.cursor_position(), (4, 6));
    assert_eq!(after.cursor_position(), before.cursor_position());
    assert!(after.alternate_screen() && after.hide_cursor());
    assert!(after.application_cursor() && after.bracketed_paste());
    assert_eq!(value["cursor"], json!({"row": 4, "col": 6}));

    // Asked for nothing more, pty_screen answers as it always did: no frame.
    let plain = call(client, "pty_screen", json!({"id": id})).await;
    let plain = ok(&plain);
    assert!(plain.get("frame").is_none(), "{plain}");
    assert_eq!(plain["screen"], value["screen"]);
    let rejected = call(client, "pty_screen", json!({"id": id, "frame": "yes"})).await;
    assert_eq!(rejected.is_error, Some(true), "{rejected:?}");
    call(client, "pty_close", json!({"id": id})).await;
    let _ = std::fs::remove_dir_all(&dir);
}
