//! Starting a session: a PTY pair, a control socket, and the shim running the command.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::UnixStream;

use crate::Error;
use crate::shim::{MARKER, MARKER_VALUE, REPORT_LEN, Report, SHIM_ARG0};

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
}

/// A started session's parts, handed to [`Session::start`](crate::session::Session::start).
pub(crate) struct Spawned {
    pub(crate) master: OwnedFd,
    pub(crate) shim: tokio::process::Child,
    pub(crate) control: UnixStream,
    /// The command's pid (not the shim's).
    pub(crate) pid: u32,
}

/// How long a shim may take to report that the command started.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// Starts the shim on a new PTY and waits for its report that the command runs.
pub(crate) async fn spawn(options: SpawnOptions) -> Result<Spawned, Error> {
    let failed = |reason: String| Error::SpawnFailed {
        command: options.command.clone(),
        reason,
    };
    let pair = crate::pty::open(options.cols, options.rows, options.echo)
        .map_err(|err| failed(format!("no pseudo-terminal available: {err}")))?;
    let (ours, theirs) = std::os::unix::net::UnixStream::pair()
        .map_err(|err| failed(format!("no control socket: {err}")))?;
    ours.set_nonblocking(true)
        .map_err(|err| failed(err.to_string()))?;
    let slave_err = pair
        .slave
        .try_clone()
        .map_err(|err| failed(err.to_string()))?;

    // The current executable, by the kernel's own link: it works even if the file was
    // replaced on disk since the service started.
    let mut command = tokio::process::Command::new("/proc/self/exe");
    {
        use std::os::unix::process::CommandExt;
        command.as_std_mut().arg0(SHIM_ARG0);
    }
    command
        .arg(options.grace.as_millis().to_string())
        .args(&options.argv)
        .env_clear()
        .envs(&options.env)
        .env(MARKER, MARKER_VALUE)
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::from(pair.slave))
        .stderr(Stdio::from(slave_err));
    if let Some(cwd) = &options.cwd {
        command.current_dir(cwd);
    }
    // No pre_exec: std spawns with posix_spawn (vfork), which stays fast however much
    // memory the service holds. The shim does the terminal setup itself.
    let mut shim = command
        .spawn()
        .map_err(|err| failed(format!("cannot start the shim: {err}")))?;
    // `command` held the parent's copies of the slave and the shim's socket end; they must
    // be gone, or the end of output and the shim's death would never be seen.
    drop(command);

    let mut control = UnixStream::from_std(ours).map_err(|err| failed(err.to_string()))?;
    let mut record = [0u8; REPORT_LEN];
    let first = tokio::time::timeout(START_TIMEOUT, control.read_exact(&mut record)).await;
    let report = match first {
        Ok(Ok(_)) => Report::decode(record),
        Ok(Err(_)) => None,
        Err(_) => None,
    };
    match report {
        Some(Report::Started(pid)) => Ok(Spawned {
            master: pair.master,
            shim,
            control,
            pid,
        }),
        Some(Report::ExecFailed(errno)) => {
            let err = std::io::Error::from_raw_os_error(errno);
            let program = options.argv.first().map_or("", String::as_str);
            Err(failed(format!("cannot run {program:?}: {err}")))
        }
        _ => {
            // A shim that is stuck or broken is of no use; tokio reaps it once it is dead.
            let _ = shim.start_kill();
            Err(failed(
                "the shim did not report that the command started".to_owned(),
            ))
        }
    }
}
