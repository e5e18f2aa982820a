//! Full-screen programs on real PTYs: the screen in replies and from `screen`, named keys,
//! resize, and the alternate screen's end after a full reset.

use std::time::Duration;

use pty_session::{OpenRequest, Position, Screen, SendRequest, Sent, Settle, Status};

use crate::support::*;

/// Presses `keys` and waits as by default: until the program waits for a key again. (A
/// quiet settle returned while vim sat in `fsync` after `:w` on a loaded machine, its
/// message half drawn.)
async fn press(
    pty: &pty_session::PtyService,
    owner: &pty_session::Owner,
    id: &pty_session::SessionId,
    keys: &[&str],
) -> Sent {
    let request = SendRequest::keys(keys.iter().copied()).timeout(Duration::from_millis(15_000));
    match pty.send(owner, id, request).await {
        Ok(sent) => sent,
        Err(err) => panic!("pressing {keys:?} failed: {err}"),
    }
}

/// The screen of a reply, which must be there.
#[track_caller]
fn screen_of(sent: &Sent) -> &Screen {
    sent.screen
        .as_ref()
        .unwrap_or_else(|| panic!("no screen in {sent:?}"))
}

/// A file in `dir` with `text`, its path as a string.
fn file(dir: &TempDir, name: &str, text: &str) -> String {
    let path = dir.0.join(name);
    std::fs::write(&path, text).expect("write the test file");
    pty_session::quote_word(path.to_str().expect("utf-8 temp path")).into_owned()
}

#[tokio::test]
async fn vim_edits_a_file_with_the_screen_in_every_reply() {
    let (pty, owner) = service();
    let dir = TempDir::new("vim");
    let path = file(&dir, "notes.txt", "first line\nsecond line\n");
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(format!("vim --clean {path}")).timeout(Duration::from_millis(15_000)),
    )
    .await;
    let id = &opened.session_id;
    let screen = opened
        .screen
        .as_ref()
        .expect("the screen in the open reply");
    assert!(opened.alt_screen);
    assert_eq!(
        screen.lines[..2],
        ["first line", "second line"],
        "{screen:?}"
    );
    assert_eq!(screen.cursor, Position { row: 0, col: 0 });

    let sent = press(&pty, &owner, id, &["O", "inserted by the agent", "Escape"]).await;
    let screen = screen_of(&sent);
    assert_eq!(
        screen.lines[..3],
        ["inserted by the agent", "first line", "second line"],
        "{}",
        screen.text()
    );
    assert_eq!(screen.cursor.row, 0);

    // Arrow keys in application mode (vim sets DECCKM) move the cursor.
    let sent = press(&pty, &owner, id, &["Down", "Down", "0", "Right"]).await;
    assert_eq!(screen_of(&sent).cursor, Position { row: 2, col: 1 });
    let sent = press(&pty, &owner, id, &["Up"]).await;
    assert_eq!(screen_of(&sent).cursor, Position { row: 1, col: 1 });

    let sent = press(&pty, &owner, id, &[":w", "Enter"]).await;
    let screen = screen_of(&sent);
    let last = screen.lines.last().expect("a message line");
    assert!(last.contains("written"), "{}", screen.text());

    let sent = press(&pty, &owner, id, &[":q", "Enter"]).await;
    assert_eq!(
        sent.status,
        Status::Exited(pty_session::ExitStatus::Code(0)),
        "{sent:?}"
    );
    assert!(!sent.alt_screen && sent.screen.is_none());
    assert_eq!(
        std::fs::read_to_string(dir.0.join("notes.txt")).unwrap(),
        "inserted by the agent\nfirst line\nsecond line\n"
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn a_killed_vim_leaves_the_alternate_screen_at_reset() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, bash()).await;
    let id = &opened.session_id;
    let sent = pty
        .send(
            &owner,
            id,
            SendRequest::new("vim --clean").timeout(Duration::from_millis(15_000)),
        )
        .await
        .unwrap();
    assert!(sent.alt_screen, "{sent:?}");
    let vims = pty_session_testkit::children(opened.pid, "vim");
    assert_eq!(vims.len(), 1, "one vim under bash");
    // SAFETY: kill has no memory effects; the pid is vim's, a child of this test's bash.
    assert_eq!(unsafe { libc::kill(vims[0], libc::SIGKILL) }, 0);
    let sent = pty
        .send(
            &owner,
            id,
            SendRequest::new("")
                .submit(false)
                .timeout(Duration::from_millis(5_000)),
        )
        .await
        .unwrap();
    assert!(sent.alt_screen, "nothing left the alternate screen yet");
    let sent = pty
        .send(
            &owner,
            id,
            SendRequest::new("reset; echo after-reset").timeout(Duration::from_millis(15_000)),
        )
        .await
        .unwrap();
    assert!(!sent.alt_screen, "{sent:?}");
    assert!(sent.screen.is_none());
    assert!(sent.delta.text.contains("after-reset\n"), "{sent:?}");
    let screen = pty.screen(&owner, id).unwrap();
    assert!(!screen.alt_screen);
    assert!(screen.text().contains("after-reset"), "{}", screen.text());
    pty.shutdown().await;
}

#[tokio::test]
async fn less_searches_and_quits() {
    let (pty, owner) = service();
    let dir = TempDir::new("less");
    let text: String = (1..=500)
        .map(|n| {
            if n == 250 {
                format!("line {n} needle here\n")
            } else {
                format!("line {n}\n")
            }
        })
        .collect();
    let path = file(&dir, "lines.txt", &text);
    let less = at_home(OpenRequest::new(format!("less {path}")), &dir);
    let opened = open(&pty, &owner, less).await;
    let id = &opened.session_id;
    let screen = opened
        .screen
        .as_ref()
        .expect("the screen in the open reply");
    assert_eq!(screen.lines[0], "line 1");
    let sent = press(&pty, &owner, id, &["/needle", "Enter"]).await;
    let screen = screen_of(&sent);
    assert_eq!(screen.lines[0], "line 250 needle here", "{}", screen.text());
    let sent = pty
        .send(&owner, id, SendRequest::keys(["q"]))
        .await
        .unwrap();
    assert_eq!(
        sent.status,
        Status::Exited(pty_session::ExitStatus::Code(0))
    );
    assert!(!sent.alt_screen);
    pty.shutdown().await;
}

#[tokio::test]
async fn htop_shows_its_header_and_processes_and_quits_on_f10() {
    let (pty, owner) = service();
    // htop reads its layout from, and writes it back to, the user's config on quit: a
    // home of its own keeps the header as this test expects and the user's file untouched.
    let home_dir = TempDir::new("htop-home");
    let request =
        at_home(OpenRequest::new("htop"), &home_dir).timeout(Duration::from_millis(15_000));
    let opened = open(&pty, &owner, request).await;
    let screen = opened
        .screen
        .as_ref()
        .expect("the screen in the open reply");
    let text = screen.text();
    assert!(
        text.contains("Tasks:") && text.contains("Load average"),
        "{text}"
    );
    let header = screen
        .lines
        .iter()
        .position(|line| line.contains("PID USER"))
        .unwrap_or_else(|| panic!("no process list header in\n{text}"));
    assert!(screen.lines.len() > header + 2, "{text}");
    let process = &screen.lines[header + 1];
    assert!(
        process
            .split_whitespace()
            .next()
            .is_some_and(|pid| pid.parse::<u32>().is_ok()),
        "a process row starts with its pid: {process:?}"
    );
    let sent = pty
        .send(&owner, &opened.session_id, SendRequest::keys(["F10"]))
        .await
        .unwrap();
    assert!(matches!(sent.status, Status::Exited(_)), "{sent:?}");
    pty.shutdown().await;
}

#[tokio::test]
async fn git_commit_with_vim_as_the_editor() {
    let (pty, owner) = service();
    let dir = TempDir::new("git-commit");
    let repo = dir.0.to_str().unwrap().to_owned();
    // git, on a terminal or not, reads none of the user's configuration.
    let home = TempDir::new("git-home");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .env("HOME", &home.0)
            .env("XDG_CONFIG_HOME", &home.0)
            .args(["-C", &repo])
            .args(args)
            .output()
            .expect("git must be installed for this test");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    file(&dir, "a.txt", "a\n");
    git(&["add", "a.txt"]);
    let opened = open(
        &pty,
        &owner,
        at_home(
            OpenRequest::new("git -c user.name=Agent -c user.email=agent@example.com commit"),
            &home,
        )
        .cwd(&dir.0)
        .env("EDITOR", "vim --clean")
        .timeout(Duration::from_millis(15_000)),
    )
    .await;
    let screen = opened.screen.as_ref().expect("the editor's screen");
    let text = screen.text();
    assert!(text.contains("# Please enter the commit message"), "{text}");
    assert!(text.contains("new file:   a.txt"), "{text}");
    press(
        &pty,
        &owner,
        &opened.session_id,
        &["i", "Add a by the agent", "Escape"],
    )
    .await;
    let sent = press(&pty, &owner, &opened.session_id, &[":wq", "Enter"]).await;
    assert_eq!(
        sent.status,
        Status::Exited(pty_session::ExitStatus::Code(0)),
        "{sent:?}"
    );
    assert!(sent.delta.text.contains("Add a by the agent"), "{sent:?}");
    assert_eq!(git(&["log", "--format=%s"]), "Add a by the agent\n");
    pty.shutdown().await;
}

#[tokio::test]
async fn top_on_the_main_screen_shows_one_clean_frame() {
    let (pty, owner) = service();
    // top reads its layout from the user's toprc: a home of its own keeps its own.
    let home = TempDir::new("top-home");
    let opened = open(&pty, &owner, at_home(OpenRequest::new("top -d 0.5"), &home)).await;
    assert!(!opened.alt_screen);
    let mut watch = pty.watch(&owner, &opened.session_id).unwrap();
    let sent = pty
        .send(
            &owner,
            &opened.session_id,
            SendRequest::new("").submit(false).settle(Settle::None),
        )
        .await
        .unwrap();
    assert_eq!(sent.status, Status::Running);
    // Two refreshes later (top draws its header anew each time) the screen is still one
    // frame.
    // Two whole refreshes: the third has begun.
    let two_frames = |drawn: &str| drawn.matches("top - ").count() >= 3;
    let mut drawn = String::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while !two_frames(&drawn) {
            match watch.next().await {
                pty_session::WatchEvent::Output(bytes) => {
                    drawn.push_str(&String::from_utf8_lossy(&bytes));
                }
                pty_session::WatchEvent::Ended => break,
                _ => {}
            }
        }
    })
    .await;
    assert!(two_frames(&drawn), "top did not refresh twice: {drawn:?}");
    let screen = pty.screen(&owner, &opened.session_id).unwrap();
    let text = screen.text();
    assert!(!screen.alt_screen);
    assert!(screen.lines[0].starts_with("top - "), "{text}");
    assert_eq!(
        screen.lines.iter().filter(|l| l.contains("top - ")).count(),
        1,
        "{text}"
    );
    assert!(
        screen
            .lines
            .iter()
            .any(|l| l.trim_start().starts_with("PID USER")),
        "{text}"
    );
    let sent = pty
        .send(&owner, &opened.session_id, SendRequest::keys(["q"]))
        .await
        .unwrap();
    assert!(matches!(sent.status, Status::Exited(_)), "{sent:?}");
    pty.shutdown().await;
}

#[tokio::test]
async fn nano_types_writes_and_exits() {
    let (pty, owner) = service();
    let dir = TempDir::new("nano");
    let path = file(&dir, "memo.txt", "old\n");
    let opened = open(
        &pty,
        &owner,
        at_home(OpenRequest::new(format!("nano {path}")), &dir)
            .timeout(Duration::from_millis(15_000)),
    )
    .await;
    let id = &opened.session_id;
    assert!(opened.screen.as_ref().unwrap().text().contains("GNU nano"));
    let sent = press(&pty, &owner, id, &["hello nano", "Enter"]).await;
    assert_eq!(screen_of(&sent).lines[1], "hello nano");
    let sent = press(&pty, &owner, id, &["C-o"]).await;
    let text = screen_of(&sent).text();
    assert!(text.contains("File Name to Write"), "{text}");
    let sent = press(&pty, &owner, id, &["Enter"]).await;
    let text = screen_of(&sent).text();
    assert!(text.contains("Wrote 2 lines"), "{text}");
    let sent = pty
        .send(&owner, id, SendRequest::keys(["C-x"]))
        .await
        .unwrap();
    assert!(matches!(sent.status, Status::Exited(_)), "{sent:?}");
    assert_eq!(
        std::fs::read_to_string(dir.0.join("memo.txt")).unwrap(),
        "hello nano\nold\n"
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn resizing_a_running_bash() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, bash()).await;
    let id = &opened.session_id;
    let sent = pty
        .send(&owner, id, SendRequest::new("").submit(false).size(80, 24))
        .await
        .unwrap();
    assert_eq!(sent.status, Status::Running);
    let sent = pty
        .send(&owner, id, SendRequest::new("tput cols; tput lines"))
        .await
        .unwrap();
    assert!(sent.delta.text.ends_with("80\n24\n"), "{sent:?}");
    let screen = pty.screen(&owner, id).unwrap();
    assert_eq!((screen.cols, screen.rows), (80, 24));
    // Bad sizes are refused before anything happens.
    let err = pty
        .send(&owner, id, SendRequest::new("").cols(0))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    pty.shutdown().await;
}

#[tokio::test]
async fn the_screen_of_a_shell_is_its_latest_lines_and_prompt() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, bash()).await;
    let id = &opened.session_id;
    pty.send(&owner, id, SendRequest::new("echo one; echo two"))
        .await
        .unwrap();
    let screen = pty.screen(&owner, id).unwrap();
    assert_eq!(screen.lines, ["$ echo one; echo two", "one", "two", "$"]);
    assert_eq!(screen.cursor, Position { row: 3, col: 2 });
    assert_eq!((screen.cols, screen.rows), (120, 40));
    assert!(!screen.alt_screen);
    // Keys in bash: text, a cursor move, Enter.
    let sent = pty
        .send(
            &owner,
            id,
            SendRequest::keys(["echo abc", "Left", "X", "Enter"]),
        )
        .await
        .unwrap();
    assert!(sent.delta.text.ends_with("abXc\n"), "{sent:?}");
    let err = pty
        .send(&owner, id, SendRequest::keys(["C-"]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    assert!(err.to_string().contains("modifier without a key"), "{err}");
    pty.shutdown().await;
}
