//! What one feed of a program's output produced: the lines it completed and the answers
//! to write back.

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
    /// [`Scrollback::push_recycling`]: crate::term::scrollback::Scrollback::push_recycling
    pub(crate) spare: Vec<String>,
}
