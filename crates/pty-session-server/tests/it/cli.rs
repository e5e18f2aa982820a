//! The command line: help for a newcomer, and configuration that is refused at start with
//! a message naming the bad key or flag. None of this needs a session.

use std::process::Command;

use crate::support::{BIN, scratch};

fn run(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(BIN)
        .args(args)
        .env_remove("PTY_SESSION_TOKEN")
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[track_caller]
fn assert_mentions(text: &str, words: &[&str]) {
    for word in words {
        assert!(text.contains(word), "{word:?} missing from:\n{text}");
    }
}

#[test]
fn help_explains_the_commands() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    assert_mentions(
        &out,
        &[
            "mcp",
            "serve",
            "pty_open",
            "pty_send",
            "pty_tail",
            "pty_close",
            "stderr",
        ],
    );

    let (code, out, _) = run(&["mcp", "--help"]);
    assert_eq!(code, 0);
    assert_mentions(
        &out,
        &[
            "stdio",
            "--config",
            "--backend-type",
            "--tail-lines",
            "--scrollback-lines",
            "--scrollback-bytes",
            "--max-sessions-per-owner",
            "--max-sessions",
            "--default-env",
        ],
    );

    let (code, out, _) = run(&["serve", "--help"]);
    assert_eq!(code, 0);
    assert_mentions(
        &out,
        &[
            "/mcp",
            "--listen",
            "127.0.0.1:7717",
            "--tokens",
            "PTY_SESSION_TOKEN",
            "Bearer",
            "401",
            "403",
            "--owner-idle-timeout-secs",
            "--token-file",
            "DELETE",
        ],
    );
}

#[test]
fn a_bad_config_file_fails_at_start_naming_the_key() {
    let dir = scratch("cli-config");
    let cases = [
        ("tailLine = 5\n", "unknown field `tailLine`"),
        ("tailLines = \"many\"\n", "key `tailLines`"),
        ("maxSessions = 0\n", "maxSessions must be at least 1"),
        (
            "backendType = \"zsh\"\n",
            "backendType \"zsh\" is not a registered backend",
        ),
        ("[defaultEnv]\nPAGER = 3\n", "key `defaultEnv.PAGER`"),
        ("tailLines = [\n", "TOML parse error"),
    ];
    for (index, (toml, expected)) in cases.iter().enumerate() {
        let path = dir.join(format!("bad{index}.toml"));
        std::fs::write(&path, toml).unwrap();
        for command in ["mcp", "serve"] {
            let (code, out, err) = run(&[command, "--config", path.to_str().unwrap()]);
            assert_eq!(code, 1, "{toml:?} with {command}: {err}");
            assert!(out.is_empty(), "nothing on stdout: {out}");
            assert_mentions(&err, &[expected, path.to_str().unwrap()]);
        }
    }
}

#[test]
fn flags_are_checked_too_and_named() {
    let (code, _, err) = run(&["mcp", "--tail-lines", "0"]);
    assert_eq!(code, 2, "{err}");
    assert_mentions(&err, &["--tail-lines"]);
    let (code, _, err) = run(&["mcp", "--backend", "nope"]);
    assert_eq!(code, 1, "{err}");
    assert_mentions(&err, &["backendType \"nope\""]);
    let (code, _, err) = run(&["mcp", "--default-env", "NOEQUALS"]);
    assert_eq!(code, 2, "{err}");
    assert_mentions(&err, &["--default-env", "NAME=VALUE"]);
    let (code, _, err) = run(&["serve", "--listen", "nowhere"]);
    assert_eq!(code, 2, "{err}");
    assert_mentions(&err, &["--listen"]);
}

#[test]
fn a_good_config_file_is_accepted() {
    let dir = scratch("cli-good");
    let path = dir.join("good.toml");
    std::fs::write(
        &path,
        "backendType = \"exec\"\ntailLines = 50\nscrollbackLines = 100\nscrollbackBytes = 65536\n\
         maxSessionsPerOwner = 2\nmaxSessions = 4\nownerIdleTimeoutSecs = 60\n\
         [defaultEnv]\nPAGER = \"\"\nEDITOR = \"true\"\n",
    )
    .unwrap();
    // With stdin at EOF at once, `mcp` starts, finds no client and stops: the config
    // itself was accepted (a refused one names the key and exits before that).
    let output = Command::new(BIN)
        .args(["mcp", "--config", path.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!err.contains("config"), "{err}");
}

#[test]
fn a_non_loopback_bind_without_tokens_is_refused() {
    let (code, _, err) = run(&["serve", "--listen", "0.0.0.0:0"]);
    assert_eq!(code, 1, "{err}");
    assert_mentions(
        &err,
        &[
            "refusing to listen on 0.0.0.0:0 without configured tokens",
            "--tokens",
        ],
    );
}

/// A person who runs `pty-session mcp` on a terminal is told, in two lines on stderr, what
/// it waits for and how a client starts it; then it serves as usual. The terminal is a
/// session of our own library.
#[tokio::test]
async fn mcp_on_a_terminal_says_what_it_is_then_serves() {
    use pty_session::{Config, Owner, PtyService};
    use pty_session_server::PtyTools;
    use serde_json::{Value, json};
    use tokio_util::sync::CancellationToken;

    fn object(value: Value) -> rmcp::model::JsonObject {
        let Value::Object(object) = value else {
            unreachable!()
        };
        object
    }

    let service = PtyService::new(Config::default());
    let owner = Owner::new("person");
    let tools = PtyTools::stdio(service.clone(), owner.clone());
    let cancel = CancellationToken::new();
    let opened = tools
        .open(
            &owner,
            object(json!({
                "command": format!("exec {BIN} mcp"),
                "echo": false,
                "until": "args \\[\"mcp\"\\]",
                "timeoutMs": 20000,
            })),
            &cancel,
        )
        .await;
    let opened = opened.structured_content.expect("opened");
    let greeting = opened["initialOutput"].as_str().unwrap();
    let id = opened["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(greeting.lines().count(), 2, "two lines: {greeting}");
    assert_mentions(greeting, &["MCP", "stdin/stdout", "client", "mcp"]);

    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "person", "version": "0"}}});
    let sent = tools
        .send(
            &owner,
            object(
                json!({"id": id, "data": initialize.to_string(), "until": "serverInfo",
                          "timeoutMs": 20000}),
            ),
            &cancel,
        )
        .await;
    let sent = sent.structured_content.expect("sent");
    let reply = sent["delta"].as_str().unwrap();
    assert_mentions(reply, &["\"id\":1", "pty-session"]);
    tools.close(&owner, object(json!({"id": id}))).await;
    service.shutdown().await;
}
