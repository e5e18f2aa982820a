//! The web view in a real browser: headless Chromium (Debian's `chromium`, which `.ci/run`
//! installs) driven over the DevTools protocol by `tests/web/browser.mjs`, against the
//! real `pty-session serve` with an agent's sessions open over MCP.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::json;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::Command;

use crate::support::*;

const TOKEN: &str = "browser-token-0123456789abcdef";
const SECRET: &str = "hunter2-correct-horse";

/// `node tests/web/{script}` driving `browser` through the web view at `addr`, logged in
/// with the test's token (`CDP_URL`, `PAGE_URL`, `TOKEN`; a script's own settings are
/// added by its test).
fn web_script(script: &str, browser: &Browser, addr: std::net::SocketAddr) -> Command {
    let mut command = Command::new("node");
    command
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/web")
                .join(script),
        )
        .env("CDP_URL", &browser.devtools)
        .env("PAGE_URL", format!("http://{addr}/"))
        .env("TOKEN", TOKEN);
    command
}

/// Headless Chromium in a process group of its own, killed with every process in it.
struct Browser {
    child: tokio::process::Child,
    /// The browser's DevTools WebSocket.
    devtools: String,
    _profile: PathBuf,
}

impl Browser {
    async fn start(profile: PathBuf) -> Browser {
        let program = ["chromium", "chromium-browser"]
            .into_iter()
            .find(|name| which(name).is_some())
            .expect(
                "the web view's browser test needs Chromium: apt-get install chromium \
                 (.ci/run installs it)",
            );
        let mut child = Command::new(program)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--remote-debugging-port=0",
                "about:blank",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .expect("spawn chromium");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let devtools = tokio::time::timeout(DEADLINE, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    return Some(url.trim().to_owned());
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
        .expect("chromium names its DevTools endpoint");
        // Keep draining its stderr so that it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Browser {
            child,
            devtools,
            _profile: profile,
        }
    }

    async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            // The browser's renderer and GPU processes share its group.
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
        }
        let _ = self.child.wait().await;
    }
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| Path::new(dir).join(program))
        .find(|path| path.is_file())
}

/// Where the screenshot goes: `target/web-view.png`, kept as a CI artifact; the ones at
/// other window sizes beside it (`web-view-htop-800x600.png`, ...).
fn screenshot_path() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("web-view.png")
}

/// Runs a browser script, doing what it asks of the agent on the way: a line
/// `{"ask":"send","id":..,"arguments":{..}}` on its stdout is a `pty_send` by `agent`,
/// answered with a line on its stdin once the reply is in. Returns its stdout, or what it
/// printed if it failed.
async fn drive(
    mut command: Command,
    agent: &Client,
    deadline: std::time::Duration,
) -> Result<String, String> {
    use tokio::io::AsyncWriteExt as _;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run node");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stderr = child.stderr.take().unwrap();
    let errors = tokio::spawn(async move {
        let mut text = String::new();
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut text).await;
        text
    });
    let mut steps = String::new();
    let run = tokio::time::timeout(deadline, async {
        while let Ok(Some(line)) = lines.next_line().await {
            steps.push_str(&line);
            steps.push('\n');
            let Ok(ask) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if ask["ask"] == "send" {
                let mut arguments = ask["arguments"].clone();
                arguments["id"] = ask["id"].clone();
                let sent = call(agent, "pty_send", arguments).await;
                let answer = format!("{}\n", serde_json::json!({"done": ok(&sent)["status"]}));
                stdin.write_all(answer.as_bytes()).await.unwrap();
            }
        }
        child.wait().await
    })
    .await;
    let _ = child.start_kill();
    let errors = errors.await.unwrap_or_default();
    eprintln!("{steps}");
    match run {
        Ok(Ok(status)) if status.success() && steps.contains(r#"{"ok":true}"#) => Ok(steps),
        Ok(_) => Err(format!("the browser script failed:\n{steps}\n{errors}")),
        Err(_) => Err(format!("the browser script timed out:\n{steps}\n{errors}")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_logs_in_watches_and_types_through_the_web_view() {
    let dir = scratch("browser");
    let mut server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    // Two MCP clients of one token: the page shows the sessions of both.
    let agent = current_client(&server.url, TOKEN).await;
    let legacy = legacy_client(&server.url, TOKEN).await;
    let (python, _) = open(&agent, at_home(json!({"command": "python3 -q"}), &dir)).await;
    let opened = call(
        &legacy,
        "pty_open",
        json!({"command": "python3 -c \"import getpass; print(len(getpass.getpass()))\""}),
    )
    .await;
    let password = ok(&opened)["sessionId"].as_str().unwrap().to_owned();
    // Full-screen programs in colour: vim with a status line, htop updating every 10 s.
    std::fs::write(dir.join("notes.txt"), "hello from vim\n").unwrap();
    let (vim, _) = open(
        &agent,
        json!({
            "command": format!("vim -u NONE -N -c 'set laststatus=2' {}", dir.join("notes.txt").display()),
            "settle": "quiet", "quietMs": 500,
        }),
    )
    .await;
    // htop reads its layout from the user's config and writes it back: a home of its own
    // keeps its header as the page's checks expect, whatever the machine's user has.
    let htop_home = dir.join("htop-home");
    std::fs::create_dir_all(&htop_home).unwrap();
    let (htop, _) = open(
        &agent,
        json!({
            "command": "htop -d 100", "settle": "quiet", "quietMs": 500,
            "env": {"HOME": htop_home, "XDG_CONFIG_HOME": htop_home},
        }),
    )
    .await;
    assert!(
        ok(&opened)["pending"]
            .as_str()
            .unwrap()
            .contains("Password:")
    );

    let browser = Browser::start(dir.join("profile")).await;
    let screenshot = screenshot_path();
    let _ = std::fs::remove_file(&screenshot);
    let mut command = web_script("browser.mjs", &browser, server.addr);
    command
        .env("PYTHON_ID", &python)
        .env("PASSWORD_ID", &password)
        .env("VIM_ID", &vim)
        .env("HTOP_ID", &htop)
        .env("SECRET", SECRET)
        .env("SCREENSHOT", &screenshot);
    let driven = drive(command, &agent, DEADLINE * 6).await;
    browser.stop().await;
    if let Err(failed) = driven {
        panic!("{failed}");
    }
    let png = std::fs::read(&screenshot).expect("the screenshot was saved");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");

    // The agent's next tail sees what the person typed and what it printed.
    let tail = call(&agent, "pty_tail", json!({"id": python})).await;
    assert!(
        ok(&tail)["text"].as_str().unwrap().contains("6*7\n42\n"),
        "{:?}",
        ok(&tail)
    );
    // The password: its length reaches the agent, never the password.
    let tail = call(
        &legacy,
        "pty_tail",
        json!({"id": password, "timeoutMs": 5000}),
    )
    .await;
    let reply = format!("{:?}", tail);
    assert!(
        ok(&tail)["text"]
            .as_str()
            .unwrap()
            .contains(&format!("\n{}\n", SECRET.len()))
            || ok(&tail)["text"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{}\n", SECRET.len())),
        "the length: {reply}"
    );
    assert!(
        !reply.contains(SECRET),
        "the password never reaches the agent: {reply}"
    );
    assert!(!server.log().contains(TOKEN), "no token in the log");

    // The page's "fit the session" left vim at a size of the browser's window.
    let screen = call(&agent, "pty_screen", json!({"id": vim})).await;
    assert_ne!(ok(&screen)["cols"], 80, "{:?}", ok(&screen));

    for id in [&python, &vim, &htop] {
        call(&agent, "pty_close", json!({"id": id})).await;
    }
    drop(agent);
    drop(legacy);
    server.stop().await;
    let _ = std::fs::remove_dir_all(dir);
}

/// The packages of `tests/web/package-lock.json` (the MCP Apps SDK, its MCP client,
/// esbuild): `.ci/run` installs them; a checkout without them gets them here, with npm.
fn web_test_packages() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/web");
    if !dir
        .join("node_modules/@modelcontextprotocol/ext-apps/package.json")
        .is_file()
    {
        let status = std::process::Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir)
            .status()
            .expect("run npm (apt-get install npm)");
        assert!(status.success(), "npm ci in {}", dir.display());
    }
    dir
}

/// The MCP App under the official MCP Apps SDK's host side (`tests/web/mcp_app.mjs`):
/// `AppBridge` and its `PostMessageTransport`, a sandbox proxy on a second origin under
/// the SDK example host's CSP and then the extension's restrictive default, the SDK's MCP
/// client carrying the view's `tools/call`. The handshake fits the SDK's schemas; what a
/// person types reaches the program and stays the agent's to read; a narrow container
/// shows every column; a coloured program's first frame has its colours, bold and
/// inverse in xterm.js's cells; focus coming and going in vim's view (which asked for
/// focus reports) sends nothing; an agent's resize re-sends the view's size; an unknown
/// request gets method-not-found; after `pty_close`, the program's exit or a teardown the
/// view calls nothing more. The terminal is drawn on the server's configured background.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_app_under_the_sdk_host_types_without_reading_and_stops() {
    let dir = scratch("mcp-app");
    let web = web_test_packages();
    let mut server = http_server(
        &["--background", BACKGROUND],
        &[("PTY_SESSION_TOKEN", TOKEN)],
    )
    .await;
    let agent = current_client(&server.url, TOKEN).await;
    for csp in ["sdk", "spec"] {
        let browser = Browser::start(dir.join(format!("profile-{csp}"))).await;
        let driven = tokio::time::timeout(
            DEADLINE * 4,
            Command::new("node")
                .arg(web.join("mcp_app.mjs"))
                .env("CDP_URL", &browser.devtools)
                .env("MCP_URL", &server.url)
                .env("TOKEN", TOKEN)
                .env("CSP", csp)
                .env("BACKGROUND_CSS", "rgb(16, 32, 48)")
                .stdin(Stdio::null())
                .kill_on_drop(true)
                .output(),
        )
        .await;
        browser.stop().await;
        let driven = driven.expect("the host script finishes").expect("run node");
        let steps = String::from_utf8_lossy(&driven.stdout);
        eprintln!("CSP {csp}:\n{steps}");
        assert!(
            driven.status.success() && steps.contains(r#"{"ok":true}"#),
            "the host script failed under the {csp} CSP:\n{steps}\n{}",
            String::from_utf8_lossy(&driven.stderr)
        );
    }
    // The script closed what it opened.
    let listed = call(&agent, "pty_list", json!({})).await;
    assert_eq!(ok(&listed)["sessions"], json!([]), "{listed:?}");

    drop(agent);
    server.stop().await;
    let _ = std::fs::remove_dir_all(dir);
}

/// Commands a red team chose to fool a person: one that erases its own row and moves up,
/// one with a newline that fakes a row, one that sets the window's title, one reversed by
/// a right-to-left override.
pub(crate) const HOSTILE_COMMANDS: [&str; 4] = [
    "sleep 100 # \x1b[2K\r\x1b[1A",
    "sleep 100 #\nfake 00000000 running",
    "sleep 100 # \x1b]0;owned\x07",
    "sleep 100 # \u{202e}txt.exe",
];

/// A program that asks for focus reports, waits for `go`, then queries the terminal (the
/// cursor position, DA1, DA2, DSR and the background colour) and prints how many answers
/// of each kind its raw stdin got within two seconds, and the bytes.
const QUERIES_PY: &str = r#"
import os, re, select, sys, termios, time, tty
go = sys.argv[1]
old = termios.tcgetattr(0)
tty.setraw(0)
os.write(1, b"\x1b[?1004hwaiting\r\n")
while not os.path.exists(go):
    time.sleep(0.05)
os.write(1, b"\x1b[6n\x1b[c\x1b[>c\x1b[5n\x1b]11;?\x07")
got = b""
end = time.time() + 2
while time.time() < end:
    ready, _, _ = select.select([0], [], [], max(0, end - time.time()))
    if ready:
        got += os.read(0, 4096)
count = lambda pattern: len(re.findall(pattern, got))
line = "cpr=%d da1=%d da2=%d dsr=%d osc=%d focus=%d got=%r" % (
    count(rb"\x1b\[\d+;\d+R"), count(rb"\x1b\[\?[\d;]*c"), count(rb"\x1b\[>[\d;]*c"),
    count(rb"\x1b\[0n"), count(rb"\x1b\]11;"), count(rb"\x1b\[[IO]"), got)
termios.tcsetattr(0, termios.TCSADRAIN, old)
print(line)
"#;

/// The web list shows what a session chose escaped, exactly as `ls` does (the page's
/// `shown` against the server's), with no control or bidi character left in the cell; a
/// program queried while the page watches gets exactly one answer to each query (the
/// server's: xterm.js answers none) and no focus report for the page's own focus.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_view_lists_commands_escaped_and_answers_no_query_twice() {
    let dir = scratch("browser-safety");
    let mut server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let agent = current_client(&server.url, TOKEN).await;
    let mut expected = serde_json::Map::new();
    let mut ids = Vec::new();
    for command in HOSTILE_COMMANDS {
        let (id, _) = open(&agent, json!({"command": command, "settle": "none"})).await;
        let shown = pty_session_server::shown(command).into_owned();
        assert!(!shown.contains(['\x1b', '\n', '\r', '\x07', '\u{202e}']));
        expected.insert(id.clone(), shown.into());
        ids.push(id);
    }
    let script = dir.join("queries.py");
    std::fs::write(&script, QUERIES_PY).unwrap();
    let go = dir.join("go");
    let (queries, _) = open(
        &agent,
        json!({
            "command": format!("python3 {} {}", script.display(), go.display()),
            "until": "waiting",
        }),
    )
    .await;

    let browser = Browser::start(dir.join("profile")).await;
    let mut command = web_script("safety.mjs", &browser, server.addr);
    command
        .env("EXPECTED", serde_json::Value::Object(expected).to_string())
        .env("QUERY_ID", &queries)
        .env("GO_FILE", &go);
    let driven = drive(command, &agent, DEADLINE * 3).await;
    browser.stop().await;
    if let Err(failed) = driven {
        panic!("{failed}");
    }
    let tail = call(
        &agent,
        "pty_tail",
        json!({"id": queries, "until": "cpr=\\d", "timeoutMs": 10_000}),
    )
    .await;
    let text = ok(&tail)["text"].as_str().unwrap().to_owned();
    assert!(
        text.contains("cpr=1 da1=1 da2=1 dsr=1 osc=1 focus=0 "),
        "one answer to each query, no focus report: {text}"
    );

    for id in ids.iter().chain([&queries]) {
        call(&agent, "pty_close", json!({"id": id})).await;
    }
    drop(agent);
    server.stop().await;
    let _ = std::fs::remove_dir_all(dir);
}

/// A server stopped and started again at the same address under an open tab: the page
/// says it cannot reach it, keeps the token, and lists the new server's sessions without
/// a new login (`tests/web/restart.mjs`); a line the new server's session printed in
/// red before the page opened it is drawn in red (compared cell by cell).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_view_keeps_its_token_across_a_server_restart() {
    use tokio::io::AsyncWriteExt as _;
    let dir = scratch("browser-restart");
    let mut server = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let addr = server.addr;
    let agent = current_client(&server.url, TOKEN).await;
    let (first, _) = open(&agent, at_home(json!({"command": "cat"}), &dir)).await;
    drop(agent);

    let browser = Browser::start(dir.join("profile")).await;
    let mut child = web_script("restart.mjs", &browser, addr)
        .env("SESSION_ID", &first)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run node");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut steps = String::new();
    let mut restarted = None;
    let run = tokio::time::timeout(DEADLINE * 4, async {
        while let Ok(Some(line)) = lines.next_line().await {
            steps.push_str(&line);
            steps.push('\n');
            let Ok(ask) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            let answer = match ask["ask"].as_str() {
                Some("stop") => {
                    server.stop().await;
                    json!({})
                }
                Some("start") => {
                    let again = http_server_from(
                        {
                            let mut command = Command::new(BIN);
                            command
                                .args(["serve", "--listen", &addr.to_string()])
                                .args(home_args());
                            command
                        },
                        &[("PTY_SESSION_TOKEN", TOKEN)],
                    )
                    .await;
                    let agent = current_client(&again.url, TOKEN).await;
                    let (id, _) = open(
                        &agent,
                        at_home(
                            json!({"command": "printf '\\033[31mred\\033[0m plain\\n'; exec cat"}),
                            &dir,
                        ),
                    )
                    .await;
                    drop(agent);
                    restarted = Some(again);
                    json!({"id": id})
                }
                _ => continue,
            };
            stdin
                .write_all(format!("{answer}\n").as_bytes())
                .await
                .unwrap();
        }
        child.wait().await
    })
    .await;
    let _ = child.start_kill();
    browser.stop().await;
    eprintln!("{steps}");
    assert!(
        matches!(run, Ok(Ok(status)) if status.success()) && steps.contains(r#"{"ok":true}"#),
        "the restart script failed:\n{steps}"
    );
    if let Some(mut again) = restarted {
        again.stop().await;
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A server configured with a background: a session whose red line scrolled out of its
/// window before the page opened it is drawn with that line in red when scrolled back to
/// (cell by cell), on the configured background (`tests/web/colours.mjs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_view_draws_history_in_colour_on_the_configured_background() {
    let dir = scratch("browser-colours");
    let (mut server, agent, id) = a_red_line_scrolled_out(&dir, TOKEN).await;
    let browser = Browser::start(dir.join("profile")).await;
    let mut command = web_script("colours.mjs", &browser, server.addr);
    command
        .env("SESSION_ID", &id)
        .env("BACKGROUND", BACKGROUND)
        .env("BACKGROUND_CSS", "rgb(16, 32, 48)");
    let driven = drive(command, &agent, DEADLINE * 3).await;
    browser.stop().await;
    if let Err(failed) = driven {
        panic!("{failed}");
    }
    call(&agent, "pty_close", json!({"id": id})).await;
    drop(agent);
    server.stop().await;
    let _ = std::fs::remove_dir_all(dir);
}
