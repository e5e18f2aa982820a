//! Commands on the remote shell: outputs, exit codes, long output, standard input,
//! timeouts, and the passthrough for interactive use.

use std::time::{Duration, Instant};

use pty_session::{Config, Owner, PtyService, SendRequest, Settle, SettleReason};
use pty_session_ssh::{Error, RunOutput, Ssh};

use crate::support::*;

async fn connect(sshd: &Sshd, pty: &PtyService) -> Ssh {
    match Ssh::connect(pty, Owner::new("t"), sshd.key_options()).await {
        Ok(ssh) => ssh,
        Err(err) => panic!("connect failed: {err}\nsshd's log:\n{}", sshd.log().await),
    }
}

#[track_caller]
fn check(run: &RunOutput, output: &str, exit_code: i32) {
    assert_eq!((run.output.as_str(), run.exit_code), (output, exit_code));
    assert_eq!(run.lines_lost, 0);
}

#[tokio::test]
async fn outputs_and_exit_codes() {
    let sshd = Sshd::start().await;
    let pty = service();
    let mut ssh = connect(&sshd, &pty).await;

    check(
        &ssh.run("echo hello; echo world").await.unwrap(),
        "hello\nworld\n",
        0,
    );
    check(&ssh.run("false").await.unwrap(), "", 1);
    check(&ssh.run("(exit 42)").await.unwrap(), "", 42);
    let missing = ssh.run("no-such-command-4711").await.unwrap();
    assert_eq!(missing.exit_code, 127);
    assert!(
        missing.output.contains("no-such-command-4711") && missing.output.contains("not found"),
        "{missing:?}"
    );
    // No final newline; standard error; quotes; several lines; blank lines.
    check(&ssh.run("printf abc").await.unwrap(), "abc", 0);
    check(
        &ssh.run("echo oops >&2; exit_code=3; (exit $exit_code)")
            .await
            .unwrap(),
        "oops\n",
        3,
    );
    check(
        &ssh.run(r#"echo 'single '\''quoted'\''' "double $((6*7))""#)
            .await
            .unwrap(),
        "single 'quoted' double 42\n",
        0,
    );
    check(
        &ssh.run("for i in 1 2 3\ndo\n  echo \"line $i\"\ndone")
            .await
            .unwrap(),
        "line 1\nline 2\nline 3\n",
        0,
    );
    check(
        &ssh.run("printf 'a\\n\\n\\nb\\n'").await.unwrap(),
        "a\n\n\nb\n",
        0,
    );
    check(
        &ssh.run("printf 'tab\\there\\n'; echo 'bang!'")
            .await
            .unwrap(),
        "tab\there\nbang!\n",
        0,
    );
    // The shell keeps its state between commands.
    check(
        &ssh.run("cd /tmp && export PTYSSH_TEST=kept").await.unwrap(),
        "",
        0,
    );
    check(
        &ssh.run("pwd; echo $PTYSSH_TEST").await.unwrap(),
        "/tmp\nkept\n",
        0,
    );
    // Nothing of the login, the prompts or the framing leaks into a result.
    let all = ssh.run("echo last").await.unwrap();
    check(&all, "last\n", 0);
    ssh.close().await.unwrap();
}

#[tokio::test]
async fn ten_thousand_lines_come_whole() {
    // A burst of output must fit the session's scrollback: 10,000 lines and the two
    // markers are more than the default 10,000 lines, so this service keeps more, as a
    // consumer that expects long outputs configures it.
    let sshd = Sshd::start().await;
    let mut config = Config::default();
    config.scrollback_lines = 20_000;
    let pty = PtyService::new(config);
    let mut ssh = connect(&sshd, &pty).await;
    let start = Instant::now();
    let run = ssh.run("seq 1 10000").await.unwrap();
    let expected: String = (1..=10_000).map(|n| format!("{n}\n")).collect();
    assert_eq!(run.lines_lost, 0);
    assert_eq!(run.output.len(), expected.len());
    assert!(run.output == expected, "the output differs from seq's");
    check(&run, &expected, 0);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    // And the connection goes on.
    check(&ssh.run("echo after").await.unwrap(), "after\n", 0);
    ssh.close().await.unwrap();
}

#[tokio::test]
async fn output_beyond_the_scrollback_is_counted_as_lost() {
    // 5,000 lines arrive far faster than a reader could take them 100 at a time.
    let sshd = Sshd::start().await;
    let mut config = Config::default();
    config.scrollback_lines = 100;
    let pty = PtyService::new(config);
    let mut ssh = connect(&sshd, &pty).await;
    let run = ssh.run("seq 1 5000").await.unwrap();
    assert_eq!(run.exit_code, 0);
    assert!(
        run.lines_lost > 0,
        "{} lines came",
        run.output.lines().count()
    );
    // What came is seq's lines in order, with holes where lines were lost, and the
    // count adds up (the markers may be among the lost).
    let mut numbers = run.output.lines().map(|line| line.parse::<u32>().unwrap());
    let mut previous = numbers.next().unwrap();
    for n in numbers {
        assert!(n > previous, "{n} after {previous}");
        previous = n;
    }
    assert!(run.output.lines().count() as u64 + run.lines_lost >= 5_000);
    assert!(run.output.ends_with("4999\n5000\n"));
    // The next command is whole again.
    check(&ssh.run("seq 1 3").await.unwrap(), "1\n2\n3\n", 0);
    ssh.close().await.unwrap();
}

#[tokio::test]
async fn commands_read_the_input_given_to_them() {
    let sshd = Sshd::start().await;
    let pty = service();
    let mut ssh = connect(&sshd, &pty).await;
    let timeout = Duration::from_secs(10);
    check(
        &ssh.run_with("tr a-z A-Z", "hello\nworld\n", timeout)
            .await
            .unwrap(),
        "HELLO\nWORLD\n",
        0,
    );
    check(
        &ssh.run_with("read a; read b; echo \"$b-$a\"", "x\ny", timeout)
            .await
            .unwrap(),
        "y-x\n",
        0,
    );
    // Input is taken literally: tabs, quotes, `$`, `!`, a line like a marker's.
    let input = "a\tb 'c' \"d\" $HOME !! `e`\nPTYSSH_IN_x\n";
    check(
        &ssh.run_with("cat", input, timeout).await.unwrap(),
        input,
        0,
    );
    // A command that reads its input gets an empty one from run(): no hang.
    check(&ssh.run("cat; echo eof").await.unwrap(), "eof\n", 0);
    check(
        &ssh.run_with("wc -l", "1\n2\n3\n", timeout).await.unwrap(),
        "3\n",
        0,
    );
    ssh.close().await.unwrap();
}

#[tokio::test]
async fn a_timeout_leaves_the_connection_usable() {
    let sshd = Sshd::start().await;
    let pty = service();
    let mut ssh = connect(&sshd, &pty).await;
    let err = ssh
        .run_with("echo started; sleep 30", "", Duration::from_millis(500))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    ssh.interrupt().await.unwrap();
    // The interrupted command's end and output stay out of the next result.
    check(&ssh.run("echo after").await.unwrap(), "after\n", 0);
    ssh.close().await.unwrap();
}

#[tokio::test]
async fn what_a_terminal_would_act_on_is_refused_and_the_connection_goes_on() {
    let sshd = Sshd::start().await;
    let pty = service();
    let mut ssh = connect(&sshd, &pty).await;
    for (command, input) in [("echo \u{3}", ""), ("cat", "\u{4}"), ("", "")] {
        let err = ssh
            .run_with(command, input, Duration::from_secs(5))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::InvalidCommand { .. }), "{err:?}");
    }
    check(&ssh.run("echo fine").await.unwrap(), "fine\n", 0);
    ssh.close().await.unwrap();
}

#[tokio::test]
async fn send_and_tail_pass_through_for_interactive_use() {
    let sshd = Sshd::start().await;
    let pty = service();
    let mut ssh = connect(&sshd, &pty).await;
    // A program that asks a question and waits for the answer on the terminal. Input
    // wait cannot tell when the remote side answered (ssh always waits in poll), so
    // these sends settle on `until`.
    let asked = ssh
        .send(
            SendRequest::new("printf 'name? '; read -r name; echo \"hi [$name]\"")
                .settle(Settle::Quiet)
                .until(r"name\? $")
                .quiet(Duration::from_millis(10_000))
                .timeout(Duration::from_millis(10_000)),
        )
        .await
        .unwrap();
    assert_eq!(asked.pending, "name? ", "{asked:?}");
    let answered = ssh
        .send(
            SendRequest::new("Ada")
                .settle(Settle::Quiet)
                .until(r"hi \[Ada\]$")
                .quiet(Duration::from_millis(10_000))
                .timeout(Duration::from_millis(10_000)),
        )
        .await
        .unwrap();
    assert!(
        answered.delta.text.ends_with("name? hi [Ada]\n"),
        "{:?}",
        answered.delta.text
    );
    assert_eq!(answered.settled_by, SettleReason::Match);
    let tail = ssh.tail(None).await.unwrap();
    assert_eq!(tail.output.text, "");
    // Framed commands still work after interactive use.
    check(&ssh.run("echo framed").await.unwrap(), "framed\n", 0);
    ssh.close().await.unwrap();
}

#[tokio::test]
async fn a_plain_sh_login_shell_works_as_well_as_bash() {
    // The server starts `sh -l` (dash on Debian) instead of the account's bash: no line
    // editor, no PROMPT_COMMAND, another `set`.
    let sshd = Sshd::start_with(SshdConfig {
        force_command: Some("exec /bin/sh -l".to_owned()),
        ..SshdConfig::default()
    })
    .await;
    let pty = service();
    let mut ssh = connect(&sshd, &pty).await;
    check(&ssh.run("echo $0").await.unwrap(), "/bin/sh\n", 0);
    check(&ssh.run("echo a; false").await.unwrap(), "a\n", 1);
    assert_eq!(
        ssh.run("no-such-command-4711").await.unwrap().exit_code,
        127
    );
    let input = "tab\there !! $x\n";
    check(
        &ssh.run_with("cat", input, Duration::from_secs(10))
            .await
            .unwrap(),
        input,
        0,
    );
    check(&ssh.run("seq 1 3").await.unwrap(), "1\n2\n3\n", 0);
    ssh.close().await.unwrap();
}
