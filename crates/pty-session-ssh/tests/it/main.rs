//! Integration tests: the real ssh client against a real OpenSSH server on 127.0.0.1,
//! started by each test (see `support`). They need root (sshd logs into a test account)
//! and `openssh-server`; `.ci/run` installs it.

mod support;

mod auth;
mod host_keys;
mod lifecycle;
mod run;
mod settle;
