//! People beside the agent: watching a session's output as it comes ([`Watch`]) and
//! typing into it ([`PtyService::person_input`]).
//!
//! A watcher gets the raw bytes the program writes, as a terminal would, so that a
//! terminal emulator (xterm.js in a browser, a person's own terminal) shows what the
//! program draws. It starts from the session's recent lines and its pending line. What a
//! person types goes to the same terminal as an agent's sends, but is neither recorded
//! nor echoed into any reply by the service: only the program's own echo, if it echoes
//! (a password prompt does not), reaches the agent.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::broadcast;

use crate::tap::Live;
use crate::{Error, Owner, PtyService, Result, SessionId, Status};

/// How many recent lines a watcher starts from at most.
const RECENT_LINES: u64 = 1000;

/// How long a person's keystrokes may wait for room in the terminal's input queue.
const PERSON_WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// A live view of one session's output, from [`PtyService::watch`].
///
/// Dropping it stops the view. A watcher never slows the session: one that falls behind
/// by more than a few MiB is skipped ahead ([`WatchEvent::Skipped`]).
pub struct Watch {
    /// The session's recent completed lines (at most 1,000, each ending in `\r\n`)
    /// followed by its pending line: what to show before the live output. Those still in
    /// the window, and those that scrolled out of it as far as the screen emulator keeps
    /// them (the rows of the last 32 KiB of output, at most 1,000), come in their colours
    /// and attributes, as SGR sequences ending with a reset.
    pub recent: String,
    /// The window's width when the view began.
    pub cols: u16,
    /// The window's height when the view began.
    pub rows: u16,
    /// Whether a full-screen program had the alternate screen on when the view began
    /// (its screen is not in `recent`, but in `frame`).
    pub alt_screen: bool,
    /// With the alternate screen on, the bytes that draw the window as it was when the
    /// view began, on an empty terminal of its size: every cell in its colours and
    /// attributes, the cursor where the program left it, the program's key and mouse
    /// modes. What to show instead of `recent`, before the live output.
    pub frame: Option<Vec<u8>>,
    /// The default colours the session's terminal has ([`Config::colours`](crate::Config)):
    /// what a program that asks is told, so what a view draws on.
    pub colours: crate::Colours,
    receiver: broadcast::Receiver<Live>,
}

/// What a [`Watch`] brings next.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WatchEvent {
    /// Bytes the program wrote, exactly (escape sequences included).
    Output(Arc<[u8]>),
    /// The watcher fell behind: this many chunks of output were skipped.
    Skipped(u64),
    /// The window was resized (by an agent's `cols`/`rows`, or by a person): the output
    /// after this is drawn for the new size.
    Resize {
        /// The new width in cells.
        cols: u16,
        /// The new height in rows.
        rows: u16,
    },
    /// The output ended: the session's process tree is gone.
    Ended,
}

impl Watch {
    /// The next chunk of output, or the end.
    pub async fn next(&mut self) -> WatchEvent {
        match self.receiver.recv().await {
            Ok(Live::Output(bytes)) => WatchEvent::Output(bytes),
            Ok(Live::Resize(cols, rows)) => WatchEvent::Resize { cols, rows },
            Err(broadcast::error::RecvError::Lagged(chunks)) => WatchEvent::Skipped(chunks),
            Err(broadcast::error::RecvError::Closed) => WatchEvent::Ended,
        }
    }
}

/// Puts coloured lines in place of the last of `shown` (the pending line last) where
/// their text is the same as in `lines` (the same, as text): as many as agree, counted
/// from the last. The top of the window or of the history may hold the end of a longer
/// line, and a program that moved the cursor may show other text than its lines: those
/// stay as they are.
fn coloured(lines: &[String], shown: &mut [String], window: Vec<(String, String)>) {
    let mut lines = lines.iter().zip(shown.iter_mut()).rev();
    for (text, drawn) in window.into_iter().rev() {
        match lines.next() {
            Some((line, shown)) if line.trim_end_matches(' ') == text => {
                // The blanks after the text stay (the space after a prompt).
                let blanks = line.len() - text.len();
                *shown = drawn + &" ".repeat(blanks);
            }
            _ => return,
        }
    }
}

impl PtyService {
    /// Starts watching `owner`'s session `id`: its recent lines now, then every byte its
    /// program writes. Moves no read cursor.
    pub fn watch(&self, owner: &Owner, id: &SessionId) -> Result<Watch> {
        let session = self.session(owner, id)?;
        let mut state = session.state();
        let from = state
            .line_end()
            .saturating_sub(RECENT_LINES)
            .max(state.line_begin());
        let mut lines: Vec<String> = state
            .lines_from(from)
            .map(|line| line.strip_suffix('\n').unwrap_or(line).to_owned())
            .collect();
        lines.push(state.pending());
        // The window from the session's own emulator, which has seen all of the output,
        // and what the history is drawn from, replayed once the lock is let go.
        let colours = (!state.in_alt_screen()).then(|| (state.history(), state.coloured_lines()));
        // The chunks after this point reach the receiver: it subscribes under the same
        // lock that the drain reads under.
        let receiver = if state.finished {
            broadcast::Sender::new(1).subscribe()
        } else {
            state.tap.subscribe()
        };
        // The window now, which a resize since the open may have changed.
        let (cols, rows) = state.window_size();
        let alt_screen = state.in_alt_screen();
        let frame = alt_screen.then(|| state.screen_frame());
        drop(state);
        let mut shown = lines.clone();
        if let Some((history, window)) = colours {
            // The history as far as the recent output reaches, then the window over it.
            coloured(&lines, &mut shown, history.coloured_lines());
            coloured(&lines, &mut shown, window);
        }
        let recent = shown.join("\r\n");
        Ok(Watch {
            recent,
            cols,
            rows,
            alt_screen,
            frame,
            colours: self.config().colours,
            receiver,
        })
    }

    /// Writes what a person typed into `owner`'s session `id`, at once: it waits for no
    /// send in flight and for no settle. Unlike [`send`](Self::send) it is never recorded,
    /// and no reply shows it unless the program echoes it.
    ///
    /// Fails with [`Error::NotRunning`] once the process exited, with
    /// [`Error::WriteTimeout`] if the program takes none of it for 5 s, and with
    /// [`Error::InvalidArgument`] past 1 MiB.
    pub async fn person_input(&self, owner: &Owner, id: &SessionId, bytes: &[u8]) -> Result<()> {
        let session = self.session(owner, id)?;
        crate::request::check_data("input", bytes.len())?;
        if let Status::Exited(exit) = session.state().status() {
            return Err(Error::NotRunning {
                id: id.clone(),
                status: exit.to_string(),
            });
        }
        let deadline = Instant::now() + PERSON_WRITE_TIMEOUT;
        session.write(bytes, deadline, PERSON_WRITE_TIMEOUT).await
    }

    /// Resizes `owner`'s session `id` to the window of the person watching it (their own
    /// terminal's size): the kernel tells the program with SIGWINCH, and the renderer and
    /// the screen follow. It waits for a send in flight, as a send's own resize does, but
    /// for no settle, and it moves no read cursor.
    ///
    /// Fails with [`Error::NotRunning`] once the process exited, and with
    /// [`Error::InvalidArgument`] for a size of 0 or past 1,000.
    pub async fn person_resize(
        &self,
        owner: &Owner,
        id: &SessionId,
        cols: u16,
        rows: u16,
    ) -> Result<()> {
        crate::request::window(Some(cols), Some(rows))?;
        let session = self.session(owner, id)?;
        let _turn = session.write_lock.lock().await;
        if let Status::Exited(exit) = session.state().status() {
            return Err(Error::NotRunning {
                id: id.clone(),
                status: exit.to_string(),
            });
        }
        session.resize(Some(cols), Some(rows))
    }
}
