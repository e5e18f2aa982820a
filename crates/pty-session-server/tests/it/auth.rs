//! The HTTP gate: 401 without a valid bearer token, 403 for a non-loopback Origin, a
//! generated token in a 0600 file whose path (never the token) is logged, and legacy MCP
//! sessions that only their own token can use.

use std::os::unix::fs::PermissionsExt as _;

use crate::support::{
    INITIALIZE, current_client, http_server, raw_post, scratch, server_of_alice_and_bob,
    tokens_file,
};

const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-9876543210";

#[tokio::test]
async fn missing_or_wrong_tokens_get_401() {
    let dir = scratch("auth-401");
    let tokens = tokens_file(&dir, &[("alice", ALICE), ("bob", BOB)]);
    let server = http_server(&["--tokens", tokens.to_str().unwrap()], &[]).await;

    let none = raw_post(server.addr, &[], INITIALIZE).await;
    assert_eq!(none.status, 401, "{none:?}");
    // Clients that show only the challenge (Claude Code: "Failed to connect") get a
    // reason in it.
    let challenge = none.header("www-authenticate").unwrap();
    assert!(
        challenge
            .starts_with("Bearer error=\"invalid_request\", error_description=\"no bearer token"),
        "{challenge}"
    );

    for bad in [
        "Bearer alice-token-012345678".to_owned(),   // a prefix
        "Bearer alice-token-01234567890".to_owned(), // longer
        format!("Basic {ALICE}"),
        "Bearer".to_owned(),
        format!("Bearer {ALICE}{BOB}"),
    ] {
        let response = raw_post(server.addr, &[("Authorization", &bad)], INITIALIZE).await;
        assert_eq!(response.status, 401, "{bad}: {response:?}");
        let challenge = response.header("www-authenticate").unwrap();
        assert!(challenge.contains("error_description=\""), "{challenge}");
        assert!(
            response.body.contains("Authorization: Bearer"),
            "{response:?}"
        );
    }

    for good in [ALICE, BOB] {
        let auth = format!("Bearer {good}");
        let response = raw_post(server.addr, &[("Authorization", &auth)], INITIALIZE).await;
        assert_eq!(response.status, 200, "{response:?}");
        assert!(response.header("mcp-session-id").is_some(), "{response:?}");
    }
}

#[tokio::test]
async fn non_loopback_origins_get_403() {
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", ALICE)]).await;
    let auth = format!("Bearer {ALICE}");
    for origin in [
        "https://evil.example",
        "null",
        "http://localhost.evil.example",
        "http://10.1.2.3:7717",
    ] {
        let response = raw_post(
            server.addr,
            &[("Authorization", &auth), ("Origin", origin)],
            INITIALIZE,
        )
        .await;
        assert_eq!(response.status, 403, "{origin}: {response:?}");
        // Also without a token: the Origin is refused before anything else.
        let response = raw_post(server.addr, &[("Origin", origin)], INITIALIZE).await;
        assert_eq!(response.status, 403, "{origin}: {response:?}");
    }
    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1:7717",
        "http://[::1]",
    ] {
        let response = raw_post(
            server.addr,
            &[("Authorization", &auth), ("Origin", origin)],
            INITIALIZE,
        )
        .await;
        assert_eq!(response.status, 200, "{origin}: {response:?}");
    }
}

#[tokio::test]
async fn without_tokens_one_is_generated_into_a_private_file() {
    let dir = scratch("auth-generated");
    let path = dir.join("state").join("token");
    let server = http_server(&["--token-file", path.to_str().unwrap()], &[]).await;

    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "only the user may read it");
    let mode = std::fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o777,
        0o700,
        "the directory the server made is private"
    );
    let token = std::fs::read_to_string(&path).unwrap().trim().to_owned();
    assert!(token.len() >= 32, "a long random token: {token}");
    let log = server.log();
    assert!(
        log.contains(path.to_str().unwrap()),
        "the path is logged:\n{log}"
    );
    assert!(!log.contains(&token), "the token is never logged:\n{log}");

    let client = current_client(&server.url, &token).await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 6);
    let wrong = raw_post(
        server.addr,
        &[("Authorization", "Bearer 0000000000000000000000")],
        INITIALIZE,
    )
    .await;
    assert_eq!(wrong.status, 401);
}

#[tokio::test]
async fn a_legacy_mcp_session_belongs_to_its_token() {
    let dir = scratch("auth-session");
    let (server, session) = server_of_alice_and_bob(&dir, ALICE, BOB).await;
    let alice = format!("Bearer {ALICE}");
    let bob = format!("Bearer {BOB}");
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let headers = |auth| {
        [
            ("Authorization", auth),
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ]
    };
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let theft = raw_post(server.addr, &headers(bob.as_str()), initialized).await;
    assert_eq!(theft.status, 404, "{theft:?}");
    let done = raw_post(server.addr, &headers(alice.as_str()), initialized).await;
    assert_eq!(done.status, 202, "{done:?}");
    let theft = raw_post(server.addr, &headers(bob.as_str()), list).await;
    assert_eq!(
        theft.status, 404,
        "another token cannot use alice's MCP session: {theft:?}"
    );
    let own = raw_post(server.addr, &headers(alice.as_str()), list).await;
    assert_eq!(own.status, 200, "{own:?}");
    assert!(own.body.contains("pty_open"), "{own:?}");
}

/// `PTY_SESSION_TOKEN` leaves the server's `/proc/<pid>/environ`, which any process of the
/// user (a session's too) may read, and the token still works.
#[tokio::test]
async fn the_token_is_not_in_the_servers_proc_environ() {
    let server = http_server(&[], &[("PTY_SESSION_TOKEN", ALICE)]).await;
    let pid = server.child.id().unwrap();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let shown = String::from_utf8_lossy(&environ);
    assert!(!shown.contains(ALICE), "the token's value: {shown:?}");
    assert!(!shown.contains("PTY_SESSION_TOKEN"), "its name: {shown:?}");
    // The rest of the environment is still there for /proc's readers (ps e, debuggers).
    assert!(shown.contains("PATH="), "{shown:?}");
    let auth = format!("Bearer {ALICE}");
    let response = raw_post(server.addr, &[("Authorization", &auth)], INITIALIZE).await;
    assert_eq!(response.status, 200, "{response:?}");
}
