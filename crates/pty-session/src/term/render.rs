//! Rendering: PTY output bytes into the lines a terminal would show. Pure: no I/O, and it
//! cannot fail.
//!
//! `vte` parses the byte stream (it keeps UTF-8 and escape sequences whole across reads
//! and turns invalid bytes into U+FFFD); [`Cooker`] applies what acts within a line:
//! - `\n` (and VT, FF, which terminals treat as LF) ends the line on the lowest row and
//!   moves down a row above it; `\r` returns to column 0 so later text overwrites cell by
//!   cell (a progress bar leaves its final state);
//! - backspace, CSI C/D (cursor right/left), CSI G and CSI \` (to column), CSI K (erase in
//!   line, modes 0/1/2), and the editing sequences readline uses, CSI P (delete), CSI @
//!   (insert blanks) and CSI X (erase characters);
//! - a tab stays a literal `\t`, one cell, so tab-separated output keeps its tabs;
//! - everything else (SGR colours, OSC titles and hyperlinks, bracketed paste toggles, DCS,
//!   other CSI and control characters) is dropped; the text of a hyperlink stays.
//!
//! Between rows, [`Cooker`] follows the main screen's window ([`crate::term::rows`]): cursor up
//! and down (CSI A/B/e/E/F, RI), row addresses (CSI H/f/d), DECSC/DECRC (ESC 7/8, CSI s/u),
//! erase in display (CSI J) and a full reset. The cursor's row is the line being drawn; a
//! completed row stays the program's to redraw until a read fixes it
//! ([`Renderer::fix`]) or it leaves the window, and only then is a line.
//!
//! A row longer than the window is wide wraps, and stays one line, as a terminal joins
//! it by its wrap marks. What acts within a line acts within the cursor's *screen* row,
//! as on a terminal: `\r` returns to its first column, backspace and cursor left stop
//! there, cursor right and to-column stop at its last, and erasing, deleting and inserting
//! characters touch that screen row alone. Printing the last column leaves the cursor
//! there in a pending wrap (xterm's `xenl`): the next character goes to the next screen
//! row's first column and the row goes on; anything else leaves the cursor on the last
//! column and ends the row there, for the character printed last took the place of the
//! wrap mark — what stood below becomes a row of its own. Erasing a wrapped screen row's
//! last column ends the row there too. A wide character that does not fit at the end of a
//! screen row goes to the next one, leaving a blank, as terminals draw it (a blank that is
//! no character of the line: [`SPACER`]).
//!
//! A line is cut into lines of at most [`MAX_LINE_BYTES`] without splitting a character,
//! so neither the scrollback nor the pending line grows without bound.
//!
//! While the alternate screen (CSI ?1049h, ?1047h, ?47h) is on, nothing printed enters the
//! lines; the pending line from before it is kept.
//!
//! Queries a program may block on are answered as a terminal would ([`crate::term::answer`]). The
//! row of a cursor position report is an estimate, `1 + min(lines since the screen was
//! last cleared or homed, rows - 1)`: a line view has no screen; the column is exact.
//!
//! Cells are a terminal's columns, counted with `unicode-width` (the table alacritty, and
//! so the screen, uses too): a wide character (CJK, fullwidth forms, most emoji) takes two,
//! so `日本\b\bX` leaves `日X` as a terminal does, and backspaces and cursor moves land
//! where a terminal's would. Overwriting or erasing half of a wide character blanks both
//! halves, as xterm does (a right half left at the end of the line is dropped). A
//! zero-width character (a combining accent, a joiner, a variation selector) joins the
//! cell before the cursor, as in alacritty. DEL and the other control characters that
//! reach the printer are not printed.

use crate::term::cells::{SPACER, width};
use crate::term::output::Rendered;
use crate::term::rows::{Move, Row, RowState, Rows};

/// The longest line, in bytes of UTF-8.
pub(crate) const MAX_LINE_BYTES: usize = crate::request::limits::MAX_LINE_BYTES;

/// A session's renderer: parser state plus the line being drawn.
pub(crate) struct Renderer {
    parser: vte::Parser,
    line: Line,
    /// The window's other rows, still the program's to redraw until they are read.
    rows: Rows,
    /// The start of a UTF-8 character cut off at the end of the last feed. It is held back
    /// and fed together with what follows, because vte 0.15 loses the characters after a
    /// split one when an invalid byte follows within four bytes (found by the chunking
    /// property test below).
    carry: Vec<u8>,
    /// A DCS query being received, answered when it ends.
    dcs: crate::term::answer::DcsRequest,
    /// The colours a colour query is answered with.
    colours: crate::Colours,
}

/// The line being drawn and the little screen state a line view needs.
///
/// The text is kept as UTF-8 bytes and addressed by cell (column). While every cell is one
/// byte (`text.len() == cells`, the common case) a cell's index is its byte offset, and
/// printing, padding and completing a line are byte copies; otherwise finding a cell walks
/// the text up to it, group by group ([`Group`]: a character and the zero-width characters
/// attached to it). The text never starts with a zero-width character.
struct Line {
    /// The line's text, always whole UTF-8 characters.
    text: Vec<u8>,
    /// The width of `text` in cells.
    cells: usize,
    /// The cells the row's screen rows hold ([`Row::span`]): text erased from the end of a
    /// wrapped row leaves its screen rows standing.
    span: usize,
    /// What became of the row (delivered or not, drawn on since).
    state: RowState,
    /// The cell the next character goes to, which may lie past the last cell; past the
    /// window's width the row wraps, as on a terminal.
    col: usize,
    /// A pending wrap: the last character printed filled the last column of a screen row,
    /// where the cursor shows; `col` is the next screen row's first cell.
    wrap: bool,
    /// The window's width.
    cols: usize,
    alt_screen: bool,
    /// The program addressed the screen (moved the cursor up or to a row, cleared the
    /// screen, set a scroll region, turned the alternate screen on): lines alone no longer
    /// show what the window shows.
    addressed: bool,
    /// DECCKM: cursor keys in application mode.
    app_cursor: bool,
    /// DECKPAM: the keypad in application mode.
    app_keypad: bool,
    /// Lines completed since the screen was last cleared or homed, for the row estimate.
    row: usize,
    rows: u16,
    /// The cursor's column on the alternate screen, which draws no lines: followed through
    /// printing and cursor moves only for position reports (vim checks the width of an
    /// ambiguous character at start-up with one, and waits on exit until it is answered).
    alt_col: usize,
}

impl Renderer {
    /// A renderer for a window `cols`×`rows`.
    pub(crate) fn new(cols: u16, rows: u16) -> Renderer {
        Renderer {
            parser: vte::Parser::new(),
            rows: Rows::new(cols, rows),
            line: Line {
                text: Vec::new(),
                cells: 0,
                span: 0,
                state: RowState::Fresh,
                col: 0,
                wrap: false,
                cols: usize::from(cols.max(1)),
                alt_screen: false,
                addressed: false,
                app_cursor: false,
                app_keypad: false,
                row: 0,
                rows,
                alt_col: 0,
            },
            carry: Vec::new(),
            dcs: crate::term::answer::DcsRequest::default(),
            colours: crate::Colours::default(),
        }
    }

    /// A renderer for a window `cols`×`rows` that answers colour queries with `colours`.
    pub(crate) fn with_colours(cols: u16, rows: u16, colours: crate::Colours) -> Renderer {
        Renderer {
            colours,
            ..Renderer::new(cols, rows)
        }
    }

    /// Feeds bytes as they came from the PTY; appends to `out`.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Rendered) {
        let joined;
        let bytes = if self.carry.is_empty() {
            bytes
        } else {
            let mut carried = std::mem::take(&mut self.carry);
            carried.extend_from_slice(bytes);
            joined = carried;
            &joined[..]
        };
        let (whole, cut) = bytes.split_at(bytes.len() - cut_character_len(bytes));
        self.carry.extend_from_slice(cut);
        let mut cooker = Cooker {
            line: &mut self.line,
            rows: &mut self.rows,
            dcs: &mut self.dcs,
            colours: &self.colours,
            out,
        };
        self.parser.advance(&mut cooker, whole);
    }

    /// Follows a new window size: rows that no longer fit (a narrower window wraps them
    /// onto more screen rows) leave its top, into `out`.
    pub(crate) fn resize(&mut self, cols: u16, rows: u16, out: &mut Rendered) {
        if self.line.wrap && self.line.continues() {
            // The last column was drawn over, and its wrap mark went with it: the rows
            // reflow apart.
            self.line.unjoin(&mut self.rows);
        }
        self.line.rows = rows;
        self.line.cols = usize::from(cols.max(1));
        // A wrap stays pending only where the cursor still ends a screen row.
        self.line.wrap &= self.line.col.is_multiple_of(self.line.cols);
        self.rows.resize(cols, rows);
        self.rows.trim(self.line.extent(), out);
    }

    /// Delivers the rows a read gets now into `out` as completed lines (see
    /// [`Rows::fix`]): from now on they stay as delivered.
    pub(crate) fn fix(&mut self, out: &mut Rendered) {
        self.rows.fix(out);
    }

    /// The rows a read would deliver now, the pending line aside, top first.
    pub(crate) fn unread_rows(&self) -> impl Iterator<Item = &str> {
        self.rows.unread()
    }

    /// How many rows a read would deliver now, the pending line aside.
    pub(crate) fn unread_count(&self) -> usize {
        self.rows.unread_count()
    }

    /// The text of the cursor's row, such as `>>> `: after the last line end, unless the
    /// program moved the cursor up to redraw rows.
    pub(crate) fn pending(&self) -> String {
        let text = std::str::from_utf8(&self.line.text).expect("the text holds whole characters");
        if self.line.is_ascii() {
            text.to_owned()
        } else {
            crate::term::rows::visible(text).into_owned()
        }
    }

    /// Whether a full-screen program has the alternate screen on.
    pub(crate) fn alt_screen(&self) -> bool {
        self.line.alt_screen
    }

    /// Whether the program has addressed the screen since the session started: from then
    /// on a screen emulator shows the window, lines alone do not.
    pub(crate) fn addresses_screen(&self) -> bool {
        self.line.addressed
    }

    /// The key modes the program set (DECCKM, DECKPAM).
    pub(crate) fn key_modes(&self) -> crate::term::screen::KeyModes {
        crate::term::screen::KeyModes {
            app_cursor: self.line.app_cursor,
            app_keypad: self.line.app_keypad,
        }
    }
}

/// The length of an incomplete UTF-8 character at the end of `bytes`: a lead byte followed
/// by fewer continuation bytes than it announces.
fn cut_character_len(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xC0 == 0x80 {
            continue;
        }
        let needed = match byte {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return 0,
        };
        return if back < needed { back } else { 0 };
    }
    0
}

/// The characters that fill one or two cells: a character of width 1 or 2 and the
/// zero-width characters attached to it.
#[derive(Debug, Clone, Copy)]
struct Group {
    /// Its byte range in the text.
    start: usize,
    end: usize,
    /// Its first cell.
    first: usize,
}

impl Line {
    /// Whether every cell is one byte, one ASCII character.
    fn is_ascii(&self) -> bool {
        self.text.len() == self.cells
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.text).expect("the text holds whole characters")
    }

    /// The group that covers cell `cell`; past the last cell, an empty group at the end.
    fn group(&self, cell: usize) -> Group {
        let len = self.text.len();
        if self.is_ascii() {
            return Group {
                start: cell.min(len),
                end: (cell + 1).min(len),
                first: cell.min(len),
            };
        }
        let mut first = 0;
        // The start and width of the group being read.
        let mut current: Option<(usize, usize)> = None;
        let bases = self
            .as_str()
            .char_indices()
            .filter_map(|(at, c)| width(c).filter(|&w| w > 0).map(|w| (at, w)));
        for (at, w) in bases.chain([(len, 0)]) {
            if let Some((start, width)) = current {
                if cell < first + width {
                    return Group {
                        start,
                        end: at,
                        first,
                    };
                }
                first += width;
            }
            current = Some((at, w));
        }
        Group {
            start: len,
            end: len,
            first,
        }
    }

    /// The byte offset where cell `cell` starts, a group boundary (the end of the text for
    /// the end or past it).
    fn offset(&self, cell: usize) -> usize {
        self.group(cell).start
    }

    /// The longest prefix of whole groups at most `limit` bytes long: its length in bytes
    /// and in cells.
    fn prefix_within(&self, limit: usize) -> (usize, usize) {
        if self.is_ascii() {
            let end = limit.min(self.text.len());
            return (end, end);
        }
        let (mut fit, mut cells) = ((0, 0), 0);
        for (at, c) in self.as_str().char_indices() {
            let w = width(c).unwrap_or(0);
            if w == 0 {
                continue;
            }
            if at > limit {
                return fit;
            }
            fit = (at, cells);
            cells += w;
        }
        if self.text.len() <= limit {
            (self.text.len(), cells)
        } else {
            fit
        }
    }

    /// Makes `cell` a group boundary: a wide character whose right half is `cell` turns
    /// into two blanks, as in xterm when half of one is overwritten or erased. When it ends
    /// the line only its left half stays, so that `日本\b\bX` leaves `日X`, not `日X `.
    fn split(&mut self, cell: usize) {
        if self.is_ascii() || cell == 0 || cell >= self.cells {
            return;
        }
        let group = self.group(cell);
        if group.first == cell {
            return;
        }
        if group.end == self.text.len() {
            self.text.truncate(group.start);
            self.text.push(b' ');
            self.cells -= 1;
        } else {
            self.text.splice(group.start..group.end, *b"  ");
        }
    }

    /// A copy of the text in `range`, in a spare string's buffer if there is one.
    fn copy(
        &self,
        range: impl std::slice::SliceIndex<[u8], Output = [u8]>,
        out: &mut Rendered,
    ) -> Vec<u8> {
        let mut copy = out.spare.pop().unwrap_or_default().into_bytes();
        copy.clear();
        copy.extend_from_slice(&self.text[range]);
        copy
    }

    /// The row is about to be drawn on: a delivered row remembers how it was delivered.
    #[inline]
    fn touch(&mut self) {
        if matches!(self.state, RowState::Shown) {
            self.state = RowState::Redrawn(self.text.clone());
        }
    }

    /// The cursor's row, taken out of the line (which is left empty).
    fn take_row(&mut self) -> Row {
        Row {
            text: std::mem::take(&mut self.text),
            cells: std::mem::take(&mut self.cells),
            span: std::mem::take(&mut self.span),
            state: std::mem::take(&mut self.state),
        }
    }

    /// Makes `row` the cursor's row.
    fn put_row(&mut self, row: Row) {
        self.text = row.text;
        self.cells = row.cells;
        self.span = row.span;
        self.state = row.state;
    }

    /// The cell the cursor shows on: in a pending wrap, the last column it printed.
    fn shown(&self) -> usize {
        self.col - usize::from(self.wrap)
    }

    /// The cursor's screen row: its first cell and one past its last.
    fn screen_row(&self) -> (usize, usize) {
        let start = self.shown() / self.cols * self.cols;
        (start, start + self.cols)
    }

    /// The cells the row's screen rows take.
    fn extent(&self) -> usize {
        self.cells.max(self.span)
    }

    /// Whether the row goes on below the cursor's screen row.
    fn continues(&self) -> bool {
        self.extent() > self.screen_row().1
    }

    /// What ends a pending wrap but a character: the cursor stays on the last column, and
    /// if the row went on below, it ends there (the character printed last took the place
    /// of the wrap mark).
    fn end_wrap(&mut self, rows: &mut Rows) {
        if !self.wrap {
            return;
        }
        self.wrap = false;
        self.col -= 1;
        if self.continues() {
            self.unjoin(rows);
        }
    }

    /// Ends the row after the cursor's screen row, whose wrap mark went: what stood below
    /// becomes a row of its own, right below the cursor's.
    fn unjoin(&mut self, rows: &mut Rows) {
        let end = self.screen_row().1;
        self.touch();
        self.split(end);
        let at = self.offset(end);
        let below = Row {
            text: self.text.split_off(at),
            cells: self.cells.saturating_sub(end),
            span: self.extent() - end,
            // A part of a delivered row is delivered again if it holds text.
            state: match self.state {
                RowState::Fresh => RowState::Fresh,
                _ => RowState::Redrawn(Vec::new()),
            },
        };
        self.cells = self.cells.min(end);
        self.span = end;
        rows.below(below);
    }

    /// Makes `below`, the row below the cursor's, the rest of the cursor's row, from the
    /// cursor's cell (the first of a screen row, past the row's end) on.
    fn join(&mut self, below: Row) {
        self.touch();
        let pad = self.col - self.cells;
        self.text.resize(self.text.len() + pad, b' ');
        self.text.extend_from_slice(&below.text);
        self.cells = self.col + below.cells;
        self.span = self.col + below.extent();
    }

    /// A character is drawn over cells `..to` of the screen row that starts at `start`:
    /// where it covers part of a wide character in its first two cells, the blank that a
    /// wide character left at the end of the row above is a blank of the line from now on,
    /// as alacritty takes its mark off.
    fn unspace(&mut self, start: usize, to: usize) {
        // A wide group's next cell is still its own.
        let covers_wide = (self.col..to.min(start + 2)).any(|cell| {
            let group = self.group(cell);
            group.end > group.start && self.group(group.first + 1).first == group.first
        });
        let before = self.group(start - 1);
        if covers_wide && self.as_str()[before.start..before.end].chars().eq([SPACER]) {
            self.text.splice(before.start..before.end, [b' ']);
        }
    }

    /// Whether the row holds only blanks from cell `cell` on.
    fn blank_after(&self, cell: usize) -> bool {
        let at = self.offset(cell);
        self.text[at..].iter().all(|&byte| byte == b' ')
    }

    /// A carriage return: to the first column of the cursor's screen row.
    fn carriage_return(&mut self, rows: &mut Rows) {
        self.end_wrap(rows);
        self.col = self.screen_row().0;
    }

    /// A backspace: one column left, but not past the screen row's first.
    fn backspace(&mut self, rows: &mut Rows) {
        self.end_wrap(rows);
        if self.col > self.screen_row().0 {
            self.col -= 1;
        }
    }

    /// Cursor right (CUF): `n` columns, but not past the screen row's last.
    fn right(&mut self, n: usize, rows: &mut Rows) {
        self.end_wrap(rows);
        self.col = (self.col + n).min(self.screen_row().1 - 1);
    }

    /// Cursor left (CUB): `n` columns, but not past the screen row's first.
    fn left(&mut self, n: usize, rows: &mut Rows) {
        self.end_wrap(rows);
        self.col = self.col.saturating_sub(n).max(self.screen_row().0);
    }

    /// To column `n` (0-based) of the cursor's screen row (CHA, HPA), the last at most.
    fn column(&mut self, n: usize, rows: &mut Rows) {
        self.end_wrap(rows);
        self.col = self.screen_row().0 + n.min(self.cols - 1);
    }

    /// Replaces the cells `from..to` (group boundaries, `to` at most the end) with `with`,
    /// `cells` wide.
    fn replace(&mut self, from: usize, to: usize, with: &[u8], cells: usize) {
        let (start, end) = (self.offset(from), self.offset(to));
        self.text.splice(start..end, with.iter().copied());
        self.cells = self.cells - (to - from) + cells;
    }

    /// A line feed on the lowest row: the row is complete, and a new one begins.
    fn commit(&mut self, rows: &mut Rows, out: &mut Rendered) {
        // A copy of the row; the buffer stays for the next one.
        let row = Row {
            text: self.copy(.., out),
            cells: self.cells,
            span: self.extent(),
            state: std::mem::take(&mut self.state),
        };
        self.text.clear();
        self.cells = 0;
        self.span = 0;
        self.col = 0;
        self.wrap = false;
        self.row += 1;
        rows.complete(row, 0, out);
    }

    #[inline]
    fn print(&mut self, c: char, rows: &mut Rows, out: &mut Rendered) {
        let Some(width) = width(c) else {
            return;
        };
        self.touch();
        let mut buf = [0; 4];
        let encoded = c.encode_utf8(&mut buf).as_bytes();
        if width == 0 {
            self.attach(encoded);
            return;
        }
        // A pending wrap happens: `col` is the next screen row's first cell already.
        self.wrap = false;
        if width == 2 && self.cols > 1 && self.col % self.cols == self.cols - 1 {
            // A wide character does not fit the last column: a blank stays there and the
            // character goes to the next screen row, as on a terminal.
            self.print(SPACER, rows, out);
            self.wrap = false;
        }
        // Wrapping to a screen row that is not the row's yet: the next row, if there is
        // one, joins this one (a terminal's wrap moves the cursor down into it, and it is
        // what the wrap mark now continues); at the bottom, a new screen row scrolls the
        // window up, as a line feed does.
        let mut scrolls = false;
        // In this order, a flood of lines narrower than the window does no division.
        if self.col >= self.cols && self.col >= self.extent() && self.col.is_multiple_of(self.cols)
        {
            match rows.take_below() {
                Some(below) => self.join(below),
                None => scrolls = true,
            }
        }
        if !self.is_ascii() && self.col >= self.cols && self.col < self.cells {
            let start = self.col / self.cols * self.cols;
            if self.col < start + 2 {
                self.unspace(start, self.col + width);
            }
        }
        if self.is_ascii() && encoded.len() == 1 && self.col < self.cells {
            self.text[self.col] = encoded[0];
        } else {
            if self.col < self.cells {
                self.split(self.col + width);
                self.split(self.col);
            }
            if self.col >= self.cells {
                // Appended at the end of the line; a cursor moved past the end leaves blanks.
                let pad = self.col - self.cells;
                self.text.resize(self.text.len() + pad, b' ');
                self.text.extend_from_slice(encoded);
                self.cells = self.col + width;
            } else {
                let to = (self.col + width).min(self.cells);
                self.replace(self.col, to, encoded, width);
            }
        }
        self.col += width;
        self.wrap = self.col >= self.cols && self.col.is_multiple_of(self.cols);
        self.span = self.span.max(self.cells);
        if scrolls {
            rows.trim(self.span, out);
        }
        if self.text.len() > MAX_LINE_BYTES {
            self.cut(rows, out);
        }
    }

    /// Attaches a zero-width character (a combining accent, a joiner, a variation selector)
    /// to the cell before the cursor, or at column 0 to the first cell, as alacritty does;
    /// a missing cell is padded with blanks. The cursor stays. One that would take the line
    /// past the bound is dropped, so that no group is ever longer than a line may be.
    fn attach(&mut self, encoded: &[u8]) {
        let target = self.col.saturating_sub(1);
        let pad = (target + 1).saturating_sub(self.cells);
        if self.text.len() + pad + encoded.len() > MAX_LINE_BYTES {
            return;
        }
        self.touch();
        self.text.resize(self.text.len() + pad, b' ');
        self.cells += pad;
        self.span = self.span.max(self.cells);
        let end = self.group(target).end;
        self.text.splice(end..end, encoded.iter().copied());
    }

    /// Moves the longest prefix that fits into a completed row, until the rest fits.
    fn cut(&mut self, rows: &mut Rows, out: &mut Rendered) {
        while self.text.len() > MAX_LINE_BYTES {
            let (end, taken) = self.prefix_within(MAX_LINE_BYTES);
            if end == 0 {
                // Cannot happen: no group is longer than a line may be (see `attach`).
                break;
            }
            let row = Row {
                text: self.copy(..end, out),
                cells: taken,
                span: taken,
                state: RowState::Fresh,
            };
            rows.complete(row, self.extent() - taken, out);
            self.text.drain(..end);
            self.cells -= taken;
            self.span = self.span.saturating_sub(taken);
            self.col = self.col.saturating_sub(taken);
            self.wrap &= self.col > 0 && self.col.is_multiple_of(self.cols);
            self.row += 1;
        }
    }

    /// Erase in line (EL) on the cursor's screen row: from the cursor (0, nothing in a
    /// pending wrap, as in xterm), to it (1) or all of it (2).
    fn erase_in_line(&mut self, mode: u16, rows: &mut Rows) {
        let (start, end) = self.screen_row();
        let shown = self.shown();
        match mode {
            0 if self.wrap => {}
            0 => self.erase(shown, end, rows),
            1 => {
                self.touch();
                let to = (shown + 1).min(self.cells);
                if start < to {
                    self.blank(start, to);
                }
                self.unjoin_at(shown + 1, rows);
            }
            2 => self.erase(start, end, rows),
            _ => {}
        }
    }

    /// Erases the cursor's screen row from cell `from` to its end: the text ends there,
    /// unless the row is wrapped below; then the cells turn blank, and the wrap mark goes
    /// with the last one (see [`Line::unjoin`]).
    fn erase(&mut self, from: usize, end: usize, rows: &mut Rows) {
        self.touch();
        if !self.continues() {
            self.split(from);
            let at = self.offset(from);
            self.text.truncate(at);
            self.cells = self.cells.min(from);
            return;
        }
        let to = end.min(self.cells);
        if from < to {
            self.blank(from, to);
        }
        self.unjoin_at(end, rows);
    }

    /// Ends the row after the cursor's screen row when an edit reached its last column
    /// (`reached`, one past the last cell it touched), unless a wrap is pending: then the
    /// next character decides (it wraps, and the row goes on).
    fn unjoin_at(&mut self, reached: usize, rows: &mut Rows) {
        if !self.wrap && reached >= self.screen_row().1 && self.continues() {
            self.unjoin(rows);
        }
    }

    /// Turns the cells `from..to` (which exist) into blanks.
    fn blank(&mut self, from: usize, to: usize) {
        if self.is_ascii() {
            self.text[from..to].fill(b' ');
            return;
        }
        self.split(to);
        self.split(from);
        // A split at the end of the line may have shortened it.
        let to = to.min(self.cells);
        if from < to {
            self.replace(from, to, &vec![b' '; to - from], to - from);
        }
    }

    /// Deletes `n` characters at the cursor (DCH): the rest of its screen row moves left,
    /// blanks fill the row's end.
    fn delete(&mut self, n: usize, rows: &mut Rows) {
        self.touch();
        let shown = self.shown();
        let end = self.screen_row().1;
        let before = self.cells;
        self.remove(shown, shown + n.min(end - shown));
        let removed = before - self.cells;
        if before > end && removed > 0 {
            // The text of the screen rows below stays where it was.
            let at = end - removed;
            self.replace(at, at, &vec![b' '; removed], removed);
        }
        self.unjoin_at(end, rows);
    }

    /// Removes the cells `from..to` (to at most the screen row's end), those that exist;
    /// the rest of the text moves left.
    fn remove(&mut self, from: usize, to: usize) {
        let to = to.min(self.cells);
        if from < to {
            self.split(to);
            self.split(from);
            let to = to.min(self.cells);
            if from < to {
                self.replace(from, to, &[], 0);
            }
        }
    }

    /// Inserts `n` blanks at the cursor (ICH): what is pushed past the screen row's last
    /// column is lost, as on a terminal.
    fn insert_blanks(&mut self, n: usize, rows: &mut Rows) {
        self.touch();
        let shown = self.shown();
        let end = self.screen_row().1;
        let n = n.min(end - shown);
        let continues = self.continues();
        self.split(shown);
        if shown < self.cells {
            // What is pushed out of the screen row goes first, then the blanks come in.
            self.remove((end - n).max(shown), end);
            self.replace(shown, shown, &vec![b' '; n], n);
            if !continues && self.cells > end {
                let at = self.offset(end);
                self.text.truncate(at);
                self.cells = end;
            }
            if self.text.len() > MAX_LINE_BYTES {
                // Found by fuzzing: a huge count grew the line past the bound.
                let (at, cells) = self.prefix_within(MAX_LINE_BYTES);
                self.text.truncate(at);
                self.cells = cells;
            }
            self.span = self.span.max(self.cells);
        }
        self.unjoin_at(end, rows);
    }

    /// Erases `n` characters from the cursor on (ECH), within its screen row.
    fn erase_chars(&mut self, n: usize, rows: &mut Rows) {
        self.touch();
        let shown = self.shown();
        let reached = (shown + n).min(self.screen_row().1);
        let to = reached.min(self.cells);
        if shown < to {
            self.blank(shown, to);
        }
        self.unjoin_at(reached, rows);
    }

    /// Erases below the cursor (ED 0) on its row: the rest of its screen row and the
    /// screen rows below it, which no longer belong to the row.
    fn erase_below(&mut self) {
        self.touch();
        let shown = self.shown();
        self.split(shown);
        let at = self.offset(shown);
        self.text.truncate(at);
        self.cells = self.cells.min(shown);
        self.span = self.screen_row().1;
    }

    /// The cursor's 1-based row (an estimate) and column, for a position report.
    fn position(&self) -> (usize, usize) {
        let col = if self.alt_screen {
            self.alt_col
        } else {
            self.shown() % self.cols
        };
        (1 + self.row.min(usize::from(self.rows.max(1)) - 1), col + 1)
    }
}

/// The `vte` performer for one feed.
struct Cooker<'a> {
    line: &'a mut Line,
    rows: &'a mut Rows,
    dcs: &'a mut crate::term::answer::DcsRequest,
    colours: &'a crate::Colours,
    out: &'a mut Rendered,
}

impl Cooker<'_> {
    /// Takes the cursor where `to` says.
    fn apply(&mut self, to: Move) {
        self.line.wrap = false;
        match to {
            Move::Within(col) => self.line.col = col,
            Move::To(target, col) => {
                let row = self.line.take_row();
                let row = self.rows.go(row, target);
                self.line.put_row(row);
                self.line.col = col;
            }
        }
    }

    /// Moves the cursor `n` screen rows up (or down), within the rows there are.
    fn vertical(&mut self, n: usize, up: bool) {
        self.line.end_wrap(self.rows);
        let to = self.rows.vertical(self.line.extent(), self.line.col, n, up);
        self.apply(to);
    }

    /// Moves the cursor to the screen cell `row`, `col` (0-based).
    fn goto(&mut self, row: usize, col: usize) {
        self.line.end_wrap(self.rows);
        let to = self.rows.locate(self.line.extent(), row, col);
        self.apply(to);
    }

    /// A line feed: a new row below the lowest, or down to the next row; to its first
    /// column (the tty's ONLCR sends `\r\n`, and a lone `\n` ends a line too).
    ///
    /// A line feed into the next screen row of a wrapped row that holds only blanks there
    /// ends the row: the program starts a row of its own below, whatever a terminal's wrap
    /// mark still says. Readline does so when a command's echo fills the window exactly
    /// and holds wide characters: it prints a blank to wrap, goes back up to the echo's
    /// row and down again to the answer, leaving the wrap mark (it takes it off only when
    /// it counts every character as one column): a terminal's copy of the text joins echo
    /// and answer, the rows a person reads do not. Into text, a line feed moves within the
    /// row (readline going down a wrapped command line it edits).
    fn line_feed(&mut self) {
        self.line.end_wrap(self.rows);
        if self.line.continues() {
            if !self.line.blank_after(self.line.screen_row().1) {
                self.line.col = self.line.screen_row().1;
                self.line.row += 1;
                return;
            }
            self.line.unjoin(self.rows);
        }
        if self.rows.at_bottom() {
            self.line.commit(self.rows, self.out);
        } else {
            self.line.row += 1;
            self.apply(Move::To(self.rows.next_row(), 0));
        }
    }

    /// What a CSI sequence without intermediates does to the main screen's rows.
    fn move_rows(&mut self, params: &vte::Params, action: char) {
        let mut values = params.iter().map(|p| p.first().copied().unwrap_or(0));
        let first = values.next().unwrap_or(0);
        let second = values.next().unwrap_or(0);
        if action == 'r' {
            // DECSTBM also takes the cursor home.
            if self.rows.set_region(first, second) {
                self.goto(0, 0);
            }
            return;
        }
        if action == 's' && params.is_empty() {
            self.rows.save(self.line.shown());
        }
        if !self.rows.followed() {
            return;
        }
        // Counts and 1-based addresses treat 0 as 1.
        let count = usize::from(first.max(1));
        let row = count - 1;
        match action {
            'A' => self.vertical(count, true),
            'B' | 'e' => self.vertical(count, false),
            'E' | 'F' => {
                self.vertical(count, action == 'F');
                self.line.col = self.line.screen_row().0;
            }
            'H' | 'f' => self.goto(row, usize::from(second.max(1)) - 1),
            'd' => self.goto(row, self.rows.screen_col(self.line.shown())),
            'J' => match first {
                0 if self.rows.at_home(self.line.shown()) => self.clear(),
                0 => {
                    self.line.erase_below();
                    self.rows.erase_below();
                }
                1 => {
                    self.line.touch();
                    let to = (self.line.shown() + 1).min(self.line.cells);
                    self.line.blank(0, to);
                }
                2 => self.clear(),
                _ => {}
            },
            'u' if params.is_empty() => {
                let (row, col) = self.rows.saved();
                self.goto(row, col);
            }
            _ => {}
        }
    }

    /// What an escape sequence without intermediates does to the main screen's rows.
    fn move_rows_esc(&mut self, byte: u8) {
        if self.line.alt_screen {
            return;
        }
        if byte == b'7' {
            // Saved under a scroll region too: a program restores it once the region is
            // whole again (apt's progress line).
            self.rows.save(self.line.shown());
        }
        if !self.rows.followed() {
            return;
        }
        match byte {
            b'8' => {
                let (row, col) = self.rows.saved();
                self.goto(row, col);
            }
            b'D' | b'E' => self.line_feed(),
            b'M' => self.vertical(1, true),
            _ => {}
        }
    }

    /// Erases the screen: what it showed becomes lines, the cursor stays.
    fn clear(&mut self) {
        if self.line.wrap && self.line.continues() {
            // The wrap mark went with the last character printed; what the clear delivers
            // is what the window shows now.
            self.line.unjoin(self.rows);
        }
        let shown = self.line.shown();
        let row = self.line.take_row();
        let row = self.rows.clear(row, shown, self.out);
        self.line.put_row(row);
        // The cursor stays on its screen cell, a pending wrap still pending.
        self.line.col = self.rows.screen_col(shown) + usize::from(self.line.wrap);
    }
}

impl vte::Perform for Cooker<'_> {
    fn print(&mut self, c: char) {
        if self.line.alt_screen {
            self.line.alt_col += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        } else {
            self.line.print(c, self.rows, self.out);
        }
    }

    fn execute(&mut self, byte: u8) {
        if self.line.alt_screen {
            match byte {
                b'\r' => self.line.alt_col = 0,
                0x08 => self.line.alt_col = self.line.alt_col.saturating_sub(1),
                b'\n' => self.line.row += 1,
                _ => {}
            }
            return;
        }
        match byte {
            b'\n' | 0x0b | 0x0c => self.line_feed(),
            b'\r' => self.line.carriage_return(self.rows),
            0x08 => self.line.backspace(self.rows),
            b'\t' => self.line.print('\t', self.rows, self.out),
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &vte::Params, intermediates: &[u8], _: bool, action: char) {
        let mut values = params.iter().map(|p| p.first().copied().unwrap_or(0));
        let first = values.next().unwrap_or(0);
        let at = self.line.position();
        if crate::term::answer::csi(first, intermediates, action, at, &mut self.out.replies) {
            return;
        }
        // Counts treat 0 as 1, as terminals do.
        let count = usize::from(first.max(1));
        if intermediates.is_empty() && !self.line.alt_screen {
            self.move_rows(params, action);
        }
        let line = &mut *self.line;
        match (intermediates, action) {
            (b"?", 'h' | 'l') => {
                let on = action == 'h';
                for mode in std::iter::once(first).chain(values) {
                    match mode {
                        1049 | 1047 | 47 => {
                            // The cursor stays where it was, as in xterm.
                            if on && !line.alt_screen {
                                line.alt_col = line.col;
                            }
                            line.alt_screen = on;
                            line.addressed |= on;
                        }
                        1 => line.app_cursor = on,
                        _ => {}
                    }
                }
            }
            ([], 'd') => {
                line.row = count - 1;
                line.addressed = true;
            }
            ([], 'A') => {
                line.row = line.row.saturating_sub(count);
                line.addressed = true;
            }
            ([], 'r') => line.addressed = true,
            ([], 'J') if first >= 2 => {
                line.row = 0;
                line.addressed = true;
            }
            ([], 'H' | 'f') => {
                line.row = usize::from(first.max(1)) - 1;
                line.alt_col = usize::from(values.next().unwrap_or(1).max(1)) - 1;
                line.addressed = true;
            }
            ([], 'C') if line.alt_screen => line.alt_col += count,
            ([], 'D') if line.alt_screen => line.alt_col = line.alt_col.saturating_sub(count),
            ([], 'G' | '`') if line.alt_screen => line.alt_col = count - 1,
            _ if line.alt_screen => {}
            ([], 'C') => line.right(count, self.rows),
            ([], 'D') => line.left(count, self.rows),
            ([], 'G' | '`') => line.column(count - 1, self.rows),
            ([], 'K') => line.erase_in_line(first, self.rows),
            ([], 'P') => line.delete(count, self.rows),
            ([], '@') => line.insert_blanks(count, self.rows),
            ([], 'X') => line.erase_chars(count, self.rows),
            _ => {}
        }
    }

    fn osc_dispatch(&mut self, params: &[&[u8]], bell_terminated: bool) {
        crate::term::answer::osc(params, bell_terminated, self.colours, &mut self.out.replies);
    }

    fn hook(&mut self, _: &vte::Params, intermediates: &[u8], _: bool, action: char) {
        self.dcs.hook(intermediates, action);
    }

    fn put(&mut self, byte: u8) {
        self.dcs.put(byte);
    }

    fn unhook(&mut self) {
        self.dcs.unhook(&mut self.out.replies);
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], _: bool, byte: u8) {
        if intermediates.is_empty() {
            self.move_rows_esc(byte);
        }
        if intermediates.is_empty() && byte == b'c' {
            // A full reset clears the screen and takes the cursor home.
            self.line.alt_screen = false;
            self.rows.reset_modes();
            self.clear();
            self.goto(0, 0);
        }
        let line = &mut *self.line;
        match (intermediates, byte) {
            // RIS, the full reset `reset` sends: the terminal leaves the alternate screen
            // and forgets its modes.
            ([], b'c') => {
                line.alt_screen = false;
                line.app_cursor = false;
                line.app_keypad = false;
                line.row = 0;
            }
            ([], b'=') => line.app_keypad = true,
            ([], b'>') => line.app_keypad = false,
            ([], b'M') => line.addressed = true,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect, expect_file};

    use super::*;

    impl Renderer {
        /// A renderer whose window is wider than any line may be, so that no line wraps:
        /// the rules within a line alone.
        fn unwrapped(rows: u16) -> Renderer {
            let mut renderer = Renderer::new(120, rows);
            renderer.line.cols = MAX_LINE_BYTES + 1;
            renderer.rows.set_cols(MAX_LINE_BYTES + 1);
            renderer
        }
    }

    #[test]
    fn new_lines_are_written_into_spare_strings() {
        // A window one row high: each completed row leaves it at once, a line.
        let mut renderer = Renderer::new(120, 1);
        let mut out = Rendered::default();
        out.spare.push(String::with_capacity(100));
        renderer.feed(b"first\nsecond\n", &mut out);
        assert_eq!(out.lines, ["first", "second"]);
        // One line took the spare string (its capacity shows), the next a new one.
        assert!(out.spare.is_empty());
        assert!(out.lines.iter().any(|line| line.capacity() >= 100));
    }

    /// The result of feeding `chunks` one after another, in a readable form.
    fn render(rows: u16, chunks: &mut dyn Iterator<Item = &[u8]>) -> String {
        let mut renderer = Renderer::new(120, rows);
        let mut out = Rendered::default();
        for chunk in chunks {
            renderer.feed(chunk, &mut out);
        }
        renderer.fix(&mut out);
        let mut text = String::new();
        for line in &out.lines {
            text.push_str(&format!("line {line:?}\n"));
        }
        text.push_str(&format!("pending {:?}\n", renderer.pending()));
        if !out.replies.is_empty() {
            text.push_str(&format!(
                "replies {:?}\n",
                String::from_utf8_lossy(&out.replies)
            ));
        }
        if renderer.alt_screen() {
            text.push_str("alt screen on\n");
        }
        text
    }

    /// A tiny deterministic generator for chunk sizes.
    fn chunk_sizes(seed: u64) -> impl Iterator<Item = usize> {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        std::iter::from_fn(move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            Some(1 + (state % 17) as usize)
        })
    }

    fn chunked(input: &[u8], seed: u64) -> Vec<&[u8]> {
        let mut chunks = Vec::new();
        let mut rest = input;
        for size in chunk_sizes(seed) {
            if rest.is_empty() {
                break;
            }
            let (chunk, tail) = rest.split_at(size.min(rest.len()));
            chunks.push(chunk);
            rest = tail;
        }
        chunks
    }

    /// Renders `input` whole, byte by byte and in random chunks; all must agree.
    fn rendered_every_way(input: &[u8]) -> String {
        let whole = render(40, &mut std::iter::once(input));
        let bytes = render(40, &mut input.chunks(1));
        assert_eq!(whole, bytes, "byte by byte differs from whole");
        for seed in 1..=5 {
            let chunks = render(40, &mut chunked(input, seed).into_iter());
            assert_eq!(whole, chunks, "chunks of seed {seed} differ from whole");
        }
        whole
    }

    #[track_caller]
    fn check(input: &[u8], expect: Expect) {
        expect.assert_eq(&rendered_every_way(input));
    }

    #[test]
    fn line_ends() {
        check(
            b"crlf\r\nlf\n\nlast",
            expect![[r#"
                line "crlf"
                line "lf"
                line ""
                pending "last"
            "#]],
        );
    }

    #[test]
    fn carriage_return_overwrites() {
        check(
            b"[#   ] 30%\r[##  ] 60%\r[####]100%\r\nlong text\rshort\n",
            expect![[r#"
                line "[####]100%"
                line "shorttext"
                pending ""
            "#]],
        );
    }

    #[test]
    fn backspace_and_cursor_moves() {
        check(
            b"abc\x08\x08XY\nab\x1b[5Cz\n12345\x1b[3Dx\x1b[2G_\x1b[Cy\n",
            expect![[r#"
                line "aXY"
                line "ab     z"
                line "1_xy5"
                pending ""
            "#]],
        );
    }

    #[test]
    fn erase_in_line() {
        check(
            b"abcdef\x1b[3D\x1b[K\nabcdef\x1b[3D\x1b[1K\nabcdef\x1b[2Kxy\n5%\r\x1b[2Kdone\n",
            expect![[r#"
                line "abc"
                line "    ef"
                line "      xy"
                line "done"
                pending ""
            "#]],
        );
    }

    #[test]
    fn readline_editing_sequences() {
        check(
            b"abcdef\r\x1b[2C\x1b[2P\nabc\r\x1b[C\x1b[2@XY\nabcdef\r\x1b[1C\x1b[3X\n",
            expect![[r#"
                line "abef"
                line "aXYbc"
                line "a   ef"
                pending ""
            "#]],
        );
    }

    #[test]
    fn tab_is_kept_and_other_controls_dropped() {
        check(
            b"a\tb\x07\x00c\x1b\x7fd\n",
            expect![[r#"
                line "a\tbc"
                pending ""
            "#]],
        );
    }

    #[test]
    fn wide_characters_take_two_cells() {
        check(
            "日本\x08\x08X\n日本\x08X\nab日\x1b[3DY\n語\x1b[G\x1b[2C!\n🦀x\x08\x08\x08z\n"
                .as_bytes(),
            expect![[r#"
                line "日X"
                line "日 X"
                line "aY日"
                line "語!"
                line "z x"
                pending ""
            "#]],
        );
        // Erasing or deleting half of a wide character blanks both halves.
        check(
            "日本a\x1b[3G\x1b[X\n日本a\x1b[2G\x1b[P\n日本\x1b[4G\x1b[K|\n".as_bytes(),
            expect![[r#"
                line "日  a"
                line " 本a"
                line "日 |"
                pending ""
            "#]],
        );
    }

    #[test]
    fn zero_width_characters_join_the_cell_before_the_cursor() {
        check(
            "e\u{301}x\n日\u{fe0f}z\n\u{301}a\n語\x1b[2C\u{301}\n".as_bytes(),
            expect![[r#"
                line "e\u{301}x"
                line "日\u{fe0f}z"
                line "a"
                line "語  \u{301}"
                pending ""
            "#]],
        );
    }

    #[test]
    fn del_is_not_printed() {
        check(
            b"a\x7fg\n\x7f\n",
            expect![[r#"
                line "ag"
                line ""
                pending ""
            "#]],
        );
    }

    /// bash's readline, recorded: `echo 日本語`, Backspace (the wide character goes with two
    /// backspaces and CSI K), Ctrl-B twice, Backspace (a CSI P and the rest redrawn), `X`.
    #[test]
    fn readline_redraws_after_deleting_a_wide_character() {
        check(
            "$ echo 日本語\x08\x08\x1b[K\x08\x08\x08\x08\x08\x1b[1P日本\x08\x08\x08\x08X日本\x08\x08\x08\x08\r\n".as_bytes(),
            expect![[r#"
                line "$ echoX日本"
                pending ""
            "#]],
        );
    }

    #[test]
    fn escape_sequences_are_dropped() {
        check(
            b"\x1b[1;31mred\x1b[0m plain\n\x1b]0;my title\x07\x1b]2;other\x1b\\titled\n\
              \x1b]8;;https://example.com\x1b\\link text\x1b]8;;\x1b\\ tail\n\
              \x1b[?2004hpaste\x1b[?2004l\n\x1bP1$r0m\x1b\\dcs gone\n\x1b[?25l\x1b(Bcursor\n",
            expect![[r#"
                line "red plain"
                line "titled"
                line "link text tail"
                line "paste"
                line "dcs gone"
                line "cursor"
                pending ""
            "#]],
        );
    }

    #[test]
    fn utf8_split_and_invalid() {
        check(
            "日本語 ✓ 🦀\n".as_bytes(),
            expect![[r#"
                line "日本語 ✓ 🦀"
                pending ""
            "#]],
        );
        check(
            b"bad \xff\xfe byte \xe6\x97\n",
            expect![[r#"
                line "bad �� byte �"
                pending ""
            "#]],
        );
    }

    #[test]
    fn long_lines_are_cut_at_64_kib() {
        let mut input = "a".repeat(MAX_LINE_BYTES * 2 + 10).into_bytes();
        input.extend_from_slice(b"\n");
        let mut renderer = Renderer::new(120, 40);
        let mut out = Rendered::default();
        renderer.feed(&input, &mut out);
        renderer.fix(&mut out);
        let lens: Vec<usize> = out.lines.iter().map(String::len).collect();
        assert_eq!(lens, [MAX_LINE_BYTES, MAX_LINE_BYTES, 10]);

        // Multibyte characters are never split: 3-byte characters fill 65535 bytes.
        let input = "語".repeat(30_000);
        let mut renderer = Renderer::new(120, 40);
        let mut out = Rendered::default();
        for chunk in input.as_bytes().chunks(4093) {
            renderer.feed(chunk, &mut out);
        }
        assert_eq!(out.lines.len(), 1);
        assert_eq!(out.lines[0].len(), 65_535);
        assert_eq!(renderer.pending().len(), 90_000 - 65_535);
    }

    #[test]
    fn inserting_blanks_never_grows_a_line_past_the_bound() {
        let mut renderer = Renderer::unwrapped(40);
        let mut out = Rendered::default();
        renderer.feed(b"abc\r\x1b[65535@", &mut out);
        assert!(out.lines.is_empty());
        assert_eq!(renderer.pending().len(), MAX_LINE_BYTES);
        assert!(
            renderer.pending().ends_with(" a"),
            "bc was pushed out and lost"
        );
        // In a window, what is pushed past the last column is lost, as on a terminal.
        let mut renderer = Renderer::new(120, 40);
        renderer.feed(b"abc\r\x1b[118@", &mut out);
        assert_eq!(renderer.pending(), format!("{}ab", " ".repeat(118)));
        // The crash the fuzzer found, replayed (its first byte chose the cuts).
        let crash = include_bytes!("../../test_data/fuzz-insert-blanks.bin");
        let mut renderer = Renderer::new(120, 40);
        renderer.feed(&crash[1..], &mut out);
        assert!(renderer.pending().len() <= MAX_LINE_BYTES);
    }

    #[test]
    fn a_progress_bar_without_newline_stays_bounded() {
        let mut renderer = Renderer::new(120, 40);
        let mut out = Rendered::default();
        for i in 0..100_000 {
            renderer.feed(format!("\rprogress {i:>6}").as_bytes(), &mut out);
        }
        assert!(out.lines.is_empty());
        assert_eq!(renderer.pending(), "progress  99999");
    }

    #[test]
    fn alternate_screen_keeps_out_of_the_lines() {
        check(
            b"before\nprompt> \x1b[?1049h\x1b[H\x1b[2JTUI SCREEN\r\n\x1b[5;1Hstatus\x1b[?1049l after\n",
            expect![[r#"
                line "before"
                line "prompt>  after"
                pending ""
            "#]],
        );
        check(
            b"\x1b[?1049hdrawing",
            expect![[r#"
                pending ""
                alt screen on
            "#]],
        );
    }

    #[test]
    fn colour_queries_are_answered_with_the_configured_colours() {
        let colours = crate::Colours {
            foreground: [0x12, 0x34, 0x56],
            background: [0xfe, 0xdc, 0xba],
            cursor: [1, 2, 3],
        };
        let mut renderer = Renderer::with_colours(80, 24, colours);
        let mut out = Rendered::default();
        renderer.feed(b"\x1b]11;?\x07\x1b]10;?;?;?\x1b\\", &mut out);
        assert_eq!(
            String::from_utf8_lossy(&out.replies),
            "\x1b]11;rgb:fefe/dcdc/baba\x07\x1b]10;rgb:1212/3434/5656\x1b\\\
             \x1b]11;rgb:fefe/dcdc/baba\x1b\\\x1b]12;rgb:0101/0202/0303\x1b\\"
        );
    }

    #[test]
    fn terminal_queries_are_answered() {
        check(
            b"one\ntwo\nab\x1b[6n\x1b[c\x1b[0c\x1b[>c\x1b[>0c\x1b[>q\x1b[5n\x1b[?6n\x1b[?1049h\x1b[6n",
            expect![[r#"
                line "one"
                line "two"
                pending "ab"
                replies "\u{1b}[3;3R\u{1b}[?1;2c\u{1b}[?1;2c\u{1b}[>41;0;0c\u{1b}[>41;0;0c\u{1b}P>|pty-session(0.1.0)\u{1b}\\\u{1b}[0n\u{1b}[?3;3;1R\u{1b}[3;3R"
                alt screen on
            "#]],
        );
        check(
            b"\x1b]10;?\x07\x1b]11;?\x1b\\\x1b]12;?\x07\x1b]10;?;?\x07\x1b]4;1;?\x07\x1b]0;title\x07",
            expect![[r#"
                pending ""
                replies "\u{1b}]10;rgb:dddd/dddd/dddd\u{7}\u{1b}]11;rgb:0000/0000/0000\u{1b}\\\u{1b}]12;rgb:dddd/dddd/dddd\u{7}\u{1b}]10;rgb:dddd/dddd/dddd\u{7}\u{1b}]11;rgb:0000/0000/0000\u{7}"
            "#]],
        );
        check(
            b"\x1b[?2026$p\x1b[4$p\x1bP+q6b75;6b64\x1b\\\x1bP$qm\x1b\\\x1bPzz\x1b\\\x1b[18t",
            expect![[r#"
                pending ""
                replies "\u{1b}[?2026;0$y\u{1b}[4;0$y\u{1b}P0+r6b75;6b64\u{1b}\\\u{1b}P0$r\u{1b}\\"
            "#]],
        );
    }

    /// What the programs recorded at start-up and exit asked, answered in order.
    #[test]
    fn recorded_queries_are_answered() {
        let mut text = String::new();
        for (name, raw) in [
            (
                "vim",
                &include_bytes!("../../test_data/queries-vim.raw")[..],
            ),
            ("less", include_bytes!("../../test_data/queries-less.raw")),
            ("htop", include_bytes!("../../test_data/queries-htop.raw")),
            ("bash", include_bytes!("../../test_data/queries-bash.raw")),
            (
                "python",
                include_bytes!("../../test_data/queries-python.raw"),
            ),
            (
                "ipython",
                include_bytes!("../../test_data/queries-ipython.raw"),
            ),
            ("node", include_bytes!("../../test_data/queries-node.raw")),
        ] {
            let mut out = Rendered::default();
            Renderer::new(120, 40).feed(raw, &mut out);
            let replies = String::from_utf8_lossy(&out.replies);
            text.push_str(&format!("{name}: {replies:?}\n"));
        }
        expect_file!["../../test_data/queries.expected"].assert_eq(&text);
    }

    #[test]
    fn recorded_ls_color() {
        expect_file!["../../test_data/ls-color.expected"].assert_eq(&rendered_every_way(
            include_bytes!("../../test_data/ls-color.raw"),
        ));
    }

    #[test]
    fn recorded_progress_bar() {
        expect_file!["../../test_data/progress.expected"].assert_eq(&rendered_every_way(
            include_bytes!("../../test_data/progress.raw"),
        ));
    }

    #[test]
    fn recorded_bash_session() {
        expect_file!["../../test_data/bash.expected"].assert_eq(&rendered_every_way(
            include_bytes!("../../test_data/bash.raw"),
        ));
    }

    #[test]
    fn recorded_python_repl() {
        expect_file!["../../test_data/python.expected"].assert_eq(&rendered_every_way(
            include_bytes!("../../test_data/python.raw"),
        ));
    }

    #[test]
    fn recorded_git_log_graph() {
        check(
            include_bytes!("../../test_data/git-log-graph.raw"),
            expect![[r#"
                line "*   merge side"
                line "|\\  "
                line "| * side2"
                line "| * side1"
                line "* | main1"
                line "|/  "
                line "* c2"
                line "* c1"
                pending ""
            "#]],
        );
    }

    /// bash's readline on a window 20 columns wide, recorded: a command that wraps, edited
    /// in the middle (the cursor goes up a row within it and back) and at its end. The
    /// line feed readline moves down the wrapped row with ends the line, as it did before
    /// rows were followed.
    #[test]
    fn recorded_readline_edit_of_a_wrapped_line() {
        let mut renderer = Renderer::new(20, 10);
        let mut out = Rendered::default();
        renderer.feed(
            include_bytes!("../../test_data/bash-wrapped-edit.raw"),
            &mut out,
        );
        renderer.fix(&mut out);
        expect![[r#"
            (
                [
                    "$ echo XaaaaaaaaaabbbbbbbbbbccccccccZ",
                    "XaaaaaaaaaabbbbbbbbbbccccccccZ",
                    "$ exit",
                    "exit",
                ],
                "",
            )
        "#]]
        .assert_debug_eq(&(out.lines, renderer.pending()));
    }

    /// The lines of a recording made in a window `cols` wide, read at its end.
    fn replayed(raw: &[u8], cols: u16) -> (Vec<String>, String) {
        let mut renderer = Renderer::new(cols, 10);
        let mut out = Rendered::default();
        renderer.feed(raw, &mut out);
        renderer.fix(&mut out);
        (out.lines, renderer.pending())
    }

    #[test]
    fn recorded_bash_commands_that_fill_the_window() {
        // 40 columns: `$ echo A…` exactly one row, `$ echo B…1` too, `$ echo C…` two.
        expect![[r#"
            (
                [
                    "$ echo AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                    "$ echo BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB1",
                    "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB1",
                    "$ echo CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC",
                    "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC",
                    "$ echo hi",
                    "hi",
                    "$ exit",
                    "exit",
                ],
                "",
            )
        "#]]
        .assert_debug_eq(&replayed(include_bytes!("../../test_data/bash-exact-width.raw"), 40));
    }

    #[test]
    fn recorded_zsh_commands_that_fill_the_window() {
        // zsh's line editor, and its end-of-line mark that fills a row exactly.
        expect![[r#"
            (
                [
                    "                                        ",
                    "$ echo AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                    "$ echo BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB1",
                    "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB1",
                    "$ echo CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC",
                    "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC",
                    "$ echo hi",
                    "hi",
                    "$ exit",
                ],
                "",
            )
        "#]]
        .assert_debug_eq(&replayed(include_bytes!("../../test_data/zsh-exact-width.raw"), 40));
    }

    #[test]
    fn recorded_python_expressions_that_fill_the_window() {
        // 26 columns, python's readline: two rows of one, then one of two.
        expect![[r#"
            (
                [
                    ">>> 11111111111111111111*3",
                    "33333333333333333333",
                    ">>> 22222222222222222222*3",
                    "66666666666666666666",
                    ">>> 3333333333333333333333333333333333333333333333*3",
                    "9999999999999999999999999999999999999999999999",
                    ">>> 7*6",
                    "42",
                ],
                ">>> ",
            )
        "#]]
        .assert_debug_eq(&replayed(
            include_bytes!("../../test_data/python-exact-width.raw"),
            26,
        ));
    }

    /// Frames of two progress bars as uv, pip and rich draw them: each row erased and drawn
    /// again, and each frame after the first drawn over the one before (cursor up two
    /// rows), unless `over` says the first is drawn over earlier ones too.
    fn two_bars(frames: &[(u32, u32)], over: bool) -> Vec<u8> {
        let mut bytes = Vec::new();
        for (i, (a, b)) in frames.iter().enumerate() {
            if i > 0 || over {
                bytes.extend_from_slice(b"\x1b[2A");
            }
            bytes.extend(
                format!("\r\x1b[2Kget a.whl {a:>3}%\r\n\r\x1b[2Kget b.whl {b:>3}%\r\n").bytes(),
            );
        }
        bytes
    }

    const FRAMES: [(u32, u32); 5] = [(0, 0), (25, 10), (50, 20), (75, 35), (100, 50)];

    /// What each read delivers when `reads` come one after another, each read after its
    /// bytes were fed.
    fn read_in_turn(reads: &[&[u8]]) -> String {
        let mut renderer = Renderer::new(120, 40);
        let mut text = String::new();
        for (i, bytes) in reads.iter().enumerate() {
            let mut out = Rendered::default();
            renderer.feed(bytes, &mut out);
            renderer.fix(&mut out);
            text.push_str(&format!("read {i}\n"));
            for line in &out.lines {
                text.push_str(&format!("  line {line:?}\n"));
            }
            text.push_str(&format!("  pending {:?}\n", renderer.pending()));
        }
        text
    }

    #[test]
    fn rows_redrawn_before_they_are_read_come_as_last_drawn() {
        let mut bytes = two_bars(&FRAMES, false);
        bytes.extend_from_slice(b"done\r\n$ ");
        check(
            &bytes,
            expect![[r#"
                line "get a.whl 100%"
                line "get b.whl  50%"
                line "done"
                pending "$ "
            "#]],
        );
    }

    #[test]
    fn rows_read_mid_way_stay_as_delivered_and_the_rest_come_as_last_drawn() {
        let mut rest = two_bars(&FRAMES[2..], true);
        rest.extend_from_slice(b"done\r\n");
        expect![[r#"
            read 0
              line "get a.whl  25%"
              line "get b.whl  10%"
              pending ""
            read 1
              line "get a.whl 100%"
              line "get b.whl  50%"
              line "done"
              pending ""
        "#]]
        .assert_eq(&read_in_turn(&[&two_bars(&FRAMES[..2], false), &rest]));
        // A row drawn again as it was delivered is no new line.
        let same = two_bars(&[(25, 10), (25, 20)], true);
        expect![[r#"
            read 0
              line "get a.whl  25%"
              line "get b.whl  10%"
              pending ""
            read 1
              line "get b.whl  20%"
              pending ""
        "#]]
        .assert_eq(&read_in_turn(&[&two_bars(&FRAMES[..2], false), &same]));
    }

    #[test]
    fn redrawn_rows_then_ordinary_lines() {
        let mut bytes = b"$ pip install x\r\n".to_vec();
        bytes.extend(two_bars(&FRAMES, false));
        bytes.extend_from_slice(b"Installed 2 packages\r\nok\r\n$ ");
        check(
            &bytes,
            expect![[r#"
                line "$ pip install x"
                line "get a.whl 100%"
                line "get b.whl  50%"
                line "Installed 2 packages"
                line "ok"
                pending "$ "
            "#]],
        );
    }

    /// indicatif (uv) and rich (pip) clear a frame before drawing the next one: up a row
    /// and erase it, row by row; cleared for good, the rows are drawn over by what follows.
    #[test]
    fn bars_cleared_row_by_row() {
        let frame = |a: u32, b: u32| format!("get a {a:>3}%\r\nget b {b:>3}%");
        let clear = "\r\x1b[2K\x1b[1A\r\x1b[2K";
        let bytes = format!(
            "{}{clear}{}{clear}{}{clear}Installed 2 packages in 3ms\r\n$ ",
            frame(0, 0),
            frame(50, 10),
            frame(100, 100)
        );
        check(
            bytes.as_bytes(),
            expect![[r#"
                line "Installed 2 packages in 3ms"
                pending "$ "
            "#]],
        );
    }

    #[test]
    fn docker_pull() {
        check(
            include_bytes!("../../test_data/docker-pull.raw"),
            expect![[r#"
                line "latest: Pulling from library/ubuntu"
                line "6e909acdb790: Pull complete "
                line "5c4a7b8e2d1f: Pull complete "
                line "9b2d3c4e5f60: Pull complete "
                line "Digest: sha256:80dd3c3b9c6cecb9f1667e9290b3bc61b78c2678c02cbdae5f0fea92cc6734ab"
                line "Status: Downloaded newer image for ubuntu:latest"
                line "docker.io/library/ubuntu:latest"
                pending ""
            "#]],
        );
    }

    /// `top` on the main screen, recorded: six frames, each repainted from the top-left
    /// corner (rows that did not change are skipped with a line feed).
    #[test]
    fn a_repainted_window_reads_as_one_frame() {
        let top = include_bytes!("../../test_data/screen/top.raw");
        let frames = |text: &str| {
            let lines: Vec<&str> = text.lines().collect();
            let starts = lines.iter().filter(|l| l.contains("top - ")).count();
            let merged = lines.iter().any(|l| {
                l.contains("top - ") && !l.trim_start_matches("  line \"").starts_with("top - ")
            });
            (lines.len(), starts, merged)
        };
        // Read once at the end: the last frame, once.
        let once = read_in_turn(&[top]);
        assert_eq!(frames(&once), (1 + 39 + 1, 1, false), "{once}");
        // Read after each frame: the rows that changed, never two frames in one line.
        let cuts = [0, 6223, 11520, 16969, 22262, 27715, top.len()];
        let reads: Vec<&[u8]> = cuts.windows(2).map(|w| &top[w[0]..w[1]]).collect();
        let each = read_in_turn(&reads);
        for read in each.split("read ").skip(1) {
            let (lines, starts, merged) = frames(read);
            assert!(lines <= 1 + 39 + 1 && starts <= 1 && !merged, "{read}");
        }
    }

    #[test]
    fn a_clear_keeps_what_was_not_read() {
        check(
            b"one\r\ntwo\r\nthree\x1b[H\x1b[2Jafter\r\n\x1b[3;1Hrow three\r\n",
            expect![[r#"
                line "one"
                line "two"
                line "three"
                line "after"
                line ""
                line "row three"
                pending ""
            "#]],
        );
    }

    #[test]
    fn a_loop_that_clears_each_frame_is_read_one_frame_at_a_time() {
        // What was there before the first clear stays; each frame drawn after a clear
        // and cleared again unread is replaced, as on the screen.
        check(
            b"before\r\n\x1b[H\x1b[2Jframe 1\r\nload 0.1\x1b[H\x1b[2Jframe 2\r\nload 0.2\x1b[H\x1b[2Jframe 3\r\nload 0.3\r\n",
            expect![[r#"
                line "before"
                line ""
                line "frame 3"
                line "load 0.3"
                pending ""
            "#]],
        );
        // Output that scrolled off the top after a clear is no frame: kept.
        let mut long = b"\x1b[H\x1b[2J".to_vec();
        for n in 0..50 {
            long.extend(format!("build {n}\r\n").bytes());
        }
        long.extend(b"\x1b[H\x1b[2Jdone\r\n");
        let lines = rendered_every_way(&long);
        assert!(lines.contains("line \"build 0\"\n"), "{lines}");
        assert!(lines.contains("line \"build 49\"\n"), "{lines}");
        assert!(lines.contains("line \"done\"\n"), "{lines}");
    }

    /// A completion menu drawn below the input line and erased (ED 0) before anyone read it
    /// never becomes lines.
    #[test]
    fn rows_erased_before_they_are_read_are_no_lines() {
        check(
            b">>> pri\r\n  print\r\n  printf\x1b[2A\r\x1b[7C\x1b[Jnt(1)\r\n1\r\n>>> ",
            expect![[r#"
                line ">>> print(1)"
                line "1"
                pending ">>> "
            "#]],
        );
    }

    /// While a scroll region smaller than the window is set (apt's progress line at the
    /// bottom), rows are not followed: the line view of before.
    #[test]
    fn a_scroll_region_turns_rows_off() {
        check(
            b"Unpacking a\r\n\x1b7\x1b[0;39r\x1b8\x1b[1A\r\nSetting up a\r\n\x1b7\x1b[40;0fProgress: [ 50%]\x1b8Setting up b\r\n\x1b7\x1b[0;40r\x1b8\x1b[J",
            expect![[r#"
                line "Unpacking a"
                line ""
                line "Setting up a"
                line "Progress: [ 50%]Setting up b"
                pending ""
            "#]],
        );
    }

    /// One thing a program does to a line, for the model test.
    #[derive(Debug, Clone)]
    enum Op {
        Print(char),
        Newline,
        Return,
        Backspace,
        Right(u16),
        Left(u16),
        Column(u16),
        EraseInLine(u16),
        Delete(u16),
        InsertBlanks(u16),
        EraseChars(u16),
    }

    impl Op {
        fn bytes(&self) -> Vec<u8> {
            match self {
                Op::Print(c) => c.to_string().into_bytes(),
                // What a terminal gets from a line end, the tty's ONLCR turning `\n` into
                // `\r\n`; the renderer treats both alike.
                Op::Newline => b"\r\n".to_vec(),
                Op::Return => b"\r".to_vec(),
                Op::Backspace => b"\x08".to_vec(),
                Op::Right(n) => format!("\x1b[{n}C").into_bytes(),
                Op::Left(n) => format!("\x1b[{n}D").into_bytes(),
                Op::Column(n) => format!("\x1b[{n}G").into_bytes(),
                Op::EraseInLine(n) => format!("\x1b[{n}K").into_bytes(),
                Op::Delete(n) => format!("\x1b[{n}P").into_bytes(),
                Op::InsertBlanks(n) => format!("\x1b[{n}@").into_bytes(),
                Op::EraseChars(n) => format!("\x1b[{n}X").into_bytes(),
            }
        }
    }

    /// A cell of the model's line.
    #[derive(Debug, Clone, PartialEq)]
    enum Cell {
        /// A character of width 1 or 2 with the zero-width characters attached to it.
        Char(String),
        /// The right half of the wide character before it.
        Right,
    }

    impl Cell {
        fn blank() -> Cell {
            Cell::Char(" ".to_owned())
        }

        fn len(&self) -> usize {
            match self {
                Cell::Char(text) => text.len(),
                Cell::Right => 0,
            }
        }
    }

    /// The line rules written plainly, a vector of cells: what the renderer, which works on
    /// bytes, must agree with.
    #[derive(Default)]
    struct Model {
        lines: Vec<String>,
        cells: Vec<Cell>,
        col: usize,
        /// The bytes of every zero-width character attached so far: with four bytes a cell,
        /// an upper bound of the line's length that spares most counts of it.
        attached: usize,
    }

    fn text(cells: &[Cell]) -> String {
        cells
            .iter()
            .filter_map(|cell| match cell {
                Cell::Char(text) => Some(text.replace(SPACER, "")),
                Cell::Right => None,
            })
            .collect()
    }

    fn bytes(cells: &[Cell]) -> usize {
        cells.iter().map(Cell::len).sum()
    }

    impl Model {
        /// A wide character whose right half is `cell` becomes two blanks, or one at the end.
        fn split(&mut self, cell: usize) {
            if cell < self.cells.len() && self.cells[cell] == Cell::Right {
                self.cells[cell - 1] = Cell::blank();
                if cell + 1 == self.cells.len() {
                    self.cells.pop();
                } else {
                    self.cells[cell] = Cell::blank();
                }
            }
        }

        /// Whether the line may be longer than the bound.
        fn may_exceed(&self) -> bool {
            4 * self.cells.len() + self.attached > MAX_LINE_BYTES
        }

        fn blank(&mut self, from: usize, to: usize) {
            self.split(to);
            self.split(from);
            let to = to.min(self.cells.len());
            if from < to {
                self.cells[from..to].fill(Cell::blank());
            }
        }

        fn print(&mut self, c: char) {
            let Some(width) = super::width(c) else {
                return;
            };
            if width == 0 {
                let target = self.col.saturating_sub(1);
                let pad = (target + 1).saturating_sub(self.cells.len());
                if bytes(&self.cells) + pad + c.len_utf8() > MAX_LINE_BYTES {
                    return;
                }
                self.cells.resize(self.cells.len() + pad, Cell::blank());
                let at = if self.cells[target] == Cell::Right {
                    target - 1
                } else {
                    target
                };
                if let Cell::Char(text) = &mut self.cells[at] {
                    text.push(c);
                    self.attached += c.len_utf8();
                }
                return;
            }
            if width == 2 && self.col == MAX_LINE_BYTES {
                // The last column of the renderer's window, as wide as a line may be long:
                // a wide character goes to the next screen row.
                self.print(SPACER);
            }
            self.split(self.col + width);
            self.split(self.col);
            let mut new = vec![Cell::Char(c.to_string())];
            if width == 2 {
                new.push(Cell::Right);
            }
            if self.col >= self.cells.len() {
                self.cells.resize(self.col, Cell::blank());
                self.cells.extend(new);
            } else {
                let to = (self.col + width).min(self.cells.len());
                self.cells.splice(self.col..to, new);
            }
            self.col += width;
            while self.may_exceed() && bytes(&self.cells) > MAX_LINE_BYTES {
                let (mut fits, mut taken) = (0, 0);
                while taken + self.cells[fits].len() <= MAX_LINE_BYTES {
                    taken += self.cells[fits].len();
                    fits += 1;
                }
                self.lines.push(text(&self.cells[..fits]));
                self.cells.drain(..fits);
                self.col = self.col.saturating_sub(fits);
            }
        }

        fn apply(&mut self, op: &Op) {
            let count = |n: &u16| usize::from(*n.max(&1));
            let len = self.cells.len();
            match op {
                Op::Print(c) => self.print(*c),
                Op::Newline => {
                    self.lines.push(text(&self.cells));
                    self.cells.clear();
                    self.col = 0;
                }
                Op::Return => self.col = 0,
                Op::Backspace => self.col = self.col.saturating_sub(1),
                Op::Right(n) => self.col = (self.col + count(n)).min(MAX_LINE_BYTES),
                Op::Left(n) => self.col = self.col.saturating_sub(count(n)),
                Op::Column(n) => self.col = (count(n) - 1).min(MAX_LINE_BYTES),
                Op::EraseInLine(0) => {
                    self.split(self.col);
                    self.cells.truncate(self.col);
                }
                Op::EraseInLine(1) => self.blank(0, (self.col + 1).min(len)),
                Op::EraseInLine(2) => self.cells.clear(),
                Op::EraseInLine(_) => {}
                Op::Delete(n) => {
                    let end = (self.col + count(n)).min(len);
                    self.split(end);
                    self.split(self.col);
                    let end = end.min(self.cells.len());
                    if self.col < end {
                        self.cells.drain(self.col..end);
                    }
                }
                Op::InsertBlanks(n) => {
                    self.split(self.col);
                    if self.col < self.cells.len() {
                        let blanks =
                            std::iter::repeat_n(Cell::blank(), count(n).min(MAX_LINE_BYTES));
                        self.cells.splice(self.col..self.col, blanks);
                        while self.may_exceed() && bytes(&self.cells) > MAX_LINE_BYTES {
                            self.cells.pop();
                        }
                    }
                }
                Op::EraseChars(n) => {
                    let end = (self.col + count(n)).min(len);
                    if self.col < end {
                        self.blank(self.col, end);
                    }
                }
            }
        }
    }

    /// Counts: mostly small, now and then (with `big`) one that reaches the 64 KiB bound.
    fn op_with(chars: Vec<char>, big: bool) -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let n = move || {
            let big = if big { 1 } else { 0 };
            prop_oneof![8 => 0u16..10, big => 21_000u16..=65_535]
        };
        prop_oneof![
            12 => proptest::sample::select(chars).prop_map(Op::Print),
            2 => Just(Op::Newline),
            2 => Just(Op::Return),
            1 => Just(Op::Backspace),
            1 => n().prop_map(Op::Right),
            1 => n().prop_map(Op::Left),
            1 => n().prop_map(Op::Column),
            1 => (0u16..4).prop_map(Op::EraseInLine),
            1 => n().prop_map(Op::Delete),
            1 => n().prop_map(Op::InsertBlanks),
            1 => n().prop_map(Op::EraseChars),
        ]
    }

    /// Any op, with narrow, wide and zero-width characters (a combining acute accent, a
    /// zero-width joiner, a variation selector), and DEL.
    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        op_with(
            vec![
                'a', 'b', ' ', 'é', '語', '日', '🦀', '\u{301}', '\u{200d}', '\u{fe0f}', '\x7f',
            ],
            true,
        )
    }

    /// Whether `op` would erase half of a wide character of `line` (leaving the other half
    /// standing, as alacritty does, where xterm and the renderer blank both halves).
    fn erases_half_a_wide_character(line: &Line, op: &Op) -> bool {
        let count = |n: &u16| usize::from(*n.max(&1));
        let splits = |cell: usize| cell < line.cells && line.group(cell).first != cell;
        match op {
            Op::EraseInLine(0) | Op::InsertBlanks(_) => splits(line.col),
            Op::EraseInLine(1) => splits(line.col + 1),
            Op::Delete(n) | Op::EraseChars(n) => splits(line.col) || splits(line.col + count(n)),
            _ => false,
        }
    }

    /// One thing a program does to the rows of its window, for the window test: line
    /// edits, movements between rows, erasing, and a read by the agent.
    #[derive(Debug, Clone)]
    enum RowOp {
        Print(char),
        Newline,
        Return,
        Backspace,
        Up(u16),
        Down(u16),
        Goto(u16, u16),
        EraseInLine(u16),
        EraseBelow,
        EraseScreen,
        Read,
    }

    impl RowOp {
        fn bytes(&self) -> Vec<u8> {
            match self {
                RowOp::Print(c) => c.to_string().into_bytes(),
                RowOp::Newline => b"\r\n".to_vec(),
                RowOp::Return => b"\r".to_vec(),
                RowOp::Backspace => b"\x08".to_vec(),
                RowOp::Up(n) => format!("\x1b[{n}A").into_bytes(),
                RowOp::Down(n) => format!("\x1b[{n}B").into_bytes(),
                RowOp::Goto(row, col) => format!("\x1b[{row};{col}H").into_bytes(),
                RowOp::EraseInLine(n) => format!("\x1b[{n}K").into_bytes(),
                RowOp::EraseBelow => b"\x1b[J".to_vec(),
                RowOp::EraseScreen => b"\x1b[2J".to_vec(),
                RowOp::Read => Vec::new(),
            }
        }
    }

    fn row_op() -> impl proptest::strategy::Strategy<Value = RowOp> {
        use proptest::prelude::*;
        prop_oneof![
            10 => proptest::sample::select(vec!['a', 'b', 'c', ' ', 'é']).prop_map(RowOp::Print),
            3 => Just(RowOp::Newline),
            1 => Just(RowOp::Return),
            1 => Just(RowOp::Backspace),
            2 => (0u16..4).prop_map(RowOp::Up),
            2 => (0u16..4).prop_map(RowOp::Down),
            2 => (1u16..10, 1u16..20).prop_map(|(row, col)| RowOp::Goto(row, col)),
            1 => (0u16..3).prop_map(RowOp::EraseInLine),
            1 => Just(RowOp::EraseBelow),
            1 => Just(RowOp::EraseScreen),
            2 => Just(RowOp::Read),
        ]
    }

    /// What a program does to a window it fills to the edge, for the wrap test: line
    /// edits and movements at every column, the last one above all.
    #[derive(Debug, Clone)]
    enum WrapOp {
        Print(char),
        /// Characters up to the last column exactly (a pending wrap), and `n` screen rows
        /// more.
        Fill(char, u16),
        Newline,
        /// A lone `\n`: the renderer ends the line and goes to the first column, as a
        /// terminal does after the tty's ONLCR (the emulator gets `\n\r`).
        LineFeed,
        /// A new window width (the height stays).
        Resize(u16),
        Return,
        Backspace,
        Up(u16),
        Down(u16),
        Right(u16),
        Left(u16),
        Column(u16),
        Goto(u16, u16),
        EraseInLine(u16),
        EraseChars(u16),
        Delete(u16),
        InsertBlanks(u16),
        EraseBelow,
        EraseScreen,
        Read,
    }

    impl WrapOp {
        /// Its bytes for a renderer in the state `line` is in, in a window `rows` high: no
        /// row grows taller than the window but one row (the top of a row taller than the
        /// window is not followed).
        fn bytes(&self, line: &Line, rows: u16) -> Vec<u8> {
            let room = (usize::from(rows) - 1) * line.cols;
            match self {
                WrapOp::Print(_) if line.col >= room => Vec::new(),
                WrapOp::Print(c) => c.to_string().into_bytes(),
                WrapOp::Fill(c, n) => {
                    let count = line.cols - line.col % line.cols + usize::from(*n) * line.cols;
                    let count = count.min(room.saturating_sub(line.col));
                    c.to_string().repeat(count).into_bytes()
                }
                WrapOp::Newline => b"\r\n".to_vec(),
                WrapOp::LineFeed => b"\n".to_vec(),
                WrapOp::Resize(_) => Vec::new(),
                WrapOp::Return => b"\r".to_vec(),
                WrapOp::Backspace => b"\x08".to_vec(),
                WrapOp::Up(n) => format!("\x1b[{n}A").into_bytes(),
                WrapOp::Down(n) => format!("\x1b[{n}B").into_bytes(),
                WrapOp::Right(n) => format!("\x1b[{n}C").into_bytes(),
                WrapOp::Left(n) => format!("\x1b[{n}D").into_bytes(),
                WrapOp::Column(n) => format!("\x1b[{n}G").into_bytes(),
                WrapOp::Goto(row, col) => format!("\x1b[{row};{col}H").into_bytes(),
                WrapOp::EraseInLine(n) => format!("\x1b[{n}K").into_bytes(),
                WrapOp::EraseChars(n) => format!("\x1b[{n}X").into_bytes(),
                WrapOp::Delete(n) => format!("\x1b[{n}P").into_bytes(),
                WrapOp::InsertBlanks(n) => format!("\x1b[{n}@").into_bytes(),
                WrapOp::EraseBelow => b"\x1b[J".to_vec(),
                WrapOp::EraseScreen => b"\x1b[2J".to_vec(),
                WrapOp::Read => Vec::new(),
            }
        }
    }

    fn wrap_op() -> impl proptest::strategy::Strategy<Value = WrapOp> {
        use proptest::prelude::*;
        let chars = || proptest::sample::select(vec!['a', 'b', 'c', ' ', 'é']);
        prop_oneof![
            8 => chars().prop_map(WrapOp::Print),
            2 => Just(WrapOp::Print('日')),
            4 => (chars(), 0u16..3).prop_map(|(c, n)| WrapOp::Fill(c, n)),
            3 => Just(WrapOp::Newline),
            1 => Just(WrapOp::LineFeed),
            1 => (2u16..12).prop_map(WrapOp::Resize),
            2 => Just(WrapOp::Return),
            1 => Just(WrapOp::Backspace),
            1 => (0u16..4).prop_map(WrapOp::Up),
            1 => (0u16..4).prop_map(WrapOp::Down),
            1 => (0u16..6).prop_map(WrapOp::Right),
            1 => (0u16..6).prop_map(WrapOp::Left),
            1 => (0u16..20).prop_map(WrapOp::Column),
            1 => (1u16..10, 1u16..20).prop_map(|(row, col)| WrapOp::Goto(row, col)),
            2 => (0u16..3).prop_map(WrapOp::EraseInLine),
            1 => (0u16..6).prop_map(WrapOp::EraseChars),
            1 => (0u16..6).prop_map(WrapOp::Delete),
            1 => (0u16..6).prop_map(WrapOp::InsertBlanks),
            1 => Just(WrapOp::EraseBelow),
            1 => Just(WrapOp::EraseScreen),
            2 => Just(WrapOp::Read),
        ]
    }

    /// As [`erases_half_a_wide_character`], for the wrap test's ops: within the cursor's
    /// screen row, from the cell the cursor shows on.
    fn wrap_op_erases_half_a_wide_character(line: &Line, op: &WrapOp) -> bool {
        let count = |n: &u16| usize::from(*n.max(&1));
        let splits = |cell: usize| cell < line.cells && line.group(cell).first != cell;
        let (shown, end) = (line.shown(), line.screen_row().1);
        match op {
            WrapOp::EraseInLine(0) | WrapOp::EraseBelow => splits(shown) || splits(end),
            WrapOp::InsertBlanks(n) => {
                splits(shown) || splits(end) || splits(end - count(n).min(end - shown))
            }
            WrapOp::EraseInLine(1) => splits(shown + 1),
            WrapOp::EraseInLine(_) => splits(line.screen_row().0) || splits(end),
            WrapOp::Delete(n) | WrapOp::EraseChars(n) => {
                splits(shown) || splits((shown + count(n)).min(end))
            }
            _ => false,
        }
    }

    /// The window's screen rows as the renderer holds them, top first: `None` where a row
    /// stood that left the window already (a line), else the text of that screen row.
    fn screen_rows(renderer: &Renderer) -> Vec<Option<String>> {
        let line = &renderer.line;
        let cols = renderer.rows.cols();
        let mut screen = Vec::new();
        for span in renderer.rows.spans(&line.text, line.extent()) {
            let Some((text, extent, _)) = span else {
                screen.push(None);
                continue;
            };
            let mut rows = vec![String::new(); crate::term::rows::height(extent, cols)];
            let mut cell = 0;
            for c in text.chars() {
                let width = super::width(c).unwrap_or(0);
                let row = (cell / cols).min(rows.len() - 1);
                if c != SPACER {
                    rows[row].push(c);
                }
                cell += width;
            }
            screen.extend(rows.into_iter().map(Some));
        }
        screen
    }

    /// The lines that hold more than blanks, trailing blanks trimmed.
    fn nonblank(lines: &[String]) -> Vec<String> {
        lines
            .iter()
            .map(|line| line.trim_end_matches(' ').to_owned())
            .filter(|line| !line.is_empty())
            .collect()
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// Any bytes, split anywhere, render the same as when fed whole, without a panic
        /// and within the line bound.
        #[test]
        fn chunking_never_changes_the_result(
            input in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::num::u8::ANY.prop_map(|byte| vec![byte]),
                    proptest::sample::select(b"\x1b[;?0123456789HJKCDGPX@mhlnc\r\n\x08\t]\x07\\\x7f".to_vec())
                        .prop_map(|byte| vec![byte]),
                    proptest::sample::select(vec!["日", "é", "🦀", "\u{301}", "\u{fe0f}"])
                        .prop_map(|s| s.as_bytes().to_vec()),
                ],
                0..3000,
            ).prop_map(|pieces| pieces.concat()),
            seed in 1u64..1000,
        ) {
            let whole = render(40, &mut std::iter::once(input.as_slice()));
            let chunks = render(40, &mut chunked(&input, seed).into_iter());
            proptest::prop_assert_eq!(whole, chunks);
            let mut renderer = Renderer::new(120, 40);
            let mut out = Rendered::default();
            renderer.feed(&input, &mut out);
            renderer.fix(&mut out);
            proptest::prop_assert!(out.lines.iter().all(|l| l.len() <= MAX_LINE_BYTES));
            proptest::prop_assert!(renderer.pending().len() <= MAX_LINE_BYTES);
        }

        /// Rows redrawn with cursor movements, row addresses and erasing: the window shows
        /// what an emulator fed the same bytes shows, and the lines delivered, followed by
        /// the window, are the rows the emulator scrolled away followed by its screen
        /// (blank rows aside, which the terminal keeps and lines need not) — except where
        /// a read fixed a row before it was redrawn or erased: then the rows that were
        /// delivered are still there besides, every row the emulator has among them.
        /// Printing stops short of the last column (a line view does not wrap where a
        /// terminal would), and erasing below from the top-left corner, which clears the
        /// screen for the emulator, keeps the rows nobody has read.
        #[test]
        fn rows_agree_with_the_screen(
            ops in proptest::collection::vec(row_op(), 0..200),
            rows in 3u16..8,
            reads: bool,
        ) {
            const COLS: u16 = 20;
            let mut renderer = Renderer::new(COLS, rows);
            let mut emulator = crate::term::screen::Emulator::with_history(COLS, rows, 100_000);
            let mut out = Rendered::default();
            let mut fixed = false;
            let mut replaced = Vec::new();
            for op in &ops {
                match op {
                    RowOp::Read => {
                        if reads {
                            renderer.fix(&mut out);
                            fixed = true;
                        }
                        continue;
                    }
                    RowOp::Print(_) if renderer.line.col + 1 >= usize::from(COLS) => continue,
                    RowOp::EraseBelow if renderer.rows.at_home(renderer.line.col) => continue,
                    _ => {}
                }
                // A clear over a frame replaces it: the rows the emulator keeps of it are
                // none of the renderer's lines.
                let frame = matches!(op, RowOp::EraseScreen) && renderer.rows.frame();
                let before = emulator.history_len();
                renderer.feed(&op.bytes(), &mut out);
                emulator.feed(&op.bytes());
                if frame {
                    replaced.push(before..emulator.history_len());
                }
            }
            let window = renderer.rows.screen(&renderer.line.text);
            proptest::prop_assert!(window.len() <= usize::from(rows), "{:?}", window);
            for row in 0..rows {
                let ours = window.get(usize::from(row)).map_or("", |l| l.trim_end_matches(' '));
                proptest::prop_assert_eq!(ours, emulator.row_text(row), "row {}", row);
            }
            let col = renderer.line.col;
            let cursor = emulator.cursor();
            proptest::prop_assert_eq!(
                (renderer.rows.cursor_row(col), renderer.rows.screen_col(col)),
                (usize::from(cursor.row), usize::from(cursor.col))
            );
            let mut ours = out.lines.clone();
            ours.extend(window);
            let mut theirs: Vec<String> = emulator
                .history()
                .into_iter()
                .enumerate()
                .filter(|(n, _)| !replaced.iter().any(|r: &std::ops::Range<usize>| r.contains(n)))
                .map(|(_, line)| line)
                .collect();
            theirs.extend((0..rows).map(|row| emulator.row_text(row)));
            let (ours, theirs) = (nonblank(&ours), nonblank(&theirs));
            if !fixed {
                proptest::prop_assert_eq!(ours, theirs);
            } else {
                let mut left = ours.clone();
                for line in &theirs {
                    let found = left.iter().position(|l| l == line);
                    proptest::prop_assert!(found.is_some(), "{:?} missing from {:?}", line, ours);
                    left.remove(found.expect("found"));
                }
            }
        }

        /// Rows filled to the last column and beyond, edited and moved over at every
        /// column: the window shows what an emulator fed the same bytes shows, the cursor
        /// stands where the emulator's does, and the lines delivered, followed by the
        /// window's rows, are the emulator's lines (its rows joined by their wrap marks) —
        /// where a read fixed a row before it changed, every line of the emulator's is among
        /// them; a line feed into a wrapped row's next screen row ends the row there (see
        /// [`Cooker::line_feed`]), where the emulator's wrap mark stays. Left out: deleting more characters than the row has left (alacritty then
        /// clears cells before the cursor, which xterm does not) and erasing below from the
        /// top-left corner (see above).
        #[test]
        fn wrapped_rows_agree_with_the_screen(
            ops in proptest::collection::vec(wrap_op(), 0..120),
            cols in 2u16..12,
            rows in 2u16..7,
            reads: bool,
        ) {
            let mut renderer = Renderer::new(cols, rows);
            let mut emulator = crate::term::screen::Emulator::with_history(cols, rows, 100_000);
            let mut out = Rendered::default();
            let mut fixed = false;
            let mut cuts = Vec::new();
            let mut unjoined = false;
            let mut resized = false;
            let mut edited_wrapped = false;
            let mut replaced = Vec::new();
            for op in &ops {
                let line = &renderer.line;
                match op {
                    WrapOp::Read => {
                        if reads {
                            renderer.fix(&mut out);
                            fixed = true;
                        }
                        continue;
                    }
                    WrapOp::Delete(n) if usize::from((*n).max(1)) > line.cols - line.shown() % line.cols => continue,
                    WrapOp::EraseBelow if renderer.rows.at_home(line.shown()) => continue,
                    _ if wrap_op_erases_half_a_wide_character(line, op) => continue,
                    _ => {}
                }
                // The renderer ends a wrapped row at a line feed into its next screen row,
                // where the emulator's wrap mark stays (until a wrap puts one back): lines
                // are not compared then, the window still is.
                unjoined |= matches!(op, WrapOp::Newline | WrapOp::LineFeed)
                    && !line.wrap
                    && line.continues()
                    && line.blank_after(line.screen_row().1);
                // A known difference, not yet resolved: deleting or inserting in a wrapped
                // row's screen row ends the row there, and the emulator, resized after it,
                // still reflows the row joined to the next (3 columns: `aaa`+`aaa`, DCH at
                // the first row's middle, resize to 2: it has `aaaaa`, the renderer `aa`,
                // `aaa`). Lines after such a resize are not compared; the window before it is.
                edited_wrapped |= matches!(op, WrapOp::Delete(_) | WrapOp::InsertBlanks(_))
                    && line.continues();
                if let WrapOp::Resize(to) = op {
                    // The last op: after it the emulator reflows its window its own way
                    // (where the cursor lands, a pending wrap kept or not), which what
                    // follows would build on.
                    renderer.resize(*to, rows, &mut out);
                    emulator.resize(*to, rows);
                    resized = true;
                    break;
                }
                let bytes = op.bytes(line, rows);
                // A clear over a frame replaces it (see the test above).
                let frame = matches!(op, WrapOp::EraseScreen) && renderer.rows.frame();
                let before = emulator.history_len();
                renderer.feed(&bytes, &mut out);
                emulator.feed(&bytes);
                if frame {
                    replaced.push(before..emulator.history_len());
                }
                if matches!(op, WrapOp::LineFeed) {
                    emulator.feed(b"\r");
                }
                // Another known difference, of the emulator's: resized with its cursor moved
                // up from the bottom of what was drawn, it reflows fewer cells than were
                // printed (4 columns, `a`s over three rows, the cursor up one row and to
                // its start, resize to 5: the emulator keeps 10 of the renderer's 12, or
                // drops a line below the cursor; tmux keeps them all, as the renderer
                // does). Lines after such a resize are not compared.
                edited_wrapped |= matches!(op, WrapOp::Up(_) | WrapOp::Goto(..));
                if matches!(op, WrapOp::EraseScreen) && emulator.history_len() > 0 {
                    cuts.push(emulator.history_len() - 1);
                }
            }
            // A wrapped row partly scrolled out is a line as a whole, delivered: what is drawn
            // on its rest is a new line, where the emulator joins it to the part that left.
            // Lines are not compared then, the window still is.
            let rests = renderer.rows.rests > 0;
            // A pending wrap after the last column was overwritten: the emulator has taken
            // the wrap mark off already (the next character would put it back).
            renderer.line.end_wrap(&mut renderer.rows);
            // After a resize the lines are compared, not the window (see above).
            if !resized {
                let screen = screen_rows(&renderer);
                proptest::prop_assert!(screen.len() <= usize::from(rows), "{:?}", screen);
                for (row, ours) in screen.iter().enumerate() {
                    if let Some(ours) = ours {
                        let row = u16::try_from(row).expect("a window row");
                        proptest::prop_assert_eq!(ours.trim_end_matches(' '), emulator.row_text(row), "row {}: {:?}", row, screen);
                    }
                }
                let shown = renderer.line.shown();
                let cursor = emulator.cursor();
                proptest::prop_assert_eq!(
                    (renderer.rows.cursor_row(shown), renderer.rows.screen_col(shown)),
                    (usize::from(cursor.row), usize::from(cursor.col)),
                    "{:?}", screen
                );
            }
            let mut ours = out.lines.clone();
            let line = &renderer.line;
            ours.extend(
                renderer.rows.spans(&line.text, line.extent())
                    .into_iter()
                    .flatten()
                    .filter(|(text, _, state)| match state {
                        RowState::Fresh => true,
                        RowState::Shown => false,
                        RowState::Redrawn(delivered) => delivered.as_slice() != text.as_bytes(),
                    })
                    .map(|(text, _, _)| crate::term::rows::visible(&text).into_owned()),
            );
            let (ours, theirs) = (nonblank(&ours), nonblank(&emulator.joined_lines(&cuts, &replaced)));
            // A resize reflows the emulator's history, and the cuts counted in it move.
            if rests || unjoined || (resized && (!cuts.is_empty() || edited_wrapped)) {
                // See above.
            } else if !fixed {
                proptest::prop_assert_eq!(ours, theirs);
            } else {
                let mut left = ours.clone();
                for line in &theirs {
                    let found = left.iter().position(|l| l == line);
                    proptest::prop_assert!(found.is_some(), "{:?} missing from {:?}", line, ours);
                    left.remove(found.expect("found"));
                }
            }
        }

        /// The renderer's lines and pending line are the model's, cell for cell.
        #[test]
        fn lines_follow_the_cell_model(ops in proptest::collection::vec(op(), 0..400)) {
            let mut model = Model::default();
            let mut renderer = Renderer::unwrapped(40);
            let mut out = Rendered::default();
            for op in &ops {
                model.apply(op);
                renderer.feed(&op.bytes(), &mut out);
                proptest::prop_assert_eq!(renderer.line.col, model.col);
            }
            renderer.fix(&mut out);
            proptest::prop_assert_eq!(out.lines, model.lines);
            proptest::prop_assert_eq!(renderer.pending(), text(&model.cells));
        }

        /// The renderer and the screen, fed the same bytes within one screen width, agree on
        /// every completed line, on every cell of the current one and on the cursor's column
        /// (trailing blanks aside, which a screen cannot tell from empty cells). Ops that
        /// would erase half of a wide character are left out: there alacritty keeps the
        /// other half standing, where xterm and the renderer blank it (the model test above
        /// covers the renderer's side).
        #[test]
        fn lines_agree_with_the_screen(
            ops in proptest::collection::vec(
                op_with(vec!['a', 'b', ' ', '~', 'é', '語', '日', '🦀', '\x7f'], false),
                0..100,
            ),
        ) {
            // 100 ops that each reach at most 10 columns further stay within 1,024 columns,
            // and 128 rows hold every line without scrolling.
            let mut emulator = crate::term::screen::Emulator::new(1024, 128);
            let mut renderer = Renderer::new(1024, 128);
            let mut out = Rendered::default();
            for op in &ops {
                if erases_half_a_wide_character(&renderer.line, op) {
                    continue;
                }
                renderer.feed(&op.bytes(), &mut out);
                renderer.fix(&mut out);
                emulator.feed(&op.bytes());
                let row = u16::try_from(out.lines.len()).expect("fewer than 128 lines");
                let cursor = emulator.cursor();
                let pending = renderer.pending();
                proptest::prop_assert_eq!(
                    pending.trim_end_matches(' '),
                    emulator.row_text(row),
                    "after {:?}", op
                );
                proptest::prop_assert_eq!(
                    (usize::from(cursor.row), usize::from(cursor.col)),
                    (out.lines.len(), renderer.line.col),
                    "after {:?}", op
                );
            }
            for (row, line) in out.lines.iter().enumerate() {
                let row = u16::try_from(row).expect("fewer than 128 lines");
                proptest::prop_assert_eq!(line.trim_end_matches(' '), emulator.row_text(row));
            }
        }
    }
}
