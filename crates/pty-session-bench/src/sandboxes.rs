//! What a sandbox costs: opens, echo round trips and bulk output in a `workspace`
//! sandbox beside the same without one, alternating in blocks in the same run.

use std::time::Instant;

use anyhow::{Result, ensure};
use pty_session::{CancellationToken, Config, OpenRequest, Owner, PtyService, Sandbox, Settle};

use crate::Plan;
use crate::facade::{self, Reading};
use crate::report::Report;
use crate::stats::Samples;

/// A service whose opens run in `sandbox` by default.
fn service(sandbox: Sandbox) -> PtyService {
    let mut config = Config::default();
    config.sandbox = sandbox;
    PtyService::new(config)
}

/// One open of `cat` (no settle), timed until the open returned; closed untimed.
async fn open_once(pty: &PtyService, samples: &mut Samples) -> Result<()> {
    let owner = Owner::new("bench");
    let request = OpenRequest::new("cat").settle(Settle::None);
    let start = Instant::now();
    let opened = pty.open(&owner, request, &CancellationToken::new()).await?;
    samples.push(start.elapsed());
    pty.close(&owner, &opened.session_id).await?;
    Ok(())
}

pub async fn sandboxes(plan: &Plan, report: &mut Report) -> Result<()> {
    let outside = service(Sandbox::None);
    let inside = service(Sandbox::Workspace);
    // Both spawners started before the timing.
    open_once(&outside, &mut Samples::default()).await?;
    open_once(&inside, &mut Samples::default()).await?;

    let opens = plan.echo_sends / 2;
    let per_block = (opens / plan.blocks).max(1);
    let (mut open_out, mut open_in) = (Samples::default(), Samples::default());
    for _ in 0..plan.blocks {
        for _ in 0..per_block {
            open_once(&outside, &mut open_out).await?;
        }
        for _ in 0..per_block {
            open_once(&inside, &mut open_in).await?;
        }
    }
    let added = open_in.p50() - open_out.p50();
    let name = format!("open `cat`, {} opens each", open_out.len());
    report.row(
        &name,
        "no sandbox",
        open_out.summary(),
        String::new(),
        "",
        None,
    );
    report.row(
        &name,
        "workspace sandbox",
        open_in.summary(),
        format!("p50 +{added:.2} ms"),
        "sandbox adds ≤ 2 ms at p50",
        Some(added <= 2.0),
    );

    let mut echo_out = facade::Echo::start(&outside).await?;
    let mut echo_in = facade::Echo::start(&inside).await?;
    let (mut e_out, mut e_in) = (Samples::default(), Samples::default());
    let per_block = plan.echo_sends / plan.blocks;
    for block in 0..plan.blocks {
        for i in block * per_block..(block + 1) * per_block {
            e_out.push(echo_out.round(&i.to_string()).await?);
        }
        for i in block * per_block..(block + 1) * per_block {
            e_in.push(echo_in.round(&i.to_string()).await?);
        }
    }
    for (run, echo) in [("no sandbox", &echo_out), ("workspace sandbox", &echo_in)] {
        if let Some(first) = echo.complete.partial.first() {
            report.note(format!(
                "echo, {run}: {} replies without the whole echo, e.g. {first}",
                echo.complete.partial.len()
            ));
        }
    }
    echo_out.close().await?;
    echo_in.close().await?;
    let name = format!("echo round trip, `cat`, {} sends each", e_out.len());
    report.row(
        &name,
        "no sandbox",
        e_out.summary(),
        String::new(),
        "",
        None,
    );
    report.row(
        &name,
        "workspace sandbox",
        e_in.summary(),
        format!("p50 {:+.3} ms", e_in.p50() - e_out.p50()),
        "",
        None,
    );

    let n = plan.seq_n;
    let command = format!("seq 1 {n}");
    let (mut rates_out, mut rates_in) = (Vec::new(), Vec::new());
    for _ in 0..plan.bulk_reps {
        for (pty, rates) in [(&outside, &mut rates_out), (&inside, &mut rates_in)] {
            let bulk = facade::bulk(pty, &command, Reading::Drained).await?;
            ensure!(bulk.total_lines == n, "bulk: {} lines", bulk.total_lines);
            rates.push(crate::workloads::seq_bytes(n) as f64 / bulk.secs / 1e6);
        }
    }
    let median = |rates: &mut Vec<f64>| {
        rates.sort_by(f64::total_cmp);
        rates[rates.len() / 2]
    };
    let (out, inn) = (median(&mut rates_out), median(&mut rates_in));
    let name = format!("bulk `seq 1 {n}`, drained, {} run(s) each", plan.bulk_reps);
    report.row(
        &name,
        "no sandbox",
        format!("{out:.1} MB/s"),
        String::new(),
        "",
        None,
    );
    report.row(
        &name,
        "workspace sandbox",
        format!("{inn:.1} MB/s"),
        format!("{:.2}× outside", inn / out),
        "",
        None,
    );
    outside.shutdown().await;
    inside.shutdown().await;
    Ok(())
}
