//! Named keys: tmux `send-keys` names (`Enter`, `Escape`, `Up`, `F1`, `C-c`, `M-x`...)
//! into the bytes an xterm sends for them, in the modes the program set (cursor keys in
//! application mode after DECCKM, the keypad after DECKPAM). Pure: no I/O.
//!
//! A string that is not a key name is typed as text. A string that starts like a
//! modified key (`C-`, `M-`, `S-`) but names no key is refused, because what was meant
//! cannot be told.

use crate::term::screen::KeyModes;

const ESC: u8 = 0x1b;

/// The bytes for `keys`, one after another, or what is wrong with the first bad one.
pub(crate) fn encode(keys: &[String], modes: KeyModes) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    for (index, key) in keys.iter().enumerate() {
        encode_one(key, modes, &mut bytes)
            .map_err(|why| format!("keys[{index}] {key:?}: {why}"))?;
    }
    Ok(bytes)
}

/// Modifier keys held with a key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Modifiers {
    shift: bool,
    meta: bool,
    ctrl: bool,
}

impl Modifiers {
    /// xterm's modifier parameter: 1 + shift + 2·meta + 4·ctrl.
    fn param(self) -> u8 {
        1 + u8::from(self.shift) + 2 * u8::from(self.meta) + 4 * u8::from(self.ctrl)
    }

    fn any(self) -> bool {
        self.shift || self.meta || self.ctrl
    }
}

fn encode_one(key: &str, modes: KeyModes, out: &mut Vec<u8>) -> Result<(), String> {
    let (mods, base) = split_modifiers(key);
    if !mods.any() {
        match named(base, mods, modes) {
            Some(bytes) => out.extend_from_slice(&bytes),
            None => out.extend_from_slice(key.as_bytes()),
        }
        return Ok(());
    }
    if base.is_empty() {
        return Err("a modifier without a key; give one, e.g. \"C-c\" or \"M-Left\"".into());
    }
    let mut chars = base.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return modified_char(c, mods, out);
    }
    let bytes = named(base, mods, modes).ok_or_else(|| {
        "not a key name; use tmux's names (Enter, Tab, BTab, Escape, Space, BSpace, Up, Down, \
         Left, Right, Home, End, PageUp, PageDown, Insert, Delete, F1-F12) or one character \
         after C-/M-/S-"
            .to_owned()
    })?;
    out.extend_from_slice(&bytes);
    Ok(())
}

/// Splits `C-M-x` into its modifiers and `x`. A lone `-` after modifiers is the key `-`.
fn split_modifiers(key: &str) -> (Modifiers, &str) {
    let mut mods = Modifiers::default();
    let mut rest = key;
    loop {
        let flag = match rest.as_bytes() {
            [b'C', b'-', ..] => &mut mods.ctrl,
            [b'M', b'-', ..] => &mut mods.meta,
            [b'S', b'-', ..] => &mut mods.shift,
            _ => return (mods, rest),
        };
        *flag = true;
        rest = &rest[2..];
    }
}

/// One character with modifiers: Ctrl makes a control code, Shift upper case, Meta puts
/// Escape before it.
fn modified_char(c: char, mods: Modifiers, out: &mut Vec<u8>) -> Result<(), String> {
    let c = if mods.shift {
        c.to_ascii_uppercase()
    } else {
        c
    };
    if mods.meta {
        out.push(ESC);
    }
    if !mods.ctrl {
        let mut buf = [0; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        return Ok(());
    }
    let code = match c {
        'a'..='z' => c as u8 - b'a' + 1,
        '@' | 'A'..='Z' | '[' | '\\' | ']' | '^' | '_' => c as u8 & 0x1f,
        ' ' | '2' => 0,
        '?' => 0x7f,
        _ => {
            return Err(format!(
                "Ctrl-{c} has no control code; use C-a..C-z, C-@, C-[, C-\\, C-], C-^, C-_ or C-?"
            ));
        }
    };
    out.push(code);
    Ok(())
}

/// The bytes of a named key, or `None` if `name` is not one.
fn named(name: &str, mods: Modifiers, modes: KeyModes) -> Option<Vec<u8>> {
    // Keys whose modified forms are plain bytes.
    let simple: Option<&[u8]> = match name {
        "Enter" => Some(b"\r"),
        "Tab" if mods.shift => Some(b"\x1b[Z"),
        "Tab" => Some(b"\t"),
        "BTab" => Some(b"\x1b[Z"),
        "Escape" => Some(b"\x1b"),
        "Space" if mods.ctrl => Some(b"\0"),
        "Space" => Some(b" "),
        "BSpace" if mods.ctrl => Some(b"\x08"),
        "BSpace" => Some(b"\x7f"),
        _ => None,
    };
    if let Some(bytes) = simple {
        let mut out = Vec::with_capacity(bytes.len() + 1);
        if mods.meta {
            out.push(ESC);
        }
        out.extend_from_slice(bytes);
        return Some(out);
    }
    // Cursor keys and Home/End: `ESC [ X`, `ESC O X` in application mode, `ESC [ 1 ; m X`
    // modified.
    let letter = match name {
        "Up" => Some(b'A'),
        "Down" => Some(b'B'),
        "Right" => Some(b'C'),
        "Left" => Some(b'D'),
        "Home" => Some(b'H'),
        "End" => Some(b'F'),
        _ => None,
    };
    if let Some(letter) = letter {
        return Some(if mods.any() {
            format!("\x1b[1;{}{}", mods.param(), letter as char).into_bytes()
        } else if modes.app_cursor {
            vec![ESC, b'O', letter]
        } else {
            vec![ESC, b'[', letter]
        });
    }
    // `ESC [ n ~` keys.
    let tilde = match name {
        "Insert" | "IC" => Some(2),
        "Delete" | "DC" => Some(3),
        "PageUp" | "PPage" | "PgUp" => Some(5),
        "PageDown" | "NPage" | "PgDn" => Some(6),
        "F5" => Some(15),
        "F6" => Some(17),
        "F7" => Some(18),
        "F8" => Some(19),
        "F9" => Some(20),
        "F10" => Some(21),
        "F11" => Some(23),
        "F12" => Some(24),
        _ => None,
    };
    if let Some(n) = tilde {
        return Some(if mods.any() {
            format!("\x1b[{n};{}~", mods.param()).into_bytes()
        } else {
            format!("\x1b[{n}~").into_bytes()
        });
    }
    // F1-F4: `ESC O P`..`S`.
    let pf = match name {
        "F1" => Some(b'P'),
        "F2" => Some(b'Q'),
        "F3" => Some(b'R'),
        "F4" => Some(b'S'),
        _ => None,
    };
    if let Some(letter) = pf {
        return Some(if mods.any() {
            format!("\x1b[1;{}{}", mods.param(), letter as char).into_bytes()
        } else {
            vec![ESC, b'O', letter]
        });
    }
    // The keypad: its characters, or `ESC O x` in application mode.
    let keypad = match name {
        "KP0" | "KP1" | "KP2" | "KP3" | "KP4" | "KP5" | "KP6" | "KP7" | "KP8" | "KP9" => {
            let digit = name.as_bytes()[2];
            Some((digit, b'p' + (digit - b'0')))
        }
        "KP/" => Some((b'/', b'o')),
        "KP*" => Some((b'*', b'j')),
        "KP-" => Some((b'-', b'm')),
        "KP+" => Some((b'+', b'k')),
        "KP." => Some((b'.', b'n')),
        "KPEnter" => Some((b'\r', b'M')),
        _ => None,
    };
    let (plain, application) = keypad?;
    let mut out = Vec::with_capacity(3);
    if mods.meta {
        out.push(ESC);
    }
    if modes.app_keypad {
        out.extend_from_slice(&[ESC, b'O', application]);
    } else {
        out.push(plain);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    const NORMAL: KeyModes = KeyModes {
        app_cursor: false,
        app_keypad: false,
    };
    const APPLICATION: KeyModes = KeyModes {
        app_cursor: true,
        app_keypad: true,
    };

    /// Each key on a line with its bytes in both modes, escaped.
    #[track_caller]
    fn check(keys: &[&str], expect: Expect) {
        let mut text = String::new();
        for key in keys {
            let bytes = |modes| match encode(&[key.to_string()], modes) {
                Ok(bytes) => bytes.escape_ascii().to_string(),
                Err(err) => format!("error: {err}"),
            };
            let (normal, application) = (bytes(NORMAL), bytes(APPLICATION));
            if normal == application {
                text.push_str(&format!("{key}: {normal}\n"));
            } else {
                text.push_str(&format!("{key}: {normal} | app {application}\n"));
            }
        }
        expect.assert_eq(&text);
    }

    #[test]
    fn plain_keys() {
        check(
            &[
                "Enter", "Tab", "BTab", "Escape", "Space", "BSpace", "Insert", "DC", "PageUp",
                "NPage",
            ],
            expect![[r#"
                Enter: \r
                Tab: \t
                BTab: \x1b[Z
                Escape: \x1b
                Space:  
                BSpace: \x7f
                Insert: \x1b[2~
                DC: \x1b[3~
                PageUp: \x1b[5~
                NPage: \x1b[6~
            "#]],
        );
    }

    #[test]
    fn cursor_keys_follow_decckm() {
        check(
            &[
                "Up", "Down", "Right", "Left", "Home", "End", "C-Up", "S-Right", "M-Left", "C-End",
            ],
            expect![[r#"
                Up: \x1b[A | app \x1bOA
                Down: \x1b[B | app \x1bOB
                Right: \x1b[C | app \x1bOC
                Left: \x1b[D | app \x1bOD
                Home: \x1b[H | app \x1bOH
                End: \x1b[F | app \x1bOF
                C-Up: \x1b[1;5A
                S-Right: \x1b[1;2C
                M-Left: \x1b[1;3D
                C-End: \x1b[1;5F
            "#]],
        );
    }

    #[test]
    fn function_keys() {
        check(
            &["F1", "F4", "F5", "F10", "F12", "S-F1", "C-F5"],
            expect![[r#"
                F1: \x1bOP
                F4: \x1bOS
                F5: \x1b[15~
                F10: \x1b[21~
                F12: \x1b[24~
                S-F1: \x1b[1;2P
                C-F5: \x1b[15;5~
            "#]],
        );
    }

    #[test]
    fn control_and_meta() {
        check(
            &[
                "C-c", "C-x", "C-d", "C-[", "C-?", "C-Space", "C-M-a", "M-x", "M-Enter", "S-a",
                "S-Tab", "C--", "M--",
            ],
            expect![[r#"
                C-c: \x03
                C-x: \x18
                C-d: \x04
                C-[: \x1b
                C-?: \x7f
                C-Space: \x00
                C-M-a: \x1b\x01
                M-x: \x1bx
                M-Enter: \x1b\r
                S-a: A
                S-Tab: \x1b[Z
                C--: error: keys[0] "C--": Ctrl-- has no control code; use C-a..C-z, C-@, C-[, C-\, C-], C-^, C-_ or C-?
                M--: \x1b-
            "#]],
        );
    }

    #[test]
    fn the_keypad_follows_deckpam() {
        check(
            &["KP0", "KP9", "KP/", "KPEnter"],
            expect![[r#"
                KP0: 0 | app \x1bOp
                KP9: 9 | app \x1bOy
                KP/: / | app \x1bOo
                KPEnter: \r | app \x1bOM
            "#]],
        );
    }

    #[test]
    fn other_strings_are_text() {
        check(
            &[
                ":wq",
                "hello world",
                "enter",
                "F13",
                "Ctrl",
                "C",
                "-",
                "日本",
            ],
            expect![[r#"
                :wq: :wq
                hello world: hello world
                enter: enter
                F13: F13
                Ctrl: Ctrl
                C: C
                -: -
                日本: \xe6\x97\xa5\xe6\x9c\xac
            "#]],
        );
    }

    #[test]
    fn unknown_modified_forms_are_refused() {
        check(
            &["C-", "M-", "C-Foo", "C-ab"],
            expect![[r#"
                C-: error: keys[0] "C-": a modifier without a key; give one, e.g. "C-c" or "M-Left"
                M-: error: keys[0] "M-": a modifier without a key; give one, e.g. "C-c" or "M-Left"
                C-Foo: error: keys[0] "C-Foo": not a key name; use tmux's names (Enter, Tab, BTab, Escape, Space, BSpace, Up, Down, Left, Right, Home, End, PageUp, PageDown, Insert, Delete, F1-F12) or one character after C-/M-/S-
                C-ab: error: keys[0] "C-ab": not a key name; use tmux's names (Enter, Tab, BTab, Escape, Space, BSpace, Up, Down, Left, Right, Home, End, PageUp, PageDown, Insert, Delete, F1-F12) or one character after C-/M-/S-
            "#]],
        );
    }

    #[test]
    fn a_sequence_is_the_concatenation() {
        let keys: Vec<String> = ["Escape", ":wq", "Enter"].map(String::from).into();
        assert_eq!(encode(&keys, NORMAL).unwrap(), b"\x1b:wq\r");
        let keys: Vec<String> = ["i", "C-"].map(String::from).into();
        assert!(encode(&keys, NORMAL).unwrap_err().starts_with("keys[1]"));
    }
}
