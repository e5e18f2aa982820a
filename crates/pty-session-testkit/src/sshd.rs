//! A real OpenSSH server on 127.0.0.1 for tests ([`Sshd`]), the test account it logs
//! into ([`account`]), and its keys.
//!
//! Each test starts its own `sshd -D -e` on a free port, with a generated host key and
//! config, as a pty-session session of its own service: the session's shim is a
//! subreaper, so closing it (or the test process ending) kills and reaps sshd and every
//! connection process it forked, even those that called `setsid`.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use pty_session::{
    CancellationToken, Config, OpenRequest, Owner, PtyService, SessionId, Settle, quote_word,
};

use crate::alive;

/// The account every test logs into.
pub const USER: &str = "ptysshtest";
/// What the account's login shell prints first (its `.bash_profile`): a greeting after
/// authentication, like a MOTD.
pub const PROFILE_GREETING: &str = "Hello from the ptysshtest login profile";
/// The server's pre-authentication banner.
pub const BANNER: &str = "Authorized use only: pty-session-ssh test server";

/// Whether sshd is installed here (for a benchmark that measures with it where it can;
/// a test that needs it fails without it instead, saying what to install).
pub fn installed() -> bool {
    found_sshd().is_some()
}

/// Where sshd is: Debian keeps it in /usr/sbin (often not on PATH).
fn found_sshd() -> Option<String> {
    ["/usr/sbin/sshd", "/usr/local/sbin/sshd"]
        .into_iter()
        .find(|path| Path::new(path).exists())
        .map(str::to_owned)
        .or_else(|| {
            let out = Command::new("sh")
                .args(["-c", "command -v sshd"])
                .output()
                .ok()?;
            Some(String::from_utf8_lossy(&out.stdout).trim().to_owned())
                .filter(|path| !path.is_empty())
        })
}

/// The sshd binary, which Debian keeps in /usr/sbin (often not on PATH).
fn sshd_binary() -> &'static str {
    static SSHD: OnceLock<String> = OnceLock::new();
    SSHD.get_or_init(|| {
        found_sshd().expect(
            "sshd must be installed for these tests: apt-get install openssh-server \
             (.ci/run installs it)",
        )
    })
}

/// sshd's version, from `sshd -V` (`OpenSSH_9.2, OpenSSL ...`).
fn sshd_version() -> (u32, u32) {
    static VERSION: OnceLock<(u32, u32)> = OnceLock::new();
    *VERSION.get_or_init(|| {
        let out = Command::new(sshd_binary()).arg("-V").output().unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout);
        let version = text
            .split_once("OpenSSH_")
            .map(|(_, rest)| rest)
            .unwrap_or_default();
        let mut numbers = version
            .split(|c: char| !c.is_ascii_digit())
            .map(|n| n.parse().unwrap_or(0));
        (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0))
    })
}

/// The test account: a dedicated local user with bash as its login shell and a random
/// password, kept in a file only root can read. Created once per machine, under a lock
/// (tests run in parallel processes), and checked on every run.
pub struct Account {
    /// Its password.
    pub password: String,
}

/// The test account, created if missing. Panics, loudly, when not root: sshd must run as
/// root to log into another account and to check passwords.
pub fn account() -> &'static Account {
    static ACCOUNT: OnceLock<Account> = OnceLock::new();
    ACCOUNT.get_or_init(|| {
        assert!(
            rustix::process::geteuid().is_root(),
            "these tests start sshd, which must run as root to log into a test \
             account and check its password; run them as root (CI does)"
        );
        let state = Path::new("/var/lib/pty-session-ssh-tests");
        fs::create_dir_all(state).expect("create /var/lib/pty-session-ssh-tests");
        fs::set_permissions(state, fs::Permissions::from_mode(0o700)).unwrap();
        let lock = fs::File::create(state.join("lock")).expect("create the lock file");
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).expect("lock");

        let password_file = state.join("password");
        let password = match fs::read_to_string(&password_file) {
            Ok(password) if !password.trim().is_empty() => password.trim().to_owned(),
            _ => {
                let password = format!("pw-{}", random_hex(12));
                let mut file = fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(0o600)
                    .open(&password_file)
                    .unwrap();
                writeln!(file, "{password}").unwrap();
                password
            }
        };
        let exists = Command::new("id")
            .arg(USER)
            .output()
            .is_ok_and(|out| out.status.success());
        if !exists {
            run_ok(Command::new("useradd").args(["-m", "-s", "/bin/bash", USER]));
        }
        // Always set: the file is the truth, whatever the account had.
        let mut chpasswd = Command::new("chpasswd")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("run chpasswd");
        writeln!(chpasswd.stdin.take().unwrap(), "{USER}:{password}").unwrap();
        assert!(chpasswd.wait().unwrap().success(), "chpasswd failed");
        let home = PathBuf::from(format!("/home/{USER}"));
        fs::write(
            home.join(".bash_profile"),
            format!("echo '{PROFILE_GREETING}'\n. ~/.bashrc\n"),
        )
        .expect("write the account's .bash_profile");
        Account { password }
    })
}

/// How a test's sshd is configured beyond the defaults.
#[derive(Debug, Clone, Default)]
pub struct SshdConfig {
    /// `MaxAuthTries` (default 6).
    pub max_auth_tries: Option<u32>,
    /// `ForceCommand`: what the server runs instead of the account's login shell.
    pub force_command: Option<String>,
}

/// One `sshd -D -e` on 127.0.0.1, with its own directory of keys and config.
pub struct Sshd {
    /// Its port.
    pub port: u16,
    /// Its directory: config, host key, client keys, authorized_keys, known_hosts.
    pub dir: PathBuf,
    pty: PtyService,
    owner: Owner,
    id: Option<SessionId>,
    /// The listening sshd's pid.
    pub pid: u32,
}

impl Sshd {
    /// Starts sshd with the default config.
    pub async fn start() -> Sshd {
        Sshd::start_with(SshdConfig::default()).await
    }

    /// Starts sshd: keys, config, a free port (another on a clash), and waits for
    /// `Server listening`.
    pub async fn start_with(config: SshdConfig) -> Sshd {
        account();
        let sshd = sshd_binary();
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "pty-session-sshd-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        // sshd reads authorized_keys as the test account.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        keygen(&dir.join("host_ed25519"), "");
        keygen(&dir.join("id_ed25519"), "");
        keygen(&dir.join("id_passphrase"), "correct horse");
        keygen(&dir.join("id_other"), "");
        let authorized: String = ["id_ed25519.pub", "id_passphrase.pub"]
            .iter()
            .map(|key| fs::read_to_string(dir.join(key)).unwrap())
            .collect();
        fs::write(dir.join("authorized_keys"), authorized).unwrap();
        fs::set_permissions(
            dir.join("authorized_keys"),
            fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        fs::write(dir.join("banner"), format!("{BANNER}\n")).unwrap();
        // The privilege separation directory, which a fresh install may lack until the
        // service first starts.
        fs::create_dir_all("/run/sshd").unwrap();

        let pty = PtyService::new(Config::default());
        let owner = Owner::new("sshd");
        let mut last = String::new();
        for _ in 0..5 {
            let port = free_port();
            let config_file = dir.join("sshd_config");
            fs::write(
                &config_file,
                format!(
                    "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_ed25519\n\
                     PidFile none\nAuthorizedKeysFile {dir}/authorized_keys\nStrictModes no\n\
                     UsePAM no\nPasswordAuthentication yes\nKbdInteractiveAuthentication no\n\
                     PubkeyAuthentication yes\nPermitRootLogin no\nAllowUsers {USER}\n\
                     Banner {dir}/banner\nPrintMotd yes\nPrintLastLog no\nMaxAuthTries {tries}\n{penalties}{force}",
                    dir = dir.display(),
                    tries = config.max_auth_tries.unwrap_or(6),
                    // From 9.8 sshd refuses a source for a while after failed logins,
                    // which would couple the tests; older versions refuse the keyword.
                    penalties = if sshd_version() >= (9, 8) {
                        "PerSourcePenalties no\n"
                    } else {
                        ""
                    },
                    force = config
                        .force_command
                        .as_ref()
                        .map(|command| format!("ForceCommand {command}\n"))
                        .unwrap_or_default(),
                ),
            )
            .unwrap();
            let request =
                OpenRequest::new(format!("exec {sshd} -D -e -f {}", config_file.display()))
                    .settle(Settle::Quiet)
                    .quiet(Duration::from_millis(10_000))
                    .timeout(Duration::from_millis(10_000))
                    .until("Server listening on|Bind to port|[Ff]atal|error");
            let opened = pty
                .open(&owner, request, &CancellationToken::new())
                .await
                .expect("start sshd");
            last = format!("{}{}", opened.initial_output.text, opened.pending);
            if last.contains("Server listening on") {
                return Sshd {
                    port,
                    dir,
                    pty,
                    owner,
                    id: Some(opened.session_id),
                    pid: opened.pid,
                };
            }
            pty.close(&owner, &opened.session_id).await.unwrap();
            if !last.contains("Address already in use") {
                break;
            }
        }
        panic!("sshd did not start; it printed:\n{last}");
    }

    /// The host key's fingerprint, from `ssh-keygen -lf` (`SHA256:...`).
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.dir.join("host_ed25519.pub"))
    }

    /// The known-hosts file the tests' clients use (it does not exist at first).
    pub fn known_hosts(&self) -> PathBuf {
        self.dir.join("known_hosts")
    }

    /// Writes the known-hosts file with `key` (a `.pub` file) as this server's key.
    pub fn trust(&self, key: &Path) {
        let key = fs::read_to_string(key).unwrap();
        let mut words = key.split_whitespace();
        let (kind, blob) = (words.next().unwrap(), words.next().unwrap());
        fs::write(
            self.known_hosts(),
            format!("[127.0.0.1]:{} {kind} {blob}\n", self.port),
        )
        .unwrap();
    }

    /// Writes the known-hosts file with the server's real host key.
    pub fn trust_host_key(&self) {
        self.trust(&self.dir.join("host_ed25519.pub"));
    }

    /// The plain `ssh` command line that logs into this server as the test account with
    /// `key` (a file in its directory: `id_ed25519`, or `id_passphrase`, whose passphrase
    /// is `correct horse`), the host key known; `batch` sets `BatchMode`.
    pub fn ssh_command(&self, key: &str, batch: bool) -> String {
        self.trust_host_key();
        let path = |name: &str| quote_word(self.dir.join(name).to_str().unwrap()).into_owned();
        format!(
            "exec ssh -F /dev/null -tt -p {port} -i {key} -o IdentitiesOnly=yes \
             -o IdentityAgent=none -o BatchMode={batch} -o StrictHostKeyChecking=yes \
             -o UserKnownHostsFile={known_hosts} -o GlobalKnownHostsFile=/dev/null \
             -l {USER} 127.0.0.1",
            port = self.port,
            key = path(key),
            batch = if batch { "yes" } else { "no" },
            known_hosts = path("known_hosts"),
        )
    }

    /// What sshd logged so far (for failure messages).
    pub async fn log(&self) -> String {
        match &self.id {
            Some(id) => match self.pty.tail(&self.owner, id, Some(10_000)).await {
                Ok(tail) => tail.output.text,
                Err(err) => format!("(no log: {err})"),
            },
            None => "(stopped)".to_owned(),
        }
    }

    /// Kills sshd and every process it started (the connections' too) with SIGKILL, as a
    /// crash or an OOM kill would: nothing says goodbye to the clients. Then closes its
    /// session, which returns once they are all reaped.
    pub async fn kill(&mut self) {
        let tree = self.kill_tree();
        if let Some(id) = self.id.take() {
            self.pty.close(&self.owner, &id).await.unwrap();
        }
        for pid in tree {
            assert!(!alive(pid), "sshd's process {pid} outlived the kill");
        }
    }
}

impl Sshd {
    /// SIGKILLs sshd and its descendants now; returns their pids. The shim of sshd's
    /// session, a subreaper, reaps them.
    fn kill_tree(&self) -> Vec<u32> {
        self.signal_tree(rustix::process::Signal::KILL)
    }

    /// Stops sshd and its descendants (SIGSTOP): the connection stays open but nothing
    /// answers, as when the network is gone. Drop still kills them.
    pub fn freeze(&self) {
        self.signal_tree(rustix::process::Signal::STOP);
    }

    fn signal_tree(&self, signal: rustix::process::Signal) -> Vec<u32> {
        let mut tree = vec![self.pid];
        let mut at = 0;
        while at < tree.len() {
            tree.extend(child_pids(tree[at]));
            at += 1;
        }
        for pid in &tree {
            if let Some(pid) = rustix::process::Pid::from_raw(*pid as i32) {
                let _ = rustix::process::kill_process(pid, signal);
            }
        }
        tree
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // A test that ends, or panics, kills sshd's tree at once. Closing the session
        // then reaps it; should the runtime be gone before that task runs, dropping the
        // service closes the shim's control socket and the shim finishes the job.
        if self.id.is_some() {
            self.kill_tree();
        }
        if let Some(id) = self.id.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let (pty, owner) = (self.pty.clone(), self.owner.clone());
            runtime.spawn(async move {
                let _ = pty.close(&owner, &id).await;
            });
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// `ssh-keygen -t ed25519` into `path` with `passphrase`.
fn keygen(path: &Path, passphrase: &str) {
    run_ok(
        Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-C", "pty-session-ssh-test", "-N"])
            .arg(passphrase)
            .arg("-f")
            .arg(path),
    );
}

/// A public key's fingerprint (`SHA256:...`).
pub fn fingerprint(public_key: &Path) -> String {
    let out = run_ok(Command::new("ssh-keygen").arg("-lf").arg(public_key));
    out.split_whitespace()
        .nth(1)
        .expect("ssh-keygen -lf prints bits, fingerprint, comment")
        .to_owned()
}

fn run_ok(command: &mut Command) -> String {
    let out = command
        .output()
        .unwrap_or_else(|err| panic!("run {command:?}: {err}"));
    assert!(
        out.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("randomness");
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// The pids whose parent is `pid`, from `/proc`.
pub fn child_pids(pid: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| {
            fs::read_to_string(format!("/proc/{child}/stat")).is_ok_and(|stat| {
                // The parent is the second field after the command's closing parenthesis.
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(pid)
            })
        })
        .collect()
}

/// Whether `pending` is the test account's shell prompt (Debian's `.bashrc`,
/// `user@host:dir$ `) in directory `dir` (`~` at home).
pub fn is_shell_prompt(pending: &str, dir: &str) -> bool {
    pending.starts_with(&format!("{USER}@")) && pending.ends_with(&format!(":{dir}$ "))
}
