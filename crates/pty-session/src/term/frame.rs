//! A screen as the bytes that draw it: what a viewer who comes while a full-screen
//! program runs is shown first, so that it sees the program's screen in the program's
//! colours before the program next repaints. Pure: no I/O.
//!
//! Every cell is written with its attributes (colours, bold, dim, italic, underline,
//! inverse, hidden, strikeout), wide characters once, combining characters after their
//! base; then the cursor goes where the program left it, shown or hidden, with the pen
//! (the attributes the program's next text will have) and the modes that change what a
//! terminal sends back (cursor and keypad keys, bracketed paste, mouse and focus reports).

use std::fmt::Write as _;

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::{Term, TermMode};
use alacritty_terminal::vte::ansi::{Color, NamedColor};

/// The bytes that draw `term`'s screen on an empty terminal of the same size: the
/// alternate screen on (when the program has it on), cleared, every row, the cursor.
pub(crate) fn draw(term: &Term<VoidListener>) -> Vec<u8> {
    let mode = *term.mode();
    let grid = term.grid();
    let mut out = String::with_capacity(grid.columns() * grid.screen_lines() * 2);
    if mode.contains(TermMode::ALT_SCREEN) {
        out.push_str("\x1b[?1049h");
    }
    out.push_str("\x1b[0m\x1b[H\x1b[2J");
    let mut pen = Pen::default();
    for row in 0..grid.screen_lines() {
        let line = &grid[Line(row as i32)];
        let cells: Vec<&Cell> = (0..grid.columns()).map(|col| &line[Column(col)]).collect();
        // Trailing blanks in the default colours need no drawing: the screen was cleared.
        let end = cells
            .iter()
            .rposition(|cell| !is_blank(cell))
            .map_or(0, |last| last + 1);
        if end == 0 {
            continue;
        }
        let _ = write!(out, "\x1b[{};1H", row + 1);
        for cell in &cells[..end] {
            if cell
                .flags
                .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
            {
                continue;
            }
            pen.change_to(Pen::of(cell), &mut out);
            out.push(if cell.c == '\0' { ' ' } else { cell.c });
            if let Some(zero_width) = cell.zerowidth() {
                out.extend(zero_width);
            }
        }
    }
    pen.change_to(Pen::of(&grid.cursor.template), &mut out);
    let point = grid.cursor.point;
    let _ = write!(
        out,
        "\x1b[{};{}H",
        point.line.0.max(0) + 1,
        point.column.0.min(grid.columns().saturating_sub(1)) + 1
    );
    for (flag, on, off) in MODES {
        if mode.contains(*flag) {
            out.push_str(on);
        } else if !off.is_empty() {
            out.push_str(off);
        }
    }
    out.into_bytes()
}

/// The lines from the oldest row of the history (the rows scrolled out of the window
/// that `term` keeps) down to the window's cursor row, rows joined where they wrapped,
/// each as its text and as the bytes that write that text in its colours and attributes
/// (ending with the attributes reset), trailing blanks left out: what a late viewer of a
/// program on the main screen is shown of the history and the window, in colour. The
/// oldest may be the end of a line whose start the history no longer holds.
pub(crate) fn coloured_lines(term: &Term<VoidListener>) -> Vec<(String, String)> {
    let grid = term.grid();
    let last = grid
        .cursor
        .point
        .line
        .0
        .clamp(0, grid.screen_lines().saturating_sub(1) as i32);
    let mut lines = Vec::new();
    let (mut text, mut drawn, mut pen) = (String::new(), String::new(), Pen::default());
    for row in -(grid.history_size() as i32)..=last {
        let line = &grid[Line(row)];
        let cells: Vec<&Cell> = (0..grid.columns()).map(|col| &line[Column(col)]).collect();
        let wrapped = cells
            .last()
            .is_some_and(|cell| cell.flags.contains(Flags::WRAPLINE));
        let end = if wrapped {
            cells.len()
        } else {
            cells
                .iter()
                .rposition(|cell| !is_blank(cell))
                .map_or(0, |last| last + 1)
        };
        for cell in &cells[..end] {
            if cell
                .flags
                .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
            {
                continue;
            }
            pen.change_to(Pen::of(cell), &mut drawn);
            let c = if cell.c == '\0' { ' ' } else { cell.c };
            text.push(c);
            drawn.push(c);
            if let Some(zero_width) = cell.zerowidth() {
                text.extend(zero_width);
                drawn.extend(zero_width);
            }
        }
        if !wrapped || row == last {
            pen.change_to(Pen::default(), &mut drawn);
            lines.push((std::mem::take(&mut text), std::mem::take(&mut drawn)));
        }
    }
    lines
}

/// Modes a viewer's terminal must share with the program's: how to set each, and how
/// to unset it where a fresh terminal has it on.
const MODES: &[(TermMode, &str, &str)] = &[
    (TermMode::SHOW_CURSOR, "", "\x1b[?25l"),
    (TermMode::APP_CURSOR, "\x1b[?1h", ""),
    (TermMode::APP_KEYPAD, "\x1b=", ""),
    (TermMode::BRACKETED_PASTE, "\x1b[?2004h", ""),
    (TermMode::MOUSE_REPORT_CLICK, "\x1b[?1000h", ""),
    (TermMode::MOUSE_DRAG, "\x1b[?1002h", ""),
    (TermMode::MOUSE_MOTION, "\x1b[?1003h", ""),
    (TermMode::SGR_MOUSE, "\x1b[?1006h", ""),
    (TermMode::FOCUS_IN_OUT, "\x1b[?1004h", ""),
];

/// Whether a cell shows nothing: a space with no colour and no attribute that shows.
fn is_blank(cell: &Cell) -> bool {
    (cell.c == ' ' || cell.c == '\0')
        && cell.bg == Color::Named(NamedColor::Background)
        && !cell.flags.intersects(
            Flags::INVERSE | Flags::ALL_UNDERLINES | Flags::STRIKEOUT | Flags::WIDE_CHAR,
        )
        && cell.zerowidth().is_none()
}

/// The attributes a cell is drawn with.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pen {
    fg: Color,
    bg: Color,
    flags: Flags,
}

impl Default for Pen {
    fn default() -> Pen {
        Pen {
            fg: Color::Named(NamedColor::Foreground),
            bg: Color::Named(NamedColor::Background),
            flags: Flags::empty(),
        }
    }
}

/// The flags that are drawn, and their SGR parameters.
const SGR_FLAGS: &[(Flags, &str)] = &[
    (Flags::BOLD, "1"),
    (Flags::DIM, "2"),
    (Flags::ITALIC, "3"),
    (Flags::UNDERLINE, "4"),
    (Flags::DOUBLE_UNDERLINE, "21"),
    (Flags::UNDERCURL, "4:3"),
    (Flags::DOTTED_UNDERLINE, "4:4"),
    (Flags::DASHED_UNDERLINE, "4:5"),
    (Flags::INVERSE, "7"),
    (Flags::HIDDEN, "8"),
    (Flags::STRIKEOUT, "9"),
];

impl Pen {
    fn of(cell: &Cell) -> Pen {
        let drawn = SGR_FLAGS
            .iter()
            .fold(Flags::empty(), |all, (flag, _)| all | *flag);
        Pen {
            fg: cell.fg,
            bg: cell.bg,
            flags: cell.flags & drawn,
        }
    }

    /// Writes the SGR that turns this pen into `next` (a reset and the whole of `next`).
    fn change_to(&mut self, next: Pen, out: &mut String) {
        if *self == next {
            return;
        }
        out.push_str("\x1b[0");
        for (flag, sgr) in SGR_FLAGS {
            if next.flags.contains(*flag) {
                out.push(';');
                out.push_str(sgr);
            }
        }
        colour(next.fg, 30, out);
        colour(next.bg, 40, out);
        out.push('m');
        *self = next;
    }
}

/// Appends `;` and the SGR parameters of a colour; `base` is 30 (foreground) or 40
/// (background). The default colours need none after a reset.
fn colour(color: Color, base: u16, out: &mut String) {
    match color {
        Color::Named(named) => {
            let index = named as usize;
            if index < 8 {
                let _ = write!(out, ";{}", base + index as u16);
            } else if index < 16 {
                let _ = write!(out, ";{}", base + 60 + (index - 8) as u16);
            } else if let Some(dim) = (NamedColor::DimBlack as usize
                ..=NamedColor::DimWhite as usize)
                .position(|i| i == index)
            {
                let _ = write!(out, ";{}", base + dim as u16);
            }
            // Foreground, Background and the other special names are the defaults.
        }
        Color::Indexed(index) => {
            let _ = write!(out, ";{};5;{index}", base + 8);
        }
        Color::Spec(rgb) => {
            let _ = write!(out, ";{};2;{};{};{}", base + 8, rgb.r, rgb.g, rgb.b);
        }
    }
}

#[cfg(test)]
mod tests {
    use alacritty_terminal::term::Config;
    use alacritty_terminal::vte::ansi::Processor;

    use super::*;

    struct Size(usize, usize);

    impl Dimensions for Size {
        fn total_lines(&self) -> usize {
            self.1
        }
        fn screen_lines(&self) -> usize {
            self.1
        }
        fn columns(&self) -> usize {
            self.0
        }
    }

    fn term_of(cols: usize, rows: usize, bytes: &[u8]) -> Term<VoidListener> {
        let mut term = Term::new(Config::default(), &Size(cols, rows), VoidListener);
        Processor::<alacritty_terminal::vte::ansi::StdSyncHandler>::new().advance(&mut term, bytes);
        term
    }

    /// What of a cell shows: its text, colours and drawn attributes.
    fn shown(term: &Term<VoidListener>, row: usize, col: usize) -> (char, Vec<char>, Pen) {
        let cell = &term.grid()[Line(row as i32)][Column(col)];
        let c = if cell.c == '\0' { ' ' } else { cell.c };
        let zero: Vec<char> = cell.zerowidth().map(<[char]>::to_vec).unwrap_or_default();
        let pen = Pen::of(cell);
        (c, zero, pen)
    }

    /// Drawn on a fresh terminal, the frame gives every cell as the program left it, in
    /// its colours and attributes, the cursor where it was and the program's modes.
    #[test]
    fn a_frame_redraws_every_cell_with_its_attributes() {
        let program = concat!(
            "\x1b[?1049h\x1b[H\x1b[2J",
            "\x1b[1;31mbold red\x1b[0m plain \x1b[7minverse\x1b[0m\r\n",
            "\x1b[38;5;208;48;5;17mindexed\x1b[38;2;1;2;3;48;2;250;251;252m rgb \x1b[0m\r\n",
            "\x1b[2;3;4;9mdim italic under strike\x1b[0m \x1b[8mhidden\x1b[0m\r\n",
            "\x1b[92;104mbright\x1b[0m wide 漢字 é combining e\u{301}\r\n",
            "\x1b[44m\x1b[K\x1b[0m\r\n", // a row of blue background to the end
            "\x1b[10;1H\x1b[46m status bar in cyan \x1b[0m",
            "\x1b[?25l\x1b[?1h\x1b=\x1b[?2004h\x1b[?1000h\x1b[?1006h",
            "\x1b[5;7H\x1b[1;33m",
        );
        let before = term_of(40, 10, program.as_bytes());
        let frame = draw(&before);
        let after = term_of(40, 10, &frame);
        for row in 0..10 {
            for col in 0..40 {
                assert_eq!(
                    shown(&before, row, col),
                    shown(&after, row, col),
                    "row {row} column {col}"
                );
            }
        }
        assert_eq!(before.grid().cursor.point, after.grid().cursor.point);
        assert_eq!(
            Pen::of(&before.grid().cursor.template),
            Pen::of(&after.grid().cursor.template),
            "the pen the next text is written with"
        );
        let modes = TermMode::ALT_SCREEN
            | TermMode::SHOW_CURSOR
            | TermMode::APP_CURSOR
            | TermMode::APP_KEYPAD
            | TermMode::BRACKETED_PASTE
            | TermMode::MOUSE_REPORT_CLICK
            | TermMode::SGR_MOUSE;
        assert_eq!(*before.mode() & modes, *after.mode() & modes);
        assert!(after.mode().contains(TermMode::ALT_SCREEN));
        assert!(!after.mode().contains(TermMode::SHOW_CURSOR));
        // The colours are really there (not the defaults on both sides).
        assert_eq!(
            shown(&after, 0, 0).2.fg,
            Color::Named(NamedColor::Red),
            "{:?}",
            String::from_utf8_lossy(&frame)
        );
        assert_eq!(shown(&after, 1, 0).2.fg, Color::Indexed(208));
        assert_eq!(shown(&after, 4, 39).2.bg, Color::Named(NamedColor::Blue));
    }

    /// The main screen stays the main screen; blank rows cost nothing.
    #[test]
    fn a_main_screen_frame_is_small() {
        let term = term_of(80, 24, b"$ ls\r\nfile\r\n$ ");
        let frame = String::from_utf8(draw(&term)).unwrap();
        assert!(!frame.contains("1049"), "{frame:?}");
        assert!(frame.len() < 80, "{frame:?}");
        assert!(frame.ends_with("\x1b[3;3H"), "{frame:?}");
    }
}
