//! One session: its PTY, its rendered scrollback, and the task that drains it.
//!
//! The drain task owns the reading side. It reads whatever the master has, renders it
//! into the scrollback under a short lock (never across an `.await`), answers terminal
//! queries, and watches the shim's reports. Callers only lock the state to look at it.

use std::cell::RefCell;
use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use tokio::io::AsyncReadExt;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::watch;

use crate::procfs::{GroupCache, GroupProbe};
use crate::shell::commands::ShellState;
use crate::shell::marks::{Mark, MarkFilter};
use crate::shim::{REPORT_LEN, Report};
use crate::spawn::Spawned;
use crate::tap::Tap;
use crate::term::output::Rendered;
use crate::term::render::Renderer;
use crate::term::screen::Window;
use crate::term::scrollback::Scrollback;
use crate::{Error, ExitStatus, Owner, Result, SessionId, Status};

/// A session as the service holds it.
pub(crate) struct Session {
    pub(crate) id: SessionId,
    pub(crate) owner: Owner,
    /// The command's pid.
    pub(crate) pid: u32,
    /// The shim's pid, the id of the session's process session: what the service kills
    /// by when the shim does not kill the tree ([`crate::tree`]).
    shim: u32,
    /// How long the shim waits after SIGHUP/SIGTERM before SIGKILL.
    grace: Duration,
    /// Where the session came from, for listings.
    pub(crate) origin: Origin,
    /// The master side, non-blocking on tokio's reactor. Read by the drain task, written
    /// by sends (which take `write_lock` first).
    pub(crate) master: Arc<AsyncFd<OwnedFd>>,
    /// Short critical sections only: no `.await` while it is held.
    state: Mutex<State>,
    /// Bumped on every change of `state`, so settles can wait for news.
    changed: watch::Sender<u64>,
    /// Serializes sends to this session: one write and its settle at a time.
    pub(crate) write_lock: tokio::sync::Mutex<()>,
    /// The service's end of the control socket; dropping it tells the shim to kill the
    /// tree.
    control: Mutex<Option<OwnedWriteHalf>>,
    /// Whether this machine tells input wait (else quiet takes its place).
    pub(crate) input_wait_supported: bool,
    /// The session's terminal as `/proc` names it (`/dev/pts/3`): what input wait is.
    pub(crate) tty: String,
    /// The members of the foreground group last looked up.
    pub(crate) group: GroupCache,
    /// The last write into the terminal (a send or a reply to a query), for input wait.
    pub(crate) last_write: Mutex<Option<WriteMark>>,
}

/// What a session was opened with, and when: what `list` shows.
pub(crate) struct Origin {
    /// The command as the caller gave it.
    pub(crate) command: String,
    /// The working directory it started in.
    pub(crate) cwd: PathBuf,
    /// When it was opened.
    pub(crate) started_at: SystemTime,
    /// Its place in the order of opens (older sessions have smaller numbers).
    pub(crate) seq: u64,
    /// The sandbox it runs in.
    pub(crate) sandbox: crate::Sandbox,
}

/// What the foreground group looked like when something was last written to it: input
/// wait counts only once the group ran since (its run counts changed), because written
/// bytes reach the program's read only after the kernel's tty worker moved them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WriteMark {
    /// When the write completed.
    pub(crate) at: Instant,
    /// The foreground group and its summed run counts before the write.
    pub(crate) group: Option<(i32, u64)>,
}

/// What the drain task has learned so far.
pub(crate) struct State {
    pub(crate) renderer: Renderer,
    /// The window: its size, and the screen emulator once the program addressed the
    /// screen or a caller asked for it. Fed the same bytes as the renderer.
    pub(crate) window: Window,
    pub(crate) scrollback: Scrollback,
    /// The command's exit status, once the shim reported it.
    pub(crate) exit: Option<ExitStatus>,
    /// Every holder of the slave closed it: no more output can come.
    pub(crate) eof: bool,
    /// The shim has exited and the output is drained.
    pub(crate) finished: bool,
    /// The shim said it leaves nothing behind ([`Report::Finished`]).
    pub(crate) shim_finished: bool,
    /// When output last arrived (or the session started).
    pub(crate) last_output: Instant,
    /// Counts the reads that brought output.
    pub(crate) output_seq: u64,
    /// The recording and the live feed, handed every chunk as it is read.
    pub(crate) tap: Tap,
    /// Takes the shell's marks out of the output, before anything else sees it.
    marks: MarkFilter,
    /// What the shell's marks told.
    pub(crate) shell: ShellState,
    /// The prompts the session's programs showed, learned from echo lines.
    pub(crate) prompts: crate::term::prompt::Learned,
}

impl State {
    pub(crate) fn status(&self) -> Status {
        self.exit.map_or(Status::Running, Status::Exited)
    }

    /// Hands out the shell commands that finished since they were last taken: what a
    /// read delivers with its lines. A command still running when the shell exited
    /// (`exit`) ended with it.
    pub(crate) fn take_commands(&mut self) -> Vec<crate::ShellCommand> {
        let exited = self.exit.map(|exit| exit.code());
        self.shell.take(exited, Instant::now())
    }

    /// Delivers the unread lines within `budget` and moves the cursor past them: the rows
    /// the program may still redraw become lines first, as they read now (see
    /// [`crate::term::rows`]).
    pub(crate) fn read(&mut self, budget: crate::term::scrollback::Budget) -> crate::Output {
        self.fix();
        self.scrollback.read(budget)
    }

    /// Re-reads the completed lines from line `from` on within `budget`, leaving the
    /// cursor: the rows a read would deliver now become lines first, so that they have
    /// numbers to be re-read by.
    pub(crate) fn reread(
        &mut self,
        from: u64,
        budget: crate::term::scrollback::Budget,
    ) -> crate::Output {
        self.fix();
        self.scrollback.reread(from, budget)
    }

    /// Makes lines of the rows a read would deliver now.
    fn fix(&mut self) {
        let mut fixed = Rendered::default();
        self.renderer.fix(&mut fixed);
        for line in fixed.lines {
            self.scrollback.push_recycling(line, &mut fixed.spare);
        }
    }

    /// How many completed lines a read would deliver now (some may have fallen out of the
    /// scrollback), the rows still open counted.
    pub(crate) fn unread(&self) -> u64 {
        self.scrollback.unread() + self.renderer.unread_count() as u64
    }

    /// The completed lines from line `from` on that are kept, then the rows a read would
    /// deliver now, counted on from the last line's number (`from` may be among them):
    /// the text a wait for a pattern looks at, besides the pending line.
    pub(crate) fn lines_from(&self, from: u64) -> impl Iterator<Item = &str> {
        self.fixed_lines_from(from).chain(self.open_rows_from(from))
    }

    /// The completed lines numbered `from..` still kept: [`lines_from`](Self::lines_from)
    /// without the window's open rows.
    pub(crate) fn fixed_lines_from(&self, from: u64) -> impl Iterator<Item = &str> {
        self.scrollback.lines_from(from)
    }

    /// The window's rows a read would deliver now, not yet numbered lines, from the one
    /// that will be line `from` (the first of them when `from` is not past the lines).
    pub(crate) fn open_rows_from(&self, from: u64) -> impl Iterator<Item = &str> {
        let rows = from.saturating_sub(self.scrollback.line_end());
        self.renderer.unread_rows().skip(rows as usize)
    }

    /// Line number `number` as a read would deliver it now: a numbered line still in the
    /// scrollback, or one of the window's open rows; `None` when it is gone or not there
    /// yet.
    pub(crate) fn line_text(&self, number: u64) -> Option<&str> {
        if number < self.line_begin() {
            None
        } else if number < self.line_end() {
            self.fixed_lines_from(number).next()
        } else {
            self.open_rows_from(number).next()
        }
    }

    /// The number the next line will have once the rows a read would deliver now are
    /// lines: what [`lines_from`](Self::lines_from) counts up to.
    pub(crate) fn lines_end(&self) -> u64 {
        self.scrollback.line_end() + self.renderer.unread_count() as u64
    }

    /// What the window shows now, starting the emulator if none runs yet.
    pub(crate) fn screen(&mut self) -> crate::Screen {
        let status = self.status();
        self.window
            .start(self.renderer.key_modes(), Instant::now())
            .snapshot(status)
    }

    /// The bytes that draw the window as it is now, in its colours, starting the
    /// emulator if none runs yet.
    pub(crate) fn screen_frame(&mut self) -> Vec<u8> {
        self.window
            .start(self.renderer.key_modes(), Instant::now())
            .draw()
    }

    /// The window's lines down to the cursor's, as text and in colour, from the emulator
    /// (started if none runs).
    pub(crate) fn coloured_lines(&mut self) -> Vec<(String, String)> {
        self.window
            .start(self.renderer.key_modes(), Instant::now())
            .coloured_lines()
    }

    /// What a view's history in colour is drawn from ([`crate::term::screen::History`]).
    pub(crate) fn history(&self) -> crate::term::screen::History {
        self.window.history()
    }

    /// The text after the last line end, such as a prompt.
    pub(crate) fn pending(&self) -> String {
        self.renderer.pending()
    }

    /// Whether a full-screen program has the alternate screen on.
    pub(crate) fn in_alt_screen(&self) -> bool {
        self.renderer.alt_screen()
    }

    /// Lines completed since the session started: the number the next line gets.
    pub(crate) fn line_end(&self) -> u64 {
        self.scrollback.line_end()
    }

    /// The number of the next line the read cursor gives out.
    pub(crate) fn read_cursor(&self) -> u64 {
        self.scrollback.cursor()
    }

    /// The number of the oldest line still in the scrollback.
    pub(crate) fn line_begin(&self) -> u64 {
        self.scrollback.line_begin()
    }

    /// The window's size, columns and rows.
    pub(crate) fn window_size(&self) -> (u16, u16) {
        self.window.size()
    }

    /// Follows a new window size the terminal already has: the renderer and the screen
    /// take it, and the recording notes it if it changed.
    pub(crate) fn resize(&mut self, cols: u16, rows: u16) {
        let old = self.window.size();
        self.window.resize(cols, rows);
        // Rows that no longer fit the window leave its top: lines now.
        let mut left = Rendered::default();
        self.renderer.resize(cols, rows, &mut left);
        for line in left.lines {
            self.scrollback.push_recycling(line, &mut left.spare);
        }
        if (cols, rows) != old {
            self.tap.resize(cols, rows);
        }
    }

    /// Hands what an agent's send wrote to the recording.
    pub(crate) fn agent_input(&mut self, bytes: &[u8]) {
        self.tap.agent_input(bytes);
    }

    /// The screen, while a full-screen program has the alternate screen on.
    pub(crate) fn alt_screen(&mut self) -> Option<crate::Screen> {
        self.renderer.alt_screen().then(|| self.screen())
    }

    /// How keys are to be encoded now: as the emulator's modes say, or, before one runs,
    /// as the renderer saw the program set them.
    pub(crate) fn key_modes(&mut self) -> crate::term::screen::KeyModes {
        self.window
            .emulator(Instant::now())
            .map_or(self.renderer.key_modes(), |emulator| emulator.key_modes())
    }
}

thread_local! {
    /// One read buffer and one render scratch per runtime thread, not per session: 1,000
    /// idle sessions must not hold 64 MiB of buffers. The scratch keeps its spare strings
    /// from read to read, so a flood of short lines reuses the ones its scrollback dropped.
    static SCRATCH: RefCell<(Vec<u8>, Rendered)> =
        RefCell::new((vec![0; 64 * 1024], Rendered::default()));
}

impl Session {
    /// Wraps a spawned shim into a session and starts its drain task.
    // Each argument is a different part the service has just made; one internal caller.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start(
        id: SessionId,
        owner: Owner,
        origin: Origin,
        spawned: Spawned,
        (cols, rows): (u16, u16),
        scrollback: Scrollback,
        input_wait_supported: bool,
        tap: Tap,
        colours: crate::Colours,
        key: Option<String>,
    ) -> io::Result<Arc<Session>> {
        let Spawned {
            master,
            control,
            pid,
            shim,
            grace,
            born_after,
        } = spawned;
        let (control_read, control_write) = control.into_split();
        let tty = crate::pty::terminal_name(&master).unwrap_or_default();
        let session = Arc::new(Session {
            id,
            owner,
            pid,
            shim,
            grace,
            origin,
            master: Arc::new(crate::pty::register(master)?),
            state: Mutex::new(State {
                renderer: Renderer::with_colours(cols, rows, colours),
                window: Window::new(cols, rows),
                scrollback,
                exit: None,
                eof: false,
                finished: false,
                shim_finished: false,
                last_output: Instant::now(),
                output_seq: 0,
                tap,
                shell: ShellState::new(key.is_some()),
                marks: MarkFilter::new(key),
                prompts: Default::default(),
            }),
            changed: watch::Sender::new(0),
            write_lock: tokio::sync::Mutex::new(()),
            control: Mutex::new(Some(control_write)),
            input_wait_supported,
            tty,
            group: GroupCache::new(born_after).below(shim as i32),
            last_write: Mutex::new(None),
        });
        tokio::spawn(drain(session.clone(), control_read));
        Ok(session)
    }

    /// The state, locked briefly.
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held is a bug; the data is still consistent enough to
        // read, so keep serving rather than poisoning every later call.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether the command still runs.
    pub(crate) fn running(&self) -> bool {
        self.state().exit.is_none()
    }

    /// A receiver that sees every later change of the state.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    /// Tells the shim to kill the process tree: its control socket reaches EOF.
    /// Idempotent.
    pub(crate) fn request_kill(&self) {
        self.control
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
    }

    /// Tells the shim to kill the process tree and waits until it is reaped and the output
    /// is drained: within the grace and a second, whatever the shim does. A shim that has
    /// not finished by the first of [`close_deadlines`](crate::tree::close_deadlines)
    /// (stopped, spinning, its limits taken away) is not waited for: the service kills
    /// the tree itself, by its process session ([`crate::tree`]).
    pub(crate) async fn kill_and_wait(&self) {
        let start = tokio::time::Instant::now();
        let (shim_deadline, give_up) = crate::tree::close_deadlines(self.grace);
        self.request_kill();
        if self.wait_finished_until(start + shim_deadline).await {
            return;
        }
        tracing::warn!(session = %self.id, shim = self.shim, "the shim did not end the session in time; killing its tree");
        self.kill_tree().await;
        self.wait_finished_until(start + give_up).await;
    }

    /// Waits until the session is finished or `deadline` passes; true if it finished.
    async fn wait_finished_until(&self, deadline: tokio::time::Instant) -> bool {
        let mut changes = self.subscribe();
        loop {
            if self.state().finished {
                return true;
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => {}
                // The sender lives in this session: it cannot be gone while we are.
                Ok(Err(_)) => return self.state().finished,
                Err(_elapsed) => return false,
            }
        }
    }

    /// Kills the tree by the shim's process session, from the service ([`crate::tree`]).
    async fn kill_tree(&self) {
        let shim = self.shim as i32;
        let killed = tokio::task::spawn_blocking(move || crate::tree::kill(shim)).await;
        tracing::debug!(session = %self.id, ?killed, "killed the tree from the service");
    }

    /// A probe of this session's foreground group, for one settle.
    pub(crate) fn probe(&self) -> GroupProbe {
        GroupProbe::new(&self.tty).with_session(self.shim as i32)
    }

    /// Records the foreground group's state before a write into the terminal, looking
    /// through `probe` (which the write's settle goes on using).
    pub(crate) fn mark_write(&self, probe: &mut GroupProbe) {
        let group = crate::pty::foreground_group(self.master.get_ref()).and_then(|pgrp| {
            let members = self.group.members(pgrp, crate::procfs::Lookup::Known);
            probe.sample(&members).map(|sample| (pgrp, sample.runs))
        });
        let mark = WriteMark {
            at: Instant::now(),
            group,
        };
        *self.last_write.lock().unwrap_or_else(|p| p.into_inner()) = Some(mark);
    }

    /// The write recorded by [`mark_write`](Self::mark_write) has completed now.
    pub(crate) fn write_done(&self) {
        if let Some(mark) = self
            .last_write
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            mark.at = Instant::now();
        }
    }

    /// The last write's mark.
    pub(crate) fn last_write(&self) -> Option<WriteMark> {
        *self.last_write.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes all of `bytes` into the terminal, waiting for room until `deadline`. Fails
    /// with [`Error::WriteTimeout`] (which reports `timeout`) when the program has not
    /// taken them all by then, and with [`Error::NotRunning`] once the terminal closed.
    /// Writers take `write_lock` first, so writes never interleave.
    pub(crate) async fn write(
        &self,
        bytes: &[u8],
        deadline: Instant,
        timeout: Duration,
    ) -> Result<()> {
        let mut written = 0;
        while written < bytes.len() {
            let ready = tokio::time::timeout_at(deadline.into(), self.master.writable()).await;
            let Ok(Ok(mut guard)) = ready else {
                return Err(Error::WriteTimeout {
                    id: self.id.clone(),
                    written,
                    total: bytes.len(),
                    timeout,
                });
            };
            match guard.try_io(|fd| crate::pty::write_some(fd.get_ref(), &bytes[written..])) {
                Ok(Ok(n)) => written += n,
                Ok(Err(err)) if err.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(_)) => {
                    let status = self.state().status();
                    let status = status
                        .exit()
                        .map_or("its terminal closed".to_owned(), |e| e.to_string());
                    return Err(Error::NotRunning {
                        id: self.id.clone(),
                        status,
                    });
                }
                Err(_would_block) => {}
            }
        }
        Ok(())
    }

    /// Resizes the window (TIOCSWINSZ: the kernel sends the foreground group SIGWINCH),
    /// then the renderer and the screen follow. A size left out stays. The caller holds
    /// `write_lock`, so the size read here is still the current one when the ioctl is
    /// made, outside the state lock.
    pub(crate) fn resize(&self, cols: Option<u16>, rows: Option<u16>) -> Result<()> {
        let (old_cols, old_rows) = self.state().window_size();
        let cols = cols.unwrap_or(old_cols);
        let rows = rows.unwrap_or(old_rows);
        crate::pty::resize(self.master.get_ref(), cols, rows).map_err(|err| {
            Error::ResizeFailed {
                id: self.id.clone(),
                source: Arc::new(err),
            }
        })?;
        self.state().resize(cols, rows);
        Ok(())
    }

    /// Reads what the master has now into the scrollback, up to about `budget` bytes (a
    /// read may take up to the read buffer past it): whether the master was found
    /// empty, the end of output came, or there is more to read.
    fn read_available(&self, budget: usize) -> io::Result<Drained> {
        crate::timeline::mark("drain.wake");
        SCRATCH.with_borrow_mut(|(buf, rendered)| {
            rendered.lines.clear();
            rendered.replies.clear();
            let mut got_output = false;
            let mut read = 0usize;
            let drained = loop {
                if read >= budget {
                    break Drained::More;
                }
                // Bytes are read under the state lock, so that they are never out of the
                // master and not yet in the scrollback for anyone who looks: a settle that
                // finds the master empty and then reads the scrollback gets them (without
                // it, a drain preempted between the two lost a reply its last line, 4 in
                // 3,000 echo replies on a busy machine).
                let mut state = self.state();
                match crate::pty::read_some(self.master.get_ref(), buf) {
                    Ok(0) => break Drained::End,
                    Ok(n) => {
                        got_output = true;
                        read += n;
                        let state = &mut *state;
                        // The shell's marks out first: no one else sees them.
                        let mut marks = Vec::new();
                        let chunk = state.marks.feed(&buf[..n], &mut marks);
                        if !marks.is_empty() {
                            let now = Instant::now();
                            let prompt =
                                |m: &Mark| matches!(m, Mark::PromptStart | Mark::PromptEnd);
                            let typed_ahead = marks.iter().any(prompt)
                                && crate::pty::input_unread(self.master.get_ref()) == Some(true);
                            for mark in marks {
                                state.shell.apply(mark, now, typed_ahead);
                            }
                        }
                        state.renderer.feed(&chunk, rendered);
                        state.tap.output(&chunk);
                        state.window.feed(
                            &chunk,
                            state.renderer.addresses_screen(),
                            state.renderer.key_modes(),
                        );
                        for line in rendered.lines.drain(..) {
                            state.scrollback.push_recycling(line, &mut rendered.spare);
                        }
                    }
                    Err(err) if err.kind() == io::ErrorKind::WouldBlock => break Drained::Empty,
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                    Err(err) => return Err(err),
                }
            };
            let eof = drained == Drained::End;
            if !rendered.replies.is_empty() {
                self.mark_write(&mut self.probe());
                // Replies to terminal queries are a few bytes; the input queue takes them
                // unless the program stopped reading, and then nothing waits for them.
                let _ = crate::pty::write_some(self.master.get_ref(), &rendered.replies);
            }
            if got_output || eof {
                crate::timeline::mark("drain");
                let mut state = self.state();
                if got_output {
                    state.output_seq += 1;
                    state.last_output = Instant::now();
                }
                state.eof |= eof;
                drop(state);
                self.bump();
            }
            Ok(drained)
        })
    }

    /// Reads the master until it is empty or at its end (`true`), up to [`DRAIN_NOW_LIMIT`]
    /// bytes: what a flooding process that escaped the tree keeps writing cannot hold the
    /// drain here. For the rare moments that must see everything there is (the command's
    /// exit, the shim's end), so without a turn of the scheduler in between: a yield there
    /// delayed a close under a stopping server (the persist tests).
    fn read_now(&self) -> io::Result<bool> {
        for _ in 0..DRAIN_NOW_LIMIT / DRAIN_BUDGET {
            match self.read_available(DRAIN_BUDGET)? {
                Drained::Empty => return Ok(false),
                Drained::End => return Ok(true),
                Drained::More => {}
            }
        }
        Ok(false)
    }
}

/// What one wake-up of the drain found ([`Session::read_available`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drained {
    /// The master has nothing more now.
    Empty,
    /// The end of output.
    End,
    /// The budget was spent with output still there.
    More,
}

/// The bytes one wake-up of the drain reads and renders before it gives the worker thread
/// back to the scheduler (`yield_now`), when the master has more: a session that floods
/// never holds a thread of the runtime, so every other session, and every other owner's
/// call, gets its turn within a few such budgets. The master is not waited on again
/// meanwhile (its readiness is spent), so nothing is lost; the program is only held back
/// by the terminal's own flow control while its output waits. Small enough that thirty
/// floods on two threads cost another session's echo a few milliseconds, large enough
/// that one read of the master (at most 4 KiB on Linux in practice) and the yield stay
/// cheap beside the rendering (BENCHMARKS.md, fairness).
const DRAIN_BUDGET: usize = 16 * 1024;

/// The most [`Session::read_now`] reads at once: far more than a terminal buffers.
const DRAIN_NOW_LIMIT: usize = 1024 * 1024;

/// The drain task: reads output until the end, follows the shim's reports, and marks the
/// session finished once the shim is gone and the output is drained.
///
/// The shim is gone when its control socket reaches EOF: the shim is its only holder (the
/// command never gets it), so EOF comes when the shim exits, however it dies. A shim that
/// did not say first that it left nothing behind ([`Report::Finished`]) was killed or
/// failed: the service kills what it left, by its process session ([`crate::tree`]).
async fn drain(session: Arc<Session>, mut control: OwnedReadHalf) {
    let mut eof = false;
    let mut shim_gone = false;
    let mut record = [0u8; REPORT_LEN];
    let mut filled = 0;
    // Output left in the master when the last wake-up's budget ran out: read on after
    // the scheduler's turn, without waiting for the master's readiness (already spent).
    let mut more = false;
    while !(shim_gone && eof) {
        tokio::select! {
            ready = session.master.readable(), if !eof && !more => {
                let Ok(mut guard) = ready else { eof = true; continue };
                guard.clear_ready();
                drop(guard);
                (eof, more) = read_step(&session);
            }
            permit = bulk_turn(), if more && !eof => {
                (eof, more) = read_step(&session);
                drop(permit);
            }
            read = control.read(&mut record[filled..]), if !shim_gone => {
                match read {
                    Ok(0) | Err(_) => {
                        shim_gone = true;
                        if !session.state().shim_finished {
                            session.kill_tree().await;
                        }
                        // Its socket closed as it exited: a moment more, and it is gone.
                        wait_exited(session.shim, SHIM_EXIT).await;
                        // Nothing of the tree is left to hold the slave except what
                        // escaped it; drain what is there and stop.
                        eof = eof || matches!(session.read_now(), Ok(true));
                        if !eof {
                            eof = wait_for_eof(&session).await;
                        }
                    }
                    Ok(n) => {
                        filled += n;
                        if filled == REPORT_LEN {
                            filled = 0;
                            let report = Report::decode(record);
                            if report == Some(Report::Finished) {
                                session.state().shim_finished = true;
                            }
                            if let Some(Report::Exited(exit)) = report {
                                // Everything the command wrote before it exited is in the
                                // terminal already: read it before saying it exited.
                                if let Err(err) = session.read_now() {
                                    tracing::warn!(session = %session.id, "reading the terminal failed: {err}");
                                }
                                session.state().exit = Some(exit);
                                session.bump();
                            }
                        }
                    }
                }
            }
        }
    }
    let mut state = session.state();
    state.eof = true;
    state.finished = true;
    state.tap.end();
    if state.exit.is_none() {
        // The shim died before it could report (it was killed from outside).
        state.exit = Some(ExitStatus::Signal(libc::SIGKILL));
    }
    drop(state);
    session.bump();
}

/// The bulk lane: the turns of drains past their first budget (sessions that flood) go
/// through this, so that floods hold at most all but one of the runtime's worker threads
/// and the last one stays free for everything else (an echo, a call of another owner):
/// without it, thirty floods on two threads queued another owner's echo behind thirty
/// budgets at every wake-up (BENCHMARKS.md, fairness). One session alone always finds
/// the lane free, so its throughput is kept. One lane a process, sized by the runtime
/// that first drains: the service lives in one runtime.
fn bulk_lane() -> &'static Arc<tokio::sync::Semaphore> {
    static LANE: std::sync::OnceLock<Arc<tokio::sync::Semaphore>> = std::sync::OnceLock::new();
    LANE.get_or_init(|| {
        let workers = tokio::runtime::Handle::try_current()
            .map_or(1, |runtime| runtime.metrics().num_workers());
        Arc::new(tokio::sync::Semaphore::new(
            workers.saturating_sub(1).max(1),
        ))
    })
}

/// A flooding drain's next turn: the scheduler's turn first (`yield_now`, so that a lane
/// free at once does not let it run on without a break), then a place in the bulk lane.
async fn bulk_turn() -> Option<tokio::sync::OwnedSemaphorePermit> {
    tokio::task::yield_now().await;
    bulk_lane().clone().acquire_owned().await.ok()
}

/// One wake-up's read of the drain: whether the output ended, and whether more waits.
fn read_step(session: &Session) -> (bool, bool) {
    match session.read_available(DRAIN_BUDGET) {
        Ok(drained) => (drained == Drained::End, drained == Drained::More),
        Err(err) => {
            tracing::warn!(session = %session.id, "reading the terminal failed: {err}");
            (true, false)
        }
    }
}

/// How long the drain waits for a shim whose socket closed to be gone: it closes its
/// descriptors as it exits, microseconds before it is a zombie.
const SHIM_EXIT: Duration = Duration::from_millis(100);

/// Waits up to `limit` until process `pid` has exited, by a pidfd (readable once the
/// process is a zombie or reaped).
async fn wait_exited(pid: u32, limit: Duration) {
    use rustix::process::{Pid, PidfdFlags};
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return;
    };
    // ESRCH: gone already.
    let Ok(pidfd) = rustix::process::pidfd_open(pid, PidfdFlags::NONBLOCK) else {
        return;
    };
    let Ok(pidfd) = crate::pty::register(pidfd) else {
        return;
    };
    let _ = tokio::time::timeout(limit, pidfd.readable()).await;
}

/// After the shim exited, the end of output follows at once unless a process that escaped
/// the tree holds the slave; give it a moment, then stop reading.
async fn wait_for_eof(session: &Session) -> bool {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(500);
    loop {
        let ready = tokio::time::timeout_at(deadline, session.master.readable()).await;
        match ready {
            Ok(Ok(mut guard)) => {
                guard.clear_ready();
                drop(guard);
                if !matches!(session.read_now(), Ok(false)) {
                    return true;
                }
            }
            _ => return true,
        }
    }
}
