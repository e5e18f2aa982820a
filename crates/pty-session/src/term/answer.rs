//! Answers to the questions programs ask the terminal, as xterm would, with a fixed
//! identity. Pure: the renderer hands each parsed query here and writes the answer back
//! into the PTY.
//!
//! A program that asks and then reads the terminal for the answer (vim asks for the
//! secondary device attributes and the colours at start-up, and waits up to 100 ms for
//! them on exit) stalls, and looks as if it waited for the user, when nothing answers.
//! The queries answered were found by recording vim, less, htop, bash, python's REPL,
//! IPython (prompt_toolkit) and node at start-up and exit (`test_data/queries-*.raw`):
//! - device status (CSI 5n) and the cursor position (CSI 6n, CSI ?6n);
//! - primary and secondary device attributes (CSI c, CSI >c): a VT100 with advanced video,
//!   and an xterm of patch level 0, so that no program expects the features of a later
//!   xterm (vim asks an xterm of patch 141 or later for forty key codes);
//! - the terminal's name and version (CSI >q, XTVERSION): `pty-session(VERSION)`;
//! - the default foreground, background and cursor colours (OSC 10, 11, 12 with `?`):
//!   the service's [`Colours`](crate::Colours), by default what the people's views draw
//!   (light grey on black), so that a program that picks its palette by the background
//!   picks one that reads in the views;
//! - a mode's state (DECRQM, CSI ?Ps$p and CSI Ps$p): "not recognized", as xterm says of a
//!   mode it lacks; a setting (DECRQSS, DCS $q) and a termcap entry (XTGETTCAP, DCS +q):
//!   "invalid", as xterm says of a name it does not know.
//!
//! Queries xterm itself leaves unanswered by default (window sizes, CSI 14t and 18t) are
//! left unanswered here too.

/// The secondary device attributes: an xterm (41) of patch level 0, no cartridge.
const SECONDARY_ATTRIBUTES: &[u8] = b"\x1b[>41;0;0c";
/// The primary device attributes: a VT100 with the advanced video option.
const PRIMARY_ATTRIBUTES: &[u8] = b"\x1b[?1;2c";
/// The longest DCS request kept (XTGETTCAP names are a few hex digits each).
const MAX_REQUEST: usize = 256;

/// Answers a CSI query whose first parameter is `first`; `cursor` is the 1-based (row,
/// column). Returns whether the sequence was a query.
pub(crate) fn csi(
    first: u16,
    intermediates: &[u8],
    action: char,
    cursor: (usize, usize),
    out: &mut Vec<u8>,
) -> bool {
    let (row, col) = cursor;
    match (intermediates, action) {
        ([], 'n') if first == 5 => out.extend_from_slice(b"\x1b[0n"),
        ([], 'n') if first == 6 => out.extend_from_slice(format!("\x1b[{row};{col}R").as_bytes()),
        (b"?", 'n') if first == 6 => {
            out.extend_from_slice(format!("\x1b[?{row};{col};1R").as_bytes());
        }
        ([], 'c') if first == 0 => out.extend_from_slice(PRIMARY_ATTRIBUTES),
        (b">", 'c') if first == 0 => out.extend_from_slice(SECONDARY_ATTRIBUTES),
        (b">", 'q') if first == 0 => {
            let version = env!("CARGO_PKG_VERSION");
            out.extend_from_slice(format!("\x1bP>|pty-session({version})\x1b\\").as_bytes());
        }
        (b"?$", 'p') => out.extend_from_slice(format!("\x1b[?{first};0$y").as_bytes()),
        (b"$", 'p') => out.extend_from_slice(format!("\x1b[{first};0$y").as_bytes()),
        _ => return false,
    }
    true
}

/// Answers an OSC colour query: `10;?` (foreground), `11;?` (background), `12;?`
/// (cursor), and a run of them in one sequence (`10;?;?` asks for 10 and 11), ending the
/// answer the way the query ended (BEL or ST), as xterm does; the colours are `colours`.
pub(crate) fn osc(
    params: &[&[u8]],
    bell_terminated: bool,
    colours: &crate::Colours,
    out: &mut Vec<u8>,
) {
    let Some(first) = params
        .first()
        .and_then(|p| std::str::from_utf8(p).ok()?.parse::<usize>().ok())
    else {
        return;
    };
    let end: &[u8] = if bell_terminated { b"\x07" } else { b"\x1b\\" };
    for (offset, param) in params[1..].iter().enumerate() {
        let colour = match first + offset {
            10 => colours.foreground,
            11 => colours.background,
            12 => colours.cursor,
            _ => return,
        };
        let colour = crate::Colours::spelled(colour);
        if *param == b"?" {
            out.extend_from_slice(format!("\x1b]{};{colour}", first + offset).as_bytes());
            out.extend_from_slice(end);
        }
    }
}

/// A DCS request being received: the request's kind and its text so far. Lives in the
/// renderer, because a request may arrive split across reads.
#[derive(Debug, Default)]
pub(crate) struct DcsRequest {
    /// `+` for XTGETTCAP, `$` for DECRQSS; `None` outside a request worth answering.
    kind: Option<u8>,
    text: Vec<u8>,
}

impl DcsRequest {
    /// A DCS sequence starts.
    pub(crate) fn hook(&mut self, intermediates: &[u8], action: char) {
        self.text.clear();
        self.kind = match (intermediates, action) {
            (b"+", 'q') => Some(b'+'),
            (b"$", 'q') => Some(b'$'),
            _ => None,
        };
    }

    /// A byte of the sequence's text.
    pub(crate) fn put(&mut self, byte: u8) {
        if self.kind.is_some() && self.text.len() < MAX_REQUEST {
            self.text.push(byte);
        }
    }

    /// The sequence ended: answer it.
    pub(crate) fn unhook(&mut self, out: &mut Vec<u8>) {
        match self.kind.take() {
            // "0+r" names the capabilities asked for, none of them known.
            Some(b'+') => {
                out.extend_from_slice(b"\x1bP0+r");
                out.extend_from_slice(&self.text);
                out.extend_from_slice(b"\x1b\\");
            }
            Some(_) => out.extend_from_slice(b"\x1bP0$r\x1b\\"),
            None => {}
        }
        self.text.clear();
    }
}
