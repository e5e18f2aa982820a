//! Reading back: the cost of a re-read through the facade, and an agent's task on a long
//! failed build — find the first error line and the exit code — over MCP and with tmux,
//! counted in calls and bytes taken in.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use pty_session::{Config, OpenRequest, Owner, PtyService, TailRequest};
use serde_json::json;

use crate::report::Report;
use crate::stats::Samples;
use crate::{Plan, mcp};

/// The build: 3,000 lines, the first error at line 150, then a failure.
const BUILD: &str = "for i in $(seq 1 3000); do echo \"compiling unit $i\"; \
                     if [ $i = 150 ]; then echo \"error: unit 150: expected ';'\"; fi; \
                     if [ $i = 2400 ]; then echo \"error: unit 2400: undefined name\"; fi; \
                     done; echo 'build failed'; exit 2";
const FIRST_ERROR: &str = "error: unit 150: expected ';'";

pub async fn reads(plan: &Plan, report: &mut Report) -> Result<()> {
    reread(plan, report).await?;
    // The MCP client blocks on a runtime of its own, outside the bench's.
    tokio::task::block_in_place(|| agent_task(plan, report))?;
    Ok(())
}

/// 200 lines from the middle of a 10,000-line scrollback, through the facade.
async fn reread(plan: &Plan, report: &mut Report) -> Result<()> {
    let pty = PtyService::new(Config::default());
    let owner = Owner::new("bench");
    let opened = pty
        .open(
            &owner,
            OpenRequest::new("seq 1 10000").timeout(Duration::from_millis(60_000)),
            &pty_session::CancellationToken::new(),
        )
        .await?;
    let id = opened.session_id;
    let mut samples = Samples::default();
    let n = if plan.quick { 100 } else { 5000 };
    for _ in 0..n {
        let start = Instant::now();
        let tail = pty.tail(&owner, &id, TailRequest::new().from(5000)).await?;
        samples.push(start.elapsed());
        ensure!(tail.output.lines == 200 && tail.output.text.starts_with("5001\n"));
    }
    pty.shutdown().await;
    let p50 = samples.p50();
    report.row(
        "re-read, 200 lines from the middle of 10,000",
        &format!("facade, `tail` with `from` ({n} calls)"),
        samples.summary(),
        String::new(),
        "p50 ≤ 0.5 ms",
        Some(p50 <= 0.5),
    );
    Ok(())
}

/// "The build printed 3,000 lines and failed; find the first error line and the exit
/// code." Over MCP: open (the reply has the exit code and says where the earlier lines
/// are), then one re-read of them all. With tmux: a session, the build typed with its exit
/// code echoed, captures until it ends, then the whole history.
fn agent_task(plan: &Plan, report: &mut Report) -> Result<()> {
    let name = "agent task: a 3,000-line build failed; first error line and exit code";
    let server = mcp::Server::start(&plan.server)?;
    let (opened, mut bytes) =
        server.call_sized("pty_open", json!({"command": BUILD, "timeoutMs": 60_000}))?;
    let exit_code = opened["exitCode"].as_i64();
    let id = opened["sessionId"]
        .as_str()
        .context("sessionId")?
        .to_owned();
    let (page, more) = server.call_sized(
        "pty_tail",
        json!({"id": id, "from": 0, "lines": 100_000, "maxBytes": 1_048_576}),
    )?;
    bytes += more;
    let first = page["text"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .find(|line| line.starts_with("error"));
    server.stop()?;
    let found = first == Some(FIRST_ERROR) && exit_code == Some(2);
    report.row(
        name,
        "MCP stdio: pty_open, then pty_tail from 0 with the largest budgets",
        format!(
            "2 calls, {} KB in; first error and exit code found: {found}",
            bytes / 1000
        ),
        String::new(),
        "",
        None,
    );
    if plan.peers && crate::sys::on_path("tmux") {
        let (calls, bytes, found) = tmux_task()?;
        report.row(
            name,
            "peer: tmux send-keys, capture-pane until done, capture-pane -S -",
            format!(
                "{calls} calls, {} KB in; first error and exit code found: {found}",
                bytes / 1000
            ),
            String::new(),
            "",
            None,
        );
    }
    Ok(())
}

/// The task with tmux as an agent drives it: calls, bytes taken in, and whether the first
/// error and the exit code were found.
fn tmux_task() -> Result<(usize, usize, bool)> {
    let socket = format!("pty-session-bench-reads-{}", std::process::id());
    let script =
        std::env::temp_dir().join(format!("pty-session-bench-build-{}.sh", std::process::id()));
    std::fs::write(&script, BUILD)?;
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
            "bash --norc --noprofile",
        ])?;
        calls += 1;
        let typed = format!("sh {}; echo EXIT=$?", script.display());
        tmux(&["send-keys", "-t", "task", &typed, "Enter"])?;
        calls += 1;
        let deadline = Instant::now() + std::time::Duration::from_secs(60);
        loop {
            // An agent polls the screen until the build is over.
            std::thread::sleep(std::time::Duration::from_millis(500));
            let screen = tmux(&["capture-pane", "-p", "-t", "task"])?;
            calls += 1;
            bytes += screen.len();
            if screen.lines().any(|line| line.starts_with("EXIT=")) {
                break;
            }
            ensure!(Instant::now() < deadline, "the build never ended in tmux");
        }
        let history = tmux(&["capture-pane", "-p", "-S", "-", "-t", "task"])?;
        calls += 1;
        bytes += history.len();
        let first = history.lines().find(|line| line.starts_with("error"));
        let exit = history.lines().any(|line| line == "EXIT=2");
        Ok(first == Some(FIRST_ERROR) && exit)
    })();
    let _ = tmux(&["kill-server"]);
    let _ = std::fs::remove_file(&script);
    Ok((calls, bytes, result?))
}
