//! Starting a session: a PTY pair, a control socket, and a shim forked by the spawner.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
use tokio::io::{AsyncReadExt, Interest};
use tokio::net::UnixStream;

use crate::Error;
use crate::sandbox::Policy;
use crate::shim::{REPORT_LEN, Report};
use crate::spawner::{self, Request};

/// Everything needed to start one session.
pub(crate) struct SpawnOptions {
    /// The program and its arguments, as the backend made them.
    pub(crate) argv: Vec<String>,
    /// The command as the caller gave it, for error messages.
    pub(crate) command: String,
    pub(crate) cwd: Option<PathBuf>,
    /// The child's whole environment.
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) cols: u16,
    pub(crate) rows: u16,
    pub(crate) echo: bool,
    /// How long the shim waits after SIGHUP/SIGTERM before SIGKILL.
    pub(crate) grace: Duration,
    /// The sandbox the command runs in, if any.
    pub(crate) sandbox: Option<Policy>,
}

/// A started session's parts, handed to [`Session::start`](crate::session::Session::start).
pub(crate) struct Spawned {
    pub(crate) master: OwnedFd,
    /// The service's end of the control socket: the shim's reports come in on it, its EOF
    /// means the shim is gone, and dropping it tells the shim to kill the tree.
    pub(crate) control: UnixStream,
    /// The command's pid (not the shim's).
    pub(crate) pid: u32,
    /// The shim's pid: the id of the session's process session, by which the service
    /// kills the tree itself if the shim does not ([`tree`](crate::tree)).
    pub(crate) shim: u32,
    /// How long the shim waits after SIGHUP/SIGTERM before SIGKILL.
    pub(crate) grace: Duration,
    /// The pid counter before the shim was started: every process of the session is
    /// newer.
    pub(crate) born_after: Option<crate::pids::PidMark>,
}

/// How long a shim may take to report that the command started.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// Starts a shim on a new PTY through `spawner` and waits for its report that the command
/// runs.
pub(crate) async fn spawn(
    spawner: &SpawnerHandle,
    options: SpawnOptions,
) -> Result<Spawned, Error> {
    let failed =
        |reason: String, source| Error::spawn_failed(options.command.clone(), reason, source);
    let request = request(&options).map_err(|reason| failed(reason, None))?;
    let pair = crate::pty::open(options.cols, options.rows, options.echo)
        .map_err(|err| failed("no pseudo-terminal available".into(), Some(err)))?;
    let (ours, theirs) = std::os::unix::net::UnixStream::pair()
        .map_err(|err| failed("no control socket".into(), Some(err)))?;
    ours.set_nonblocking(true)
        .map_err(|err| failed(String::new(), Some(err)))?;
    let mut control = UnixStream::from_std(ours).map_err(|err| failed(String::new(), Some(err)))?;
    let born_after = crate::pids::PidMark::now();
    // The spawner holds the only other copies of the slave and of the shim's socket end
    // once this returns: the end of output and the shim's death stay visible.
    spawner
        .send(request.encode(), [pair.slave, theirs.into()])
        .await
        .map_err(|err| failed("cannot start the shim".into(), Some(err)))?;

    let mut record = [0u8; REPORT_LEN];
    let first = tokio::time::timeout(START_TIMEOUT, control.read_exact(&mut record)).await;
    let report = match first {
        Ok(Ok(_)) => Report::decode(record),
        Ok(Err(_)) | Err(_) => None,
    };
    let cannot = |what: String, errno: i32| failed(what, Some(io::Error::from_raw_os_error(errno)));
    // Any failure drops `control`: a shim that is still there kills whatever it started.
    match report {
        Some(Report::Started { command, shim }) => Ok(Spawned {
            master: pair.master,
            control,
            pid: command,
            shim,
            grace: options.grace,
            born_after,
        }),
        Some(Report::ExecFailed(errno)) => {
            let program = options.argv.first().map_or("", String::as_str);
            Err(cannot(format!("cannot run {program:?}"), errno))
        }
        Some(Report::ChdirFailed(errno)) => {
            let cwd = options.cwd.as_deref().unwrap_or("".as_ref());
            Err(cannot(format!("cannot enter {}", cwd.display()), errno))
        }
        Some(Report::ForkFailed(errno)) => Err(cannot("cannot start the shim".into(), errno)),
        Some(Report::SandboxFailed(stage, errno)) => Err(Error::SandboxUnavailable {
            sandbox: options
                .sandbox
                .as_ref()
                .map_or("none", |policy| policy.mode.as_str())
                .to_owned(),
            missing: match errno {
                0 => stage.describe().to_owned(),
                errno => format!(
                    "{} ({})",
                    stage.describe(),
                    io::Error::from_raw_os_error(errno)
                ),
            },
        }),
        Some(Report::Exited(_) | Report::Finished) | None => Err(failed(
            "the shim did not report that the command started".to_owned(),
            None,
        )),
    }
}

/// The spawner's request for `options`. A session opened without `cwd` starts in the
/// service's working directory of the moment, as a child of the service would.
fn request(options: &SpawnOptions) -> Result<Request, String> {
    let string = |what: &str, value: Vec<u8>| {
        CString::new(value).map_err(|_| format!("{what} contains a NUL byte"))
    };
    let cwd = match &options.cwd {
        Some(cwd) => cwd.as_os_str().as_bytes().to_vec(),
        None => std::env::current_dir()
            .map(|dir| dir.into_os_string().into_encoded_bytes())
            .unwrap_or_default(),
    };
    let policy = options.sandbox.as_ref();
    let paths = |list: Option<&[std::path::PathBuf]>, what: &str| {
        (list.unwrap_or_default().iter())
            .map(|path| string(what, path.as_os_str().as_bytes().to_vec()))
            .collect::<Result<Vec<_>, _>>()
    };
    Ok(Request {
        grace_ms: u64::try_from(options.grace.as_millis()).unwrap_or(u64::MAX),
        sandbox: policy.map_or(0, |policy| crate::confine::mode_code(policy.mode)),
        network: policy.is_some_and(|policy| policy.network),
        writable: paths(
            policy.map(|policy| policy.writable.as_slice()),
            "a writable path",
        )?,
        hidden: paths(
            policy.map(|policy| policy.hidden.as_slice()),
            "a hidden path",
        )?,
        cwd: string("the working directory", cwd)?,
        argv: options
            .argv
            .iter()
            .map(|arg| string("an argument", arg.clone().into_bytes()))
            .collect::<Result<_, _>>()?,
        env: options
            .env
            .iter()
            .map(|(name, value)| string("the environment", format!("{name}={value}").into()))
            .collect::<Result<_, _>>()?,
    })
}

/// The service's handle on its spawner process, started at the first open and again if
/// it ever dies.
pub(crate) struct SpawnerHandle {
    process: Arc<tokio::sync::Mutex<Option<Process>>>,
    /// The executable started as the spawner; `None` is the current one.
    executable: Option<Arc<PathBuf>>,
}

struct Process {
    socket: UnixStream,
    /// Kept so that tokio reaps the spawner once it exits (its socket closed with us).
    _child: tokio::process::Child,
}

impl SpawnerHandle {
    /// A handle that starts `executable` (`None`: the current executable) when needed.
    pub(crate) fn new(executable: Option<PathBuf>) -> SpawnerHandle {
        SpawnerHandle {
            process: Arc::default(),
            executable: executable.map(Arc::new),
        }
    }

    /// Sends one request with its descriptors, starting the spawner if there is none or
    /// the one there was is gone.
    async fn send(&self, message: Vec<u8>, fds: [OwnedFd; 2]) -> io::Result<()> {
        let process = self.process.clone();
        let executable = self.executable.clone();
        // A task of its own, so that a cancelled open never leaves half a request in the
        // socket: the next request would be read from the middle of this one.
        let sent = tokio::spawn(async move {
            let mut process = process.lock().await;
            let mut retried = false;
            loop {
                if process.is_none() {
                    *process = Some(Process::start(executable.as_deref())?);
                }
                let Some(running) = process.as_mut() else {
                    unreachable!("started above")
                };
                match running.send(&message, &fds).await {
                    Ok(()) => return Ok(()),
                    // It died (or was started on a runtime that is gone): a new one.
                    Err(_) if !retried => {
                        *process = None;
                        retried = true;
                    }
                    Err(err) => return Err(err),
                }
            }
        });
        sent.await.map_err(io::Error::other)?
    }
}

impl Process {
    fn start(executable: Option<&PathBuf>) -> io::Result<Process> {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        ours.set_nonblocking(true)?;
        // By default the current executable, by the kernel's own link: it works even if the
        // file was replaced on disk since the service started.
        let program = executable.map_or(Path::new("/proc/self/exe"), PathBuf::as_path);
        let mut command = tokio::process::Command::new(program);
        {
            use std::os::unix::process::CommandExt;
            command.as_std_mut().arg0(spawner::ARG0);
        }
        if let Some(original) = crate::nofile::original() {
            command.env(crate::nofile::ORIGINAL_VAR, original.to_string());
        }
        let child = command
            .env(spawner::MARKER, spawner::MARKER_VALUE)
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        Ok(Process {
            socket: UnixStream::from_std(ours)?,
            _child: child,
        })
    }

    /// Writes `message` whole, the descriptors riding on its first byte.
    async fn send(&mut self, message: &[u8], fds: &[OwnedFd; 2]) -> io::Result<()> {
        let mut sent = 0;
        while sent < message.len() {
            let n = self
                .socket
                .async_io(Interest::WRITABLE, || {
                    let borrowed = [fds[0].as_fd(), fds[1].as_fd()];
                    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
                    let mut ancillary = SendAncillaryBuffer::new(&mut space);
                    if sent == 0 {
                        ancillary.push(SendAncillaryMessage::ScmRights(&borrowed));
                    }
                    rustix::net::sendmsg(
                        &self.socket,
                        &[IoSlice::new(&message[sent..])],
                        &mut ancillary,
                        SendFlags::NOSIGNAL,
                    )
                    .map_err(io::Error::from)
                })
                .await?;
            sent += n;
        }
        Ok(())
    }
}
