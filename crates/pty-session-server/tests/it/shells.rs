//! Shell integration through MCP: `commands` in the replies of pty_open, pty_send and
//! pty_tail, the status line naming a failed last command, pty_list's cwd and last
//! status, `shellIntegration: false` and the config key.

use serde_json::{Value, json};

use crate::support::{Client, at_home, call, ok, scratch, stdio_server, text};

/// `bash` with a private home whose .bashrc sets the prompt `$ `.
fn bash_at(home: &std::path::Path) -> Value {
    std::fs::create_dir_all(home).unwrap();
    std::fs::write(home.join(".bashrc"), "PS1='$ '\n").unwrap();
    let mut arguments = at_home(json!({"command": "bash", "timeoutMs": 20000}), home);
    arguments["cwd"] = json!(home.to_str().unwrap());
    arguments
}

async fn send(client: &Client, id: &str, data: &str) -> (Value, String) {
    let result = call(
        client,
        "pty_send",
        json!({"id": id, "data": data, "timeoutMs": 20000}),
    )
    .await;
    (ok(&result).clone(), text(&result).to_owned())
}

#[tokio::test]
async fn replies_carry_each_commands_exit_status() {
    let home = scratch("shells-mcp");
    let server = stdio_server(&[]).await;
    let client = &server.client;
    let opened = call(client, "pty_open", bash_at(&home)).await;
    let opened = ok(&opened);
    assert_eq!(opened["settledBy"], "prompt", "{opened}");
    assert!(opened.get("commands").is_none(), "{opened}");
    let id = opened["sessionId"].as_str().unwrap();

    let (sent, said) = send(client, id, "false").await;
    assert_eq!(sent["commands"][0]["command"], "false", "{sent}");
    assert_eq!(sent["commands"][0]["exitCode"], 1);
    assert!(sent["commands"][0]["durationMs"].is_u64());
    assert!(
        said.ends_with(&format!(
            "[{id} running · exit 1 · settled by prompt · pending: \"$ \"]"
        )),
        "{said}"
    );
    let (sent, said) = send(client, id, "mkdir 'd 1' && cd 'd 1'").await;
    assert_eq!(sent["commands"][0]["exitCode"], 0, "{sent}");
    assert!(!said.contains("exit"), "{said}");

    // A command that runs past the reply comes with the tail that sees it end.
    let result = call(
        client,
        "pty_send",
        json!({"id": id, "data": "sleep 1; sh -c 'exit 7'", "timeoutMs": 200}),
    )
    .await;
    assert!(ok(&result).get("commands").is_none(), "{result:?}");
    let result = call(client, "pty_tail", json!({"id": id, "timeoutMs": 20000})).await;
    let tail = ok(&result);
    assert_eq!(tail["settledBy"], "prompt", "{tail}");
    assert_eq!(tail["commands"][0]["exitCode"], 7, "{tail}");
    assert!(text(&result).contains("· exit 7 ·"), "{}", text(&result));

    let result = call(client, "pty_list", json!({})).await;
    let listed = &ok(&result)["sessions"][0];
    assert_eq!(
        listed["cwd"],
        home.join("d 1").to_str().unwrap(),
        "{listed}"
    );
    assert_eq!(listed["lastExitCode"], 7);
    assert!(
        text(&result).contains("last command exit 7"),
        "{}",
        text(&result)
    );
    let _ = std::fs::remove_dir_all(&home);
}

#[tokio::test]
async fn integration_is_turned_off_by_the_open_or_the_config() {
    let home = scratch("shells-off");
    for (flags, off) in [
        (&[][..], true),
        (&["--shell-integration", "false"][..], false),
    ] {
        let server = stdio_server(flags).await;
        let client = &server.client;
        let mut arguments = bash_at(&home);
        if off {
            arguments["shellIntegration"] = json!(false);
        }
        let opened = call(client, "pty_open", arguments).await;
        let id = ok(&opened)["sessionId"].as_str().unwrap().to_owned();
        assert_eq!(ok(&opened)["settledBy"], "input", "{opened:?}");
        let (sent, said) = send(client, &id, "false").await;
        assert!(sent.get("commands").is_none(), "{sent}");
        assert!(!said.contains("exit 1"), "{said}");
        // And an open may still ask for it where the config turned it off.
        if !off {
            let mut arguments = bash_at(&home);
            arguments["shellIntegration"] = json!(true);
            let opened = call(client, "pty_open", arguments).await;
            assert_eq!(ok(&opened)["settledBy"], "prompt", "{opened:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&home);
}
