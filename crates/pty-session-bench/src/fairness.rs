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

/// The limit of the same shape, with nothing but the kernel between the bytes and the
/// bench: a raw echo on `cat` alone, then beside `n_floods` raw `yes` floods (each read
/// by a thread of its own, as fast as the kernel hands the bytes over), then alone again;
/// and the floods' lines a second meanwhile (`yes` writes 3 bytes a line on a PTY).
fn raw_limit(n_floods: usize, sends: usize) -> Result<(Samples, Samples, f64)> {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
    let mut echo = crate::raw::Echo::start()?;
    let (mut alone, mut flooded) = (Samples::default(), Samples::default());
    for i in 0..sends / 2 {
        alone.push(echo.round(&format!("a{i}"))?);
    }
    let (stop, bytes) = (AtomicBool::new(false), AtomicU64::new(0));
    let rate = std::thread::scope(|scope| -> Result<f64> {
        let readers: Vec<_> = (0..n_floods)
            .map(|_| scope.spawn(|| crate::raw::flood(&["yes"], &stop, &bytes)))
            .collect();
        let measured = (|| -> Result<f64> {
            std::thread::sleep(Duration::from_millis(300));
            let before = bytes.load(Relaxed);
            let started = Instant::now();
            for i in 0..sends {
                flooded.push(echo.round(&format!("f{i}"))?);
            }
            let lines = (bytes.load(Relaxed) - before) / 3;
            Ok(lines as f64 / started.elapsed().as_secs_f64())
        })();
        stop.store(true, Relaxed);
        for reader in readers {
            reader.join().expect("a flood's reader panicked")?;
        }
        measured
    })?;
    for i in 0..sends / 2 {
        alone.push(echo.round(&format!("b{i}"))?);
    }
    Ok((alone, flooded, rate))
}

/// B's echo alone, then beside A's floods, then alone again (both alone blocks are one
/// sample), and how many bytes A's floods got through meanwhile; the raw limit of the
/// same first.
pub async fn fairness(plan: &Plan, report: &mut Report) -> Result<()> {
    let n_floods = if plan.quick { 4 } else { 30 };
    let sends = if plan.quick { 20 } else { 200 };
    let workload = format!(
        "fairness: owner B's echo on `cat` beside owner A's {n_floods} `yes` floods, same service"
    );
    let (raw_alone, raw_flooded, raw_rate) =
        tokio::task::block_in_place(|| raw_limit(n_floods, sends))?;
    report.row(
        &workload,
        "limit: a raw echo on `cat` alone",
        format!("{} ({} sends)", raw_alone.summary(), raw_alone.len()),
        String::new(),
        "",
        None,
    );
    report.row(
        &workload,
        &format!("limit: a raw echo beside {n_floods} raw floods, a reading thread each"),
        format!(
            "{}, max {} ms; the floods meanwhile {:.1} M lines/s",
            raw_flooded.summary(),
            ms(raw_flooded.percentile(100.0)),
            raw_rate / 1e6
        ),
        format!("+{} ms at p50", ms(raw_flooded.p50() - raw_alone.p50())),
        "",
        None,
    );
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
