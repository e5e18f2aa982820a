//! Rendering: PTY output bytes into the lines a terminal would show. Pure: no I/O, and it
//! cannot fail.
//!
//! `vte` parses the byte stream (it keeps UTF-8 and escape sequences whole across reads
//! and turns invalid bytes into U+FFFD); [`Cooker`] applies what acts within a line:
//! - `\n` (and VT, FF, which terminals treat as LF) ends the line; `\r` returns to column
//!   0 so later text overwrites cell by cell (a progress bar leaves its final state);
//! - backspace, CSI C/D (cursor right/left), CSI G and CSI \` (to column), CSI K (erase in
//!   line, modes 0/1/2), and the editing sequences readline uses, CSI P (delete), CSI @
//!   (insert blanks) and CSI X (erase characters);
//! - a tab stays a literal `\t`, one cell, so tab-separated output keeps its tabs;
//! - everything else (SGR colours, OSC titles and hyperlinks, bracketed paste toggles, DCS,
//!   other CSI and control characters) is dropped; the text of a hyperlink stays.
//!
//! A line is cut into lines of at most [`MAX_LINE_BYTES`] without splitting a character,
//! so neither the scrollback nor the pending line grows without bound.
//!
//! While the alternate screen (CSI ?1049h, ?1047h, ?47h) is on, nothing printed enters the
//! lines; the pending line from before it is kept.
//!
//! Queries a program may block on are answered as a terminal would ([`crate::answer`]). The
//! row of a cursor position report is an estimate, `1 + min(lines since the screen was
//! last cleared or homed, rows - 1)`: a line view has no screen; the column is exact.
//!
//! Cells are characters, not display columns: a wide character counts as one cell when
//! text is overwritten after `\r`, which only matters for partial overwrites.

/// The longest line, in bytes of UTF-8.
pub(crate) const MAX_LINE_BYTES: usize = 64 * 1024;

/// What one feed produced.
#[derive(Debug, Default)]
pub(crate) struct Rendered {
    /// Completed lines, oldest first, without their `\n`.
    pub(crate) lines: Vec<String>,
    /// Bytes to write back into the PTY: answers to terminal queries.
    pub(crate) replies: Vec<u8>,
    /// Emptied strings that new lines are written into before any is allocated: the
    /// caller puts back what its scrollback let go ([`Scrollback::push_recycling`]), so a
    /// flood of short lines costs no allocation per line.
    ///
    /// [`Scrollback::push_recycling`]: crate::scrollback::Scrollback::push_recycling
    pub(crate) spare: Vec<String>,
}

/// A session's renderer: parser state plus the line being drawn.
pub(crate) struct Renderer {
    parser: vte::Parser,
    line: Line,
    /// The start of a UTF-8 character cut off at the end of the last feed. It is held back
    /// and fed together with what follows, because vte 0.15 loses the characters after a
    /// split one when an invalid byte follows within four bytes (found by the chunking
    /// property test below).
    carry: Vec<u8>,
    /// A DCS query being received, answered when it ends.
    dcs: crate::answer::DcsRequest,
}

/// The line being drawn and the little screen state a line view needs.
///
/// The text is kept as UTF-8 bytes and addressed by cell (character). While every cell is
/// one byte (`text.len() == cells`, the common case) a cell's index is its byte offset, and
/// printing, padding and completing a line are byte copies; otherwise finding a cell walks
/// the text up to it.
struct Line {
    /// The line's text, always whole UTF-8 characters.
    text: Vec<u8>,
    /// The number of characters in `text`.
    cells: usize,
    /// The cursor's column, which may lie past the last cell.
    col: usize,
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
    /// A renderer for a window `rows` high.
    pub(crate) fn new(rows: u16) -> Renderer {
        Renderer {
            parser: vte::Parser::new(),
            line: Line {
                text: Vec::new(),
                cells: 0,
                col: 0,
                alt_screen: false,
                addressed: false,
                app_cursor: false,
                app_keypad: false,
                row: 0,
                rows,
                alt_col: 0,
            },
            carry: Vec::new(),
            dcs: crate::answer::DcsRequest::default(),
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
            dcs: &mut self.dcs,
            out,
        };
        self.parser.advance(&mut cooker, whole);
    }

    /// Follows a new window height (for the row of a cursor position report).
    pub(crate) fn resize(&mut self, rows: u16) {
        self.line.rows = rows;
    }

    /// The rendered text after the last line end, such as `>>> `.
    pub(crate) fn pending(&self) -> String {
        std::str::from_utf8(&self.line.text)
            .expect("the text holds whole characters")
            .to_owned()
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
    pub(crate) fn key_modes(&self) -> crate::screen::KeyModes {
        crate::screen::KeyModes {
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

impl Line {
    /// Whether every cell is one byte.
    fn is_ascii(&self) -> bool {
        self.text.len() == self.cells
    }

    /// The byte offset of cell `cell` (`text.len()` for the end or past it).
    fn offset(&self, cell: usize) -> usize {
        if self.is_ascii() {
            return cell.min(self.text.len());
        }
        let mut seen = 0;
        for (at, &byte) in self.text.iter().enumerate() {
            if !is_continuation(byte) {
                if seen == cell {
                    return at;
                }
                seen += 1;
            }
        }
        self.text.len()
    }

    /// The text in `range` as a new line, in a spare string if there is one.
    fn emit(&self, range: impl std::slice::SliceIndex<[u8], Output = [u8]>, out: &mut Rendered) {
        let text = std::str::from_utf8(&self.text[range]).expect("the text holds whole characters");
        let mut line = out.spare.pop().unwrap_or_default();
        line.clear();
        line.push_str(text);
        out.lines.push(line);
    }

    /// Replaces the cells `from..to` (which exist) with `with`, `cells` characters long.
    fn replace(&mut self, from: usize, to: usize, with: &[u8], cells: usize) {
        let (start, end) = (self.offset(from), self.offset(to));
        self.text.splice(start..end, with.iter().copied());
        self.cells = self.cells - (to - from) + cells;
    }

    fn commit(&mut self, out: &mut Rendered) {
        // A copy of the line; the buffer stays for the next line.
        self.emit(.., out);
        self.text.clear();
        self.cells = 0;
        self.col = 0;
        self.row += 1;
    }

    #[inline]
    fn print(&mut self, c: char, out: &mut Rendered) {
        let mut buf = [0; 4];
        let encoded = c.encode_utf8(&mut buf).as_bytes();
        if self.col >= self.cells {
            // Appended at the end of the line; a cursor moved past the end leaves blanks.
            let pad = self.col - self.cells;
            self.text.resize(self.text.len() + pad, b' ');
            self.text.extend_from_slice(encoded);
            self.cells = self.col + 1;
        } else if self.is_ascii() && encoded.len() == 1 {
            self.text[self.col] = encoded[0];
        } else {
            self.replace(self.col, self.col + 1, encoded, 1);
        }
        self.col += 1;
        if self.text.len() > MAX_LINE_BYTES {
            self.cut(out);
        }
    }

    /// Moves the longest prefix that fits into a completed line, until the rest fits.
    fn cut(&mut self, out: &mut Rendered) {
        while self.text.len() > MAX_LINE_BYTES {
            let mut end = MAX_LINE_BYTES;
            while is_continuation(self.text[end]) {
                end -= 1;
            }
            let taken = self.text[..end]
                .iter()
                .filter(|&&b| !is_continuation(b))
                .count();
            self.emit(..end, out);
            self.text.drain(..end);
            self.cells -= taken;
            self.col = self.col.saturating_sub(taken);
            self.row += 1;
        }
    }

    fn erase_in_line(&mut self, mode: u16) {
        match mode {
            0 => {
                let end = self.offset(self.col);
                self.text.truncate(end);
                self.cells = self.cells.min(self.col);
            }
            1 => {
                let end = (self.col + 1).min(self.cells);
                self.blank(0, end);
            }
            2 => {
                self.text.clear();
                self.cells = 0;
            }
            _ => {}
        }
    }

    /// Turns the cells `from..to` (which exist) into blanks.
    fn blank(&mut self, from: usize, to: usize) {
        if self.is_ascii() {
            self.text[from..to].fill(b' ');
        } else {
            self.replace(from, to, &vec![b' '; to - from], to - from);
        }
    }

    fn delete(&mut self, n: usize) {
        if self.col < self.cells {
            let end = (self.col + n).min(self.cells);
            self.replace(self.col, end, &[], 0);
        }
    }

    /// Inserts blanks at the cursor; what is pushed past 64 KiB is lost, as text pushed past
    /// a terminal's right margin is (found by fuzzing: without it a huge count grew the
    /// pending line past the bound).
    fn insert_blanks(&mut self, n: usize) {
        if self.col < self.cells {
            let n = n.min(MAX_LINE_BYTES);
            self.replace(self.col, self.col, &vec![b' '; n], n);
            if self.text.len() > MAX_LINE_BYTES {
                let mut end = MAX_LINE_BYTES;
                while is_continuation(self.text[end]) {
                    end -= 1;
                }
                let dropped = self.text[end..]
                    .iter()
                    .filter(|&&b| !is_continuation(b))
                    .count();
                self.text.truncate(end);
                self.cells -= dropped;
            }
        }
    }

    fn erase_chars(&mut self, n: usize) {
        let end = (self.col + n).min(self.cells);
        if self.col < end {
            self.blank(self.col, end);
        }
    }

    /// The cursor's 1-based row (an estimate) and column, for a position report.
    fn position(&self) -> (usize, usize) {
        let col = if self.alt_screen {
            self.alt_col
        } else {
            self.col
        };
        (1 + self.row.min(usize::from(self.rows.max(1)) - 1), col + 1)
    }
}

/// Whether `byte` continues a UTF-8 character rather than starting one.
fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// The `vte` performer for one feed.
struct Cooker<'a> {
    line: &'a mut Line,
    dcs: &'a mut crate::answer::DcsRequest,
    out: &'a mut Rendered,
}

impl vte::Perform for Cooker<'_> {
    fn print(&mut self, c: char) {
        if self.line.alt_screen {
            self.line.alt_col += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        } else {
            self.line.print(c, self.out);
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
            b'\n' | 0x0b | 0x0c => self.line.commit(self.out),
            b'\r' => self.line.col = 0,
            0x08 => self.line.col = self.line.col.saturating_sub(1),
            b'\t' => self.line.print('\t', self.out),
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &vte::Params, intermediates: &[u8], _: bool, action: char) {
        let mut values = params.iter().map(|p| p.first().copied().unwrap_or(0));
        let first = values.next().unwrap_or(0);
        let at = self.line.position();
        if crate::answer::csi(first, intermediates, action, at, &mut self.out.replies) {
            return;
        }
        // Counts treat 0 as 1, as terminals do.
        let count = usize::from(first.max(1));
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
            ([], 'C') => line.col = (line.col + count).min(MAX_LINE_BYTES),
            ([], 'D') => line.col = line.col.saturating_sub(count),
            ([], 'G' | '`') => line.col = (count - 1).min(MAX_LINE_BYTES),
            ([], 'K') => line.erase_in_line(first),
            ([], 'P') => line.delete(count),
            ([], '@') => line.insert_blanks(count),
            ([], 'X') => line.erase_chars(count),
            _ => {}
        }
    }

    fn osc_dispatch(&mut self, params: &[&[u8]], bell_terminated: bool) {
        crate::answer::osc(params, bell_terminated, &mut self.out.replies);
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

    #[test]
    fn new_lines_are_written_into_spare_strings() {
        let mut renderer = Renderer::new(40);
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
        let mut renderer = Renderer::new(rows);
        let mut out = Rendered::default();
        for chunk in chunks {
            renderer.feed(chunk, &mut out);
        }
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
        let mut renderer = Renderer::new(40);
        let mut out = Rendered::default();
        renderer.feed(&input, &mut out);
        let lens: Vec<usize> = out.lines.iter().map(String::len).collect();
        assert_eq!(lens, [MAX_LINE_BYTES, MAX_LINE_BYTES, 10]);

        // Multibyte characters are never split: 3-byte characters fill 65535 bytes.
        let input = "語".repeat(30_000);
        let mut renderer = Renderer::new(40);
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
        let mut renderer = Renderer::new(40);
        let mut out = Rendered::default();
        renderer.feed(b"abc\r\x1b[65535@", &mut out);
        assert!(out.lines.is_empty());
        assert_eq!(renderer.pending().len(), MAX_LINE_BYTES);
        assert!(
            renderer.pending().ends_with(" a"),
            "bc was pushed out and lost"
        );
        // The crash the fuzzer found, replayed (its first byte chose the cuts).
        let crash = include_bytes!("../test_data/fuzz-insert-blanks.bin");
        let mut renderer = Renderer::new(40);
        renderer.feed(&crash[1..], &mut out);
        assert!(renderer.pending().len() <= MAX_LINE_BYTES);
    }

    #[test]
    fn a_progress_bar_without_newline_stays_bounded() {
        let mut renderer = Renderer::new(40);
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
                replies "\u{1b}]10;rgb:0000/0000/0000\u{7}\u{1b}]11;rgb:ffff/ffff/ffff\u{1b}\\\u{1b}]12;rgb:0000/0000/0000\u{7}\u{1b}]10;rgb:0000/0000/0000\u{7}\u{1b}]11;rgb:ffff/ffff/ffff\u{7}"
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
            ("vim", &include_bytes!("../test_data/queries-vim.raw")[..]),
            ("less", include_bytes!("../test_data/queries-less.raw")),
            ("htop", include_bytes!("../test_data/queries-htop.raw")),
            ("bash", include_bytes!("../test_data/queries-bash.raw")),
            ("python", include_bytes!("../test_data/queries-python.raw")),
            (
                "ipython",
                include_bytes!("../test_data/queries-ipython.raw"),
            ),
            ("node", include_bytes!("../test_data/queries-node.raw")),
        ] {
            let mut out = Rendered::default();
            Renderer::new(40).feed(raw, &mut out);
            let replies = String::from_utf8_lossy(&out.replies);
            text.push_str(&format!("{name}: {replies:?}\n"));
        }
        expect_file!["../test_data/queries.expected"].assert_eq(&text);
    }

    #[test]
    fn recorded_ls_color() {
        expect_file!["../test_data/ls-color.expected"].assert_eq(&rendered_every_way(
            include_bytes!("../test_data/ls-color.raw"),
        ));
    }

    #[test]
    fn recorded_progress_bar() {
        expect_file!["../test_data/progress.expected"].assert_eq(&rendered_every_way(
            include_bytes!("../test_data/progress.raw"),
        ));
    }

    #[test]
    fn recorded_bash_session() {
        expect_file!["../test_data/bash.expected"]
            .assert_eq(&rendered_every_way(include_bytes!("../test_data/bash.raw")));
    }

    #[test]
    fn recorded_python_repl() {
        expect_file!["../test_data/python.expected"].assert_eq(&rendered_every_way(
            include_bytes!("../test_data/python.raw"),
        ));
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
                Op::Newline => b"\n".to_vec(),
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

    /// The line rules written plainly, a vector of characters: what the renderer, which
    /// works on bytes, must agree with.
    #[derive(Default)]
    struct Model {
        lines: Vec<String>,
        cells: Vec<char>,
        /// UTF-8 length of `cells`.
        bytes: usize,
        col: usize,
    }

    impl Model {
        fn apply(&mut self, op: &Op) {
            let count = |n: &u16| usize::from(*n.max(&1));
            let bytes = |cells: &[char]| cells.iter().map(|c| c.len_utf8()).sum::<usize>();
            match op {
                Op::Print(c) => {
                    if self.col < self.cells.len() {
                        self.bytes -= self.cells[self.col].len_utf8();
                        self.cells[self.col] = *c;
                    } else {
                        self.bytes += self.col - self.cells.len();
                        self.cells.resize(self.col, ' ');
                        self.cells.push(*c);
                    }
                    self.bytes += c.len_utf8();
                    self.col += 1;
                    while self.bytes > MAX_LINE_BYTES {
                        let (mut fits, mut taken) = (0, 0);
                        while taken + self.cells[fits].len_utf8() <= MAX_LINE_BYTES {
                            taken += self.cells[fits].len_utf8();
                            fits += 1;
                        }
                        self.lines.push(self.cells.drain(..fits).collect());
                        self.col = self.col.saturating_sub(fits);
                        self.bytes = bytes(&self.cells);
                    }
                    return;
                }
                Op::Newline => {
                    self.lines.push(self.cells.drain(..).collect());
                    self.col = 0;
                }
                Op::Return => self.col = 0,
                Op::Backspace => self.col = self.col.saturating_sub(1),
                Op::Right(n) => self.col = (self.col + count(n)).min(MAX_LINE_BYTES),
                Op::Left(n) => self.col = self.col.saturating_sub(count(n)),
                Op::Column(n) => self.col = (count(n) - 1).min(MAX_LINE_BYTES),
                Op::EraseInLine(0) => self.cells.truncate(self.col),
                Op::EraseInLine(1) => {
                    let end = (self.col + 1).min(self.cells.len());
                    self.cells[..end].fill(' ');
                }
                Op::EraseInLine(2) => self.cells.clear(),
                Op::EraseInLine(_) => {}
                Op::Delete(n) => {
                    let end = (self.col + count(n)).min(self.cells.len());
                    if self.col < end {
                        self.cells.drain(self.col..end);
                    }
                }
                Op::InsertBlanks(n) => {
                    if self.col < self.cells.len() {
                        let blanks = std::iter::repeat_n(' ', count(n).min(MAX_LINE_BYTES));
                        self.cells.splice(self.col..self.col, blanks);
                        let mut len = bytes(&self.cells);
                        while len > MAX_LINE_BYTES {
                            len -= self.cells.pop().map_or(0, char::len_utf8);
                        }
                    }
                }
                Op::EraseChars(n) => {
                    let end = (self.col + count(n)).min(self.cells.len());
                    if self.col < end {
                        self.cells[self.col..end].fill(' ');
                    }
                }
            }
            // The cursor moves left the cells alone; the rest changed them.
            if !matches!(
                op,
                Op::Return | Op::Backspace | Op::Right(_) | Op::Left(_) | Op::Column(_)
            ) {
                self.bytes = bytes(&self.cells);
            }
        }
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        // Mostly small counts; now and then one that reaches the 64 KiB bound.
        let n = || prop_oneof![8 => 0u16..12, 1 => 21_000u16..=65_535];
        prop_oneof![
            12 => proptest::sample::select(vec!['a', 'b', ' ', 'é', '語', '🦀']).prop_map(Op::Print),
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

    proptest::proptest! {
        /// Any bytes, split anywhere, render the same as when fed whole, without a panic
        /// and within the line bound.
        #[test]
        fn chunking_never_changes_the_result(
            input in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::num::u8::ANY,
                    proptest::sample::select(b"\x1b[;?0123456789HJKCDGPX@mhlnc\r\n\x08\t]\x07\\".to_vec()),
                ],
                0..3000,
            ),
            seed in 1u64..1000,
        ) {
            let whole = render(40, &mut std::iter::once(input.as_slice()));
            let chunks = render(40, &mut chunked(&input, seed).into_iter());
            proptest::prop_assert_eq!(whole, chunks);
            let mut renderer = Renderer::new(40);
            let mut out = Rendered::default();
            renderer.feed(&input, &mut out);
            proptest::prop_assert!(out.lines.iter().all(|l| l.len() <= MAX_LINE_BYTES));
            proptest::prop_assert!(renderer.pending().len() <= MAX_LINE_BYTES);
        }

        /// The renderer's lines and pending line are the model's, cell for cell.
        #[test]
        fn lines_follow_the_cell_model(ops in proptest::collection::vec(op(), 0..400)) {
            let mut model = Model::default();
            let mut renderer = Renderer::new(40);
            let mut out = Rendered::default();
            for op in &ops {
                model.apply(op);
                renderer.feed(&op.bytes(), &mut out);
            }
            proptest::prop_assert_eq!(out.lines, model.lines);
            proptest::prop_assert_eq!(renderer.pending(), model.cells.iter().collect::<String>());
        }
    }
}
