//! Programs that redraw rows of the main screen in place, on real PTYs: progress bars
//! moved over with cursor-up, `top` repainting its window, `watch`. Their lines read as a
//! terminal shows them: a row redrawn before it was read comes once, as last drawn.

use std::time::Duration;

use pty_session::{OpenRequest, SendRequest, Settle, Status, TailRequest};

use crate::support::*;

/// A shell script drawing two progress bars as uv, pip and rich do: each frame after the
/// first goes up two rows and erases and draws each row again. With `gate`, it waits for
/// a line (typed without echo) after the first frame.
pub fn two_bars(gate: bool) -> String {
    let wait = if gate { "stty -echo; read go; " } else { "" };
    format!(
        "bar() {{ printf '\\033[2A\\r\\033[2Kget a.whl %3d%%\\r\\n\\r\\033[2Kget b.whl %3d%%\\r\\n' $1 $2; sleep 0.02; }}; \
         printf 'get a.whl %3d%%\\r\\nget b.whl %3d%%\\r\\n' 0 0; {wait}\
         bar 25 10; bar 50 20; bar 75 35; bar 100 50; echo done"
    )
}

/// Waits until the session has exited, without reading it.
async fn until_exited(pty: &pty_session::PtyService, owner: &pty_session::Owner, id: &str) {
    eventually("the program to exit", Duration::from_secs(20), || {
        pty.list(owner)
            .iter()
            .any(|s| s.id.as_str() == id && s.status != Status::Running)
    })
    .await;
}

#[tokio::test]
async fn two_bars_redrawn_before_anyone_reads_come_as_last_drawn() {
    let (pty, owner) = service();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(two_bars(false)).settle(Settle::None),
    )
    .await;
    let id = &opened.session_id;
    until_exited(&pty, &owner, id.as_str()).await;
    let tail = pty.tail(&owner, id, TailRequest::new()).await.unwrap();
    let text = format!("{}{}", opened.initial_output.text, tail.output.text);
    assert_eq!(text, "get a.whl 100%\nget b.whl  50%\ndone\n");
    pty.shutdown().await;
}

#[tokio::test]
async fn two_bars_read_mid_way_keep_what_was_delivered() {
    let (pty, owner) = service();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(two_bars(true)).timeout(Duration::from_millis(15_000)),
    )
    .await;
    let id = &opened.session_id;
    // The first frame, read while the program waits.
    assert_eq!(
        opened.initial_output.text, "get a.whl   0%\nget b.whl   0%\n",
        "{opened:?}"
    );
    let sent = pty
        .send(
            &owner,
            id,
            SendRequest::new("").timeout(Duration::from_millis(15_000)),
        )
        .await
        .unwrap();
    // The rows read stay as they were; their redraws come as last drawn.
    assert_eq!(
        sent.delta.text, "get a.whl 100%\nget b.whl  50%\ndone\n",
        "{sent:?}"
    );
    let all = pty
        .tail(&owner, id, TailRequest::new().from(0))
        .await
        .unwrap();
    assert_eq!(
        all.output.text,
        "get a.whl   0%\nget b.whl   0%\nget a.whl 100%\nget b.whl  50%\ndone\n"
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn redrawn_rows_then_ordinary_lines() {
    let (pty, owner) = service();
    let command = format!("{}; seq 3", two_bars(false));
    let opened = open(&pty, &owner, OpenRequest::new(command).settle(Settle::None)).await;
    let id = &opened.session_id;
    until_exited(&pty, &owner, id.as_str()).await;
    let tail = pty.tail(&owner, id, TailRequest::new()).await.unwrap();
    let text = format!("{}{}", opened.initial_output.text, tail.output.text);
    assert_eq!(text, "get a.whl 100%\nget b.whl  50%\ndone\n1\n2\n3\n");
    pty.shutdown().await;
}

/// The first line of `top`'s window: `top - HH:MM:SS up …`.
fn top_line(screen: &pty_session::Screen) -> String {
    screen.lines.first().cloned().unwrap_or_default()
}

/// Checks that `text` holds at most one frame of `top`, none merged into another's line.
#[track_caller]
fn one_frame_at_most(text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() <= 40, "{} lines:\n{text}", lines.len());
    let headers = lines.iter().filter(|l| l.contains("top - ")).count();
    assert!(headers <= 1, "{headers} frames:\n{text}");
    assert!(
        lines
            .iter()
            .all(|l| !l.contains("top - ") || l.starts_with("top - ")),
        "frames merged into a line:\n{text}"
    );
}

#[tokio::test]
async fn top_on_the_main_screen_reads_as_one_frame_per_reply() {
    let (pty, owner) = service();
    // top reads its layout from the user's toprc: a home of its own keeps its own.
    let home = TempDir::new("top-home");
    let opened = open(
        &pty,
        &owner,
        at_home(OpenRequest::new("top -d 0.3"), &home).timeout(Duration::from_millis(15_000)),
    )
    .await;
    let id = &opened.session_id;
    assert!(!opened.alt_screen);
    one_frame_at_most(&opened.initial_output.text);
    // Wait for later frames: the clock in the first row moves on.
    let first = top_line(&pty.screen(&owner, id).unwrap());
    eventually("top to repaint", Duration::from_secs(20), || {
        top_line(&pty.screen(&owner, id).unwrap()) != first
    })
    .await;
    let tail = pty.tail(&owner, id, TailRequest::new()).await.unwrap();
    one_frame_at_most(&tail.output.text);
    let screen = pty.screen(&owner, id).unwrap();
    assert!(top_line(&screen).starts_with("top - "), "{}", screen.text());
    let sent = pty
        .send(
            &owner,
            id,
            SendRequest::keys(["q"]).timeout(Duration::from_millis(15_000)),
        )
        .await
        .unwrap();
    one_frame_at_most(&sent.delta.text);
    pty.shutdown().await;
}

/// A loop that clears the main screen and draws each frame from the top-left corner
/// (`ESC[H ESC[2J`): a frame nobody read when the next clear comes is replaced, as on the
/// screen, so a reply holds the last frame once; what came before the first clear stays.
#[tokio::test]
async fn a_loop_that_clears_the_main_screen_reads_as_one_frame_per_reply() {
    let (pty, owner) = service();
    let script = "echo before; i=0; while [ $i -lt 10 ]; do i=$((i+1)); \
        printf \"\\033[H\\033[2Jframe %s\\r\\nrow two\\r\\n\" $i; sleep 0.05; done";
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(format!("sh -c '{script}'")).timeout(Duration::from_millis(15_000)),
    )
    .await;
    let text = &opened.initial_output.text;
    assert_eq!(opened.settled_by, pty_session::SettleReason::Exit, "{text}");
    assert_eq!(text.matches("before").count(), 1, "{text}");
    assert_eq!(
        text.matches("frame ").count(),
        1,
        "a copy per frame:\n{text}"
    );
    assert!(text.contains("frame 10\n"), "{text}");
    assert_eq!(text.matches("row two").count(), 1, "{text}");
    pty.shutdown().await;
}

#[tokio::test]
async fn watch_reads_as_one_frame_per_reply() {
    watch_reads_as_one_frame(None).await;
}

/// On a terminal without an alternate screen (TERM=vt100), curses repaints `watch` on the
/// main screen, moving to the cells that changed.
#[tokio::test]
async fn watch_on_the_main_screen_reads_as_one_frame_per_reply() {
    watch_reads_as_one_frame(Some("vt100")).await;
}

async fn watch_reads_as_one_frame(term: Option<&str>) {
    let (pty, owner) = service();
    // It refreshes every half second and never waits for input alone: no settle.
    let mut request = OpenRequest::new("watch -n 0.5 date").settle(Settle::None);
    if let Some(term) = term {
        request = request.env("TERM", term);
    }
    let opened = open(&pty, &owner, request).await;
    let id = &opened.session_id;
    let date = |pty: &pty_session::PtyService| pty.screen(&owner, id).unwrap().text();
    eventually("watch to draw", Duration::from_secs(20), || {
        date(&pty).contains("Every 0.5s: date")
    })
    .await;
    // Two refreshes later (the clock moves on twice).
    for _ in 0..2 {
        let before = date(&pty);
        eventually("watch to refresh", Duration::from_secs(20), || {
            date(&pty) != before
        })
        .await;
    }
    let tail = pty.tail(&owner, id, TailRequest::new()).await.unwrap();
    let text = format!("{}{}", opened.initial_output.text, tail.output.text);
    assert!(
        text.matches("Every 0.5s").count() <= 1,
        "a copy per refresh:\n{text}"
    );
    if term.is_some() {
        // On the main screen its rows are lines: the header and the date, once.
        assert_eq!(text.matches("Every 0.5s: date").count(), 1, "{text}");
        assert_eq!(
            text.lines().filter(|l| l.contains("UTC")).count(),
            1,
            "{text}"
        );
    }
    // A refresh after a read: again at most its frame.
    let before = date(&pty);
    eventually("watch to refresh", Duration::from_secs(20), || {
        date(&pty) != before
    })
    .await;
    let tail = pty.tail(&owner, id, TailRequest::new()).await.unwrap();
    let text = &tail.output.text;
    assert!(text.matches("Every 0.5s").count() <= 1, "{text}");
    assert!(
        text.lines()
            .all(|l| !l.contains("Every 0.5s") || l.starts_with("Every 0.5s")),
        "{text}"
    );
    let screen = pty.screen(&owner, id).unwrap();
    assert_eq!(
        screen.text().matches("Every 0.5s: date").count(),
        1,
        "{}",
        screen.text()
    );
    pty.shutdown().await;
}
