//! Plain `ssh` on a session, logged into a local OpenSSH server (the testkit's, as the
//! ssh tests start it): what settling by the remote prompt costs beside `until` on the
//! same prompt, send for send in one session.

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

/// `echo hi` over ssh, alternately settled by the prompt (the default settle) and by
/// `until` matching it. Needs sshd and root (it logs into a test account), as the ssh
/// tests do; elsewhere the row is noted, not measured.
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
    let (mut by_prompt, mut by_until) = (Samples::default(), Samples::default());
    let (mut prompt_whole, mut until_whole) = (Complete::default(), Complete::default());
    for _ in 0..plan.ssh_rounds {
        for until in [false, true] {
            let mut request = SendRequest::new("echo hi").timeout(Duration::from_millis(20_000));
            if until {
                request = request.until(r"\$ $");
            }
            let start = std::time::Instant::now();
            let sent = pty.send(&owner, &opened.session_id, request).await?;
            let took = start.elapsed();
            let (times, complete, want) = if until {
                (&mut by_until, &mut until_whole, SettleReason::Match)
            } else {
                (&mut by_prompt, &mut prompt_whole, SettleReason::Prompt)
            };
            times.push(took);
            let whole = sent.settled_by == want && sent.delta.text.lines().any(|l| l == "hi");
            complete.count(whole, || {
                format!("{:?} {}", sent.delta.text, sent.settled_by)
            });
        }
    }
    pty.shutdown().await;
    drop(sshd);
    let name = format!(
        "ssh `echo hi` to a local sshd, plain `ssh` on the session, {} sends each",
        plan.ssh_rounds
    );
    for partial in prompt_whole.partial.iter().chain(&until_whole.partial) {
        report.note(format!("ssh: a reply not whole: {partial}"));
    }
    report.row(
        &name,
        "facade, `until` the prompt (`\\$ $`)",
        format!("{}; {until_whole} whole, by match", by_until.summary()),
        String::new(),
        "",
        None,
    );
    report.row(
        &name,
        "facade, the default settle (by the remote prompt)",
        format!("{}; {prompt_whole} whole, by prompt", by_prompt.summary()),
        format!(
            "+{} ms at p50 over `until`",
            ms(by_prompt.p50() - by_until.p50())
        ),
        "",
        None,
    );
    Ok(())
}
