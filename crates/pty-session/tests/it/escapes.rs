//! The ways out of a sandbox that a red team found (other processes, other terminals,
//! files, root powers kept), each tried from inside `workspace` and `read-only` sessions,
//! as root (this process, as in CI and in containers) and as an unprivileged user (this
//! test binary run again as `ptytest` through `runuser`). Every probe aims at something
//! the test made itself: its own sleeping process, its own files, socket, SysV segment,
//! session and recording. The same probes run without a sandbox, where they do get out:
//! so a probe that could not tell is caught too.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use pty_session::{Config, OpenRequest, Owner, PtyService, Sandbox, SettleReason, quote_word};

use crate::support::*;

/// The user the unprivileged half runs as (`.ci/run` creates it).
const USER: &str = "ptytest";
/// Set in the environment of the test binary run again as [`USER`].
const AS_USER: &str = "PTY_SESSION_TEST_ESCAPES_AS_USER";

/// What the probes aim at, all made by the test outside any sandbox.
struct Targets {
    /// The test's own sleeping process.
    outsider: std::process::Child,
    /// A file outside every writable path, in a directory the sandbox can see.
    victim: PathBuf,
    /// A Unix socket the test listens on, by path, beside the victim.
    socket: PathBuf,
    /// A file the probes try to make in `/`, named for this test alone (the test without
    /// a sandbox, which may run beside, does make its own).
    root_file: PathBuf,
    /// Connections the socket took.
    connections: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// A SysV shared memory segment of the test's, by id.
    shm: String,
    /// Another session's terminal (`/dev/pts/N`).
    other_pts: String,
    /// The directory of another session's recording, under `/tmp`.
    recordings: TempDir,
    /// Where the sandboxed sessions run (their `cwd`) and the victim lives.
    base: TempDir,
    pty: PtyService,
}

impl Targets {
    /// Makes the targets under `base` (a directory the sandbox sees, outside `/tmp`).
    async fn make(base: TempDir) -> Targets {
        let outsider = std::process::Command::new("sleep")
            .arg("1000")
            .spawn()
            .expect("start sleep");
        let victim_dir = base.0.join("victim");
        std::fs::create_dir_all(&victim_dir).unwrap();
        std::fs::create_dir_all(base.0.join("work")).unwrap();
        let victim = victim_dir.join("file");
        std::fs::write(&victim, "untouched\n").unwrap();
        // A socket's path is short (108 bytes at most): beside the base, not in it.
        static SOCKETS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = SOCKETS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let socket = (base.0.parent().expect("a parent"))
            .join(format!("pty-sock-{}-{n}", std::process::id()));
        let _ = std::fs::remove_file(&socket);
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = connections.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stream.is_err() {
                    return;
                }
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        });
        let made = std::process::Command::new("ipcmk")
            .args(["-M", "4096"])
            .output()
            .expect("ipcmk (util-linux) must be installed for this test");
        let shm = String::from_utf8_lossy(&made.stdout)
            .split(':')
            .nth(1)
            .unwrap_or_default()
            .trim()
            .to_owned();
        assert!(!shm.is_empty(), "ipcmk -M: {made:?}");
        // Another session, and its recording, under /tmp as recordDir defaults go nowhere
        // else on most machines.
        let recordings = TempDir::new("escape-recordings");
        // A token file in a hidden directory inside the workspace, where a sandbox may
        // write all around it.
        let secret = base.0.join("work/secret");
        std::fs::create_dir_all(&secret).unwrap();
        std::fs::write(secret.join("token"), "secret-token\n").unwrap();
        let mut config = Config::default();
        config.record_dir = Some(recordings.0.clone());
        config.sandbox_hidden = vec![secret];
        let pty = PtyService::new(config);
        let other = open(
            &pty,
            &Owner::new("neighbour"),
            OpenRequest::new("sleep 1000").settle(pty_session::Settle::None),
        )
        .await;
        let other_pts = std::fs::read_link(format!("/proc/{}/fd/0", other.pid))
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(other_pts.starts_with("/dev/pts/"), "{other_pts}");
        let root_file = PathBuf::from(format!("/pty-escape-probe-{}-{n}", std::process::id()));
        Targets {
            root_file,
            outsider,
            victim,
            socket,
            connections,
            shm,
            other_pts,
            recordings,
            base,
            pty,
        }
    }

    /// The probes' environment.
    fn env(&self) -> BTreeMap<&'static str, String> {
        let mut env = BTreeMap::new();
        env.insert("OUT", self.outsider.id().to_string());
        env.insert("SERVICE", std::process::id().to_string());
        env.insert("VICTIM", self.victim.to_string_lossy().into_owned());
        env.insert("SOCK", self.socket.to_string_lossy().into_owned());
        env.insert("ROOT_FILE", self.root_file.to_string_lossy().into_owned());
        env.insert("SHMID", self.shm.clone());
        env.insert("OTHER_PTS", self.other_pts.clone());
        env.insert("RECDIR", self.recordings.0.to_string_lossy().into_owned());
        env.insert("PY", python3());
        // The call's own temp directory, which once made `/` writable.
        env.insert("TMPDIR", "/".to_owned());
        env
    }

    /// Runs the probes in `sandbox`; returns each probe's name and whether it got out.
    async fn probe(&self, sandbox: Sandbox) -> Vec<(String, bool)> {
        let mut request =
            OpenRequest::new(format!("bash --norc --noprofile -c {}", quote_word(PROBES)))
                .cwd(self.base.0.join("work"))
                .sandbox(sandbox)
                .lines(1000)
                .timeout(Duration::from_secs(60));
        for (name, value) in self.env() {
            request = request.env(name, value);
        }
        if sandbox != Sandbox::None {
            request = request.env("SANDBOXED", "1");
        }
        let opened = open(&self.pty, &Owner::new("prober"), request).await;
        assert_eq!(opened.settled_by, SettleReason::Exit, "{opened:?}");
        let text = opened.initial_output.text;
        assert!(text.contains("probes-done"), "{sandbox}: {text}");
        let results: Vec<(String, bool)> = text
            .lines()
            .filter_map(|line| {
                let (verdict, name) = line.split_once(' ')?;
                match verdict {
                    "ESCAPED" => Some((name.to_owned(), true)),
                    "held" => Some((name.to_owned(), false)),
                    _ => None,
                }
            })
            .collect();
        assert!(!results.is_empty(), "{sandbox}: {text}");
        if sandbox != Sandbox::None {
            assert!(text.contains("x32-result -1\n"), "x32 refused: {text}");
        }
        eprintln!("{sandbox}: {results:?}");
        // Whatever the verdicts, the targets themselves are checked from outside.
        if sandbox != Sandbox::None {
            let victim = std::fs::read_to_string(&self.victim).unwrap();
            assert_eq!(victim, "untouched\n");
            assert!(alive(self.outsider.id()), "the outside process lives");
            assert_eq!(
                self.connections.load(std::sync::atomic::Ordering::SeqCst),
                0,
                "nothing connected to the outside socket"
            );
            assert!(!self.root_file.exists(), "{text}");
        }
        results
    }
}

impl Drop for Targets {
    fn drop(&mut self) {
        let _ = self.outsider.kill();
        let _ = self.outsider.wait();
        let _ = std::process::Command::new("ipcrm")
            .args(["-m", &self.shm])
            .output();
        let _ = std::fs::remove_file(&self.root_file);
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// The probes: each prints `held NAME` when the sandbox stopped it, `ESCAPED NAME` when it
/// got through.
const PROBES: &str = r#"
probe() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "ESCAPED $name"; else echo "held $name"; fi; }
pycall() { "$PY" -c "import ctypes, struct, sys; l = ctypes.CDLL(None, use_errno=True); sys.exit(0 if ($1) >= 0 else 1)"; }
shellcode() { "$PY" -c 'import ctypes, mmap, sys
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(bytes.fromhex(sys.argv[1]))
f = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
sys.exit(0 if f() > 0 else 1)' "$1"; }
# Other processes.
probe prlimit prlimit --pid "$OUT" --nofile=1:1
# The service itself (this test's process), set to the limit it has: nothing changes
# where it gets out.
probe prlimit-service sh -c 'limit=$(prlimit --pid "$SERVICE" --core -o SOFT,HARD --noheadings | awk "{print \$1\":\"\$2}") && prlimit --pid "$SERVICE" --core="$limit"'
probe signal-service kill -0 "$SERVICE"
probe renice renice -n 5 -p "$OUT"
probe ionice ionice -c 3 -p "$OUT"
probe taskset taskset -p 1 "$OUT"
# Each made object is removed at once: where a probe gets out (without a sandbox), it
# leaves nothing behind.
sysv() { id=$(ipcmk "$1" $2 | sed 's/.*: //') && ipcrm "$3" "$id"; }
probe sysv-shm sysv -M 4096 -m
probe sysv-msg sysv -Q "" -q
probe sysv-sem sysv -S 1 -s
probe sysv-outside sh -c 'ipcs -m | grep -qw "$SHMID"'
probe fanotify pycall 'l.syscall(300, 0x200, 0)'
probe proc-outside test -e "/proc/$SERVICE"
# Other terminals.
probe other-pts sh -c 'exec 3<"$OTHER_PTS"'
probe tty1 sh -c 'exec 3<>/dev/tty1'
probe ptmx test -e /dev/ptmx
probe disks sh -c 'ls /dev | grep -q -e vda -e sda -e nvme -e loop'
# Files.
probe mknod-char mknod pty-escape-char c 1 3
probe mknod-block mknod pty-escape-block b 7 0
probe chmod chmod 0777 "$VICTIM"
probe chown chown "$(id -u):$(id -g)" "$VICTIM"
probe utime touch -d 2001-01-01 "$VICTIM"
probe setxattr setfattr -n user.pty -v x "$VICTIM"
probe chattr sh -c 'chattr +a "$VICTIM" && chattr -a "$VICTIM"'
probe setcap setcap cap_net_raw+ep "$VICTIM"
probe unix-socket "$PY" -c 'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$SOCK"
probe tmpdir-from-call test "$TMPDIR" = /
probe write-root touch "$ROOT_FILE"
probe other-recordings test -e "$RECDIR"
probe hidden-secret grep -q secret-token secret/token
probe hidden-replaced sh -c 'mv secret secret.moved && grep -q secret-token secret.moved/token; mv secret.moved secret'
probe run-sockets sh -c '[ -n "$(ls -A /run/user /run/*.sock 2>/dev/null)" ]'
# Root powers kept.
probe cap-effective sh -c '! grep -qE "^CapEff:[[:space:]]+0+$" /proc/self/status'
probe cap-bounding sh -c '! grep -qE "^CapBnd:[[:space:]]+0+$" /proc/self/status'
probe keyring pycall 'l.syscall(248, b"user", b"pty-escape", b"x", 1, -2)'
probe bpf pycall 'l.syscall(321, 0, struct.pack("IIII", 1, 4, 4, 1) + bytes(112), 128)'
probe perf pycall 'l.syscall(298, struct.pack("IIQQQQQ", 1, 128, 0, 0, 0, 0, 97) + bytes(80), 0, -1, -1, 0)'
# Other ABIs: x32 getpid, i386 getpid through int 0x80.
probe x32 shellcode b8270000400f05c3
probe int80 shellcode b814000000cd80c3
# What an x32 call returns: -1 (EPERM) from the sandbox's filter; -38 (ENOSYS) from a
# kernel without x32 and no filter.
echo "x32-result $("$PY" -c 'import ctypes, mmap, sys
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(bytes.fromhex("b8270000400f05c3"))
print(ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))())')"
# The name it has already: where it gets out, nothing changes. Not without a sandbox all
# the same.
[ -n "$SANDBOXED" ] && probe hostname sh -c 'hostname "$(hostname)"'

echo probes-done
exit 0"#;

/// What must get out without a sandbox (as root), so the probes are known to work: the
/// ones that need no particular filesystem or kernel option.
const CONTROL: &[&str] = &[
    "prlimit",
    "prlimit-service",
    "signal-service",
    "renice",
    "ionice",
    "taskset",
    "sysv-shm",
    "sysv-outside",
    "fanotify",
    "proc-outside",
    "other-pts",
    "ptmx",
    "mknod-char",
    "mknod-block",
    "chmod",
    "chown",
    "utime",
    "unix-socket",
    "tmpdir-from-call",
    "write-root",
    "other-recordings",
    "hidden-secret",
    "hidden-replaced",
    "cap-effective",
    "cap-bounding",
    "keyring",
];

/// Runs every probe in both sandboxed modes under `base`; fails naming each that got out.
async fn probes_hold(base: TempDir) {
    let targets = Targets::make(base).await;
    let mut escaped = Vec::new();
    for sandbox in [Sandbox::Workspace, Sandbox::ReadOnly] {
        let results = targets.probe(sandbox).await;
        assert!(results.len() >= 30, "{sandbox}: {results:?}");
        assert!(
            results.iter().any(|(name, _)| name == "hostname"),
            "{results:?}"
        );
        escaped.extend(
            results
                .into_iter()
                .filter(|(_, out)| *out)
                .map(|(name, _)| format!("{sandbox}: {name}")),
        );
    }
    assert!(escaped.is_empty(), "got out of the sandbox: {escaped:?}");
    // And what must still work from outside, as this user: input-wait settling reads the
    // sandboxed command's /proc, Ctrl-C reaches it, the close kills it.
    let owner = Owner::new("settler");
    for sandbox in [Sandbox::Workspace, Sandbox::ReadOnly] {
        let opened = open(
            &targets.pty,
            &owner,
            OpenRequest::new("cat")
                .cwd(targets.base.0.join("work"))
                .sandbox(sandbox)
                .timeout(Duration::from_secs(20)),
        )
        .await;
        assert_eq!(
            opened.settled_by,
            SettleReason::Input,
            "{sandbox}: {opened:?}"
        );
        let sent = targets
            .pty
            .send(
                &owner,
                &opened.session_id,
                pty_session::SendRequest::new("\u{3}").timeout(Duration::from_secs(20)),
            )
            .await
            .unwrap();
        assert_eq!(sent.settled_by, SettleReason::Exit, "{sandbox}: {sent:?}");
        assert!(targets.pty.close(&owner, &opened.session_id).await.unwrap());
    }
    targets.pty.shutdown().await;
}

#[tokio::test]
async fn no_probe_gets_out_as_root() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        panic!("this test runs as root (as CI does); run the suite as root");
    }
    probes_hold(TempDir::under(env!("CARGO_TARGET_TMPDIR"), "escape-root")).await;
}

#[tokio::test]
async fn without_a_sandbox_the_probes_do_get_out() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        panic!("this test runs as root (as CI does); run the suite as root");
    }
    let targets = Targets::make(TempDir::under(env!("CARGO_TARGET_TMPDIR"), "escape-none")).await;
    let results = targets.probe(Sandbox::None).await;
    let missed: Vec<&str> = CONTROL
        .iter()
        .copied()
        .filter(|name| !results.iter().any(|(n, out)| n == name && *out))
        .collect();
    assert!(
        missed.is_empty(),
        "these probes cannot tell: {missed:?} in {results:?}"
    );
    targets.pty.shutdown().await;
}

/// The same probes from a service run by an unprivileged user: this test binary again,
/// as [`USER`], running this test, which then probes instead of starting itself.
#[test]
fn no_probe_gets_out_as_an_unprivileged_user() {
    if std::env::var_os(AS_USER).is_some() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let home = std::env::var("HOME").unwrap();
        runtime.block_on(probes_hold(TempDir::under(&home, "escape-user")));
        return;
    }
    let known = std::process::Command::new("getent")
        .args(["passwd", USER])
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(
        known,
        "the user {USER} is missing: this test needs it (`useradd -m {USER}`, which .ci/run does)"
    );
    let mut exe = std::env::current_exe().unwrap();
    let reachable = |exe: &std::path::Path| {
        std::process::Command::new("runuser")
            .args(["-u", USER, "--", "test", "-x"])
            .arg(exe)
            .status()
            .expect("runuser (util-linux) must be installed for this test")
            .success()
    };
    // A build under a directory others cannot search (a checkout under /root): a copy of
    // this binary where the user reaches it (it is its own spawner and needs nothing else).
    let copy = (!reachable(&exe)).then(|| {
        let dir = std::env::temp_dir().join(format!("pty-session-escapes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let copied = dir.join("it");
        std::fs::copy(&exe, &copied).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&copied, std::fs::Permissions::from_mode(0o755)).unwrap();
        exe = copied;
        dir
    });
    assert!(reachable(&exe), "{USER} cannot run {}", exe.display());
    let test = "escapes::no_probe_gets_out_as_an_unprivileged_user";
    let output = std::process::Command::new("runuser")
        .args(["-u", USER, "--"])
        .arg(&exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env_clear()
        .env(AS_USER, "1")
        .env("HOME", format!("/home/{USER}"))
        .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
        .env("LANG", "C.UTF-8")
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runuser (util-linux) must be installed for this test");
    if let Some(dir) = copy {
        let _ = std::fs::remove_dir_all(dir);
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("test result: ok. 1 passed"),
        "as {USER}: {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
}
