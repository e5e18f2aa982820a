//! A soak of about a minute: random opens, sends, tails, re-reads, kills, closes and
//! dropped clients, at once over stdio, HTTP and `mcp --persist`. The programs print
//! numbered lines, so that every line is checked to come exactly once and in order
//! (delivered, or counted in `skipped`), across sends, tails and clients that die
//! mid-call; re-reads with `from` are checked apart (they do not move the cursor). At the
//! end no process of the test's sessions is alive: each carries a mark in its
//! environment, looked for in every process of the machine.
//!
//! Shell sessions (bash with its line editor, echo on) get commands whose echo fills the
//! window exactly, or twice or three times, or not, now and then with wide characters,
//! and resizes in the same call or between calls: every reply is checked to be exactly
//! the command's line and its answer, never two rows merged.
//!
//! The randomness is seeded: the seed is printed, and `PTY_SESSION_SOAK_SEED` replays
//! one (the timing of a loaded machine still varies); `PTY_SESSION_SOAK_SECS` sets the
//! length (default 60).

use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tokio::process::Child;

use crate::persist::Runtime;
use crate::support::{
    Client, alive, call, current_client, eventually, exit_success, http_server, ok, signal,
    stdio_server,
};

const SEED_ENV: &str = "PTY_SESSION_SOAK_SEED";
const SECS_ENV: &str = "PTY_SESSION_SOAK_SECS";
const TOKEN: &str = "soak-token-0123456789abcdef";
/// The most sessions a worker keeps open.
const MAX_SESSIONS: usize = 4;

/// splitmix64: small, seeded, good enough to pick actions.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Transport {
    Stdio,
    Http,
    Persist,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// Prints `L<i>` lines, as many as each send asks for.
    Echo,
    /// Prints `T<i>` lines on its own, every 20 ms.
    Tick,
    /// bash with its line editor: each send's reply is the command's echo and its answer.
    Shell,
}

impl Kind {
    fn prefix(self) -> char {
        match self {
            Kind::Echo => 'L',
            Kind::Tick => 'T',
            Kind::Shell => '$',
        }
    }
}

/// The window widths shell sessions are opened at and resized to.
const WIDTHS: [u64; 6] = [20, 33, 40, 80, 120, 161];

/// A session and what its reads have brought so far.
struct Tracked {
    id: String,
    pid: u32,
    kind: Kind,
    /// The number of the next line a read must bring.
    next: u64,
    /// Echo: the lines asked for by sends that surely reached the program.
    asked: u64,
    /// Echo: the lines asked for by sends whose client died mid-call (they may or may not
    /// have reached the program).
    unsure: u64,
    /// A scrollback line's number minus the program's number for it, once re-read.
    offset: Option<i64>,
    /// The session's last replies, for a failure's message.
    history: Vec<String>,
    /// The window's width.
    cols: u64,
}

#[derive(Debug, Default)]
struct Stats {
    opens: u64,
    sends: u64,
    tails: u64,
    rereads: u64,
    kills: u64,
    closes: u64,
    drops: u64,
    delivered: u64,
    skipped: u64,
    reread_lines: u64,
}

impl Tracked {
    /// Accounts for the `field` lines of a read and its `skipped`: each number comes
    /// once, in order, with no gap that `skipped` does not explain.
    fn account(&mut self, stats: &mut Stats, what: &str, value: &Value, field: &str) {
        if self.history.len() >= 8 {
            self.history.remove(0);
        }
        let mut seen = value.to_string();
        seen.truncate(300);
        self.history.push(format!("{what}: {seen}"));
        if self.kind == Kind::Shell {
            // Every send reads its whole answer: a later read finds nothing.
            let text = value[field].as_str().unwrap_or_default();
            assert!(
                text.is_empty() || what == "open",
                "{} {what}: lines after a shell's answer: {value}",
                self.id
            );
            return;
        }
        let skipped = value["skipped"].as_u64().unwrap_or(0);
        self.next += skipped;
        stats.skipped += skipped;
        let text = value[field].as_str().unwrap_or_default();
        for line in text.lines() {
            let number = self.number(line, what, value);
            assert_eq!(
                number,
                self.next,
                "{} {what}: line {line:?} where {}{} was due (a line lost or read twice): {value}\nbefore:\n{}",
                self.id,
                self.kind.prefix(),
                self.next,
                self.history.join("\n")
            );
            self.next += 1;
            stats.delivered += 1;
        }
    }

    fn number(&self, line: &str, what: &str, value: &Value) -> u64 {
        line.strip_prefix(self.kind.prefix())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| {
                panic!(
                    "{} {what}: a line not of the program: {line:?}: {value}",
                    self.id
                )
            })
    }

    /// Checks a re-read from line `from`: consecutive numbers, each at the place in the
    /// scrollback the earlier re-reads put it.
    fn reread(&mut self, stats: &mut Stats, from: u64, value: &Value) {
        let begin = value["lineBegin"].as_u64().unwrap_or(0);
        let start = from.max(begin);
        let text = value["text"].as_str().unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            let number = self.number(line, "re-read", value);
            let offset = (start + i as u64) as i64 - number as i64;
            let known = *self.offset.get_or_insert(offset);
            assert_eq!(
                known,
                offset,
                "{} re-read from {from}: {line:?} at line {} of the scrollback: {value}",
                self.id,
                start + i as u64
            );
            stats.reread_lines += 1;
        }
    }

    /// Echo, after a send settled at the program's next read: every line asked for has
    /// been read or skipped, and of the lines of sends whose client died, some or none.
    fn all_read(&mut self, what: &str) {
        if self.kind != Kind::Echo {
            return;
        }
        let read = self.next - 1;
        assert!(
            read >= self.asked && read <= self.asked + self.unsure,
            "{} {what}: {read} lines read or skipped, {} asked for (+{} unsure)",
            self.id,
            self.asked,
            self.unsure
        );
        self.unsure -= read - self.asked;
        self.asked = read;
    }
}

/// What a worker talks through.
struct Conn {
    client: Client,
    /// The `pty-session mcp` (plain or `--persist`) it is the client of.
    child: Option<Child>,
}

struct Worker<'a> {
    transport: Transport,
    rng: Rng,
    stats: Stats,
    sessions: Vec<Tracked>,
    /// Every session pid this worker opened.
    pids: Vec<u32>,
    mark: &'a str,
    url: &'a str,
    runtime: &'a Runtime,
    project: &'a std::path::Path,
}

impl Worker<'_> {
    async fn connect(&self) -> Conn {
        match self.transport {
            Transport::Stdio => {
                let server = stdio_server(&[]).await;
                Conn {
                    client: server.client,
                    child: Some(server.child),
                }
            }
            Transport::Http => Conn {
                client: current_client(self.url, TOKEN).await,
                child: None,
            },
            Transport::Persist => {
                let server = self.runtime.client(self.project, &[]).await;
                Conn {
                    client: server.client,
                    child: Some(server.child),
                }
            }
        }
    }

    async fn run(mut self, until: Instant) -> (Stats, Vec<u32>) {
        let mut conn = self.connect().await;
        while Instant::now() < until {
            let roll = self.rng.below(100);
            if self.sessions.is_empty() || (roll < 12 && self.sessions.len() < MAX_SESSIONS) {
                self.open(&conn.client).await;
            } else if roll < 45 {
                self.send(&conn.client).await;
            } else if roll < 75 {
                self.tail(&conn.client).await;
            } else if roll < 83 {
                self.reread(&conn.client).await;
            } else if roll < 88 {
                self.kill(&conn.client).await;
            } else if roll < 94 {
                self.close(&conn.client).await;
            } else {
                conn = self.drop_client(conn).await;
            }
        }
        for at in (0..self.sessions.len()).rev() {
            self.close_at(&conn.client, at).await;
        }
        if let Some(mut child) = conn.child.take() {
            drop(conn.client);
            assert!(exit_success(&mut child).await || self.transport == Transport::Persist);
        }
        (self.stats, self.pids)
    }

    fn pick(&mut self) -> usize {
        self.rng.below(self.sessions.len() as u64) as usize
    }

    /// A session that prints numbered lines, if there is one: what tails, re-reads and
    /// dropped calls are checked on.
    fn pick_numbered(&mut self) -> Option<usize> {
        let numbered: Vec<usize> = (0..self.sessions.len())
            .filter(|&at| self.sessions[at].kind != Kind::Shell)
            .collect();
        if numbered.is_empty() {
            return None;
        }
        Some(numbered[self.rng.below(numbered.len() as u64) as usize])
    }

    async fn open(&mut self, client: &Client) {
        let kind = match self.rng.below(3) {
            0 => Kind::Echo,
            1 => Kind::Tick,
            _ => Kind::Shell,
        };
        let command = match kind {
            Kind::Echo => {
                "i=0; while read n; do k=0; while [ $k -lt $n ]; do i=$((i+1)); echo L$i; k=$((k+1)); done; done"
            }
            Kind::Tick => "i=0; while :; do i=$((i+1)); echo T$i; sleep 0.02; done",
            Kind::Shell => "bash --norc --noprofile -i",
        };
        let cols = WIDTHS[self.rng.below(WIDTHS.len() as u64) as usize];
        let result = call(
            client,
            "pty_open",
            json!({"command": command, "echo": kind == Kind::Shell, "cols": cols,
                   "env": {"PTY_SESSION_SOAK": self.mark, "PS1": "$ "},
                   "timeoutMs": 10_000}),
        )
        .await;
        let value = ok(&result);
        let mut tracked = Tracked {
            id: value["sessionId"].as_str().unwrap().to_owned(),
            pid: u32::try_from(value["pid"].as_u64().unwrap()).unwrap(),
            kind,
            next: 1,
            asked: 0,
            unsure: 0,
            offset: None,
            history: Vec::new(),
            cols,
        };
        tracked.account(&mut self.stats, "open", value, "initialOutput");
        self.pids.push(tracked.pid);
        self.sessions.push(tracked);
        self.stats.opens += 1;
    }

    /// The budget of a read: mostly the default, sometimes small enough to skip lines.
    fn budget(&mut self, arguments: &mut Value) {
        if self.rng.chance(25) {
            arguments["lines"] = json!(1 + self.rng.below(20));
        }
    }

    async fn send(&mut self, client: &Client) {
        let at = self.pick();
        let id = self.sessions[at].id.clone();
        let mut arguments = match self.sessions[at].kind {
            Kind::Echo => {
                let n = if self.rng.chance(10) {
                    250 + self.rng.below(300)
                } else {
                    self.rng.below(40)
                };
                self.sessions[at].asked += n;
                json!({"id": id, "data": n.to_string(), "timeoutMs": 20_000})
            }
            // Typed into a program that reads nothing: only the wait matters.
            Kind::Tick => json!({"id": id, "data": "", "submit": false, "settle": "quiet",
                                 "quietMs": 50 + self.rng.below(200), "timeoutMs": 300}),
            Kind::Shell => return self.send_to_shell(client, at).await,
        };
        self.budget(&mut arguments);
        let result = call(client, "pty_send", arguments).await;
        let value = ok(&result).clone();
        let tracked = &mut self.sessions[at];
        tracked.account(&mut self.stats, "send", &value, "delta");
        if value["settledBy"] == "input" {
            tracked.all_read("send");
        }
        self.stats.sends += 1;
    }

    /// A command whose echo fills the window exactly (or twice, or three times, or has a
    /// length of its own), sometimes with wide characters, sometimes at a new width given
    /// in the same call or just before: the reply is its echo and its answer, exactly.
    async fn send_to_shell(&mut self, client: &Client, at: usize) {
        let id = self.sessions[at].id.clone();
        let mut cols = self.sessions[at].cols;
        let resize = self.rng.below(4);
        if resize > 0 {
            cols = WIDTHS[self.rng.below(WIDTHS.len() as u64) as usize];
        }
        if resize == 1 {
            // A resize of its own before the command.
            let arguments = json!({"id": id, "data": "", "submit": false, "cols": cols});
            let result = call(client, "pty_send", arguments).await;
            ok(&result);
        }
        // The cells of `$ echo WORD`.
        let cells = if self.rng.chance(60) {
            cols * (1 + self.rng.below(3))
        } else {
            10 + self.rng.below(300)
        };
        let mut word = format!("S{}-", self.stats.sends);
        let wide = self.rng.chance(25);
        let mut width = "$ echo ".len() as u64 + word.len() as u64;
        while width < cells {
            if wide && width + 2 <= cells && self.rng.chance(40) {
                word.push('日');
                width += 2;
            } else {
                word.push((b'a' + self.rng.below(26) as u8) as char);
                width += 1;
            }
        }
        let mut arguments = json!({"id": id, "data": format!("echo {word}"), "timeoutMs": 20_000});
        if resize >= 2 {
            arguments["cols"] = json!(cols);
        }
        let result = call(client, "pty_send", arguments).await;
        let value = ok(&result).clone();
        let tracked = &mut self.sessions[at];
        tracked.cols = cols;
        // Where a wide character does not fit the end of a row, readline prints a blank
        // and the character on the next row: the echo holds that blank, as the terminal
        // does; the answer is the word exactly.
        let delta = value["delta"].as_str().unwrap_or_default();
        let lines: Vec<&str> = delta.lines().collect();
        let echo = lines.first().map(|line| line.replace(' ', ""));
        assert!(
            delta.starts_with("$ echo S")
                && echo.as_deref() == Some(format!("$echo{word}").as_str())
                && lines[1..] == [word.as_str()]
                && value["pending"] == "$ ",
            "{id} at {cols} columns ({cells} cells), not the command and its answer: {value}\nbefore:\n{}",
            tracked.history.join("\n")
        );
        tracked
            .history
            .push(format!("send at {cols} columns: {word}"));
        self.stats.sends += 1;
        self.stats.delivered += 2;
    }

    async fn tail(&mut self, client: &Client) {
        let Some(at) = self.pick_numbered() else {
            return;
        };
        let id = self.sessions[at].id.clone();
        let mut arguments = json!({"id": id});
        if self.rng.chance(30) {
            // Wait for a line ending in 0 (a tick's), or a short while.
            arguments["until"] = json!("0$");
            arguments["timeoutMs"] = json!(200 + self.rng.below(500));
        }
        self.budget(&mut arguments);
        let result = call(client, "pty_tail", arguments).await;
        let value = ok(&result).clone();
        self.sessions[at].account(&mut self.stats, "tail", &value, "text");
        self.stats.tails += 1;
    }

    async fn reread(&mut self, client: &Client) {
        let Some(at) = self.pick_numbered() else {
            return;
        };
        let tracked = &self.sessions[at];
        let from = self.rng.below(tracked.next + 5);
        let id = tracked.id.clone();
        let mut arguments = json!({"id": id, "from": from});
        self.budget(&mut arguments);
        let result = call(client, "pty_tail", arguments).await;
        let value = ok(&result).clone();
        self.sessions[at].reread(&mut self.stats, from, &value);
        self.stats.rereads += 1;
    }

    /// SIGKILL of a session's program: it exits, its lines stay readable, then it is
    /// closed.
    async fn kill(&mut self, client: &Client) {
        let at = self.pick();
        let pid = self.sessions[at].pid;
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
        let id = self.sessions[at].id.clone();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let result = call(client, "pty_tail", json!({"id": id, "lines": 100_000})).await;
            let value = ok(&result).clone();
            self.sessions[at].account(&mut self.stats, "tail after kill", &value, "text");
            if value["status"] == "exited" {
                break;
            }
            assert!(Instant::now() < deadline, "{id} never exited after SIGKILL");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Whatever came before the exit has been read by now.
        let result = call(client, "pty_tail", json!({"id": id, "lines": 100_000})).await;
        let value = ok(&result).clone();
        self.sessions[at].account(&mut self.stats, "tail after exit", &value, "text");
        self.sessions[at].all_read("tail after exit");
        self.stats.kills += 1;
        self.close_at(client, at).await;
    }

    async fn close(&mut self, client: &Client) {
        let at = self.pick();
        self.close_at(client, at).await;
    }

    async fn close_at(&mut self, client: &Client, at: usize) {
        let tracked = self.sessions.remove(at);
        // What is unread is read first: still once and in order.
        let result = call(
            client,
            "pty_tail",
            json!({"id": tracked.id, "lines": 100_000, "maxBytes": 1_048_576}),
        )
        .await;
        let mut tracked = tracked;
        tracked.account(&mut self.stats, "last tail", ok(&result), "text");
        let result = call(client, "pty_close", json!({"id": tracked.id})).await;
        assert_eq!(ok(&result)["closed"], true, "{result:?}");
        eventually("a closed session's program to be gone", || {
            !alive(tracked.pid)
        })
        .await;
        self.stats.closes += 1;
    }

    /// A client that dies in the middle of a call: over stdio its server and sessions go;
    /// over HTTP and with `--persist` the sessions stay, their cursors where they were.
    async fn drop_client(&mut self, conn: Conn) -> Conn {
        let Some(at) = self.pick_numbered() else {
            return conn;
        };
        self.stats.drops += 1;
        let id = self.sessions[at].id.clone();
        let echo_n = (self.sessions[at].kind == Kind::Echo).then(|| 1 + self.rng.below(30));
        self.sessions[at].history.push(format!(
            "dropped client mid-call ({:?}, {echo_n:?} lines asked)",
            self.transport
        ));
        // A wait that only a timeout (or the client's end) ends.
        let mut arguments = json!({"id": id, "until": "^NEVER$", "settle": "quiet",
                                   "quietMs": 600_000, "timeoutMs": 20_000});
        if let Some(n) = echo_n {
            arguments["data"] = json!(n.to_string());
        }
        let Value::Object(arguments) = arguments else {
            unreachable!()
        };
        let tool = if echo_n.is_some() {
            "pty_send"
        } else {
            "pty_tail"
        };
        let params = CallToolRequestParams::new(tool).with_arguments(arguments);
        let delay = Duration::from_millis(20 + self.rng.below(400));
        let (answered, conn) = match self.transport {
            Transport::Http => {
                // Another connection of the same token, dropped mid-call.
                let other = current_client(self.url, TOKEN).await;
                let peer = other.peer().clone();
                let pending = tokio::spawn(async move { peer.call_tool(params).await });
                tokio::time::sleep(delay).await;
                pending.abort();
                let answered = pending.await.ok().and_then(Result::ok);
                drop(other);
                (answered, conn)
            }
            Transport::Persist | Transport::Stdio => {
                let peer = conn.client.peer().clone();
                let pending = tokio::spawn(async move { peer.call_tool(params).await });
                tokio::time::sleep(delay).await;
                let mut child = conn.child.expect("a child");
                if self.transport == Transport::Persist {
                    // A host that crashes.
                    signal(&child, "KILL");
                } else {
                    // A host that closes the server's stdin and goes.
                    drop(conn.client);
                }
                let _ = tokio::time::timeout(crate::support::DEADLINE, child.wait())
                    .await
                    .expect("the dropped client's server exits");
                let answered = tokio::time::timeout(crate::support::DEADLINE, pending)
                    .await
                    .expect("the call ends with its client")
                    .ok()
                    .and_then(Result::ok);
                if self.transport == Transport::Stdio {
                    for tracked in self.sessions.drain(..) {
                        eventually("a dropped stdio server's sessions to be gone", || {
                            !alive(tracked.pid)
                        })
                        .await;
                    }
                }
                (answered, self.connect().await)
            }
        };
        if self.transport != Transport::Stdio {
            // A reply that came before the client died counts; one that did not came
            // from a call that moved no cursor.
            let tracked = &mut self.sessions[at];
            match answered.filter(|result| result.is_error == Some(false)) {
                Some(result) => {
                    let field = if echo_n.is_some() { "delta" } else { "text" };
                    tracked.account(
                        &mut self.stats,
                        "a dropped client's call",
                        ok(&result),
                        field,
                    );
                    tracked.asked += echo_n.unwrap_or(0);
                }
                None => tracked.unsure += echo_n.unwrap_or(0),
            }
        }
        if self.transport == Transport::Persist {
            // The new client sees every session of the owner.
            let listed = call(&conn.client, "pty_list", json!({})).await;
            let listed: Vec<&str> = ok(&listed)["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["id"].as_str().unwrap())
                .collect();
            for tracked in &self.sessions {
                assert!(
                    listed.contains(&tracked.id.as_str()),
                    "{} after a restart: {listed:?}",
                    tracked.id
                );
            }
        }
        conn
    }
}

/// The processes whose environment holds `mark`.
fn marked(mark: &str) -> Vec<u32> {
    let needle = format!("PTY_SESSION_SOAK={mark}");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .unwrap_or_default()
                .split(|&b| b == 0)
                .any(|var| var == needle.as_bytes())
                && alive(pid)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_over_stdio_http_and_persist_accounts_for_every_line_and_leaves_no_process() {
    if !pty_session_testkit::heavy(
        "soak_over_stdio_http_and_persist_accounts_for_every_line_and_leaves_no_process",
    ) {
        return;
    }
    let seed = std::env::var(SEED_ENV)
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    let secs: u64 = std::env::var(SECS_ENV)
        .ok()
        .and_then(|secs| secs.parse().ok())
        .unwrap_or(60);
    eprintln!("soak: seed {seed} ({SEED_ENV}={seed} replays it), {secs} s");
    let mark = format!("{}-{seed}", std::process::id());
    let runtime = Runtime::new("soak");
    let project = runtime.project("project");
    let mut http = http_server(&[], &[("PTY_SESSION_TOKEN", TOKEN)]).await;
    let until = Instant::now() + Duration::from_secs(secs);

    let workers = [Transport::Stdio, Transport::Http, Transport::Persist]
        .into_iter()
        .enumerate()
        .map(|(k, transport)| Worker {
            transport,
            rng: Rng(seed ^ (k as u64 + 1).wrapping_mul(0xa076_1d64_78bd_642f)),
            stats: Stats::default(),
            sessions: Vec::new(),
            pids: Vec::new(),
            mark: &mark,
            url: &http.url,
            runtime: &runtime,
            project: &project,
        });
    let results = futures_util::future::join_all(workers.map(|worker| {
        let transport = worker.transport;
        async move { (transport, worker.run(until).await) }
    }))
    .await;
    let mut pids = Vec::new();
    for (transport, (stats, opened)) in results {
        eprintln!("soak: {transport:?}: {stats:?}");
        assert!(
            stats.opens > 0 && stats.sends + stats.tails > 0,
            "{transport:?} did work"
        );
        pids.extend(opened);
    }

    let (stopped, said) = runtime.run(&["stop"]).await;
    assert!(stopped, "{said}");
    assert!(
        runtime.servers().is_empty(),
        "the background server stopped"
    );
    signal(&http.child, "TERM");
    assert!(exit_success(&mut http.child).await);
    eventually("no process of the soak's sessions", || {
        marked(&mark).is_empty() && pids.iter().all(|&pid| !alive(pid))
    })
    .await;
    eprintln!(
        "soak: seed {seed}: {} sessions, no process left",
        pids.len()
    );
}
