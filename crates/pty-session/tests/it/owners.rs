//! Owners: who may touch which session, dispose, limits.

use pty_session::{Config, OpenRequest, Owner, PtyService, SendRequest};

use crate::support::*;

#[tokio::test]
async fn another_owner_gets_foreign_session_everywhere() {
    let (pty, alice) = service();
    let bob = Owner::new("bob");
    let opened = open(&pty, &alice, OpenRequest::new("cat")).await;
    let id = &opened.session_id;
    let send = pty.send(&bob, id, SendRequest::new("x")).await.unwrap_err();
    let tail = pty.tail(&bob, id, None).await.unwrap_err();
    let close = pty.close(&bob, id).await.unwrap_err();
    for err in [send, tail, close] {
        assert_eq!(err.code(), "FOREIGN_SESSION", "{err}");
    }
    assert!(pty.sessions(&bob).is_empty());
    // Bob touched nothing: alice's session still answers, with nothing consumed.
    let sent = pty.send(&alice, id, SendRequest::new("y")).await.unwrap();
    assert_eq!(sent.delta.text, "y\ny\n");
    assert!(pty.close(&alice, id).await.unwrap());
    for err in [
        pty.send(&alice, id, SendRequest::new("x"))
            .await
            .unwrap_err(),
        pty.tail(&alice, id, None).await.unwrap_err(),
        pty.tail(&bob, id, None).await.unwrap_err(),
    ] {
        assert_eq!(err.code(), "UNKNOWN_SESSION", "{err}");
    }
    assert!(
        !pty.close(&bob, id).await.unwrap(),
        "closed: false for a gone id"
    );
    let unknown = pty_session::SessionId::new("nosuchid");
    assert!(!pty.close(&alice, &unknown).await.unwrap());
}

#[tokio::test]
async fn dispose_closes_exactly_the_owners_sessions() {
    let (pty, alice) = service();
    let bob = Owner::new("bob");
    let mut alice_pids = Vec::new();
    for _ in 0..3 {
        alice_pids.push(open(&pty, &alice, OpenRequest::new("cat")).await.pid as i32);
    }
    let bobs = open(&pty, &bob, OpenRequest::new("cat")).await;
    assert_eq!(pty.sessions(&alice).len(), 3);
    pty.dispose(&alice).await;
    assert!(pty.sessions(&alice).is_empty());
    assert!(alice_pids.iter().all(|&pid| !alive(pid)));
    assert!(alive(bobs.pid as i32));
    assert_eq!(pty.sessions(&bob), std::slice::from_ref(&bobs.session_id));
    let sent = pty
        .send(&bob, &bobs.session_id, SendRequest::new("still"))
        .await
        .unwrap();
    assert_eq!(sent.delta.text, "still\nstill\n");
    pty.shutdown().await;
    assert!(!alive(bobs.pid as i32));
}

#[tokio::test]
async fn limits_give_session_limit_with_the_open_ids() {
    let mut config = Config::default();
    config.max_sessions_per_owner = 2;
    config.max_sessions = 3;
    let pty = PtyService::new(config);
    let (alice, bob) = (Owner::new("alice"), Owner::new("bob"));
    let a1 = open(&pty, &alice, OpenRequest::new("cat")).await.session_id;
    let a2 = open(&pty, &alice, OpenRequest::new("cat")).await.session_id;
    let err = pty
        .open(&alice, OpenRequest::new("cat"), &Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "SESSION_LIMIT");
    let message = err.to_string();
    assert!(
        message.contains(a1.as_str()) && message.contains(a2.as_str()),
        "{message}"
    );
    let _b1 = open(&pty, &bob, OpenRequest::new("cat")).await;
    let err = pty
        .open(&bob, OpenRequest::new("cat"), &Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "SESSION_LIMIT", "the service-wide limit");
    pty.close(&alice, &a1).await.unwrap();
    let _b2 = open(&pty, &bob, OpenRequest::new("cat")).await;
    pty.shutdown().await;
}

#[tokio::test]
async fn ids_are_never_reused() {
    let (pty, owner) = service();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..20 {
        let opened = open(&pty, &owner, OpenRequest::new("true")).await;
        assert_eq!(opened.session_id.as_str().len(), 8);
        assert!(seen.insert(opened.session_id.clone()));
        pty.close(&owner, &opened.session_id).await.unwrap();
    }
}
