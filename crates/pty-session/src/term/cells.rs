//! How many cells a character takes on a terminal's row, and what stands in a cell that a
//! wide character left blank.

/// What stands in a row for the cell a wide character leaves blank at the end of a screen
/// row it did not fit (it goes to the next): a noncharacter no program prints, one cell
/// wide, taken out of every line, so that the line reads as the program printed it.
pub(crate) const SPACER: char = '\u{FFFF}';

/// A character's width in cells, as a terminal counts it (`unicode-width`, the table
/// alacritty uses too): 2 for wide characters (CJK, fullwidth forms, most emoji), 0 for
/// combining and other zero-width characters, `None` for control characters such as DEL
/// and the C1 controls, which a terminal does not print. A tab stays one cell.
pub(crate) fn width(c: char) -> Option<usize> {
    match c {
        '\t' | ' '..='~' | SPACER => Some(1),
        _ if c.is_ascii() => None,
        _ => unicode_width::UnicodeWidthChar::width(c),
    }
}
