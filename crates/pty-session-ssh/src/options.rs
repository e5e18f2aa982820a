//! [`SshOptions`]: where to connect, as whom, how to treat host keys and secrets; and the
//! ssh command line they make.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pty_session::quote_word;

use crate::secret::SecretSource;
use crate::{HostKeyPolicy, Secret, SecretPrompt};

/// How [`Ssh::connect`](crate::Ssh::connect) runs the `ssh` client.
///
/// ```
/// use std::time::Duration;
/// use pty_session_ssh::{HostKeyPolicy, Secret, SecretKind, SshOptions};
/// let options = SshOptions::new("build-host.example")
///     .port(2222)
///     .user("ci")
///     .identity("/home/ci/.ssh/id_ed25519")
///     .known_hosts("/home/ci/.ssh/known_hosts")
///     .host_key(HostKeyPolicy::AcceptNew)
///     .option("Compression=yes")
///     .connect_timeout(Duration::from_secs(5))
///     .secrets(|prompt| match prompt.kind {
///         SecretKind::Passphrase { .. } => std::env::var("KEY_PASSPHRASE").ok().map(Secret::new),
///         _ => None,
///     });
/// ```
#[derive(Clone)]
pub struct SshOptions {
    pub(crate) ssh: String,
    pub(crate) host: String,
    pub(crate) port: Option<u16>,
    pub(crate) user: Option<String>,
    pub(crate) identities: Vec<PathBuf>,
    pub(crate) options: Vec<String>,
    pub(crate) connect_timeout: Duration,
    pub(crate) known_hosts: Option<PathBuf>,
    pub(crate) config_file: Option<PathBuf>,
    pub(crate) host_key: HostKeyPolicy,
    pub(crate) secrets: Option<SecretSource>,
    pub(crate) timeout: Duration,
    pub(crate) env: BTreeMap<String, String>,
}

impl SshOptions {
    /// Connects to `host` (a name or an address), port 22, as the local user, with ssh's
    /// default keys, the known-hosts file `~/.ssh/known_hosts`, no ssh config file
    /// (`-F /dev/null`), [`HostKeyPolicy::Strict`], no secrets, a 10 s connect timeout
    /// and a 30 s timeout for connecting and for each command.
    pub fn new(host: impl Into<String>) -> SshOptions {
        SshOptions {
            ssh: "ssh".to_owned(),
            host: host.into(),
            port: None,
            user: None,
            identities: Vec::new(),
            options: Vec::new(),
            connect_timeout: Duration::from_secs(10),
            known_hosts: None,
            config_file: Some(PathBuf::from("/dev/null")),
            host_key: HostKeyPolicy::Strict,
            secrets: None,
            timeout: Duration::from_secs(30),
            env: BTreeMap::new(),
        }
    }

    /// The ssh client (default `ssh` from `PATH`).
    pub fn ssh(mut self, ssh: impl Into<String>) -> SshOptions {
        self.ssh = ssh.into();
        self
    }

    /// The server's port (`-p`).
    pub fn port(mut self, port: u16) -> SshOptions {
        self.port = Some(port);
        self
    }

    /// The remote user (`-l`).
    pub fn user(mut self, user: impl Into<String>) -> SshOptions {
        self.user = Some(user.into());
        self
    }

    /// A private key to offer (`-i`); call it again to offer more, in order. With any
    /// identity given, ssh offers only these (`IdentitiesOnly=yes`), not every key of
    /// `~/.ssh` or the agent, which servers count as failed attempts.
    pub fn identity(mut self, key: impl Into<PathBuf>) -> SshOptions {
        self.identities.push(key.into());
        self
    }

    /// One more ssh option, as `-o` takes it: `"Compression=yes"`. The driver's own
    /// options win over these (it needs `LocalCommand`, `StrictHostKeyChecking=ask`,
    /// `EscapeChar`, `BatchMode=no` and `RequestTTY` as it sets them); these win over its
    /// defaults (`NumberOfPasswordPrompts=1`, `ServerAliveInterval=15`,
    /// `ServerAliveCountMax=3`, `HashKnownHosts=no`, `UpdateHostKeys=no`).
    pub fn option(mut self, option: impl Into<String>) -> SshOptions {
        self.options.push(option.into());
        self
    }

    /// How long the TCP connection may take (`ConnectTimeout`, whole seconds, at least 1;
    /// default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> SshOptions {
        self.connect_timeout = timeout;
        self
    }

    /// The known-hosts file to check and add keys to (`UserKnownHostsFile`), instead of
    /// `~/.ssh/known_hosts`; the system-wide one is then not read either.
    pub fn known_hosts(mut self, path: impl Into<PathBuf>) -> SshOptions {
        self.known_hosts = Some(path.into());
        self
    }

    /// The ssh config file (`-F`; default `/dev/null`, so that the user's
    /// `~/.ssh/config` changes nothing). `None` reads ssh's usual files.
    pub fn config_file(mut self, path: Option<PathBuf>) -> SshOptions {
        self.config_file = path;
        self
    }

    /// What to do about a host key ssh does not know (default
    /// [`HostKeyPolicy::Strict`]).
    pub fn host_key(mut self, policy: HostKeyPolicy) -> SshOptions {
        self.host_key = policy;
        self
    }

    /// The callback that answers ssh's prompts for a password or a key's passphrase. It
    /// returns the secret, or `None` to give up
    /// ([`Error::NoSecret`](crate::Error::NoSecret)). Each prompt asks it anew, with
    /// [`SecretPrompt::attempt`] counting; the driver keeps nothing.
    ///
    /// Without a callback, ssh is told not to try passwords at all
    /// (`PasswordAuthentication=no`, `KbdInteractiveAuthentication=no`), so that a
    /// refused key fails at once instead of waiting at a prompt.
    pub fn secrets(
        mut self,
        answer: impl Fn(&SecretPrompt) -> Option<Secret> + Send + Sync + 'static,
    ) -> SshOptions {
        self.secrets = Some(Arc::new(answer));
        self
    }

    /// How long connecting, and each command, may take by default (default 30 s, at most
    /// 600 s).
    pub fn timeout(mut self, timeout: Duration) -> SshOptions {
        self.timeout = timeout;
        self
    }

    /// An environment variable for the local ssh process (such as `SSH_AUTH_SOCK`).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> SshOptions {
        self.env.insert(name.into(), value.into());
        self
    }

    /// The command line, quoted for a POSIX shell, which is also how pty-session's `exec`
    /// backend splits words. With the `shell` backend it starts with `exec`, so that the
    /// session's pid is ssh's. `local_command` prints the ready marker.
    pub(crate) fn command_line(&self, shell: bool, local_command: &str) -> String {
        let mut words: Vec<String> = Vec::new();
        if shell {
            words.push("exec".to_owned());
        }
        words.push(self.ssh.clone());
        if let Some(config) = &self.config_file {
            words.push("-F".to_owned());
            words.push(config.to_string_lossy().into_owned());
        }
        // ssh keeps the first value it is given for an option, so the driver's own come
        // first, the caller's next, the driver's defaults last.
        words.extend(["-e", "none"].map(str::to_owned));
        let option = |words: &mut Vec<String>, option: String| {
            words.push("-o".to_owned());
            words.push(option);
        };
        option(&mut words, "PermitLocalCommand=yes".to_owned());
        option(&mut words, format!("LocalCommand={local_command}"));
        option(&mut words, "StrictHostKeyChecking=ask".to_owned());
        option(&mut words, "BatchMode=no".to_owned());
        option(&mut words, "RequestTTY=force".to_owned());
        if let Some(known_hosts) = &self.known_hosts {
            option(
                &mut words,
                format!("UserKnownHostsFile={}", known_hosts.display()),
            );
            option(&mut words, "GlobalKnownHostsFile=/dev/null".to_owned());
        }
        let connect_secs = self.connect_timeout.as_secs_f64().ceil().max(1.0) as u64;
        option(&mut words, format!("ConnectTimeout={connect_secs}"));
        if let Some(port) = self.port {
            words.push("-p".to_owned());
            words.push(port.to_string());
        }
        if let Some(user) = &self.user {
            words.push("-l".to_owned());
            words.push(user.clone());
        }
        for identity in &self.identities {
            words.push("-i".to_owned());
            words.push(identity.to_string_lossy().into_owned());
        }
        if !self.identities.is_empty() {
            option(&mut words, "IdentitiesOnly=yes".to_owned());
        }
        for extra in &self.options {
            option(&mut words, extra.clone());
        }
        for default in [
            "NumberOfPasswordPrompts=1",
            "ServerAliveInterval=15",
            "ServerAliveCountMax=3",
            "HashKnownHosts=no",
            "UpdateHostKeys=no",
        ] {
            option(&mut words, default.to_owned());
        }
        if self.secrets.is_none() {
            option(&mut words, "PasswordAuthentication=no".to_owned());
            option(&mut words, "KbdInteractiveAuthentication=no".to_owned());
        }
        words.push("--".to_owned());
        words.push(self.host.clone());
        words
            .iter()
            .map(|word| quote_word(word))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl fmt::Debug for SshOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SshOptions")
            .field("ssh", &self.ssh)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("identities", &self.identities)
            .field("options", &self.options)
            .field("connect_timeout", &self.connect_timeout)
            .field("known_hosts", &self.known_hosts)
            .field("config_file", &self.config_file)
            .field("host_key", &self.host_key)
            .field("secrets", &self.secrets.as_ref().map(|_| ".."))
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn the_command_line_puts_the_drivers_options_first() {
        let options = SshOptions::new("example.org")
            .port(2222)
            .user("o'neil")
            .identity("/keys/my key")
            .known_hosts("/tmp/kh")
            .option("Compression=yes")
            .connect_timeout(Duration::from_millis(1500));
        expect![[r#"exec ssh -F /dev/null -e none -o PermitLocalCommand=yes -o 'LocalCommand=echo READY' -o StrictHostKeyChecking=ask -o BatchMode=no -o RequestTTY=force -o UserKnownHostsFile=/tmp/kh -o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=2 -p 2222 -l 'o'\''neil' -i '/keys/my key' -o IdentitiesOnly=yes -o Compression=yes -o NumberOfPasswordPrompts=1 -o ServerAliveInterval=15 -o ServerAliveCountMax=3 -o HashKnownHosts=no -o UpdateHostKeys=no -o PasswordAuthentication=no -o KbdInteractiveAuthentication=no -- example.org"#]]
            .assert_eq(&options.command_line(true, "echo READY"));
        let options = SshOptions::new("h")
            .config_file(None)
            .secrets(|_| None)
            .ssh("/usr/bin/ssh");
        expect![[r#"/usr/bin/ssh -e none -o PermitLocalCommand=yes -o 'LocalCommand=echo READY' -o StrictHostKeyChecking=ask -o BatchMode=no -o RequestTTY=force -o ConnectTimeout=10 -o NumberOfPasswordPrompts=1 -o ServerAliveInterval=15 -o ServerAliveCountMax=3 -o HashKnownHosts=no -o UpdateHostKeys=no -- h"#]]
            .assert_eq(&options.command_line(false, "echo READY"));
    }
}
