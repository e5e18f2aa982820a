//! Reading ssh's terminal while it connects: which prompt it shows ([`prompt`]), and why
//! it ended ([`failure`]). Pure: no I/O, and it cannot fail — what it does not recognise
//! is [`Error::Connect`] with ssh's last words.

use pty_session::ExitStatus;

use crate::{Error, HostKeyPrompt, SecretKind};

/// The host-key question, at the end of the pending line.
pub(crate) const HOST_KEY_PROMPT: &str = r"\(yes/no[^)]*\)\? ?$";
/// A question for a secret, at the end of the pending line.
pub(crate) const SECRET_PROMPT: &str =
    r"(?i:password|passphrase|passcode|verification code|one-time)[^\n]*: ?$";

/// What ssh waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Prompt {
    /// Whether to trust an unknown host key.
    HostKey(HostKeyPrompt),
    /// A secret.
    Secret(SecretKind),
}

/// The prompt ssh shows, if the pending line is one; `lines` are the completed lines
/// before it (the host-key question's first lines are there).
pub(crate) fn prompt(lines: &[String], pending: &str) -> Option<Prompt> {
    let asked = pending.trim_end();
    if asked.ends_with(")?") && asked.contains("(yes/no") {
        return Some(Prompt::HostKey(host_key_prompt(lines, pending)));
    }
    if !asked.ends_with(':') {
        return None;
    }
    let lower = asked.to_ascii_lowercase();
    if let Some(rest) = asked.strip_prefix("Enter passphrase for key '") {
        let key = rest.rsplit_once('\'').map_or(rest, |(key, _)| key);
        return Some(Prompt::Secret(SecretKind::Passphrase {
            key: key.to_owned(),
        }));
    }
    if lower.contains("password") {
        return Some(Prompt::Secret(SecretKind::Password));
    }
    if ["passphrase", "passcode", "verification code", "one-time"]
        .iter()
        .any(|word| lower.contains(word))
    {
        return Some(Prompt::Secret(SecretKind::Other));
    }
    None
}

/// The host-key question: its lines from `The authenticity of host` to the pending line.
fn host_key_prompt(lines: &[String], pending: &str) -> HostKeyPrompt {
    let start = lines
        .iter()
        .rposition(|line| line.starts_with("The authenticity of host"))
        .unwrap_or(lines.len());
    let asked = &lines[start..];
    let host = asked
        .first()
        .and_then(|line| between(line, "host '", "'"))
        // `'name (address)'`: the name is the host.
        .map(|host| host.split(" (").next().unwrap_or(host))
        .unwrap_or_default();
    let (key_type, fingerprint) = asked
        .iter()
        .find_map(|line| {
            let (key_type, rest) = line.split_once(" key fingerprint is ")?;
            Some((key_type.trim(), rest.trim().trim_end_matches('.')))
        })
        .unwrap_or_default();
    let mut text: String = asked.iter().map(|line| format!("{line}\n")).collect();
    text.push_str(pending);
    HostKeyPrompt {
        host: host.to_owned(),
        key_type: key_type.to_owned(),
        fingerprint: fingerprint.to_owned(),
        text,
    }
}

/// What the driver did while ssh connected, which decides how a failure reads.
#[derive(Debug, Default)]
pub(crate) struct Attempt {
    /// The unknown host key the driver refused, if it did.
    pub(crate) refused_key: Option<HostKeyPrompt>,
    /// Whether the driver typed a password or a passphrase.
    pub(crate) secret_sent: bool,
}

/// Why ssh ended before the remote shell was usable, from the lines it printed.
pub(crate) fn failure(lines: &[String], status: Option<ExitStatus>, attempt: &Attempt) -> Error {
    let line_with = |needle: &str| {
        lines
            .iter()
            .rev()
            .find(|line| line.contains(needle))
            .map(|line| line.trim().to_owned())
    };
    let last_words = || {
        let words: Vec<&str> = lines
            .iter()
            .map(|line| line.trim())
            .filter(|line| !line.is_empty())
            .collect();
        words[words.len().saturating_sub(3)..].join(" / ")
    };
    // The shell that runs ssh could not find or run it.
    if matches!(status, Some(ExitStatus::Code(126 | 127)))
        && line_with("ssh").is_none_or(|l| {
            l.contains("not found") || l.contains("No such file") || l.contains("Permission denied")
        })
    {
        return Error::Start {
            status,
            output: lines.join("\n"),
        };
    }
    if line_with("REMOTE HOST IDENTIFICATION HAS CHANGED").is_some()
        || line_with("has changed and you have requested strict checking").is_some()
    {
        let message = line_with("has changed and you have requested strict checking")
            .or_else(|| line_with("Host key verification failed"))
            .unwrap_or_else(last_words);
        let host = message
            .strip_prefix("Host key for ")
            .and_then(|rest| rest.split_once(" has changed"))
            .map(|(host, _)| host.to_owned())
            .unwrap_or_default();
        // The fingerprint stands on the line after "The fingerprint for the ... key sent
        // by the remote host is".
        let fingerprint = lines
            .iter()
            .position(|line| line.contains("sent by the remote host is"))
            .and_then(|at| lines.get(at + 1))
            .map(|line| line.trim().trim_end_matches('.').to_owned())
            .unwrap_or_default();
        return Error::HostKeyChanged {
            host,
            fingerprint,
            message,
        };
    }
    if let Some(message) = line_with("Host key verification failed") {
        let key = attempt
            .refused_key
            .clone()
            .unwrap_or_else(|| HostKeyPrompt {
                host: String::new(),
                key_type: String::new(),
                fingerprint: String::new(),
                text: String::new(),
            });
        return Error::HostKeyUnknown {
            host: key.host,
            fingerprint: key.fingerprint,
            message,
        };
    }
    if let Some(message) = line_with("Too many authentication failures") {
        return Error::TooManyAuthFailures { message };
    }
    if let Some(message) = line_with("Permission denied") {
        return if attempt.secret_sent {
            Error::WrongPassword { message }
        } else {
            Error::AuthDenied { message }
        };
    }
    if let Some(message) = line_with("Connection refused") {
        return Error::ConnectionRefused { message };
    }
    for needle in [
        "Could not resolve hostname",
        "No route to host",
        "Network is unreachable",
        "Connection timed out",
        "Operation timed out",
        "Name or service not known",
        "Temporary failure in name resolution",
    ] {
        if let Some(message) = line_with(needle) {
            return Error::Unreachable { message };
        }
    }
    Error::Connect {
        status,
        message: last_words(),
    }
}

/// The text between `open` and the next `close` after it.
fn between<'a>(line: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let (_, rest) = line.split_once(open)?;
    let (inside, _) = rest.split_once(close)?;
    Some(inside)
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    /// The completed lines and the pending line of a raw transcript, the way pty-session
    /// renders them (`\r\n` and `\n` end lines, a `\r` before a line end is nothing).
    fn render(raw: &str) -> (Vec<String>, String) {
        let mut lines: Vec<String> = raw
            .split('\n')
            .map(|line| {
                line.trim_end_matches('\r')
                    .trim_start_matches('\r')
                    .to_owned()
            })
            .collect();
        let pending = lines.pop().unwrap_or_default();
        (lines, pending)
    }

    #[track_caller]
    fn check_prompt(raw: &str, expect: Expect) {
        let (lines, pending) = render(raw);
        expect.assert_debug_eq(&prompt(&lines, &pending));
    }

    #[track_caller]
    fn check_failure(raw: &str, attempt: Attempt, expect: Expect) {
        let (lines, _) = render(raw);
        expect.assert_eq(&format!(
            "{:?}",
            failure(&lines, Some(ExitStatus::Code(255)), &attempt)
        ));
    }

    #[test]
    fn prompts() {
        check_prompt(
            include_str!("../test_data/host-key-prompt.txt"),
            expect![[r#"
                Some(
                    HostKey(
                        HostKeyPrompt {
                            host: "[127.0.0.1]:40222",
                            key_type: "ED25519",
                            fingerprint: "SHA256:A6KhQKA07s6TgALzJTabcjnX6FAbwLWhRnMXrz8kEKU",
                            text: "The authenticity of host '[127.0.0.1]:40222 ([127.0.0.1]:40222)' can't be established.\nED25519 key fingerprint is SHA256:A6KhQKA07s6TgALzJTabcjnX6FAbwLWhRnMXrz8kEKU.\nThis key is not known by any other names.\nAre you sure you want to continue connecting (yes/no/[fingerprint])? ",
                        },
                    ),
                )
            "#]],
        );
        check_prompt(
            "Banner: test\r\n\rptysshtest@127.0.0.1's password: ",
            expect![[r#"
                Some(
                    Secret(
                        Password,
                    ),
                )
            "#]],
        );
        check_prompt(
            "(me@host) Password: ",
            expect![[r#"
                Some(
                    Secret(
                        Password,
                    ),
                )
            "#]],
        );
        check_prompt(
            "Enter passphrase for key '/tmp/x/id_ed25519': ",
            expect![[r#"
                Some(
                    Secret(
                        Passphrase {
                            key: "/tmp/x/id_ed25519",
                        },
                    ),
                )
            "#]],
        );
        check_prompt(
            "(me@host) Verification code: ",
            expect![[r#"
                Some(
                    Secret(
                        Other,
                    ),
                )
            "#]],
        );
        // Not prompts: a message still being written, a shell prompt.
        check_prompt("Warning: ", expect!["None\n"]);
        check_prompt("me@host:~$ ", expect!["None\n"]);
    }

    #[test]
    fn failures() {
        let refused_key = || HostKeyPrompt {
            host: "[127.0.0.1]:40222".to_owned(),
            key_type: "ED25519".to_owned(),
            fingerprint: "SHA256:A6Kh".to_owned(),
            text: String::new(),
        };
        check_failure(
            "ssh: connect to host 127.0.0.1 port 40223: Connection refused\r\r\n",
            Attempt::default(),
            expect![[
                r#"ConnectionRefused { message: "ssh: connect to host 127.0.0.1 port 40223: Connection refused" }"#
            ]],
        );
        check_failure(
            "ssh: Could not resolve hostname nonexistent.invalid: Name or service not known\r\r\n",
            Attempt::default(),
            expect![[
                r#"Unreachable { message: "ssh: Could not resolve hostname nonexistent.invalid: Name or service not known" }"#
            ]],
        );
        check_failure(
            "ssh: connect to host 192.0.2.1 port 22: Connection timed out\r\r\n",
            Attempt::default(),
            expect![[
                r#"Unreachable { message: "ssh: connect to host 192.0.2.1 port 22: Connection timed out" }"#
            ]],
        );
        let denied = "Banner: test\r\n\rme@127.0.0.1's password: \r\nme@127.0.0.1: Permission denied (publickey,password).\r\r\n";
        check_failure(
            denied,
            Attempt {
                secret_sent: true,
                ..Attempt::default()
            },
            expect![[
                r#"WrongPassword { message: "me@127.0.0.1: Permission denied (publickey,password)." }"#
            ]],
        );
        check_failure(
            denied,
            Attempt::default(),
            expect![[
                r#"AuthDenied { message: "me@127.0.0.1: Permission denied (publickey,password)." }"#
            ]],
        );
        check_failure(
            "Received disconnect from 127.0.0.1 port 40222:2: Too many authentication failures\r\r\nDisconnected from 127.0.0.1 port 40222\r\r\n",
            Attempt::default(),
            expect![[
                r#"TooManyAuthFailures { message: "Received disconnect from 127.0.0.1 port 40222:2: Too many authentication failures" }"#
            ]],
        );
        check_failure(
            "Are you sure you want to continue connecting (yes/no/[fingerprint])? \r\nHost key verification failed.\r\r\n",
            Attempt {
                refused_key: Some(refused_key()),
                ..Attempt::default()
            },
            expect![[
                r#"HostKeyUnknown { host: "[127.0.0.1]:40222", fingerprint: "SHA256:A6Kh", message: "Host key verification failed." }"#
            ]],
        );
        check_failure(
            include_str!("../test_data/host-key-changed.txt"),
            Attempt::default(),
            expect![[
                r#"HostKeyChanged { host: "[127.0.0.1]:40222", fingerprint: "SHA256:A6KhQKA07s6TgALzJTabcjnX6FAbwLWhRnMXrz8kEKU", message: "Host key for [127.0.0.1]:40222 has changed and you have requested strict checking." }"#
            ]],
        );
        check_failure(
            "kex_exchange_identification: read: Connection reset by peer\r\r\nConnection reset by 127.0.0.1 port 40222\r\r\n",
            Attempt::default(),
            expect![[
                r#"Connect { status: Some(Code(255)), message: "kex_exchange_identification: read: Connection reset by peer / Connection reset by 127.0.0.1 port 40222" }"#
            ]],
        );
    }

    #[test]
    fn a_missing_ssh_is_a_start_error() {
        let lines = vec!["sh: 1: exec: /nonexistent/ssh: not found".to_owned()];
        let err = failure(&lines, Some(ExitStatus::Code(127)), &Attempt::default());
        assert!(matches!(err, Error::Start { .. }), "{err:?}");
    }
}
