//! The rows of the window as the line view keeps them: what lets a program redraw rows in
//! place (several progress bars moved over with cursor-up, `top` repainting from the
//! top-left corner) without its lines turning into one copy per frame. Pure: no I/O, and
//! it cannot fail.
//!
//! The row the cursor is on lives in the renderer's line; [`Rows`] holds every other row
//! still in the window, top first, each with what became of it ([`RowState`]): a row
//! nobody has read yet is still the program's to change. It becomes a line — handed to
//! the scrollback, numbered — when it leaves the top of the window or when the session is
//! read ([`Rows::fix`]); from then on what was delivered stays, and drawing on the row
//! again makes a new line of it at the next read, if it then reads differently.
//!
//! Heights are counted in screen rows: a row longer than the window is wide wraps, as on
//! a terminal, and takes several (a row is what a terminal joins by its wrap marks: one
//! line, however many screen rows). A row's screen rows stay when text is erased from its
//! end ([`Row::span`]); a row whose wrap mark goes (its last column overwritten or erased)
//! is cut in two there by the renderer, the part below the cursor's becoming a row of its
//! own ([`Rows::below`]).
//!
//! Columns here are the cell the cursor shows on, counted from the row's start: a cursor
//! in a pending wrap (at the last column of a screen row, after printing there) stands on
//! that last column.

use std::collections::VecDeque;

use crate::term::cells::{SPACER, width};
use crate::term::output::Rendered;

/// What became of a row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum RowState {
    /// Never delivered: it becomes a line when it is read or leaves the window.
    #[default]
    Fresh,
    /// Delivered as it reads now, or a blank row of the screen that was never a line: it
    /// is no line again unless it is drawn on.
    Shown,
    /// Delivered as the text it holds, drawn on since: a new line at the next read if it
    /// then reads differently.
    Redrawn(Vec<u8>),
}

/// One row of the window: its text (whole UTF-8 characters) and its width in cells.
#[derive(Debug, Default)]
pub(crate) struct Row {
    pub(crate) text: Vec<u8>,
    pub(crate) cells: usize,
    /// The cells its screen rows hold, at least `cells`: text erased from the end of a
    /// wrapped row leaves its screen rows standing, joined to the rows above.
    pub(crate) span: usize,
    pub(crate) state: RowState,
}

impl Row {
    /// A blank row of the screen that is no line.
    fn blank() -> Row {
        Row {
            state: RowState::Shown,
            ..Row::default()
        }
    }

    /// The row as a line reads ([`visible`]): a row of one-byte characters only, the
    /// common case, holds no [`SPACER`] and is not searched.
    fn line_text(&self) -> std::borrow::Cow<'_, str> {
        let text = std::str::from_utf8(&self.text).expect("rows hold whole characters");
        if self.text.len() == self.cells {
            std::borrow::Cow::Borrowed(text)
        } else {
            visible(text)
        }
    }

    /// The cells its screen rows take: its height comes from it.
    pub(crate) fn extent(&self) -> usize {
        self.cells.max(self.span)
    }

    /// What is left of the row from cell `from` on (a screen row's first), delivered: the
    /// screen rows that still show when the ones above left the window.
    fn rest(&mut self, from: usize) -> Row {
        let mut cell = 0;
        let mut at = self.text.len();
        let text = std::str::from_utf8(&self.text).expect("rows hold whole characters");
        for (index, c) in text.char_indices() {
            if cell >= from && width(c).is_some_and(|w| w > 0) {
                at = index;
                break;
            }
            cell += width(c).unwrap_or(0);
        }
        let text = self.text[at..].to_vec();
        Row {
            text,
            cells: self.cells.saturating_sub(cell.max(from)),
            span: self.extent() - from,
            state: RowState::Shown,
        }
    }

    /// Whether reading it now makes a line of it.
    fn unread(&self) -> bool {
        match &self.state {
            RowState::Fresh => true,
            RowState::Shown => false,
            RowState::Redrawn(delivered) => *delivered != self.text,
        }
    }

    /// The row as a line, in a spare string if there is one; it is delivered from now on.
    fn deliver(&mut self, out: &mut Rendered) {
        if self.unread() {
            emit(&self.line_text(), out);
        }
        self.state = RowState::Shown;
    }

    /// The row, which leaves the window, as a line if it was not delivered as it reads.
    fn leave(self, out: &mut Rendered) {
        if self.unread() {
            // As `line_text`, without a copy.
            let plain = self.text.len() == self.cells;
            let mut text = String::from_utf8(self.text).expect("rows hold whole characters");
            if !plain && text.contains(SPACER) {
                text = text.replace(SPACER, "");
            }
            out.lines.push(text);
        }
    }
}

/// `text` as a line reads: without [`SPACER`]s.
pub(crate) fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains(SPACER) {
        std::borrow::Cow::Owned(text.replace(SPACER, ""))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Puts a copy of `text` into `out` as a completed line.
fn emit(text: &str, out: &mut Rendered) {
    let mut line = out.spare.pop().unwrap_or_default();
    line.clear();
    line.push_str(text);
    out.lines.push(line);
}

/// The window's rows but the cursor's, and how the rows are followed.
#[derive(Debug)]
pub(crate) struct Rows {
    /// Every row of the window but the cursor's, top first.
    rows: VecDeque<Row>,
    /// How many of them are above the cursor's row.
    at: usize,
    /// The screen rows they take.
    height: usize,
    /// Blank screen rows above the first row that are no rows (after a clear with the
    /// cursor below the top).
    gap: usize,
    cols: usize,
    window: usize,
    /// A scroll region smaller than the window is set: line feeds on its last row scroll
    /// only part of the screen, which rows do not follow, so movements between rows are
    /// not followed until the region is whole again (the line view of before).
    region: bool,
    /// The cursor saved by DECSC: its screen row and column.
    saved: Option<(usize, usize)>,
    /// The window was cleared (ED 2) and no row has left its top since: what it shows is
    /// a frame, which the next clear replaces ([`clear`](Self::clear)).
    frame: bool,
    /// How many wrapped rows left the window's top in part, for tests.
    #[cfg(test)]
    pub(crate) rests: usize,
}

/// How many screen rows `cells` cells take in a window `cols` wide.
#[inline]
pub(crate) fn height(cells: usize, cols: usize) -> usize {
    // Most rows fit: no division on the way of a flood.
    if cells <= cols {
        1
    } else {
        cells.div_ceil(cols)
    }
}

/// The screen row of a wrapped row that the cursor, shown on cell `col`, is on.
fn sub_row(col: usize, cols: usize) -> usize {
    col / cols
}

impl Rows {
    /// The rows of an empty window `cols`×`window`.
    pub(crate) fn new(cols: u16, window: u16) -> Rows {
        Rows {
            rows: VecDeque::new(),
            at: 0,
            height: 0,
            gap: 0,
            cols: usize::from(cols.max(1)),
            window: usize::from(window.max(1)),
            region: false,
            saved: None,
            frame: false,
            #[cfg(test)]
            rests: 0,
        }
    }

    /// Follows a new window size.
    pub(crate) fn resize(&mut self, cols: u16, window: u16) {
        self.cols = usize::from(cols.max(1));
        self.window = usize::from(window.max(1));
        self.height = self
            .rows
            .iter()
            .map(|row| height(row.extent(), self.cols))
            .sum();
    }

    /// Whether movements between rows are followed (no partial scroll region is set).
    pub(crate) fn followed(&self) -> bool {
        !self.region
    }

    /// The index of the row below the cursor's, counted with the cursor's own.
    pub(crate) fn next_row(&self) -> usize {
        self.at + 1
    }

    /// Whether the cursor's row is the lowest the program has reached: a line feed there
    /// completes it.
    pub(crate) fn at_bottom(&self) -> bool {
        self.at == self.rows.len()
    }

    /// A row completed by a line feed (or cut) goes above the cursor's; rows that no
    /// longer fit the window leave its top. `cursor_cells` is the extent of the cursor's
    /// row, as in every method that takes it.
    pub(crate) fn complete(&mut self, row: Row, cursor_cells: usize, out: &mut Rendered) {
        self.height += height(row.extent(), self.cols);
        if self.at == self.rows.len() {
            // The common case, a line feed on the lowest row.
            self.rows.push_back(row);
        } else {
            self.rows.insert(self.at, row);
        }
        self.at += 1;
        self.trim(cursor_cells, out);
    }

    /// Lets rows above the cursor's leave the window's top while the window overflows.
    pub(crate) fn trim(&mut self, cursor_cells: usize, out: &mut Rendered) {
        let cursor = height(cursor_cells, self.cols);
        let mut excess = (self.gap + self.height + cursor).saturating_sub(self.window);
        let from_gap = excess.min(self.gap);
        self.gap -= from_gap;
        excess -= from_gap;
        if excess == 0 {
            return;
        }
        // A row leaves the top: what the window shows scrolls, and is no frame.
        self.frame &= self.at == 0;
        while excess > 0 && self.at > 0 {
            let mut row = self.rows.pop_front().expect("a row above the cursor");
            let taken = height(row.extent(), self.cols);
            if taken > excess {
                // A wrapped row partly out: it is a line now, and its screen rows still in
                // the window stay, delivered with it.
                let rest = row.rest(excess * self.cols);
                row.leave(out);
                self.height -= excess;
                self.rows.push_front(rest);
                #[cfg(test)]
                {
                    self.rests += 1;
                }
                break;
            }
            self.height -= taken;
            self.at -= 1;
            excess -= taken;
            row.leave(out);
        }
        // The rows left stand at the window's bottom; what the last row to go leaves of
        // its screen rows is no row.
        self.gap = self.window.saturating_sub(self.height + cursor);
    }

    /// Delivers the rows a reader gets now: every unread row above the cursor's, and those
    /// below it down to the last that holds text (blank rows under the cursor show
    /// nothing). The cursor's own row is the pending line and stays the program's.
    pub(crate) fn fix(&mut self, out: &mut Rendered) {
        let below = self
            .rows
            .range(self.at..)
            .rposition(|row| !row.text.is_empty());
        let end = self.at + below.map_or(0, |last| last + 1);
        for row in self.rows.range_mut(..end) {
            row.deliver(out);
        }
    }

    /// The rows a read would deliver now but the cursor's, as text, top first.
    pub(crate) fn unread(&self) -> impl Iterator<Item = &str> {
        self.rows
            .iter()
            .filter(|row| row.unread())
            .map(|row| std::str::from_utf8(&row.text).expect("rows hold whole characters"))
    }

    /// How many rows a read would deliver now, the cursor's aside.
    pub(crate) fn unread_count(&self) -> usize {
        self.rows.iter().filter(|row| row.unread()).count()
    }

    /// The screen row the cursor is on, for a cursor in column `col` of its row.
    fn screen_row(&self, col: usize) -> usize {
        let above: usize = self
            .rows
            .range(..self.at)
            .map(|row| height(row.extent(), self.cols))
            .sum();
        self.gap + above + sub_row(col, self.cols)
    }

    /// The cursor's column on the screen.
    pub(crate) fn screen_col(&self, col: usize) -> usize {
        col - sub_row(col, self.cols) * self.cols
    }

    /// Puts the cursor's row `cursor` back in its place and takes out the row at
    /// `target`, counted from the top with the cursor's own.
    fn swap(&mut self, cursor: Row, target: usize) -> Row {
        self.height += height(cursor.extent(), self.cols);
        self.rows.insert(self.at, cursor);
        let row = self.rows.remove(target).expect("the target row exists");
        self.height -= height(row.extent(), self.cols);
        self.at = target;
        row
    }

    /// The move `n` screen rows up (or down) from the cursor's row, which is `col` in its
    /// row, within the window: into rows above or below, or within a wrapped row.
    pub(crate) fn vertical(&mut self, cursor_cells: usize, col: usize, n: usize, up: bool) -> Move {
        let row = self.screen_row(col);
        let target = if up {
            row.saturating_sub(n)
        } else {
            row.saturating_add(n).min(self.window - 1)
        };
        let col = self.screen_col(col);
        self.locate(cursor_cells, target, col)
    }

    /// Where the screen cell at `row`, `col` (0-based) is among the rows: blank rows are
    /// made for screen rows the window has but no row stands for yet, up to its height.
    pub(crate) fn locate(&mut self, cursor_cells: usize, row: usize, col: usize) -> Move {
        let row = row.min(self.window - 1);
        let col = col.min(self.cols - 1);
        if row < self.gap {
            for _ in row..self.gap {
                self.rows.push_front(Row::blank());
                self.height += 1;
                self.at += 1;
            }
            self.gap = row;
        }
        let mut top = self.gap;
        let count = self.rows.len() + 1;
        for index in 0..count {
            let cells = if index == self.at {
                cursor_cells
            } else {
                let stored = if index < self.at { index } else { index - 1 };
                self.rows[stored].extent()
            };
            let rows = height(cells, self.cols);
            if row < top + rows {
                let col = (row - top) * self.cols + col;
                return if index == self.at {
                    Move::Within(col)
                } else {
                    Move::To(index, col)
                };
            }
            top += rows;
        }
        // Below the lowest row: blank rows down to it, the last the cursor's.
        for _ in top..=row {
            self.rows.push_back(Row::blank());
            self.height += 1;
        }
        Move::To(self.rows.len(), col)
    }

    /// Takes out the row right below the cursor's, if there is one: the cursor's row wraps
    /// into it.
    pub(crate) fn take_below(&mut self) -> Option<Row> {
        let row = self.rows.remove(self.at)?;
        self.height -= height(row.extent(), self.cols);
        Some(row)
    }

    /// Puts `row` right below the cursor's: the part of the cursor's row below a wrap mark
    /// that went.
    pub(crate) fn below(&mut self, row: Row) {
        self.height += height(row.extent(), self.cols);
        self.rows.insert(self.at, row);
    }

    /// Moves the cursor's row `cursor` (its text, cells and state) to the row at `target`
    /// (see [`Move::To`]) and returns the row there, now the cursor's.
    pub(crate) fn go(&mut self, cursor: Row, target: usize) -> Row {
        self.swap(cursor, target)
    }

    /// The screen row and column of the cursor, for DECSC.
    pub(crate) fn save(&mut self, col: usize) {
        self.saved = Some((self.screen_row(col), self.screen_col(col)));
    }

    /// The cursor DECSC saved (the top-left corner if none was).
    pub(crate) fn saved(&self) -> (usize, usize) {
        self.saved.unwrap_or((0, 0))
    }

    /// Whether the cursor, in column `col` of its row, is in the top-left corner.
    pub(crate) fn at_home(&self, col: usize) -> bool {
        col == 0 && self.screen_row(col) == 0
    }

    /// Erases the screen (ED 2, a full reset): what it showed goes into the lines, as
    /// terminals that keep a scrollback put it there, and the rows are gone; the cursor
    /// stays on its screen row, now blank. The cursor's row, `cursor` shown on cell `col`,
    /// comes back empty and one screen row high, a line first if it held text not yet
    /// delivered; the cursor's column in it is then [`screen_col`](Self::screen_col).
    ///
    /// Except where the window shows a frame: drawn since the last clear with nothing
    /// scrolled off the top (a loop that clears and redraws the main screen, `ESC[H
    /// ESC[2J` each frame). Its rows not yet read are replaced, as a person sees them
    /// replaced, and become no lines: a reader gets the frame as it stands, one a read,
    /// as from `top`'s repaints in place.
    pub(crate) fn clear(&mut self, mut cursor: Row, col: usize, out: &mut Rendered) -> Row {
        let screen_row = self.screen_row(col);
        if !self.frame {
            let below: Vec<Row> = self.rows.drain(self.at..).collect();
            for row in self.rows.drain(..) {
                row.leave(out);
            }
            if !cursor.text.is_empty() {
                cursor.deliver(out);
            }
            for row in below {
                row.leave(out);
            }
        }
        self.rows.clear();
        self.frame = true;
        self.at = 0;
        self.height = 0;
        self.gap = screen_row.min(self.window - 1);
        cursor.text.clear();
        cursor.cells = 0;
        cursor.span = 0;
        cursor.state = RowState::Fresh;
        cursor
    }

    /// Erases the rows below the cursor's (ED 0): erased before anyone read them, they
    /// show nothing and become no lines; the delivered ones stay delivered.
    pub(crate) fn erase_below(&mut self) {
        for row in self.rows.drain(self.at..) {
            self.height -= height(row.extent(), self.cols);
        }
    }

    /// Sets the scroll region (DECSTBM, 1-based, 0 for a default): rows are followed only
    /// while it is the whole window. Returns whether it is.
    pub(crate) fn set_region(&mut self, top: u16, bottom: u16) -> bool {
        let bottom = usize::from(bottom);
        self.region = top > 1 || (bottom != 0 && bottom < self.window);
        !self.region
    }

    /// Forgets the saved cursor and the scroll region (a full reset).
    pub(crate) fn reset_modes(&mut self) {
        self.region = false;
        self.saved = None;
    }
}

/// Where a movement of the cursor takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Move {
    /// It stays in its row, now in this column.
    Within(usize),
    /// To the row at this index (counted with the cursor's own), in this column.
    To(usize, usize),
}

#[cfg(test)]
impl Rows {
    /// Whether the window shows a frame, which the next clear replaces.
    pub(crate) fn frame(&self) -> bool {
        self.frame
    }

    /// The window as screen rows, top first, with the cursor's row (`cursor`) in its
    /// place: blank rows for the gap, and for each row its text.
    pub(crate) fn screen(&self, cursor: &[u8]) -> Vec<String> {
        let text = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).expect("whole characters");
        let mut screen = vec![String::new(); self.gap];
        for (index, row) in self.rows.iter().enumerate() {
            if index == self.at {
                screen.push(text(cursor));
            }
            screen.push(text(&row.text));
        }
        if self.at == self.rows.len() {
            screen.push(text(cursor));
        }
        screen
    }

    /// The window as rows, top first, with the cursor's row (`cursor`, `extent` cells
    /// high) in its place: `None` for each screen row of the gap (what stands there on a
    /// terminal is a line already), and for each row its text, the cells it spans and
    /// its state.
    pub(crate) fn spans(
        &self,
        cursor: &[u8],
        extent: usize,
    ) -> Vec<Option<(String, usize, RowState)>> {
        let text = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).expect("whole characters");
        let mut spans = vec![None; self.gap];
        for (index, row) in self.rows.iter().enumerate() {
            if index == self.at {
                spans.push(Some((text(cursor), extent, RowState::Fresh)));
            }
            spans.push(Some((text(&row.text), row.extent(), row.state.clone())));
        }
        if self.at == self.rows.len() {
            spans.push(Some((text(cursor), extent, RowState::Fresh)));
        }
        spans
    }

    /// The window's width.
    pub(crate) fn cols(&self) -> usize {
        self.cols
    }

    /// The cursor's screen row.
    pub(crate) fn cursor_row(&self, col: usize) -> usize {
        self.screen_row(col)
    }

    /// Sets a window width that the `u16` of a real window cannot hold.
    pub(crate) fn set_cols(&mut self, cols: usize) {
        self.cols = cols;
    }
}
