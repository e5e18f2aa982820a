//! The first connection's host-key question under each policy, and a changed key.

use std::fs;
use std::sync::{Arc, Mutex};

use pty_session::Owner;
use pty_session_ssh::{Error, HostKeyPolicy, HostKeyPrompt, Ssh};

use crate::support::*;

#[tokio::test]
async fn strict_refuses_an_unknown_key_and_shows_its_fingerprint() {
    let sshd = Sshd::start().await;
    let pty = service();
    let owner = Owner::new("t");
    let options = sshd
        .options()
        .identity(sshd.dir.join("id_ed25519"))
        .host_key(HostKeyPolicy::Strict);
    let err = Ssh::connect(&pty, owner.clone(), options)
        .await
        .unwrap_err();
    let Error::HostKeyUnknown {
        host,
        fingerprint,
        message,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(*fingerprint, sshd.fingerprint());
    assert_eq!(*host, format!("[127.0.0.1]:{}", sshd.port));
    assert_eq!(message, "Host key verification failed.");
    assert!(err.to_string().contains(&sshd.fingerprint()), "{err}");
    // Nothing was trusted, and nothing is left running.
    let known = fs::read_to_string(sshd.known_hosts()).unwrap_or_default();
    assert!(known.is_empty(), "{known}");
    assert!(pty.sessions(&owner).is_empty());
}

#[tokio::test]
async fn accept_new_trusts_on_first_use_and_strict_then_connects() {
    let sshd = Sshd::start().await;
    let pty = service();
    let options = sshd
        .options()
        .identity(sshd.dir.join("id_ed25519"))
        .host_key(HostKeyPolicy::AcceptNew);
    let ssh = Ssh::connect(&pty, Owner::new("t"), options).await.unwrap();
    let accepted = ssh.accepted_host_key().expect("ssh asked about the key");
    assert_eq!(accepted.fingerprint, sshd.fingerprint());
    assert_eq!(accepted.key_type, "ED25519");
    ssh.close().await.unwrap();
    let known = fs::read_to_string(sshd.known_hosts()).unwrap();
    assert!(
        known.starts_with(&format!("[127.0.0.1]:{} ssh-ed25519 ", sshd.port)),
        "{known}"
    );

    // The key is known now: strict connects without a question.
    let options = sshd
        .options()
        .identity(sshd.dir.join("id_ed25519"))
        .host_key(HostKeyPolicy::Strict);
    let mut ssh = Ssh::connect(&pty, Owner::new("t"), options).await.unwrap();
    assert_eq!(ssh.accepted_host_key(), None);
    assert_eq!(ssh.run("echo known").await.unwrap().output, "known\n");
    ssh.close().await.unwrap();
}

#[tokio::test]
async fn a_callback_sees_the_prompt_and_decides() {
    let sshd = Sshd::start().await;
    let pty = service();
    let seen: Arc<Mutex<Vec<HostKeyPrompt>>> = Arc::default();
    let ask = |accept: bool| {
        let seen = seen.clone();
        HostKeyPolicy::ask(move |prompt| {
            seen.lock().unwrap().push(prompt.clone());
            accept
        })
    };
    let options = |policy| {
        sshd.options()
            .identity(sshd.dir.join("id_ed25519"))
            .host_key(policy)
    };

    let err = Ssh::connect(&pty, Owner::new("t"), options(ask(false)))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::HostKeyUnknown { fingerprint, .. } if *fingerprint == sshd.fingerprint()),
        "{err:?}"
    );
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        let prompt = &seen[0];
        assert_eq!(prompt.fingerprint, sshd.fingerprint());
        assert!(
            prompt
                .text
                .starts_with("The authenticity of host '[127.0.0.1]:"),
            "{:?}",
            prompt.text
        );
        assert!(
            prompt.text.contains(&sshd.fingerprint()),
            "{:?}",
            prompt.text
        );
        assert!(
            prompt
                .text
                .ends_with("Are you sure you want to continue connecting (yes/no/[fingerprint])? "),
            "{:?}",
            prompt.text
        );
    }

    let mut ssh = Ssh::connect(&pty, Owner::new("t"), options(ask(true)))
        .await
        .unwrap();
    assert_eq!(seen.lock().unwrap().len(), 2);
    assert_eq!(ssh.run("echo accepted").await.unwrap().output, "accepted\n");
    ssh.close().await.unwrap();
}

#[tokio::test]
async fn a_changed_host_key_is_refused_whatever_the_policy() {
    let sshd = Sshd::start().await;
    let pty = service();
    // The known-hosts file holds another key for this host.
    sshd.trust(&sshd.dir.join("id_other.pub"));
    for policy in [
        HostKeyPolicy::Strict,
        HostKeyPolicy::AcceptNew,
        HostKeyPolicy::ask(|_| true),
    ] {
        let options = sshd
            .options()
            .identity(sshd.dir.join("id_ed25519"))
            .host_key(policy.clone());
        let err = Ssh::connect(&pty, Owner::new("t"), options)
            .await
            .unwrap_err();
        let Error::HostKeyChanged {
            host, fingerprint, ..
        } = &err
        else {
            panic!("{policy:?}: {err:?}");
        };
        assert_eq!(*fingerprint, sshd.fingerprint(), "{err}");
        assert_eq!(*host, format!("[127.0.0.1]:{}", sshd.port));
    }
}
