//! [`Ssh`]: one `ssh` client on a pty-session session, connected to a remote shell.
//!
//! Connecting reads ssh's terminal through the facade's `pending` line: the host-key
//! question and the password and passphrase prompts have no newline. Authentication is
//! over when ssh runs its `LocalCommand`, which prints a marker line; only then does the
//! driver type anything meant for the remote shell (typed earlier, it would be read as a
//! password or a host-key answer). It then turns the remote terminal's echo off, empties
//! the prompts and waits for a second marker: what came before it is the greeting (the
//! server's banner, the MOTD, warnings).
//!
//! Every wait is one facade call that ends on `until`, ssh's exit or the timeout. Input
//! wait is never used: ssh sleeps in `poll` on its socket as well as on the terminal, so
//! "ssh waits for input" says nothing about the remote side. Quiet settling is switched
//! off by a quiet period as long as the timeout.

use std::time::{Duration, Instant};

use pty_session::OwnedSession;
use pty_session::limits::MAX_TIMEOUT_MS;
use pty_session::{
    CancellationToken, ExitStatus, OpenRequest, Output, Owner, PtyService, SendRequest, Sent,
    SessionId, Settle, SettleReason, Status, Tail, TailRequest,
};

use crate::diagnosis::{self, Attempt, HOST_KEY_PROMPT, Prompt, SECRET_PROMPT};
use crate::frame::Frame;
use crate::{Error, HostKeyPolicy, HostKeyPrompt, Result, Secret, SecretPrompt, SshOptions};

/// One ssh connection with a remote shell, made by [`Ssh::connect`] on a session of the
/// caller's owner.
///
/// Calls take `&mut self`: one command at a time. Dropping an `Ssh` without
/// [`close`](Self::close) closes its session in the background.
pub struct Ssh {
    /// ssh's session, closed when the driver is dropped.
    session: OwnedSession,
    pid: u32,
    timeout: Duration,
    greeting: String,
    host_key: Option<HostKeyPrompt>,
    lines_lost: u64,
    /// The last lines that were not the driver's own, for the message of a disconnect
    /// (ssh's last words may come in the same reply as a command's output).
    last_lines: Vec<String>,
    /// The error every call returns once the connection ended.
    failure: Option<Error>,
}

/// What a command printed, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunOutput {
    /// Its output, standard output and standard error together as the terminal showed
    /// them, lines ending in `\n` (the last one only if the command printed it).
    pub output: String,
    /// Its exit status as the remote shell's `$?` gives it: 0 for success, 127 for a
    /// command not found, 128 + n for a command killed by signal n.
    pub exit_code: i32,
    /// Lines that fell out of the session's scrollback before the driver read them;
    /// normally 0. The driver reads as output comes, but one burst larger than the
    /// scrollback (the service's `Config::scrollback_lines`, 10,000 by default, and
    /// `scrollback_bytes`) loses its oldest lines: `output` then has holes. Give a service
    /// that runs long outputs a larger scrollback, or cut the output remotely (`| tail`).
    pub lines_lost: u64,
}

impl Ssh {
    /// Starts `ssh` for `owner`, answers the host-key question by `options`' policy and
    /// secret prompts by its callback, and waits until the remote shell is usable.
    ///
    /// The terminal's local echo is off, so that nothing typed — a password above all —
    /// shows up in the output. On failure the session is closed and the error says why,
    /// with ssh's own message.
    pub async fn connect(pty: &PtyService, owner: Owner, options: SshOptions) -> Result<Ssh> {
        let timeout = options.timeout.min(Duration::from_millis(MAX_TIMEOUT_MS));
        let deadline = Instant::now() + timeout;
        let frame = Frame::fresh();
        let shell = pty.config().backend_type == "shell";
        let ready = frame.ready();
        let until = format!("{ready}$|{HOST_KEY_PROMPT}|{SECRET_PROMPT}");
        let mut request = OpenRequest::new(options.command_line(shell, &frame.local_command()))
            .echo(false)
            .settle(Settle::Until)
            .timeout(left(deadline))
            .until(&until)
            .everything();
        for (name, value) in &options.env {
            request = request.env(name, value);
        }
        let opened = pty.open(&owner, request, &CancellationToken::new()).await?;
        let mut ssh = Ssh {
            session: OwnedSession::new(pty, owner, opened.session_id),
            pid: opened.pid,
            timeout,
            greeting: String::new(),
            host_key: None,
            lines_lost: 0,
            last_lines: Vec::new(),
            failure: None,
        };
        let mut connecting = Connecting {
            lines: Vec::new(),
            pending: opened.pending,
            status: opened.status,
            attempt: Attempt::default(),
            answered_at: None,
            secret_prompts: 0,
        };
        connecting.absorb(&opened.initial_output, &mut ssh.lines_lost);
        match ssh
            .authenticate(&mut connecting, &options, &ready, &until, deadline)
            .await
        {
            Ok(()) => {}
            Err(err) => {
                ssh.close_session().await;
                return Err(err);
            }
        }
        if let Err(err) = ssh.setup(&frame, &mut connecting, deadline).await {
            ssh.close_session().await;
            return Err(err);
        }
        Ok(ssh)
    }

    /// Answers ssh's questions until its `LocalCommand` says it has authenticated.
    async fn authenticate(
        &mut self,
        c: &mut Connecting,
        options: &SshOptions,
        ready: &str,
        until: &str,
        deadline: Instant,
    ) -> Result<()> {
        loop {
            if c.lines.iter().any(|line| line.ends_with(ready)) {
                return Ok(());
            }
            if let Status::Exited(exit) = c.status {
                return Err(diagnosis::failure(&c.lines, Some(exit), &c.attempt));
            }
            // A prompt is answered once: until its line completes (ssh writes a newline
            // after reading), the pending line still shows the answered one.
            let fresh = c.answered_at.is_none_or(|at| c.lines.len() > at);
            // The answer is either a word or a secret, which is never copied by the
            // driver: it goes into the request, and overwrites itself when dropped.
            let mut word: Option<&str> = None;
            let mut secret: Option<Secret> = None;
            match diagnosis::prompt(&c.lines, &c.pending).filter(|_| fresh) {
                Some(Prompt::HostKey(prompt)) => {
                    let accept = match &options.host_key {
                        HostKeyPolicy::Strict => false,
                        HostKeyPolicy::AcceptNew => true,
                        HostKeyPolicy::Ask(decide) => decide(&prompt),
                    };
                    word = Some(if accept { "yes" } else { "no" });
                    if accept {
                        self.host_key = Some(prompt);
                    } else {
                        c.attempt.refused_key = Some(prompt);
                    }
                }
                Some(Prompt::Secret(kind)) => {
                    c.secret_prompts += 1;
                    let prompt = SecretPrompt {
                        kind,
                        text: c.pending.clone(),
                        attempt: c.secret_prompts,
                    };
                    secret = options.secrets.as_ref().and_then(|answer| answer(&prompt));
                    if secret.is_none() {
                        return Err(Error::NoSecret {
                            prompt: c.pending.clone(),
                        });
                    }
                    c.attempt.secret_sent = true;
                }
                None => {}
            }
            let answer = secret.as_ref().map(Secret::expose).or(word);
            if answer.is_some() {
                c.answered_at = Some(c.lines.len());
            }
            let waited = self
                .round(answer.unwrap_or(""), answer.is_some(), until, deadline)
                .await;
            drop(secret);
            match waited? {
                Some(sent) => {
                    c.absorb(&sent.delta, &mut self.lines_lost);
                    c.pending = sent.pending;
                    c.status = sent.status;
                    if sent.settled_by == SettleReason::Timeout && left(deadline) < ONE_MS {
                        return Err(self.timed_out("ssh to authenticate"));
                    }
                }
                None => {
                    let tail = self.read_rest().await?;
                    c.absorb(&tail.output, &mut self.lines_lost);
                    c.status = tail.status;
                    if c.status == Status::Running {
                        c.status = Status::Exited(ExitStatus::Code(255));
                    }
                }
            }
        }
    }

    /// Types the setup lines into the fresh login shell and waits for its marker; keeps
    /// what came before as the greeting.
    async fn setup(&mut self, frame: &Frame, c: &mut Connecting, deadline: Instant) -> Result<()> {
        let up = frame.up();
        let until = format!("{up}$");
        let setup = frame.setup();
        let mut input = Some(setup.as_str());
        loop {
            if let Some(at) = c.lines.iter().position(|line| line.ends_with(&up)) {
                self.greeting = greeting(&c.lines[..at], frame.token());
                return Ok(());
            }
            if let Status::Exited(exit) = c.status {
                return Err(Error::Connect {
                    status: Some(exit),
                    message: format!(
                        "the remote shell ended before it took commands: {}",
                        greeting(&c.lines, frame.token()).trim_end()
                    ),
                });
            }
            match self
                .round(input.take().unwrap_or(""), false, &until, deadline)
                .await?
            {
                Some(sent) => {
                    c.absorb(&sent.delta, &mut self.lines_lost);
                    c.status = sent.status;
                    if sent.settled_by == SettleReason::Timeout && left(deadline) < ONE_MS {
                        return Err(self.timed_out(
                            "answer from the remote shell (a POSIX shell is needed: sh, bash, \
                             dash, ksh, zsh)",
                        ));
                    }
                }
                None => {
                    let tail = self.read_rest().await?;
                    c.absorb(&tail.output, &mut self.lines_lost);
                    c.status = Status::Exited(tail.status.exit().unwrap_or(ExitStatus::Code(255)));
                }
            }
        }
    }

    /// Runs `command` in the remote shell, with no input, and returns its output and
    /// exit status, with the default timeout.
    ///
    /// The command runs in the shell itself (`eval`), so `cd` and variables carry over
    /// to the next command; it may span lines. Its standard input is empty. `exit` ends
    /// the connection ([`Error::Disconnected`]).
    pub async fn run(&mut self, command: &str) -> Result<RunOutput> {
        self.run_with(command, "", self.timeout).await
    }

    /// [`run`](Self::run) with `input` as the command's standard input (lines of text; a
    /// final newline is added if missing) and its own timeout.
    ///
    /// Control characters other than newline and tab are refused in both
    /// ([`Error::InvalidCommand`]): the terminal would act on them. After a timeout the
    /// command may still run: [`interrupt`](Self::interrupt) it, or let it end; the next
    /// command runs after it, and its output never mixes into the next result.
    pub async fn run_with(
        &mut self,
        command: &str,
        input: &str,
        timeout: Duration,
    ) -> Result<RunOutput> {
        self.usable()?;
        let timeout = timeout.min(Duration::from_millis(MAX_TIMEOUT_MS));
        let deadline = Instant::now() + timeout;
        let frame = Frame::fresh();
        let text = frame.command(command, input)?;
        let mut collector = frame.collector();
        let lost_before = self.lines_lost;
        let mut input = Some(text.as_str());
        loop {
            // Each round ends on any new output, so that lines are taken from the
            // scrollback as they come and a long output does not push the begin marker
            // out of it.
            let sent = match self
                .round(input.take().unwrap_or(""), false, "", deadline)
                .await?
            {
                Some(sent) => sent,
                None => return Err(self.disconnected().await),
            };
            self.lines_lost += sent.delta.skipped;
            for line in sent.delta.text.split_terminator('\n') {
                collector.push(line);
            }
            if let Some((output, exit_code)) = collector.finished() {
                return Ok(RunOutput {
                    output,
                    exit_code,
                    lines_lost: self.lines_lost - lost_before,
                });
            }
            if sent.status != Status::Running || sent.settled_by == SettleReason::Exit {
                return Err(self.disconnected().await);
            }
            if left(deadline) < ONE_MS {
                return Err(Error::Timeout {
                    waiting_for: format!("end of {command:?}"),
                    timeout,
                });
            }
        }
    }

    /// Types Ctrl-C: the remote terminal sends SIGINT to the command in the foreground.
    /// Returns right after the write.
    pub async fn interrupt(&mut self) -> Result<()> {
        self.send(SendRequest::new("\u{3}").submit(false).settle(Settle::None))
            .await
            .map(drop)
    }

    /// Writes to ssh's terminal as [`PtyService::send`] does, for interactive use (a
    /// program that asks questions, a full-screen tool). What it reads is no longer
    /// framed: lines come as the terminal shows them.
    ///
    /// Remote echo is off after connecting, so typed text does not come back. Settle with
    /// `until` (or [`Settle::Quiet`]): input wait ends as soon as ssh has forwarded the
    /// input, before the remote side answered, because ssh always waits in `poll`.
    pub async fn send(&mut self, request: SendRequest) -> Result<Sent> {
        self.usable()?;
        match self.session.send(request).await {
            Ok(sent) => {
                self.lines_lost += sent.delta.skipped;
                Ok(sent)
            }
            Err(pty_session::Error::NotRunning { .. }) => Err(self.disconnected().await),
            Err(err) => Err(err.into()),
        }
    }

    /// Reads the unread lines as [`PtyService::tail`] does (`lines`: the budget). Once
    /// the connection ended, the driver has closed the session and this returns the
    /// [`Error::Disconnected`] that holds ssh's last words.
    pub async fn tail(&mut self, lines: Option<u64>) -> Result<Tail> {
        if self.session.is_closed() {
            return Err(self.failure.clone().unwrap_or_else(|| Error::Disconnected {
                status: None,
                message: "the session is closed".to_owned(),
            }));
        }
        let tail = self.session.tail(lines).await?;
        self.lines_lost += tail.output.skipped;
        Ok(tail)
    }

    /// Ends the connection: closes the session, which ends ssh and everything it started
    /// locally, and reaps them. The remote shell sees the connection close (SIGHUP).
    pub async fn close(mut self) -> Result<()> {
        self.close_session().await;
        Ok(())
    }

    /// What the server showed before the shell took commands: its banner, the MOTD, the
    /// login shell's own greeting and ssh's warnings, lines ending in `\n`.
    pub fn greeting(&self) -> &str {
        &self.greeting
    }

    /// The host key accepted on this connection, when ssh asked about it (it was not in
    /// the known-hosts file); `None` when the key was known.
    pub fn accepted_host_key(&self) -> Option<&HostKeyPrompt> {
        self.host_key.as_ref()
    }

    /// The session that runs ssh.
    pub fn session_id(&self) -> &SessionId {
        self.session.id()
    }

    /// The local ssh process's pid.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The owner of ssh's session.
    pub fn owner(&self) -> &Owner {
        self.session.owner()
    }

    /// Lines that fell out of the session's scrollback before the driver read them, over
    /// the connection's life; 0 normally.
    pub fn lines_lost(&self) -> u64 {
        self.lines_lost
    }

    /// The stored failure, once the connection ended.
    fn usable(&self) -> Result<()> {
        match &self.failure {
            Some(err) => Err(err.clone()),
            None => Ok(()),
        }
    }

    /// Writes `data` (then Enter if `submit`) and waits for `until`, ssh's exit or the
    /// deadline. `None` when ssh has already ended.
    async fn round(
        &mut self,
        data: &str,
        submit: bool,
        until: &str,
        deadline: Instant,
    ) -> Result<Option<Sent>> {
        let left = left(deadline);
        let request = SendRequest::new(data)
            .submit(submit)
            .settle(Settle::Until)
            .timeout(left)
            .until(until)
            .everything();
        match self.session.send(request).await {
            Ok(sent) => {
                self.remember_lines(&sent.delta.text);
                Ok(Some(sent))
            }
            Err(pty_session::Error::NotRunning { .. }) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// Reads what ssh printed last.
    async fn read_rest(&mut self) -> Result<Tail> {
        Ok(self.session.tail(TailRequest::everything()).await?)
    }

    fn remember_lines(&mut self, text: &str) {
        let lines = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.contains("PTYSSH_"));
        self.last_lines.extend(lines.map(str::to_owned));
        let excess = self.last_lines.len().saturating_sub(LAST_LINES);
        self.last_lines.drain(..excess);
    }

    /// ssh has ended after connecting: reads its last words, closes the session, and
    /// remembers the error for later calls.
    async fn disconnected(&mut self) -> Error {
        let status = match self.read_rest().await {
            Ok(tail) => {
                self.remember_lines(&tail.output.text);
                tail.status.exit()
            }
            Err(_) => None,
        };
        // ssh's own words, when it said something (`Connection to host closed by remote
        // host.`, then `Connection to host closed.`): the first is the cause.
        let message = self
            .last_lines
            .iter()
            .find(|line| SSH_LAST_WORDS.iter().any(|words| line.contains(words)))
            .or(self.last_lines.last())
            .map_or("ssh ended without a word".to_owned(), String::clone);
        self.close_session().await;
        let err = Error::Disconnected { status, message };
        self.failure = Some(err.clone());
        err
    }

    fn timed_out(&self, waiting_for: &str) -> Error {
        Error::Timeout {
            waiting_for: waiting_for.to_owned(),
            timeout: self.timeout,
        }
    }

    async fn close_session(&mut self) {
        self.session.close().await;
    }
}

/// How many of the last lines the driver keeps for the message of a disconnect.
const LAST_LINES: usize = 8;

/// What ssh says when a connection ends.
const SSH_LAST_WORDS: &[&str] = &[
    "closed by remote host",
    "Connection closed",
    "Connection reset",
    "Broken pipe",
    "Timeout, server",
    "client_loop",
    "Connection to ",
];

/// What the driver saw while ssh connected.
struct Connecting {
    lines: Vec<String>,
    pending: String,
    status: Status,
    attempt: Attempt,
    /// How many lines there were when the driver last answered a prompt.
    answered_at: Option<usize>,
    secret_prompts: u32,
}

impl Connecting {
    fn absorb(&mut self, output: &Output, lost: &mut u64) {
        *lost += output.skipped;
        self.lines
            .extend(output.text.split_terminator('\n').map(str::to_owned));
    }
}

/// The lines before the shell's marker, without the driver's own (they hold the token)
/// and without blank lines at either end.
fn greeting(lines: &[String], token: &str) -> String {
    let kept: Vec<&str> = lines
        .iter()
        .map(String::as_str)
        .filter(|line| !line.contains(token))
        .collect();
    let start = kept.iter().position(|l| !l.trim().is_empty());
    let end = kept.iter().rposition(|l| !l.trim().is_empty());
    match (start, end) {
        (Some(start), Some(end)) => kept[start..=end]
            .iter()
            .map(|line| format!("{line}\n"))
            .collect(),
        _ => String::new(),
    }
}

impl std::fmt::Debug for Ssh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ssh")
            .field("session", self.session.id())
            .field("pid", &self.pid)
            .field("failure", &self.failure)
            .finish_non_exhaustive()
    }
}

/// The time left until `deadline`.
fn left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// The shortest wait the service counts (it counts whole milliseconds).
const ONE_MS: Duration = Duration::from_millis(1);
