//! Integration tests: the real `pty-session` binary, driven by the rmcp client over stdio
//! and over streamable HTTP (current protocol and a legacy one with MCP sessions).

mod abuse;
mod auth;
mod browser;
mod budgets;
mod cancel;
mod cli;
mod errors;
mod fairness;
mod faults;
mod framing;
mod intruders;
mod lifecycle;
mod listing;
mod logs;
mod memory;
mod owners;
mod people;
mod persist;
mod progress;
mod recordings;
mod redraws;
mod replies;
mod robustness;
mod round_trips;
mod sandbox;
mod schema;
mod screens;
mod shells;
mod soak;
mod ssh;
mod support;
mod terminal_waits;
mod trust;
