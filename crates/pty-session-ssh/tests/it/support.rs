//! Helpers shared by the integration tests: the local OpenSSH server and test account of
//! the testkit, with options to connect to it through this crate.

use std::time::Duration;

use pty_session::{Config, PtyService};
use pty_session_ssh::{HostKeyPolicy, Secret, SecretKind, SshOptions};

pub use pty_session_testkit::sshd::{
    BANNER, PROFILE_GREETING, Sshd, SshdConfig, USER, account, child_pids as children, free_port,
    is_shell_prompt,
};
pub use pty_session_testkit::{alive, eventually};

/// Options to connect to a test [`Sshd`] through this crate.
pub trait SshdOptions {
    /// Options to connect as the test account: the test's known-hosts file, no agent,
    /// no key and no secret yet.
    fn options(&self) -> SshOptions;
    /// Options to log in with the authorized key, the host key already known.
    fn key_options(&self) -> SshOptions;
    /// Options to log in with a password answered by a callback, the host key already
    /// known, keys not tried.
    fn password_options(&self, password: &str) -> SshOptions;
}

impl SshdOptions for Sshd {
    fn options(&self) -> SshOptions {
        SshOptions::new("127.0.0.1")
            .port(self.port)
            .user(USER)
            .known_hosts(self.known_hosts())
            .option("IdentityAgent=none")
            .timeout(Duration::from_secs(20))
    }

    fn key_options(&self) -> SshOptions {
        self.trust_host_key();
        self.options()
            .identity(self.dir.join("id_ed25519"))
            .host_key(HostKeyPolicy::Strict)
    }

    fn password_options(&self, password: &str) -> SshOptions {
        self.trust_host_key();
        let password = password.to_owned();
        self.options()
            .option("PubkeyAuthentication=no")
            .secrets(move |prompt| {
                (prompt.kind == SecretKind::Password).then(|| Secret::new(password.clone()))
            })
    }
}

/// A service with default config, as a consumer would have.
pub fn service() -> PtyService {
    PtyService::new(Config::default())
}
