//! The screen: what a person would see in the terminal window, from a real terminal
//! emulator (alacritty's, `alacritty_terminal`) fed the same bytes as the line renderer.
//! Pure: no I/O, and it cannot fail.
//!
//! A grid of 120×40 cells costs about 240 KB, so a session does not keep one from its
//! start: 1,000 idle sessions would hold 240 MB. [`Emulator`] is started when the screen
//! matters (the alternate screen goes on, or a caller asks for the screen) and is seeded
//! with the session's recent output ([`RecentOutput`]), replayed from a line start, so
//! it shows what the window showed; from then on it is fed every read. Reads are queued
//! and parsed when someone looks or the queue is full, leaving out what scrolls away
//! unseen ([`crate::term::plain`]).
//!
//! The emulator keeps no history (rows scrolled out of the window): the session's
//! scrollback keeps the lines. What a person's view needs of the history, its colours,
//! comes from the recent output, which the window keeps whether an emulator runs or not,
//! replayed into an emulator of its own that keeps up to [`HISTORY_ROWS`] rows when a
//! view starts ([`History`]): a session nobody watches holds no history.

use std::collections::VecDeque;
use std::time::Instant;

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::{Config, Term, TermMode};
use alacritty_terminal::vte::ansi::{Processor, Timeout};

use crate::Status;
use crate::term::plain::{self, Escapes};

/// How much recent output a session without an emulator keeps for seeding one: several
/// full frames of a 120×40 program (`top` draws one in about 7 KB, htop its first in 11).
pub(crate) const RECENT_OUTPUT_BYTES: usize = 32 * 1024;

/// How much output a running emulator lets wait before parsing it: enough that a flood's
/// lines mostly scroll away unparsed, little beside the grid it feeds.
pub(crate) const BACKLOG_BYTES: usize = 64 * 1024;

/// How many rows scrolled out of the window a person's view gets in colour at most
/// ([`History`]): as many as the lines a view starts from (`watch`'s 1,000), and one
/// block of alacritty's history, which it allocates 1,000 rows at a time (24 bytes a
/// cell: 3.6 MiB in all for a 120×40 window, measured in BENCHMARKS.md), for as long as
/// the view's start takes.
pub(crate) const HISTORY_ROWS: usize = 1000;

/// What the terminal window shows now: [`PtyService::screen`](crate::PtyService::screen),
/// and the `screen` of a reply while a full-screen program has the alternate screen on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Screen {
    /// The visible rows, top first, each without trailing blanks; blank rows at the bottom
    /// are left out.
    pub lines: Vec<String>,
    /// Where the cursor is, 0-based.
    pub cursor: Position,
    /// The window's width in cells.
    pub cols: u16,
    /// The window's height in rows.
    pub rows: u16,
    /// Whether a full-screen program has the alternate screen on.
    pub alt_screen: bool,
    /// Whether the process still runs.
    pub status: Status,
}

impl Screen {
    /// The visible rows joined by `\n`: the readable form.
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }
}

/// A cell of the screen, 0-based from the top left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    /// The row, 0 at the top.
    pub row: u16,
    /// The column, 0 at the left.
    pub col: u16,
}

/// How the program asked the terminal to encode keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct KeyModes {
    /// DECCKM (`ESC[?1h`): cursor keys send `ESC O A` instead of `ESC [ A`.
    pub(crate) app_cursor: bool,
    /// DECKPAM (`ESC =`): the keypad sends application sequences.
    pub(crate) app_keypad: bool,
}

/// A window size that alacritty can take.
struct Size {
    cols: u16,
    rows: u16,
}

impl Dimensions for Size {
    fn total_lines(&self) -> usize {
        usize::from(self.rows)
    }

    fn screen_lines(&self) -> usize {
        usize::from(self.rows)
    }

    fn columns(&self) -> usize {
        usize::from(self.cols)
    }
}

/// A session's terminal emulator.
pub(crate) struct Emulator {
    term: Term<VoidListener>,
    parser: Processor,
    /// Follows the parser, for what [`feed_skipping`](Self::feed_skipping) may leave out.
    escapes: Escapes,
    cols: u16,
    rows: u16,
}

impl Emulator {
    /// An empty window `cols`×`rows` (each at least 1) that keeps `history` rows scrolled
    /// out of it: for a view's history in colour, and for tests that compare what left
    /// the window.
    pub(crate) fn with_history(cols: u16, rows: u16, history: usize) -> Emulator {
        let (cols, rows) = (cols.max(1), rows.max(1));
        let config = Config {
            scrolling_history: history,
            ..Config::default()
        };
        Emulator {
            term: Term::new(config, &Size { cols, rows }, VoidListener),
            parser: Processor::new(),
            escapes: Escapes::default(),
            cols,
            rows,
        }
    }

    /// An emulator seeded with `recent`, the session's latest output, keeping no history:
    /// the session's own scrollback keeps the lines, the emulator only the window.
    pub(crate) fn seeded(cols: u16, rows: u16, recent: &RecentOutput) -> Emulator {
        Emulator::replayed(cols, rows, 0, recent)
    }

    /// An emulator keeping `history` rows, fed `recent`, the session's latest output.
    fn replayed(cols: u16, rows: u16, history: usize, recent: &RecentOutput) -> Emulator {
        let mut emulator = Emulator::with_history(cols, rows, history);
        let (front, back) = recent.replay();
        emulator.feed(front);
        emulator.feed(back);
        emulator
    }

    /// Feeds output as it came from the PTY.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        self.parser.advance(&mut self.term, bytes);
        self.escapes.advance(bytes, self.rows);
    }

    /// Feeds output as it came from the PTY, leaving out the middle of plain runs that
    /// would scroll out of the window unseen: the screen ends the same as with
    /// [`feed`](Self::feed) (see [`crate::term::plain`] for why).
    pub(crate) fn feed_skipping(&mut self, bytes: &[u8]) {
        self.feed_batch(bytes, true);
    }

    /// [`feed_skipping`](Self::feed_skipping), or with `leave_out` false the same feeds
    /// cut in the same places with nothing left out: alacritty's screen can depend on
    /// where its input is cut (an invalid UTF-8 byte just before a synchronized update's
    /// start), so the tests compare the two.
    fn feed_batch(&mut self, bytes: &[u8], leave_out: bool) {
        let mut at = 0;
        while at < bytes.len() {
            if self.escapes.may_skip() && self.rows >= 2 {
                let run = plain::run(&bytes[at..], self.rows);
                if run.len > 0 {
                    let run_end = at + run.len;
                    match run.skip {
                        Some(skip) => {
                            self.feed(&bytes[at..at + skip.start]);
                            let resume = if leave_out && !self.syncing() {
                                skip.end
                            } else {
                                skip.start
                            };
                            self.feed(&bytes[at + resume..run_end]);
                        }
                        None => self.feed(&bytes[at..run_end]),
                    }
                    at = run_end;
                    continue;
                }
            }
            // Something else: feed it up to the next line's start, where a run may begin.
            let end = bytes[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |i| at + i + 1);
            self.feed(&bytes[at..end]);
            at = end;
        }
    }

    /// Whether a synchronized update (`ESC[?2026h`) holds output back.
    fn syncing(&self) -> bool {
        self.parser.sync_timeout().pending_timeout() || self.parser.sync_bytes_count() > 0
    }

    /// Ends a synchronized update that has outlived its timeout by `now`, as a terminal
    /// does: a program that died inside one must not freeze the screen.
    pub(crate) fn end_stale_sync(&mut self, now: Instant) {
        if self
            .parser
            .sync_timeout()
            .sync_timeout()
            .is_some_and(|deadline| deadline <= now)
        {
            self.parser.stop_sync(&mut self.term);
        }
    }

    /// Follows a new window size.
    pub(crate) fn resize(&mut self, cols: u16, rows: u16) {
        let (cols, rows) = (cols.max(1), rows.max(1));
        if (cols, rows) != (self.cols, self.rows) {
            self.term.resize(Size { cols, rows });
            self.escapes.resized();
            (self.cols, self.rows) = (cols, rows);
        }
    }

    /// Whether the alternate screen is on.
    pub(crate) fn alt_screen(&self) -> bool {
        self.term.mode().contains(TermMode::ALT_SCREEN)
    }

    /// How keys are to be encoded now.
    pub(crate) fn key_modes(&self) -> KeyModes {
        let mode = self.term.mode();
        KeyModes {
            app_cursor: mode.contains(TermMode::APP_CURSOR),
            app_keypad: mode.contains(TermMode::APP_KEYPAD),
        }
    }

    /// The visible row `row` as text, trailing blanks trimmed: a wide character once (its
    /// spacer cell is skipped), combining characters after their base.
    pub(crate) fn row_text(&self, row: u16) -> String {
        self.text_of(Line(i32::from(row)))
    }

    /// The text of grid line `line` (negative: scrolled out), as [`row_text`](Self::row_text).
    fn text_of(&self, line: Line) -> String {
        let mut text = String::with_capacity(usize::from(self.cols));
        self.push_text(line, &mut text);
        let trimmed = text.trim_end_matches(' ').len();
        text.truncate(trimmed);
        text
    }

    /// Appends the characters of grid line `line` to `text`: a wide character once (its
    /// spacer cells are skipped), combining characters after their base.
    fn push_text(&self, line: Line, text: &mut String) {
        let grid = self.term.grid();
        let line = &grid[line];
        for col in 0..grid.columns() {
            let cell = &line[Column(col)];
            if cell
                .flags
                .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
            {
                continue;
            }
            text.push(cell.c);
            if let Some(zero_width) = cell.zerowidth() {
                text.extend(zero_width);
            }
        }
    }

    /// Where the cursor is.
    pub(crate) fn cursor(&self) -> Position {
        let point = self.term.grid().cursor.point;
        Position {
            row: u16::try_from(point.line.0.max(0)).unwrap_or(0),
            col: u16::try_from(point.column.0)
                .unwrap_or(u16::MAX)
                .min(self.cols - 1),
        }
    }

    /// The bytes that draw the window as it is now, colours and cursor included
    /// ([`crate::term::frame`]).
    pub(crate) fn draw(&self) -> Vec<u8> {
        crate::term::frame::draw(&self.term)
    }

    /// The lines kept, from the oldest row of the history down to the cursor's, as text
    /// and in colour ([`crate::term::frame::coloured_lines`]).
    pub(crate) fn coloured_lines(&self) -> Vec<(String, String)> {
        crate::term::frame::coloured_lines(&self.term)
    }

    /// What the window shows now.
    pub(crate) fn snapshot(&self, status: Status) -> Screen {
        let mut lines: Vec<String> = (0..self.rows).map(|row| self.row_text(row)).collect();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        Screen {
            lines,
            cursor: self.cursor(),
            cols: self.cols,
            rows: self.rows,
            alt_screen: self.alt_screen(),
            status,
        }
    }
}

#[cfg(test)]
impl Emulator {
    /// An empty window `cols`×`rows` (each at least 1) that keeps no history.
    pub(crate) fn new(cols: u16, rows: u16) -> Emulator {
        Emulator::with_history(cols, rows, 0)
    }

    /// The lines of everything the emulator holds, history and window, oldest first: rows
    /// joined by their wrap marks, as a terminal copies them (without the blank a wide
    /// character leaves at the end of a row it did not fit). The rows
    /// counted (from the oldest) in `cuts` end a line whatever their wrap mark says: a
    /// clear of the screen scrolls the window into the history only down to its last row
    /// with text, so that a wrap mark above blank rows joins the history to what comes
    /// after the clear. The rows counted in `skip` are left out (a frame the renderer
    /// replaced unread).
    pub(crate) fn joined_lines(
        &self,
        cuts: &[usize],
        skip: &[std::ops::Range<usize>],
    ) -> Vec<String> {
        let grid = self.term.grid();
        let kept = grid.history_size() as i32;
        let mut lines = Vec::new();
        let mut line = String::new();
        for index in -kept..i32::from(self.rows) {
            let row = &grid[Line(index)];
            let oldest = usize::try_from(index + kept).expect("from the oldest row on");
            if skip.iter().any(|range| range.contains(&oldest)) {
                continue;
            }
            self.push_text(Line(index), &mut line);
            if cuts.contains(&oldest)
                || !row[Column(grid.columns() - 1)]
                    .flags
                    .contains(Flags::WRAPLINE)
            {
                let trimmed = line.trim_end_matches(' ').len();
                line.truncate(trimmed);
                lines.push(std::mem::take(&mut line));
            }
        }
        if !line.is_empty() {
            lines.push(line.trim_end_matches(' ').to_owned());
        }
        lines
    }

    /// How many rows scrolled out of the window are kept.
    pub(crate) fn history_len(&self) -> usize {
        self.term.grid().history_size()
    }

    /// The rows scrolled out of the window, oldest first, as [`row_text`](Self::row_text).
    pub(crate) fn history(&self) -> Vec<String> {
        let kept = self.term.grid().history_size();
        (1..=kept)
            .rev()
            .map(|back| self.text_of(Line(-(back as i32))))
            .collect()
    }
}

/// A session's window: its size and what it shows, from an [`Emulator`] once one is
/// started, until then from the recent output that will seed it.
pub(crate) struct Window {
    cols: u16,
    rows: u16,
    emulator: Option<Box<Emulator>>,
    /// Output for the running emulator, not yet parsed: at most [`BACKLOG_BYTES`].
    backlog: Vec<u8>,
    /// The latest output, kept while an emulator runs too: it seeds the emulator when one
    /// starts, and draws the history in colour when a view starts.
    recent: RecentOutput,
}

impl Window {
    /// A window `cols`×`rows` without an emulator.
    pub(crate) fn new(cols: u16, rows: u16) -> Window {
        Window {
            cols,
            rows,
            emulator: None,
            backlog: Vec::new(),
            recent: RecentOutput::default(),
        }
    }

    /// Feeds output as it came from the PTY. With `start` (the program addresses the
    /// screen: it moved the cursor up or to a row, cleared the screen, or turned the
    /// alternate screen on) an emulator is started, seeded with the recent output, this
    /// feed included, so it draws from the line the program started drawing on.
    pub(crate) fn feed(&mut self, bytes: &[u8], start: bool, modes: KeyModes) {
        self.recent.push(bytes);
        if self.emulator.is_some() {
            self.backlog.extend_from_slice(bytes);
            if self.backlog.len() >= BACKLOG_BYTES {
                self.catch_up();
            }
            return;
        }
        if start {
            self.ensure(modes);
        }
    }

    /// Parses the backlog, and lets its memory go: a session that was looked at holds
    /// none.
    fn catch_up(&mut self) {
        let backlog = std::mem::take(&mut self.backlog);
        if let Some(emulator) = &mut self.emulator {
            emulator.feed_skipping(&backlog);
        }
    }

    /// Starts the emulator if there is none, from the recent output; `modes` are the key
    /// modes the program set (maybe before the recent output began). Returns it up to
    /// date at `now`.
    pub(crate) fn start(&mut self, modes: KeyModes, now: Instant) -> &mut Emulator {
        let emulator = self.ensure(modes);
        emulator.end_stale_sync(now);
        emulator
    }

    /// The emulator, started if there is none, with the backlog parsed.
    fn ensure(&mut self, modes: KeyModes) -> &mut Emulator {
        self.catch_up();
        let (cols, rows) = (self.cols, self.rows);
        let recent = &self.recent;
        self.emulator.get_or_insert_with(|| {
            let mut emulator = Emulator::seeded(cols, rows, recent);
            if modes.app_cursor && !emulator.key_modes().app_cursor {
                emulator.feed(b"\x1b[?1h");
            }
            if modes.app_keypad && !emulator.key_modes().app_keypad {
                emulator.feed(b"\x1b=");
            }
            Box::new(emulator)
        })
    }

    /// The emulator up to date at `now`, if one runs.
    pub(crate) fn emulator(&mut self, now: Instant) -> Option<&Emulator> {
        self.catch_up();
        let emulator = self.emulator.as_deref_mut()?;
        emulator.end_stale_sync(now);
        Some(emulator)
    }

    /// Follows a new window size; the output so far is parsed at the old one.
    pub(crate) fn resize(&mut self, cols: u16, rows: u16) {
        self.catch_up();
        (self.cols, self.rows) = (cols, rows);
        if let Some(emulator) = &mut self.emulator {
            emulator.resize(cols, rows);
        }
    }

    /// The window's size, `(cols, rows)`.
    pub(crate) fn size(&self) -> (u16, u16) {
        (self.cols, self.rows)
    }

    /// What the history of a view's start is drawn from ([`History`]): a copy of the
    /// recent output (at most [`RECENT_OUTPUT_BYTES`]), to replay without the session's
    /// lock.
    pub(crate) fn history(&self) -> History {
        History {
            cols: self.cols,
            rows: self.rows,
            recent: self.recent.clone(),
        }
    }
}

/// A window's recent output and size, from [`Window::history`]: what a view's start
/// draws the history in colour from.
pub(crate) struct History {
    cols: u16,
    rows: u16,
    recent: RecentOutput,
}

impl History {
    /// The lines of the recent output, from the oldest of at most [`HISTORY_ROWS`] rows
    /// scrolled out of the window down to the cursor's row, as text and in colour: the
    /// recent output replayed into an emulator of its own that keeps a history. The
    /// session's emulator keeps none, so that a session costs no history while nobody
    /// looks; this one lives as long as a view's start.
    pub(crate) fn coloured_lines(&self) -> Vec<(String, String)> {
        Emulator::replayed(self.cols, self.rows, HISTORY_ROWS, &self.recent).coloured_lines()
    }
}

/// The latest output of a session that has no emulator yet, at most
/// [`RECENT_OUTPUT_BYTES`]: enough to draw its window again.
#[derive(Default, Clone)]
pub(crate) struct RecentOutput {
    bytes: VecDeque<u8>,
    /// Whether older output was let go (the kept bytes may start inside a line).
    cut: bool,
}

impl RecentOutput {
    /// Keeps `bytes`, letting the oldest go past the bound.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let bytes = if bytes.len() > RECENT_OUTPUT_BYTES {
            self.bytes.clear();
            self.cut = true;
            &bytes[bytes.len() - RECENT_OUTPUT_BYTES..]
        } else {
            bytes
        };
        let excess = (self.bytes.len() + bytes.len()).saturating_sub(RECENT_OUTPUT_BYTES);
        if excess > 0 {
            self.bytes.drain(..excess);
            self.cut = true;
        }
        self.bytes.extend(bytes);
    }

    /// The bytes to replay, in two slices: all of them, or, when older output was let
    /// go, those after the first line end (the cut may have split an escape sequence or a
    /// character).
    fn replay(&self) -> (&[u8], &[u8]) {
        let (front, back) = self.bytes.as_slices();
        if !self.cut {
            return (front, back);
        }
        if let Some(at) = memchr_newline(front) {
            (&front[at + 1..], back)
        } else if let Some(at) = memchr_newline(back) {
            (&[], &back[at + 1..])
        } else {
            (front, back)
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    /// The screen after feeding `bytes` to a 120×40 window, whole and in chunks of every
    /// size from 1 to 7: all must agree.
    fn screen_of(bytes: &[u8]) -> Screen {
        let mut whole = Emulator::new(120, 40);
        whole.feed(bytes);
        let screen = whole.snapshot(Status::Running);
        for size in 1..=7 {
            let mut chunked = Emulator::new(120, 40);
            for chunk in bytes.chunks(size) {
                chunked.feed(chunk);
            }
            assert_eq!(
                chunked.snapshot(Status::Running),
                screen,
                "chunks of {size}"
            );
        }
        screen
    }

    #[track_caller]
    fn check(bytes: &[u8], expect: Expect) {
        let screen = screen_of(bytes);
        expect.assert_eq(&format!(
            "{}\n-- cursor {},{} alt {} modes {:?}\n",
            screen.text(),
            screen.cursor.row,
            screen.cursor.col,
            screen.alt_screen,
            {
                let mut emulator = Emulator::new(120, 40);
                emulator.feed(bytes);
                emulator.key_modes()
            }
        ));
    }

    #[test]
    fn plain_lines_and_the_cursor() {
        check(
            b"one\r\ntwo\r\n$ ",
            expect![[r#"
                one
                two
                $
                -- cursor 2,2 alt false modes KeyModes { app_cursor: false, app_keypad: false }
            "#]],
        );
    }

    #[test]
    fn wide_characters_and_overwrites() {
        check(
            "日本\x08\x08X\r\n".as_bytes(),
            expect![[r#"
                日X
                -- cursor 1,0 alt false modes KeyModes { app_cursor: false, app_keypad: false }
            "#]],
        );
    }

    #[test]
    fn a_full_reset_leaves_the_alternate_screen() {
        check(
            b"before\r\n\x1b[?1049h\x1b[?1h\x1b=drawn\x1bc$ ",
            expect![[r#"
                $
                -- cursor 0,2 alt false modes KeyModes { app_cursor: false, app_keypad: false }
            "#]],
        );
    }

    /// Only the first `n` rows of a screen, for the recordings' long screens.
    fn head(screen: &Screen, n: usize) -> String {
        screen
            .lines
            .iter()
            .take(n)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn recorded_vim_edit() {
        // vim --clean on a two-line file: `ggO`, a line, Escape, `jj`, `:w`.
        let screen = screen_of(include_bytes!("../../test_data/screen/vim.raw"));
        expect![[r#"
            inserted by the agent
            first line
            second line
            ~"#]]
        .assert_eq(&head(&screen, 4));
        assert!(screen.alt_screen);
        assert_eq!(screen.cursor, Position { row: 2, col: 10 });
        let status = screen.lines.last().expect("a status line");
        assert!(status.contains("written"), "{status:?}");
    }

    #[test]
    fn recorded_less_search() {
        // less on a 500-line file, then `/needle` Enter.
        let screen = screen_of(include_bytes!("../../test_data/screen/less.raw"));
        assert_eq!(screen.lines[0], "line 250 needle here");
        assert_eq!(screen.lines.len(), 40);
        assert_eq!(screen.lines[39], ":");
        assert!(screen.alt_screen);
    }

    #[test]
    fn recorded_htop() {
        let screen = screen_of(include_bytes!("../../test_data/screen/htop.raw"));
        assert!(screen.alt_screen);
        assert!(
            screen.lines.iter().take(4).any(|l| l.contains("Tasks:")),
            "{}",
            screen.text()
        );
        let header = screen
            .lines
            .iter()
            .position(|line| line.contains("PID USER"))
            .expect("the process list's header");
        assert!(
            screen.lines.len() > header + 3,
            "processes under the header"
        );
        assert!(screen.lines.last().unwrap().contains("F10Quit"));
    }

    #[test]
    fn recorded_top_on_the_main_screen_is_one_clean_frame() {
        let screen = screen_of(include_bytes!("../../test_data/screen/top.raw"));
        assert!(!screen.alt_screen);
        assert!(
            screen.lines[0].starts_with("top - "),
            "{:?}",
            screen.lines[0]
        );
        let frames = screen
            .lines
            .iter()
            .filter(|l| l.starts_with("top - "))
            .count();
        assert_eq!(frames, 1, "{}", screen.text());
        assert!(screen.lines[6].trim_start().starts_with("PID USER"));
    }

    #[test]
    fn recorded_nano() {
        // nano on a two-line file: `hello nano`, Ctrl-O, Enter.
        let screen = screen_of(include_bytes!("../../test_data/screen/nano.raw"));
        assert!(screen.lines[0].contains("GNU nano"));
        assert_eq!(screen.lines[1], "hello nanofirst line");
        assert!(screen.text().contains("[ Wrote 2 lines ]"));
        assert_eq!(screen.cursor, Position { row: 1, col: 10 });
    }

    #[test]
    fn resize_follows_the_window() {
        let mut emulator = Emulator::new(120, 40);
        emulator.feed(b"abc");
        emulator.resize(80, 24);
        let screen = emulator.snapshot(Status::Running);
        assert_eq!((screen.cols, screen.rows), (80, 24));
        assert_eq!(screen.lines, ["abc"]);
    }

    #[test]
    fn a_window_started_when_the_program_addresses_the_screen_draws_it_whole() {
        let top = include_bytes!("../../test_data/screen/top.raw");
        let mut shell = b"$ top -d 0.5\r\n".to_vec();
        shell.extend_from_slice(&"x\r\n".repeat(20_000).into_bytes());
        let mut window = Window::new(120, 40);
        let mut renderer = crate::term::render::Renderer::new(120, 40);
        let mut out = crate::term::output::Rendered::default();
        for chunk in shell.chunks(4093).chain(top.chunks(4093)) {
            renderer.feed(chunk, &mut out);
            window.feed(chunk, renderer.addresses_screen(), KeyModes::default());
        }
        let seeded = window
            .emulator(Instant::now())
            .expect("top started the emulator");
        let mut live = Emulator::new(120, 40);
        live.feed(&shell);
        live.feed(top);
        assert_eq!(
            seeded.snapshot(Status::Running),
            live.snapshot(Status::Running)
        );
    }

    /// One piece of output for the skipping property: lines of text (some long enough to
    /// wrap, some with colours, tabs, wide characters), everything that may make a skip
    /// wrong — scroll regions, cursor moves, the alternate screen, strings, synchronized
    /// updates, sequences cut short, cancels, resets — and short jumbles of the bytes
    /// sequences are made of.
    fn piece() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let line = (0usize..30, 0usize..6, any::<bool>()).prop_map(|(width, kind, crlf)| {
            let text: String = "abcdefghijklmnopqrstuvwxyz0123"[..width].into();
            let text = match kind {
                0 => format!("\x1b[3{}m{text}\x1b[0m", width % 8),
                1 => format!("{text}\t|"),
                2 => format!("日本{text}"),
                3 => format!("{text}\x08\x08X"),
                _ => text,
            };
            format!("{text}{}", if crlf { "\r\n" } else { "\n" }).into_bytes()
        });
        let lines = proptest::collection::vec(line, 1..40).prop_map(|lines| lines.concat());
        let special: &[&[u8]] = &[
            b"\x1b[2;4r",
            b"\x1b[r",
            b"\x1b[3;1H",
            b"\x1b[7;1H",
            b"\x1b[H",
            b"\x1b[2J",
            b"abcdefghijklmnopqrstuvwxyz0123456789\r\n",
            b"\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n",
            b"\x1b[A\x1b[A",
            b"\x1b[?1049h",
            b"\x1b[?1049l",
            b"\x1b]0;title",
            b"\x07",
            b"\x1bP1$r",
            b"\x1b\\",
            b"\x1b[?2026h",
            b"\x1b[?2026l",
            b"\x1b[3",
            b"\x1b[?6h",
            b"\x1b[20h",
            b"\x1b[4h",
            b"\x1b[?7l",
            b"\x1b(0",
            b"\x0e",
            b"\x0f",
            b"\x18",
            b"\x1bc",
            b"\x1b[5b",
            b"\x1bM",
        ];
        let special = proptest::sample::select(special).prop_map(<[u8]>::to_vec);
        // Bytes drawn from what sequences are made of, in any order.
        let soup: &[u8] = b"\x1b\x1b[[]P_?0123;;:rrmhHbc\r\n\t\x08\x07\x18\x9c\xe6ax ";
        let soup = proptest::collection::vec(proptest::sample::select(soup), 1..12);
        prop_oneof![3 => lines, 3 => special, 1 => soup]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// A window fed in chunks, its backlog parsed with runs' middles left out, shows
        /// exactly what an emulator fed every byte shows.
        #[test]
        fn leaving_out_what_scrolls_away_changes_nothing(
            pieces in proptest::collection::vec(piece(), 1..30),
            chunk in 1usize..5000,
            rows in 2u16..8,
            looks in proptest::collection::vec(0usize..30, 0..3),
        ) {
            let bytes = pieces.concat();
            let mut whole = Emulator::new(12, rows);
            let mut skipping = Emulator::new(12, rows);
            for piece in bytes.chunks(chunk) {
                whole.feed_batch(piece, false);
                skipping.feed_batch(piece, true);
            }
            proptest::prop_assert_eq!(
                skipping.snapshot(Status::Running),
                whole.snapshot(Status::Running)
            );
            proptest::prop_assert_eq!(skipping.key_modes(), whole.key_modes());
            // Where alacritty does not depend on the cuts, the window, looking now and then,
            // shows what an emulator fed every byte at once shows.
            if std::str::from_utf8(&bytes).is_err() {
                return Ok(());
            }
            let mut straight = Emulator::new(12, rows);
            straight.feed(&bytes);
            let mut window = Window::new(12, rows);
            let now = Instant::now();
            window.start(KeyModes::default(), now);
            for (i, piece) in pieces.iter().enumerate() {
                window.feed(piece, false, KeyModes::default());
                if looks.contains(&i) {
                    window.emulator(now);
                }
            }
            let seen = window.emulator(now).expect("started").snapshot(Status::Running);
            proptest::prop_assert_eq!(seen, straight.snapshot(Status::Running));
        }
    }

    /// Output that a careless skip would get wrong: each case breaks one condition of
    /// [`crate::term::plain`].
    #[test]
    fn leaving_out_keeps_to_its_conditions() {
        let lines = |from: usize, n: usize| -> Vec<u8> {
            (from..from + n)
                .flat_map(|i| format!("line {i}\r\n").into_bytes())
                .collect()
        };
        let cases: Vec<(&str, Vec<u8>)> = vec![
            // A scroll region with the cursor below it: line feeds stop on the last row.
            (
                "cursor below a scroll region",
                [&b"\x1b[2;4r\x1b[5;1H"[..], &lines(0, 60)].concat(),
            ),
            // REP repeats the last character printed, which the left-out part printed.
            (
                "REP after blank lines",
                [
                    &b"first\r\n"[..],
                    &lines(0, 60),
                    &b"\r\n".repeat(30),
                    b"\x1b[3b",
                ]
                .concat(),
            ),
            // Inside a string the lines print nothing.
            (
                "an open OSC",
                [&b"\x1b]0;"[..], &lines(0, 60), b"\x07", &lines(60, 3)].concat(),
            ),
            // A sequence cut before the run: its first bytes end it.
            (
                "a CSI cut short",
                [&b"\x1b[?1049"[..], &b"h\r\n"[..], &lines(0, 60)].concat(),
            ),
            // A synchronized update that outgrows its buffer is shown at that point.
            (
                "a synchronized update overflowing",
                [&b"\x1b[?2026h"[..], &lines(0, 250_000)].concat(),
            ),
            // The column where the kept part starts.
            (
                "bare line feeds",
                [&b"abcdefgh\n"[..], &b"x\n".repeat(60), &lines(0, 3)].concat(),
            ),
        ];
        for (what, bytes) in cases {
            let mut straight = Emulator::new(10, 8);
            straight.feed(&bytes);
            let mut skipping = Emulator::new(10, 8);
            skipping.feed_skipping(&bytes);
            assert_eq!(
                skipping.snapshot(Status::Running),
                straight.snapshot(Status::Running),
                "{what}"
            );
        }
    }

    #[test]
    fn a_flood_is_mostly_left_out_and_shows_its_last_lines() {
        let bytes: Vec<u8> = (1..=20_000)
            .flat_map(|n| format!("{n}\r\n").into_bytes())
            .collect();
        let mut window = Window::new(80, 24);
        window.start(KeyModes::default(), Instant::now());
        for chunk in bytes.chunks(4093) {
            window.feed(chunk, false, KeyModes::default());
        }
        let screen = window
            .emulator(Instant::now())
            .expect("started")
            .snapshot(Status::Running);
        assert_eq!(screen.lines.len(), 23);
        assert_eq!(screen.lines[0], "19978");
        assert_eq!(screen.lines[22], "20000");
        assert_eq!(screen.cursor, Position { row: 23, col: 0 });
    }

    #[test]
    fn a_synchronized_update_left_open_ends_at_its_timeout() {
        let mut window = Window::new(80, 24);
        let now = Instant::now();
        window.start(KeyModes::default(), now);
        window.feed(b"before\r\n\x1b[?2026hduring", false, KeyModes::default());
        let held = window
            .emulator(now)
            .expect("started")
            .snapshot(Status::Running);
        assert_eq!(held.lines, ["before"]);
        let later = now + std::time::Duration::from_secs(1);
        let ended = window
            .emulator(later)
            .expect("started")
            .snapshot(Status::Running);
        assert_eq!(ended.lines, ["before", "during"]);
    }

    /// A view's history in colour: lines printed in colour and scrolled out of the window
    /// come back with their SGR, whether the session's emulator ran before they were
    /// printed or not, and at most [`HISTORY_ROWS`] rows of them.
    #[test]
    fn the_history_comes_in_its_colours() {
        let mut output = b"\x1b[31merror: red\x1b[0m plain\r\n\x1b[1;32mok\x1b[0m\r\n".to_vec();
        for n in 0..30 {
            output.extend_from_slice(format!("line {n}\r\n").as_bytes());
        }
        output.extend_from_slice(b"$ ");
        for started in [false, true] {
            let mut window = Window::new(80, 10);
            if started {
                window.start(KeyModes::default(), Instant::now());
            }
            for chunk in output.chunks(7) {
                window.feed(chunk, false, KeyModes::default());
            }
            let lines = window.history().coloured_lines();
            let texts: Vec<&str> = lines.iter().map(|(text, _)| text.as_str()).collect();
            assert_eq!(texts.len(), 33, "{texts:?}");
            assert_eq!(
                lines[0],
                (
                    "error: red plain".to_owned(),
                    "\x1b[0;31merror: red\x1b[0m plain".to_owned()
                ),
                "started {started}"
            );
            assert_eq!(lines[1].1, "\x1b[0;1;32mok\x1b[0m");
            assert_eq!(lines[2], ("line 0".to_owned(), "line 0".to_owned()));
            assert_eq!(texts[32], "$");
            // The session's emulator keeps the window alone.
            let live = window.emulator(Instant::now());
            assert_eq!(live.map(Emulator::history_len), started.then_some(0));
        }
        // The bound: of a flood of rows, the last HISTORY_ROWS and the window's.
        let mut window = Window::new(80, 10);
        for n in 0..5000 {
            window.feed(format!("{n}\r\n").as_bytes(), false, KeyModes::default());
        }
        let lines = window.history().coloured_lines();
        assert_eq!(lines.len(), HISTORY_ROWS + 10);
        assert_eq!(lines[0].0, format!("{}", 5000 - HISTORY_ROWS - 9));
    }

    #[test]
    fn recent_output_is_replayed_from_a_line_start() {
        // Output that was never cut is replayed whole.
        let mut recent = RecentOutput::default();
        recent.push(b"partial \xe6\x97");
        recent.push(b"\xa5 line\r\n$ ");
        let seeded = Emulator::seeded(120, 40, &recent);
        assert_eq!(
            seeded.snapshot(Status::Running).lines,
            ["partial 日 line", "$"]
        );
        // Cut output starts after its first line end.
        let mut recent = RecentOutput::default();
        recent.push(&b"y".repeat(RECENT_OUTPUT_BYTES - 3));
        recent.push(b"\x1b[31mred\r\nnext\r\n");
        let seeded = Emulator::seeded(120, 40, &recent);
        assert_eq!(seeded.snapshot(Status::Running).lines, ["next"]);
    }
}
