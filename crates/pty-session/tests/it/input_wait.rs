//! Input wait must be true: real programs that wait on a child's pipe, a
//! socket or their own pager are working, not waiting for the user, and a settle must not
//! end on "input" before their output is there. Programs that really wait on their prompt
//! still settle by input.
//!
//! Each test states the reply a user of the tools should get: the settle's reason and the
//! output it carries. The failure messages show what came instead.

use std::time::{Duration, Instant};

use pty_session::{
    OpenRequest, Opened, PtyService, Sandbox, SendRequest, Sent, Settle, SettleReason, Status,
    quote_word,
};

use crate::support::*;

/// What a reply showed, for failure messages: the reason, the lines and the pending line.
fn shown(settled_by: SettleReason, text: &str, pending: &str) -> String {
    format!("settled by {settled_by}; lines {text:?}; pending {pending:?}")
}

fn opened_shows(opened: &Opened) -> String {
    shown(
        opened.settled_by,
        &opened.initial_output.text,
        &opened.pending,
    )
}

fn sent_shows(sent: &Sent) -> String {
    shown(sent.settled_by, &sent.delta.text, &sent.pending)
}

/// Sends `request` and panics with the error if that fails.
async fn send(
    pty: &PtyService,
    owner: &pty_session::Owner,
    id: &pty_session::SessionId,
    request: SendRequest,
) -> Sent {
    match pty.send(owner, id, request).await {
        Ok(sent) => sent,
        Err(err) => panic!("send failed: {} {err}", err.code()),
    }
}

/// A git repository in a fresh temp dir, with its own empty home and no system config,
/// holding one committed file of 30 lines, changed near its top and near its bottom: two
/// hunks for `git add -p`.
struct Repo {
    dir: TempDir,
}

impl Repo {
    fn with_two_hunks() -> Repo {
        require("git");
        let dir = TempDir::new("add-p");
        std::fs::create_dir_all(dir.0.join("home")).unwrap();
        std::fs::create_dir_all(dir.0.join("repo")).unwrap();
        let repo = Repo { dir };
        repo.git(&["init", "-q"]);
        let lines: Vec<String> = (1..=30).map(|n| format!("line {n}")).collect();
        repo.write(&lines);
        repo.git(&["add", "file.txt"]);
        repo.git(&["commit", "-q", "-m", "thirty lines"]);
        let mut changed = lines;
        changed[1] = "line 2 changed".to_owned();
        changed[27] = "line 28 changed".to_owned();
        repo.write(&changed);
        repo
    }

    fn path(&self) -> std::path::PathBuf {
        self.dir.0.join("repo")
    }

    fn home(&self) -> String {
        self.dir.0.join("home").to_str().unwrap().to_owned()
    }

    fn write(&self, lines: &[String]) {
        std::fs::write(self.path().join("file.txt"), lines.join("\n") + "\n").unwrap();
    }

    /// Runs git in the repository, outside any terminal; returns its stdout.
    fn git(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .current_dir(self.path())
            .env("HOME", self.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args([
                "-c",
                "user.name=Agent",
                "-c",
                "user.email=agent@example.com",
            ])
            .args(args)
            .output()
            .expect("git must be installed for this test (.ci/run installs it)");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    /// `git add -p` on a terminal, with the same home and config as [`git`](Self::git).
    fn add_p(&self) -> OpenRequest {
        OpenRequest::new("git add -p")
            .cwd(self.path())
            .env("HOME", self.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .timeout(Duration::from_millis(20_000))
    }
}

/// How many times the `git add -p` and `man` tests run their program: with an earlier,
/// coarser sampling of the group, one run settled by input too early in about three tries
/// of five, depending on the machine's load.
const ATTEMPTS: usize = 3;

/// `git add -p` reads the diff from a child's pipe before it shows a hunk: the open's reply
/// shows hunk 1 and its prompt, each answer's reply the next hunk, the last answer's the
/// exit.
#[tokio::test]
async fn git_add_p_shows_each_hunk_in_the_reply_before_its_prompt() {
    let (pty, owner) = service();
    for attempt in 1..=ATTEMPTS {
        add_p_hunk_by_hunk(&pty, &owner, attempt).await;
    }
    pty.shutdown().await;
}

/// One run of `git add -p` in a fresh repository, answering `y` to both hunks.
async fn add_p_hunk_by_hunk(pty: &PtyService, owner: &pty_session::Owner, attempt: usize) {
    let repo = Repo::with_two_hunks();
    let opened = open(pty, owner, repo.add_p()).await;
    let id = &opened.session_id;
    let seen = format!("attempt {attempt}: {}", opened_shows(&opened));
    assert_eq!(opened.settled_by, SettleReason::Input, "open: {seen}");
    assert!(
        opened.initial_output.text.contains("+line 2 changed")
            && !opened.initial_output.text.contains("line 28 changed"),
        "open shows hunk 1 alone: {seen}"
    );
    assert!(
        opened.pending.contains("(1/2) Stage this hunk"),
        "open: {seen}"
    );

    let sent = send(pty, owner, id, SendRequest::new("y")).await;
    let seen = format!("attempt {attempt}: {}", sent_shows(&sent));
    assert_eq!(sent.settled_by, SettleReason::Input, "first y: {seen}");
    assert!(
        sent.delta.text.contains("+line 28 changed")
            && !sent.delta.text.contains("+line 2 changed"),
        "first y shows hunk 2: {seen}"
    );
    assert!(
        sent.pending.contains("(2/2) Stage this hunk"),
        "first y: {seen}"
    );

    let sent = send(pty, owner, id, SendRequest::new("y")).await;
    assert_eq!(
        (sent.settled_by, sent.status),
        (
            SettleReason::Exit,
            Status::Exited(pty_session::ExitStatus::Code(0))
        ),
        "attempt {attempt}, second y: {}",
        sent_shows(&sent)
    );
    let staged = repo.git(&["diff", "--cached"]);
    assert!(
        staged.contains("+line 2 changed") && staged.contains("+line 28 changed"),
        "{staged}"
    );
    pty.close(owner, id).await.unwrap();
}

/// With `until` on its prompt, `git add -p` settles by the match, with the hunk shown.
#[tokio::test]
async fn git_add_p_until_its_prompt_settles_by_match_with_the_hunk() {
    let (pty, owner) = service();
    for attempt in 1..=ATTEMPTS {
        let repo = Repo::with_two_hunks();
        let opened = open(&pty, &owner, repo.add_p().until("Stage this hunk")).await;
        let seen = format!("attempt {attempt}: {}", opened_shows(&opened));
        assert_eq!(opened.settled_by, SettleReason::Match, "{seen}");
        assert!(
            opened.initial_output.text.contains("+line 2 changed"),
            "{seen}"
        );
        assert!(opened.pending.contains("(1/2) Stage this hunk"), "{seen}");
        pty.close(&owner, &opened.session_id).await.unwrap();
    }
    pty.shutdown().await;
}

/// Whether `man` has the page of `ls`: slim Debian and Ubuntu images keep dpkg from
/// installing /usr/share/man (a `path-exclude` in /etc/dpkg/dpkg.cfg.d/).
fn man_page_of_ls_installed() -> Result<(), String> {
    let out = std::process::Command::new("man")
        .args(["-w", "ls"])
        .output()
        .map_err(|err| format!("man is not installed ({err}): apt-get install man-db"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`man -w ls` finds no page ({}): man pages are not installed. On Debian/Ubuntu \
             images dpkg often excludes them: remove the `path-exclude=/usr/share/man/*` \
             lines in /etc/dpkg/dpkg.cfg.d/ (docker, excludes) and run \
             `apt-get install --reinstall coreutils`",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// man-db waits on its formatting pipeline's pipes with poll: `man ls` with `cat` as its
/// pager settles by exit with the whole page.
#[tokio::test]
async fn man_with_a_pager_of_cat_settles_by_exit_with_the_whole_page() {
    if let Err(missing) = man_page_of_ls_installed() {
        panic!("THIS TEST CANNOT RUN HERE: {missing}");
    }
    let (pty, owner) = service();
    for attempt in 1..=ATTEMPTS {
        let opened = open(
            &pty,
            &owner,
            OpenRequest::new("man ls")
                .env("PAGER", "cat")
                .env("MANPAGER", "cat")
                .env("MANWIDTH", "80")
                .lines(100_000)
                .max_bytes(1024 * 1024)
                .timeout(Duration::from_millis(30_000)),
        )
        .await;
        let text = &opened.initial_output.text;
        let seen = format!(
            "attempt {attempt}: settled by {}; {} lines, the first {:?}, the last {:?}",
            opened.settled_by,
            opened.initial_output.lines,
            text.lines().take(5).collect::<Vec<_>>(),
            text.lines().rev().take(5).collect::<Vec<_>>(),
        );
        assert_eq!(opened.settled_by, SettleReason::Exit, "{seen}");
        assert!(!opened.initial_output.truncated, "{seen}");
        let headings: Vec<&str> = text
            .lines()
            .filter(|line| line.starts_with(|c: char| c.is_ascii_uppercase()))
            .collect();
        for heading in ["NAME", "SYNOPSIS", "DESCRIPTION", "SEE ALSO"] {
            assert!(headings.contains(&heading), "no {heading}: {seen}");
        }
        let last = text.lines().rev().find(|line| !line.trim().is_empty());
        assert!(
            last.is_some_and(|line| line.contains("LS(1)")),
            "the page's footer is the last line: {seen}"
        );
        pty.close(&owner, &opened.session_id).await.unwrap();
    }
    pty.shutdown().await;
}

/// A python program that captures a child's output sleeps in poll on the child's pipes:
/// the settle waits for the child and then for the program's own prompt.
#[tokio::test]
async fn python_capturing_a_child_settles_by_input_after_the_child() {
    let (pty, owner) = service();
    let code = "import subprocess\n\
                r = subprocess.run(['sleep', '0.3'], capture_output=True)\n\
                print('child finished with', r.returncode)\n\
                input('your turn> ')\n";
    let command = format!("{} -c {}", quote_word(&python3()), quote_word(code));
    let start = Instant::now();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(command).timeout(Duration::from_millis(20_000)),
    )
    .await;
    let took = start.elapsed();
    let seen = format!("{} after {took:?}", opened_shows(&opened));
    assert_eq!(
        (
            opened.settled_by,
            opened.initial_output.text.as_str(),
            opened.pending.as_str()
        ),
        (
            SettleReason::Input,
            "child finished with 0\n",
            "your turn> "
        ),
        "{seen}"
    );
    pty.shutdown().await;
}

/// The same capture, after which the program exits: it settles by exit with the output.
#[tokio::test]
async fn python_capturing_a_child_then_exiting_settles_by_exit_with_the_output() {
    let (pty, owner) = service();
    let code = "import subprocess\n\
                r = subprocess.run(['sh', '-c', 'sleep 0.3; echo from the child'], \
                capture_output=True, text=True)\n\
                print('captured:', r.stdout.strip())\n";
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
        (opened.settled_by, opened.initial_output.text.as_str()),
        (SettleReason::Exit, "captured: from the child\n"),
        "{} after {took:?}",
        opened_shows(&opened)
    );
    pty.shutdown().await;
}

/// node waits on the terminal and on the pipe of a child started with
/// `child_process.exec`: the settle may end by input or on quiet, but never before the
/// child's output, which node prints when the child is done, is in the reply.
#[tokio::test]
async fn node_exec_of_a_child_settles_only_with_its_output() {
    require("node");
    let (pty, owner) = service();
    let code = "require('child_process').exec('sleep 0.3; echo hi from the child', \
                (err, out) => process.stdout.write('child said: ' + out)); \
                process.stdin.resume();";
    let start = Instant::now();
    let opened = open(
        &pty,
        &owner,
        // While the child's pipe is open node watches it beside the terminal: only quiet
        // can tell then, so the quiet period must outlast the child, also on a loaded
        // machine (1 of 20 runs beside two busy loops took over 1.5 s).
        OpenRequest::new(format!("node -e {}", quote_word(code)))
            .quiet(Duration::from_millis(5000))
            .timeout(Duration::from_millis(20_000)),
    )
    .await;
    let took = start.elapsed();
    let seen = format!("{} after {took:?}", opened_shows(&opened));
    assert!(
        matches!(opened.settled_by, SettleReason::Input | SettleReason::Quiet),
        "{seen}"
    );
    assert_eq!(
        opened.initial_output.text, "child said: hi from the child\n",
        "{seen}"
    );
    pty.shutdown().await;
}

/// The same exec, after which node has nothing left to do: it settles by exit with the
/// output.
#[tokio::test]
async fn node_exec_of_a_child_then_exiting_settles_by_exit_with_the_output() {
    require("node");
    let (pty, owner) = service();
    let code = "require('child_process').exec('sleep 0.3; echo hi from the child', \
                (err, out) => process.stdout.write('child said: ' + out));";
    let start = Instant::now();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(format!("node -e {}", quote_word(code)))
            .timeout(Duration::from_millis(20_000)),
    )
    .await;
    let took = start.elapsed();
    assert_eq!(
        (opened.settled_by, opened.initial_output.text.as_str()),
        (SettleReason::Exit, "child said: hi from the child\n"),
        "{} after {took:?}",
        opened_shows(&opened)
    );
    pty.shutdown().await;
}

/// The body the slow server sends: ten lines, one every 100 ms.
const SLOW_LINES: usize = 10;

/// An HTTP server on 127.0.0.1 that answers each request with [`SLOW_LINES`] lines of
/// body, one every 100 ms, so a download takes about a second. It runs as a task of the
/// test's runtime; abort it at the end.
async fn slow_http_server() -> (u16, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let body = slow_body();
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n",
                    body.len()
                );
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for line in body.split_inclusive('\n') {
                    // The pace of a slow download, not a wait for something to happen.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if stream.write_all(line.as_bytes()).await.is_err() {
                        return;
                    }
                }
                let _ = stream.shutdown().await;
            });
        }
    });
    (port, task)
}

fn slow_body() -> String {
    (1..=SLOW_LINES)
        .map(|n| format!("chunk {n} of a slow download\n"))
        .collect()
}

/// curl sleeps in poll on its socket while a download runs: it settles by exit with the
/// whole body.
#[tokio::test]
async fn curl_of_a_slow_download_settles_by_exit_with_the_whole_body() {
    require("curl");
    let (port, server) = slow_http_server().await;
    let (pty, owner) = service();
    let start = Instant::now();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(format!("curl -s http://127.0.0.1:{port}/"))
            .timeout(Duration::from_millis(20_000)),
    )
    .await;
    let took = start.elapsed();
    assert_eq!(
        (opened.settled_by, opened.initial_output.text.as_str()),
        (SettleReason::Exit, slow_body().as_str()),
        "{} after {took:?}",
        opened_shows(&opened)
    );
    pty.shutdown().await;
    server.abort();
}

/// A file in a fresh temp dir for vim, its path quoted for the shell.
fn vim_file(dir: &TempDir) -> String {
    require("vim");
    let path = dir.0.join("notes.txt");
    std::fs::write(&path, "first line\nsecond line\n").expect("write the test file");
    quote_word(path.to_str().expect("utf-8 temp path")).into_owned()
}

fn screen_text(screen: &Option<pty_session::Screen>) -> String {
    screen
        .as_ref()
        .map_or_else(|| "(no screen)".to_owned(), |screen| screen.text())
}

/// vim asks the terminal questions at start (DA2, colours) and waits for the answers: once
/// they are answered, `:q` settles by exit in the reply to `:q` itself.
#[tokio::test]
async fn vim_quit_settles_by_exit_in_its_own_reply() {
    let (pty, owner) = service();
    let dir = TempDir::new("vim-q");
    let path = vim_file(&dir);
    // A quiet settle for the start, so that what follows is the `:q` alone.
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(format!("vim -u NONE -N {path}"))
            .settle(Settle::Quiet)
            .quiet(Duration::from_millis(1_000))
            .timeout(Duration::from_millis(15_000)),
    )
    .await;
    assert!(
        screen_text(&opened.screen).contains("first line"),
        "vim started: {}",
        screen_text(&opened.screen)
    );
    let sent = send(
        &pty,
        &owner,
        &opened.session_id,
        SendRequest::keys([":q", "Enter"]).timeout(Duration::from_millis(15_000)),
    )
    .await;
    assert_eq!(
        (sent.settled_by, sent.status, sent.alt_screen),
        (
            SettleReason::Exit,
            Status::Exited(pty_session::ExitStatus::Code(0)),
            false
        ),
        ":q: {}; screen {}",
        sent_shows(&sent),
        screen_text(&sent.screen)
    );
    pty.shutdown().await;
}

/// vim with the default settle: the open settles by input with the file shown, and `:w`
/// by input with the new status line, each in its own reply.
#[tokio::test]
async fn vim_write_settles_by_input_with_the_new_status_line() {
    let (pty, owner) = service();
    let dir = TempDir::new("vim-w");
    let path = vim_file(&dir);
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new(format!("vim -u NONE -N {path}")).timeout(Duration::from_millis(15_000)),
    )
    .await;
    let screen = screen_text(&opened.screen);
    assert_eq!(opened.settled_by, SettleReason::Input, "open: {screen}");
    assert!(
        screen.starts_with("first line\nsecond line"),
        "open: {screen}"
    );
    let sent = send(
        &pty,
        &owner,
        &opened.session_id,
        SendRequest::keys([":w", "Enter"]).timeout(Duration::from_millis(15_000)),
    )
    .await;
    let screen = sent.screen.as_ref().map(|screen| screen.lines.clone());
    let status_line = screen.as_ref().and_then(|lines| lines.last().cloned());
    assert_eq!(
        sent.settled_by,
        SettleReason::Input,
        ":w: {}; screen {screen:?}",
        sent_shows(&sent)
    );
    assert!(
        status_line
            .as_ref()
            .is_some_and(|line| line.contains("notes.txt") && line.contains("written")),
        ":w: the status line is {status_line:?}; screen {screen:?}"
    );
    pty.shutdown().await;
}

/// A busy job in the foreground group (`yes` in the background of a non-interactive
/// shell, which keeps it in the group) while `cat` reads the terminal: the group is not
/// asleep, so no open may settle by input; each runs to its timeout.
#[tokio::test]
async fn a_busy_job_in_the_foreground_group_is_not_input_wait() {
    let (pty, owner) = service();
    let mut seen = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let opened = open(
            &pty,
            &owner,
            OpenRequest::new("yes > /dev/null & exec cat").timeout(Duration::from_millis(2_500)),
        )
        .await;
        seen.push((start.elapsed(), opened.settled_by));
        pty.close(&owner, &opened.session_id).await.unwrap();
    }
    all_timed_out(&seen);
    pty.shutdown().await;
}

/// Asserts that every open of `seen` (what tells it apart, and how it settled) ended at
/// its timeout.
fn all_timed_out(seen: &[(impl std::fmt::Debug, SettleReason)]) {
    assert!(
        seen.iter()
            .all(|(_, settled_by)| *settled_by == SettleReason::Timeout),
        "each open and how it settled: {seen:?}"
    );
}

/// A busy member that lost its parent (the subshell that started it exited) is handed to
/// the session's shim, or in a sandbox to its pid 1, and stays in the foreground group:
/// the lookup of the group's members, which walks the processes below the shim, still
/// finds it.
#[tokio::test]
async fn a_busy_orphan_in_the_foreground_group_is_not_input_wait() {
    let (pty, owner) = service();
    let work = TempDir::new("orphan");
    let mut seen = Vec::new();
    for sandbox in [Sandbox::None, Sandbox::Workspace] {
        let request = OpenRequest::new("(yes > /dev/null &); exec cat")
            .cwd(&work.0)
            .sandbox(sandbox)
            .timeout(Duration::from_millis(2_500));
        let opened = open(&pty, &owner, request).await;
        seen.push((sandbox, opened.settled_by));
        pty.close(&owner, &opened.session_id).await.unwrap();
    }
    all_timed_out(&seen);
    pty.shutdown().await;
}

/// REPLs that really wait on their prompt still settle by input, at the prompt and after
/// an expression (python, bash, cat, node and gdb are in `settle::repls_settle_by_input_wait`).
#[tokio::test]
async fn sqlite3_bc_and_pdb_settle_by_input_on_their_prompts() {
    let (pty, owner) = service();
    let dir = TempDir::new("pdb");
    let script = dir.0.join("script.py");
    std::fs::write(&script, "x = 6\ny = 7\nprint(x * y)\n").unwrap();
    let pdb = format!(
        "{} -m pdb {}",
        quote_word(&python3()),
        quote_word(script.to_str().unwrap())
    );
    let cases = [
        ("sqlite3".to_owned(), "sqlite> ", "select 6*7;"),
        ("bc -q".to_owned(), "", "6*7"),
        (pdb, "(Pdb) ", "p 6*7"),
    ];
    for (command, prompt, data) in cases {
        require(command.split_whitespace().next().unwrap());
        let opened = open(
            &pty,
            &owner,
            OpenRequest::new(&command).timeout(Duration::from_millis(20_000)),
        )
        .await;
        assert_eq!(
            (opened.settled_by, opened.pending.as_str()),
            (SettleReason::Input, prompt),
            "{command}: {}",
            opened_shows(&opened)
        );
        let sent = send(&pty, &owner, &opened.session_id, SendRequest::new(data)).await;
        assert_eq!(
            (sent.settled_by, sent.pending.as_str()),
            (SettleReason::Input, prompt),
            "{command}: {}",
            sent_shows(&sent)
        );
        assert!(
            sent.delta.text.lines().any(|line| line.trim() == "42"),
            "{command}: {}",
            sent_shows(&sent)
        );
        pty.close(&owner, &opened.session_id).await.unwrap();
    }
    pty.shutdown().await;
}
