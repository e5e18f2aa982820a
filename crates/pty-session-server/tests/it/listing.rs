//! `pty_list` and the limits that count running sessions only, through real MCP clients
//! over stdio and HTTP.

use serde_json::json;

use crate::support::{
    Client, assert_error, bash, call, current_client, http_server, ok, open, stdio_server, text,
};

async fn list(client: &Client) -> (serde_json::Value, String) {
    let result = call(client, "pty_list", json!({})).await;
    (ok(&result)["sessions"].clone(), text(&result).to_owned())
}

/// Three opens, one exited; then 40 exited sessions that do not block an open.
async fn listing(client: &Client) {
    let (none, said) = list(client).await;
    assert_eq!((none, said.as_str()), (json!([]), "[no sessions]"));
    let (cat, cat_pid) = open(client, json!({"command": "exec cat", "cwd": "/tmp"})).await;
    let (done, _) = open(client, json!({"command": "echo bye; exit 3"})).await;
    let (shell, _) = open(client, bash()).await;
    let (sessions, said) = list(client).await;
    let ids: Vec<_> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].clone())
        .collect();
    assert_eq!(ids, [json!(cat), json!(done), json!(shell)]);
    let first = &sessions[0];
    assert_eq!(first["command"], "exec cat");
    assert_eq!(first["status"], "running");
    assert_eq!(first["pid"], cat_pid);
    assert_eq!(first["cwd"], "/tmp");
    assert_eq!(first["altScreen"], false);
    assert!(
        first["startedAt"].as_str().unwrap().ends_with('Z'),
        "{first}"
    );
    assert_eq!(
        (
            sessions[1]["status"].as_str(),
            sessions[1]["exitCode"].as_i64()
        ),
        (Some("exited"), Some(3))
    );
    assert_eq!(
        (
            sessions[2]["status"].as_str(),
            sessions[2]["pending"].as_str()
        ),
        (Some("running"), Some("$ "))
    );
    assert_eq!(said.lines().count(), 3, "one line per session: {said}");
    assert!(
        said.lines()
            .nth(1)
            .unwrap()
            .contains("exited · exit code 3"),
        "{said}"
    );

    let mut exited = Vec::new();
    for i in 0..40 {
        let result = call(
            client,
            "pty_open",
            json!({"command": format!("echo run {i}")}),
        )
        .await;
        assert_eq!(ok(&result)["status"], "exited");
        exited.push(ok(&result)["sessionId"].as_str().unwrap().to_owned());
    }
    let (sessions, _) = list(client).await;
    let listed: Vec<_> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect();
    // 32 exited at most: the 40 runs and `done` make 41, so the 9 oldest went: `done` and
    // the first 8 runs.
    let mut expected = vec![cat.clone(), shell.clone()];
    expected.extend(exited[8..].iter().cloned());
    assert_eq!(listed, expected, "{sessions:#}");
    assert_error(
        &call(client, "pty_tail", json!({"id": done})).await,
        "UNKNOWN_SESSION",
    );
    assert_error(
        &call(client, "pty_tail", json!({"id": exited[7]})).await,
        "UNKNOWN_SESSION",
    );
    let tail = call(client, "pty_tail", json!({"id": exited[8], "from": 0})).await;
    assert_eq!(ok(&tail)["text"], "run 8\n");
    for id in listed {
        ok(&call(client, "pty_close", json!({"id": id})).await);
    }
}

#[tokio::test]
async fn list_and_exited_sessions_over_stdio() {
    let server = stdio_server(&[]).await;
    listing(&server.client).await;
}

#[tokio::test]
async fn list_and_exited_sessions_over_http() {
    let token = "tok-listing-0123456789";
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", token)]).await;
    let client = current_client(&server.url, token).await;
    listing(&client).await;
}

#[tokio::test]
async fn the_session_limit_names_the_running_sessions() {
    let server = stdio_server(&["--max-sessions-per-owner", "2"]).await;
    let client = &server.client;
    open(client, json!({"command": "true"})).await;
    let (a, _) = open(client, json!({"command": "exec cat"})).await;
    let (b, _) = open(client, json!({"command": "sleep 600", "settle": "none"})).await;
    let result = call(client, "pty_open", json!({"command": "exec cat"})).await;
    assert_error(&result, "SESSION_LIMIT");
    let said = text(&result);
    assert!(
        said.contains(&format!("{a} (exec cat), {b} (sleep 600)")),
        "{said}"
    );
    let (sessions, _) = list(client).await;
    assert_eq!(
        sessions.as_array().unwrap().len(),
        3,
        "the exited one is still listed"
    );
}
