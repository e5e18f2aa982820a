//! Integration tests: real processes on real PTYs.

mod support;

mod basics;
mod budgets;
mod errors;
// The probes call x86_64 syscalls by number.
#[cfg(target_arch = "x86_64")]
mod escapes;
mod floods;
mod input_wait;
mod kill;
mod linking;
mod listing;
mod owners;
mod people;
mod progress;
mod redraws;
mod round_trips;
mod sandbox;
mod screens;
mod settle;
mod shells;
mod terminal_waits;
mod wraps;
