//! The screen: `pty_screen` reads over the facade and over MCP, and an agent's task in a
//! full-screen program — edit a line of a file in vim and see the edit on the screen
//! before saving — over MCP and with tmux, counted in calls and bytes taken in.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use pty_session::{CancellationToken, Config, OpenRequest, Owner, PtyService};
use serde_json::json;

use crate::report::Report;
use crate::stats::Samples;
use crate::{Plan, mcp};

/// The shell whose screen is read: a prompt under 30 lines of output.
const SHELL: &str = "bash --norc --noprofile -i";

pub async fn screens(plan: &Plan, report: &mut Report) -> Result<()> {
    let n = if plan.quick { 50 } else { 2000 };
    facade_reads(n, report).await?;
    // The MCP client blocks on a runtime of its own, outside the bench's.
    tokio::task::block_in_place(|| mcp_reads(plan, n / 4, report))?;
    tokio::task::block_in_place(|| vim_task(plan, report))?;
    Ok(())
}

/// `screen` of a 120×40 bash showing `seq 1 30` and its prompt, through the facade.
async fn facade_reads(n: usize, report: &mut Report) -> Result<()> {
    let pty = PtyService::new(Config::default());
    let owner = Owner::new("bench");
    let opened = pty
        .open(
            &owner,
            OpenRequest::new(SHELL)
                .env("PS1", "$ ")
                .timeout(Duration::from_millis(20_000)),
            &CancellationToken::new(),
        )
        .await?;
    let id = opened.session_id;
    pty.send(&owner, &id, pty_session::SendRequest::new("seq 1 30"))
        .await?;
    let mut samples = Samples::default();
    for _ in 0..n {
        let start = Instant::now();
        let screen = pty.screen(&owner, &id)?;
        samples.push(start.elapsed());
        ensure!(screen.lines.last().map(String::as_str) == Some("$"));
    }
    pty.shutdown().await;
    report.row(
        "`pty_screen` of a 120×40 shell (30 lines and a prompt)",
        &format!("facade, `screen` ({n} calls)"),
        samples.summary(),
        String::new(),
        "",
        None,
    );
    Ok(())
}

/// The same over MCP stdio, the real server binary.
fn mcp_reads(plan: &Plan, n: usize, report: &mut Report) -> Result<()> {
    let server = mcp::Server::start(&plan.server)?;
    let opened = server.call(
        "pty_open",
        json!({"command": SHELL, "env": {"PS1": "$ "}, "timeoutMs": 20_000}),
    )?;
    let id = opened["sessionId"]
        .as_str()
        .context("sessionId")?
        .to_owned();
    server.call("pty_send", json!({"id": id, "data": "seq 1 30"}))?;
    let mut samples = Samples::default();
    let mut size = 0;
    for _ in 0..n {
        let start = Instant::now();
        let (screen, bytes) = server.call_sized("pty_screen", json!({"id": id}))?;
        samples.push(start.elapsed());
        size = bytes;
        ensure!(
            screen["screen"]
                .as_str()
                .is_some_and(|s| s.ends_with("\n$"))
        );
    }
    server.stop()?;
    report.row(
        "`pty_screen` of a 120×40 shell (30 lines and a prompt)",
        &format!("MCP stdio, `pty_screen` ({n} calls)"),
        format!(
            "{}; {:.1} KB a reply",
            samples.summary(),
            size as f64 / 1000.0
        ),
        String::new(),
        "",
        None,
    );
    Ok(())
}

const FILE: &str = "alpha\nbeta\ngamma\n";
const EDITED: &str = "beta, edited";

/// A scratch file for vim to edit.
fn scratch_file(name: &str) -> Result<std::path::PathBuf> {
    let path = std::env::temp_dir().join(format!(
        "pty-session-bench-{}-{name}.txt",
        std::process::id()
    ));
    std::fs::write(&path, FILE)?;
    Ok(path)
}

/// "Change the second line of the file to `beta, edited`, check it on the screen, then
/// save." Over MCP: vim opened (its screen in the reply), the edit as named keys (the
/// reply's screen shows it), `:wq` (the reply says it exited). With tmux: a session, the
/// screen captured until vim is up, the keys, the screen captured until the edit shows,
/// `:wq`, and the screen captured until the shell is back.
fn vim_task(plan: &Plan, report: &mut Report) -> Result<()> {
    let name = "agent task: edit a line in vim, see it on the screen, save";
    let file = scratch_file("mcp")?;
    let server = mcp::Server::start(&plan.server)?;
    let command = format!("vim --clean {}", file.display());
    let (opened, mut bytes) =
        server.call_sized("pty_open", json!({"command": command, "timeoutMs": 20_000}))?;
    let mut calls = 1;
    let id = opened["sessionId"]
        .as_str()
        .context("sessionId")?
        .to_owned();
    let seen_at_open = opened["screen"]
        .as_str()
        .is_some_and(|s| s.starts_with("alpha\nbeta"));
    let (edited, more) = server.call_sized(
        "pty_send",
        json!({"id": id, "keys": ["j", "cc", EDITED, "Escape"]}),
    )?;
    calls += 1;
    bytes += more;
    // Where a reply came before the program finished drawing, the agent looks again.
    let shows_edit = |reply: &serde_json::Value| {
        reply["screen"]
            .as_str()
            .is_some_and(|s| s.lines().nth(1) == Some(EDITED) && !s.contains("-- INSERT --"))
    };
    let mut seen = shows_edit(&edited);
    let mut looks = 0;
    while !seen && looks < 10 {
        std::thread::sleep(Duration::from_millis(200));
        let (screen, more) = server.call_sized("pty_screen", json!({"id": id}))?;
        (calls, bytes, looks) = (calls + 1, bytes + more, looks + 1);
        seen = shows_edit(&screen);
    }
    let (mut quit, more) = server.call_sized(
        "pty_send",
        json!({"id": id, "keys": [":wq", "Enter"], "timeoutMs": 20_000}),
    )?;
    calls += 1;
    bytes += more;
    let mut looks = 0;
    while quit["status"] == "running" && looks < 10 {
        std::thread::sleep(Duration::from_millis(200));
        let (screen, more) = server.call_sized("pty_screen", json!({"id": id}))?;
        (calls, bytes, looks) = (calls + 1, bytes + more, looks + 1);
        quit = screen;
    }
    server.stop()?;
    let saved = std::fs::read_to_string(&file)? == format!("alpha\n{EDITED}\ngamma\n");
    let _ = std::fs::remove_file(&file);
    let exited = quit["status"] == "exited";
    let done = seen_at_open && seen && exited && saved;
    if !done {
        report.note(format!(
            "vim over MCP: file on the screen at open {seen_at_open}, edit seen {seen}, \
             exited {exited}, saved {saved}; the last reply: {quit}"
        ));
    }
    report.row(
        name,
        "MCP stdio: pty_open vim, pty_send keys (the edit), pty_send `:wq`; \
         `pty_screen` again where a reply came before vim finished drawing",
        format!(
            "{calls} calls, {:.1} KB in; edit seen on the screen and saved: {done}",
            bytes as f64 / 1000.0
        ),
        String::new(),
        "",
        None,
    );
    if plan.peers && crate::sys::on_path("tmux") && crate::sys::on_path("vim") {
        let (calls, bytes, done) = tmux_vim()?;
        report.row(
            name,
            "peer: tmux send-keys, capture-pane until each step shows",
            format!(
                "{calls} calls, {:.1} KB in; edit seen on the screen and saved: {done}",
                bytes as f64 / 1000.0
            ),
            String::new(),
            "",
            None,
        );
    }
    Ok(())
}

/// The task with tmux as an agent drives it: calls, bytes taken in, and whether the edit
/// was seen and saved.
fn tmux_vim() -> Result<(usize, usize, bool)> {
    let socket = format!("pty-session-bench-vim-{}", std::process::id());
    let file = scratch_file("tmux")?;
    let tmux = |args: &[&str]| -> Result<String> {
        let output = Command::new("tmux")
            .arg("-L")
            .arg(&socket)
            .args(args)
            .output()?;
        ensure!(
            output.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    };
    let mut calls = 0;
    let mut bytes = 0;
    let result = (|| -> Result<bool> {
        let command = format!("vim --clean {}; bash --norc --noprofile", file.display());
        tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "task",
            "-x",
            "120",
            "-y",
            "40",
            &command,
        ])?;
        calls += 1;
        // An agent looks at the screen every half second until the step shows.
        let mut until = |done: &dyn Fn(&str) -> bool| -> Result<bool> {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                std::thread::sleep(Duration::from_millis(500));
                let screen = tmux(&["capture-pane", "-p", "-t", "task"])?;
                calls += 1;
                bytes += screen.len();
                if done(&screen) {
                    return Ok(true);
                }
                if Instant::now() > deadline {
                    return Ok(false);
                }
            }
        };
        let up = until(&|s| s.starts_with("alpha\nbeta"))?;
        tmux(&["send-keys", "-t", "task", "j", "c", "c", EDITED, "Escape"])?;
        let seen = until(&|s| s.lines().nth(1) == Some(EDITED))?;
        tmux(&["send-keys", "-t", "task", ":wq", "Enter"])?;
        let quit = until(&|s| !s.contains("~"))?;
        calls += 2;
        let saved = std::fs::read_to_string(&file)? == format!("alpha\n{EDITED}\ngamma\n");
        Ok(up && seen && quit && saved)
    })();
    let _ = tmux(&["kill-server"]);
    let _ = std::fs::remove_file(&file);
    Ok((calls, bytes, result?))
}
