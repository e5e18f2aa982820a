//! The physical limit: a PTY pair and a child on it, with nothing between the bytes and
//! the bench but blocking `read` and `write` on the master.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rustix::termios::Winsize;

use crate::stats::Samples;

/// A program on its own PTY, read and written directly. Dropping it kills and reaps the
/// program.
pub struct RawPty {
    master: File,
    child: Child,
    /// What arrived since the last [`clear`](Self::clear).
    pub received: Vec<u8>,
    chunk: Vec<u8>,
}

/// Opens a pair with the service's default window (120×40).
fn pair() -> Result<rustix_openpty::Pty> {
    let winsize = Winsize {
        ws_row: pty_session::limits::DEFAULT_ROWS,
        ws_col: pty_session::limits::DEFAULT_COLS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    rustix_openpty::openpty(None, Some(&winsize)).context("openpty")
}

/// `argv` with the slave on its stdio and the environment the service gives a session.
fn command(argv: &[&str], slave: &OwnedFd) -> Result<Command> {
    let mut command = Command::new(argv[0]);
    command
        .args(&argv[1..])
        .env("TERM", "xterm-256color")
        .stdin(Stdio::from(slave.try_clone()?))
        .stdout(Stdio::from(slave.try_clone()?))
        .stderr(Stdio::from(slave.try_clone()?));
    if ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .all(|key| std::env::var(key).unwrap_or_default().is_empty())
    {
        command.env("LANG", "C.UTF-8");
    }
    Ok(command)
}

impl RawPty {
    /// Starts `argv` as the leader of a new session with the PTY as its controlling
    /// terminal, as a terminal emulator would (and as the service's shim does).
    pub fn spawn(argv: &[&str]) -> Result<RawPty> {
        let pair = pair()?;
        let mut command = command(argv, &pair.user)?;
        // SAFETY: setsid and ioctl are async-signal-safe; the closure allocates nothing.
        // std has already put the slave on fds 0, 1 and 2 when it runs.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command
            .spawn()
            .with_context(|| format!("spawn {}", argv[0]))?;
        // The command's copies of the slave go with it, and ours here: from now on only
        // the program holds the slave, so its end of output is the master's EIO.
        drop(command);
        drop(pair.user);
        Ok(RawPty {
            master: File::from(pair.controller),
            child,
            received: Vec::new(),
            chunk: vec![0; 64 * 1024],
        })
    }

    /// Forgets what was received.
    pub fn clear(&mut self) {
        self.received.clear();
    }

    /// Writes all of `data` to the master.
    pub fn write(&mut self, data: &[u8]) -> Result<()> {
        self.master.write_all(data).context("write to the master")
    }

    /// Reads until `done(received)` holds.
    pub fn read_until(&mut self, done: impl Fn(&[u8]) -> bool) -> Result<()> {
        while !done(&self.received) {
            let n = self
                .master
                .read(&mut self.chunk)
                .context("read the master")?;
            if n == 0 {
                bail!("the program's terminal closed");
            }
            self.received.extend_from_slice(&self.chunk[..n]);
        }
        Ok(())
    }
}

impl Drop for RawPty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `cat` on a raw PTY: the echo round trip's limit.
pub struct Echo {
    pty: RawPty,
}

impl Echo {
    /// Starts `cat`.
    pub fn start() -> Result<Echo> {
        Ok(Echo {
            pty: RawPty::spawn(&["cat"])?,
        })
    }

    /// Writes `data` + Enter and reads until both the terminal's echo and `cat`'s copy
    /// of it arrived.
    pub fn round(&mut self, data: &str) -> Result<Duration> {
        let expected = format!("{data}\r\n{data}\r\n").into_bytes();
        self.pty.clear();
        let start = Instant::now();
        self.pty.write(format!("{data}\r").as_bytes())?;
        self.pty.read_until(|got| got.ends_with(&expected))?;
        Ok(start.elapsed())
    }
}

/// A python REPL on a raw PTY: the REPL answer's limit.
pub struct Repl {
    pty: RawPty,
}

impl Repl {
    /// Starts `python -q` and waits for its first prompt.
    pub fn start(python: &str) -> Result<Repl> {
        let mut pty = RawPty::spawn(&[python, "-q"])?;
        pty.read_until(|got| find(got, b">>> ").is_some())?;
        Ok(Repl { pty })
    }

    /// Types `6*7` + Enter; the time until `42` and the next prompt are on the PTY.
    pub fn round(&mut self) -> Result<Duration> {
        self.pty.clear();
        let start = Instant::now();
        self.pty.write(b"6*7\r")?;
        self.pty.read_until(|got| {
            find(got, b"42\r\n").is_some_and(|at| find(&got[at..], b">>> ").is_some())
        })?;
        Ok(start.elapsed())
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// A whole run of a program's output through a raw read loop.
pub struct Drained {
    /// Bytes read from the master.
    pub bytes: u64,
    /// From the spawn to the end of output.
    pub elapsed: Duration,
    /// CPU seconds the read loop used.
    pub cpu_secs: f64,
}

/// Runs `argv` on a PTY and reads the master with a 64 KiB buffer until the end.
pub fn read_loop(argv: &[&str]) -> Result<Drained> {
    let start = Instant::now();
    let cpu = crate::sys::thread_cpu_secs();
    let mut pty = RawPty::spawn(argv)?;
    let mut bytes = 0u64;
    loop {
        match pty.master.read(&mut pty.chunk) {
            Ok(0) => break,
            Ok(n) => bytes += n as u64,
            // Linux answers EIO once every holder of the slave closed it.
            Err(err) if err.raw_os_error() == Some(libc::EIO) => break,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err).context("read the master"),
        }
    }
    let elapsed = start.elapsed();
    let cpu_secs = crate::sys::thread_cpu_secs() - cpu;
    pty.child.wait().context("wait for the program")?;
    Ok(Drained {
        bytes,
        elapsed,
        cpu_secs,
    })
}

/// Runs `argv` (a flood, such as `yes`) on a raw PTY and reads the master with a 64 KiB
/// buffer, adding what it reads to `bytes`, until `stop` is set; then kills and reaps it.
pub fn flood(
    argv: &[&str],
    stop: &std::sync::atomic::AtomicBool,
    bytes: &std::sync::atomic::AtomicU64,
) -> Result<()> {
    use std::sync::atomic::Ordering::Relaxed;
    let mut pty = RawPty::spawn(argv)?;
    while !stop.load(Relaxed) {
        match pty.master.read(&mut pty.chunk) {
            Ok(0) => bail!("the flood {argv:?} ended"),
            Ok(n) => {
                bytes.fetch_add(n as u64, Relaxed);
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err).context("read the master"),
        }
    }
    Ok(())
}

/// `n` bare `openpty` + spawn of `cat` (no session, no controlling terminal, no
/// `pre_exec`: `posix_spawn`, like the service): the idle sessions' limit. Returns the
/// time of each and the pairs, which the caller drops to kill and reap them.
pub fn spawn_loop(n: usize) -> Result<(Samples, Vec<(OwnedFd, Child)>)> {
    let mut times = Samples::default();
    let mut held = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        let pair = pair()?;
        let mut command = command(&["cat"], &pair.user)?;
        let child = command.spawn().context("spawn cat")?;
        drop(command);
        drop(pair.user);
        times.push(start.elapsed());
        held.push((pair.controller, child));
    }
    Ok((times, held))
}

/// Kills and reaps what [`spawn_loop`] started.
pub fn reap(held: Vec<(OwnedFd, Child)>) {
    for (master, mut child) in held {
        let _ = child.kill();
        let _ = child.wait();
        drop(master);
    }
}
