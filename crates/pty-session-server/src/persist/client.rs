//! The clients of the background server: `mcp --persist` (which starts the server if
//! none runs, then relays MCP lines), `ls`, `attach` and `stop`.

use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use tokio::io::AsyncReadExt as _;
use tokio::net::UnixStream;

use crate::ownership;
use crate::people::listing::Listing;
use crate::persist::protocol::{ACK, Hello, LOCK, LOG, SOCKET, read_line, say_hello, socket_dir};

/// How long a client waits for a server it started to listen.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a client waits for the [`ACK`] of a server that took its connection.
const ACK_TIMEOUT: Duration = Duration::from_secs(30);
/// The default owner: the canonical working directory.
pub fn default_owner() -> anyhow::Result<String> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let cwd = cwd.canonicalize().unwrap_or(cwd);
    Ok(cwd.to_string_lossy().into_owned())
}

/// Connects to the running server, or `None` if none listens. The process that listens
/// must run as this user ([`ownership::peer_of_this_user`]), else nothing is said to it.
async fn connect(dir: &Path) -> anyhow::Result<Option<UnixStream>> {
    match UnixStream::connect(dir.join(SOCKET)).await {
        Ok(stream) => match ownership::peer_of_this_user(&stream) {
            Ok(_) => Ok(Some(stream)),
            Err(stranger) => bail!(
                "refusing the background server's socket {}: {stranger}; it is not your \
                 `pty-session mcp --persist` server",
                dir.join(SOCKET).display()
            ),
        },
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            Ok(None)
        }
        Err(err) => {
            Err(err).with_context(|| format!("cannot connect to {}", dir.join(SOCKET).display()))
        }
    }
}

/// Connects to the running server, starting one (`pty-session persist-server` with
/// `server_args`) if none listens. A server it started that exits at once without
/// listening found another one's lock: that one was on its way out (its socket gone, its
/// process not yet), so another is started until one listens.
async fn connect_or_start(dir: &Path, server_args: &[String]) -> anyhow::Result<UnixStream> {
    if let Some(stream) = connect(dir).await? {
        return Ok(stream);
    }
    let started = Instant::now();
    let mut server = start(dir, server_args)?;
    loop {
        if let Some(stream) = connect(dir).await? {
            // The process started is gone by now or soon: the server is its child's.
            return Ok(stream);
        }
        if let Some(status) = server.try_wait()? {
            if !status.success() {
                bail!(
                    "the background server failed ({status}); see {}",
                    dir.join(LOG).display()
                );
            }
            // It found the lock held: by a server starting (it listens soon) or exiting
            // (it lets go soon); once nobody holds it, another is needed.
            if lock_is_free(dir)? {
                tracing::info!(
                    "the background server that held the lock has exited; starting another"
                );
                server = start(dir, server_args)?;
            } else if let Some((pid, command)) = lock_holder(dir)
                && never_serves(&command)
            {
                // No server of ours will ever listen while this holds the lock.
                bail!(
                    "process {pid} ({command}) holds {}, which only the background server \
                     takes: end that process, then try again",
                    dir.join(LOCK).display()
                );
            }
        }
        if started.elapsed() > START_TIMEOUT {
            let holder = lock_holder(dir).map_or_else(String::new, |(pid, command)| {
                format!(
                    " (process {pid}, {command}, holds {})",
                    dir.join(LOCK).display()
                )
            });
            bail!(
                "the background server did not listen within {START_TIMEOUT:?}{holder}; see {}",
                dir.join(LOG).display()
            );
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether no server holds the lock: none runs, nor is starting or exiting.
fn lock_is_free(dir: &Path) -> anyhow::Result<bool> {
    let lock = match std::fs::File::open(dir.join(LOCK)) {
        Ok(lock) => lock,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(err) => {
            return Err(err).with_context(|| format!("cannot open {}", dir.join(LOCK).display()));
        }
    };
    // Taken for a moment and let go with the file.
    match rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(err) => Err(err).context("cannot probe the background server's lock"),
    }
}

/// The process that holds the lock file in `dir` (from `/proc/locks`), with its command
/// line as people may be shown it; `None` when none does or it cannot be told.
fn lock_holder(dir: &Path) -> Option<(u32, String)> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(dir.join(LOCK)).ok()?;
    let device = format!(
        "{:02x}:{:02x}:{}",
        rustix::fs::major(meta.dev()),
        rustix::fs::minor(meta.dev()),
        meta.ino()
    );
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let pid: u32 = locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields.get(1) == Some(&"FLOCK") && fields.get(5) == Some(&device.as_str()))
            .then(|| fields.get(4)?.parse().ok())
            .flatten()
    })?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = cmdline
        .split(|&b| b == 0)
        .filter(|word| !word.is_empty())
        .map(|word| String::from_utf8_lossy(word).into_owned())
        .collect();
    Some((
        pid,
        crate::people::shown::shown(&words.join(" ")).into_owned(),
    ))
}

/// Whether the process whose command line is `command` holds the lock and will never
/// listen: it is not a background server. An empty command line is not such a process:
/// a process on its way out has let go of its memory, its command line with it, before
/// it lets go of its files, so a server that is exiting reads as one for a moment.
fn never_serves(command: &str) -> bool {
    !command.is_empty() && !command.contains("persist-server")
}

/// Starts `pty-session persist-server` with `server_args`, logging beside the socket.
fn start(dir: &Path, server_args: &[String]) -> anyhow::Result<tokio::process::Child> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(dir.join(LOG))
        .with_context(|| format!("cannot open {}", dir.join(LOG).display()))?;
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let mut command = tokio::process::Command::new(exe);
    command
        .arg("persist-server")
        .args(server_args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log);
    // A session of its own: the client's terminal and its signals are not the server's.
    // SAFETY: setsid is async-signal-safe and touches no memory of this process.
    unsafe {
        command.pre_exec(|| rustix::process::setsid().map(drop).map_err(Into::into));
    }
    command
        .spawn()
        .context("cannot start the background server")
}

/// How many times a client tries a new connection when a server takes one and goes away
/// without serving it.
const ATTEMPTS: usize = 5;

/// A connection to the background server (started if need be) that serves `owner`: its
/// [`ACK`] read. A connection closed before the ack came from a server on its way out:
/// another one is made, to a new server.
pub(crate) async fn mcp_connection(
    dir: &Path,
    server_args: &[String],
    hello: &Hello,
) -> anyhow::Result<UnixStream> {
    let mut attempt = 1;
    loop {
        let mut stream = connect_or_start(dir, server_args).await?;
        say_hello(&mut stream, hello).await?;
        let ack = tokio::time::timeout(ACK_TIMEOUT, read_line(&mut stream))
            .await
            .map_err(|_| {
                anyhow!(
                    "the background server did not answer within {ACK_TIMEOUT:?}; if it is of \
                     an older pty-session, `pty-session stop` stops it"
                )
            })?;
        match ack {
            Ok(line) if line == ACK.as_bytes() => return Ok(stream),
            Ok(line) => bail!(
                "the background server answered {:?}; if it is of another pty-session, \
                 `pty-session stop` stops it",
                String::from_utf8_lossy(&line)
            ),
            Err(err) if attempt < ATTEMPTS => {
                tracing::info!(
                    "the background server went away before serving this client ({err:#}); again"
                );
                attempt += 1;
            }
            Err(err) => return Err(err).context("the background server closed every connection"),
        }
    }
}

/// A connection to the running server, `hello` said; `None` when no server runs. The
/// directory must pass [`ownership::check_dir`] and the server run as this user, as for
/// `mcp --persist`, before anything is said (`attach` would show its prompts and send it
/// a person's keys).
pub(crate) async fn open(hello: &Hello) -> anyhow::Result<Option<UnixStream>> {
    let dir = socket_dir()?;
    match std::fs::symlink_metadata(&dir) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        _ => ownership::check_dir(&dir).context("refusing the background server's directory")?,
    }
    let Some(mut stream) = connect(&dir).await? else {
        return Ok(None);
    };
    say_hello(&mut stream, hello).await?;
    Ok(Some(stream))
}

/// Sends `hello` (`ls` or `stop`) to a running server and returns its answer; `None`
/// when no server runs.
async fn ask(hello: &Hello) -> anyhow::Result<Option<String>> {
    let Some(mut stream) = open(hello).await? else {
        return Ok(None);
    };
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await?;
    Ok(Some(answer))
}

/// Every session of the background server, with its owner; `None` when no server runs.
pub async fn sessions() -> anyhow::Result<Option<Vec<Listing>>> {
    let Some(answer) = ask(&Hello::Ls).await? else {
        return Ok(None);
    };
    serde_json::from_str(&answer).map(Some).with_context(|| {
        format!(
            "the background server's list is not the expected JSON ({:?}); if it is of another \
             pty-session, `pty-session stop` stops it",
            answer.chars().take(80).collect::<String>()
        )
    })
}

/// `pty-session stop`: closes every session of the background server and waits until it
/// has exited.
pub async fn stop() -> anyhow::Result<()> {
    let dir = socket_dir()?;
    let Some(mut stream) = open(&Hello::Stop).await? else {
        println!("no background server runs");
        return Ok(());
    };
    // The server that answers; a new one may start (and take the lock) as soon as it is
    // gone, so its end is told by its process, not by the lock alone.
    let server = rustix::net::sockopt::socket_peercred(&stream)
        .ok()
        .map(|cred| cred.pid);
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await?;
    print!("{answer}");
    // The server holds the lock until its process is gone.
    let lock = std::fs::File::open(dir.join(LOCK))
        .with_context(|| format!("cannot open {}", dir.join(LOCK).display()))?;
    let started = Instant::now();
    loop {
        if server.is_some_and(|pid| !running(pid)) {
            return Ok(());
        }
        match rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::WOULDBLOCK) if started.elapsed() < START_TIMEOUT => {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(err) => bail!("the background server did not exit: {err}"),
        }
    }
}

/// Whether process `pid` still runs: it exists and is not a zombie (a server whose
/// parent, the client that started it, has not reaped it is gone all the same).
fn running(pid: rustix::process::Pid) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero()))
        .ok()
        .and_then(|stat| {
            let state = stat.get(stat.rfind(')')? + 2..)?.chars().next()?;
            Some(!matches!(state, 'Z' | 'X'))
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_of_the_lock_is_named() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(lock_holder(dir.path()), None, "no lock file");
        let lock = std::fs::File::create(dir.path().join(LOCK)).unwrap();
        assert_eq!(lock_holder(dir.path()), None, "a lock file nobody holds");
        assert!(lock_is_free(dir.path()).unwrap());
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
        let (pid, command) = lock_holder(dir.path()).expect("this process holds it");
        assert_eq!(pid, std::process::id());
        assert!(!command.is_empty());
        // Another open file description of the same file cannot take it.
        assert!(!lock_is_free(dir.path()).unwrap());
    }

    #[test]
    fn only_a_holder_that_is_no_server_is_refused() {
        assert!(never_serves("python3 -c import fcntl"));
        assert!(!never_serves(
            "/usr/bin/pty-session persist-server --listen x"
        ));
        // A server between letting go of its memory and of its files.
        assert!(!never_serves(""));
    }
}
