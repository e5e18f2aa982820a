//! Open, send, tail and close on simple programs.

use pty_session::{OpenRequest, SendRequest, SettleReason, Status};

use crate::support::*;

#[tokio::test]
async fn echo_exits_and_its_output_is_delivered() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, OpenRequest::new("echo hello; echo world")).await;
    assert_eq!(opened.initial_output.text, "hello\nworld\n");
    assert_eq!(opened.settled_by, SettleReason::Exit);
    assert!(matches!(
        opened.status,
        Status::Exited(pty_session::ExitStatus::Code(0))
    ));
    assert!(pty.close(&owner, &opened.session_id).await.unwrap());
}

#[tokio::test]
async fn cat_echoes_and_settles_by_input() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, OpenRequest::new("cat")).await;
    assert_eq!(opened.settled_by, SettleReason::Input, "{opened:?}");
    let sent = pty
        .send(&owner, &opened.session_id, SendRequest::new("hi"))
        .await
        .unwrap();
    assert_eq!(sent.delta.text, "hi\nhi\n");
    assert_eq!(sent.settled_by, SettleReason::Input);
    assert!(pty.close(&owner, &opened.session_id).await.unwrap());
    assert!(!pty.close(&owner, &opened.session_id).await.unwrap());
}
