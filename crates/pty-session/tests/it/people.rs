//! People beside the agent: recordings, the live feed, and a person's own keystrokes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pty_session::{
    Config, OpenRequest, Owner, PtyService, SendRequest, SessionId, Settle, Status, WatchEvent,
};

use crate::support::*;

const DEADLINE: Duration = Duration::from_secs(30);

fn recording_service(dir: &Path, max_bytes: u64, input: bool) -> (PtyService, Owner) {
    let mut config = Config::default();
    config.record_dir = Some(dir.to_owned());
    config.record_max_bytes = max_bytes;
    config.record_input = input;
    (PtyService::new(config), Owner::new("test"))
}

/// The one recording of session `id` in `dir`.
fn cast_of(dir: &Path, id: &SessionId) -> PathBuf {
    let suffix = format!("-{}.cast", id.as_str());
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_str().unwrap().ends_with(&suffix))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one recording of {id:?} in {dir:?}: {found:?}"
    );
    found.into_iter().next().unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[tokio::test]
async fn a_flood_is_recorded_up_to_the_cap_then_marked_cut() {
    let dir = TempDir::new("record-cap");
    let cap = 64 * 1024;
    let (pty, owner) = recording_service(&dir.0, cap, false);
    let opened = open(&pty, &owner, OpenRequest::new("seq 1 200000")).await;
    let path = cast_of(&dir.0, &opened.session_id);
    pty.close(&owner, &opened.session_id).await.unwrap();
    eventually("the recording ends with its cut marker", DEADLINE, || {
        read(&path)
            .lines()
            .last()
            .unwrap_or_default()
            .contains("recording cut")
    })
    .await;
    let text = read(&path);
    let size = text.len() as u64;
    assert!(size <= cap + 200, "{size} bytes for a cap of {cap}");
    assert!(size > cap / 2, "{size} bytes: the cap was not used");
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("{\"version\":2,\"width\":120,\"height\":40,")
    );
    let marker = text.lines().last().unwrap();
    assert!(
        marker.contains(",\"m\",\"recording cut: it reached its size cap of 65536 bytes"),
        "{marker}"
    );
    assert!(text.contains("[0."), "relative times start near 0");
    assert!(
        text.contains("\\r\\n1000\\r\\n"),
        "output is recorded as the terminal got it"
    );
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "a recording is private to the user");
}

#[tokio::test]
async fn only_agent_input_is_recorded_and_only_when_asked() {
    for record_input in [false, true] {
        let dir = TempDir::new("record-input");
        let (pty, owner) = recording_service(&dir.0, 1 << 20, record_input);
        let opened = open(&pty, &owner, OpenRequest::new("cat")).await;
        let id = &opened.session_id;
        pty.send(&owner, id, SendRequest::new("agent-typed"))
            .await
            .unwrap();
        pty.person_input(&owner, id, b"person-typed\r")
            .await
            .unwrap();
        let sent = pty
            .send(&owner, id, SendRequest::new("done"))
            .await
            .unwrap();
        assert!(
            sent.delta.text.contains("person-typed\n"),
            "cat echoes it: {sent:?}"
        );
        let path = cast_of(&dir.0, id);
        pty.close(&owner, id).await.unwrap();
        eventually("the recording has the last output", DEADLINE, || {
            read(&path).contains("done\\r\\n")
        })
        .await;
        let text = read(&path);
        let inputs: Vec<&str> = text.lines().filter(|l| l.contains(",\"i\",")).collect();
        if record_input {
            assert_eq!(inputs.len(), 2, "{text}");
            assert!(inputs[0].ends_with(",\"i\",\"agent-typed\\r\"]"), "{text}");
            assert!(inputs[1].ends_with(",\"i\",\"done\\r\"]"), "{text}");
        } else {
            assert!(inputs.is_empty(), "{text}");
        }
        assert!(
            !text.contains("\"i\",\"person"),
            "a person's keys are never input events"
        );
    }
}

/// Tails `id` until its process exited; returns every line read.
async fn until_exited(pty: &PtyService, owner: &Owner, id: &SessionId) -> String {
    let transcript = std::cell::RefCell::new(String::new());
    eventually_async(&format!("{id:?} to exit"), DEADLINE, || async {
        let tail = pty.tail(owner, id, Some(100_000)).await.unwrap();
        transcript.borrow_mut().push_str(&tail.output.text);
        matches!(tail.status, Status::Exited(_))
    })
    .await;
    transcript.into_inner()
}

/// Reads a watch until its output holds `needle`; returns everything it read.
async fn watch_until(watch: &mut pty_session::Watch, needle: &str) -> String {
    let mut seen = String::new();
    let found = tokio::time::timeout(DEADLINE, async {
        loop {
            match watch.next().await {
                WatchEvent::Output(bytes) => {
                    seen.push_str(&String::from_utf8_lossy(&bytes));
                    if seen.contains(needle) {
                        return true;
                    }
                }
                WatchEvent::Skipped(_) => {}
                WatchEvent::Ended => return false,
                _ => {}
            }
        }
    })
    .await;
    assert_eq!(
        found,
        Ok(true),
        "{needle:?} did not come; the watch saw {seen:?}"
    );
    seen
}

/// Lines printed before a watcher came, still in the window, come in their colours; the
/// prompt keeps the blank after it.
#[tokio::test]
async fn a_watcher_sees_recent_lines_in_their_colours() {
    let (pty, owner) = service();
    let python = python3();
    let home = TempDir::new("python-colours");
    let opened = open(
        &pty,
        &owner,
        at_home(OpenRequest::new(format!("{python} -q")), &home),
    )
    .await;
    let id = &opened.session_id;
    let recent = recent_after(
        &pty,
        &owner,
        id,
        r"print('\x1b[31mred\x1b[0m plain \x1b[1;32mgreen\x1b[0m')",
    )
    .await;
    assert!(
        recent.ends_with("\x1b[0;31mred\x1b[0m plain \x1b[0;1;32mgreen\x1b[0m\r\n>>> "),
        "{:?}",
        recent
    );
    pty.close(&owner, id).await.unwrap();
}

/// Lines printed in colour that scrolled out of the window before a watcher came come in
/// their colours too, whether the session's screen was looked at before or not.
#[tokio::test]
async fn a_watcher_sees_lines_scrolled_out_of_the_window_in_their_colours() {
    let (pty, owner) = service();
    let python = python3();
    for screened in [false, true] {
        let home = TempDir::new("python-history");
        let request = OpenRequest::new(format!("{python} -q")).rows(10);
        let opened = open(&pty, &owner, at_home(request, &home)).await;
        let id = &opened.session_id;
        if screened {
            pty.screen(&owner, id).unwrap();
        }
        let recent = recent_after(
            &pty,
            &owner,
            id,
            r"print('\x1b[31merror: red\x1b[0m'); print('\n'.join(map(str, range(40))))",
        )
        .await;
        assert!(
            recent.contains("\r\n\x1b[0;31merror: red\x1b[0m\r\n0\r\n1\r\n"),
            "screened {screened}: {:?}",
            recent
        );
        assert!(recent.ends_with("\r\n39\r\n>>> "), "{:?}", recent);
        pty.close(&owner, id).await.unwrap();
    }
}

/// The same in an interactive bash with our hooks, whose prompt is redrawn by readline:
/// `ls --color`'s directory in its colours, above the lines that pushed it out.
#[tokio::test]
async fn a_watcher_of_bash_sees_ls_colours_scrolled_out_of_the_window() {
    let (pty, owner) = service();
    let home = TempDir::new("bash-history");
    std::fs::create_dir(home.0.join("adir")).unwrap();
    let request = OpenRequest::new("bash --norc --noprofile -i")
        .rows(10)
        .cwd(&home.0);
    let opened = open(&pty, &owner, request).await;
    let id = &opened.session_id;
    let recent = recent_after(
        &pty,
        &owner,
        id,
        "LS_COLORS='di=01;34' ls --color=always -d adir; seq 1 40",
    )
    .await;
    assert!(
        recent.contains("\x1b[0;1;34madir\x1b[0m\r\n1\r\n2\r\n"),
        "{:?}",
        recent
    );
    pty.close(&owner, id).await.unwrap();
}

#[tokio::test]
async fn a_watcher_sees_recent_lines_then_live_bytes_and_a_person_types() {
    let (pty, owner) = service();
    let python = python3();
    let home = TempDir::new("python-home");
    let opened = open(
        &pty,
        &owner,
        at_home(OpenRequest::new(format!("{python} -q")), &home),
    )
    .await;
    let id = &opened.session_id;
    pty.send(&owner, id, SendRequest::new("print('be' + 'fore')"))
        .await
        .unwrap();
    let mut watch = pty.watch(&owner, id).unwrap();
    assert!(
        watch.recent.ends_with("before\r\n>>> "),
        "{:?}",
        watch.recent
    );
    assert_eq!((watch.cols, watch.rows), (120, 40));
    pty.person_input(&owner, id, b"6*7\r").await.unwrap();
    watch_until(&mut watch, "42\r\n").await;
    let tail = pty.tail(&owner, id, None).await.unwrap();
    assert!(
        tail.output.text.contains(">>> 6*7\n42\n"),
        "the agent sees it too: {tail:?}"
    );
    assert!(matches!(
        pty.watch(&Owner::new("other"), id),
        Err(pty_session::Error::ForeignSession { .. })
    ));
    pty.close(&owner, id).await.unwrap();
    let ended = tokio::time::timeout(DEADLINE, async {
        loop {
            if watch.next().await == WatchEvent::Ended {
                return;
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the watch ends with the session");
}

#[tokio::test]
async fn a_password_a_person_types_never_reaches_the_agent() {
    let (pty, owner) = service();
    let python = python3();
    let command = format!("{python} -c \"import getpass; print(len(getpass.getpass()))\"");
    let opened = open(&pty, &owner, OpenRequest::new(command)).await;
    assert_eq!(opened.pending, "Password: ");
    let id = &opened.session_id;
    pty.person_input(&owner, id, b"hunter2-secret\r")
        .await
        .unwrap();
    let transcript = until_exited(&pty, &owner, id).await;
    assert_eq!(transcript, "Password: \n14\n");
    pty.close(&owner, id).await.unwrap();
}

#[tokio::test]
async fn a_slow_watcher_is_skipped_ahead_never_buffered_for() {
    let (pty, owner) = service();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("sleep 0.2; seq 1 300000").settle(Settle::None),
    )
    .await;
    let mut watch = pty.watch(&owner, &opened.session_id).unwrap();
    // Not read while the flood runs: the feed keeps its last chunks only.
    until_exited(&pty, &owner, &opened.session_id).await;
    let mut skipped = 0;
    let mut bytes = 0;
    loop {
        match watch.next().await {
            WatchEvent::Output(chunk) => bytes += chunk.len(),
            WatchEvent::Skipped(n) => skipped += n,
            WatchEvent::Ended => break,
            _ => {}
        }
    }
    assert!(skipped > 0, "the watcher was skipped ahead");
    assert!(bytes <= 64 * 64 * 1024, "{bytes} bytes were kept for it");
    pty.close(&owner, &opened.session_id).await.unwrap();
}

/// A writer that only types (`read(false)`): the program gets the keys, the reply reads
/// nothing, and the lines stay unread for the agent's next tail.
#[tokio::test]
async fn a_send_that_does_not_read_leaves_the_lines_to_the_agent() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, bash()).await;
    let id = &opened.session_id;
    let typed = pty
        .send(&owner, id, SendRequest::new("echo $((6*7))").read(false))
        .await
        .unwrap();
    assert!(!typed.read);
    assert_eq!(typed.delta.text, "", "nothing read");
    assert_eq!(typed.delta.lines, 0);
    assert_eq!(typed.status.as_str(), "running");
    let tail = pty.tail(&owner, id, None).await.unwrap();
    assert!(
        tail.output.text.contains("echo $((6*7))\n42\n"),
        "the agent's next tail holds the input and its answer: {:?}",
        tail.output.text
    );
    // A reading send is as before: it takes what came after the cursor.
    let sent = pty
        .send(&owner, id, SendRequest::new("echo again"))
        .await
        .unwrap();
    assert!(sent.read);
    assert!(sent.delta.text.contains("again\n"), "{:?}", sent.delta.text);
    pty.close(&owner, id).await.unwrap();
}

/// What a watcher that comes after `data` was typed into session `id` (and its output
/// settled) gets of the output before it came ([`pty_session::Watch::recent`]).
async fn recent_after(pty: &PtyService, owner: &Owner, id: &SessionId, data: &str) -> String {
    pty.send(owner, id, SendRequest::new(data)).await.unwrap();
    pty.watch(owner, id).unwrap().recent
}
