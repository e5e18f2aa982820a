//! Text a session chose — a command, a prompt, a title, an owner's name, a directory —
//! made safe to print on a person's terminal: `ls`, `attach`'s notes and the logs show it
//! through [`shown`], and the web page through its mirror `shown` in `web/safe.js`.
//!
//! Printed raw, such text could erase or fake rows of `ls` (`\e[2K\r\e[1A`, a newline),
//! set the window's title (OSC 0) or reorder what follows it (U+202E, right-to-left
//! override). Escaped, a person sees what the agent typed, character for character.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every character that a terminal acts on rather than draws, or that
/// reorders the characters around it, written as a visible escape: `\e` (escape), `\n`,
/// `\r`, `\t`, `\x07` for the other C0 controls and DEL, `\u{85}` for C1 controls, and
/// `\u{202e}` for the bidirectional controls (U+061C, U+200E–U+200F, U+202A–U+202E,
/// U+2066–U+2069) and the line and paragraph separators (U+2028, U+2029). Everything else,
/// backslashes included, is kept as it is: a command that spells `\e` itself draws the
/// same two harmless characters.
pub fn shown(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\x1b' => out.push_str("\\e"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0'..='\x1f' | '\x7f' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if is_hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` is one that [`shown`] escapes.
fn is_hidden(c: char) -> bool {
    matches!(
        c,
        '\0'..='\x1f'
            | '\x7f'..='\u{9f}'
            | '\u{061c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[track_caller]
    fn check(text: &str, expected: &str) {
        assert_eq!(shown(text), expected);
        // What is shown holds nothing a terminal acts on.
        assert!(!shown(text).chars().any(super::is_hidden), "{text:?}");
    }

    #[test]
    fn controls_and_bidi_are_shown_escaped_the_rest_as_is() {
        check("python3 -q", "python3 -q");
        check("sleep 9 # \x1b[2K\r\x1b[1A", "sleep 9 # \\e[2K\\r\\e[1A");
        check("a\nfake row", "a\\nfake row");
        check("\x1b]0;owned\x07", "\\e]0;owned\\x07");
        check("tab\there\x7f\0", "tab\\there\\x7f\\x00");
        check("c1 \u{9b}31m \u{85}", "c1 \\u{9b}31m \\u{85}");
        check(
            "ls \u{202e}txt.exe\u{202c} \u{2066}\u{2069}\u{200e}\u{200f}\u{061c}",
            "ls \\u{202e}txt.exe\\u{202c} \\u{2066}\\u{2069}\\u{200e}\\u{200f}\\u{61c}",
        );
        check("a\u{2028}b\u{2029}", "a\\u{2028}b\\u{2029}");
        check("échec 日本 \\e", "échec 日本 \\e");
    }
}
