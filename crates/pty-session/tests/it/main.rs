//! Integration tests: real processes on real PTYs.

mod support;

mod basics;
mod budgets;
mod errors;
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
mod sandbox;
mod screens;
mod settle;
mod terminal_waits;
