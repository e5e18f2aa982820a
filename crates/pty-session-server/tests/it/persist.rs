//! `pty-session mcp --persist`: sessions kept by a per-user background server across
//! the client's restarts. Every test has a runtime directory of its own (so it never
//! meets a real user's server) and stops the servers it started.

use std::os::unix::fs::{FileTypeExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::support::{
    BIN, Client, StdioServer, alive, assert_error, call, error_message, eventually, ok, scratch,
    signal, stdio_server_from,
};

/// A test's runtime directory; dropping it stops its background server.
pub(crate) struct Runtime {
    root: PathBuf,
}

impl Runtime {
    pub(crate) fn new(name: &str) -> Runtime {
        Runtime {
            root: scratch(&format!("persist-{name}")),
        }
    }

    /// A runtime directory a sandboxed session can see: not under `/tmp`, `/run` or
    /// `/dev`, which are each sandbox's own: under the build's scratch directory, or the
    /// home's cache where the build itself is under one of them (a checkout in `/tmp`).
    pub(crate) fn visible(name: &str) -> Runtime {
        let mut base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        if ["/tmp", "/run", "/dev"]
            .iter()
            .any(|hidden| base.starts_with(hidden))
        {
            base = PathBuf::from(std::env::var("HOME").expect("HOME is set")).join(".cache");
        }
        let root = base.join(format!(
            "pty-session-it-{}-persist-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        Runtime { root }
    }

    pub(crate) fn dir(&self) -> PathBuf {
        self.root.join("pty-session")
    }

    /// A project directory (the default owner).
    pub(crate) fn project(&self, name: &str) -> PathBuf {
        let dir = self.root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// `pty-session ARGS` in this runtime directory.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(BIN);
        command
            .args(args)
            .env("XDG_RUNTIME_DIR", &self.root)
            .env_remove("PTY_SESSION_TOKEN");
        command
    }

    /// `pty-session mcp --persist ARGS` in `cwd`, with an MCP client on it.
    pub(crate) async fn client(&self, cwd: &Path, args: &[&str]) -> StdioServer {
        let mut command = self.command(&["mcp", "--persist"]);
        command.args(args).current_dir(cwd);
        stdio_server_from(command).await
    }

    /// What `pty-session ARGS` prints, and whether it succeeded.
    pub(crate) async fn run(&self, args: &[&str]) -> (bool, String) {
        let output = self.command(args).output().await.unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned()
                + &String::from_utf8_lossy(&output.stderr),
        )
    }

    /// The background servers of this runtime directory that run.
    pub(crate) fn servers(&self) -> Vec<u32> {
        let marker = format!("XDG_RUNTIME_DIR={}", self.root.display());
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                cmdline
                    .split(|&b| b == 0)
                    .any(|arg| arg == b"persist-server")
                    && environ
                        .split(|&b| b == 0)
                        .any(|var| var == marker.as_bytes())
                    && alive(pid)
            })
            .collect()
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir().join("persist.log")).unwrap_or_default()
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        let _ = std::process::Command::new(BIN)
            .arg("stop")
            .env("XDG_RUNTIME_DIR", &self.root)
            .output();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn sessions(result: &rmcp::model::CallToolResult) -> Vec<Value> {
    ok(result)["sessions"].as_array().unwrap().clone()
}

fn kill(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
}

#[tokio::test]
async fn sessions_outlive_the_client_with_their_cursor_and_only_for_their_owner() {
    let runtime = Runtime::new("restart");
    let project = runtime.project("project");
    let mut first = runtime.client(&project, &[]).await;
    let result = call(&first.client, "pty_open", json!({"command": "python3 -q"})).await;
    let opened = ok(&result);
    let id = opened["sessionId"].as_str().unwrap().to_owned();
    let pid = u32::try_from(opened["pid"].as_u64().unwrap()).unwrap();
    assert_eq!(opened["pending"], ">>> ", "{opened}");
    let sent = call(
        &first.client,
        "pty_send",
        json!({"id": id, "data": "x = 41"}),
    )
    .await;
    assert_eq!(ok(&sent)["pending"], ">>> ");
    // Output that comes while no client is there, read by none yet.
    let timer = "import threading; threading.Timer(0.5, lambda: print('later')).start()";
    let sent = call(&first.client, "pty_send", json!({"id": id, "data": timer})).await;
    assert!(!ok(&sent)["delta"].as_str().unwrap().contains("later\n"));
    // The host crashes.
    signal(&first.child, "KILL");
    let _ = first.child.wait().await;
    assert!(alive(pid), "the session outlived its client");

    let second = runtime.client(&project, &[]).await;
    let listed = sessions(&call(&second.client, "pty_list", json!({})).await);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["pid"], pid);
    // The cursor is where it was: the line printed meanwhile comes once, nothing before.
    // (Python prints it after the prompt it showed, if it showed it first; `until` also
    // matches the pending line, so the tails go on until the line is complete.)
    let mut text = String::new();
    let mut lines = 0;
    let deadline = Instant::now() + Duration::from_secs(20);
    while !text.contains("later\n") && Instant::now() < deadline {
        let tail = call(
            &second.client,
            "pty_tail",
            json!({"id": id, "until": "later$", "settle": "quiet", "quietMs": 10_000, "timeoutMs": 2_000}),
        )
        .await;
        text.push_str(ok(&tail)["text"].as_str().unwrap());
        lines += ok(&tail)["lines"].as_u64().unwrap();
    }
    assert!(
        lines == 1 && text.ends_with("later\n"),
        "{lines} lines: {text:?}"
    );
    let sent = call(
        &second.client,
        "pty_send",
        json!({"id": id, "data": "x + 1"}),
    )
    .await;
    let delta = ok(&sent)["delta"].as_str().unwrap();
    assert!(
        delta.ends_with("x + 1\n42\n") && delta.lines().count() == 2,
        "{sent:?}"
    );
    let tail = call(&second.client, "pty_tail", json!({"id": id})).await;
    assert_eq!(ok(&tail)["text"], "", "nothing is read twice");

    // Another owner sees nothing of it, and cannot reach it.
    let other = runtime.client(&project, &["--owner", "someone-else"]).await;
    assert!(sessions(&call(&other.client, "pty_list", json!({})).await).is_empty());
    let foreign = call(&other.client, "pty_tail", json!({"id": id})).await;
    crate::support::assert_error(&foreign, "FOREIGN_SESSION");
    // Nor does a project elsewhere.
    let elsewhere = runtime.project("elsewhere");
    let third = runtime.client(&elsewhere, &[]).await;
    assert!(sessions(&call(&third.client, "pty_list", json!({})).await).is_empty());

    let servers = runtime.servers();
    assert_eq!(servers.len(), 1, "one background server: {servers:?}");
    let (stopped, said) = runtime.run(&["stop"]).await;
    assert!(stopped, "{said}");
    assert!(!alive(pid), "stop closes every session");
    assert!(!alive(servers[0]), "stop leaves no server");
    drop((second, other, third));
}

#[tokio::test]
async fn two_clients_started_at_once_share_one_server() {
    let runtime = Runtime::new("race");
    let project = runtime.project("project");
    let (a, b) = tokio::join!(runtime.client(&project, &[]), runtime.client(&project, &[]));
    let (a_id, _) =
        crate::support::open(&a.client, json!({"command": "sleep 301", "settle": "none"})).await;
    let (b_id, _) =
        crate::support::open(&b.client, json!({"command": "sleep 302", "settle": "none"})).await;
    // The same server and the same owner: each sees both.
    let listed = sessions(&call(&a.client, "pty_list", json!({})).await);
    let ids: Vec<&str> = listed.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [a_id.as_str(), b_id.as_str()]);
    eventually("a single background server", || {
        runtime.servers().len() == 1
    })
    .await;
    let (listed, text) = runtime.run(&["ls", "--persist"]).await;
    assert!(listed, "{text}");
    assert!(
        text.contains(&a_id) && text.contains(&b_id) && text.contains("sleep 302"),
        "{text}"
    );
}

#[tokio::test]
async fn the_socket_is_private_and_another_user_is_refused() {
    let runtime = Runtime::new("modes");
    let project = runtime.project("project");
    let client = runtime.client(&project, &[]).await;
    let (_, pid) = crate::support::open(
        &client.client,
        json!({"command": "sleep 303", "settle": "none"}),
    )
    .await;
    let dir = runtime.dir();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&dir), 0o700);
    let socket = dir.join("persist.sock");
    assert!(std::fs::metadata(&socket).unwrap().file_type().is_socket());
    assert_eq!(mode(&socket), 0o600);

    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .any(|line| line.starts_with("Uid:") && line.split_whitespace().nth(2) == Some("0"))
    });
    if !root {
        eprintln!("NOTE: not root: another user's client needs runuser (CI runs as root)");
        return;
    }
    // Through the modes, another user cannot even reach the socket ...
    let script = format!(
        "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect({:?})\nexcept OSError as e:\n print('refused-by-mode', e.errno); sys.exit(0)\ntry:\n s.sendall(b'{{\"op\":\"ls\"}}\\n')\n print('answer', repr(s.recv(4096)))\nexcept (ConnectionResetError, BrokenPipeError):\n print('answer reset')\n",
        socket.to_str().unwrap()
    );
    let as_nobody = |script: String| async move {
        let output = Command::new("runuser")
            .args(["-u", "nobody", "--", "/usr/bin/python3", "-c", &script])
            .output()
            .await
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr)
    };
    let said = as_nobody(script.clone()).await;
    assert!(said.contains("refused-by-mode 13"), "{said}");
    // ... and where the modes let it, the server refuses it by its credentials.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o711)).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let said = as_nobody(script).await;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(
        said.contains("answer b''") || said.contains("answer reset"),
        "closed without an answer: {said}"
    );
    assert!(
        runtime.log().contains("refused: a client of another user"),
        "{}",
        runtime.log()
    );
    // The own user still is served.
    let listed = sessions(&call(&client.client, "pty_list", json!({})).await);
    assert_eq!(listed[0]["pid"], pid);
}

#[tokio::test]
async fn idle_owners_are_closed_and_an_empty_server_exits() {
    let runtime = Runtime::new("idle");
    let project = runtime.project("project");
    let args = ["--persist-idle-secs", "1", "--persist-exit-secs", "1"];
    let client = runtime.client(&project, &args).await;
    let (_, pid) = crate::support::open(
        &client.client,
        json!({"command": "sleep 304", "settle": "none"}),
    )
    .await;
    let servers = runtime.servers();
    assert_eq!(servers.len(), 1);
    // No call for a second: the owner's sessions are closed, with its client still there.
    eventually("the idle owner's session to be closed", || !alive(pid)).await;
    assert!(
        sessions(&call(&client.client, "pty_list", json!({})).await).is_empty(),
        "the session is gone from the list too"
    );
    assert!(alive(servers[0]), "a client is still connected");
    // The last client leaves: the server exits after a second.
    drop(client);
    eventually("the empty server to exit", || !alive(servers[0])).await;
    assert!(!runtime.dir().join("persist.sock").exists());
}

#[tokio::test]
async fn sigkill_of_the_background_server_leaves_no_orphan_and_its_client_goes_on() {
    let runtime = Runtime::new("sigkill");
    let project = runtime.project("project");
    let client = runtime.client(&project, &[]).await;
    let result = call(
        &client.client,
        "pty_open",
        json!({"command": "setsid sleep 306 & echo bg=$!; exec sleep 305", "until": "^bg="}),
    )
    .await;
    let value = ok(&result);
    let id = value["sessionId"].as_str().unwrap().to_owned();
    let pid = u32::try_from(value["pid"].as_u64().unwrap()).unwrap();
    let bg: u32 = value["initialOutput"]
        .as_str()
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("bg="))
        .unwrap()
        .parse()
        .unwrap();
    let servers = runtime.servers();
    assert_eq!(servers.len(), 1);
    // The server dies while a call waits on it (`sleep` reads nothing: the send waits).
    let (in_flight, ()) = tokio::join!(
        call(
            &client.client,
            "pty_send",
            json!({"id": id, "data": "x", "timeoutMs": 20_000}),
        ),
        async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            kill(servers[0]);
        }
    );
    // The rule's own bound: every process of its sessions gone within 2 s.
    pty_session_testkit::eventually(
        "the sessions' processes to die after the server's SIGKILL",
        Duration::from_secs(2),
        || [pid, bg].iter().all(|&p| !alive(p)),
    )
    .await;
    // The call in flight is told what happened.
    assert_error(&in_flight, "UNKNOWN_SESSION");
    assert!(
        error_message(&in_flight).contains("went away"),
        "{in_flight:?}"
    );
    // The client goes on, with a new server and without the dead one's sessions.
    let listed = sessions(&call(&client.client, "pty_list", json!({})).await);
    assert!(listed.is_empty(), "{listed:?}");
    let now = runtime.servers();
    assert!(now.len() == 1 && now[0] != servers[0], "{now:?}");
    let (id2, _) = crate::support::open(&client.client, json!({"command": "cat"})).await;
    assert_ne!(id2, id);
    let gone = call(&client.client, "pty_tail", json!({"id": id})).await;
    assert_error(&gone, "UNKNOWN_SESSION");
    // Said once, with the reason, to the first call that names a lost session.
    assert!(error_message(&gone).contains("went away"), "{gone:?}");
    let again = call(&client.client, "pty_tail", json!({"id": id})).await;
    assert!(!error_message(&again).contains("went away"), "{again:?}");
}

/// Every process whose parent chain leads to `root`, `root` among them.
fn tree_of(root: u32) -> Vec<u32> {
    let pids: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    pids.into_iter()
        .filter(|&pid| {
            let mut at = pid as i32;
            for _ in 0..64 {
                if at == root as i32 {
                    return true;
                }
                match pty_session_testkit::parent(at) {
                    Some(parent) if parent > 1 => at = parent,
                    _ => return false,
                }
            }
            false
        })
        .collect()
}

#[tokio::test]
async fn a_stranger_holding_the_lock_is_named_at_once() {
    let runtime = Runtime::new("lock-holder");
    let project = runtime.project("project");
    let dir = runtime.dir();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let lock = dir.join("persist.lock");
    // A process of this user that takes the lock and keeps it (no child of its own).
    let mut holder = Command::new("python3")
        .args([
            "-c",
            "import fcntl, sys, time\nf = open(sys.argv[1], 'w')\n\
             fcntl.flock(f, fcntl.LOCK_EX)\ntime.sleep(60)",
        ])
        .arg(&lock)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let held = || {
        std::process::Command::new("flock")
            .args(["-n", "-x"])
            .arg(&lock)
            .arg("true")
            .status()
            .is_ok_and(|status| !status.success())
    };
    eventually("the holder to take the lock", held).await;
    let start = Instant::now();
    let output = runtime
        .command(&["mcp", "--persist"])
        .current_dir(&project)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let took = start.elapsed();
    let said = String::from_utf8_lossy(&output.stderr);
    let pid = holder.id().unwrap();
    holder.kill().await.unwrap();
    let _ = holder.wait().await;
    assert!(!output.status.success(), "{said}");
    assert!(
        said.contains(&format!("process {pid} ("))
            && said.contains("python3")
            && said.contains("which only the background server takes"),
        "{said}"
    );
    assert!(
        took < Duration::from_secs(10),
        "told at once, not after the wait: {took:?}"
    );
}

#[tokio::test]
async fn a_host_killed_with_all_its_descendants_leaves_the_sessions_running() {
    let runtime = Runtime::new("host-tree");
    let project = runtime.project("project");
    // The host: a process that runs `mcp --persist` as its child, as hosts do.
    let host = {
        let mut wrapper = Command::new("sh");
        let args: Vec<String> = std::iter::once(BIN.to_owned())
            .chain(["mcp", "--persist"].map(String::from))
            .collect();
        wrapper
            .args(["-c", "\"$@\"; exit", "host"])
            .args(&args)
            .env("XDG_RUNTIME_DIR", runtime.dir().parent().unwrap())
            .env_remove("PTY_SESSION_TOKEN")
            .current_dir(&project);
        stdio_server_from(wrapper).await
    };
    let (id, pid) = crate::support::open(&host.client, json!({"command": "python3 -q"})).await;
    let servers = runtime.servers();
    assert_eq!(servers.len(), 1);
    let root = host.child.id().unwrap();
    let tree = tree_of(root);
    assert!(
        !tree.contains(&servers[0]),
        "the background server is no descendant of the host: {tree:?}"
    );
    // The host dies, and every process below it, at once.
    for pid in &tree {
        kill(*pid);
    }
    pty_session_testkit::eventually(
        "the host's tree to be gone",
        Duration::from_secs(10),
        || tree.iter().all(|&p| !alive(p)),
    )
    .await;
    assert!(alive(servers[0]), "the background server outlived the host");
    assert!(alive(pid), "the session outlived the host");
    let again = runtime.client(&project, &[]).await;
    let listed = sessions(&call(&again.client, "pty_list", json!({})).await);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["id"], id.as_str());
}

/// What the probe opened by `opened` printed: its one line, waited for until complete.
async fn verdict(client: &Client, opened: &CallToolResult) -> String {
    let id = ok(opened)["sessionId"].as_str().unwrap().to_owned();
    let tail = call(
        client,
        "pty_tail",
        json!({"id": id, "until": "^(SERVED|REFUSED) .* end$", "timeoutMs": 30_000}),
    )
    .await;
    let tail = ok(&tail);
    // The line may still be the pending one when it matched.
    format!(
        "{}{}",
        tail["text"].as_str().unwrap(),
        tail["pending"].as_str().unwrap()
    )
}

/// A script that connects to `socket` as `mcp --persist` would and asks for a session
/// (`sleep 305`); prints, in one write, `SERVED` with how much came back, or `REFUSED 0`,
/// then why and `end`.
fn escape_probe(socket: &Path) -> String {
    let lines = [
        json!({"op": "mcp", "owner": "escape", "cwd": null}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "pty_open", "arguments": {"command": "sleep 305", "settle": "none"}}}),
    ];
    let payload: String = lines.iter().map(|line| format!("{line}\n")).collect();
    format!(
        "import socket\ns=socket.socket(socket.AF_UNIX)\ns.settimeout(20)\ngot=b''\nwhy=''\ntry:\n s.connect({socket:?})\n s.sendall({payload:?}.encode())\n while b'\"id\":2' not in got:\n  chunk=s.recv(65536)\n  if not chunk: break\n  got+=chunk\nexcept OSError as e:\n why=str(e)\nimport os\nos.write(1, ('%s %d %s end\\n' % ('SERVED' if got else 'REFUSED', len(got), why)).encode())\n",
        socket = socket.to_str().unwrap(),
    )
}

/// The server's own check, behind the sandbox's: with the network off a sandboxed process
/// can connect to no socket at all (seccomp), `/tmp` and `/run` are its own, and the
/// socket's directory is hidden from it, so the probe runs with `--sandbox-network`, in a
/// runtime directory it could see but for the hiding, through a hard link to the socket
/// made outside (which the hiding does not cover), to reach the server and be refused
/// there.
#[tokio::test]
async fn a_sandboxed_session_cannot_reach_the_background_server() {
    let runtime = Runtime::visible("escape");
    let project = runtime.project("project");
    let socket = runtime.dir().join("persist.sock");
    let link = runtime.project("links").join("persist.sock");
    std::fs::write(project.join("probe.py"), escape_probe(&link)).unwrap();
    std::fs::write(project.join("direct.py"), escape_probe(&socket)).unwrap();
    let client = runtime.client(&project, &["--sandbox-network"]).await;
    std::fs::hard_link(&socket, &link).unwrap();
    // By its own path, the socket is not there at all.
    let result = call(
        &client.client,
        "pty_open",
        json!({"command": "python3 direct.py", "sandbox": "workspace", "settle": "none"}),
    )
    .await;
    let said = verdict(&client.client, &result).await;
    assert!(said.contains("REFUSED 0 [Errno 2]"), "{said}");
    let probe = |sandbox: &'static str| {
        let client = &client.client;
        async move {
            let result = call(
                client,
                "pty_open",
                json!({"command": "python3 probe.py", "sandbox": sandbox, "settle": "none"}),
            )
            .await;
            verdict(client, &result).await
        }
    };
    let escaped = || async {
        let (listed, text) = runtime.run(&["ls", "--persist"]).await;
        assert!(listed, "{text}");
        text.contains("sleep 305")
    };

    for sandbox in ["workspace", "read-only"] {
        let said = probe(sandbox).await;
        assert!(said.contains("REFUSED 0"), "{sandbox}: {said}");
        assert!(!escaped().await, "{sandbox}: no session was opened");
    }
    // A daemon of a sandboxed session, in a session of its own, is no more reachable.
    let daemon = project.join("daemon.out");
    call(
        &client.client,
        "pty_open",
        json!({"command": "setsid -f python3 probe.py > daemon.out 2>&1", "sandbox": "workspace"}),
    )
    .await;
    eventually("the daemon's probe to finish", || {
        std::fs::read_to_string(&daemon).is_ok_and(|said| said.contains('\n'))
    })
    .await;
    let said = std::fs::read_to_string(&daemon).unwrap();
    assert!(said.contains("REFUSED 0"), "daemon: {said}");
    // Nor is a sandboxed session of another server (a plain stdio one).
    let mut stdio = runtime.command(&["mcp", "--sandbox-network"]);
    stdio.current_dir(&project);
    let other = stdio_server_from(stdio).await;
    let result = call(
        &other.client,
        "pty_open",
        json!({"command": "python3 probe.py", "sandbox": "workspace", "settle": "none"}),
    )
    .await;
    let said = verdict(&other.client, &result).await;
    assert!(
        said.contains("REFUSED 0"),
        "another server's session: {said}"
    );
    drop(other);
    assert!(!escaped().await, "no session was opened");
    let log = runtime.log();
    assert!(log.contains("cause=\"sandboxed-peer\""), "{log}");

    // The same script in an unsandboxed session is served: the check tells them apart.
    let said = probe("none").await;
    assert!(said.contains("SERVED"), "{said}");
    assert!(escaped().await, "the unsandboxed probe opened its session");
    let (stopped, said) = runtime.run(&["stop"]).await;
    assert!(stopped, "{said}");
    assert!(runtime.servers().is_empty());
}

/// Whether a `pty-session serve` (or anything) listens at the default address, which
/// plain `ls` and `attach` also ask.
fn default_serve_listens() -> bool {
    std::net::TcpStream::connect("127.0.0.1:7717").is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ls_and_attach_reach_the_background_servers_sessions() {
    use crate::people::{Terminal, assert_same_modes};
    use rustix::termios::LocalModes;

    let runtime = Runtime::new("attach");
    let serve_too = default_serve_listens();
    // Nothing runs yet: `ls` says so, and fails.
    let (listed, said) = runtime.run(&["ls", "--persist"]).await;
    assert!(!listed && said.contains("no background server"), "{said}");
    if !serve_too {
        let (listed, said) = runtime.run(&["ls"]).await;
        assert!(
            !listed && said.contains("no server runs") && said.contains("127.0.0.1:7717"),
            "{said}"
        );
    }

    let project = runtime.project("project");
    let client = runtime.client(&project, &[]).await;
    let (id, pid) = crate::support::open(&client.client, json!({"command": "python3 -q"})).await;
    // `ls` lists it, marked as the background server's, with its owner.
    let plain: &[&str] = &["ls"];
    for args in [plain, &["ls", "--persist"]] {
        let (listed, text) = runtime.run(args).await;
        if serve_too && args == plain {
            eprintln!("NOTE: something listens on 127.0.0.1:7717; plain `ls` may fail there");
        } else {
            assert!(listed, "{args:?}: {text}");
        }
        assert!(
            text.lines().any(|l| l.starts_with(&id)
                && l.contains(" >>> ")
                && l.contains("persist:")
                && l.contains("/project ")
                && l.ends_with("python3 -q")),
            "{args:?}: {text}"
        );
    }

    // `attach ID` finds it: output, keys, the window, and detach.
    let mut terminal = Terminal::open(100, 30);
    let before = terminal.modes();
    let mut attach = terminal.spawn(runtime.command(&["attach", &id]));
    terminal.wait_for("the prompt", ">>> ").await;
    terminal.wait_for("the detach key", "Ctrl-] detaches").await;
    assert!(
        !terminal
            .modes()
            .local_modes
            .intersects(LocalModes::ICANON | LocalModes::ECHO),
        "raw mode"
    );
    crate::support::eventually_async("the session to take the person's window", || async {
        let screen = call(&client.client, "pty_screen", json!({"id": id})).await;
        ok(&screen)["cols"] == 100
    })
    .await;
    terminal.type_keys(b"6*7\r");
    terminal.wait_for("the answer", "42\r\n").await;
    terminal.type_keys(&[0x1d]);
    assert!(
        crate::support::exit_success(&mut attach).await,
        "attach exits 0 on detach"
    );
    terminal.wait_for("the detach note", "keeps running").await;
    assert_same_modes(&before, &terminal.modes());
    let tail = call(&client.client, "pty_tail", json!({"id": id})).await;
    assert!(
        ok(&tail)["text"].as_str().unwrap().contains("6*7\n42\n"),
        "the agent sees the echoed line and the answer: {tail:?}"
    );

    // A session nobody holds: a clear error, the terminal untouched.
    let mut missing = terminal.spawn(runtime.command(&["attach", "--persist", "nosuchid"]));
    assert!(!crate::support::exit_success(&mut missing).await);
    terminal
        .wait_for(
            "the refusal",
            "NOT_FOUND: the background server has no session nosuchid",
        )
        .await;
    if !serve_too {
        let mut missing = terminal.spawn(runtime.command(&["attach", "nosuchid2"]));
        assert!(!crate::support::exit_success(&mut missing).await);
        terminal
            .wait_for(
                "where it looked",
                "has no session nosuchid2, and no `pty-session serve` listens at 127.0.0.1:7717",
            )
            .await;
    }
    assert_same_modes(&before, &terminal.modes());

    // Attached while the server stops: attach ends, the terminal is back, nothing is left.
    let seen = terminal.text().len();
    let mut attach = terminal.spawn(runtime.command(&["attach", "--persist", &id]));
    eventually("a second attach", || {
        terminal.text()[seen..].contains("Ctrl-] detaches")
    })
    .await;
    let servers = runtime.servers();
    let (stopped, said) = runtime.run(&["stop"]).await;
    assert!(stopped, "{said}");
    assert!(
        crate::support::exit_success(&mut attach).await,
        "attach exits 0 when the server goes"
    );
    terminal
        .wait_for("the note", "the server closed the connection")
        .await;
    assert_same_modes(&before, &terminal.modes());
    assert!(!alive(pid), "stop closed the session");
    assert!(servers.iter().all(|&server| !alive(server)));
    drop(client);
    terminal.close();
}

/// A client that comes while the background server is on its way out (its socket gone,
/// its lock still held, here for a second by a connection that never said what it
/// wants) starts a new server and goes on, rather than waiting for a socket that never
/// comes.
#[tokio::test]
async fn a_client_that_comes_while_the_server_exits_starts_a_new_one() {
    let runtime = Runtime::new("exiting");
    let project = runtime.project("project");
    let first = runtime.client(&project, &[]).await;
    let (_, pid) = crate::support::open(
        &first.client,
        json!({"command": "sleep 308", "settle": "none"}),
    )
    .await;
    let servers = runtime.servers();
    assert_eq!(servers.len(), 1);
    let socket = runtime.dir().join("persist.sock");
    // Silent: the stopping server waits for it (a second) before it exits.
    let silent = tokio::net::UnixStream::connect(&socket).await.unwrap();
    let mut stop = runtime.command(&["stop"]).spawn().unwrap();
    eventually("the socket to go", || !socket.exists()).await;
    assert!(alive(servers[0]), "the old server still holds its lock");
    let started = Instant::now();
    let second = runtime.client(&project, &[]).await;
    let listed = sessions(&call(&second.client, "pty_list", json!({})).await);
    assert!(listed.is_empty(), "a new server: {listed:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the client went on at once, not after its start timeout: {:?}",
        started.elapsed()
    );
    assert!(stop.wait().await.unwrap().success());
    assert!(!alive(pid) && !alive(servers[0]));
    let now = runtime.servers();
    assert!(
        now.len() == 1 && now[0] != servers[0],
        "one new server: {now:?} (the old one was {})",
        servers[0]
    );
    drop((silent, first, second));
}

/// A background server that takes a connection and goes away without serving it (it was
/// exiting as the client came): the client tries again, starts a new server and is
/// served. A real server cannot be made to lose this race on purpose, so a stand-in
/// holds the lock and the socket as a server does, reads the client's first line, and
/// exits without answering.
#[tokio::test]
async fn a_client_whose_connection_a_leaving_server_drops_tries_again() {
    use tokio::io::AsyncBufReadExt as _;
    let runtime = Runtime::new("dropped");
    let project = runtime.project("project");
    let dir = runtime.dir();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let stand_in = "import fcntl, os, socket, sys\n\
        lock = open(sys.argv[1] + '/persist.lock', 'a')\n\
        fcntl.flock(lock, fcntl.LOCK_EX)\n\
        path = sys.argv[1] + '/persist.sock'\n\
        listener = socket.socket(socket.AF_UNIX)\n\
        listener.bind(path)\n\
        os.chmod(path, 0o600)\n\
        listener.listen()\n\
        print('listening', flush=True)\n\
        conn, _ = listener.accept()\n\
        hello = conn.makefile().readline()\n\
        os.unlink(path)\n\
        listener.close()\n\
        print('dropped', hello.strip() != '', flush=True)\n\
        conn.close()\n";
    let mut server = Command::new("python3")
        .args(["-c", stand_in])
        .arg(&dir)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut said = tokio::io::BufReader::new(server.stdout.take().unwrap()).lines();
    assert_eq!(
        said.next_line().await.unwrap().as_deref(),
        Some("listening")
    );

    let client = runtime.client(&project, &[]).await;
    let listed = call(&client.client, "pty_list", json!({})).await;
    assert!(sessions(&listed).is_empty(), "{listed:?}");
    let dropped = said.next_line().await.unwrap();
    assert_eq!(
        dropped.as_deref(),
        Some("dropped True"),
        "it read the hello"
    );
    assert!(server.wait().await.unwrap().success());
    let (_, pid) = crate::support::open(
        &client.client,
        json!({"command": "sleep 309", "settle": "none"}),
    )
    .await;
    let servers = runtime.servers();
    assert_eq!(servers.len(), 1, "a real server took over: {servers:?}");
    let (stopped, said) = runtime.run(&["stop"]).await;
    assert!(stopped, "{said}");
    assert!(!alive(pid) && !alive(servers[0]));
    drop(client);
}

/// Runs `program` with `args` the way a sandbox leaves a process: `no_new_privs` and a
/// seccomp filter (one that allows everything: what counts is that one applies, which the
/// process can never shed). Its output goes to `out`.
fn spawn_confined(program: &str, args: &[&str], cwd: &Path, out: &Path) -> std::process::Child {
    use std::os::unix::process::CommandExt as _;
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(std::process::Stdio::null());
    // SAFETY: between fork and exec the closure makes two prctl calls on locals, which
    // are async-signal-safe, and allocates nothing.
    unsafe {
        command.pre_exec(|| {
            // BPF_RET | BPF_K, SECCOMP_RET_ALLOW: a filter that allows every call.
            let allow = [libc::sock_filter {
                code: 0x06,
                jt: 0,
                jf: 0,
                k: 0x7fff_0000,
            }];
            let program = libc::sock_fprog {
                len: 1,
                filter: allow.as_ptr().cast_mut(),
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &raw const program,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.spawn().unwrap()
}

/// A process more confined than the background server is refused by what it is, wherever
/// it sits in the process tree: here outside every session, in a session of its own and
/// reparented away from its parents (setsid, double fork), where no ancestry tells it
/// from the user's own processes. So is one in namespaces of its own; the same user's
/// plain client is served.
#[tokio::test]
async fn a_confined_peer_is_refused_by_what_it_is_wherever_it_runs() {
    let test = "persist::a_confined_peer_is_refused_by_what_it_is_wherever_it_runs";
    if !pty_session_testkit::in_own_process(test) {
        return;
    }
    // Alone in its process, the test adopts the orphan it makes, so that it reaps it.
    // SAFETY: prctl takes integers; only this process's own orphans come to it.
    let subreaper = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    assert_eq!(subreaper, 0);
    let runtime = Runtime::new("confined");
    let project = runtime.project("project");
    std::fs::write(
        project.join("probe.py"),
        format!(
            "import os\nos.write(1, b'PID %d\\n' % os.getpid())\n{}",
            escape_probe(&runtime.dir().join("persist.sock"))
        ),
    )
    .unwrap();
    let client = runtime.client(&project, &[]).await;
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    let python = String::from_utf8(python.stdout).unwrap().trim().to_owned();
    let verdict_of = async |out: &Path| {
        eventually("the probe to finish", || {
            std::fs::read_to_string(out).is_ok_and(|said| said.contains(" end"))
        })
        .await;
        std::fs::read_to_string(out).unwrap()
    };
    let reap = |said: &str| {
        let pid: i32 = said
            .lines()
            .find_map(|line| line.strip_prefix("PID "))
            .unwrap()
            .parse()
            .unwrap();
        let mut status = 0;
        // SAFETY: waitpid on a child of ours (adopted), with a local status.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    };

    // setsid -f forks, and its parent exits: the probe is an orphan in a session of its
    // own, with no process of pty-session above it.
    let out = project.join("daemon.out");
    let mut setsid = spawn_confined("setsid", &["-f", &python, "probe.py"], &project, &out);
    assert!(setsid.wait().unwrap().success());
    let said = verdict_of(&out).await;
    reap(&said);
    assert!(said.contains("REFUSED 0"), "a confined daemon: {said}");

    // Namespaces of its own (user, and with it the others it may make), nothing else.
    let out = project.join("unshared.out");
    let mut unshared = std::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", &python, "probe.py"])
        .current_dir(&project)
        .stdout(std::fs::File::create(&out).unwrap())
        .spawn()
        .expect("unshare (util-linux) must be installed for this test");
    assert!(
        unshared.wait().unwrap().success(),
        "unshare --user must work here: the sandbox needs user namespaces too"
    );
    let said = verdict_of(&out).await;
    assert!(said.contains("REFUSED 0"), "other namespaces: {said}");
    let log = runtime.log();
    assert!(log.contains("cause=\"sandboxed-peer\""), "{log}");

    // The same probe as a plain process of the user is served.
    let out = project.join("plain.out");
    let mut plain = std::process::Command::new(&python)
        .arg("probe.py")
        .current_dir(&project)
        .stdout(std::fs::File::create(&out).unwrap())
        .spawn()
        .unwrap();
    assert!(plain.wait().unwrap().success());
    let said = verdict_of(&out).await;
    assert!(said.contains("SERVED"), "a plain process: {said}");
    let servers = runtime.servers();
    drop(client);
    let (stopped, said) = runtime.run(&["stop"]).await;
    assert!(stopped, "{said}");
    // The background server detached from its starter and came to this subreaper: reap it.
    for pid in servers {
        let mut status = 0;
        // SAFETY: waitpid on a child of ours (adopted), with a local status.
        unsafe { libc::waitpid(pid as i32, &mut status, 0) };
    }
}

/// A hundred connections whose first line is no request: each is refused, and the log
/// says so in a bounded number of lines (at most one a second), not a line each.
#[tokio::test]
async fn a_hundred_refused_connections_cost_a_few_log_lines() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let runtime = Runtime::new("refusals");
    let project = runtime.project("project");
    let _client = runtime.client(&project, &[]).await;
    let socket = runtime.dir().join("persist.sock");
    let before = runtime.log().lines().count();
    let started = Instant::now();
    for _ in 0..100 {
        let mut stream = tokio::net::UnixStream::connect(&socket).await.unwrap();
        stream.write_all(b"not a request\n").await.unwrap();
        // The server closes it without an answer.
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer))
            .await
            .expect("the refused connection is closed");
        assert!(answer.is_empty(), "{answer:?}");
    }
    let seconds = started.elapsed().as_secs();
    eventually("the refusals' line", || {
        runtime.log().contains("first line")
    })
    .await;
    let log = runtime.log();
    let lines = log.lines().count() - before;
    assert!(
        lines as u64 <= seconds + 2,
        "{lines} lines for 100 refusals in {seconds} s:\n{log}"
    );
}

/// `ls` prints what the agent chose (its owner name, its commands) escaped: a command
/// cannot erase or fake a row, set the window's title or reorder itself, and every
/// session is one row.
#[tokio::test]
async fn ls_prints_what_sessions_chose_escaped() {
    use crate::browser::HOSTILE_COMMANDS;
    let runtime = Runtime::new("ls-escaped");
    let project = runtime.project("project");
    let owner = "team\x1b]0;owned\x07\u{202e}";
    let client = runtime.client(&project, &["--owner", owner]).await;
    let mut ids = Vec::new();
    for command in HOSTILE_COMMANDS {
        let (id, _) = crate::support::open(
            &client.client,
            json!({"command": command, "settle": "none"}),
        )
        .await;
        ids.push(id);
    }
    let output = runtime
        .command(&["ls", "--persist"])
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{output:?}");
    let shown = |text: &str| pty_session_server::shown(text).into_owned();
    for (id, command) in ids.iter().zip(HOSTILE_COMMANDS) {
        let row = text
            .lines()
            .find(|line| line.starts_with(id.as_str()))
            .unwrap_or_else(|| panic!("no row for {id}:\n{text}"));
        assert!(
            row.ends_with(&shown(command)) && row.contains(&shown(owner)),
            "{row:?}"
        );
    }
    assert!(
        text.contains(r"sleep 100 # \e[2K\r\e[1A")
            && text.contains(r"\u{202e}txt.exe")
            && text.contains(r"# \e]0;owned\x07")
            && text.contains(r"team\e]0;owned\x07\u{202e}"),
        "{text}"
    );
    assert!(
        !text.contains(['\x1b', '\r', '\x07', '\u{202e}']),
        "no control reaches the terminal: {text:?}"
    );
    assert_eq!(
        text.lines().count(),
        1 + ids.len(),
        "one row a session: {text}"
    );
}

/// Another program holds the address of `serve` (here `PTY_SESSION_URL`, so as not to
/// take the machine's 127.0.0.1:7717): plain `ls` says so and still lists the background
/// server's sessions, rather than asking it for a token it never had.
#[tokio::test]
async fn ls_names_another_program_at_the_serve_address() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    // A web server that is not a `serve`: every request gets 404.
    let other = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = other.local_addr().unwrap();
    let serving = tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = other.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(n) if n > 0 => head.extend_from_slice(&buf[..n]),
                        _ => return,
                    }
                }
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 10\r\nconnection: close\r\n\r\nnot found\n",
                    )
                    .await;
            });
        }
    });
    let runtime = Runtime::new("elsewhere");
    let ls = || async {
        let output = runtime
            .command(&["ls"])
            .env("PTY_SESSION_URL", format!("http://{addr}"))
            .output()
            .await
            .unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let said = format!("something else listens at {addr} (not a `pty-session serve`)");

    // Nothing of ours runs: a failure that names both.
    let (listed, out, err) = ls().await;
    assert!(!listed, "{out}{err}");
    assert!(
        err.contains("no background server") && err.contains(&said) && !err.contains("no token"),
        "{err}"
    );

    // The background server runs: its sessions, and a note of the other program.
    let project = runtime.project("project");
    let client = runtime.client(&project, &[]).await;
    let (id, _) = crate::support::open(&client.client, json!({"command": "sleep 600"})).await;
    let (listed, out, err) = ls().await;
    assert!(listed, "{out}{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with(&id) && l.contains("persist:")),
        "{out}"
    );
    assert!(err.contains(&said) && !err.contains("no token"), "{err}");
    serving.abort();
}
