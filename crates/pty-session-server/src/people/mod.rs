//! People beside the agent: the web view and its API, its terminal streams and their
//! slots, `attach` and `ls` in a person's own terminal, the MCP App inline in a chat host,
//! the one embedded copy of xterm.js, and how a session's fields are shown safely.

pub(crate) mod app;
pub mod attach;
pub(crate) mod listing;
pub mod ls;
pub(crate) mod remote;
pub(crate) mod shown;
pub(crate) mod stream_slots;
pub(crate) mod view_stream;
pub(crate) mod web;
pub(crate) mod xterm;
