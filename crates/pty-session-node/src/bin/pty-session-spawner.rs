//! The spawner of the Node.js package's services: inside `node`, the current executable
//! is node, which does not link the library, so the addon names this program as
//! `Config::spawner`. Started by a service, its `main` never runs (the library's
//! constructor serves the service instead); started by hand, it says what it is for.

fn main() -> std::process::ExitCode {
    pty_session::spawner_main()
}
