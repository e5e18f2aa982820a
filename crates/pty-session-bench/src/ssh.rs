//! Plain `ssh` on a session, logged into a local OpenSSH server (the testkit's, as the
//! ssh tests start it): what settling by the remote prompt costs beside `until` on the
//! same prompt, send for send in one session: the shell's prompt, then a remote python
//! REPL's.

use std::time::Duration;

use anyhow::{Context, Result};
use pty_session::{
    CancellationToken, Config, OpenRequest, Owner, PtyService, SendRequest, Settle, SettleReason,
};
use pty_session_testkit::sshd::Sshd;

use crate::Plan;
use crate::facade::Complete;
use crate::report::Report;
use crate::stats::{Samples, ms};

/// `echo hi` over ssh, then `print(6*7)` in a remote python REPL, each alternately
/// settled by the prompt (the default settle) and by `until` matching it. Needs sshd and
/// root (it logs into a test account), as the ssh tests do; elsewhere the row is noted,
/// not measured.
pub async fn ssh(plan: &Plan, report: &mut Report) -> Result<()> {
    if !rustix::process::geteuid().is_root() || !pty_session_testkit::sshd::installed() {
        report.note("NOT MEASURED: ssh round trips (they need sshd and root, as the ssh tests)");
        return Ok(());
    }
    let sshd = Sshd::start().await;
    let pty = PtyService::new(Config::default());
    let owner = Owner::new("bench");
    // The login, by a quiet settle with `until`, so that the set-up does not depend on
    // the settles measured.
    let login = OpenRequest::new(sshd.ssh_command("id_ed25519", true))
        .settle(Settle::Quiet)
        .quiet(Duration::from_millis(20_000))
        .until(r"\$ $")
        .timeout(Duration::from_millis(20_000));
    let opened = pty
        .open(&owner, login, &CancellationToken::new())
        .await
        .context("open ssh")?;
    anyhow::ensure!(
        opened.settled_by == SettleReason::Match,
        "no shell prompt over ssh: {:?} {:?}\nsshd's log:\n{}",
        opened.initial_output.text,
        opened.pending,
        sshd.log().await
    );
    let session = Remote {
        pty: &pty,
        owner: &owner,
        id: &opened.session_id,
        rounds: plan.ssh_rounds,
    };
    let shell = session.measure("echo hi", r"\$ $", "hi").await?;
    // The remote python REPL in the same session: a program's prompt, not the shell's.
    let start = SendRequest::new("/usr/bin/python3 -q")
        .until(r"^>>> $")
        .timeout(Duration::from_millis(20_000));
    let started = pty.send(&owner, &opened.session_id, start).await?;
    anyhow::ensure!(
        started.settled_by == SettleReason::Match,
        "no python prompt over ssh: {:?} {:?}",
        started.delta.text,
        started.pending
    );
    let python = session.measure("print(6*7)", r"^>>> $", "42").await?;
    pty.shutdown().await;
    drop(sshd);
    let rows = [
        (
            format!(
                "ssh `echo hi` to a local sshd, plain `ssh` on the session, {} sends each",
                plan.ssh_rounds
            ),
            "`\\$ $`",
            shell,
        ),
        (
            format!(
                "ssh, remote python3's `print(6*7)` at `>>> `, in the same session, {} sends each",
                plan.ssh_rounds
            ),
            "`^>>> $`",
            python,
        ),
    ];
    for (name, until, measured) in rows {
        measured.report(&name, until, report);
    }
    Ok(())
}

/// One ssh session to measure sends in.
struct Remote<'a> {
    pty: &'a PtyService,
    owner: &'a Owner,
    id: &'a pty_session::SessionId,
    rounds: usize,
}

/// The times of one send, settled by the prompt and by `until`, alternately.
struct Measured {
    by_prompt: Samples,
    by_until: Samples,
    prompt_whole: Complete,
    until_whole: Complete,
}

impl Remote<'_> {
    /// Sends `data` `rounds` times each way: with the default settle (by the remote
    /// prompt) and with `until` matching the prompt; a reply is whole when it holds the
    /// line `line` and ended as asked.
    async fn measure(&self, data: &str, until: &str, line: &str) -> Result<Measured> {
        let mut measured = Measured {
            by_prompt: Samples::default(),
            by_until: Samples::default(),
            prompt_whole: Complete::default(),
            until_whole: Complete::default(),
        };
        for _ in 0..self.rounds {
            for with_until in [false, true] {
                let mut request = SendRequest::new(data).timeout(Duration::from_millis(20_000));
                if with_until {
                    request = request.until(until);
                }
                let start = std::time::Instant::now();
                let sent = self.pty.send(self.owner, self.id, request).await?;
                let took = start.elapsed();
                let (times, complete, want) = if with_until {
                    (
                        &mut measured.by_until,
                        &mut measured.until_whole,
                        SettleReason::Match,
                    )
                } else {
                    (
                        &mut measured.by_prompt,
                        &mut measured.prompt_whole,
                        SettleReason::Prompt,
                    )
                };
                times.push(took);
                let whole = sent.settled_by == want && sent.delta.text.lines().any(|l| l == line);
                complete.count(whole, || {
                    format!("{:?} {}", sent.delta.text, sent.settled_by)
                });
            }
        }
        Ok(measured)
    }
}

impl Measured {
    /// The two rows, `until` first, then the prompt with its cost over `until`.
    fn report(&self, name: &str, until: &str, report: &mut Report) {
        for partial in self
            .prompt_whole
            .partial
            .iter()
            .chain(&self.until_whole.partial)
        {
            report.note(format!("ssh: a reply not whole: {partial}"));
        }
        report.row(
            name,
            &format!("facade, `until` the prompt ({until})"),
            format!(
                "{}; {} whole, by match",
                self.by_until.summary(),
                self.until_whole
            ),
            String::new(),
            "",
            None,
        );
        let over = self.by_prompt.p50() - self.by_until.p50();
        report.row(
            name,
            "facade, the default settle (by the remote prompt)",
            format!(
                "{}; {} whole, by prompt",
                self.by_prompt.summary(),
                self.prompt_whole
            ),
            format!("+{} ms at p50 over `until`", ms(over)),
            "≤ 20 ms over `until` at p50",
            Some(over <= 20.0),
        );
    }
}
