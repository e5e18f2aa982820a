//! Recordings: a real session over MCP, written as asciinema v2 and replayed.

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::*;

/// Parses a `.cast` file as asciinema v2: the header object, then the events.
fn parse_cast(text: &str) -> (Value, Vec<(f64, String, String)>) {
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next().expect("a header line")).unwrap();
    let mut events = Vec::new();
    let mut last = 0.0;
    for line in lines {
        let event: (f64, String, String) =
            serde_json::from_str(line).unwrap_or_else(|err| panic!("{line:?}: {err}"));
        assert!(event.0 >= last, "times never go back: {line}");
        assert!(["o", "i", "m", "r"].contains(&event.1.as_str()), "{line}");
        last = event.0;
        events.push(event);
    }
    (header, events)
}

/// The screen (80×24) that the output events draw, without its trailing blank rows.
fn replay(events: &[(f64, String, String)]) -> Vec<String> {
    let mut screen = vt100::Parser::new(24, 80, 0);
    for (_, kind, data) in events {
        if kind == "o" {
            screen.process(data.as_bytes());
        }
    }
    let mut rows: Vec<String> = screen
        .screen()
        .rows(0, 80)
        .map(|line| line.trim_end().to_owned())
        .collect();
    while rows.last().is_some_and(String::is_empty) {
        rows.pop();
    }
    rows
}

#[tokio::test]
async fn a_session_is_recorded_as_asciinema_v2_and_replays_to_its_screen() {
    let dir = scratch("recording");
    let record_dir = dir.join("casts");
    let server = stdio_server(&["--record-dir", record_dir.to_str().unwrap()]).await;
    let client = &server.client;
    let command = "bash --norc --noprofile -i";
    let opened = ok(&call(
        client,
        "pty_open",
        json!({"command": command, "env": {"PS1": "$ "}, "cols": 80, "rows": 24}),
    )
    .await)
    .clone();
    let id = opened["sessionId"].as_str().unwrap().to_owned();
    let mut transcript = opened["initialOutput"].as_str().unwrap().to_owned();
    let mut pending = String::new();
    for data in [
        "printf '\\033[31mred\\033[0m plain\\n'",
        "printf 'progress 10%%\\rprogress 100%%\\n'",
        "echo 'naïve 漢字 ✓'",
        "seq 1 10",
    ] {
        let sent = ok(&call(client, "pty_send", json!({"id": id, "data": data})).await).clone();
        transcript.push_str(sent["delta"].as_str().unwrap());
        pending = sent["pending"].as_str().unwrap().to_owned();
    }
    let casts: Vec<PathBuf> = std::fs::read_dir(&record_dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(casts.len(), 1, "{casts:?}");
    let mode = std::fs::metadata(&record_dir).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "the server made the directory private");
    let mode = std::fs::metadata(&casts[0]).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "a recording is private to the user");
    let path = &casts[0];
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(name.ends_with(&format!("Z-{id}.cast")), "{name}");
    assert_eq!(
        name.len(),
        "20261203T200621Z-".len() + id.len() + ".cast".len(),
        "{name}"
    );

    let mut shown: Vec<String> = transcript
        .lines()
        .map(|l| l.trim_end().to_owned())
        .collect();
    shown.push(pending.trim_end().to_owned());
    let shown = shown[shown.len().saturating_sub(24)..].to_vec();

    // Flushed as it goes: while the session runs, the file replays to what the agent was
    // shown (in a terminal emulator).
    let mut text = String::new();
    let mut replayed = Vec::new();
    let _ = tokio::time::timeout(
        DEADLINE,
        eventually("the replay to reach the transcript's end", || {
            text = std::fs::read_to_string(path).unwrap();
            replayed = replay(&parse_cast(&text).1);
            replayed == shown
        }),
    )
    .await;
    assert_eq!(
        replayed, shown,
        "the replay's screen is the end of the transcript; the recording:\n{text}"
    );
    ok(&call(client, "pty_close", json!({"id": id})).await);
    let (header, events) = parse_cast(&text);
    assert_eq!(header["version"], 2);
    assert_eq!(header["width"], 80);
    assert_eq!(header["height"], 24);
    assert_eq!(header["command"], command);
    assert_eq!(header["env"]["TERM"], "xterm-256color");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let started = header["timestamp"].as_u64().unwrap();
    assert!(now.abs_diff(started) < 600, "{started} vs {now}");
    assert!(
        events.iter().all(|(_, kind, _)| kind == "o"),
        "output only by default"
    );
    assert!(!text.contains("\"i\","), "no input events by default");
    assert!(shown.iter().any(|line| line == "red plain"));
    assert!(shown.iter().any(|line| line == "progress 100%"));

    // A v2 player prints the same output, so its session shows the same lines. The
    // prompt the recording ends with is completed by the newline asciinema ends with.
    assert_eq!(
        asciinema_cat(client, path).await,
        format!("{transcript}{pending}\n")
    );
    drop(server);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_record_dir_that_cannot_be_written_is_refused_at_start() {
    let dir = scratch("record-dir-bad");
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = tokio::process::Command::new(BIN)
        .args(["mcp", "--record-dir"])
        .arg(file.join("casts"))
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("recordDir") && stderr.contains("cannot be created"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Plays `path` with asciinema (a v2 player; it wants a terminal, so it runs in a session
/// of its own) and returns what it printed; panics unless it exits 0.
async fn asciinema_cat(client: &Client, path: &std::path::Path) -> String {
    // A home of its own: the user's asciinema configuration plays no part.
    let home = path.with_extension("home");
    std::fs::create_dir_all(&home).unwrap();
    let arguments = json!({
        "command": format!("asciinema cat {}", path.display()),
        "cols": 80,
        "rows": 24,
        "timeoutMs": 120_000,
    });
    let played = ok(&call(client, "pty_open", at_home(arguments, &home)).await).clone();
    let _ = std::fs::remove_dir_all(home);
    assert_eq!(played["status"], "exited", "{played}");
    assert_eq!(
        played["exitCode"],
        0,
        "asciinema plays {}: {played}\n{}",
        path.display(),
        std::fs::read_to_string(path).unwrap_or_default()
    );
    played["initialOutput"].as_str().unwrap().to_owned()
}

/// The one recording in `dir` of session `id`.
fn cast_of(dir: &std::path::Path, id: &str) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.to_string_lossy().ends_with(&format!("-{id}.cast")))
        .unwrap_or_else(|| panic!("no recording of {id} in {}", dir.display()))
}

/// A session that has printed nothing has a valid recording from its open on, and still
/// after it closed without output; a resized session's recording has the resize as an
/// `"r"` event and replays, at the sizes it was drawn at, to the session's last screen.
#[tokio::test]
async fn a_silent_session_and_a_resized_one_replay() {
    let dir = scratch("recording-resize");
    let record_dir = dir.join("casts");
    let server = stdio_server(&["--record-dir", record_dir.to_str().unwrap()]).await;
    let client = &server.client;

    let (silent, _) = open(client, json!({"command": "sleep 60", "settle": "none"})).await;
    let path = cast_of(&record_dir, &silent);
    let (header, events) = parse_cast(&std::fs::read_to_string(&path).unwrap());
    assert_eq!((header["version"].as_u64(), events.len()), (Some(2), 0));
    asciinema_cat(client, &path).await;
    ok(&call(client, "pty_close", json!({"id": silent})).await);
    let (header, events) = parse_cast(&std::fs::read_to_string(&path).unwrap());
    assert_eq!((header["width"].as_u64(), events.len()), (Some(120), 0));
    asciinema_cat(client, &path).await;

    // vim at 120x40, then the agent makes it 80x24: vim redraws at that size.
    std::fs::write(dir.join("notes.txt"), "hello from vim\n").unwrap();
    let command = format!(
        "vim -u NONE -N -c 'set laststatus=2' {}",
        dir.join("notes.txt").display()
    );
    let (vim, _) = open(
        client,
        json!({"command": command, "cols": 120, "rows": 40, "settle": "quiet", "quietMs": 300}),
    )
    .await;
    call(
        client,
        "pty_send",
        json!({"id": vim, "data": "", "cols": 80, "rows": 24, "settle": "quiet", "quietMs": 300}),
    )
    .await;
    let screen = ok(&call(client, "pty_screen", json!({"id": vim})).await).clone();
    assert_eq!(
        (screen["cols"].as_u64(), screen["rows"].as_u64()),
        (Some(80), Some(24))
    );
    let want: Vec<String> = screen["screen"]
        .as_str()
        .unwrap()
        .lines()
        .map(|line| line.trim_end().to_owned())
        .collect();
    assert!(
        want.iter().any(|line| line.contains("notes.txt")),
        "{want:?}"
    );

    let path = cast_of(&record_dir, &vim);
    // The writer flushes as it goes: wait until the replay reaches the screen.
    let (mut events, mut replayed) = (Vec::new(), Vec::new());
    let _ = tokio::time::timeout(
        DEADLINE,
        eventually("the replay to reach the screen", || {
            let header;
            (header, events) = parse_cast(&std::fs::read_to_string(&path).unwrap());
            replayed = replay_sized(&header, &events);
            replayed == want
        }),
    )
    .await;
    assert_eq!(replayed, want, "the replay ends on the session's screen");
    let resizes: Vec<&str> = events
        .iter()
        .filter(|(_, kind, _)| kind == "r")
        .map(|(_, _, data)| data.as_str())
        .collect();
    assert_eq!(resizes, ["80x24"]);
    ok(&call(client, "pty_close", json!({"id": vim})).await);
    asciinema_cat(client, &path).await;
    drop(server);
    let _ = std::fs::remove_dir_all(dir);
}

/// The screen a recording's events draw at the header's size, following its `"r"`
/// events, without trailing blank rows.
fn replay_sized(header: &Value, events: &[(f64, String, String)]) -> Vec<String> {
    let (cols, rows) = (
        header["width"].as_u64().unwrap() as u16,
        header["height"].as_u64().unwrap() as u16,
    );
    let mut screen = vt100::Parser::new(rows, cols, 0);
    for (_, kind, data) in events {
        match kind.as_str() {
            "o" => screen.process(data.as_bytes()),
            "r" => {
                let (cols, rows) = data.split_once('x').expect("COLSxROWS");
                screen
                    .screen_mut()
                    .set_size(rows.parse().unwrap(), cols.parse().unwrap());
            }
            _ => {}
        }
    }
    let (_, cols) = screen.screen().size();
    let mut lines: Vec<String> = screen
        .screen()
        .rows(0, cols)
        .map(|line| line.trim_end().to_owned())
        .collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}
