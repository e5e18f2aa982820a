//! The shell's marks taken out of a session's output: OSC 133 (prompt start `A`, prompt
//! end `B`, output start `C`, command end `D` with its status) and OSC 7 (the directory).
//!
//! [`MarkFilter`] is pure: fed the bytes read from the master, it hands back the same
//! bytes without any OSC 133 or OSC 7 sequence, and the marks it took out, parsed. Every
//! such sequence is taken out, valid or not, so none reaches the renderer, the screen,
//! the recording or a watcher: the marks of our hooks carry the session's secret, which
//! must not leave the service. A mark counts only if it proves where it came from: in a
//! session with our hooks, its `k=` field must be the session's key (a program's output
//! cannot forge one); in a session without (a program that sends marks itself: fish 4,
//! starship, a remote shell set up for them), it must carry no key.
//!
//! A sequence split between two reads is held until its end arrives, up to
//! [`MAX_MARK`] bytes; a longer one is not a mark and passes on as it is.

use std::borrow::Cow;
use std::path::PathBuf;

/// The longest mark held back while its end has not arrived; past it the bytes pass on.
const MAX_MARK: usize = 8 * 1024;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;

/// One mark, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mark {
    /// `133;A`: the prompt starts.
    PromptStart,
    /// `133;B`: the prompt is drawn; the shell reads a command.
    PromptEnd,
    /// `133;C`: the command runs (its text, from `cmdline_url=` or `cmdline=`).
    CommandStart(Option<String>),
    /// `133;D`: the command ended, with its exit status when given.
    CommandEnd(Option<i32>),
    /// `7`: the shell's working directory.
    Cwd(PathBuf),
}

/// Takes marks out of a stream of output (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct MarkFilter {
    /// The key a mark must carry; `None`: marks must carry none.
    key: Option<String>,
    /// The start of a sequence that may be a mark, from an earlier read.
    held: Vec<u8>,
}

/// What the bytes at an `ESC` are.
enum Seq {
    /// Not a mark: pass on.
    Other,
    /// Maybe a mark, its end not here yet.
    Incomplete,
    /// A mark sequence of this many bytes, with its body (after `ESC ]`).
    Mark(usize, usize, usize),
}

impl MarkFilter {
    /// A filter whose marks must carry `key` (`None`: no key).
    pub(crate) fn new(key: Option<String>) -> MarkFilter {
        MarkFilter {
            key,
            held: Vec::new(),
        }
    }

    /// `input` without its marks (borrowed when it had none and nothing was held); the
    /// marks that count are appended to `marks`.
    pub(crate) fn feed<'a>(&mut self, input: &'a [u8], marks: &mut Vec<Mark>) -> Cow<'a, [u8]> {
        if self.held.is_empty() && !input.contains(&ESC) {
            return Cow::Borrowed(input);
        }
        let joined;
        let data: &[u8] = if self.held.is_empty() {
            input
        } else {
            let mut held = std::mem::take(&mut self.held);
            held.extend_from_slice(input);
            joined = held;
            &joined
        };
        let mut out: Vec<u8> = Vec::new();
        let mut copied = 0;
        let mut at = 0;
        let mut changed = false;
        while let Some(offset) = data[at..].iter().position(|&b| b == ESC) {
            let start = at + offset;
            match classify(&data[start..]) {
                Seq::Other => at = start + 1,
                Seq::Incomplete => {
                    out.extend_from_slice(&data[copied..start]);
                    self.held = data[start..].to_vec();
                    return Cow::Owned(out);
                }
                Seq::Mark(len, body_start, body_end) => {
                    out.extend_from_slice(&data[copied..start]);
                    let body = &data[start + body_start..start + body_end];
                    if let Some(mark) = parse(body, self.key.as_deref()) {
                        marks.push(mark);
                    }
                    copied = start + len;
                    at = copied;
                    changed = true;
                }
            }
        }
        if !changed && data.len() == input.len() {
            return Cow::Borrowed(input);
        }
        out.extend_from_slice(&data[copied..]);
        Cow::Owned(out)
    }
}

/// What `data` (starting with `ESC`) begins with.
fn classify(data: &[u8]) -> Seq {
    const PREFIXES: [&[u8]; 2] = [b"\x1b]133;", b"\x1b]7;"];
    let Some(prefix) = PREFIXES
        .iter()
        .find(|p| data.len() >= p.len() && data.starts_with(p))
    else {
        let maybe = PREFIXES
            .iter()
            .any(|p| data.len() < p.len() && p.starts_with(data));
        return if maybe { Seq::Incomplete } else { Seq::Other };
    };
    let body_start = 2;
    for (i, &b) in data.iter().enumerate().skip(prefix.len()) {
        if i > MAX_MARK {
            return Seq::Other;
        }
        match b {
            BEL => return Seq::Mark(i + 1, body_start, i),
            ESC => {
                return match data.get(i + 1) {
                    Some(b'\\') => Seq::Mark(i + 2, body_start, i),
                    Some(_) => Seq::Other,
                    None => Seq::Incomplete,
                };
            }
            // CAN and SUB cancel a sequence in a terminal.
            0x18 | 0x1a => return Seq::Other,
            _ => {}
        }
    }
    if data.len() > MAX_MARK {
        Seq::Other
    } else {
        Seq::Incomplete
    }
}

/// The mark a body (`133;…` or `7;…`) says, if it counts with `key`.
///
/// A command's text comes last, in `cmdline_url=` (percent-escaped), `cmdline=` (as it
/// is, to the end of the mark) or `history=` (bash's `history 1` line, as it is): the
/// fields before it hold the key.
fn parse(body: &[u8], key: Option<&str>) -> Option<Mark> {
    let body = String::from_utf8_lossy(body);
    let (head, text) = match [";cmdline=", ";history="]
        .iter()
        .filter_map(|tag| body.find(tag).map(|at| (at, *tag)))
        .min()
    {
        Some((at, tag)) => {
            let text = &body[at + tag.len()..];
            let text = if tag == ";history=" {
                history_line(text)
            } else {
                text.to_owned()
            };
            (&body[..at], Some(text))
        }
        None => (&body[..], None),
    };
    let mut fields = head.split(';');
    let number = fields.next()?;
    let fields: Vec<&str> = fields.collect();
    let given = fields.iter().find_map(|f| f.strip_prefix("k="));
    if given != key {
        return None;
    }
    let rest = || fields.iter().copied().filter(|f| !f.starts_with("k="));
    match number {
        "133" => {
            let mut rest = rest();
            match rest.next()? {
                "A" => Some(Mark::PromptStart),
                "B" => Some(Mark::PromptEnd),
                "C" => Some(Mark::CommandStart(text.or_else(|| {
                    rest.find_map(|f| f.strip_prefix("cmdline_url=").map(percent_decode))
                }))),
                "D" => Some(Mark::CommandEnd(
                    rest.next().and_then(|s| s.trim().parse().ok()),
                )),
                _ => None,
            }
        }
        "7" => {
            let url = rest().next()?;
            let path = url.strip_prefix("file://")?;
            let path = &path[path.find('/')?..];
            Some(Mark::Cwd(PathBuf::from(percent_decode(path))))
        }
        _ => None,
    }
}

/// The command of a line of bash's `history 1` (`  42  make test`, `*` after the number
/// for an edited entry).
fn history_line(line: &str) -> String {
    let line = line.trim_start();
    let line = line.trim_start_matches(|c: char| c.is_ascii_digit());
    let line = line.strip_prefix('*').unwrap_or(line);
    let line = line.strip_prefix("  ").unwrap_or(line);
    line.trim_end_matches(['\n', '\r']).to_owned()
}

/// `%XX` escapes decoded; other bytes as they are, invalid UTF-8 replaced.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` whole, byte by byte and in chunks of 3, with `key`, and checks that
    /// each gives `text` and `marks`.
    #[track_caller]
    fn check(key: Option<&str>, input: &[u8], text: &str, marks: &[Mark]) {
        for chunk in [input.len().max(1), 1, 3] {
            let mut filter = MarkFilter::new(key.map(str::to_owned));
            let mut out = Vec::new();
            let mut got = Vec::new();
            for piece in input.chunks(chunk) {
                out.extend_from_slice(&filter.feed(piece, &mut got));
            }
            assert_eq!(String::from_utf8_lossy(&out), text, "chunks of {chunk}");
            assert_eq!(got, marks, "chunks of {chunk}");
        }
    }

    #[test]
    fn keyed_marks_are_taken_out_and_read() {
        check(
            Some("s3cr3t"),
            b"\x1b]133;D;1;k=s3cr3t\x07\x1b]133;A;k=s3cr3t\x07$ \x1b]133;B;k=s3cr3t\x1b\\",
            "$ ",
            &[
                Mark::CommandEnd(Some(1)),
                Mark::PromptStart,
                Mark::PromptEnd,
            ],
        );
        check(
            Some("s3cr3t"),
            b"\x1b]133;C;k=s3cr3t;cmdline_url=echo%20a%3Bb\x07a\r\n",
            "a\r\n",
            &[Mark::CommandStart(Some("echo a;b".into()))],
        );
        check(
            Some("s3cr3t"),
            b"\x1b]7;file://host/tmp/a%20b;k=s3cr3t\x07",
            "",
            &[Mark::Cwd("/tmp/a b".into())],
        );
    }

    #[test]
    fn bash_history_lines_are_commands() {
        check(
            Some("s3cr3t"),
            b"\x1b]133;C;k=s3cr3t;history=   12  echo a; echo k=b\n\x07",
            "",
            &[Mark::CommandStart(Some("echo a; echo k=b".into()))],
        );
    }

    #[test]
    fn forged_marks_are_taken_out_and_ignored() {
        check(
            Some("s3cr3t"),
            b"x\x1b]133;D;0\x07y\x1b]133;D;0;k=guess\x07z",
            "xyz",
            &[],
        );
        // Without hooks of ours, a keyed mark is not a program's own.
        check(None, b"\x1b]133;D;0;k=s3cr3t\x07", "", &[]);
    }

    #[test]
    fn marks_of_programs_count_without_hooks() {
        check(
            None,
            b"\x1b]133;A;click_events=1\x07> \x1b]133;C;cmdline_url=false\x07\x1b]133;D;1\x07",
            "> ",
            &[
                Mark::PromptStart,
                Mark::CommandStart(Some("false".into())),
                Mark::CommandEnd(Some(1)),
            ],
        );
    }

    #[test]
    fn other_sequences_pass_as_they_are() {
        check(
            None,
            b"\x1b[31mred\x1b[0m \x1b]0;title\x07\x1b]8;;http://x\x1b\\l\x1b]8;;\x1b\\",
            "\x1b[31mred\x1b[0m \x1b]0;title\x07\x1b]8;;http://x\x1b\\l\x1b]8;;\x1b\\",
            &[],
        );
        // A mark that never ends within the bound passes on.
        let mut long = b"\x1b]133;C;cmdline=".to_vec();
        long.extend(std::iter::repeat_n(b'x', MAX_MARK + 10));
        let mut filter = MarkFilter::new(None);
        let mut marks = Vec::new();
        let out = filter.feed(&long, &mut marks);
        assert_eq!(out.len(), long.len());
        assert!(marks.is_empty());
    }
}
