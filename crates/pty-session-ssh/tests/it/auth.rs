//! Authentication: key, password and passphrase by callback, and the ways it fails.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pty_session::Owner;
use pty_session_ssh::{Error, Secret, SecretKind, SecretPrompt, Ssh, SshOptions};

use crate::support::*;

/// Connects, or panics with sshd's log.
async fn connect(sshd: &Sshd, pty: &pty_session::PtyService, options: SshOptions) -> Ssh {
    match Ssh::connect(pty, Owner::new("t"), options).await {
        Ok(ssh) => ssh,
        Err(err) => panic!("connect failed: {err}\nsshd's log:\n{}", sshd.log().await),
    }
}

#[tokio::test]
async fn key_auth_reaches_the_shell_past_the_banner_and_the_login_greeting() {
    let sshd = Sshd::start().await;
    let pty = service();
    let mut ssh = connect(&sshd, &pty, sshd.key_options()).await;
    let greeting = ssh.greeting().to_owned();
    assert!(greeting.contains(BANNER), "{greeting:?}");
    assert!(greeting.contains(PROFILE_GREETING), "{greeting:?}");
    assert!(!greeting.contains("PTYSSH"), "{greeting:?}");
    // sshd prints the machine's MOTD, when it has one.
    let motd = std::fs::read_to_string("/etc/motd").unwrap_or_default();
    if let Some(line) = motd.lines().map(str::trim).find(|line| !line.is_empty()) {
        assert!(greeting.contains(line), "{greeting:?}");
    }
    let whoami = ssh.run("whoami").await.unwrap();
    assert_eq!(
        (whoami.output.as_str(), whoami.exit_code),
        ("ptysshtest\n", 0)
    );
    ssh.close().await.unwrap();
}

#[tokio::test]
async fn password_auth_asks_the_callback_and_the_password_shows_nowhere() {
    let sshd = Sshd::start().await;
    let pty = service();
    let password = account().password.clone();
    let prompts: Arc<Mutex<Vec<SecretPrompt>>> = Arc::default();
    let seen = prompts.clone();
    let given = password.clone();
    let options = sshd.password_options("unused").secrets(move |prompt| {
        seen.lock().unwrap().push(prompt.clone());
        Some(Secret::new(given.clone()))
    });
    let mut ssh = connect(&sshd, &pty, options).await;
    {
        let prompts = prompts.lock().unwrap();
        assert_eq!(prompts.len(), 1, "{prompts:?}");
        assert_eq!(prompts[0].kind, SecretKind::Password);
        assert_eq!(prompts[0].attempt, 1);
        assert_eq!(prompts[0].text, format!("{USER}@127.0.0.1's password: "));
    }
    assert!(ssh.greeting().contains(PROFILE_GREETING));
    assert!(!ssh.greeting().contains(&password));
    let run = ssh.run("echo $USER").await.unwrap();
    assert_eq!(run.output, "ptysshtest\n");
    let tail = ssh.tail(None).await.unwrap();
    assert!(!tail.output.text.contains(&password) && !tail.pending.contains(&password));
    ssh.close().await.unwrap();
}

#[tokio::test]
async fn a_wrong_password_is_its_own_error_with_sshs_message() {
    let sshd = Sshd::start().await;
    let pty = service();
    let owner = Owner::new("t");
    let wrong = "not-the-password-4711";
    let err = Ssh::connect(&pty, owner.clone(), sshd.password_options(wrong))
        .await
        .unwrap_err();
    let Error::WrongPassword { message } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(
        *message,
        format!("{USER}@127.0.0.1: Permission denied (publickey,password).")
    );
    assert!(!format!("{err} {err:?}").contains(wrong));
    assert!(pty.sessions(&owner).is_empty());
}

#[tokio::test]
async fn a_denied_key_without_a_password_is_auth_denied() {
    let sshd = Sshd::start().await;
    let pty = service();
    sshd.trust_host_key();
    let options = sshd.options().identity(sshd.dir.join("id_other"));
    let err = Ssh::connect(&pty, Owner::new("t"), options)
        .await
        .unwrap_err();
    let Error::AuthDenied { message } = &err else {
        panic!("{err:?}");
    };
    assert!(
        message.contains("Permission denied (publickey"),
        "{message}"
    );
}

#[tokio::test]
async fn a_passphrase_comes_from_the_callback() {
    let sshd = Sshd::start().await;
    let pty = service();
    sshd.trust_host_key();
    let key = sshd.dir.join("id_passphrase");
    let asked: Arc<Mutex<Vec<SecretKind>>> = Arc::default();
    let seen = asked.clone();
    let options = sshd.options().identity(&key).secrets(move |prompt| {
        seen.lock().unwrap().push(prompt.kind.clone());
        matches!(prompt.kind, SecretKind::Passphrase { .. }).then(|| Secret::new("correct horse"))
    });
    let mut ssh = connect(&sshd, &pty, options).await;
    assert_eq!(
        *asked.lock().unwrap(),
        [SecretKind::Passphrase {
            key: key.display().to_string()
        }]
    );
    assert_eq!(ssh.run("echo in").await.unwrap().output, "in\n");
    ssh.close().await.unwrap();

    // A wrong passphrase: ssh gives up the key silently, and the server refuses.
    let options = sshd
        .options()
        .identity(&key)
        .secrets(|_| Some(Secret::new("wrong horse")));
    let err = Ssh::connect(&pty, Owner::new("t"), options)
        .await
        .unwrap_err();
    assert!(matches!(&err, Error::WrongPassword { .. }), "{err:?}");

    // Without a callback, the prompt is an error, not a hang.
    let options = sshd.options().identity(&key);
    let err = Ssh::connect(&pty, Owner::new("t"), options)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::NoSecret { prompt } if prompt.starts_with("Enter passphrase for key")),
        "{err:?}"
    );
}

#[tokio::test]
async fn too_many_authentication_failures_is_its_own_error() {
    let sshd = Sshd::start_with(SshdConfig {
        max_auth_tries: Some(2),
        ..SshdConfig::default()
    })
    .await;
    let pty = service();
    sshd.trust_host_key();
    // Two keys the server does not know, then the right one: the server gives up first.
    let options = sshd
        .options()
        .identity(sshd.dir.join("id_other"))
        .identity(sshd.dir.join("host_ed25519"))
        .identity(sshd.dir.join("id_ed25519"));
    let err = Ssh::connect(&pty, Owner::new("t"), options)
        .await
        .unwrap_err();
    let Error::TooManyAuthFailures { message } = &err else {
        panic!("{err:?}\nsshd's log:\n{}", sshd.log().await);
    };
    assert!(
        message.contains("Too many authentication failures"),
        "{message}"
    );
}

#[tokio::test]
async fn a_closed_port_is_connection_refused() {
    let pty = service();
    let port = free_port();
    let options = SshOptions::new("127.0.0.1")
        .port(port)
        .option("IdentityAgent=none")
        .known_hosts("/dev/null");
    let err = Ssh::connect(&pty, Owner::new("t"), options)
        .await
        .unwrap_err();
    let Error::ConnectionRefused { message } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(
        *message,
        format!("ssh: connect to host 127.0.0.1 port {port}: Connection refused")
    );
}

#[tokio::test]
async fn an_unknown_host_is_unreachable() {
    let pty = service();
    let options = SshOptions::new("no-such-host.invalid")
        .option("IdentityAgent=none")
        .known_hosts("/dev/null")
        .connect_timeout(Duration::from_secs(2));
    let err = Ssh::connect(&pty, Owner::new("t"), options)
        .await
        .unwrap_err();
    let Error::Unreachable { message } = &err else {
        panic!("{err:?}");
    };
    assert!(message.contains("no-such-host.invalid"), "{message}");
}

#[tokio::test]
async fn a_missing_ssh_client_is_a_start_error() {
    let pty = service();
    let options = SshOptions::new("127.0.0.1").ssh("/nonexistent/ssh");
    let err = Ssh::connect(&pty, Owner::new("t"), options)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Start { .. }), "{err:?}");
}
