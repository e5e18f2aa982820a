//! "Settled by input" is never false, and every prompt settles by input: a wait
//! on the terminal with a short timer is not input wait until the timer fired (node's
//! `await`, bash's `read -t`, a program reading the answer to its own terminal query), an
//! exiting program is not waiting, and the terminal is every descriptor on the session's
//! PTY, `/dev/tty` included (password prompts, fzf, mc).
//!
//! Each test states the reply a user of the tools should get; the failure messages show
//! what came instead.

use std::time::{Duration, Instant};

use pty_session::{
    OpenRequest, Opened, Owner, PtyService, SendRequest, Sent, SessionId, SettleReason, Status,
    quote_word,
};

use crate::support::*;

/// How long a prompt read from the terminal may take to settle by input here: well
/// under a second on an idle machine, generous for one shared by parallel builds.
const PROMPT_SETTLES_WITHIN: Duration = Duration::from_millis(2_500);
/// The bound on a wait of a call whose timeout is 20 s that must end by another reason:
/// well before the timeout, with room for a machine busy with other tests.
const WELL_BEFORE_THE_TIMEOUT: Duration = Duration::from_secs(12);

fn opened_shows(opened: &Opened) -> String {
    format!(
        "settled by {}; lines {:?}; pending {:?}",
        opened.settled_by, opened.initial_output.text, opened.pending
    )
}

fn sent_shows(sent: &Sent) -> String {
    format!(
        "settled by {}; lines {:?}; pending {:?}",
        sent.settled_by, sent.delta.text, sent.pending
    )
}

/// Sends `request`, panicking with the error if that fails; the reply and how long it took.
async fn timed_send(
    pty: &PtyService,
    owner: &Owner,
    id: &SessionId,
    request: SendRequest,
) -> (Sent, Duration) {
    let start = Instant::now();
    match pty.send(owner, id, request).await {
        Ok(sent) => (sent, start.elapsed()),
        Err(err) => panic!("send failed: {} {err}", err.code()),
    }
}

/// node's REPL awaiting a timer waits on the terminal with the timer's timeout: the value
/// comes in the same reply, which then settles by input at the prompt.
#[tokio::test]
async fn node_awaiting_a_timer_gets_its_value_in_the_same_reply() {
    require("node");
    let (pty, owner) = service();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("node").timeout(Duration::from_millis(20_000)),
    )
    .await;
    assert_eq!(
        (opened.settled_by, opened.pending.as_str()),
        (SettleReason::Input, "> "),
        "open: {}",
        opened_shows(&opened)
    );
    let id = &opened.session_id;
    for (delay, value) in [(300, 42), (1000, 43), (300, 44), (1000, 45)] {
        let data = format!("await new Promise(r => setTimeout(() => r({value}), {delay}))");
        let (sent, took) = timed_send(&pty, &owner, id, SendRequest::new(data)).await;
        let seen = format!("{delay} ms: {} after {took:?}", sent_shows(&sent));
        assert_eq!(
            (sent.settled_by, sent.pending.as_str()),
            (SettleReason::Input, "> "),
            "{seen}"
        );
        assert!(
            sent.delta
                .text
                .lines()
                .any(|line| line.trim() == value.to_string()),
            "{seen}"
        );
        assert!(took >= Duration::from_millis(delay), "{seen}");
    }
    pty.shutdown().await;
}

/// node's `.exit` settles by exit: the REPL sleeps on a short timer before it exits.
#[tokio::test]
async fn node_dot_exit_settles_by_exit() {
    require("node");
    let (pty, owner) = service();
    for attempt in 1..=3 {
        let opened = open(
            &pty,
            &owner,
            OpenRequest::new("node").timeout(Duration::from_millis(20_000)),
        )
        .await;
        assert_eq!(opened.settled_by, SettleReason::Input, "attempt {attempt}");
        let (sent, took) = timed_send(
            &pty,
            &owner,
            &opened.session_id,
            SendRequest::new(".exit").timeout(Duration::from_millis(20_000)),
        )
        .await;
        assert_eq!(
            (sent.settled_by, sent.status),
            (
                SettleReason::Exit,
                Status::Exited(pty_session::ExitStatus::Code(0))
            ),
            "attempt {attempt}: {} after {took:?}",
            sent_shows(&sent)
        );
        pty.close(&owner, &opened.session_id).await.unwrap();
    }
    pty.shutdown().await;
}

/// bash's `read -t` waits on the terminal with its timeout: its exit code comes in the
/// same reply, and the next command is not swallowed.
#[tokio::test]
async fn bash_read_with_a_timeout_returns_its_code_in_the_same_reply() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, bash().timeout(Duration::from_millis(20_000))).await;
    assert_eq!(opened.settled_by, SettleReason::Input);
    let id = &opened.session_id;
    let (sent, took) = timed_send(
        &pty,
        &owner,
        id,
        SendRequest::new("read -t 0.7 x; echo rc=$?"),
    )
    .await;
    let seen = format!("{} after {took:?}", sent_shows(&sent));
    assert_eq!(
        (sent.settled_by, sent.pending.as_str()),
        (SettleReason::Input, "$ "),
        "{seen}"
    );
    assert!(
        sent.delta.text.lines().any(|line| line == "rc=142"),
        "{seen}"
    );
    let (sent, _) = timed_send(&pty, &owner, id, SendRequest::new("echo next")).await;
    assert!(
        sent.delta.text.lines().any(|line| line == "next"),
        "the next command ran: {}",
        sent_shows(&sent)
    );
    pty.shutdown().await;
}

/// A program that asks the terminal a question (secondary device attributes) and reads
/// the answer in a select loop with a 50 ms timer: the open's reply has what it printed
/// with the answer, and settles at its own prompt.
#[tokio::test]
async fn a_program_reading_the_answer_to_its_query_prints_it_in_the_open_reply() {
    let code = r#"
import os, select, sys, termios, tty
fd = sys.stdin.fileno()
saved = termios.tcgetattr(fd)
tty.setcbreak(fd)
os.write(1, b"\x1b[>c")
answer = b""
for _ in range(40):
    ready, _, _ = select.select([fd], [], [], 0.05)
    if ready:
        answer += os.read(fd, 64)
        if answer.endswith(b"c"):
            break
termios.tcsetattr(fd, termios.TCSADRAIN, saved)
print("answer:", answer[1:].decode())
input("next> ")
"#;
    let (pty, owner) = service();
    for attempt in 1..=3 {
        let command = format!("{} -c {}", quote_word(&python3()), quote_word(code));
        let opened = open(
            &pty,
            &owner,
            OpenRequest::new(command).timeout(Duration::from_millis(20_000)),
        )
        .await;
        let seen = format!("attempt {attempt}: {}", opened_shows(&opened));
        assert_eq!(
            (opened.settled_by, opened.pending.as_str()),
            (SettleReason::Input, "next> "),
            "{seen}"
        );
        assert!(opened.initial_output.text.contains("answer: [>"), "{seen}");
        pty.close(&owner, &opened.session_id).await.unwrap();
    }
    pty.shutdown().await;
}

/// python's `getpass` reads from `/dev/tty`, opened afresh: its prompt settles by input,
/// quickly, with the prompt pending; the answer's reply too.
#[tokio::test]
async fn getpass_settles_by_input_at_its_prompt() {
    let code = "import getpass\n\
                secret = getpass.getpass('Secret: ')\n\
                print('got', len(secret))\n\
                input('done> ')\n";
    let (pty, owner) = service();
    let command = format!("{} -c {}", quote_word(&python3()), quote_word(code));
    let start = Instant::now();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(command).timeout(Duration::from_millis(20_000)),
    )
    .await;
    let took = start.elapsed();
    assert_eq!(
        (opened.settled_by, opened.pending.as_str()),
        (SettleReason::Input, "Secret: "),
        "{} after {took:?}",
        opened_shows(&opened)
    );
    let (sent, took) = timed_send(
        &pty,
        &owner,
        &opened.session_id,
        SendRequest::new("hunter2"),
    )
    .await;
    let seen = format!("{} after {took:?}", sent_shows(&sent));
    assert_eq!(
        (sent.settled_by, sent.pending.as_str()),
        (SettleReason::Input, "done> "),
        "{seen}"
    );
    assert!(sent.delta.text.contains("got 7"), "{seen}");
    assert!(took < PROMPT_SETTLES_WITHIN, "{seen}");
    pty.shutdown().await;
}

/// `read -s < /dev/tty` in bash: the read is on `/dev/tty`, not on bash's standard input.
#[tokio::test]
async fn read_from_dev_tty_settles_by_input() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, bash().timeout(Duration::from_millis(20_000))).await;
    let id = &opened.session_id;
    let (sent, took) = timed_send(
        &pty,
        &owner,
        id,
        SendRequest::new("read -s -p 'pw: ' x < /dev/tty; echo; echo len=${#x}"),
    )
    .await;
    let seen = format!("{} after {took:?}", sent_shows(&sent));
    assert_eq!(
        (sent.settled_by, sent.pending.as_str()),
        (SettleReason::Input, "pw: "),
        "{seen}"
    );
    assert!(took < PROMPT_SETTLES_WITHIN, "{seen}");
    let (sent, took) = timed_send(&pty, &owner, id, SendRequest::new("hello")).await;
    let seen = format!("{} after {took:?}", sent_shows(&sent));
    assert_eq!(
        (sent.settled_by, sent.pending.as_str()),
        (SettleReason::Input, "$ "),
        "{seen}"
    );
    assert!(sent.delta.text.contains("len=5"), "{seen}");
    pty.shutdown().await;
}

/// `ssh-keygen` asks for a passphrase twice, reading `/dev/tty`: each prompt settles by
/// input quickly, and the second answer by exit.
#[tokio::test]
async fn ssh_keygen_passphrase_prompts_settle_by_input() {
    require("ssh-keygen");
    let dir = TempDir::new("keygen");
    let key = dir.0.join("key");
    let (pty, owner) = service();
    let command = format!(
        "ssh-keygen -t ed25519 -C test -f {}",
        quote_word(key.to_str().unwrap())
    );
    let start = Instant::now();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(command).timeout(Duration::from_millis(20_000)),
    )
    .await;
    let took = start.elapsed();
    let seen = format!("{} after {took:?}", opened_shows(&opened));
    assert_eq!(opened.settled_by, SettleReason::Input, "{seen}");
    assert!(opened.pending.starts_with("Enter passphrase"), "{seen}");
    let id = &opened.session_id;
    let (sent, took) = timed_send(&pty, &owner, id, SendRequest::new("correct horse")).await;
    let seen = format!("{} after {took:?}", sent_shows(&sent));
    assert_eq!(
        (sent.settled_by, sent.pending.as_str()),
        (SettleReason::Input, "Enter same passphrase again: "),
        "{seen}"
    );
    assert!(took < PROMPT_SETTLES_WITHIN, "{seen}");
    let (sent, took) = timed_send(&pty, &owner, id, SendRequest::new("correct horse")).await;
    assert_eq!(
        sent.settled_by,
        SettleReason::Exit,
        "{} after {took:?}",
        sent_shows(&sent)
    );
    assert!(key.exists(), "the key was written");
    pty.shutdown().await;
}

/// fzf reads its keys from `/dev/tty`: the open and each key settle by input, with the
/// screen as it is after the key.
#[tokio::test]
async fn fzf_settles_by_input_after_each_key() {
    require("fzf");
    let (pty, owner) = service();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("seq 100 | fzf --no-mouse")
            .env("TERM", "xterm-256color")
            .timeout(Duration::from_millis(20_000)),
    )
    .await;
    let screen = |s: &Option<pty_session::Screen>| s.as_ref().map(|s| s.text()).unwrap_or_default();
    assert_eq!(
        opened.settled_by,
        SettleReason::Input,
        "open: {}",
        screen(&opened.screen)
    );
    let id = &opened.session_id;
    for (key, shows) in [("4", "19/100"), ("2", "1/100")] {
        let (sent, took) = timed_send(&pty, &owner, id, SendRequest::keys([key])).await;
        let text = screen(&sent.screen);
        assert_eq!(
            sent.settled_by,
            SettleReason::Input,
            "{key} after {took:?}: {text}"
        );
        assert!(text.contains(shows), "{key}: {text}");
    }
    let (sent, _) = timed_send(&pty, &owner, id, SendRequest::keys(["Enter"])).await;
    assert_eq!(sent.settled_by, SettleReason::Exit, "{}", sent_shows(&sent));
    assert!(
        sent.delta.text.lines().any(|line| line == "42"),
        "{}",
        sent_shows(&sent)
    );
    pty.shutdown().await;
}

/// mc reads its keys from `/dev/tty` and watches its subshell's terminal beside it: the
/// open and each key settle by input while the subshell waits at its prompt.
#[tokio::test]
async fn mc_settles_by_input_after_each_key() {
    require("mc");
    let home = TempDir::new("mc-home");
    let (pty, owner) = service();
    let opened = open(&pty, &owner, mc(&home)).await;
    let screen = |s: &Option<pty_session::Screen>| s.as_ref().map(|s| s.text()).unwrap_or_default();
    let text = screen(&opened.screen);
    assert_eq!(opened.settled_by, SettleReason::Input, "open: {text}");
    assert!(
        text.contains("Left") && text.contains("File"),
        "open: {text}"
    );
    let id = &opened.session_id;
    for key in ["Down", "Up", "Tab", "Tab"] {
        let (sent, took) = timed_send(&pty, &owner, id, SendRequest::keys([key])).await;
        assert_eq!(
            sent.settled_by,
            SettleReason::Input,
            "{key} after {took:?}: {}",
            screen(&sent.screen)
        );
        assert!(took < PROMPT_SETTLES_WITHIN, "{key} took {took:?}");
    }
    pty.shutdown().await;
}

/// A command typed on mc's command line runs in mc's subshell, on the subshell's own
/// terminal: the call waits for it, and ends once the subshell waits at its prompt again,
/// not while the command runs.
#[tokio::test]
async fn a_command_in_mcs_subshell_is_waited_for() {
    require("mc");
    let home = TempDir::new("mc-sub");
    let (pty, owner) = service();
    let opened = open(&pty, &owner, mc(&home)).await;
    assert_eq!(
        opened.settled_by,
        SettleReason::Input,
        "{}",
        opened_shows(&opened)
    );
    let id = &opened.session_id;
    let (sent, took) = timed_send(
        &pty,
        &owner,
        id,
        SendRequest::new("sleep 1.5; echo slow > f").timeout(Duration::from_millis(20_000)),
    )
    .await;
    let written = std::fs::read_to_string(home.0.join("f")).unwrap_or_default();
    assert_eq!(written, "slow\n", "{took:?}: {}", sent_shows(&sent));
    assert_eq!(
        sent.settled_by,
        SettleReason::Input,
        "{}",
        sent_shows(&sent)
    );
    assert!(took >= Duration::from_millis(1_400), "{took:?}");
    pty.shutdown().await;
}

/// gpg asks for a passphrase through gpg-agent's pinentry-curses: gpg waits on the
/// agent's socket, and the pinentry (the agent's child, setsid and double-forked away,
/// under the session's shim) draws its dialog and waits on the terminal, polling it
/// every 70 ms. Each dialog ends the call within a moment, not at the timeout, and the
/// passphrases typed into them encrypt the file.
#[tokio::test]
async fn a_pinentry_dialog_outside_the_foreground_group_ends_the_wait() {
    require("gpg");
    require("pinentry-curses");
    // gpg-agent's socket path must be short.
    let home = TempDir::short("ptyg");
    let gnupg = pty_session_testkit::gnupg_home(&home.0);
    std::fs::write(home.0.join("plain"), "attack at dawn\n").unwrap();
    let (pty, owner) = service();
    let start = Instant::now();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(
            "sh -c 'GPG_TTY=$(tty) exec gpg --pinentry-mode ask --symmetric --output crypt plain'",
        )
        .cwd(home.0.to_str().unwrap())
        .env("GNUPGHOME", gnupg.to_str().unwrap())
        .timeout(Duration::from_millis(20_000)),
    )
    .await;
    let took = start.elapsed();
    let id = &opened.session_id;
    let screen = pty.screen(&owner, id).unwrap().text();
    assert_ne!(opened.settled_by, SettleReason::Timeout, "{screen}");
    assert!(took < WELL_BEFORE_THE_TIMEOUT, "{took:?}: {screen}");
    assert!(
        screen.contains("Passphrase:"),
        "{}: {screen}",
        opened_shows(&opened)
    );
    // The passphrase, then its repetition: each dialog ends its call.
    for _ in 0..2 {
        let (sent, took) = timed_send(
            &pty,
            &owner,
            id,
            SendRequest::new("s3cret-phrase").timeout(Duration::from_millis(20_000)),
        )
        .await;
        let screen = pty.screen(&owner, id).unwrap().text();
        assert_ne!(sent.settled_by, SettleReason::Timeout, "{screen}");
        assert!(took < WELL_BEFORE_THE_TIMEOUT, "{took:?}: {screen}");
        if sent.status != Status::Running {
            break;
        }
    }
    eventually("gpg to write the file", Duration::from_secs(20), || {
        std::fs::metadata(home.0.join("crypt")).is_ok_and(|m| m.len() > 0)
    })
    .await;
    pty.shutdown().await;
    // The agent went with the session's tree.
    let agent_of_this_home = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
            std::fs::read(entry.path().join("cmdline")).is_ok_and(|cmdline| {
                String::from_utf8_lossy(&cmdline).contains(gnupg.to_str().unwrap())
            })
        })
    };
    eventually("gpg-agent to be gone", Duration::from_secs(10), || {
        !agent_of_this_home()
    })
    .await;
}

/// `watch -n 0.5 date` sleeps between frames (clock_nanosleep) and never reads the
/// terminal: on its full screen, one cycle seen (a sleep over and the next begun) is the
/// screen settled, at open and after a key it leaves unread, not the whole timeout. The
/// same loop printing lines on the main screen is work.
#[tokio::test]
async fn a_full_screen_sleep_loop_settles_by_input_after_a_cycle() {
    require("watch");
    let (pty, owner) = service();
    let start = Instant::now();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("watch -n 0.5 date").timeout(Duration::from_millis(20_000)),
    )
    .await;
    let took = start.elapsed();
    assert_eq!(
        opened.settled_by,
        SettleReason::Input,
        "{}",
        opened_shows(&opened)
    );
    assert!(took < WELL_BEFORE_THE_TIMEOUT, "{took:?}");
    let screen = pty.screen(&owner, &opened.session_id).unwrap().text();
    assert!(screen.contains("Every 0.5s"), "{screen}");
    // watch reads no key: the key stays unread, and a cycle later the call ends.
    for _ in 0..2 {
        sent_settles_by_input(&pty, &owner, &opened.session_id, "x").await;
    }
    // The same loop on the main screen prints lines: it works until the timeout.
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("sh -c 'while :; do date; sleep 0.5; done'")
            .timeout(Duration::from_millis(2_000)),
    )
    .await;
    assert_eq!(
        opened.settled_by,
        SettleReason::Timeout,
        "{}",
        opened_shows(&opened)
    );
    pty.shutdown().await;
}

/// `top -d 0.5` repaints every half second and waits for a key between frames, on the
/// terminal with a timer: once one frame came after such a wait, it waits for input, at
/// open and after a key, not the whole timeout.
#[tokio::test]
async fn a_refresh_loop_settles_by_input_after_a_frame() {
    require("top");
    let (pty, owner) = service();
    let home = TempDir::new("top-home");
    let start = Instant::now();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("top -d 0.5")
            .env("HOME", home.0.to_str().unwrap())
            .env("XDG_CONFIG_HOME", home.0.to_str().unwrap())
            .timeout(Duration::from_millis(20_000)),
    )
    .await;
    let took = start.elapsed();
    assert_eq!(
        opened.settled_by,
        SettleReason::Input,
        "{}",
        opened_shows(&opened)
    );
    assert!(
        took < WELL_BEFORE_THE_TIMEOUT,
        "{took:?}: {}",
        opened_shows(&opened)
    );
    let screen = pty.screen(&owner, &opened.session_id).unwrap().text();
    assert!(screen.contains("load average"), "{screen}");
    // A key: the sort by memory, then the next frame, then input again.
    sent_settles_by_input(&pty, &owner, &opened.session_id, "M").await;
    let (sent, _) = timed_send(&pty, &owner, &opened.session_id, SendRequest::new("q")).await;
    assert_eq!(sent.settled_by, SettleReason::Exit, "{}", sent_shows(&sent));
    pty.shutdown().await;
}

/// mc at `home` (its settings and its subshell's `HOME`), with bash as the subshell.
fn mc(home: &TempDir) -> OpenRequest {
    OpenRequest::new("mc")
        .env("TERM", "xterm-256color")
        .env("HOME", home.0.to_str().unwrap())
        .env("SHELL", "/bin/bash")
        .cwd(home.0.clone())
        .timeout(Duration::from_millis(20_000))
}

/// Types `data` into session `id` with a 20 s timeout, and asserts that the call ended
/// by input, well before the timeout.
async fn sent_settles_by_input(pty: &PtyService, owner: &Owner, id: &SessionId, data: &str) {
    let request = SendRequest::new(data).timeout(Duration::from_millis(20_000));
    let (sent, took) = timed_send(pty, owner, id, request).await;
    assert_eq!(
        sent.settled_by,
        SettleReason::Input,
        "{data:?} after {took:?}: {}",
        sent_shows(&sent)
    );
    assert!(took < WELL_BEFORE_THE_TIMEOUT, "{data:?} took {took:?}");
}
