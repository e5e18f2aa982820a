//! The screen: what a person would see in the terminal window, from a real terminal
//! emulator (alacritty's, `alacritty_terminal`) fed the same bytes as the line renderer.
//! Pure: no I/O, and it cannot fail.
//!
//! A grid of 120×40 cells costs about 240 KB, so a session does not keep one from its
//! start: 1,000 idle sessions would hold 240 MB. [`Emulator`] is started when the screen
//! matters (the alternate screen goes on, or a caller asks for the screen) and is seeded
//! with the session's recent output ([`RecentOutput`]), replayed from a line start, so
//! it shows what the window showed; from then on it is fed every read.

use std::collections::VecDeque;

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::{Config, Term, TermMode};
use alacritty_terminal::vte::ansi::Processor;

use crate::Status;

/// How much recent output a session without an emulator keeps for seeding one: several
/// full frames of a 120×40 program (`top` draws one in about 7 KB, htop its first in 11).
pub(crate) const RECENT_OUTPUT_BYTES: usize = 32 * 1024;

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
    cols: u16,
    rows: u16,
}

impl Emulator {
    /// An empty window `cols`×`rows` (each at least 1).
    pub(crate) fn new(cols: u16, rows: u16) -> Emulator {
        let (cols, rows) = (cols.max(1), rows.max(1));
        let config = Config {
            // The session's own scrollback keeps the lines; the emulator only the window.
            scrolling_history: 0,
            ..Config::default()
        };
        Emulator {
            term: Term::new(config, &Size { cols, rows }, VoidListener),
            parser: Processor::new(),
            cols,
            rows,
        }
    }

    /// An emulator seeded with `recent`, the session's latest output.
    pub(crate) fn seeded(cols: u16, rows: u16, recent: &RecentOutput) -> Emulator {
        let mut emulator = Emulator::new(cols, rows);
        let (front, back) = recent.replay();
        emulator.feed(front);
        emulator.feed(back);
        emulator
    }

    /// Feeds output as it came from the PTY.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        self.parser.advance(&mut self.term, bytes);
    }

    /// Follows a new window size.
    pub(crate) fn resize(&mut self, cols: u16, rows: u16) {
        let (cols, rows) = (cols.max(1), rows.max(1));
        self.term.resize(Size { cols, rows });
        (self.cols, self.rows) = (cols, rows);
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
        let grid = self.term.grid();
        let line = &grid[Line(i32::from(row))];
        let mut text = String::with_capacity(usize::from(self.cols));
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
        let trimmed = text.trim_end_matches(' ').len();
        text.truncate(trimmed);
        text
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

/// A session's window: its size and what it shows, from an [`Emulator`] once one is
/// started, until then from the recent output that will seed it.
pub(crate) struct Window {
    cols: u16,
    rows: u16,
    emulator: Option<Box<Emulator>>,
    recent: RecentOutput,
}

impl Window {
    /// A window `cols`×`rows` without an emulator.
    pub(crate) fn new(cols: u16, rows: u16) -> Window {
        Window {
            cols,
            rows,
            emulator: None,
            recent: RecentOutput::default(),
        }
    }

    /// Feeds output as it came from the PTY. With `start` (the program addresses the
    /// screen: it moved the cursor up or to a row, cleared the screen, or turned the
    /// alternate screen on) an emulator is started, seeded with the recent output, this
    /// feed included, so it draws from the line the program started drawing on.
    pub(crate) fn feed(&mut self, bytes: &[u8], start: bool, modes: KeyModes) {
        if let Some(emulator) = &mut self.emulator {
            emulator.feed(bytes);
            return;
        }
        self.recent.push(bytes);
        if start {
            self.start(modes);
        }
    }

    /// Starts the emulator if there is none, from the recent output; `modes` are the key
    /// modes the program set (maybe before the recent output began).
    pub(crate) fn start(&mut self, modes: KeyModes) -> &mut Emulator {
        let (cols, rows) = (self.cols, self.rows);
        let recent = &mut self.recent;
        self.emulator.get_or_insert_with(|| {
            let mut emulator = Emulator::seeded(cols, rows, recent);
            *recent = RecentOutput::default();
            if modes.app_cursor && !emulator.key_modes().app_cursor {
                emulator.feed(b"\x1b[?1h");
            }
            if modes.app_keypad && !emulator.key_modes().app_keypad {
                emulator.feed(b"\x1b=");
            }
            Box::new(emulator)
        })
    }

    /// The emulator, if one runs.
    pub(crate) fn emulator(&self) -> Option<&Emulator> {
        self.emulator.as_deref()
    }

    /// Follows a new window size.
    pub(crate) fn resize(&mut self, cols: u16, rows: u16) {
        (self.cols, self.rows) = (cols, rows);
        if let Some(emulator) = &mut self.emulator {
            emulator.resize(cols, rows);
        }
    }

    /// The window's size, `(cols, rows)`.
    pub(crate) fn size(&self) -> (u16, u16) {
        (self.cols, self.rows)
    }
}

/// The latest output of a session that has no emulator yet, at most
/// [`RECENT_OUTPUT_BYTES`]: enough to draw its window again.
#[derive(Default)]
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
        let screen = screen_of(include_bytes!("../test_data/screen/vim.raw"));
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
        let screen = screen_of(include_bytes!("../test_data/screen/less.raw"));
        assert_eq!(screen.lines[0], "line 250 needle here");
        assert_eq!(screen.lines.len(), 40);
        assert_eq!(screen.lines[39], ":");
        assert!(screen.alt_screen);
    }

    #[test]
    fn recorded_htop() {
        let screen = screen_of(include_bytes!("../test_data/screen/htop.raw"));
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
        let screen = screen_of(include_bytes!("../test_data/screen/top.raw"));
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
        let screen = screen_of(include_bytes!("../test_data/screen/nano.raw"));
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
        let top = include_bytes!("../test_data/screen/top.raw");
        let mut shell = b"$ top -d 0.5\r\n".to_vec();
        shell.extend_from_slice(&"x\r\n".repeat(20_000).into_bytes());
        let mut window = Window::new(120, 40);
        let mut renderer = crate::render::Renderer::new(40);
        let mut out = crate::render::Rendered::default();
        for chunk in shell.chunks(4093).chain(top.chunks(4093)) {
            renderer.feed(chunk, &mut out);
            window.feed(chunk, renderer.addresses_screen(), KeyModes::default());
        }
        let seeded = window.emulator().expect("top started the emulator");
        let mut live = Emulator::new(120, 40);
        live.feed(&shell);
        live.feed(top);
        assert_eq!(
            seeded.snapshot(Status::Running),
            live.snapshot(Status::Running)
        );
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
