//! [`Gdb`]: one gdb on a pty-session session, driven over MI with tokens.
//!
//! Every wait is one facade call that ends on `until`, the process's exit or the timeout:
//! a command is written with `until` its token's result line, a wait for a stop writes
//! nothing and waits for `*stopped`. Quiet settling is switched off by a quiet period as
//! long as the timeout, and input wait is not used after a command: gdb also sleeps in
//! `poll` while the target runs or while it waits for a remote, so "gdb waits for input"
//! does not mean "gdb answered". Only start uses input wait, where it does mean that.
//!
//! Every line that arrives is parsed and queued; a call takes what it returns from the
//! queue, so nothing is lost between calls (a `*stopped` that comes after `^running`
//! waits there for [`Gdb::wait_stopped`]).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use pty_session::OwnedSession;
use pty_session::limits::{MAX_LINE_BYTES, MAX_TIMEOUT_MS};
use pty_session::{
    CancellationToken, ExitStatus, OpenRequest, Output, Owner, PtyService, SendRequest, SessionId,
    Settle, SettleReason, Status, TailRequest,
};

use crate::parse::{parse_line, parse_record};
use crate::record::{Record, ResultClass, ResultRecord, StreamKind};
use crate::stopped::Stopped;
use crate::value::Value;
use crate::{Error, GdbOptions, Result};

/// gdb's prompt line, which follows the answer to every command.
const PROMPT: &str = r"^\(gdb\) ?$";
/// pty-session cuts longer lines than [`MAX_LINE_BYTES`] without splitting a character,
/// so a cut piece is at least this long.
const CUT_PIECE: usize = MAX_LINE_BYTES - 3;

/// One gdb, started by [`Gdb::start`] on a session of the caller's owner.
///
/// Calls take `&mut self`: MI commands are answered in order, one at a time. Dropping a
/// `Gdb` without [`exit`](Self::exit) closes its session in the background.
pub struct Gdb {
    /// gdb's session, closed when the driver is dropped.
    session: OwnedSession,
    pid: u32,
    mi_async: bool,
    timeout: Duration,
    next_token: u64,
    /// Every record not yet returned by a command or `take_events`, oldest first.
    records: VecDeque<Record>,
    /// Every `*stopped` not yet returned by `wait_stopped`, oldest first.
    stops: VecDeque<Stopped>,
    /// A line pty-session cut at 64 KiB, waiting for the rest.
    cut: Option<String>,
    lines_lost: u64,
    status: Status,
}

/// gdb's answer to one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The result record with the command's token (`^done`, `^running`, ...; `^error`
    /// is [`Error::Command`] instead).
    pub result: ResultRecord,
    /// Everything else that arrived since the previous call took its records, in order:
    /// console output, notifications, prompts, the program's own output, stops (which
    /// [`Gdb::wait_stopped`] returns too).
    pub records: Vec<Record>,
}

impl Response {
    /// The result named `name`, such as `bkpt` or `value`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.result.results.get(name)
    }

    /// The string named `name`.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.result.results.str(name)
    }

    /// The console stream's text (`~"..."`), joined: what the CLI would have printed.
    pub fn console(&self) -> String {
        self.records
            .iter()
            .filter_map(|record| match record {
                Record::Stream(stream) if stream.kind == StreamKind::Console => {
                    Some(stream.text.as_str())
                }
                _ => None,
            })
            .collect()
    }
}

/// What a wait writes first.
enum Input<'a> {
    /// Nothing: only wait.
    Nothing,
    /// A command line, then Enter.
    Line(&'a str),
    /// Keys as they are (Ctrl-C), no Enter.
    Keys(&'a str),
}

impl Gdb {
    /// Starts `gdb -q --nx -i=mi2` for `owner` with terminal echo off, and waits for its
    /// first prompt.
    ///
    /// The command line is quoted for the service's backend (`shell` or `exec`).
    /// `DEBUGINFOD_URLS` is emptied so that gdb never asks whether to download debug
    /// info; `options.env` can set it again.
    pub async fn start(pty: &PtyService, owner: Owner, options: GdbOptions) -> Result<Gdb> {
        let timeout = options.timeout.min(Duration::from_millis(MAX_TIMEOUT_MS));
        let start = Instant::now();
        let shell = pty.config().backend_type == "shell";
        let mut request = OpenRequest::new(options.command_line(shell))
            .echo(false)
            .env("DEBUGINFOD_URLS", "")
            .settle(Settle::Until)
            .until(PROMPT)
            .timeout(timeout)
            .everything();
        for (name, value) in &options.env {
            request = request.env(name, value);
        }
        if let Some(cwd) = &options.cwd {
            request = request.cwd(cwd);
        }
        let opened = pty.open(&owner, request, &CancellationToken::new()).await?;
        let mut gdb = Gdb {
            session: OwnedSession::new(pty, owner, opened.session_id.clone()),
            pid: opened.pid,
            mi_async: options.mi_async,
            timeout,
            next_token: 1,
            records: VecDeque::new(),
            stops: VecDeque::new(),
            cut: None,
            lines_lost: 0,
            status: opened.status,
        };
        gdb.absorb(&opened.initial_output);
        let prompted = |gdb: &Gdb| gdb.records.iter().any(|r| *r == Record::Prompt);
        if !prompted(&gdb) {
            let left = timeout.saturating_sub(start.elapsed());
            let waited = match gdb.status {
                Status::Exited(_) => Err(Error::Exited {
                    waiting_for: String::new(),
                    status: gdb.status.exit(),
                }),
                Status::Running => {
                    gdb.wait_for(Input::Nothing, PROMPT, left, "gdb's first prompt", prompted)
                        .await
                }
            };
            if let Err(err) = waited {
                let output = gdb.transcript() + &opened.pending;
                gdb.close_session().await;
                return Err(match err {
                    Error::Exited { status, .. } => Error::Start { status, output },
                    other => other,
                });
            }
        }
        Ok(gdb)
    }

    /// Sends one MI command (or CLI command) with a fresh token, such as
    /// `-break-insert main`, and returns gdb's answer to it, with the default timeout.
    pub async fn command(&mut self, command: &str) -> Result<Response> {
        self.command_with_timeout(command, self.timeout).await
    }

    /// [`command`](Self::command) with its own timeout.
    ///
    /// `^error` becomes [`Error::Command`]; the records that came before it stay queued
    /// for the next call. After a timeout the answer, should it come, is kept as an
    /// ordinary record of the next response.
    pub async fn command_with_timeout(
        &mut self,
        command: &str,
        timeout: Duration,
    ) -> Result<Response> {
        let invalid = |reason| Error::InvalidCommand {
            command: command.to_owned(),
            reason,
        };
        if command.contains(['\n', '\r']) {
            return Err(invalid("spans several lines"));
        }
        if command.trim().is_empty() {
            return Err(invalid("is empty"));
        }
        let token = self.next_token;
        self.next_token += 1;
        let line = format!("{token}{command}");
        // The prompt after the answer ends the wait too, which matters when the answer
        // line was cut or first seen unfinished as the pending line.
        let until = format!(r"{token}\^|{PROMPT}");
        let waiting_for = format!("the answer to {line}");
        let answered = move |gdb: &Gdb| gdb.result_at(token).is_some();
        self.wait_for(Input::Line(&line), &until, timeout, &waiting_for, answered)
            .await?;
        let at = self
            .result_at(token)
            .expect("the wait returned once answered");
        let mut records: Vec<Record> = self.records.drain(..=at).collect();
        let Some(Record::Result(result)) = records.pop() else {
            unreachable!("result_at points at a result record");
        };
        if result.class == ResultClass::Error {
            for record in records.into_iter().rev() {
                self.records.push_front(record);
            }
            return Err(Error::Command {
                command: command.to_owned(),
                message: result.error_message().unwrap_or_default().to_owned(),
                code: result.results.str("code").map(str::to_owned),
            });
        }
        Ok(Response { result, records })
    }

    /// Waits for the next `*stopped` not yet returned (the oldest first), with the
    /// default timeout. Call it after each command that resumes the target (`-exec-run`,
    /// `-exec-continue`, `-exec-next`, ...), which answer `^running` first.
    pub async fn wait_stopped(&mut self) -> Result<Stopped> {
        self.wait_stopped_timeout(self.timeout).await
    }

    /// [`wait_stopped`](Self::wait_stopped) with its own timeout.
    pub async fn wait_stopped_timeout(&mut self, timeout: Duration) -> Result<Stopped> {
        self.wait_for(
            Input::Nothing,
            r"\*stopped",
            timeout,
            "a *stopped record",
            has_stop,
        )
        .await?;
        Ok(self
            .stops
            .pop_front()
            .expect("the wait returned with a stop"))
    }

    /// Stops the running target and returns the stop (`signal-received`, `SIGINT`).
    ///
    /// With `mi-async` (the default) this is `-exec-interrupt`; without it gdb reads
    /// nothing while the target runs, so it types Ctrl-C, which the terminal delivers to
    /// the target as SIGINT. Returns the oldest stop not yet returned, as
    /// [`wait_stopped`](Self::wait_stopped) does.
    pub async fn interrupt(&mut self) -> Result<Stopped> {
        if self.mi_async {
            self.command("-exec-interrupt").await?;
            return self.wait_stopped().await;
        }
        self.wait_for(
            Input::Keys("\u{3}"),
            r"\*stopped",
            self.timeout,
            "a *stopped record after Ctrl-C",
            has_stop,
        )
        .await?;
        Ok(self
            .stops
            .pop_front()
            .expect("the wait returned with a stop"))
    }

    /// Ends gdb with `-gdb-exit` (which also kills a running target), closes the session
    /// and returns how gdb ended. Should gdb not end within the timeout, closing kills it
    /// and the timeout is returned.
    pub async fn exit(mut self) -> Result<ExitStatus> {
        let token = self.next_token;
        self.next_token += 1;
        let line = format!("{token}-gdb-exit");
        let until = format!(r"{token}\^exit");
        let ended = |gdb: &Gdb| gdb.status.exit().is_some();
        let waited = match self.status {
            Status::Exited(_) => Ok(()),
            Status::Running => {
                let timeout = self.timeout;
                self.wait_for(Input::Line(&line), &until, timeout, "gdb to exit", ended)
                    .await
            }
        };
        self.close_session().await;
        waited?;
        Ok(self
            .status
            .exit()
            .expect("the wait returned once gdb ended"))
    }

    /// Every record that arrived and no call returned yet, oldest first, without waiting.
    /// After gdb ended, the records it printed last are still here.
    pub async fn events(&mut self) -> Result<Vec<Record>> {
        if !self.session.is_closed() {
            self.read_unread().await?;
        }
        Ok(self.take_events())
    }

    /// The records already queued, without reading more.
    pub fn take_events(&mut self) -> Vec<Record> {
        self.records.drain(..).collect()
    }

    /// The session that runs gdb.
    pub fn session_id(&self) -> &SessionId {
        self.session.id()
    }

    /// gdb's pid.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The owner of gdb's session.
    pub fn owner(&self) -> &Owner {
        self.session.owner()
    }

    /// Whether gdb ran when last seen.
    pub fn status(&self) -> Status {
        self.status
    }

    /// Lines that fell out of the session's scrollback before the driver read them
    /// (output faster than the scrollback holds between two calls); 0 normally.
    pub fn lines_lost(&self) -> u64 {
        self.lines_lost
    }

    /// Writes `input`, then waits until `found` holds, one facade call per round: each
    /// round ends on `until`, gdb's exit or the deadline. A match that does not satisfy
    /// `found` (a result line still pending, a prompt of an earlier command) only starts
    /// another round, which waits for new output.
    async fn wait_for(
        &mut self,
        input: Input<'_>,
        until: &str,
        timeout: Duration,
        waiting_for: &str,
        found: impl Fn(&Gdb) -> bool,
    ) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut input = Some(input).filter(|i| !matches!(i, Input::Nothing));
        let timed_out = || Error::Timeout {
            waiting_for: waiting_for.to_owned(),
            timeout,
        };
        let exited = |gdb: &Gdb| Error::Exited {
            waiting_for: waiting_for.to_owned(),
            status: gdb.status.exit(),
        };
        loop {
            if input.is_none() && found(self) {
                return Ok(());
            }
            if self.session.is_closed() {
                return Err(exited(self));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left < ONE_MS {
                return Err(timed_out());
            }
            let (data, submit) = match input.take() {
                Some(Input::Line(line)) => (line, true),
                Some(Input::Keys(keys)) => (keys, false),
                Some(Input::Nothing) | None => ("", false),
            };
            // While a cut line waits for its rest, any new line ends the round.
            let until = if self.cut.is_some() { "" } else { until };
            let request = SendRequest::new(data)
                .submit(submit)
                .settle(Settle::Until)
                .timeout(left)
                .until(until)
                .everything();
            match self.session.send(request).await {
                Ok(sent) => {
                    self.absorb(&sent.delta);
                    self.status = sent.status;
                    if found(self) {
                        return Ok(());
                    }
                    if sent.settled_by == SettleReason::Exit {
                        self.ended().await?;
                        return if found(self) {
                            Ok(())
                        } else {
                            Err(exited(self))
                        };
                    }
                }
                Err(pty_session::Error::NotRunning { .. }) => {
                    self.ended().await?;
                    return if found(self) {
                        Ok(())
                    } else {
                        Err(exited(self))
                    };
                }
                Err(err) => return Err(err.into()),
            }
        }
    }

    /// gdb has ended: reads its last lines, then closes the session, which kills what
    /// it left behind (a target it did not kill) and reaps it.
    async fn ended(&mut self) -> Result<()> {
        self.read_unread().await?;
        self.close_session().await;
        Ok(())
    }

    /// Reads what arrived without waiting.
    async fn read_unread(&mut self) -> Result<()> {
        let tail = self.session.tail(TailRequest::everything()).await?;
        self.absorb(&tail.output);
        self.status = tail.status;
        Ok(())
    }

    /// Parses and queues the lines of one reply.
    fn absorb(&mut self, output: &Output) {
        self.lines_lost += output.skipped;
        for piece in output.text.split_terminator('\n') {
            let line = match self.cut.take() {
                Some(mut head) => {
                    head.push_str(piece);
                    head
                }
                None => piece.to_owned(),
            };
            if piece.len() >= CUT_PIECE && parse_record(&line).is_err() {
                self.cut = Some(line);
                continue;
            }
            for record in parse_line(&line) {
                if let Record::Async(record) = &record {
                    self.stops.extend(Stopped::from_record(record));
                }
                self.records.push_back(record);
            }
        }
    }

    /// Where the result record with `token` is in the queue.
    fn result_at(&self, token: u64) -> Option<usize> {
        self.records
            .iter()
            .position(|r| matches!(r, Record::Result(result) if result.token == Some(token)))
    }

    /// The queued records as MI lines, for an error message.
    fn transcript(&self) -> String {
        self.records.iter().map(|r| format!("{r}\n")).collect()
    }

    async fn close_session(&mut self) {
        self.session.close().await;
    }
}

impl std::fmt::Debug for Gdb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gdb")
            .field("session", self.session.id())
            .field("pid", &self.pid)
            .field("status", &self.status)
            .field("queued", &self.records.len())
            .field("stops", &self.stops.len())
            .finish_non_exhaustive()
    }
}

fn has_stop(gdb: &Gdb) -> bool {
    !gdb.stops.is_empty()
}

/// The shortest wait the service counts (it counts whole milliseconds).
const ONE_MS: Duration = Duration::from_millis(1);
