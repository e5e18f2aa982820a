//! Sandboxed sessions through the real binary: `sandbox` of `pty_open`, the config's
//! default, what `pty_list` and the status lines say, and the errors.

use serde_json::json;
use tokio::process::Command;

use crate::support::{
    BIN, assert_error, call, error_message, ok, open, scratch, stdio_server, stdio_server_from,
    text,
};

#[tokio::test]
async fn pty_open_runs_a_command_in_a_workspace_sandbox() {
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let dir = scratch("mcp-sandbox");
    let result = call(
        client,
        "pty_open",
        json!({
            "command": "touch ok && echo wrote; touch /etc/pty-session-x 2>&1; exit 0",
            "cwd": dir,
            "sandbox": "workspace",
        }),
    )
    .await;
    ok(&result);
    let shown = text(&result);
    assert!(shown.contains("wrote"), "{shown}");
    assert!(shown.contains("cannot touch"), "{shown}");
    assert!(shown.contains(" · sandbox workspace · "), "{shown}");
    assert!(dir.join("ok").exists());

    // A read-only session: every reply's status line says so, and so does the list.
    let (id, _) = open(
        client,
        json!({"command": "cat", "sandbox": "read-only", "settle": "none"}),
    )
    .await;
    let sent = call(client, "pty_send", json!({"id": id, "data": "hi"})).await;
    assert!(
        text(&sent).contains(" · sandbox read-only"),
        "{}",
        text(&sent)
    );
    let tail = call(client, "pty_tail", json!({"id": id})).await;
    assert!(
        text(&tail).contains(" · sandbox read-only"),
        "{}",
        text(&tail)
    );
    let screen = call(client, "pty_screen", json!({"id": id})).await;
    assert!(
        text(&screen).contains(" · sandbox read-only"),
        "{}",
        text(&screen)
    );
    let (plain, _) = open(client, json!({"command": "cat", "settle": "none"})).await;
    let sent = call(client, "pty_send", json!({"id": plain, "data": "hi"})).await;
    assert!(!text(&sent).contains("sandbox"), "{}", text(&sent));

    let listed = call(client, "pty_list", json!({})).await;
    let sandboxes: Vec<&str> = ok(&listed)["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sandbox"].as_str().unwrap())
        .collect();
    assert_eq!(sandboxes, ["workspace", "read-only", "none"]);
    assert!(
        text(&listed).contains(&format!("[{id} running · sandbox read-only · pid")),
        "{}",
        text(&listed)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_bad_sandbox_is_invalid_argument_listing_the_modes() {
    let server = stdio_server(&[]).await;
    let result = call(
        &server.client,
        "pty_open",
        json!({"command": "true", "sandbox": "strict"}),
    )
    .await;
    assert_error(&result, "INVALID_ARGUMENT");
    assert_eq!(
        error_message(&result),
        "sandbox: \"strict\" is not a sandbox; give one of \"none\", \"workspace\", \"read-only\""
    );
}

#[tokio::test]
async fn the_config_sandbox_is_the_default_of_every_open() {
    let server = stdio_server(&["--sandbox", "read-only"]).await;
    let dir = scratch("mcp-sandbox-default");
    let result = call(
        &server.client,
        "pty_open",
        json!({"command": "touch x 2>&1; exit 0", "cwd": dir}),
    )
    .await;
    assert!(text(&result).contains("cannot touch"), "{}", text(&result));
    assert!(
        text(&result).contains("sandbox read-only"),
        "{}",
        text(&result)
    );
    let result = call(
        &server.client,
        "pty_open",
        json!({"command": "touch x && echo wrote", "cwd": dir, "sandbox": "none"}),
    )
    .await;
    assert!(text(&result).contains("wrote"), "{}", text(&result));
    let _ = std::fs::remove_dir_all(dir);
}

/// The kernel check against an ABI this kernel does not offer: the server is told to
/// believe in a lower one.
#[tokio::test]
async fn a_kernel_that_cannot_enforce_the_sandbox_gives_sandbox_unavailable() {
    let mut command = Command::new(BIN);
    command.arg("mcp").env(pty_session::ABI_CEILING_VAR, "3");
    let server = stdio_server_from(command).await;
    let result = call(
        &server.client,
        "pty_open",
        json!({"command": "echo ran", "sandbox": "workspace"}),
    )
    .await;
    assert_error(&result, "SANDBOX_UNAVAILABLE");
    let message = error_message(&result);
    assert!(
        message.contains("Landlock ABI 4 for TCP rules") && message.contains("nothing was started"),
        "{message}"
    );
    let listed = call(&server.client, "pty_list", json!({})).await;
    assert_eq!(ok(&listed)["sessions"], json!([]));
}

/// A sandbox with the network on cannot call `serve` as its owner: the tokens `serve`
/// reads (`--tokens`), the generated one of another `serve` of the user's (in
/// `~/.local/state/pty-session`) and a host's config named by `--sandbox-hidden` are not
/// there to read. The same script without a sandbox reads them and gets in: the probe
/// works.
#[tokio::test]
async fn a_sandbox_with_the_network_reads_no_token_of_the_servers() {
    // Not under /tmp, which a sandbox has its own of: these must be visible but for the
    // hiding.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pty-session-it-hidden-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let home = dir.join("home");
    std::fs::create_dir_all(home.join("work")).unwrap();
    let alice = "alice-token-0123456789abcdef";
    let tokens = crate::support::tokens_file(&dir, &[("alice", alice)]);
    let host_config = home.join(".host.json");
    std::fs::write(
        &host_config,
        format!("{{\"Authorization\": \"Bearer {alice}\"}}\n"),
    )
    .unwrap();
    let serve = |args: Vec<String>| {
        let mut command = Command::new(BIN);
        command
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .env("HOME", &home)
            .env_remove("XDG_RUNTIME_DIR");
        crate::support::http_server_from(command, &[])
    };
    let mut server = serve(vec![
        "--tokens".into(),
        tokens.display().to_string(),
        "--sandbox-network".into(),
        "--sandbox-hidden".into(),
        host_config.display().to_string(),
    ])
    .await;
    // Another serve of the user's, whose token is generated into ~/.local/state.
    let mut other = serve(Vec::new()).await;
    let generated = home.join(format!(
        ".local/state/pty-session/token-{}",
        other.addr.port()
    ));
    let generated_token = std::fs::read_to_string(&generated).unwrap();
    let client = crate::support::current_client(&server.url, alice).await;
    let script = format!(
        r#"for f in {tokens} {host} {generated}; do
  t=$(grep -o '[a-zA-Z0-9_-]\{{16,\}}' "$f" 2>/dev/null | tail -1)
  for url in http://{main}/api/sessions http://{other}/api/sessions; do
    echo "$f $url: $(curl -s -o /dev/null -w '%{{http_code}}' -H "Authorization: Bearer $t" $url)"
  done
done
ls -A ~/.local/state/pty-session | wc -l | sed 's/^/listed /'"#,
        tokens = tokens.display(),
        host = host_config.display(),
        generated = generated.display(),
        main = server.addr,
        other = other.addr,
    );
    let run = |sandbox: &'static str| {
        let arguments = json!({
            "command": script,
            "cwd": home.join("work"),
            "env": {"HOME": home},
            "sandbox": sandbox,
            "timeoutMs": 30_000,
        });
        call(&client, "pty_open", arguments)
    };
    let sandboxed = text(&run("workspace").await).to_owned();
    assert!(sandboxed.contains(" · sandbox workspace"), "{sandboxed}");
    assert_eq!(sandboxed.matches(": 401").count(), 6, "{sandboxed}");
    assert!(sandboxed.contains("listed 0"), "{sandboxed}");
    assert!(!sandboxed.contains(alice) && !sandboxed.contains(generated_token.trim()));
    // Without a sandbox the same probe gets in with each token, where it is one.
    let plain = text(&run("none").await).to_owned();
    assert_eq!(plain.matches(": 200").count(), 3, "{plain}");
    client.cancel().await.unwrap();
    server.stop().await;
    other.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
