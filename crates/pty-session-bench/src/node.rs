//! The workloads through the Node.js package: a node process running the package's
//! `bench/worker.mjs`, which times each call inside node (`process.hrtime`), so the row
//! holds the package's cost (napi, the promise, the JSON results) and not this pipe's.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::facade::Complete;

/// The package's directory in this repository.
fn package_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../pty-session-node")
}

/// A node process with the package loaded, a `cat` and a python session open.
pub struct Node {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    /// Echo replies that held the echo and `cat`'s copy, by input wait.
    pub echo_complete: Complete,
    /// REPL replies that held `42` with the prompt pending, by input wait.
    pub repl_complete: Complete,
}

impl Node {
    /// Starts the worker; `Err` says why the package cannot run here (no node, the addon
    /// not built: `npm run build` in crates/pty-session-node).
    pub fn start(python: &str) -> Result<Node> {
        let dir = package_dir();
        let mut child = Command::new("node")
            .arg(dir.join("bench/worker.mjs"))
            .arg(python)
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start node")?;
        let input = child.stdin.take().context("node's stdin")?;
        let output = BufReader::new(child.stdout.take().context("node's stdout")?);
        let mut node = Node {
            child,
            input,
            output,
            echo_complete: Complete::default(),
            repl_complete: Complete::default(),
        };
        let first = node.line()?;
        if first != "ready" {
            bail!("the package did not start (is it built? npm run build): {first}");
        }
        Ok(node)
    }

    fn line(&mut self) -> Result<String> {
        let mut line = String::new();
        self.output.read_line(&mut line)?;
        if line.is_empty() {
            bail!("node exited (is the package built? npm run build in crates/pty-session-node)");
        }
        Ok(line.trim_end().to_owned())
    }

    /// One timed call: the worker's time and whether the reply was whole.
    fn call(&mut self, request: &str) -> Result<(Duration, bool)> {
        writeln!(self.input, "{request}")?;
        let line = self.line()?;
        let (ns, whole) = line
            .split_once(' ')
            .with_context(|| format!("the worker answered {line:?}"))?;
        let ns: u64 = ns
            .parse()
            .with_context(|| format!("the worker answered {line:?}"))?;
        Ok((Duration::from_nanos(ns), whole == "1"))
    }

    /// Sends `data` to `cat`.
    pub fn echo(&mut self, data: &str) -> Result<Duration> {
        let (elapsed, whole) = self.call(&format!("echo {data}"))?;
        self.echo_complete.count(whole, || {
            format!("sent {data:?}, not whole after {elapsed:?}")
        });
        Ok(elapsed)
    }

    /// Sends `6*7` to python.
    pub fn repl(&mut self) -> Result<Duration> {
        let (elapsed, whole) = self.call("repl")?;
        self.repl_complete
            .count(whole, || format!("not whole after {elapsed:?}"));
        Ok(elapsed)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        // `quit` ends the worker's loop; it shuts its service down and exits.
        let _ = writeln!(self.input, "quit");
        let _ = self.input.flush();
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
