//! The workloads on the facade (`PtyService`), in this process.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use pty_session::{
    CancellationToken, Config, OpenRequest, Owner, PtyService, SendRequest, SessionId, Settle,
    SettleReason, Status,
};

use crate::stats::Samples;

/// One open session of the facade.
pub struct Session {
    pub pty: PtyService,
    pub owner: Owner,
    pub id: SessionId,
    /// The pid of its command.
    pub pid: u32,
}

impl Session {
    /// Opens `request` on `pty` and checks it runs.
    pub async fn open(pty: &PtyService, request: OpenRequest) -> Result<Session> {
        let owner = Owner::new("bench");
        let opened = pty.open(&owner, request, &CancellationToken::new()).await?;
        ensure!(
            opened.status == Status::Running,
            "the session ended at once: {:?}",
            opened.initial_output.text
        );
        Ok(Session {
            pty: pty.clone(),
            owner,
            id: opened.session_id,
            pid: opened.pid,
        })
    }

    /// Sends `data` + Enter, with the default settle.
    pub async fn send(&self, data: &str) -> Result<pty_session::Sent> {
        Ok(self
            .pty
            .send(&self.owner, &self.id, SendRequest::new(data))
            .await?)
    }

    /// Closes it.
    pub async fn close(self) -> Result<()> {
        self.pty.close(&self.owner, &self.id).await?;
        Ok(())
    }
}

/// Counts replies that held their whole answer, and keeps the first few that did not.
#[derive(Debug, Default, Clone)]
pub struct Complete {
    pub good: usize,
    pub all: usize,
    pub partial: Vec<String>,
}

impl Complete {
    /// Counts one reply; `what` describes it when it was not whole.
    pub fn count(&mut self, whole: bool, what: impl FnOnce() -> String) {
        self.all += 1;
        if whole {
            self.good += 1;
        } else if self.partial.len() < 3 {
            self.partial.push(what());
        }
    }
}

impl std::fmt::Display for Complete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.good, self.all)
    }
}

/// A `cat` session for the echo round trip.
pub struct Echo {
    session: Session,
    pub complete: Complete,
}

impl Echo {
    pub async fn start(pty: &PtyService) -> Result<Echo> {
        Ok(Echo {
            session: Session::open(pty, OpenRequest::new("cat")).await?,
            complete: Complete::default(),
        })
    }

    /// Sends `data`; complete when the one reply holds the echo and `cat`'s copy.
    pub async fn round(&mut self, data: &str) -> Result<Duration> {
        let start = Instant::now();
        let sent = self.session.send(data).await?;
        let elapsed = start.elapsed();
        let whole = sent.delta.text == format!("{data}\n{data}\n")
            && sent.settled_by == SettleReason::Input;
        self.complete.count(whole, || {
            format!(
                "sent {data:?}, got {:?} pending {:?} settled by {} after {elapsed:?}",
                sent.delta.text, sent.pending, sent.settled_by
            )
        });
        Ok(elapsed)
    }

    pub async fn close(self) -> Result<()> {
        self.session.close().await
    }
}

/// A python REPL for the REPL answer.
pub struct Repl {
    session: Session,
    pub complete: Complete,
}

impl Repl {
    pub async fn start(pty: &PtyService, python: &str) -> Result<Repl> {
        let request =
            OpenRequest::new(format!("{python} -q")).timeout(Duration::from_millis(20_000));
        Ok(Repl {
            session: Session::open(pty, request).await?,
            complete: Complete::default(),
        })
    }

    /// Sends `6*7`; complete when the one reply holds `42` and the next prompt, settled
    /// by input wait.
    pub async fn round(&mut self) -> Result<Duration> {
        let start = Instant::now();
        let sent = self.session.send("6*7").await?;
        let elapsed = start.elapsed();
        let whole = sent.delta.text.ends_with("\n42\n")
            && sent.pending == ">>> "
            && sent.settled_by == SettleReason::Input;
        self.complete.count(whole, || {
            format!(
                "got {:?} pending {:?} settled by {} after {elapsed:?}",
                sent.delta.text, sent.pending, sent.settled_by
            )
        });
        Ok(elapsed)
    }

    pub async fn close(self) -> Result<()> {
        self.session.close().await
    }
}

/// How a bulk run was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// One open that settles at the exit, then one tail of the last line.
    Drained,
    /// Open without settling, then a tail of up to 100,000 lines every 5 ms until the end.
    Tailed,
}

/// What a bulk run delivered.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Bulk {
    pub secs: f64,
    /// `totalLines` at the end.
    pub total_lines: u64,
    /// Lines the tails returned, and lines they reported skipped.
    pub delivered: u64,
    pub skipped: u64,
    /// The last completed line.
    pub last_line: String,
    /// The screen's last row with text, read after the timing.
    pub screen_bottom: String,
}

/// Runs `command` in a session and reads it as `reading` says.
pub async fn bulk(pty: &PtyService, command: &str, reading: Reading) -> Result<Bulk> {
    let owner = Owner::new("bench");
    let settle = match reading {
        Reading::Drained => Settle::Auto,
        Reading::Tailed => Settle::None,
    };
    let request = OpenRequest::new(command)
        .settle(settle)
        .timeout(Duration::from_millis(pty_session::limits::MAX_TIMEOUT_MS))
        .lines(1);
    let start = Instant::now();
    let opened = pty.open(&owner, request, &CancellationToken::new()).await?;
    let id = opened.session_id;
    let mut delivered = opened.initial_output.lines as u64;
    let mut skipped = opened.initial_output.skipped;
    let mut last_line = opened.initial_output.text;
    let budget = match reading {
        Reading::Drained => 1,
        Reading::Tailed => pty_session::limits::MAX_LINES,
    };
    let total_lines = loop {
        let tail = pty.tail(&owner, &id, Some(budget)).await?;
        delivered += tail.output.lines as u64;
        skipped += tail.output.skipped;
        if !tail.output.text.is_empty() {
            last_line = tail.output.text;
        }
        // Exited and nothing left unread: the end. (Drained: the open settled at exit.)
        if tail.status != Status::Running && tail.output.lines == 0 {
            break tail.total_lines;
        }
        if reading == Reading::Tailed {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    let secs = start.elapsed().as_secs_f64();
    let screen = pty.screen(&owner, &id)?;
    let screen_bottom = screen
        .lines
        .iter()
        .rev()
        .find(|line| !line.is_empty())
        .cloned()
        .unwrap_or_default();
    pty.close(&owner, &id).await?;
    let last_line = last_line.lines().last().unwrap_or_default().to_owned();
    Ok(Bulk {
        secs,
        total_lines,
        delivered,
        skipped,
        last_line,
        screen_bottom,
    })
}

/// One close of a bash whose children escaped its process group.
pub struct Closed {
    pub elapsed: Duration,
    /// Pids recorded (bash and its escaped children), and how many still lived after the
    /// close returned.
    pub recorded: usize,
    pub survivors: usize,
}

/// Opens an interactive bash, starts a `setsid`, a `nohup`, a double-forked and a plain
/// background child (all ignoring SIGTERM and SIGHUP when `ignore_term`), each recording
/// its pid in `dir`, and closes the session.
pub async fn close_tree(pty: &PtyService, dir: &Path, ignore_term: bool) -> Result<Closed> {
    let pids = dir.join("pids");
    let _ = std::fs::remove_file(&pids);
    let request = OpenRequest::new("bash --norc --noprofile -i")
        .env("PS1", "$ ")
        .timeout(Duration::from_millis(20_000));
    let session = Session::open(pty, request).await?;
    let trap = if ignore_term {
        "trap '' TERM HUP; "
    } else {
        ""
    };
    let child = format!(
        "sh -c \"{trap}echo \\$\\$ >> {}; exec sleep 1000\"",
        pids.display()
    );
    let script = format!("setsid {child} & nohup {child} >/dev/null 2>&1 & ({child} &); {child} &");
    session.send(&script).await?;
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut recorded: Vec<u32> = loop {
        let text = std::fs::read_to_string(&pids).unwrap_or_default();
        let found: Vec<u32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
        if found.len() >= 4 {
            break found;
        }
        if Instant::now() > deadline {
            bail!("the children did not start: {text:?}");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    };
    recorded.push(session.pid);
    let start = Instant::now();
    session.close().await?;
    let elapsed = start.elapsed();
    let survivors: Vec<u32> = recorded
        .iter()
        .copied()
        .filter(|&pid| crate::sys::alive(pid))
        .collect();
    for &pid in &survivors {
        // Not ours to leave behind: the figure is reported, the process must not stay.
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(pid as i32).context("pid")?,
            rustix::process::Signal::KILL,
        );
    }
    Ok(Closed {
        elapsed,
        recorded: recorded.len(),
        survivors: survivors.len(),
    })
}

/// What holding many idle sessions cost.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Idle {
    pub sessions: usize,
    pub opens: Vec<f64>,
    pub rss_before_kib: u64,
    pub rss_kib: u64,
    pub hwm_kib: u64,
    pub threads: u64,
    /// One read of every `/proc/N/stat` with the sessions open: what input wait pays to
    /// find a new foreground group's members on a kernel without `/proc/…/children`.
    pub proc_scan_ms: f64,
    pub processes: usize,
    pub close_one: Vec<f64>,
    pub shutdown_secs: f64,
    /// The spawner's and its spare's PSS, in KiB.
    pub spawner_pss_kib: u64,
    /// The shims' PSS, in KiB, summed, and how many there were.
    pub shims_pss_kib: u64,
    pub shims: usize,
}

/// Opens `n` idle `cat` sessions with `settle` (with `screens`, each then asked for its
/// screen, which starts its emulator), then closes 20 of them one by one and shuts the rest
/// down.
pub async fn idle(n: usize, settle: Settle, screens: bool) -> Result<Idle> {
    crate::sys::raise_nofile();
    let mut config = Config::default();
    config.max_sessions = n + 1;
    config.max_sessions_per_owner = n + 1;
    let pty = PtyService::new(config);
    let owner = Owner::new("bench");
    // Warm up the runtime and the allocator with one session.
    Session::open(&pty, OpenRequest::new("cat"))
        .await?
        .close()
        .await?;
    let rss_before_kib = crate::sys::rss_kib();
    let mut opens = Samples::default();
    for _ in 0..n {
        let start = Instant::now();
        let opened = pty
            .open(
                &owner,
                OpenRequest::new("cat").settle(settle),
                &CancellationToken::new(),
            )
            .await
            .context("open")?;
        opens.push(start.elapsed());
        if screens {
            pty.screen(&owner, &opened.session_id)?;
        }
    }
    let rss_kib = crate::sys::rss_kib();
    let threads = crate::sys::status_field("Threads");
    // Our processes beside the service: the spawner with its spare, and a shim a session.
    let spawners = pty_session_testkit::children(std::process::id(), "pty-spawner");
    let spares = spawners
        .iter()
        .flat_map(|&pid| pty_session_testkit::children(pid, "pty-spawner"));
    let spawner_pss_kib = spawners
        .iter()
        .copied()
        .chain(spares)
        .map(crate::sys::pss_kib)
        .sum();
    let shims: Vec<i32> = spawners
        .iter()
        .flat_map(|&pid| pty_session_testkit::children(pid, "pty-shim"))
        .collect();
    let shims_pss_kib = shims.iter().copied().map(crate::sys::pss_kib).sum();
    let start = Instant::now();
    let processes = crate::sys::scan_proc_stats();
    let proc_scan_ms = start.elapsed().as_secs_f64() * 1000.0;
    let mut close_one = Samples::default();
    for id in pty.sessions(&owner).iter().take(20) {
        let start = Instant::now();
        pty.close(&owner, id).await?;
        close_one.push(start.elapsed());
    }
    let start = Instant::now();
    pty.shutdown().await;
    Ok(Idle {
        sessions: n,
        opens: opens.values(),
        rss_before_kib,
        rss_kib,
        hwm_kib: crate::sys::hwm_kib(),
        threads,
        proc_scan_ms,
        processes,
        close_one: close_one.values(),
        shutdown_secs: start.elapsed().as_secs_f64(),
        spawner_pss_kib,
        shims_pss_kib,
        shims: shims.len(),
    })
}
