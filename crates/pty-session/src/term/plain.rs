//! Which output the screen emulator may leave out without changing what it shows.
//!
//! Parsing is the dearest part of keeping a screen: alacritty's parser writes every cell
//! of every line, yet in a flood of plain lines nearly all of them scroll out of the
//! window unseen. A *plain run* — printable text, tabs, backspaces, carriage returns,
//! line feeds and SGR colour changes — changes nothing but the grid, the cursor and the
//! colours new cells get. Feeding the run's last `2 × rows` line feeds scrolls every row
//! the emulator showed before out of the window and leaves the cursor on the bottom row,
//! whether or not the middle of the run was fed first, so the middle can be left out
//! when:
//! - the parser is in its ground state where the run starts, not inside an escape
//!   sequence or a string ([`Escapes`] follows that byte by byte);
//! - the scroll region is the whole window ([`Escapes`] follows DECSTBM), so a line feed
//!   on the bottom row scrolls every row;
//! - what is left out starts and ends right after `\r\n`, so the column is 0 on both
//!   sides and no wrap is pending;
//! - what is fed after it holds a printable character (the one REP would repeat);
//! - no synchronized update is buffering output (the emulator checks that itself): its
//!   buffer is shown when it outgrows its bound, which depends on how much went in.
//!
//! Colours set inside the left-out part are lost, and with them the colours of later
//! cells; the screen shows text, which they do not change.

use std::ops::Range;

/// Where the parser is, as far as leaving output out is concerned: a conservative copy of
/// vte's state machine that only claims the ground state when vte is surely in it, and
/// that follows whether a scroll region smaller than the window may be set.
#[derive(Debug, Clone, Default)]
pub(crate) struct Escapes {
    state: State,
    /// DECSTBM set a region that is not the whole window (or may have).
    region: bool,
    /// The CSI being read, for DECSTBM's parameters.
    csi: Csi,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    #[default]
    Ground,
    Escape,
    EscapeIntermediate,
    Csi,
    /// An OSC string: BEL ends it, as well as CAN, SUB and ESC.
    Osc,
    /// A DCS, SOS, PM or APC string: only CAN, SUB and ESC surely end it.
    Opaque,
}

/// A CSI as far as DECSTBM (`CSI top ; bottom r`) goes.
#[derive(Debug, Clone, Copy, Default)]
struct Csi {
    /// The first two parameters.
    params: [u16; 2],
    /// How many parameters there are.
    count: usize,
    /// A private marker or an intermediate: whatever its final byte, not DECSTBM.
    marked: bool,
    /// Something unusual (sub-parameters, a control inside): a DECSTBM that may set
    /// any region.
    odd: bool,
}

impl Escapes {
    /// Whether output starting here may have its middle left out: the parser is in its
    /// ground state and the scroll region is the whole window.
    pub(crate) fn may_skip(&self) -> bool {
        self.state == State::Ground && !self.region
    }

    /// Follows `bytes`, fed to the emulator of a window `rows` high.
    pub(crate) fn advance(&mut self, bytes: &[u8], rows: u16) {
        let mut i = 0;
        while i < bytes.len() {
            if self.state == State::Ground {
                match bytes[i..].iter().position(|&b| b == 0x1b) {
                    Some(at) => i += at,
                    None => return,
                }
            }
            self.step(bytes[i], rows);
            i += 1;
        }
    }

    /// The window was resized to other dimensions: the emulator resets the scroll region.
    pub(crate) fn resized(&mut self) {
        self.region = false;
    }

    fn step(&mut self, byte: u8, rows: u16) {
        // CAN and SUB end any sequence or string; ESC starts a new one from anywhere.
        match byte {
            0x18 | 0x1a => {
                self.state = State::Ground;
                return;
            }
            0x1b => {
                self.state = State::Escape;
                return;
            }
            _ => {}
        }
        self.state = match (self.state, byte) {
            (State::Ground, _) => State::Ground,
            (State::Escape, 0x20..=0x2f) => State::EscapeIntermediate,
            (State::Escape, b'[') => {
                self.csi = Csi::default();
                State::Csi
            }
            (State::Escape, b']') => State::Osc,
            (State::Escape, b'P' | b'X' | b'^' | b'_') => State::Opaque,
            (State::Escape, b'c') => {
                // RIS: the emulator resets the scroll region with everything else.
                self.region = false;
                State::Ground
            }
            (State::Escape | State::EscapeIntermediate, 0x30..=0x7e) => State::Ground,
            (State::Csi, 0x40..=0x7e) => {
                if byte == b'r' && !self.csi.marked {
                    self.region = !self.csi.whole_window(rows);
                }
                State::Ground
            }
            (State::Csi, _) => {
                self.csi.take(byte);
                State::Csi
            }
            (State::Osc, 0x07) => State::Ground,
            (state, _) => state,
        };
    }
}

impl Csi {
    fn take(&mut self, byte: u8) {
        match byte {
            b'0'..=b'9' => {
                if self.count == 0 {
                    self.count = 1;
                }
                if let Some(param) = self.params.get_mut(self.count - 1) {
                    *param = param
                        .saturating_mul(10)
                        .saturating_add(u16::from(byte - b'0'));
                }
            }
            b';' => self.count = self.count.max(1) + 1,
            0x20..=0x2f | 0x3c..=0x3f => self.marked = true,
            _ => self.odd = true,
        }
    }

    /// Whether this CSI, ended by `r`, leaves the scroll region the whole window (a
    /// window `rows` high); anything unusual counts as a smaller region.
    fn whole_window(&self, rows: u16) -> bool {
        if self.odd || self.count > 2 {
            return false;
        }
        let [top, bottom] = self.params;
        top <= 1 && (bottom == 0 || bottom >= rows)
    }
}

/// A plain run at the start of some output, met in the parser's ground state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Run {
    /// How many bytes it takes; 0 when the output starts with something else.
    pub(crate) len: usize,
    /// What may be left out, if anything.
    pub(crate) skip: Option<Range<usize>>,
}

/// The plain run at the start of `bytes` and the part of it that a window `rows` high
/// need not be fed.
pub(crate) fn run(bytes: &[u8], rows: u16) -> Run {
    let mut first_line_end = None;
    let mut last_print = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            0x20..=0x7e => {
                last_print = Some(i);
                i += 1;
            }
            b'\t' | 0x08 => i += 1,
            b'\r' => i += 1,
            b'\n' => {
                if first_line_end.is_none() && i > 0 && bytes[i - 1] == b'\r' {
                    first_line_end = Some(i + 1);
                }
                i += 1;
            }
            0x1b => match sgr_len(&bytes[i..]) {
                Some(len) => i += len,
                None => break,
            },
            0x80.. => match utf8_len(&bytes[i..]) {
                Some(len) => {
                    last_print = Some(i);
                    i += len;
                }
                None => break,
            },
            _ => break,
        }
    }
    let len = i;
    let skip = first_line_end.and_then(|start| {
        let end = kept_tail_start(&bytes[..len], rows)?;
        (start < end && last_print.is_some_and(|at| at >= end)).then_some(start..end)
    });
    Run { len, skip }
}

/// Where the part of `run` that must be fed starts: right after the last `\r\n` that
/// leaves at least `2 × rows` line feeds after it.
fn kept_tail_start(run: &[u8], rows: u16) -> Option<usize> {
    let needed = 2 * usize::from(rows);
    let mut feeds = 0;
    for at in (1..run.len()).rev() {
        if run[at] != b'\n' {
            continue;
        }
        if feeds >= needed && run[at - 1] == b'\r' {
            return Some(at + 1);
        }
        feeds += 1;
    }
    None
}

/// The length of the SGR sequence (`ESC [ params m`) at the start of `bytes`, if one is
/// there whole.
fn sgr_len(bytes: &[u8]) -> Option<usize> {
    if bytes.get(1) != Some(&b'[') {
        return None;
    }
    let params = bytes[2..]
        .iter()
        .take_while(|b| matches!(b, b'0'..=b'9' | b';' | b':'))
        .count();
    (bytes.get(2 + params) == Some(&b'm')).then_some(3 + params)
}

/// The length of the UTF-8 character at the start of `bytes`, if it is one, whole.
fn utf8_len(bytes: &[u8]) -> Option<usize> {
    let len = match bytes[0] {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return None,
    };
    let char = std::str::from_utf8(bytes.get(..len)?).ok()?;
    // C1 controls encoded in UTF-8 are printed by vte, but keep them out all the same.
    (!char.chars().any(char::is_control)).then_some(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| format!("{i}\r\n").into_bytes())
            .collect()
    }

    #[test]
    fn a_flood_of_lines_keeps_its_first_line_and_its_last_two_windows() {
        let bytes = lines(1000);
        let run = run(&bytes, 10);
        assert_eq!(run.len, bytes.len());
        let skip = run.skip.expect("a skip");
        assert_eq!(skip.start, 3, "after the first line");
        let kept = &bytes[skip.end..];
        assert_eq!(kept.iter().filter(|&&b| b == b'\n').count(), 20);
        assert!(kept.starts_with(b"980\r\n"));
    }

    #[test]
    fn too_few_lines_are_fed_whole() {
        assert_eq!(run(&lines(21), 10).skip, None);
        assert!(run(&lines(23), 10).skip.is_some());
    }

    #[test]
    fn a_run_ends_at_anything_but_text_and_colours() {
        let mut bytes = lines(100);
        bytes.extend_from_slice(b"\x1b[31mred\x1b[0m\r\n");
        let colours = bytes.len();
        bytes.extend_from_slice("日本\r\n".as_bytes());
        let text = bytes.len();
        bytes.extend_from_slice(b"\x1b[2Jmore");
        assert_eq!(run(&bytes, 10).len, text);
        let mut cut = bytes[..colours].to_vec();
        cut.extend_from_slice(b"\x1b[31");
        assert_eq!(run(&cut, 10).len, colours, "a colour not yet whole");
        for stop in [0x0e_u8, 0x07, 0x0b, 0x7f, 0x9b, 0xff] {
            let mut bytes = b"ab".to_vec();
            bytes.push(stop);
            assert_eq!(run(&bytes, 10).len, 2, "{stop:#x}");
        }
        assert_eq!(run("a\u{9b}b".as_bytes(), 10).len, 1, "C1 in UTF-8");
    }

    #[test]
    fn the_kept_part_must_print_something() {
        let mut bytes = lines(100);
        bytes.extend_from_slice(&b"\r\n".repeat(30));
        assert_eq!(run(&bytes, 10).skip, None);
    }

    #[test]
    fn escapes_claim_ground_only_once_sequences_end() {
        let mut escapes = Escapes::default();
        assert!(escapes.may_skip());
        for (bytes, ground) in [
            (&b"text\x1b"[..], false),
            (b"[3", false),
            (b"1m", true),
            (b"\x1b]0;title", false),
            (b" more\r\n", false),
            (b"\x07", true),
            (b"\x1bP1$r", false),
            (b"\x07 still a string", false),
            (b"\x1b\\", true),
            (b"\x1b(", false),
            (b"0", true),
            (b"\x1b[?1049h", true),
            (b"\x1b_apc\x18", true),
        ] {
            escapes.advance(bytes, 24);
            assert_eq!(escapes.may_skip(), ground, "after {bytes:?}");
        }
    }

    #[test]
    fn escapes_follow_the_scroll_region() {
        let mut escapes = Escapes::default();
        for (bytes, whole) in [
            (&b"\x1b[2;20r"[..], false),
            (b"\x1b[r", true),
            (b"\x1b[1;10r", false),
            (b"\x1b[1;24r", true),
            (b"\x1b[0;0r", true),
            (b"\x1b[5r", false),
            (b"\x1bc", true),
            (b"\x1b[1;2;3r", false),
            (b"\x1b[;99r", true),
            (b"\x1b[1:2r", false),
            (b"\x1b[r", true),
            (b"\x1b[?5r", true),
            (b"\x1b[2;\n20r", false),
            (b"\x1b[ 1r", false),
        ] {
            escapes.advance(bytes, 24);
            assert_eq!(escapes.may_skip(), whole, "after {bytes:?}");
        }
        escapes.resized();
        assert!(escapes.may_skip());
    }
}
