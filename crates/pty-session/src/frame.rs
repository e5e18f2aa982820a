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
#[derive(Clone, Copy, PartialEq)]
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
