//! What the server and the people's commands trust: a token file or tokens file
//! another user planted is refused, no secret falls back to `/tmp`, `ls` and `attach` send
//! no token to a listener that cannot prove it holds it (a squatter on the port, a relay
//! to the real server), and `ls`, `attach` and `stop` refuse a background server in a
//! directory of another user or whose process runs as another user. The other user is
//! `ptytest` (uid 1001), as CI sets it up; the targets are the test's own.

use std::io::Read as _;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::Command;

use crate::people::Terminal;
use crate::support::*;

/// The other user of the machine, and its uid.
const OTHER: &str = "ptytest";
const OTHER_UID: u32 = 1001;

const TOKEN: &str = "trust-token-0123456789abcdef0123";

/// Whether the test runs as root, which planting another user's files needs; says so
/// loudly when it does not.
fn root(what: &str) -> bool {
    let root = rustix::process::getuid().is_root();
    if !root {
        eprintln!("NOTE: not root: {what} needs root and user {OTHER} (CI runs as root)");
    }
    root
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chown_other(path: &Path) {
    std::os::unix::fs::chown(path, Some(OTHER_UID), Some(OTHER_UID)).unwrap();
}

/// A private directory of the test (0700) under a fresh scratch directory.
fn private(name: &str) -> PathBuf {
    let dir = scratch(name).join("private");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o700);
    dir
}

/// Removes the scratch directory of `inside`, a path [`private`] or [`token_file`] made.
fn remove_scratch(inside: &Path) {
    let scratch = inside
        .ancestors()
        .find(|dir| dir.file_name().is_some_and(|name| name == "private"))
        .and_then(Path::parent)
        .expect("a path under a private directory");
    let _ = std::fs::remove_dir_all(scratch);
}

/// A token file of this user, 0600, in a private directory.
fn token_file(name: &str) -> PathBuf {
    let path = private(name).join("token");
    std::fs::write(&path, format!("{TOKEN}\n")).unwrap();
    chmod(&path, 0o600);
    path
}

/// Runs `command` to its end, or kills it after [`DEADLINE`] (and reaps it): its status
/// (`None`: it had to be killed, it was still running) and its output.
async fn bounded(mut command: Command) -> (Option<ExitStatus>, String) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn pty-session");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let read = tokio::spawn(async move {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text).await;
        let _ = stderr.read_to_string(&mut text).await;
        text
    });
    let status = match tokio::time::timeout(DEADLINE, child.wait()).await {
        Ok(status) => Some(status.unwrap()),
        Err(_) => {
            child.kill().await.unwrap();
            None
        }
    };
    (status, read.await.unwrap())
}

/// `pty-session ARGS` without a token in the environment.
fn pty_session(args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command.args(args).env_remove("PTY_SESSION_TOKEN");
    command
}

/// Asserts that `command` failed by itself, saying each of `words`.
#[track_caller]
fn assert_refused(what: &str, (status, said): &(Option<ExitStatus>, String), words: &[&str]) {
    assert!(
        status.is_some_and(|status| !status.success()),
        "{what} must fail (status {status:?}): {said}"
    );
    for word in words {
        assert!(said.contains(word), "{what} must say {word:?}: {said}");
    }
}

/// `pty-session attach ARGS` on a terminal of the test: whether it succeeded, and what
/// the terminal showed.
async fn attach_in_terminal(mut command: Command) -> (Option<ExitStatus>, String) {
    let terminal = Terminal::open(80, 24);
    command.env_remove("PTY_SESSION_TOKEN");
    let mut child = terminal.spawn(command);
    let status = match tokio::time::timeout(DEADLINE, child.wait()).await {
        Ok(status) => Some(status.unwrap()),
        Err(_) => {
            child.kill().await.unwrap();
            None
        }
    };
    drop(child);
    (status, terminal.close())
}

#[tokio::test]
async fn serve_refuses_a_planted_token_file_and_never_uses_its_token() {
    if !root("planting another user's token file") {
        return;
    }
    let planted = "planted-token-by-ptytest-0123456789";
    // A token file of ptytest, 0600 as serve's own, in a directory of the test.
    let dir = private("trust-planted-file");
    let file = dir.join("token");
    std::fs::write(&file, format!("{planted}\n")).unwrap();
    chmod(&file, 0o600);
    chown_other(&file);
    let mut serve = pty_session(&["serve", "--listen", "127.0.0.1:0", "--token-file"]);
    serve.arg(&file);
    let refused = bounded(serve).await;
    assert_refused(
        "serve over ptytest's token file",
        &refused,
        &[file.to_str().unwrap(), &format!("uid {OTHER_UID}")],
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap().trim(),
        planted,
        "the planted file is left as it was, for the person to look at"
    );
    remove_scratch(&file);

    // Where serve looks by default, with the whole directory planted by ptytest.
    let runtime = scratch("trust-planted-runtime");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = runtime.join("pty-session");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o700);
    let file = dir.join(format!("token-{port}"));
    std::fs::write(&file, format!("{planted}\n")).unwrap();
    chmod(&file, 0o600);
    chown_other(&file);
    chown_other(&dir);
    let mut serve = pty_session(&["serve", "--listen", &format!("127.0.0.1:{port}")]);
    serve.env("XDG_RUNTIME_DIR", &runtime);
    let refused = bounded(serve).await;
    assert_refused(
        "serve in ptytest's runtime directory",
        &refused,
        &[dir.to_str().unwrap(), &format!("uid {OTHER_UID}")],
    );
    // Nothing answers with the planted token now (serve exited before serving).
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "nothing listens on {port}"
    );
    let _ = std::fs::remove_dir_all(runtime);
}

#[tokio::test]
async fn serve_refuses_a_tokens_file_another_user_could_have_written() {
    let dir = private("trust-tokens-file");
    let file = dir.join("tokens");
    std::fs::write(&file, format!("alice {TOKEN}\n")).unwrap();
    chmod(&file, 0o666);
    let mut serve = pty_session(&["serve", "--listen", "127.0.0.1:0", "--tokens"]);
    serve.arg(&file);
    let refused = bounded(serve).await;
    assert_refused(
        "serve with a world-writable tokens file",
        &refused,
        &[file.to_str().unwrap(), "writable by others"],
    );
    if !root("a tokens file of another user") {
        remove_scratch(&file);
        return;
    }
    chmod(&file, 0o600);
    chown_other(&file);
    let mut serve = pty_session(&["serve", "--listen", "127.0.0.1:0", "--tokens"]);
    serve.arg(&file);
    let refused = bounded(serve).await;
    assert_refused(
        "serve with ptytest's tokens file",
        &refused,
        &[file.to_str().unwrap(), &format!("uid {OTHER_UID}")],
    );
    remove_scratch(&file);
}

#[tokio::test]
async fn without_home_or_runtime_dir_serve_keeps_no_token_in_tmp() {
    let base = scratch("trust-no-home");
    // Where the temporary directory points: a fallback to it would show here.
    let tmp = base.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut serve = pty_session(&["serve", "--listen", "127.0.0.1:0"]);
    serve
        .env_remove("HOME")
        .env_remove("XDG_RUNTIME_DIR")
        .env("TMPDIR", &tmp)
        .current_dir(&base);
    let refused = bounded(serve).await;
    assert_refused(
        "serve without HOME and XDG_RUNTIME_DIR",
        &refused,
        &[
            "XDG_RUNTIME_DIR",
            "HOME",
            "--token-file",
            "no /tmp fallback",
        ],
    );
    assert!(
        std::fs::read_dir(&tmp).unwrap().next().is_none(),
        "nothing was written to the temporary directory"
    );
    let _ = std::fs::remove_dir_all(base);
}

/// A listener of the test that records every byte it is sent and answers each request
/// head with a made-up proof, as a squatter that knows the protocol would.
struct Squatter {
    addr: SocketAddr,
    heard: Arc<Mutex<Vec<u8>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Squatter {
    async fn bind(addr: &str) -> Squatter {
        let listener = TcpListener::bind(addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let task = {
            let heard = heard.clone();
            tokio::spawn(async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        return;
                    };
                    tokio::spawn(squat(stream, heard.clone()));
                }
            })
        };
        Squatter { addr, heard, task }
    }

    /// Everything it heard so far.
    fn heard(&self) -> String {
        String::from_utf8_lossy(&self.heard.lock().unwrap()).into_owned()
    }

    #[track_caller]
    fn assert_got_no_token(&self) {
        let heard = self.heard();
        assert!(
            !heard.to_ascii_lowercase().contains("authorization") && !heard.contains(TOKEN),
            "the squatter heard a token: {heard}"
        );
    }
}

impl Drop for Squatter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One connection of the squatter: each request head gets a proof of nothing.
async fn squat(stream: TcpStream, heard: Arc<Mutex<Vec<u8>>>) {
    let (reader, mut writer) = stream.into_split();
    let mut lines = BufReader::new(reader);
    let mut line = String::new();
    let body = format!(r#"{{"proofs":["{}"]}}"#, "00".repeat(32));
    loop {
        line.clear();
        match tokio::time::timeout(DEADLINE, lines.read_line(&mut line)).await {
            Ok(Ok(n)) if n > 0 => {}
            _ => return,
        }
        heard.lock().unwrap().extend_from_slice(line.as_bytes());
        if line == "\r\n" {
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            if writer.write_all(answer.as_bytes()).await.is_err() {
                return;
            }
        }
    }
}

const SQUATTED: &str = "not a pty-session serve holding your token";

#[tokio::test]
async fn ls_and_attach_send_no_token_to_a_squatter() {
    let squatter = Squatter::bind("127.0.0.1:0").await;
    let token = token_file("trust-squatter");
    let url = format!("http://{}", squatter.addr);
    let said = format!("something else listens on {} ({SQUATTED})", squatter.addr);

    let mut ls = pty_session(&["ls", "--url", &url, "--token-file"]);
    ls.arg(&token);
    assert_refused("ls --url", &bounded(ls).await, &[&said]);
    squatter.assert_got_no_token();

    let mut attach = pty_session(&["attach", "--url", &url, "--token-file"]);
    attach.arg(&token).arg("abcd1234");
    assert_refused("attach --url", &attach_in_terminal(attach).await, &[&said]);
    squatter.assert_got_no_token();
    assert!(
        squatter.heard().contains("/api/identify?nonce="),
        "it was asked for a proof: {}",
        squatter.heard()
    );
    remove_scratch(&token);
}

/// The person's `serve` is down and something else took its port: plain `ls` and
/// `attach` (the default URL, here `PTY_SESSION_URL` rather than 127.0.0.1:7717 so as
/// not to take the machine's) hold the generated token, which outlives the server, and
/// must not hand it over.
#[tokio::test]
async fn the_default_url_gets_no_token_once_serve_is_gone() {
    let runtime = scratch("trust-default-url");
    chmod(&runtime, 0o700);
    let mut command = Command::new(BIN);
    command
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("XDG_RUNTIME_DIR", &runtime);
    let mut server = http_server_from(command, &[]).await;
    let url = format!("http://{}", server.addr);
    let plain = |args: &[&str]| {
        let mut command = pty_session(args);
        command
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("PTY_SESSION_URL", &url);
        command
    };
    // While it runs, plain `ls` proves it and lists its sessions (none).
    let (status, listed) = bounded(plain(&["ls"])).await;
    assert!(status.is_some_and(|s| s.success()), "{listed}");
    assert!(listed.contains(&server.addr.to_string()), "{listed}");
    server.stop().await;
    let token_file = runtime
        .join("pty-session")
        .join(format!("token-{}", server.addr.port()));
    assert!(token_file.exists(), "the generated token stays");

    let squatter = Squatter::bind(&server.addr.to_string()).await;
    let said = format!("something else listens on {} ({SQUATTED})", server.addr);
    assert_refused("plain ls", &bounded(plain(&["ls"])).await, &[&said]);
    assert_refused(
        "plain attach",
        &attach_in_terminal(plain(&["attach", "abcd1234"])).await,
        &[&said],
    );
    squatter.assert_got_no_token();
    assert!(
        squatter.heard().contains("/api/identify"),
        "{}",
        squatter.heard()
    );
    drop(squatter);
    let _ = std::fs::remove_dir_all(runtime);
}

/// A relay on one port to the real server on another: the server's proof names the
/// address it was reached at, which is not the one `ls` connected to.
#[tokio::test]
async fn a_relay_to_the_real_server_gets_no_token() {
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let relay = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let relay_addr = relay.local_addr().unwrap();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let task = {
        let heard = heard.clone();
        let target = server.addr;
        tokio::spawn(async move {
            loop {
                let Ok((client, _)) = relay.accept().await else {
                    return;
                };
                let heard = heard.clone();
                tokio::spawn(async move {
                    let Ok(upstream) = TcpStream::connect(target).await else {
                        return;
                    };
                    let (mut from_client, mut to_client) = client.into_split();
                    let (mut from_server, mut to_server) = upstream.into_split();
                    let up = async {
                        let mut buf = [0u8; 4096];
                        while let Ok(n) = from_client.read(&mut buf).await {
                            if n == 0 {
                                break;
                            }
                            heard.lock().unwrap().extend_from_slice(&buf[..n]);
                            if to_server.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                        let _ = to_server.shutdown().await;
                    };
                    let down = tokio::io::copy(&mut from_server, &mut to_client);
                    let _ = tokio::join!(up, down);
                });
            }
        })
    };
    let token = token_file("trust-relay");
    let mut ls = pty_session(&[
        "ls",
        "--url",
        &format!("http://{relay_addr}"),
        "--token-file",
    ]);
    ls.arg(&token);
    assert_refused(
        "ls through a relay",
        &bounded(ls).await,
        &[&format!(
            "something else listens on {relay_addr} ({SQUATTED})"
        )],
    );
    let heard = String::from_utf8_lossy(&heard.lock().unwrap()).into_owned();
    task.abort();
    assert!(heard.contains("/api/identify"), "{heard}");
    assert!(
        !heard.to_ascii_lowercase().contains("authorization") && !heard.contains(TOKEN),
        "the relay heard the token: {heard}"
    );
    // Straight to the server, the same token works.
    let mut ls = pty_session(&[
        "ls",
        "--url",
        &format!("http://{}", server.addr),
        "--token-file",
    ]);
    ls.arg(&token);
    let (status, said) = bounded(ls).await;
    assert!(status.is_some_and(|s| s.success()), "{said}");
    remove_scratch(&token);
}

/// A runtime directory for `ls`, `attach` and `stop`, with a `serve` URL where nothing
/// listens, so that the machine's 127.0.0.1:7717 plays no part.
fn people(runtime: &Path, args: &[&str]) -> Command {
    let mut command = pty_session(args);
    command
        .env("XDG_RUNTIME_DIR", runtime)
        .env("PTY_SESSION_URL", "http://127.0.0.1:9");
    command
}

/// `ls --persist`, `ls`, `stop` and `attach --persist` against what is at `runtime`: each
/// must fail and say `words`.
async fn assert_people_refuse(runtime: &Path, words: &[&str]) {
    for args in [&["ls", "--persist"][..], &["ls"], &["stop"]] {
        assert_refused(
            &format!("{args:?}"),
            &bounded(people(runtime, args)).await,
            words,
        );
    }
    assert_refused(
        "attach --persist",
        &attach_in_terminal(people(runtime, &["attach", "--persist", "abcd1234"])).await,
        words,
    );
}

#[tokio::test]
async fn ls_attach_and_stop_refuse_a_socket_in_another_users_directory() {
    if !root("a directory of another user") {
        return;
    }
    let runtime = scratch("trust-foreign-dir");
    let dir = runtime.join("pty-session");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o700);
    // A server of the test's own user: only the directory's owner is wrong.
    let listener = std::os::unix::net::UnixListener::bind(dir.join("persist.sock")).unwrap();
    listener.set_nonblocking(true).unwrap();
    chown_other(&dir);
    assert_people_refuse(
        &runtime,
        &[dir.to_str().unwrap(), &format!("uid {OTHER_UID}")],
    )
    .await;
    let mut heard = 0;
    while let Ok((mut stream, _)) = listener.accept() {
        let mut bytes = Vec::new();
        let _ = stream.read_to_end(&mut bytes);
        heard += 1;
    }
    assert_eq!(heard, 0, "nothing connected to the socket");
    drop(listener);
    let _ = std::fs::remove_dir_all(&runtime);

    // The runtime directory above it of another user: they could swap the directory.
    let runtime = scratch("trust-foreign-runtime");
    let dir = runtime.join("pty-session");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o700);
    let listener = std::os::unix::net::UnixListener::bind(dir.join("persist.sock")).unwrap();
    listener.set_nonblocking(true).unwrap();
    chown_other(&runtime);
    assert_people_refuse(
        &runtime,
        &[runtime.to_str().unwrap(), &format!("uid {OTHER_UID}")],
    )
    .await;
    assert!(
        listener.accept().is_err(),
        "nothing connected to the socket"
    );
    let _ = std::fs::remove_dir_all(runtime);
}

/// What ptytest runs: a Unix socket server at `argv[1]` that prints every connection's
/// first bytes, until its stdin closes (or two minutes pass).
const FAKE_SERVER: &str = r#"
import os, select, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
print("ready", flush=True)
end = time.time() + 120
while time.time() < end:
    ready, _, _ = select.select([s, 0], [], [], 1)
    if 0 in ready and not os.read(0, 4096):
        break
    if s in ready:
        c, _ = s.accept()
        c.settimeout(2)
        try:
            data = c.recv(4096)
        except OSError:
            data = b""
        print("heard", repr(data), flush=True)
        try:
            c.sendall(b"Password for root: ")
        except OSError:
            pass
        c.close()
"#;

#[tokio::test]
async fn ls_attach_and_stop_refuse_a_server_of_another_user() {
    if !root("a server of another user") {
        return;
    }
    let runtime = scratch("trust-foreign-peer");
    let dir = runtime.join("pty-session");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o700);
    // ptytest listens in a directory of its own; the socket is then moved into the
    // test's private directory and given to root, so that only the peer tells.
    let theirs = runtime.join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    chown_other(&theirs);
    let mut fake = Command::new("runuser")
        .args(["-u", OTHER, "--", "python3", "-c", FAKE_SERVER])
        .arg(theirs.join("fake.sock"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("runuser");
    let mut out = BufReader::new(fake.stdout.take().unwrap());
    let mut line = String::new();
    tokio::time::timeout(DEADLINE, out.read_line(&mut line))
        .await
        .expect("the fake server starts")
        .unwrap();
    assert_eq!(line.trim(), "ready");
    let socket = dir.join("persist.sock");
    std::fs::rename(theirs.join("fake.sock"), &socket).unwrap();
    std::os::unix::fs::chown(&socket, Some(0), Some(0)).unwrap();

    assert_people_refuse(
        &runtime,
        &[
            socket.to_str().unwrap(),
            &format!("runs as uid {OTHER_UID}"),
        ],
    )
    .await;

    drop(fake.stdin.take());
    let mut heard = String::new();
    tokio::time::timeout(DEADLINE, out.read_to_string(&mut heard))
        .await
        .expect("the fake server ends with its stdin")
        .unwrap();
    assert!(
        tokio::time::timeout(DEADLINE, fake.wait()).await.is_ok(),
        "runuser exits"
    );
    assert!(
        heard.lines().all(|line| line == "heard b''"),
        "a client said something to the fake server: {heard}"
    );
    let _ = std::fs::remove_dir_all(runtime);
}

#[tokio::test]
async fn a_token_file_of_another_user_is_not_read_by_ls() {
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let token = token_file("trust-ls-token");
    chmod(&token, 0o622);
    let mut ls = pty_session(&[
        "ls",
        "--url",
        &format!("http://{}", server.addr),
        "--token-file",
    ]);
    ls.arg(&token);
    assert_refused(
        "ls with a token file others can write",
        &bounded(ls).await,
        &[token.to_str().unwrap(), "writable by others"],
    );
    if !root("a token file of another user") {
        remove_scratch(&token);
        return;
    }
    chmod(&token, 0o600);
    chown_other(&token);
    let mut ls = pty_session(&[
        "ls",
        "--url",
        &format!("http://{}", server.addr),
        "--token-file",
    ]);
    ls.arg(&token);
    assert_refused(
        "ls with ptytest's token file",
        &bounded(ls).await,
        &[token.to_str().unwrap(), &format!("uid {OTHER_UID}")],
    );
    remove_scratch(&token);
}

/// The challenge needs no token and answers one proof per token (64 hex digits); it opens
/// nothing else: the API and `/mcp` still need the token.
#[tokio::test]
async fn the_challenge_answers_without_a_token_and_opens_nothing_else() {
    let dir = private("trust-challenge");
    let tokens = tokens_file(
        &dir,
        &[("alice", TOKEN), ("bob", "trust-bob-token-9876543210")],
    );
    let server = http_server(&["--tokens", tokens.to_str().unwrap()], &[]).await;
    let nonce = "ab".repeat(32);
    let answer = raw_request_to(
        server.addr,
        "GET",
        &format!("/api/identify?nonce={nonce}"),
        &[],
        "",
    )
    .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let proofs: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
    let proofs = proofs["proofs"].as_array().unwrap();
    assert_eq!(proofs.len(), 2, "{answer:?}");
    assert!(
        proofs
            .iter()
            .all(|p| p.as_str().is_some_and(|p| p.len() == 64)),
        "{answer:?}"
    );
    assert!(!answer.body.contains(TOKEN), "{answer:?}");
    assert_eq!(
        answer.header("cache-control"),
        Some("no-store"),
        "{answer:?}"
    );
    for bad in ["", "?nonce=", "?nonce=abc", "?nonce=zz"] {
        let answer =
            raw_request_to(server.addr, "GET", &format!("/api/identify{bad}"), &[], "").await;
        assert_eq!(answer.status, 400, "{bad}: {answer:?}");
    }
    let listed = raw_request_to(server.addr, "GET", "/api/sessions", &[], "").await;
    assert_eq!(listed.status, 401, "{listed:?}");
    let mcp = raw_post(server.addr, &[], INITIALIZE).await;
    assert_eq!(mcp.status, 401, "{mcp:?}");
    remove_scratch(&dir);
}
