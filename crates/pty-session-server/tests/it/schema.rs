//! The golden snapshot of `tools/list`: names, descriptions, input and output schemas.
//! The descriptions are the tool methods' doc comments; refresh with `UPDATE_EXPECT=1`.

use expect_test::expect_file;

use crate::support::{
    current_client, http_server, legacy_client, scratch, stdio_server, tokens_file,
};

async fn tools_json(client: &crate::support::Client) -> String {
    let mut tools = client.list_all_tools().await.expect("tools/list");
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    serde_json::to_string_pretty(&tools).unwrap() + "\n"
}

#[tokio::test]
async fn tools_list_matches_the_snapshot() {
    let server = stdio_server(&[]).await;
    let tools = tools_json(&server.client).await;
    expect_file!["tools_list.json"].assert_eq(&tools);
    let names: Vec<_> = server
        .client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    for name in [
        "pty_open",
        "pty_send",
        "pty_tail",
        "pty_screen",
        "pty_list",
        "pty_close",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    assert_eq!(names.len(), 6);
}

#[tokio::test]
async fn http_serves_the_same_tools_on_both_protocols() {
    let dir = scratch("schema-http");
    let token = "tok-schema-0123456789";
    let tokens = tokens_file(&dir, &[("alice", token)]);
    let server = http_server(&["--tokens", tokens.to_str().unwrap()], &[]).await;
    let stdio = stdio_server(&[]).await;
    let expected = tools_json(&stdio.client).await;
    let current = current_client(&server.url, token).await;
    assert_eq!(tools_json(&current).await, expected);
    let legacy = legacy_client(&server.url, token).await;
    assert_eq!(tools_json(&legacy).await, expected);
}
