//! A peer tool for comparison: tmux, driven the way agents drive it (`send-keys`, then
//! `capture-pane` until the answer shows), on a private server socket.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

/// A tmux server of the bench's own with one window running a program.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `command` in a detached 120×40 session.
    pub fn start(command: &str) -> Result<Tmux> {
        let tmux = Tmux {
            socket: format!("pty-session-bench-{}", std::process::id()),
        };
        tmux.run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "bench",
            "-x",
            "120",
            "-y",
            "40",
            command,
        ])?;
        Ok(tmux)
    }

    fn run(&self, args: &[&str]) -> Result<Output> {
        let output = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .context("run tmux")?;
        ensure!(
            output.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        Ok(output)
    }

    /// The visible screen, trailing blank lines dropped.
    fn screen(&self) -> Result<Vec<String>> {
        let output = self.run(&["capture-pane", "-p", "-t", "bench"])?;
        let text = String::from_utf8_lossy(&output.stdout);
        let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_owned()).collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        Ok(lines)
    }

    /// Waits until the screen satisfies `ready` (a program starting up).
    pub fn wait(&self, ready: impl Fn(&[String]) -> bool) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !ready(&self.screen()?) {
            if Instant::now() > deadline {
                bail!("tmux: the screen never got ready: {:?}", self.screen()?);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }

    /// Types `data` + Enter, then captures the pane back to back until `done` holds.
    pub fn round(&self, data: &str, done: impl Fn(&[String]) -> bool) -> Result<Duration> {
        let start = Instant::now();
        // One tmux client for both, as a script would type a line.
        self.run(&[
            "send-keys",
            "-t",
            "bench",
            "-l",
            data,
            ";",
            "send-keys",
            "-t",
            "bench",
            "Enter",
        ])?;
        loop {
            if done(&self.screen()?) {
                return Ok(start.elapsed());
            }
            if start.elapsed() > Duration::from_secs(20) {
                bail!("tmux: no answer to {data:?}: {:?}", self.screen()?);
            }
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// Whether the screen ends with `lines`.
pub fn ends_with(screen: &[String], lines: &[&str]) -> bool {
    screen.len() >= lines.len()
        && screen[screen.len() - lines.len()..]
            .iter()
            .zip(lines)
            .all(|(got, want)| got == want)
}
