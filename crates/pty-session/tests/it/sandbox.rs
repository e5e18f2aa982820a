//! Sandboxed sessions on this machine's kernel: what they may write and reach, what they
//! may not do to processes outside, and that settling and the tree kill work the same.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::time::Duration;

use pty_session::{
    CancellationToken, Config, OpenRequest, Owner, PtyService, Sandbox, SendRequest, SettleReason,
    quote_word,
};

use crate::support::*;

/// Runs `script` under bash in `sandbox`, in `dir.0/work` with `$TMPDIR` `dir.0/tmp`;
/// returns what it printed once it exited.
async fn run_in(pty: &PtyService, sandbox: Sandbox, dir: &TempDir, script: &str) -> String {
    let (work, tmp) = (dir.0.join("work"), dir.0.join("tmp"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let request = OpenRequest::new(format!("bash --norc --noprofile -c {}", quote_word(script)))
        .cwd(&work)
        .env("TMPDIR", tmp.to_str().unwrap())
        .env("PY", python3())
        .sandbox(sandbox)
        .timeout(Duration::from_millis(30_000));
    let opened = open(pty, &Owner::new("test"), request).await;
    assert_eq!(opened.settled_by, SettleReason::Exit, "{opened:?}");
    assert_eq!(opened.sandbox, sandbox);
    opened.initial_output.text
}

fn path(dir: &TempDir, rest: &str) -> std::path::PathBuf {
    dir.0.join(rest)
}

#[tokio::test]
async fn workspace_writes_its_directory_and_temp_dir_only() {
    let (pty, _) = service();
    let dir = TempDir::new("sbx-write");
    let elsewhere = TempDir::new("sbx-elsewhere");
    let home = std::env::var("HOME").unwrap();
    let home_file = format!("{home}/.pty-session-sandbox-test-{}", std::process::id());
    let script = format!(
        r#"touch ok-cwd && echo wrote-cwd
mkdir -p sub && echo data > sub/f && mv sub/f sub/g && echo renamed-in-cwd
touch "$TMPDIR/ok-tmp" && echo wrote-tmp
touch {home_file} 2>&1
touch /etc/pty-session-sandbox-test 2>&1
touch {elsewhere}/x 2>&1
echo hi > /dev/null && echo wrote-null
exit 0"#,
        home_file = quote_word(&home_file),
        elsewhere = quote_word(elsewhere.0.to_str().unwrap()),
    );
    let out = run_in(&pty, Sandbox::Workspace, &dir, &script).await;
    for line in ["wrote-cwd", "renamed-in-cwd", "wrote-tmp", "wrote-null"] {
        assert!(out.contains(line), "{line}: {out}");
    }
    // Home and /etc are read-only; the other directory, under /tmp, is not even there.
    assert_eq!(out.matches("cannot touch").count(), 3, "{out}");
    assert!(path(&dir, "work/ok-cwd").exists());
    // The temp directory is the session's own /tmp, not the call's `TMPDIR`.
    assert!(!path(&dir, "tmp/ok-tmp").exists(), "{out}");
    assert!(!std::path::Path::new(&home_file).exists(), "{out}");
    assert!(!elsewhere.0.join("x").exists(), "{out}");
    let _ = std::fs::remove_file(&home_file);
    pty.shutdown().await;
}

#[tokio::test]
async fn sandbox_writable_paths_are_writable_in_a_workspace_sandbox() {
    let extra = TempDir::new("sbx-extra");
    let mut config = Config::default();
    config.sandbox_writable = vec![
        extra.0.clone(),
        "/nonexistent/pty-session".into(),
        // Under the sandbox's own /dev, bound back from the service's.
        "/dev/shm".into(),
    ];
    let pty = PtyService::new(config);
    let dir = TempDir::new("sbx-writable");
    let shm = format!("/dev/shm/pty-session-test-{}", std::process::id());
    let script = format!(
        "touch {}/x && echo wrote-extra; touch {shm} && echo wrote-shm; exit 0",
        quote_word(extra.0.to_str().unwrap())
    );
    let out = run_in(&pty, Sandbox::Workspace, &dir, &script).await;
    assert!(out.contains("wrote-extra"), "{out}");
    assert!(out.contains("wrote-shm"), "{out}");
    assert!(std::path::Path::new(&shm).exists(), "{out}");
    let _ = std::fs::remove_file(&shm);
    // In read-only mode they are not.
    let out = run_in(
        &pty,
        Sandbox::ReadOnly,
        &dir,
        &script.replace("x &&", "y 2>&1 &&"),
    )
    .await;
    assert!(out.contains("cannot touch"), "{out}");
    assert!(!extra.0.join("y").exists(), "{out}");
    pty.shutdown().await;
}

#[tokio::test]
async fn read_only_writes_nothing_but_the_terminal() {
    let (pty, _) = service();
    let dir = TempDir::new("sbx-ro");
    let script = r#"touch ok-cwd 2>&1
touch "$TMPDIR/ok-tmp" 2>&1
echo hi > /dev/null && echo wrote-null
echo to-the-tty > /dev/tty
echo to-stderr >&2
exit 0"#;
    let out = run_in(&pty, Sandbox::ReadOnly, &dir, script).await;
    assert_eq!(out.matches("cannot touch").count(), 2, "{out}");
    for line in ["wrote-null", "to-the-tty", "to-stderr"] {
        assert!(out.contains(line), "{line}: {out}");
    }
    assert!(!path(&dir, "work/ok-cwd").exists() && !path(&dir, "tmp/ok-tmp").exists());
    pty.shutdown().await;
}

/// A local HTTP server on a free port that answers every connection with `hello`; the
/// number of connections it took is in the returned counter.
fn http_server() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 1024];
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        }
    });
    (port, count)
}

/// What the network probes print: curl's body or failure, then python's TCP connect, UDP
/// socket and ping.
fn network_probes(port: u16) -> String {
    format!(
        r#"curl -sS --max-time 5 http://127.0.0.1:{port}/ 2>&1; echo " curl=$?"
"$PY" -c 'import socket; s = socket.create_connection(("127.0.0.1", {port}), 5); print("tcp-connected")' 2>&1 | tail -1
"$PY" -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("127.0.0.1", {port})); print("udp-sent")' 2>&1 | tail -1
ping -c 1 -W 2 127.0.0.1 >/dev/null 2>&1; echo "ping=$?"
exit 0"#
    )
}

#[tokio::test]
async fn workspace_reaches_no_network() {
    require("ping");
    let (pty, _) = service();
    let dir = TempDir::new("sbx-net");
    let (port, count) = http_server();
    let out = run_in(&pty, Sandbox::Workspace, &dir, &network_probes(port)).await;
    assert!(!out.contains("hello") && !out.contains(" curl=0"), "{out}");
    assert!(
        !out.contains("tcp-connected") && !out.contains("udp-sent"),
        "{out}"
    );
    assert_eq!(out.matches("PermissionError").count(), 2, "{out}");
    assert!(out.contains("ping=") && !out.contains("ping=0"), "{out}");
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 0, "{out}");

    // The same probes outside a sandbox reach the server: the test can fail.
    let out = run_in(&pty, Sandbox::None, &dir, &network_probes(port)).await;
    assert!(
        out.contains("hello") && out.contains("tcp-connected"),
        "{out}"
    );
    assert!(out.contains("udp-sent") && out.contains("ping=0"), "{out}");
    pty.shutdown().await;
}

#[tokio::test]
async fn sandbox_network_lets_a_sandboxed_session_reach_the_network() {
    let mut config = Config::default();
    config.sandbox_network = true;
    let pty = PtyService::new(config);
    let dir = TempDir::new("sbx-net-on");
    let (port, _) = http_server();
    let out = run_in(&pty, Sandbox::Workspace, &dir, &network_probes(port)).await;
    assert!(out.contains("hello") && out.contains(" curl=0"), "{out}");
    assert!(
        out.contains("tcp-connected") && out.contains("udp-sent"),
        "{out}"
    );
    // Files stay confined.
    let out = run_in(&pty, Sandbox::Workspace, &dir, "touch /etc/x 2>&1; exit 0").await;
    assert!(out.contains("cannot touch"), "{out}");
    pty.shutdown().await;
}

#[tokio::test]
async fn a_double_forked_setsid_child_keeps_every_rule() {
    let (pty, _) = service();
    let dir = TempDir::new("sbx-escape");
    // The grandchild, in a session of its own and reparented away from the command,
    // writes what it could do into the working directory (which it may write).
    let script = r#"setsid sh -c '( touch /etc/x 2>report; "$PY" -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)" 2>>report; unshare -r true 2>>report; echo done >>report ) &'
for i in $(seq 100); do grep -q done report 2>/dev/null && break; sleep 0.1; done
cat report; exit 0"#;
    let out = run_in(&pty, Sandbox::Workspace, &dir, script).await;
    assert!(out.contains("done"), "{out}");
    assert!(out.contains("cannot touch"), "files: {out}");
    assert!(out.contains("PermissionError"), "network: {out}");
    assert!(out.contains("Operation not permitted"), "unshare: {out}");
    pty.shutdown().await;
}

/// A process of the test's own, outside any sandbox.
struct Outsider(std::process::Child);

impl Outsider {
    fn start() -> Outsider {
        Outsider(
            std::process::Command::new("sleep")
                .arg("1000")
                .spawn()
                .unwrap(),
        )
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Whether anything traces it.
    fn tracer(&self) -> String {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix("TracerPid:"))
            .unwrap()
            .trim()
            .to_owned()
    }
}

impl Drop for Outsider {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn a_sandbox_cannot_signal_or_trace_outside_processes() {
    require("strace");
    require("gdb");
    let (pty, _) = service();
    let dir = TempDir::new("sbx-signal");
    let outsider = Outsider::start();
    let pid = outsider.pid();
    let script = format!(
        r#"kill -TERM {pid} 2>&1; echo "kill=$?"
strace -p {pid} -e trace=none 2>&1 | head -3; echo
gdb -batch -nx -p {pid} 2>&1 | grep -i -m1 ptrace
unshare -r true 2>&1; echo "unshare=$?"
exit 0"#
    );
    let out = run_in(&pty, Sandbox::Workspace, &dir, &script).await;
    assert!(out.contains("kill=1"), "{out}");
    assert!(alive(pid), "the outside process lives: {out}");
    let refused = |what: &str| {
        out.lines()
            .any(|line| line.contains(what) && line.contains("Operation not permitted"))
    };
    // The outside process is not even there to name, in the sandbox's PID namespace.
    let kill = format!("kill: ({pid}) - No such process");
    assert!(out.contains(&kill), "kill: {out}");
    assert!(refused("attach: ptrace("), "strace: {out}");
    assert!(refused("ptrace: "), "gdb: {out}");
    assert!(refused("unshare failed"), "unshare: {out}");
    assert!(out.contains("unshare=1"), "{out}");
    assert_eq!(outsider.tracer(), "0");
    pty.shutdown().await;
}

/// The seccomp rules against acting on other processes leave a process its own: `nice`,
/// `ionice`, `taskset` and `prlimit` on the command they start (pid 0) work.
#[tokio::test]
async fn inside_a_sandbox_a_process_may_change_its_own_priority_and_limits() {
    let (pty, _) = service();
    let dir = TempDir::new("sbx-self");
    let script = r#"nice -n 5 true && echo nice-ok
ionice -c 3 true && echo ionice-ok
taskset 1 true && echo taskset-ok
prlimit --nofile=100:100 true && echo prlimit-ok
ulimit -n 50 && echo ulimit-ok
exit 0"#;
    for sandbox in [Sandbox::Workspace, Sandbox::ReadOnly] {
        let out = run_in(&pty, sandbox, &dir, script).await;
        for line in [
            "nice-ok",
            "ionice-ok",
            "taskset-ok",
            "prlimit-ok",
            "ulimit-ok",
        ] {
            assert!(out.contains(line), "{sandbox}: {line}: {out}");
        }
    }
    pty.shutdown().await;
}

#[tokio::test]
async fn inside_a_sandbox_signals_between_its_own_processes_work() {
    let (pty, _) = service();
    let dir = TempDir::new("sbx-own");
    let script = "sleep 100 & kill $!; wait $!; echo \"status=$?\"; exit 0";
    let out = run_in(&pty, Sandbox::ReadOnly, &dir, script).await;
    assert!(out.contains("status=143"), "{out}");
    pty.shutdown().await;
}

#[tokio::test]
async fn repls_settle_in_a_sandbox_as_outside() {
    let (pty, owner) = service();
    let dir = TempDir::new("sbx-settle");
    for (command, input, expect) in [
        (format!("{} -q", python3()), "print(6*7)", "42"),
        (
            "bash --norc --noprofile -i".to_owned(),
            "echo $((6*7))",
            "42",
        ),
    ] {
        let opened = open(
            &pty,
            &owner,
            at_home(OpenRequest::new(&command), &dir)
                .cwd(&dir.0)
                .env("PS1", "$ ")
                .sandbox(Sandbox::Workspace)
                .timeout(Duration::from_millis(20_000)),
        )
        .await;
        assert_eq!(
            opened.settled_by,
            SettleReason::Input,
            "{command}: {opened:?}"
        );
        let sent = pty
            .send(
                &owner,
                &opened.session_id,
                SendRequest::new(input).timeout(Duration::from_millis(20_000)),
            )
            .await
            .unwrap();
        assert_eq!(sent.settled_by, SettleReason::Input, "{command}: {sent:?}");
        assert!(sent.delta.text.contains(expect), "{command}: {sent:?}");
        pty.close(&owner, &opened.session_id).await.unwrap();
    }
    pty.shutdown().await;
}

#[tokio::test]
async fn vim_and_git_add_p_settle_in_a_sandbox() {
    require("vim");
    require("git");
    let (pty, owner) = service();
    let dir = TempDir::new("sbx-vim");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(&dir.0)
            .env("HOME", &dir.0)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(["-c", "user.name=A", "-c", "user.email=a@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(dir.0.join("f.txt"), "one\ntwo\n").unwrap();
    git(&["add", "f.txt"]);
    git(&["commit", "-q", "-m", "first"]);
    std::fs::write(dir.0.join("f.txt"), "one\ntwo changed\n").unwrap();

    let request = |command: &str| {
        OpenRequest::new(command)
            .cwd(&dir.0)
            .env("HOME", dir.0.to_str().unwrap())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .sandbox(Sandbox::Workspace)
            .timeout(Duration::from_millis(20_000))
    };
    let opened = open(&pty, &owner, request("git add -p")).await;
    assert_eq!(opened.settled_by, SettleReason::Input, "{opened:?}");
    assert!(opened.pending.contains("Stage this hunk"), "{opened:?}");
    let sent = pty
        .send(
            &owner,
            &opened.session_id,
            SendRequest::new("y").timeout(Duration::from_millis(20_000)),
        )
        .await
        .unwrap();
    assert_eq!(sent.settled_by, SettleReason::Exit, "{sent:?}");
    pty.close(&owner, &opened.session_id).await.unwrap();

    let opened = open(&pty, &owner, request("vim -u NONE -N f.txt")).await;
    assert_eq!(opened.settled_by, SettleReason::Input, "{opened:?}");
    let screen = opened.screen.as_ref().map(|s| s.text()).unwrap_or_default();
    assert!(screen.contains("two changed"), "{screen}");
    let sent = pty
        .send(
            &owner,
            &opened.session_id,
            SendRequest::keys(["ione more ", "Escape", ":wq", "Enter"])
                .timeout(Duration::from_millis(20_000)),
        )
        .await
        .unwrap();
    assert_eq!(sent.settled_by, SettleReason::Exit, "{sent:?}");
    let written = std::fs::read_to_string(dir.0.join("f.txt")).unwrap();
    assert!(
        written.starts_with("one more one"),
        "vim wrote its file: {written}"
    );
    pty.close(&owner, &opened.session_id).await.unwrap();
    pty.shutdown().await;
}

/// Opens `command` in a workspace sandbox in `dir`, unsettled, with `$F` naming a file
/// where it records the pids of what it starts; waits for `count` of them and returns
/// them as this test sees them (they wrote their pids in the sandbox's PID namespace).
async fn open_recording_sandboxed(
    pty: &pty_session::PtyService,
    owner: &pty_session::Owner,
    command: &str,
    dir: &TempDir,
    count: usize,
) -> (pty_session::Opened, Vec<i32>) {
    let file = dir.0.join("pids");
    let request = OpenRequest::new(command)
        .cwd(&dir.0)
        .env("F", file.to_str().unwrap())
        .sandbox(Sandbox::Workspace)
        .settle(pty_session::Settle::None);
    let opened = open(pty, owner, request).await;
    eventually("all pids recorded", Duration::from_secs(10), || {
        read_pids(&file).len() == count
    })
    .await;
    let pids = outside_pids(opened.pid as i32, &read_pids(&file));
    assert_eq!(pids.len(), count, "{pids:?}");
    (opened, pids)
}

#[tokio::test]
async fn close_of_a_sandboxed_tree_leaves_no_survivor() {
    let (pty, owner) = service();
    let dir = TempDir::new("sbx-kill");
    let command = r#"trap '' HUP TERM; echo $$ >> "$F"
setsid sh -c 'echo $$ >> "$F"; exec sleep 1002' &
( sh -c 'echo $$ >> "$F"; exec sleep 1004' & )
setsid sh -c '( sh -c "trap \"\" HUP TERM; echo \$\$ >> \"\$F\"; sleep 1005; :" & )' &
sleep 1000"#;
    let (opened, pids) = open_recording_sandboxed(&pty, &owner, command, &dir, 4).await;
    assert!(pids.iter().all(|&pid| alive(pid)));
    assert!(pty.close(&owner, &opened.session_id).await.unwrap());
    let survivors: Vec<_> = pids.iter().copied().filter(|&pid| alive(pid)).collect();
    assert!(survivors.is_empty(), "survivors: {survivors:?}");
    pty.shutdown().await;
}

#[tokio::test]
async fn list_says_which_sandbox_a_session_runs_in() {
    let (pty, owner) = service();
    for sandbox in [Sandbox::ReadOnly, Sandbox::None, Sandbox::Workspace] {
        open(
            &pty,
            &owner,
            OpenRequest::new("cat")
                .sandbox(sandbox)
                .settle(pty_session::Settle::None),
        )
        .await;
    }
    let listed: Vec<Sandbox> = pty.list(&owner).iter().map(|s| s.sandbox).collect();
    assert_eq!(
        listed,
        [Sandbox::ReadOnly, Sandbox::None, Sandbox::Workspace]
    );
    pty.shutdown().await;
}

#[tokio::test]
async fn config_sandbox_is_the_default_and_a_request_overrides_it() {
    let mut config = Config::default();
    config.sandbox = Sandbox::ReadOnly;
    let pty = PtyService::new(config);
    let owner = Owner::new("test");
    let dir = TempDir::new("sbx-default");
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("touch x 2>&1; exit 0").cwd(&dir.0),
    )
    .await;
    assert_eq!(opened.sandbox, Sandbox::ReadOnly);
    assert!(
        opened.initial_output.text.contains("cannot touch"),
        "{opened:?}"
    );
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("touch x && echo wrote")
            .cwd(&dir.0)
            .sandbox(Sandbox::None),
    )
    .await;
    assert!(opened.initial_output.text.contains("wrote"), "{opened:?}");
    pty.shutdown().await;
}

/// The check against a Landlock ABI this kernel does not offer: lowered with the seam
/// variable, in a process of its own since it changes the environment.
#[test]
fn a_kernel_without_what_the_sandbox_needs_gives_sandbox_unavailable() {
    if !in_own_process("sandbox::a_kernel_without_what_the_sandbox_needs_gives_sandbox_unavailable")
    {
        return;
    }
    // SAFETY: this process runs this test alone and has started no thread yet.
    unsafe { std::env::set_var(pty_session::ABI_CEILING_VAR, "3") };
    // One thread: nothing reads the environment while the test changes it.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (pty, owner) = service();
        let cancel = pty_session::CancellationToken::new();
        let request = || OpenRequest::new("echo ran").sandbox(Sandbox::Workspace);
        let err = pty.open(&owner, request(), &cancel).await.unwrap_err();
        assert_eq!(err.code(), "SANDBOX_UNAVAILABLE");
        let message = err.to_string();
        assert!(
            message.contains("\"workspace\"")
                && message.contains("Landlock ABI 4 for TCP rules")
                && message.contains("offers ABI 3"),
            "{message}"
        );
        assert!(pty.list(&owner).is_empty(), "nothing was started");
        // Without a sandbox, or with the network allowed (files need only ABI 3), it runs.
        open(&pty, &owner, OpenRequest::new("echo ran")).await;
        pty.shutdown().await;

        let mut config = Config::default();
        config.sandbox_network = true;
        let pty = PtyService::new(config);
        let opened = open(&pty, &owner, request()).await;
        assert_eq!(opened.initial_output.text, "ran\n");
        pty.shutdown().await;

        // SAFETY: as above: the runtime runs on this thread alone.
        unsafe { std::env::set_var(pty_session::ABI_CEILING_VAR, "0") };
        let pty = PtyService::new(Config::default());
        let err = pty
            .open(
                &owner,
                OpenRequest::new("true").sandbox(Sandbox::ReadOnly),
                &cancel,
            )
            .await
            .unwrap_err();
        assert_eq!(err.code(), "SANDBOX_UNAVAILABLE");
        assert!(err.to_string().contains("Landlock (this kernel"), "{err}");
        pty.shutdown().await;
    });
}

#[tokio::test]
async fn a_sandbox_sees_its_own_terminal_processes_devices_and_temp_dir() {
    let (pty, owner) = service();
    let dir = TempDir::new("sbx-sees");
    for sandbox in [Sandbox::Workspace, Sandbox::ReadOnly] {
        let script = r#"echo "tty=$(tty)"; echo "pid=$$"; echo "init=$(cat /proc/1/comm)"
echo "procs=$(ls -d /proc/[0-9]* | wc -l)"; echo "dev=$(ls /dev | tr '\n' ' ')"
echo "pts=$(ls /dev/pts | wc -l)"; echo "tmp=$TMPDIR:$(ls -A /tmp | wc -l)"
grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status; grep NoNewPrivs /proc/self/status
exit 0"#;
        let opened = open(
            &pty,
            &owner,
            OpenRequest::new(format!("bash --norc --noprofile -c {}", quote_word(script)))
                .cwd(&dir.0)
                .env("TMPDIR", "/")
                .sandbox(sandbox)
                .timeout(Duration::from_secs(20)),
        )
        .await;
        let out = opened.initial_output.text;
        // Its terminal has its name (`tty` finds it in the sandbox's /dev).
        assert!(out.contains("tty=/dev/pts/"), "{sandbox}: {out}");
        // The command (the shell backend's `sh`) is pid 2, bash its child, under our init.
        assert!(out.contains("pid=3\n"), "{out}");
        assert!(out.contains("init=pty-init\n"), "{out}");
        let procs: usize = out
            .lines()
            .find_map(|line| line.strip_prefix("procs="))
            .and_then(|n| n.trim().parse().ok())
            .unwrap();
        assert!(procs <= 6, "only the session's processes: {out}");
        assert!(
            out.contains("dev=fd full null pts random shm stderr stdin stdout tty urandom zero \n"),
            "{out}"
        );
        assert!(out.contains("pts=1\n"), "only its own terminal: {out}");
        // Its own /tmp, with nothing but the way to its working directory (under /tmp
        // here), and `TMPDIR` pointing there whatever the call said.
        assert!(out.contains("tmp=/tmp:1\n"), "its own /tmp: {out}");
        for cap in ["CapEff", "CapPrm", "CapBnd", "CapAmb"] {
            assert!(
                out.lines()
                    .any(|line| line.starts_with(cap) && line.ends_with("0000000000000000")),
                "{cap}: {out}"
            );
        }
        assert!(out.contains("NoNewPrivs:\t1"), "{out}");
    }
    pty.shutdown().await;
}

/// The command is not pid 1 of its namespace (which ignores signals it has no handler
/// for): Ctrl-C stops `cat`, and settling sees it wait for input.
#[tokio::test]
async fn ctrl_c_stops_a_sandboxed_command_that_waits_for_input() {
    let (pty, owner) = service();
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("cat")
            .sandbox(Sandbox::Workspace)
            .timeout(Duration::from_secs(20)),
    )
    .await;
    assert_eq!(opened.settled_by, SettleReason::Input, "{opened:?}");
    let sent = pty
        .send(
            &owner,
            &opened.session_id,
            SendRequest::new("\u{3}").timeout(Duration::from_secs(20)),
        )
        .await
        .unwrap();
    assert_eq!(sent.settled_by, SettleReason::Exit, "{sent:?}");
    assert_eq!(
        sent.status,
        pty_session::Status::Exited(pty_session::ExitStatus::Signal(libc::SIGINT)),
        "{sent:?}"
    );
    pty.shutdown().await;
}

/// The init dies with the shim (`PR_SET_PDEATHSIG`), and the kernel kills everything in a
/// PID namespace whose init died: a sandboxed tree, daemons included, cannot outlive a
/// shim killed outright.
#[tokio::test]
async fn a_sandboxed_tree_dies_with_its_shim() {
    let (pty, owner) = service();
    let dir = TempDir::new("sbx-shim-dies");
    let command = r#"echo $$ >> "$F"
setsid sh -c 'trap "" HUP TERM; echo $$ >> "$F"; exec sleep 1001' &
( sh -c 'echo $$ >> "$F"; exec sleep 1002' & )
sleep 1000"#;
    let (opened, mut pids) = open_recording_sandboxed(&pty, &owner, command, &dir, 3).await;
    let init = outside_pids(opened.pid as i32, &[1]);
    assert_eq!(init.len(), 1, "the init: {init:?}");
    pids.extend(&init);
    let shim = pty_session_testkit::parent(opened.pid as i32).expect("the command's shim");
    assert_eq!(
        pty_session_testkit::parent(init[0]),
        Some(shim),
        "both the shim's"
    );
    // SAFETY: kill(2) on the shim, a process this test's service started.
    unsafe { libc::kill(shim, libc::SIGKILL) };
    eventually(
        "the sandboxed tree to die with its shim",
        Duration::from_secs(2),
        || pids.iter().all(|&pid| !alive(pid)),
    )
    .await;
    pty.shutdown().await;
}

/// A hidden directory shows empty and a hidden file cannot be opened, in both modes, with
/// the network on (when a token in them would be worth reading), inside the workspace too;
/// a session cannot be opened inside one. Outside the sandbox, all stays as it was.
#[tokio::test]
async fn hidden_paths_are_not_seen_by_sandboxed_sessions() {
    let dir = TempDir::under(env!("CARGO_TARGET_TMPDIR"), "sbx-hidden");
    let outside = TempDir::under(env!("CARGO_TARGET_TMPDIR"), "sbx-hidden-outside");
    let (work, tmp) = (dir.0.join("work"), dir.0.join("tmp"));
    std::fs::create_dir_all(work.join("state")).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(work.join("state/token-7717"), "inside-dir-secret\n").unwrap();
    std::fs::write(work.join("tokens"), "inside-file-secret\n").unwrap();
    std::fs::write(outside.0.join("token"), "outside-dir-secret\n").unwrap();
    let mut config = Config::default();
    config.sandbox_network = true;
    config.sandbox_hidden = vec![
        work.join("state"),
        work.join("tokens"),
        outside.0.clone(),
        "/nonexistent/pty-session-hidden".into(),
    ];
    let pty = PtyService::new(config);
    let script = format!(
        r#"cat state/token-7717 tokens {outside}/token 2>&1
echo "listing:[$(ls -A state {outside} 2>&1 | tr '\n' ' ')]"
echo forged > state/token-7717 2>&1 || echo refused-dir
echo forged > tokens 2>&1 || echo refused-file
cat ./state/../state/token-7717 2>&1 | grep -c secret
exit 0"#,
        outside = quote_word(outside.0.to_str().unwrap()),
    );
    for sandbox in [Sandbox::Workspace, Sandbox::ReadOnly] {
        let out = run_in(&pty, sandbox, &dir, &script).await;
        assert!(
            !out.contains("secret\n") && !out.contains("secret "),
            "{sandbox}: {out}"
        );
        assert!(!out.contains("-secret"), "{sandbox}: {out}");
        assert!(
            out.contains("refused-dir") && out.contains("refused-file"),
            "{sandbox}: {out}"
        );
        assert!(out.contains("listing:["), "{sandbox}: {out}");
        assert!(!out.contains("token-7717 "), "{sandbox}: {out}");
    }
    assert_eq!(
        std::fs::read_to_string(work.join("state/token-7717")).unwrap(),
        "inside-dir-secret\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("tokens")).unwrap(),
        "inside-file-secret\n"
    );
    // Inside a hidden directory, the session would keep the real one as its cwd.
    let request = OpenRequest::new("cat")
        .cwd(work.join("state"))
        .sandbox(Sandbox::ReadOnly);
    let refused = (pty
        .open(&Owner::new("test"), request, &CancellationToken::new())
        .await)
        .unwrap_err();
    assert_eq!(refused.code(), "INVALID_ARGUMENT", "{refused}");
    assert!(refused.to_string().contains("do not see"), "{refused}");
    // Without a sandbox, nothing is hidden.
    let request = OpenRequest::new("cat tokens").cwd(&work);
    let opened = open(&pty, &Owner::new("test"), request).await;
    assert!(
        opened.initial_output.text.contains("inside-file-secret"),
        "{opened:?}"
    );
    pty.shutdown().await;
}
