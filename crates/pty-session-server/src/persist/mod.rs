//! Persistent sessions: `pty-session mcp --persist` relays MCP to a per-user background
//! server that holds the sessions, so that they outlive the client that opened them.
//!
//! The background server listens on a Unix socket in [`socket_dir`] (0700; the socket
//! 0600) and serves only peers of its own user (`SO_PEERCRED`); its clients (`mcp
//! --persist`, `ls`, `attach`, `stop`) likewise trust the directory and the server only
//! by [`crate::ownership`]'s rule, before they say anything. It serves none more confined
//! than itself, such as a process of a sandboxed session ([`crate::persist::peer`]: by the
//! peer's own `no_new_privs`, seccomp and namespaces). Each connection starts
//! with one JSON line, a [`Hello`]: `mcp` (the server answers [`ACK`], then MCP lines go
//! both ways, as over stdio, for the named owner), `ls`, `attach` (a person's terminal,
//! [`crate::persist::view`]) or `stop`. A client that finds no server starts one; the
//! server holds an exclusive lock on a file beside the socket while it runs, so of two
//! started at once one serves and the other exits, and a socket left by a dead server is
//! replaced. A server on its way out (idle, or stopped) may still take a connection it
//! never serves, or hold its lock a moment after its socket is gone: a client that gets
//! no [`ACK`], or whose server exits without listening, starts a new one and goes on.
//! The server closes an owner's sessions after `persistIdleSecs` without a call and
//! exits `persistExitSecs` after its last session and client are gone. If it dies, its
//! sessions die with it (the shims' rule).

pub(crate) mod peer;
pub(crate) mod view;

use std::collections::BTreeSet;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use pty_session::{Owner, PtyService};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{UnixListener, UnixStream};
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::PersistSettings;
use crate::http::refusal::{self, Cause};
use crate::mcp::owner::Owners;
use crate::mcp::tools::PtyTools;
use crate::ownership;
use crate::people::listing::Listing;
use crate::people::shown::shown;
use crate::persist::peer::Refused;

/// The socket's name in [`socket_dir`].
const SOCKET: &str = "persist.sock";
/// The lock file the running server holds.
const LOCK: &str = "persist.lock";
/// Where the background server logs.
const LOG: &str = "persist.log";
/// The longest first line of a connection.
const MAX_HELLO: usize = 64 * 1024;
/// How long a new connection has to say what it wants.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client waits for a server it started to listen.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a client waits for the [`ACK`] of a server that took its connection.
const ACK_TIMEOUT: Duration = Duration::from_secs(30);
/// The server's answer to an `mcp` first line: from here on it serves the connection.
pub const ACK: &str = "{\"ok\":true}";

/// The first line of a connection: what the client wants.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum Hello {
    /// MCP lines follow, for `owner`; sessions opened without a `cwd` start in `cwd`.
    Mcp { owner: String, cwd: Option<String> },
    /// The sessions of every owner, as a JSON array of [`Listing`].
    Ls,
    /// A person's terminal on session `id`: WebSocket frames follow
    /// ([`crate::persist::view`]).
    Attach { id: String },
    /// Close every session and exit.
    Stop,
}

/// The directory of the socket: this user's private directory of pty-session
/// ([`ownership::private_dir`]: `$XDG_RUNTIME_DIR/pty-session`, else
/// `~/.local/state/pty-session`).
pub fn socket_dir() -> anyhow::Result<PathBuf> {
    ownership::private_dir()
}

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
            // Dropped, tokio reaps the server if it exits while this client runs.
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
            }
        }
        if started.elapsed() > START_TIMEOUT {
            bail!(
                "the background server did not listen within {START_TIMEOUT:?}; see {}",
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

/// Writes `hello` as the connection's first line.
async fn say_hello(stream: &mut UnixStream, hello: &Hello) -> anyhow::Result<()> {
    let mut line = serde_json::to_string(hello)?;
    line.push('\n');
    stream.write_all(line.as_bytes()).await?;
    Ok(())
}

/// How many times a client tries a new connection when a server takes one and goes away
/// without serving it.
const ATTEMPTS: usize = 5;

/// A connection to the background server (started if need be) that serves `owner`: its
/// [`ACK`] read. A connection closed before the ack came from a server on its way out:
/// another one is made, to a new server.
async fn mcp_connection(
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

/// `pty-session mcp --persist`: relays stdin/stdout to the background server for `owner`,
/// starting it if needed, until either side ends. `server_args` configure a server it
/// starts.
pub async fn relay(owner: String, server_args: &[String]) -> anyhow::Result<()> {
    let dir = socket_dir()?;
    ownership::make_private_dir(&dir)?;
    let cwd = std::env::current_dir()
        .ok()
        .map(|cwd| cwd.to_string_lossy().into_owned());
    let stream = mcp_connection(&dir, server_args, &Hello::Mcp { owner, cwd }).await?;
    let (mut from_server, mut to_server) = stream.into_split();
    let (mut stdin, mut stdout) = rmcp::transport::stdio_pipes();
    let up = async {
        let copied = tokio::io::copy(&mut stdin, &mut to_server).await;
        // The server sees the client's end: it cancels its calls and keeps its sessions.
        let _ = to_server.shutdown().await;
        copied
    };
    let down = async {
        let copied = tokio::io::copy(&mut from_server, &mut stdout).await;
        let _ = stdout.flush().await;
        copied
    };
    let mut up = std::pin::pin!(up);
    let mut down = std::pin::pin!(down);
    tokio::select! {
        // The server went away (stopped, or died): nothing more to relay.
        _ = down.as_mut() => {}
        _ = up.as_mut() => {
            // Until the server has answered what it still answers.
            let _ = down.await;
        }
        signal = crate::stop_signal() => {
            tracing::info!(%signal, "stopping; the sessions stay with the background server");
        }
    }
    Ok(())
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

/// Where the background server's socket is, for messages.
pub fn socket_path() -> String {
    socket_dir().map_or_else(
        |_| SOCKET.to_owned(),
        |dir| dir.join(SOCKET).display().to_string(),
    )
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

/// When the background server has had no session and no client long enough to exit: a
/// pure function of the times it is shown.
#[derive(Debug)]
pub struct Linger {
    after: Duration,
    empty_since: Option<Instant>,
}

impl Linger {
    /// Exits `after` the server was last seen empty without a break.
    pub fn new(after: Duration) -> Linger {
        Linger {
            after,
            empty_since: None,
        }
    }

    /// Shows whether the server is `empty` at `now`; true once it has been for `after`.
    pub fn observe(&mut self, now: Instant, empty: bool) -> bool {
        if !empty {
            self.empty_since = None;
            return false;
        }
        let since = *self.empty_since.get_or_insert(now);
        now.duration_since(since) >= self.after
    }
}

/// The background server's state shared by its connections.
#[derive(Clone)]
struct Server {
    service: PtyService,
    owners: Owners,
    /// Every owner that connected: the only ones that can hold sessions.
    named: Arc<Mutex<BTreeSet<String>>>,
    clients: TaskTracker,
    stop: CancellationToken,
    max_line: usize,
}

impl Server {
    fn session_count(&self) -> usize {
        let named = self
            .named
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        named
            .iter()
            .map(|owner| self.service.sessions(&Owner::new(owner.as_str())).len())
            .sum()
    }

    fn listing(&self) -> Vec<Listing> {
        let named = self
            .named
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let mut sessions: Vec<Listing> = named
            .iter()
            .flat_map(|owner| {
                self.service
                    .list(&Owner::new(owner.as_str()))
                    .into_iter()
                    .map(|info| Listing::new(info, Some(owner)))
            })
            .collect();
        sessions.sort_by_key(|s| s.started_at_ms);
        sessions
    }

    /// The owner of session `id`, among those that connected.
    fn owner_of(&self, id: &pty_session::SessionId) -> Option<Owner> {
        let named = self
            .named
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        named
            .iter()
            .map(|owner| Owner::new(owner.as_str()))
            .find(|owner| self.service.sessions(owner).contains(id))
    }
}

/// The hidden `pty-session persist-server`: serves persistent sessions until stopped, or
/// until it has been empty for `settings.exit_after`. Exits at once, successfully, when
/// another server already runs.
pub async fn serve(
    service: PtyService,
    settings: PersistSettings,
    max_line: usize,
) -> anyhow::Result<()> {
    let dir = socket_dir()?;
    ownership::make_private_dir(&dir)?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(dir.join(LOCK))
        .with_context(|| format!("cannot open {}", dir.join(LOCK).display()))?;
    match rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => {
            tracing::info!("another background server runs; leaving it the socket");
            return Ok(());
        }
        Err(err) => return Err(err).context("cannot lock the background server's lock file"),
    }
    let socket = dir.join(SOCKET);
    // A socket left by a server that died: ours now (we hold the lock).
    let _ = std::fs::remove_file(&socket);
    let listener = {
        // Created 0600 rather than made so after binding.
        let old = rustix::process::umask(rustix::fs::Mode::from_bits_truncate(0o177));
        let bound = UnixListener::bind(&socket);
        rustix::process::umask(old);
        bound.with_context(|| format!("cannot listen on {}", socket.display()))?
    };
    tracing::info!(socket = %socket.display(), pid = std::process::id(), "background server listening");
    let server = Server {
        service: service.clone(),
        owners: Owners::default(),
        named: Arc::default(),
        clients: TaskTracker::new(),
        stop: CancellationToken::new(),
        max_line,
    };
    tokio::spawn(server.owners.clone().dispose_idle(
        service.clone(),
        settings.idle,
        server.stop.clone(),
    ));
    let mut linger = Linger::new(settings.exit_after);
    let period = (settings.exit_after / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut signal = std::pin::pin!(crate::stop_signal());
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                match ownership::peer_of_this_user(&stream) {
                    Ok(cred) => {
                        let server = server.clone();
                        server.clients.clone().spawn(async move {
                            // A sandboxed session must not open unsandboxed ones here.
                            if let Err(refused) = crate::persist::peer::check(cred.pid()) {
                                let cause = match refused {
                                    Refused::Confined => Cause::SandboxedPeer,
                                    Refused::Unknown => Cause::UnknownPeer,
                                };
                                let pid = cred.pid().unwrap_or(0);
                                refusal::log(cause, None, &format_args!(" (pid {pid})"));
                                return;
                            }
                            if let Err(err) = server.client(stream).await {
                                log_client_error(&err);
                            }
                        });
                    }
                    Err(ownership::Stranger::OtherUser(uid)) => {
                        refusal::log(Cause::ForeignUser, None, &format_args!(" (uid {uid})"));
                    }
                    Err(ownership::Stranger::Unknown(err)) => {
                        refusal::log(Cause::UnknownUser, None, &format_args!(" ({err})"));
                    }
                }
            }
            _ = ticks.tick() => {
                let empty = server.clients.is_empty() && server.session_count() == 0;
                if linger.observe(Instant::now(), empty) {
                    tracing::info!("no session and no client for {:?}; exiting", settings.exit_after);
                    break;
                }
            }
            () = server.stop.cancelled() => {
                tracing::info!("asked to stop");
                break;
            }
            name = signal.as_mut() => {
                tracing::info!(signal = %name, "stopping");
                break;
            }
        }
    }
    server.stop.cancel();
    drop(listener);
    let _ = std::fs::remove_file(&socket);
    service.shutdown().await;
    // Answers `stop` once everything is closed; the lock goes with the process.
    server.clients.close();
    let _ = tokio::time::timeout(Duration::from_secs(1), server.clients.wait()).await;
    // The lock is released by the process's exit, not before: `stop` waits for it.
    std::mem::forget(lock);
    Ok(())
}

impl Server {
    async fn client(self, mut stream: UnixStream) -> anyhow::Result<()> {
        let hello = tokio::time::timeout(HELLO_TIMEOUT, read_hello(&mut stream))
            .await
            .map_err(|_| anyhow!("no first line within {HELLO_TIMEOUT:?}"))
            .and_then(|read| read)
            .context(BadHello)?;
        match hello {
            Hello::Mcp { owner, cwd } => {
                if owner.is_empty() {
                    bail!("an empty owner name");
                }
                self.named
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(owner.clone());
                // From here on this connection is served; one that a stopping server never
                // acknowledges goes on to a new server.
                if self.stop.is_cancelled() {
                    return Ok(());
                }
                stream.write_all(format!("{ACK}\n").as_bytes()).await?;
                let tools = PtyTools::named(
                    self.service.clone(),
                    Owner::new(owner.as_str()),
                    self.owners.clone(),
                    cwd,
                );
                let stopping = tools.stopping().clone();
                let (reader, writer) = stream.into_split();
                tokio::select! {
                    result = crate::stdio::serve_lines(tools, reader, writer, self.max_line) => result,
                    () = self.stop.cancelled() => {
                        stopping.stop();
                        Ok(())
                    }
                }
            }
            Hello::Ls => {
                let listing = serde_json::to_string(&self.listing())?;
                stream.write_all(listing.as_bytes()).await?;
                Ok(())
            }
            Hello::Attach { id } => {
                let id = pty_session::SessionId::new(id);
                let owner = self.owner_of(&id);
                // A person attached keeps the owner from being idle.
                let _active = owner.as_ref().map(|owner| self.owners.hold(owner));
                let socket = crate::persist::view::websocket(stream, Role::Server).await;
                crate::persist::view::stream(&self.service, owner, id, socket, &self.stop).await;
                Ok(())
            }
            Hello::Stop => {
                self.stop.cancel();
                // Answered once the server closed everything: wait for the service.
                self.service.shutdown().await;
                stream.write_all(b"stopped\n").await?;
                Ok(())
            }
        }
    }
}

/// Why a connection was closed before it was served: its first line was no request, or
/// it sent none in time.
#[derive(Debug)]
struct BadHello;

impl std::fmt::Display for BadHello {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no request")
    }
}

/// Logs why a client's connection ended in an error. A first line that is no request is a
/// refusal, logged as every refusal is (at most a line a second, however many
/// connections send one); the rest are the ordinary course of a client, at `info`.
fn log_client_error(err: &anyhow::Error) {
    if err.downcast_ref::<BadHello>().is_some() {
        let why: Vec<String> = err.chain().skip(1).map(ToString::to_string).collect();
        let why = shown(&why.join(": ")).into_owned();
        refusal::log(Cause::BadHello, None, &format_args!(": {why}"));
    } else {
        tracing::info!("a client: {err:#}");
    }
}

/// Reads the first line, byte by byte so that nothing after it is taken.
async fn read_hello<R: AsyncRead + Unpin>(reader: &mut R) -> anyhow::Result<Hello> {
    let line = read_line(reader)
        .await
        .context("the client left before its first line")?;
    serde_json::from_slice(&line).context("a first line that is not a known request")
}

/// Reads one line of at most [`MAX_HELLO`] bytes, byte by byte so that nothing after it
/// is taken, without its newline.
async fn read_line<R: AsyncRead + Unpin>(reader: &mut R) -> anyhow::Result<Vec<u8>> {
    let mut line = Vec::new();
    loop {
        let byte = reader.read_u8().await.context("the connection ended")?;
        if byte == b'\n' {
            return Ok(line);
        }
        if line.len() >= MAX_HELLO {
            bail!("a line longer than {MAX_HELLO} bytes");
        }
        line.push(byte);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_exits_only_after_being_empty_without_a_break() {
        let start = Instant::now();
        let at = |ms| start + Duration::from_millis(ms);
        let mut linger = Linger::new(Duration::from_millis(1000));
        assert!(!linger.observe(at(0), true));
        assert!(!linger.observe(at(999), true));
        assert!(!linger.observe(at(1200), false), "a client came back");
        assert!(!linger.observe(at(1300), true));
        assert!(!linger.observe(at(2299), true));
        assert!(linger.observe(at(2300), true));
    }

    #[test]
    fn hello_lines_name_their_op() {
        let line = serde_json::to_string(&Hello::Mcp {
            owner: "/src/app".into(),
            cwd: None,
        })
        .unwrap();
        assert_eq!(line, r#"{"op":"mcp","owner":"/src/app","cwd":null}"#);
        assert!(matches!(
            serde_json::from_str::<Hello>(r#"{"op":"stop"}"#),
            Ok(Hello::Stop)
        ));
        assert!(serde_json::from_str::<Hello>(r#"{"op":"rm"}"#).is_err());
    }
}
