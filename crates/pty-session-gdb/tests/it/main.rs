//! Integration tests: real gdb on a small C program the tests compile.

mod support;

mod errors;
mod interrupt;
mod output;
mod session;
