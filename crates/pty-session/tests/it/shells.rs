//! Shell integration with real shells: each command's exit status and the shell's
//! directory in the replies, the settle on the prompt's mark, the user's files kept.

use std::time::Duration;

use pty_session::{
    OpenRequest, Opened, Owner, PtyService, SendRequest, SettleReason, ShellCommand, TailRequest,
};

use crate::support::*;

/// `command` with a private home holding `files` (name, text).
fn shell(command: &str, home: &TempDir, files: &[(&str, &str)]) -> OpenRequest {
    for (name, text) in files {
        let path = home.0.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    at_home(OpenRequest::new(command), home)
        .env("ZDOTDIR", home.0.to_str().unwrap())
        .timeout(Duration::from_secs(20))
}

/// Sends `data`, failing the test on an error.
async fn send(
    pty: &PtyService,
    owner: &Owner,
    id: &pty_session::SessionId,
    data: &str,
) -> pty_session::Sent {
    let request = SendRequest::new(data).timeout(Duration::from_secs(20));
    match pty.send(owner, id, request).await {
        Ok(sent) => sent,
        Err(err) => panic!("send {data:?} failed: {err}"),
    }
}

/// The commands as (text, exit code).
fn results(commands: &[ShellCommand]) -> Vec<(&str, Option<i32>)> {
    commands
        .iter()
        .map(|c| (c.command.as_str(), c.exit_code))
        .collect()
}

/// Opens `request` and checks it settled on the prompt, `prompt` pending.
async fn open_shell(pty: &PtyService, owner: &Owner, request: OpenRequest, prompt: &str) -> Opened {
    let opened = open(pty, owner, request).await;
    assert_eq!(
        (opened.settled_by, opened.pending.as_str()),
        (SettleReason::Prompt, prompt),
        "{opened:?}"
    );
    opened
}

/// Exit statuses of one command, a pipeline, a command of `sh`, two lines typed in one
/// send and a Ctrl-C'd command, each in the reply that sees it end, settled on the
/// prompt; nothing of the marks in lines, pending or the screen.
async fn exit_statuses(command: &str, files: &[(&str, &str)], prompt: &str) {
    require(command);
    let (pty, owner) = service();
    let home = TempDir::new(command);
    let opened = open_shell(&pty, &owner, shell(command, &home, files), prompt).await;
    let id = &opened.session_id;

    let sent = send(&pty, &owner, id, "false").await;
    assert_eq!(sent.settled_by, SettleReason::Prompt, "{sent:?}");
    assert_eq!(results(&sent.commands), [("false", Some(1))]);
    assert_eq!(sent.pending, prompt);

    let sent = send(&pty, &owner, id, "sh -c 'exit 7'").await;
    assert_eq!(results(&sent.commands), [("sh -c 'exit 7'", Some(7))]);
    let sent = send(&pty, &owner, id, "true | false").await;
    assert_eq!(results(&sent.commands), [("true | false", Some(1))]);
    let sent = send(&pty, &owner, id, "echo one\recho two; true").await;
    assert_eq!(
        results(&sent.commands),
        [("echo one", Some(0)), ("echo two; true", Some(0))],
        "{sent:?}"
    );
    let ones = sent.delta.text.lines().filter(|l| *l == "one").count();
    assert_eq!(ones, 1, "{:?}", sent.delta.text);

    // A command still running when the reply is made is reported by the one that sees
    // it end.
    let request = SendRequest::new("sleep 30").timeout(Duration::from_millis(300));
    let sent = pty.send(&owner, id, request).await.unwrap();
    assert!(sent.commands.is_empty(), "{sent:?}");
    let sent = pty
        .send(
            &owner,
            id,
            SendRequest::new("\u{3}")
                .submit(false)
                .timeout(Duration::from_secs(20)),
        )
        .await
        .unwrap();
    assert_eq!(results(&sent.commands), [("sleep 30", Some(130))]);

    let screen = pty.screen(&owner, id).unwrap();
    let all = pty
        .tail(&owner, id, TailRequest::everything().from(0))
        .await
        .unwrap();
    for text in [&screen.text(), &all.output.text] {
        assert!(
            !text.contains("133;") && !text.contains('\u{1b}'),
            "{text:?}"
        );
    }
    let listed = pty.list(&owner);
    assert_eq!(listed[0].last_exit_code, Some(130));
    pty.shutdown().await;
}

#[tokio::test]
async fn bash_reports_exit_statuses() {
    exit_statuses("bash", &[(".bashrc", "PS1='$ '\n")], "$ ").await;
}

#[tokio::test]
async fn a_sandboxed_bash_reports_exit_statuses_too() {
    require("bash");
    let (pty, owner) = service();
    // A home the sandbox sees: not under `/tmp`, which is the sandbox's own.
    let home = TempDir::under(env!("CARGO_TARGET_TMPDIR"), "sandboxed-shell");
    let request = shell("bash", &home, &[(".bashrc", "PS1='$ '\n")])
        .sandbox(pty_session::Sandbox::Workspace)
        .cwd(&home.0);
    let opened = open_shell(&pty, &owner, request, "$ ").await;
    let id = &opened.session_id;
    let sent = send(&pty, &owner, id, "false").await;
    assert_eq!(sent.settled_by, SettleReason::Prompt, "{sent:?}");
    assert_eq!(results(&sent.commands), [("false", Some(1))]);
    let sent = send(&pty, &owner, id, "touch made && test -f made").await;
    assert_eq!(
        results(&sent.commands),
        [("touch made && test -f made", Some(0))]
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn zsh_reports_exit_statuses() {
    exit_statuses("zsh", &[(".zshrc", "PS1='%% '\n")], "% ").await;
}

#[tokio::test]
async fn fish_reports_exit_statuses() {
    let config = "function fish_prompt; printf '> '; end\nset -g fish_greeting\n";
    exit_statuses("fish", &[("fish/config.fish", config)], "> ").await;
}

#[tokio::test]
async fn bash_keeps_the_users_prompt_prompt_command_alias_and_history() {
    require("bash");
    let (pty, owner) = service();
    let home = TempDir::new("bash-rc");
    let rc = "PS1='mine> '\nPROMPT_COMMAND='echo from-prompt-command'\nalias hi='echo aliased'\n";
    let request = shell("bash", &home, &[(".bashrc", rc)]);
    let opened = open_shell(&pty, &owner, request, "mine> ").await;
    let id = &opened.session_id;
    assert!(
        opened.initial_output.text.contains("from-prompt-command"),
        "{opened:?}"
    );
    let sent = send(&pty, &owner, id, "hi").await;
    assert!(sent.delta.text.contains("aliased\n"), "{sent:?}");
    assert_eq!(results(&sent.commands), [("hi", Some(0))]);
    let sent = send(
        &pty,
        &owner,
        id,
        "echo \"[$PS1]\"; echo \"[$PROMPT_COMMAND]\"",
    )
    .await;
    assert!(sent.delta.text.contains("[mine> ]\n"), "{sent:?}");
    assert!(
        sent.delta.text.contains("echo from-prompt-command"),
        "{sent:?}"
    );
    let sent = send(&pty, &owner, id, "history").await;
    let history: Vec<&str> = sent
        .delta
        .text
        .lines()
        .filter(|l| l.starts_with("  "))
        .collect();
    assert_eq!(history.len(), 3, "only the agent's commands: {history:?}");
    assert!(!sent.delta.text.contains("__pty"), "{sent:?}");
    pty.shutdown().await;
}

#[tokio::test]
async fn bash_reports_the_directory_and_an_exit() {
    require("bash");
    let (pty, owner) = service();
    let home = TempDir::new("bash-cd");
    let request = shell("bash -l", &home, &[(".bash_profile", "PS1='$ '\n")]).cwd(&home.0);
    let opened = open_shell(&pty, &owner, request, "$ ").await;
    let id = &opened.session_id;
    let sent = send(&pty, &owner, id, "mkdir 'a b' && cd 'a b'").await;
    assert_eq!(sent.commands.len(), 1, "{sent:?}");
    let listed = pty.list(&owner);
    assert_eq!(listed[0].cwd, home.0.join("a b"));
    assert_eq!(listed[0].last_exit_code, Some(0));

    // A read that leaves the cursor leaves the commands too.
    let sent = pty
        .send(&owner, id, SendRequest::new("false").read(false))
        .await
        .unwrap();
    assert!(sent.commands.is_empty());
    let tail = pty.tail(&owner, id, None).await.unwrap();
    assert_eq!(results(&tail.commands), [("false", Some(1))]);
    let tail = pty.tail(&owner, id, None).await.unwrap();
    assert!(tail.commands.is_empty(), "delivered once");

    let sent = send(&pty, &owner, id, "exit 3").await;
    assert_eq!(sent.settled_by, SettleReason::Exit);
    assert_eq!(results(&sent.commands), [("exit 3", Some(3))]);
    pty.shutdown().await;
}

#[tokio::test]
async fn forged_marks_printed_by_a_program_are_ignored() {
    require("bash");
    let (pty, owner) = service();
    let home = TempDir::new("bash-forged");
    let opened = open_shell(
        &pty,
        &owner,
        shell("bash", &home, &[(".bashrc", "PS1='$ '\n")]),
        "$ ",
    )
    .await;
    let id = &opened.session_id;
    let forged = r"printf '\033]133;D;0\007\033]133;C;k=x\007\033]133;D;5;k=guess\007\033]133;B\007'; sleep 0.3; false";
    let sent = send(&pty, &owner, id, forged).await;
    assert_eq!(sent.settled_by, SettleReason::Prompt);
    assert_eq!(results(&sent.commands), [(forged, Some(1))]);
    pty.shutdown().await;
}

#[tokio::test]
async fn integration_off_leaves_the_shell_alone() {
    require("bash");
    let (pty, owner) = service();
    let home = TempDir::new("bash-off");
    let request = shell("bash", &home, &[(".bashrc", "PS1='$ '\n")]).shell_integration(false);
    let opened = open(&pty, &owner, request).await;
    assert_eq!(opened.settled_by, SettleReason::Input);
    let id = &opened.session_id;
    let sent = send(&pty, &owner, id, "false; echo \"[$PROMPT_COMMAND]\"").await;
    assert_eq!(sent.settled_by, SettleReason::Input);
    assert!(sent.commands.is_empty());
    assert!(sent.delta.text.contains("[]\n"), "{sent:?}");
    pty.shutdown().await;
}

#[tokio::test]
async fn a_remote_shell_that_sends_its_own_marks_is_read() {
    // A shell of its own making, as a remote one set up for marks: no hooks of ours.
    let (pty, owner) = service();
    let fake = r#"while printf '\033]133;A\007remote> \033]133;B\007'; read -r line; do printf '\033]133;C;cmdline_url=%s\007' "$line"; sleep 0.2; echo ran; printf '\033]133;D;4\007'; done"#;
    let request = OpenRequest::new(format!("sh -c {}", pty_session::quote_word(fake)))
        .timeout(Duration::from_secs(20));
    let opened = open(&pty, &owner, request).await;
    assert_eq!(opened.pending, "remote> ");
    let sent = send(&pty, &owner, &opened.session_id, "make").await;
    assert_eq!(sent.settled_by, SettleReason::Prompt, "{sent:?}");
    assert_eq!(results(&sent.commands), [("make", Some(4))]);
    assert!(sent.delta.text.contains("ran\n"));
    pty.shutdown().await;
}

/// zsh and fish keep the user's prompt, hooks and aliases: each rc sets a prompt, a hook
/// run before each prompt and an alias, and the variable the hooks were handed is gone.
#[tokio::test]
async fn zsh_and_fish_keep_the_users_prompt_hooks_and_aliases() {
    let zshrc = "PS1='z> '\nprecmd() { echo from-precmd }\nalias hi='echo aliased'\n";
    let fish = "function fish_prompt; printf 'f> '; end\nset -g fish_greeting\n\
                function hook --on-event fish_prompt; echo from-precmd; end\n\
                alias hi='echo aliased'\n";
    for (command, file, text, prompt) in [
        ("zsh", ".zshrc", zshrc, "z> "),
        ("fish", "fish/config.fish", fish, "f> "),
    ] {
        require(command);
        let (pty, owner) = service();
        let home = TempDir::new(&format!("{command}-rc"));
        let request = shell(command, &home, &[(file, text)]);
        let opened = open_shell(&pty, &owner, request, prompt).await;
        assert!(
            opened.initial_output.text.contains("from-precmd"),
            "{command}: {opened:?}"
        );
        let id = &opened.session_id;
        let sent = send(&pty, &owner, id, "hi").await;
        assert!(sent.delta.text.contains("aliased\n"), "{command}: {sent:?}");
        // (zsh pads a line a hook printed before its prompt: PROMPT_SP.)
        let hooked = sent
            .delta
            .text
            .lines()
            .any(|l| l.trim_end() == "from-precmd");
        assert!(hooked, "{command}: {sent:?}");
        assert_eq!(results(&sent.commands), [("hi", Some(0))], "{command}");
        let sent = send(&pty, &owner, id, "env | grep -c PTY_SESSION_").await;
        assert!(sent.delta.text.contains("\n0\n"), "{command}: {sent:?}");
        assert_eq!(sent.pending, prompt, "{command}");
        pty.shutdown().await;
    }
}
