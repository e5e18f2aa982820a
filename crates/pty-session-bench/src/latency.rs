//! Where the time of one echo goes, and echoes in many sessions at once.
//!
//! The breakdown: `cat` echoes through the facade, MCP stdio and MCP HTTP with the
//! library's timeline on (`pty_session::timeline`: the monotonic clock at each stage of a
//! call, one line a call), and the client's own stamps at the call and the reply on the
//! same clock. Each stage's time is the median, over the calls, of the time from the
//! stage before it; the facade's timeline runs in this process (so this workload runs
//! last), the servers' in theirs.
//!
//! The concurrent row: 50 `cat` sessions of one service, each driven by a task of its
//! own sending one echo after another (an agent per session), beside 50 raw PTY echo
//! loops, one thread each, on the same machine in the same run.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use pty_session::{Config, PtyService};

use crate::facade;
use crate::report::Report;
use crate::stats::{Samples, median, ms};
use crate::{Plan, mcp, raw};

/// Sessions of the concurrent row.
const CONCURRENT: usize = 50;

/// One call's stages: names and monotonic nanoseconds, in order.
type Stages = Vec<(String, u64)>;

/// A stage boundary: how to find it in a call's stages, after the one before it.
#[derive(Clone, Copy)]
enum Anchor {
    /// The first occurrence of the stage.
    First(&'static str),
    /// The last occurrence before the first `before` (the last read of the drain before
    /// the settle's end).
    LastBefore(&'static str, &'static str),
    /// The last occurrence at all (the HTTP body's last frame).
    Last(&'static str),
}

/// The stages of one transport, as (what happens up to it, where it ends).
fn segments(transport: Transport) -> Vec<(&'static str, Anchor)> {
    use Anchor::{First, Last, LastBefore};
    let mut list: Vec<(&'static str, Anchor)> = Vec::new();
    match transport {
        Transport::Facade => {}
        Transport::Stdio => list.extend([
            (
                "client: serialise, write the pipe; server: read the line",
                First("read"),
            ),
            ("JSON parse of the line (framing)", First("parsed")),
            (
                "rmcp: hand-off to its service task, dispatch to the tool",
                First("tool"),
            ),
            ("owner, arguments (wire), to the library", First("send")),
        ]),
        Transport::Http => list.extend([
            (
                "client: serialise, HTTP write; server: the request head",
                First("http.head"),
            ),
            (
                "Host/Origin checks, token, the body read",
                First("http.body"),
            ),
            (
                "rmcp: session lookup, parse, dispatch to the tool",
                First("tool"),
            ),
            ("owner, arguments (wire), to the library", First("send")),
        ]),
    }
    list.extend([
        ("checks, session lookup, write lock", First("locked")),
        (
            "the foreground group's mark before the write (procfs)",
            First("probed"),
        ),
        ("write into the master", First("written")),
        (
            "the echo on its way back: tty, the drain's wake-up",
            First("drain.wake"),
        ),
        (
            "the drain's read and render of the last output (cat's copy), its notice",
            LastBefore("drain", "settled"),
        ),
        (
            "to the first look that sees input wait",
            First("look.input"),
        ),
        (
            "input wait held and confirmed (≥ 100 µs by the settle's rule), settle's end",
            First("settled"),
        ),
        ("the reply: lines read, cursor moved", First("send.done")),
    ]);
    match transport {
        Transport::Facade => {}
        Transport::Stdio => list.extend([
            ("the tool result built (structured, text)", First("result")),
            (
                "rmcp: hand-off to the writer, JSON serialise",
                First("serialised"),
            ),
            ("stdout write and flush", First("flushed")),
            ("client: read, parse, return", Last("client.reply")),
        ]),
        Transport::Http => list.extend([
            ("the tool result built (structured, text)", First("result")),
            (
                "rmcp: the SSE event serialised, the body's frame polled",
                Last("http.frame"),
            ),
            (
                "hyper's write; client: read, parse, return",
                Last("client.reply"),
            ),
        ]),
    }
    list
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Transport {
    Facade,
    Stdio,
    Http,
}

/// Reads the timeline file: the calls that sent (`send`), in order.
fn read_timeline(path: &Path) -> Result<Vec<Stages>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("read the timeline {}", path.display()))?;
    let mut calls = Vec::new();
    for line in text.lines() {
        let stages: Stages = line
            .split(' ')
            .filter_map(|pair| {
                let (name, at) = pair.split_once('=')?;
                Some((name.to_owned(), at.parse().ok()?))
            })
            .collect();
        if stages.iter().any(|(name, _)| name == "send") {
            calls.push(stages);
        }
    }
    Ok(calls)
}

/// Each segment's duration in µs for one call, where its boundaries were found.
fn split(stages: &Stages, segments: &[(&'static str, Anchor)]) -> Vec<Option<f64>> {
    let mut out = Vec::with_capacity(segments.len());
    let mut from = 0usize;
    for &(_, anchor) in segments {
        let found = match anchor {
            Anchor::First(name) => stages[from..]
                .iter()
                .position(|(n, _)| n == name)
                .map(|i| from + i),
            Anchor::LastBefore(name, before) => {
                let end = stages[from..]
                    .iter()
                    .position(|(n, _)| n == before)
                    .map_or(stages.len(), |i| from + i);
                stages[from..end]
                    .iter()
                    .rposition(|(n, _)| n == name)
                    .map(|i| from + i)
            }
            Anchor::Last(name) => stages.iter().rposition(|(n, _)| n == name),
        };
        match found {
            Some(at) if at >= from => {
                let took = stages[at].1.saturating_sub(stages[from].1);
                out.push(Some(took as f64 / 1000.0));
                from = at;
            }
            _ => out.push(None),
        }
    }
    out
}

/// One transport's breakdown: per segment the p50 and p90 in µs, the looks and drain
/// reads per call (medians), and the end-to-end p50 of the same calls.
struct Breakdown {
    segments: Vec<(&'static str, Option<(f64, f64)>)>,
    looks: f64,
    drains: f64,
    total: Samples,
    calls: usize,
}

fn breakdown(transport: Transport, calls: &[Stages], totals: &Samples) -> Breakdown {
    let segments = segments(transport);
    let mut columns: Vec<Vec<f64>> = vec![Vec::new(); segments.len()];
    let (mut looks, mut drains) = (Vec::new(), Vec::new());
    for call in calls {
        for (column, took) in columns.iter_mut().zip(split(call, &segments)) {
            if let Some(took) = took {
                column.push(took / 1000.0);
            }
        }
        let count = |f: &dyn Fn(&str) -> bool| call.iter().filter(|(n, _)| f(n)).count() as f64;
        looks.push(count(&|n| n == "look" || n == "look.input"));
        drains.push(count(&|n| n == "drain"));
    }
    Breakdown {
        segments: segments
            .iter()
            .zip(columns)
            .map(|(&(label, _), column)| {
                let samples = Samples::from_ms(column);
                let value = (samples.len() > 0)
                    .then(|| (samples.p50() * 1000.0, samples.percentile(90.0) * 1000.0));
                (label, value)
            })
            .collect(),
        looks: median(&looks),
        drains: median(&drains),
        total: totals.clone(),
        calls: calls.len(),
    }
}

/// The breakdown and the concurrent row.
pub async fn latency(plan: &Plan, report: &mut Report) -> Result<()> {
    concurrent(plan, report).await?;
    let sends = (plan.echo_sends / 2).max(10);
    let dir = std::env::temp_dir().join(format!("pty-session-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut done = Vec::new();

    // The servers first: the facade's timeline, once on in this process, stays on.
    for (transport, http, file) in [
        (Transport::Stdio, false, "stdio.timeline"),
        (Transport::Http, true, "http.timeline"),
    ] {
        let path = dir.join(file);
        let _ = std::fs::remove_file(&path);
        let (totals, stamps) = tokio::task::block_in_place(|| -> Result<_> {
            let server = mcp::Server::start_traced(&plan.server, http, &path)?;
            let mut echo = mcp::Echo::start(&server)?;
            let (mut totals, mut stamps) = (Samples::default(), Vec::new());
            for i in 0..sends {
                let (took, stamp) = echo.stamped_round(&i.to_string())?;
                totals.push(took);
                stamps.push(stamp);
            }
            // One more call, so that the last send's record is written (HTTP writes a
            // request's out when the next one starts).
            echo.tail()?;
            server.stop()?;
            Ok((totals, stamps))
        })?;
        let mut calls = read_timeline(&path)?;
        for (call, [called, replied]) in calls.iter_mut().zip(stamps) {
            call.insert(0, ("client.call".to_owned(), called));
            call.push(("client.reply".to_owned(), replied));
        }
        done.push((transport, breakdown(transport, &calls, &totals)));
    }

    let path = dir.join("facade.timeline");
    let _ = std::fs::remove_file(&path);
    match pty_session::timeline::enable(&path) {
        Ok(()) => {
            let pty = PtyService::new(Config::default());
            let mut echo = facade::Echo::start(&pty).await?;
            let mut totals = Samples::default();
            for i in 0..sends {
                totals.push(echo.round(&i.to_string()).await?);
            }
            echo.close().await?;
            pty.shutdown().await;
            let calls = read_timeline(&path)?;
            done.push((
                Transport::Facade,
                breakdown(Transport::Facade, &calls, &totals),
            ));
        }
        Err(err) => report.note(format!(
            "the facade's breakdown is missing: the timeline could not be turned on ({err})"
        )),
    }
    let _ = std::fs::remove_dir_all(&dir);
    report.table(render(&done, sends));
    Ok(())
}

/// The breakdown as a markdown table, a column per transport.
fn render(done: &[(Transport, Breakdown)], sends: usize) -> String {
    let name = |t: Transport| match t {
        Transport::Facade => "facade",
        Transport::Stdio => "MCP stdio",
        Transport::Http => "MCP HTTP",
    };
    // In the order of a call: the transports' own stages before the library, the
    // library's, the transports' after it.
    let (stdio, http) = (segments(Transport::Stdio), segments(Transport::Http));
    let mut labels: Vec<&'static str> = Vec::new();
    let mut add = |label: &'static str| {
        if !labels.contains(&label) {
            labels.push(label);
        }
    };
    for (label, _) in stdio.iter().take(4).chain(http.iter().take(4)) {
        add(label);
    }
    for (label, _) in segments(Transport::Facade) {
        add(label);
    }
    for (label, _) in stdio.iter().chain(http.iter()) {
        add(label);
    }
    let mut out = format!(
        "Where one `cat` echo's time goes ({sends} sends each; µs, p50 (p90) of each stage from the one before, on the monotonic clock)\n\n| stage |"
    );
    for (transport, _) in done {
        out.push_str(&format!(" {} |", name(*transport)));
    }
    out.push_str("\n|---|");
    for _ in done {
        out.push_str("---|");
    }
    out.push('\n');
    for label in labels {
        out.push_str(&format!("| {label} |"));
        for (_, breakdown) in done {
            let cell = breakdown
                .segments
                .iter()
                .find(|(l, _)| *l == label)
                .and_then(|(_, v)| *v)
                .map_or("–".to_owned(), |(p50, p90)| {
                    format!("{p50:.1} ({p90:.1})")
                });
            out.push_str(&format!(" {cell} |"));
        }
        out.push('\n');
    }
    let mut sum = "| sum of the stages' p50 |".to_owned();
    let mut total = "| the round trip of the same calls, p50 (p90) |".to_owned();
    let mut looks = "| looks at the group, drain reads, per call (median) |".to_owned();
    for (_, b) in done {
        let s: f64 = b.segments.iter().filter_map(|(_, v)| v.map(|v| v.0)).sum();
        sum.push_str(&format!(" {s:.1} |"));
        total.push_str(&format!(
            " {:.1} ({:.1}); {} calls |",
            b.total.p50() * 1000.0,
            b.total.percentile(90.0) * 1000.0,
            b.calls
        ));
        looks.push_str(&format!(" {:.0}, {:.0} |", b.looks, b.drains));
    }
    for row in [sum, total, looks] {
        out.push_str(&row);
        out.push('\n');
    }
    out
}

/// 50 `cat` sessions, a task each sending echoes one after another, beside 50 raw loops.
async fn concurrent(plan: &Plan, report: &mut Report) -> Result<()> {
    let rounds = (plan.echo_sends / 10).max(4);
    let name = format!("echo round trip, {CONCURRENT} `cat` sessions at once, {rounds} sends each");
    // The limit: a thread per raw PTY, all started together.
    let raw = tokio::task::block_in_place(|| -> Result<Samples> {
        let echoes = (0..CONCURRENT)
            .map(|_| raw::Echo::start())
            .collect::<Result<Vec<_>>>()?;
        let threads: Vec<_> = echoes
            .into_iter()
            .map(|mut echo| {
                std::thread::spawn(move || -> Result<Vec<Duration>> {
                    (0..rounds).map(|i| echo.round(&i.to_string())).collect()
                })
            })
            .collect();
        let mut samples = Samples::default();
        for thread in threads {
            for took in thread.join().expect("a raw echo thread panicked")? {
                samples.push(took);
            }
        }
        Ok(samples)
    })?;
    let mut config = Config::default();
    config.max_sessions_per_owner = CONCURRENT + 1;
    let pty = PtyService::new(config);
    let mut echoes = Vec::new();
    for _ in 0..CONCURRENT {
        echoes.push(facade::Echo::start(&pty).await?);
    }
    let started = Instant::now();
    let tasks: Vec<_> = echoes
        .into_iter()
        .map(|mut echo| {
            tokio::spawn(async move {
                let mut took = Vec::with_capacity(rounds);
                for i in 0..rounds {
                    took.push(echo.round(&i.to_string()).await?);
                }
                anyhow::Ok((took, echo))
            })
        })
        .collect();
    let mut samples = Samples::default();
    let mut complete = facade::Complete::default();
    for task in tasks {
        let (took, echo) = task.await.context("an echo task panicked")??;
        for t in took {
            samples.push(t);
        }
        complete.all += echo.complete.all;
        complete.good += echo.complete.good;
        complete
            .partial
            .extend(echo.complete.partial.iter().cloned());
        echo.close().await?;
    }
    let wall = started.elapsed();
    pty.shutdown().await;
    report.row(
        &name,
        &format!("limit: {CONCURRENT} openpty echo loops, a thread each"),
        samples_line(&raw),
        String::new(),
        "",
        None,
    );
    for partial in &complete.partial {
        report.note(format!("{name}, facade: a reply not whole: {partial}"));
    }
    report.row(
        &name,
        &format!("facade, a task per session ({CONCURRENT} tasks)"),
        format!(
            "{}; {complete} replies whole, by input wait; {:.0} echoes/s in all",
            samples_line(&samples),
            samples.len() as f64 / wall.as_secs_f64()
        ),
        format!("+{} ms at p50", ms(samples.p50() - raw.p50())),
        "",
        None,
    );
    Ok(())
}

fn samples_line(samples: &Samples) -> String {
    samples.summary()
}
