//! Plain `ssh` on a pty-session session, as an agent using the tools runs it, without this
//! crate's driver: the client sleeps in poll on the terminal *and* its
//! socket, so it may be waiting for either: a settle never ends on input there, but when
//! the remote prompt comes back (`settledBy: "prompt"`).

use std::time::{Duration, Instant};

use pty_session::{
    OpenRequest, Opened, Owner, PtyService, SendRequest, Sent, Settle, SettleReason,
};

use crate::support::*;

/// The remote command: two seconds of work, then a line.
const SLOW_COMMAND: &str = "sleep 2; echo done";

/// Opens plain `ssh` to `sshd` as the test account with its key, and waits for the login
/// shell's prompt (a quiet settle with `until`, so that the set-up does not depend on
/// the settle under test).
async fn ssh_shell(sshd: &Sshd, pty: &PtyService, owner: &Owner) -> Opened {
    let command = sshd.ssh_command("id_ed25519", true);
    let request = OpenRequest::new(command)
        .settle(Settle::Quiet)
        .quiet(Duration::from_millis(20_000))
        .until(r"\$ $")
        .timeout(Duration::from_millis(20_000));
    let opened = match pty.open(owner, request, &Default::default()).await {
        Ok(opened) => opened,
        Err(err) => panic!("open ssh: {err}"),
    };
    assert_eq!(
        opened.settled_by,
        SettleReason::Match,
        "no shell prompt: {:?} {:?}\nsshd's log:\n{}",
        opened.initial_output.text,
        opened.pending,
        sshd.log().await
    );
    opened
}

/// What a reply showed, for failure messages.
fn shows(sent: &Sent, start: Instant) -> String {
    format!(
        "settled by {} after {:?}; lines {:?}; pending {:?}",
        sent.settled_by,
        start.elapsed(),
        sent.delta.text,
        sent.pending
    )
}

/// Whether the reply has the remote command's own line `done` (not the echoed command).
fn has_done(sent: &Sent) -> bool {
    sent.delta
        .text
        .lines()
        .any(|line| line.trim_end() == "done")
}

/// Opens `ssh` to `sshd` with `key` (`batch`: in batch mode) and the default settle; the
/// open and what it showed.
async fn open_default(
    pty: &PtyService,
    owner: &Owner,
    sshd: &Sshd,
    key: &str,
    batch: bool,
) -> (Opened, String) {
    let start = Instant::now();
    let request =
        OpenRequest::new(sshd.ssh_command(key, batch)).timeout(Duration::from_millis(20_000));
    let opened = pty.open(owner, request, &Default::default()).await.unwrap();
    let seen = format!(
        "open: settled by {} after {:?}; lines {:?}; pending {:?}",
        opened.settled_by,
        start.elapsed(),
        opened.initial_output.text,
        opened.pending
    );
    (opened, seen)
}

/// Sends `data` with the default settle; the reply and what it showed.
async fn send_default(
    pty: &PtyService,
    owner: &Owner,
    opened: &Opened,
    data: &str,
) -> (Sent, String) {
    let start = Instant::now();
    let sent = pty
        .send(
            owner,
            &opened.session_id,
            SendRequest::new(data).timeout(Duration::from_millis(20_000)),
        )
        .await
        .unwrap();
    let seen = format!("{data:?}: {}", shows(&sent, start));
    (sent, seen)
}

#[tokio::test]
async fn ssh_with_the_default_settle_ends_when_the_prompt_comes_back() {
    let sshd = Sshd::start().await;
    let (pty, owner) = (service(), Owner::new("t"));
    // The open: ssh is silent while it connects and logs in, longer than the quiet
    // period; the open ends at the remote prompt.
    let (opened, seen) = open_default(&pty, &owner, &sshd, "id_ed25519", true).await;
    assert_eq!(opened.settled_by, SettleReason::Prompt, "{seen}");
    assert!(is_shell_prompt(&opened.pending, "~"), "{seen}");
    assert!(
        opened.initial_output.text.contains(PROFILE_GREETING),
        "{seen}"
    );

    // Two seconds of silence, then the line: whole in the send's own reply.
    let (sent, seen) = send_default(&pty, &owner, &opened, SLOW_COMMAND).await;
    assert_eq!(sent.settled_by, SettleReason::Prompt, "{seen}");
    assert!(has_done(&sent), "{seen}");
    assert!(is_shell_prompt(&sent.pending, "~"), "{seen}");

    // Lines with pauses longer than the quiet period.
    let (sent, seen) = send_default(
        &pty,
        &owner,
        &opened,
        "for i in 1 2 3; do echo line-$i; sleep 0.5; done",
    )
    .await;
    assert_eq!(sent.settled_by, SettleReason::Prompt, "{seen}");
    let lines: Vec<&str> = sent
        .delta
        .text
        .lines()
        .filter(|line| line.starts_with("line-"))
        .collect();
    assert_eq!(lines, ["line-1", "line-2", "line-3"], "{seen}");

    // `cd` changes the prompt; the next command still ends at it.
    let (sent, seen) = send_default(&pty, &owner, &opened, "cd /tmp").await;
    assert_eq!(sent.settled_by, SettleReason::Prompt, "{seen}");
    assert!(is_shell_prompt(&sent.pending, "/tmp"), "{seen}");
    let (sent, seen) = send_default(&pty, &owner, &opened, "sleep 0.5; pwd").await;
    assert_eq!(sent.settled_by, SettleReason::Prompt, "{seen}");
    assert!(sent.delta.text.lines().any(|line| line == "/tmp"), "{seen}");

    // A remote python REPL: its prompt `>>> `.
    let (sent, seen) = send_default(&pty, &owner, &opened, "/usr/bin/python3 -q").await;
    assert_eq!(
        (sent.settled_by, sent.pending.as_str()),
        (SettleReason::Prompt, ">>> "),
        "{seen}"
    );
    let (sent, seen) = send_default(
        &pty,
        &owner,
        &opened,
        "import time; time.sleep(0.6); print(6*7)",
    )
    .await;
    assert_eq!(
        (sent.settled_by, sent.pending.as_str()),
        (SettleReason::Prompt, ">>> "),
        "{seen}"
    );
    assert!(sent.delta.text.lines().any(|line| line == "42"), "{seen}");
    pty.shutdown().await;
}

/// Remote programs' own prompts, not a shell's, end the wait by the prompt the first
/// time they show, not at the timeout: python's continuation `... `, `(gdb) ` and its
/// `(y or [n]) ` and `(y or n) ` questions, pdb's `(Pdb) `.
#[tokio::test]
async fn remote_prompts_that_are_not_a_shells_end_the_wait() {
    let sshd = Sshd::start().await;
    let (pty, owner) = (service(), Owner::new("t"));
    let (opened, seen) = open_default(&pty, &owner, &sshd, "id_ed25519", true).await;
    assert_eq!(opened.settled_by, SettleReason::Prompt, "{seen}");
    let script = std::env::temp_dir().join(format!("pdb-{}.py", std::process::id()));
    std::fs::write(&script, "x = 6\nprint(x * 7)\n").unwrap();
    let steps: &[(&str, &str)] = &[
        ("/usr/bin/python3 -q", ">>> "),
        ("def f():", "... "),
        ("  return 6*7", "... "),
        ("", ">>> "),
        ("exit()", "$ "),
        ("gdb -q -nx", "(gdb) "),
        ("break nosuch", "(y or [n]) "),
        ("y", "(gdb) "),
        ("delete", "(y or n) "),
        ("y", "(gdb) "),
        ("quit", "$ "),
        (
            &format!("/usr/bin/python3 -m pdb {}", script.display()),
            "(Pdb) ",
        ),
        ("next", "(Pdb) "),
        ("quit", "$ "),
    ];
    for (data, prompt) in steps {
        let start = Instant::now();
        let (sent, seen) = send_default(&pty, &owner, &opened, data).await;
        let took = start.elapsed();
        assert_eq!(sent.settled_by, SettleReason::Prompt, "{seen}");
        assert!(sent.pending.ends_with(prompt), "{seen}");
        // The prompt is held 50 ms; the program's own start may take a while here.
        assert!(took < Duration::from_secs(10), "{seen}");
    }
    std::fs::remove_file(&script).ok();
    pty.shutdown().await;
}

/// ssh asks for a key's passphrase on `/dev/tty`, with nothing else to wait for: that
/// prompt settles by input, at once.
#[tokio::test]
async fn ssh_key_passphrase_prompt_settles_by_input() {
    let sshd = Sshd::start().await;
    let (pty, owner) = (service(), Owner::new("t"));
    // Not in batch mode: ssh may ask for the passphrase.
    let (opened, seen) = open_default(&pty, &owner, &sshd, "id_passphrase", false).await;
    assert_eq!(opened.settled_by, SettleReason::Input, "{seen}");
    assert!(
        opened.pending.starts_with("Enter passphrase for key"),
        "{seen}"
    );
    let (sent, seen) = send_default(&pty, &owner, &opened, "correct horse").await;
    assert_eq!(sent.settled_by, SettleReason::Prompt, "{seen}");
    assert!(is_shell_prompt(&sent.pending, "~"), "{seen}");
    pty.shutdown().await;
}

#[tokio::test]
async fn ssh_with_a_quiet_settle_and_a_long_quiet_period_returns_the_output_in_one_send() {
    let sshd = Sshd::start().await;
    let (pty, owner) = (service(), Owner::new("t"));
    let opened = ssh_shell(&sshd, &pty, &owner).await;
    let start = Instant::now();
    let request = SendRequest::new(SLOW_COMMAND)
        .settle(Settle::Quiet)
        .quiet(Duration::from_millis(3_000))
        .timeout(Duration::from_millis(30_000));
    let sent = pty.send(&owner, &opened.session_id, request).await.unwrap();
    let seen = shows(&sent, start);
    assert_eq!(sent.settled_by, SettleReason::Quiet, "{seen}");
    assert!(has_done(&sent), "{seen}");
    pty.shutdown().await;
}

#[tokio::test]
async fn ssh_with_until_settles_by_match() {
    let sshd = Sshd::start().await;
    let (pty, owner) = (service(), Owner::new("t"));
    let opened = ssh_shell(&sshd, &pty, &owner).await;
    let start = Instant::now();
    // `^done` and not `done`: the echoed command line holds `done` too.
    let request = SendRequest::new(SLOW_COMMAND)
        .until("^done")
        .timeout(Duration::from_millis(30_000));
    let sent = pty.send(&owner, &opened.session_id, request).await.unwrap();
    let seen = shows(&sent, start);
    assert_eq!(sent.settled_by, SettleReason::Match, "{seen}");
    assert!(has_done(&sent), "{seen}");
    pty.shutdown().await;
}

/// A remote program that shows no prompt (`cat`) ends the send that started it by the
/// timeout; where no prompt was pending at a send (`cat` reads lines), no shape is known:
/// quiet ends the settle, never input.
#[tokio::test]
async fn ssh_without_a_prompt_shape_ends_on_quiet() {
    let sshd = Sshd::start().await;
    let (pty, owner) = (service(), Owner::new("t"));
    let opened = ssh_shell(&sshd, &pty, &owner).await;
    let start = Instant::now();
    let request = SendRequest::new("cat").timeout(Duration::from_millis(1_500));
    let sent = pty.send(&owner, &opened.session_id, request).await.unwrap();
    let seen = shows(&sent, start);
    assert_eq!(sent.settled_by, SettleReason::Timeout, "{seen}");
    assert_eq!(sent.pending, "", "{seen}");
    let (sent, seen) = send_default(&pty, &owner, &opened, "hello").await;
    assert_eq!(sent.settled_by, SettleReason::Quiet, "{seen}");
    assert!(
        sent.delta
            .text
            .lines()
            .filter(|line| *line == "hello")
            .count()
            == 2,
        "echoed and printed: {seen}"
    );
    pty.shutdown().await;
}

/// A remote prompt of no known ending (`go! `) is learned from the echo line of a
/// command typed at it (the text before the echo is where the shell took the input):
/// later, a send made at another prompt whose shape it does not have ends when it comes
/// back, by the prompt, not at the timeout.
#[tokio::test]
async fn a_prompt_learned_from_an_echo_line_ends_the_wait() {
    let sshd = Sshd::start().await;
    let (pty, owner) = (service(), Owner::new("t"));
    let (opened, seen) = open_default(&pty, &owner, &sshd, "id_ed25519", true).await;
    assert_eq!(opened.settled_by, SettleReason::Prompt, "{seen}");
    let start = Instant::now();
    let request = SendRequest::new("PS1='go! '")
        .until("^go! $")
        .timeout(Duration::from_millis(20_000));
    let sent = pty.send(&owner, &opened.session_id, request).await.unwrap();
    assert_eq!(
        sent.settled_by,
        SettleReason::Match,
        "{}",
        shows(&sent, start)
    );
    let (sent, seen) = send_default(&pty, &owner, &opened, "echo one").await;
    assert_eq!(
        (sent.settled_by, sent.pending.as_str()),
        (SettleReason::Prompt, "go! "),
        "{seen}"
    );
    let (sent, seen) = send_default(
        &pty,
        &owner,
        &opened,
        "PS1='inner$ ' bash --norc --noprofile",
    )
    .await;
    assert_eq!(
        (sent.settled_by, sent.pending.as_str()),
        (SettleReason::Prompt, "inner$ "),
        "{seen}"
    );
    let (sent, seen) = send_default(&pty, &owner, &opened, "exit").await;
    assert_eq!(
        (sent.settled_by, sent.pending.as_str()),
        (SettleReason::Prompt, "go! "),
        "{seen}"
    );
    pty.shutdown().await;
}
