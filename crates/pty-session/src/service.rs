//! [`PtyService`]: the facade. One core behind a cheap-to-clone handle: the registry of
//! sessions ([`crate::registry`], where every owner check happens) under one lock, and
//! the flows of open, send and tail around it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime};

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::record::{Header, Recorder};
use crate::registry::{Entry, Limits, Registry};
use crate::request::limits;
use crate::session::{Origin, Session};
use crate::settle::progress;
use crate::settle::{self, Baseline, Plan};
use crate::spawn::{self, SpawnOptions, SpawnerHandle};
use crate::tap::Tap;
use crate::term::scrollback::{Budget, Scrollback};
use crate::{
    Config, Error, OpenRequest, Opened, Output, Owner, Result, Screen, SendRequest, Sent,
    SessionId, SessionInfo, Status, Tail, TailRequest,
};

/// The service: every session of every owner. Cheap to clone; clones share one core.
///
/// Sessions live with the service, not with a call: an owner's later calls see all of its
/// open sessions until it closes them, [`dispose`](Self::dispose)s itself, or the service
/// [`shutdown`](Self::shutdown)s. Dropping the last handle tells every shim to kill its
/// tree, so nothing outlives the service either way.
#[derive(Clone)]
pub struct PtyService {
    shared: Arc<Shared>,
}

struct Shared {
    config: Config,
    /// Whether `/proc` tells input wait here.
    input_wait: bool,
    /// Short critical sections only: no `.await` while it is held.
    registry: Mutex<Registry<Arc<Session>>>,
    /// Forks the shims; its process goes when the service does.
    spawner: SpawnerHandle,
    /// The files of the shells' hooks, written at the first open that needs them, and
    /// again if they are gone (a cleaner of the temp directory). Short critical sections
    /// only: no `.await` while it is held.
    scripts: Mutex<Option<Arc<crate::shell::Scripts>>>,
}

/// The service's sessions are the registry's entries.
impl Entry for Arc<Session> {
    fn id(&self) -> &SessionId {
        &self.id
    }
    fn owner(&self) -> &Owner {
        &self.owner
    }
    fn seq(&self) -> u64 {
        self.origin.seq
    }
    fn command(&self) -> &str {
        &self.origin.command
    }
    fn running(&self) -> bool {
        Session::running(self)
    }
}

/// Holds an owner's place in the limits while its open is under way.
struct Reservation<'a> {
    shared: &'a Shared,
    owner: Owner,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.shared.registry().release(&self.owner);
    }
}

impl Shared {
    fn registry(&self) -> MutexGuard<'_, Registry<Arc<Session>>> {
        self.registry
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The one place where a caller's right to a session is checked.
    fn lookup(&self, owner: &Owner, id: &SessionId) -> Result<Arc<Session>> {
        self.registry().lookup(owner, id)
    }

    /// Takes a place for a new session of `owner`, or says which limit is reached.
    fn reserve(&self, owner: &Owner) -> Result<Reservation<'_>> {
        self.registry().reserve(owner)?;
        Ok(Reservation {
            shared: self,
            owner: owner.clone(),
        })
    }

    /// Closes the oldest exited sessions of `owner` past `max_exited_per_owner`, in the
    /// background: they are out of the registry (their ids unknown) when this returns.
    fn prune_exited(&self, owner: &Owner) {
        let doomed = self.registry().remove_excess_exited(owner);
        for session in doomed {
            tracing::debug!(session = %session.id, "closed: too many exited sessions");
            // The command has exited; what is left is reaping the shim and whatever
            // escaped the tree. If the runtime goes first, dropping the session still tells
            // the shim to kill.
            tokio::spawn(async move { session.kill_and_wait().await });
        }
    }

    /// Removes sessions from the registry (so their ids answer UNKNOWN_SESSION at once),
    /// then kills and reaps them all concurrently.
    async fn close_all(&self, keep: impl Fn(&Session) -> bool) {
        let doomed = self.registry().remove_all(|session| keep(session));
        // A bounded number at a time: when hundreds of process trees exit at once, the
        // kernel serializes their memory teardown on the shared executables' mapping locks
        // (measured: 1,000 concurrent closes took 8 to 200 s, one by one 1 ms each).
        let mut kills = JoinSet::new();
        for session in doomed {
            if kills.len() >= CONCURRENT_CLOSES {
                kills.join_next().await;
            }
            kills.spawn(async move { session.kill_and_wait().await });
        }
        while kills.join_next().await.is_some() {}
    }
}

/// How many sessions dispose and shutdown close at once.
const CONCURRENT_CLOSES: usize = 16;

impl Drop for Shared {
    fn drop(&mut self) {
        for session in self.registry().all() {
            session.request_kill();
        }
    }
}

impl PtyService {
    /// A service with `config`.
    ///
    /// Each session holds two descriptors, so the service raises this process's soft
    /// limit of open files (`RLIMIT_NOFILE`) as far as `config.max_sessions` needs, never
    /// beyond the hard limit and never lower; the commands it starts get the limit the
    /// process had.
    ///
    /// # Panics
    /// If [`Config::validate`] fails. Where the config comes from a user, use
    /// [`try_new`](Self::try_new), which says what is wrong instead.
    pub fn new(config: Config) -> PtyService {
        PtyService::try_new(config)
            .unwrap_or_else(|err| panic!("invalid pty-session config: {err}"))
    }

    /// A service with `config`, as [`new`](Self::new) makes it, or
    /// [`Error::InvalidArgument`] naming the field of `config` that is out of range.
    pub fn try_new(config: Config) -> Result<PtyService> {
        config.validate()?;
        crate::spawner::ensure_linked();
        crate::nofile::raise_for(config.max_sessions);
        let limits = Limits {
            per_owner: config.max_sessions_per_owner,
            total: config.max_sessions,
            exited_per_owner: config.max_exited_per_owner,
        };
        let spawner = SpawnerHandle::new(config.spawner.clone());
        Ok(PtyService {
            shared: Arc::new(Shared {
                config,
                input_wait: crate::procfs::input_wait_supported(),
                registry: Mutex::new(Registry::new(limits)),
                spawner,
                scripts: Mutex::new(None),
            }),
        })
    }

    /// The configuration the service runs with.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// Whether this machine tells input wait; without it, quiet settles in its place.
    pub fn input_wait_supported(&self) -> bool {
        self.shared.input_wait
    }

    /// Starts a session for `owner` and waits until its first output settled.
    ///
    /// If `cancel` fires before the settle ends, the new session is closed (the caller
    /// never learned its id) and the call fails with [`Error::Cancelled`]. Needs a tokio
    /// runtime with the I/O and time drivers.
    pub async fn open(
        &self,
        owner: &Owner,
        request: OpenRequest,
        cancel: &CancellationToken,
    ) -> Result<Opened> {
        let start = Instant::now();
        let config = &self.shared.config;
        let plan = Plan::new(&request.settle, start)?;
        let budget = self.budget(request.lines, request.max_bytes)?;
        let (options, key) = self.spawn_options(&request)?;
        let (cols, rows) = (options.cols, options.rows);
        let header_env: BTreeMap<String, String> = ["TERM", "SHELL"]
            .into_iter()
            .filter_map(|name| Some((name.to_owned(), options.env.get(name)?.clone())))
            .collect();
        let options_cwd = options.cwd.clone();
        let reservation = self.shared.reserve(owner)?;
        let spawned = tokio::select! {
            spawned = spawn::spawn(&self.shared.spawner, options) => spawned?,
            () = cancel.cancelled() => return Err(Error::Cancelled),
        };
        let (id, seq) = self.shared.registry().fresh_id();
        let origin = Origin {
            command: request.command.clone(),
            cwd: match &options_cwd {
                Some(cwd) => cwd.clone(),
                None => std::env::current_dir().unwrap_or_default(),
            },
            started_at: SystemTime::now(),
            seq,
            sandbox: request.sandbox.unwrap_or(config.sandbox),
        };
        let scrollback = Scrollback::new(config.scrollback_lines, config.scrollback_bytes);
        let header = Header {
            id: &id,
            command: &request.command,
            cols,
            rows,
            env: &header_env,
        };
        let tap = Tap::new(self.recorder(&header));
        let window = (cols, rows);
        let session = Session::start(
            id.clone(),
            owner.clone(),
            origin,
            spawned,
            window,
            scrollback,
            self.shared.input_wait,
            tap,
            config.colours,
            key,
        )
        .map_err(|err| {
            Error::spawn_failed(&request.command, "cannot watch the terminal", Some(err))
        })?;
        self.shared.registry().insert(session.clone());
        drop(reservation);
        // The owner as Rust quotes it: an agent may name it (a directory, `--owner`), and
        // quoted, its control and bidi characters cannot act on the terminal that shows the log.
        tracing::debug!(session = %id, owner = ?owner.as_str(), pid = session.pid, "opened");

        let base = Baseline::at_open(&session);
        let progress = request.settle.progress.as_ref();
        let settled = settle::settle(&session, &plan, base, session.probe(), Some(cancel));
        match progress::watch(&session, progress, start, settled).await {
            Ok(settled_by) => {
                let reply = reply(&session, budget);
                let commands = session.state().take_commands();
                self.shared.prune_exited(owner);
                Ok(Opened {
                    session_id: id,
                    pid: session.pid,
                    status: reply.status,
                    initial_output: reply.output,
                    pending: reply.pending,
                    settled_by,
                    alt_screen: reply.screen.is_some(),
                    screen: reply.screen,
                    sandbox: session.origin.sandbox,
                    commands,
                })
            }
            Err(err) => {
                self.shared.registry().remove(&id);
                session.kill_and_wait().await;
                Err(err)
            }
        }
    }

    /// Writes to a session and waits until the output settled.
    ///
    /// Sends to one session are served one at a time, each with its settle, so that each
    /// reply holds the answer to its own input.
    pub async fn send(&self, owner: &Owner, id: &SessionId, request: SendRequest) -> Result<Sent> {
        let followed = crate::timeline::enter("send");
        let sent = self.send_call(owner, id, request).await;
        if followed {
            crate::timeline::finish("send.done");
        } else {
            crate::timeline::mark("send.done");
        }
        sent
    }

    async fn send_call(&self, owner: &Owner, id: &SessionId, request: SendRequest) -> Result<Sent> {
        let start = Instant::now();
        // Arguments first: a bad one is the caller's error whatever the session.
        crate::request::check_key_names(request.keys.as_deref())?;
        let plan = Plan::new(&request.settle, start)?;
        let budget = self.budget(request.lines, request.max_bytes)?;
        crate::request::check_send(&request)?;
        let session = self.shared.lookup(owner, id)?;
        let never = CancellationToken::new();
        let cancel = request.cancel.as_ref().unwrap_or(&never);
        let _turn = tokio::select! {
            turn = session.write_lock.lock() => turn,
            () = cancel.cancelled() => return Err(Error::Cancelled),
        };
        if let Status::Exited(exit) = session.state().status() {
            return Err(Error::NotRunning {
                id: id.clone(),
                status: exit.to_string(),
            });
        }
        if request.cols.is_some() || request.rows.is_some() {
            session.resize(request.cols, request.rows)?;
        }
        let mut bytes = match &request.keys {
            Some(keys) => crate::term::keys::encode(keys, session.state().key_modes())
                .map_err(|problem| Error::invalid("keys", problem))?,
            None => Vec::with_capacity(request.data.len() + 1),
        };
        bytes.extend_from_slice(request.data.as_bytes());
        if request.submit {
            bytes.push(b'\r');
        }
        // The copy is overwritten however the call ends, like the request's own data.
        let bytes = zeroize::Zeroizing::new(bytes);
        let base = Baseline::before_send(&session, bytes.last() == Some(&b'\r'))
            .typed(&session, &plan, &bytes);
        crate::timeline::mark("locked");
        let mut probe = session.probe();
        session.mark_write(&mut probe);
        crate::timeline::mark("probed");
        let timeout = plan.deadline().duration_since(start);
        tokio::select! {
            written = session.write(&bytes, plan.deadline(), timeout) => written?,
            () = cancel.cancelled() => return Err(Error::Cancelled),
        };
        session.write_done();
        crate::timeline::mark("written");
        session.state().agent_input(&bytes);
        let progress = request.settle.progress.as_ref();
        let settled = settle::settle(&session, &plan, base, probe, Some(cancel));
        let settled_by = progress::watch(&session, progress, start, settled).await?;
        crate::timeline::mark("settled");
        let (reply, commands) = if request.read {
            let reply = reply(&session, budget);
            (reply, session.state().take_commands())
        } else {
            (look(&session), Vec::new())
        };
        Ok(Sent {
            delta: reply.output,
            read: request.read,
            status: reply.status,
            pending: reply.pending,
            settled_by,
            alt_screen: reply.screen.is_some(),
            screen: reply.screen,
            commands,
        })
    }

    /// Reads a session's output: the unread lines within the budgets, moving the cursor;
    /// or, with [`TailRequest::from`], a re-read that leaves the cursor where it is. With
    /// any settle option it first waits as a send does, without writing. `None` and
    /// `Some(lines)` are the plain read.
    pub async fn tail(
        &self,
        owner: &Owner,
        id: &SessionId,
        request: impl Into<TailRequest>,
    ) -> Result<Tail> {
        let start = Instant::now();
        let request = request.into();
        // Arguments first: a bad one is the caller's error whatever the session.
        let budget = self.budget(request.lines, request.max_bytes)?;
        let session = self.shared.lookup(owner, id)?;
        let settled_by = if request.settle.given {
            let plan = Plan::new(&request.settle, start)?;
            let base = Baseline::unread(&session);
            let never = CancellationToken::new();
            let cancel = request.cancel.as_ref().unwrap_or(&never);
            let settled = settle::settle(&session, &plan, base, session.probe(), Some(cancel));
            let progress = request.settle.progress.as_ref();
            Some(progress::watch(&session, progress, start, settled).await?)
        } else {
            None
        };
        let mut state = session.state();
        let (output, commands) = match request.from {
            Some(from) => (state.reread(from, budget), Vec::new()),
            None => (state.read(budget), state.take_commands()),
        };
        Ok(Tail {
            output,
            pending: state.pending(),
            status: state.status(),
            total_lines: state.line_end(),
            line_begin: state.line_begin(),
            alt_screen: state.in_alt_screen(),
            settled_by,
            commands,
        })
    }

    /// What the session's terminal window shows now: the visible rows, the cursor, the
    /// size, whether the alternate screen is on, and the status. Works for every session
    /// at any time, whether or not a full-screen program runs, and after it exited.
    pub fn screen(&self, owner: &Owner, id: &SessionId) -> Result<Screen> {
        let session = self.shared.lookup(owner, id)?;
        Ok(session.state().screen())
    }

    /// [`screen`](Self::screen), with the bytes that draw it on an empty terminal of its
    /// size, both taken at the same instant: every cell in its colours and attributes
    /// (bold, inverse, …), the cursor where the program left it, shown or hidden, and the
    /// program's key and mouse modes (the alternate screen first, when it is on). For a
    /// viewer that shows the window in colour rather than as text.
    pub fn screen_drawn(&self, owner: &Owner, id: &SessionId) -> Result<(Screen, Vec<u8>)> {
        let session = self.shared.lookup(owner, id)?;
        let mut state = session.state();
        let screen = state.screen();
        Ok((screen, state.screen_frame()))
    }

    /// Kills the session's process tree, waits until it is reaped and the output drained,
    /// and forgets the session. `Ok(false)` if it was already gone or never existed.
    pub async fn close(&self, owner: &Owner, id: &SessionId) -> Result<bool> {
        let Some(session) = self.shared.registry().remove_owned(owner, id)? else {
            return Ok(false);
        };
        session.kill_and_wait().await;
        tracing::debug!(session = %id, "closed");
        Ok(true)
    }

    /// Closes every session of `owner`.
    pub async fn dispose(&self, owner: &Owner) {
        self.shared
            .close_all(|session| session.owner != *owner)
            .await;
    }

    /// Closes every session of every owner.
    pub async fn shutdown(&self) {
        self.shared.close_all(|_| false).await;
    }

    /// Starts closing a session without waiting for it: for the `Drop` of a type that owns
    /// a session. It needs a tokio runtime on the current thread; without one it does
    /// nothing, and the owner's [`dispose`](PtyService::dispose) or the service's
    /// [`shutdown`](PtyService::shutdown) still kills the tree.
    pub fn close_in_background(&self, owner: &Owner, id: &SessionId) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (pty, owner, id) = (self.clone(), owner.clone(), id.clone());
            runtime.spawn(async move {
                let _ = pty.close(&owner, &id).await;
            });
        }
    }

    /// `owner`'s sessions, the oldest first: running ones and exited ones not yet closed.
    /// Past [`Config::max_exited_per_owner`] exited sessions, the oldest are closed first.
    pub fn list(&self, owner: &Owner) -> Vec<SessionInfo> {
        self.shared.prune_exited(owner);
        let sessions = self.shared.registry().owned(owner);
        sessions
            .iter()
            .map(|session| {
                let state = session.state();
                SessionInfo {
                    id: session.id.clone(),
                    command: session.origin.command.clone(),
                    pid: session.pid,
                    status: state.status(),
                    cwd: (state.shell.cwd.clone()).unwrap_or_else(|| session.origin.cwd.clone()),
                    last_exit_code: state.shell.last_status,
                    started_at: session.origin.started_at,
                    unread_lines: state.unread(),
                    pending: state.pending(),
                    alt_screen: state.in_alt_screen(),
                    sandbox: session.origin.sandbox,
                }
            })
            .collect()
    }

    /// The sandbox `owner`'s session `id` runs in.
    pub fn sandbox(&self, owner: &Owner, id: &SessionId) -> Result<crate::Sandbox> {
        Ok(self.session(owner, id)?.origin.sandbox)
    }

    /// The ids of `owner`'s open sessions, sorted.
    pub fn sessions(&self, owner: &Owner) -> Vec<SessionId> {
        self.shared.registry().owner_ids(owner)
    }

    /// `owner`'s session `id`, after the one owner check.
    pub(crate) fn session(&self, owner: &Owner, id: &SessionId) -> Result<Arc<Session>> {
        self.shared.lookup(owner, id)
    }

    /// Starts the recording of a new session, if the config asks for recordings. A
    /// recording that cannot be created is logged and skipped: the session still runs.
    fn recorder(&self, header: &Header<'_>) -> Option<Recorder> {
        let config = &self.shared.config;
        let dir = config.record_dir.as_ref()?;
        match Recorder::start(dir, header, config.record_max_bytes, config.record_input) {
            Ok((recorder, path)) => {
                tracing::debug!(session = %header.id, path = %path.display(), "recording");
                Some(recorder)
            }
            Err(err) => {
                tracing::warn!(session = %header.id, dir = %dir.display(), "cannot record the session: {err}");
                None
            }
        }
    }

    /// Checks an open request and turns it into spawn options, with the key of the
    /// shell's hooks when the command is a shell that gets them ([`crate::shell`]).
    fn spawn_options(&self, request: &OpenRequest) -> Result<(SpawnOptions, Option<String>)> {
        let config = &self.shared.config;
        crate::request::check_open(request)?;
        let backend = config.backends.get(&config.backend_type).ok_or_else(|| {
            Error::invalid(
                "backend_type",
                format!("{:?} is not a registered backend", config.backend_type),
            )
        })?;
        let mut argv = backend.argv(&request.command)?;
        let service_env: BTreeMap<String, String> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .filter(|(k, _)| k != crate::spawner::MARKER)
            .collect();
        let mut env = config.child_env(service_env, &request.env);
        let sandbox = self.policy(request)?;
        if sandbox.is_some() {
            // A sandbox's temp directory is its own `/tmp` (a tmpfs of the session's), set
            // by the service whatever the call's `env` says: a `TMPDIR` of the caller's
            // choosing once made any directory writable.
            env.insert("TMPDIR".to_owned(), crate::sandbox::TEMP_DIR.to_owned());
        }
        let hooks = self.hooks(request, &env, sandbox.is_some());
        let key = hooks.map(|hooks| {
            argv = hooks.argv;
            env.extend(hooks.env);
            hooks.key
        });
        Ok((
            SpawnOptions {
                argv,
                command: request.command.clone(),
                cwd: request.cwd.clone(),
                sandbox,
                env,
                cols: request.cols.unwrap_or(limits::DEFAULT_COLS),
                rows: request.rows.unwrap_or(limits::DEFAULT_ROWS),
                echo: request.echo,
                grace: config.close_grace,
            },
            key,
        ))
    }

    /// How to start `request`'s command with the shells' hooks, if it is a shell that
    /// gets them: integration on (the request's say, else the config's), one of the
    /// built-in backends (another backend's argv is its own business), and, in a sandbox,
    /// hooks' files the sandbox sees (not in the temp directory, which a sandbox has of
    /// its own).
    fn hooks(
        &self,
        request: &OpenRequest,
        env: &BTreeMap<String, String>,
        sandboxed: bool,
    ) -> Option<crate::shell::Hooks> {
        let config = &self.shared.config;
        let on = request
            .shell_integration
            .unwrap_or(config.shell_integration);
        if !on || !["shell", "exec"].contains(&config.backend_type.as_str()) {
            return None;
        }
        let scripts = {
            let mut scripts = (self.shared.scripts.lock()).unwrap_or_else(|p| p.into_inner());
            if !scripts.as_ref().is_some_and(|s| s.present()) {
                *scripts = crate::shell::Scripts::write()
                    .inspect_err(|err| {
                        tracing::warn!("shells go without hooks: cannot write their files: {err}")
                    })
                    .ok()
                    .map(Arc::new);
            }
            scripts.clone()?
        };
        if sandboxed && !scripts.seen_in_sandboxes() {
            return None;
        }
        crate::shell::hooks(&request.command, env, &scripts)
    }

    /// The sandbox policy of `request`, once the kernel is known to enforce it; `None`
    /// without a sandbox.
    fn policy(&self, request: &OpenRequest) -> Result<Option<crate::sandbox::Policy>> {
        let config = &self.shared.config;
        let mode = request.sandbox.unwrap_or(config.sandbox);
        if mode == crate::Sandbox::None {
            return Ok(None);
        }
        let network = config.sandbox_network;
        let abi = crate::sandbox::kernel_abi();
        let seccomp = crate::sandbox::kernel_seccomp();
        let namespaces = crate::sandbox::kernel_namespaces();
        if let Some(missing) = crate::sandbox::missing(mode, network, abi, seccomp, namespaces) {
            return Err(Error::SandboxUnavailable {
                sandbox: mode.as_str().to_owned(),
                missing,
            });
        }
        let cwd = match &request.cwd {
            Some(cwd) => cwd.clone(),
            None => std::env::current_dir().unwrap_or_default(),
        };
        // A session started inside a hidden directory would keep the real one as its
        // working directory (the new tree has no such place to enter): it would read
        // what is hidden by relative paths.
        let real = |path: &std::path::Path| std::fs::canonicalize(path).ok();
        if let Some(inside) = real(&cwd).and_then(|cwd| {
            (config.sandbox_hidden.iter())
                .find(|hidden| real(hidden).is_some_and(|hidden| cwd.starts_with(hidden)))
        }) {
            return Err(Error::invalid(
                "cwd",
                format!(
                    "{} is inside {}, which sandboxed sessions do not see (sandbox_hidden); \
                     give a working directory outside it",
                    cwd.display(),
                    inside.display()
                ),
            ));
        }
        let mut writable = Vec::new();
        if mode == crate::Sandbox::Workspace {
            writable.push(cwd);
            writable.extend(config.sandbox_writable.iter().cloned());
        }
        Ok(Some(crate::sandbox::Policy {
            mode,
            network,
            writable,
            hidden: config.sandbox_hidden.clone(),
        }))
    }

    /// A reply's budgets: the call's, checked, else the configured ones.
    fn budget(&self, lines: Option<u64>, bytes: Option<u64>) -> Result<Budget> {
        let config = &self.shared.config;
        let lines = crate::request::lines(lines)?;
        let bytes = crate::request::max_bytes(bytes)?;
        Ok(Budget {
            lines: lines.map_or(config.tail_lines, |n| n as usize),
            bytes: bytes.map_or(config.tail_bytes, |n| n as usize),
        })
    }
}

/// What a reply carries besides the settle.
struct Reply {
    output: Output,
    pending: String,
    status: Status,
    screen: Option<Screen>,
}

/// A reply without a read: the cursor stays, `output` is empty.
fn look(session: &Session) -> Reply {
    let mut state = session.state();
    Reply {
        output: Output::default(),
        pending: state.pending(),
        status: state.status(),
        screen: state.alt_screen(),
    }
}

/// Delivers the unread lines within the budget, with the pending line, the status and
/// the screen while the alternate screen is on.
fn reply(session: &Session, budget: Budget) -> Reply {
    let mut state = session.state();
    Reply {
        output: state.read(budget),
        pending: state.pending(),
        status: state.status(),
        screen: state.alt_screen(),
    }
}
