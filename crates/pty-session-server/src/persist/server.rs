//! The background server of `mcp --persist` (`pty-session persist-server`): one per
//! user, holding the sessions of every owner that connected, until it is stopped or has
//! been empty long enough.

use std::collections::BTreeSet;
use std::os::unix::fs::OpenOptionsExt as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use pty_session::{Owner, PtyService};
use tokio::io::AsyncWriteExt as _;
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
use crate::persist::protocol::{
    ACK, BadHello, HELLO_TIMEOUT, Hello, LOCK, SOCKET, read_hello, socket_dir,
};

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
    /// Every owner that connected, as of now.
    fn named(&self) -> BTreeSet<String> {
        self.named
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn session_count(&self) -> usize {
        self.named()
            .iter()
            .map(|owner| self.service.sessions(&Owner::new(owner.as_str())).len())
            .sum()
    }

    fn listing(&self) -> Vec<Listing> {
        let mut sessions: Vec<Listing> = self
            .named()
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
        self.named()
            .iter()
            .map(|owner| Owner::new(owner.as_str()))
            .find(|owner| self.service.sessions(owner).contains(id))
    }
}

/// Where the background server tells the process that started it how its start went (see
/// [`detach`]): one byte, then the pipe is closed.
static STARTED: std::sync::Mutex<Option<std::os::fd::OwnedFd>> = std::sync::Mutex::new(None);

/// The byte that says the server listens.
const LISTENING: u8 = b'L';
/// The byte that says another server holds the lock.
const ANOTHER_RUNS: u8 = b'A';

/// Tells the process that started this server how its start went, once.
fn report_start(byte: u8) {
    let fd = STARTED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(fd) = fd {
        let _ = rustix::io::write(&fd, &[byte]);
    }
}

/// Makes `pty-session persist-server` nobody's child: it forks, the child goes on to be the
/// server, and this process waits until the server listens (or finds another holding the
/// lock, or fails), then exits with what to tell its parent. The client that started it
/// reaps that exit at once, so the server is reparented to init (or the nearest
/// subreaper) and belongs to no client's process tree: killing a host with all its
/// descendants, its process group or its session leaves it and its sessions running.
///
/// Returns `Some(code)` in the process that must exit with it, `None` in the server.
///
/// # Safety
/// No other thread may run: it forks.
pub unsafe fn detach() -> Option<std::process::ExitCode> {
    use std::process::ExitCode;
    let Ok((read, write)) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC) else {
        return None;
    };
    // SAFETY: the caller promises a single thread; the child goes on as a normal program.
    match unsafe { libc::fork() } {
        -1 => None,
        0 => {
            drop(read);
            *STARTED.lock().unwrap_or_else(PoisonError::into_inner) = Some(write);
            None
        }
        _ => {
            drop(write);
            let mut byte = [0u8];
            let told = rustix::io::read(&read, &mut byte).unwrap_or(0);
            Some(match (told, byte[0]) {
                (1, LISTENING | ANOTHER_RUNS) => ExitCode::SUCCESS,
                _ => ExitCode::FAILURE,
            })
        }
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
            report_start(ANOTHER_RUNS);
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
    report_start(LISTENING);
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
}
