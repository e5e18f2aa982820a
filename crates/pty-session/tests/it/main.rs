//! Integration tests: real processes on real PTYs.

mod support;

mod basics;
