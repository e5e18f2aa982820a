//! Fairness across owners: owner B's echo round trip on `cat` while owner A runs `yes`
//! floods in the same service, beside B's echo alone, in the same run.

use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use pty_session::{
    CancellationToken, Config, OpenRequest, Owner, PtyService, SendRequest, SessionId, Settle,
    SettleReason, Status,
};

use crate::Plan;
use crate::facade::Complete;
use crate::report::Report;
use crate::stats::{Samples, ms};

/// Owner B's `cat`.
struct Echo {
    pty: PtyService,
    owner: Owner,
    id: SessionId,
    complete: Complete,
}

impl Echo {
    async fn round(&mut self, data: &str) -> Result<Duration> {
        let start = Instant::now();
        let sent = self
            .pty
            .send(&self.owner, &self.id, SendRequest::new(data))
            .await?;
        let elapsed = start.elapsed();
        let whole = sent.delta.text == format!("{data}\n{data}\n")
            && sent.settled_by == SettleReason::Input;
        self.complete.count(whole, || {
            format!(
                "sent {data:?}, got {:?}, settled by {} after {elapsed:?}",
                sent.delta.text, sent.settled_by
            )
        });
        Ok(elapsed)
    }
}

/// Opens `n` `yes` floods of `owner` (settle none: they print from the start).
async fn floods(pty: &PtyService, owner: &Owner, n: usize) -> Result<Vec<SessionId>> {
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        let opened = pty
            .open(
                owner,
                OpenRequest::new("yes").settle(Settle::None),
                &CancellationToken::new(),
            )
            .await?;
        ensure!(opened.status == Status::Running, "a flood ended at once");
        ids.push(opened.session_id);
    }
    Ok(ids)
}

/// B's echo alone, then beside A's floods, then alone again (both alone blocks are one
/// sample), and how many bytes A's floods got through meanwhile.
pub async fn fairness(plan: &Plan, report: &mut Report) -> Result<()> {
    let n_floods = if plan.quick { 4 } else { 30 };
    let sends = if plan.quick { 20 } else { 200 };
    let pty = PtyService::new(Config::default());
    let (a, b) = (Owner::new("a"), Owner::new("b"));
    let opened = pty
        .open(&b, OpenRequest::new("cat"), &CancellationToken::new())
        .await?;
    let mut echo = Echo {
        pty: pty.clone(),
        owner: b.clone(),
        id: opened.session_id,
        complete: Complete::default(),
    };
    let (mut alone, mut flooded) = (Samples::default(), Samples::default());
    for i in 0..sends / 2 {
        alone.push(echo.round(&format!("a{i}")).await?);
    }
    let ids = floods(&pty, &a, n_floods).await?;
    // Let every flood reach its full rate first.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let lines_before: u64 = flood_lines(&pty, &a, &ids).await?;
    let started = Instant::now();
    for i in 0..sends {
        flooded.push(echo.round(&format!("f{i}")).await?);
    }
    let secs = started.elapsed().as_secs_f64();
    let flood_rate = (flood_lines(&pty, &a, &ids).await? - lines_before) as f64 / secs;
    pty.dispose(&a).await;
    for i in 0..sends / 2 {
        alone.push(echo.round(&format!("b{i}")).await?);
    }
    pty.dispose(&b).await;
    let workload = format!(
        "fairness: owner B's echo on `cat` beside owner A's {n_floods} `yes` floods, same service"
    );
    report.row(
        &workload,
        "facade, B alone",
        format!("{} ({} sends)", alone.summary(), alone.len()),
        String::new(),
        "",
        None,
    );
    let max = flooded.percentile(100.0);
    report.row(
        &workload,
        &format!("facade, B beside A's {n_floods} floods"),
        format!(
            "{}, max {} ms; {} replies whole, by input wait; A's floods meanwhile {:.1} M lines/s",
            flooded.summary(),
            ms(max),
            echo.complete,
            flood_rate / 1e6
        ),
        format!("+{} ms at p50", ms(flooded.p50() - alone.p50())),
        "p99 ≤ 10 ms",
        (!plan.quick).then_some(flooded.percentile(99.0) <= 10.0),
    );
    for partial in &echo.complete.partial {
        report.note(format!("fairness: a partial reply: {partial}"));
    }
    Ok(())
}

/// Lines A's floods completed so far.
async fn flood_lines(pty: &PtyService, owner: &Owner, ids: &[SessionId]) -> Result<u64> {
    let mut total = 0;
    for id in ids {
        total += pty.tail(owner, id, Some(1)).await?.total_lines;
    }
    Ok(total)
}
