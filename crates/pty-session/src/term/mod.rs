//! The terminal model: what the bytes a program writes mean, as a terminal would take
//! them. Nothing here does I/O or reads a clock; every module is fed bytes (or keys) and
//! answers with lines, a screen or bytes to write back, so each is tested whole, byte by
//! byte and in random pieces.
//!
//! - [`render`] turns output into the lines a terminal would show, with the window's open
//!   [`rows`] that a program may still redraw, and [`answer`]s the terminal's queries;
//! - [`scrollback`] keeps the completed lines and the one read cursor;
//! - [`screen`] is the full-screen view from a real emulator, which [`plain`] lets skip
//!   what cannot change it, and [`frame`] draws again for a viewer who comes late;
//! - [`output`] is what a feed produced; [`cells`] how wide a character is;
//! - [`keys`] names keys as the bytes an xterm sends; [`prompt`] knows a prompt's shape.

pub(crate) mod answer;
pub(crate) mod cells;
pub(crate) mod frame;
pub(crate) mod keys;
pub(crate) mod output;
pub(crate) mod plain;
pub(crate) mod prompt;
pub(crate) mod render;
pub(crate) mod rows;
pub(crate) mod screen;
pub(crate) mod scrollback;
