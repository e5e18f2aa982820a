//! What one look at a foreground group costs: settling reads what each task waits on
//! from `/proc` every few hundred microseconds while a call waits, and twice to confirm.
//! Three programs on real sessions, each waiting for input in its own way: `cat` in a
//! read of the terminal, python in a poll of the terminal and two descriptors of its own,
//! and python in an epoll of the terminal and nine of its own.

use std::time::Instant;

use anyhow::{Result, ensure};
use pty_session::bench::Looker;
use pty_session::{CancellationToken, Config, OpenRequest, Owner, PtyService};

use crate::Plan;
use crate::report::Report;
use crate::stats::Samples;

const POLL_OF_3: &str = "import os, select\n\
    r, w = os.pipe(); e = os.eventfd(0)\n\
    p = select.poll()\n\
    for fd in (0, r, e): p.register(fd, select.POLLIN)\n\
    print('ready', flush=True)\n\
    p.poll()";

const EPOLL_OF_10: &str = "import os, select\n\
    p = select.epoll(); p.register(0, select.EPOLLIN)\n\
    keep = []\n\
    for _ in range(3):\n    r, w = os.pipe(); keep += [r, w]; p.register(r, select.EPOLLIN)\n\
    for _ in range(6):\n    e = os.eventfd(0); keep.append(e); p.register(e, select.EPOLLIN)\n\
    print('ready', flush=True)\n\
    p.poll()";

pub async fn looks(plan: &Plan, report: &mut Report) -> Result<()> {
    let pty = PtyService::new(Config::default());
    let owner = Owner::new("bench");
    let cases = [
        ("a read of the terminal (`cat`)", "exec cat".to_owned()),
        (
            "a poll of 3 (terminal, pipe, eventfd)",
            format!("exec {} -c \"{POLL_OF_3}\"", plan.python),
        ),
        (
            "an epoll of 10 (terminal, 3 pipes, 6 eventfds)",
            format!("exec {} -c \"{EPOLL_OF_10}\"", plan.python),
        ),
    ];
    let n = if plan.quick { 200 } else { 20_000 };
    for (what, command) in cases {
        let opened = pty
            .open(&owner, OpenRequest::new(command), &CancellationToken::new())
            .await?;
        let pid = opened.pid as i32;
        let tty = std::fs::read_link(format!("/proc/{pid}/fd/0"))?;
        let mut looker = Looker::new(pid, &tty.to_string_lossy());
        let mut samples = Samples::default();
        let mut verdict = "";
        for _ in 0..n {
            let start = Instant::now();
            verdict = looker.look();
            samples.push(start.elapsed());
        }
        ensure!(verdict == "input", "{what}: the look said {verdict}");
        pty.close(&owner, &opened.session_id).await?;
        report.row(
            "one look at the foreground group",
            &format!("{what} ({n} looks)"),
            format!("{}; says input wait", samples.summary_us()),
            String::new(),
            "",
            None,
        );
    }
    pty.shutdown().await;
    Ok(())
}
