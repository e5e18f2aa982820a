//! The workloads of BENCHMARKS.md: each runs pty-session and its limit in the same run and adds
//! rows to the report. Memory workloads run in fresh child processes ([`worker`]).

use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use pty_session::{Config, PtyService, Settle};
use serde::{Deserialize, Serialize};

use crate::facade::{self, Bulk, Idle, Reading};
use crate::report::Report;
use crate::stats::{Samples, median, ms};
use crate::sys::mib;
use crate::{Plan, mcp, raw, tmux};

/// Runs a blocking raw loop on this runtime thread without starving the reactor.
fn blocking<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    tokio::task::block_in_place(f)
}

fn overhead(run: &Samples, limit: &Samples) -> f64 {
    run.p50() - limit.p50()
}

/// The Node.js package's worker, or `None` with a note saying why it is not measured.
fn start_node(plan: &Plan, report: &mut Report) -> Option<crate::node::Node> {
    match blocking(|| crate::node::Node::start(&plan.python)) {
        Ok(node) => Some(node),
        Err(err) => {
            report.note(format!("the Node.js package is not measured: {err:#}"));
            None
        }
    }
}

/// The row of the Node.js package: its calls timed inside node, beside the raw limit.
fn node_row(
    report: &mut Report,
    name: &str,
    samples: &Samples,
    raw: &Samples,
    complete: &crate::facade::Complete,
    how: &str,
) {
    for partial in &complete.partial {
        report.note(format!(
            "{name}, Node.js package: a reply not whole: {partial}"
        ));
    }
    report.row(
        name,
        "Node.js package (`await pty.send`, timed in node)",
        format!("{}; {complete} replies whole, {how}", samples.summary()),
        format!("+{} ms at p50", ms(overhead(samples, raw))),
        "",
        None,
    );
}

fn tmux_usable(plan: &Plan, report: &mut Report) -> bool {
    if !plan.peers {
        return false;
    }
    if crate::sys::on_path("tmux") {
        return true;
    }
    report.note(
        "PEER SKIPPED: tmux is not installed, so the tmux rows are missing \
         (install it, e.g. `apt-get install tmux`, to compare)",
    );
    false
}

/// Echo round trip on `cat`: raw loop, facade, MCP (and tmux), alternating in blocks.
pub async fn echo(plan: &Plan, report: &mut Report) -> Result<()> {
    let pty = PtyService::new(Config::default());
    let mut raw = raw::Echo::start()?;
    let mut facade = facade::Echo::start(&pty).await?;
    let server = blocking(|| mcp::Server::start(&plan.server))?;
    let mut mcp = blocking(|| mcp::Echo::start(&server))?;
    let http_server = blocking(|| mcp::Server::start_http(&plan.server))?;
    let mut http = blocking(|| mcp::Echo::start(&http_server))?;
    let mut node = start_node(plan, report);
    let tmux = if tmux_usable(plan, report) {
        let tmux = tmux::Tmux::start("cat")?;
        Some(tmux)
    } else {
        None
    };
    let (mut r, mut f, mut m, mut h, mut t) = Default::default();
    let (mut pings, mut http_pings) = (Samples::default(), Samples::default());
    let mut js = Samples::default();
    let per_block = plan.echo_sends / plan.blocks;
    for block in 0..plan.blocks {
        let rounds = block * per_block..(block + 1) * per_block;
        blocking(|| {
            for i in rounds.clone() {
                Samples::push(&mut r, raw.round(&i.to_string())?);
            }
            Ok(())
        })?;
        for i in rounds.clone() {
            Samples::push(&mut f, facade.round(&i.to_string()).await?);
        }
        blocking(|| {
            for i in rounds.clone() {
                Samples::push(&mut m, mcp.round(&i.to_string())?);
            }
            for i in rounds.clone() {
                Samples::push(&mut h, http.round(&i.to_string())?);
            }
            // The protocol's own round trip, in the same blocks: the floor of every call.
            for _ in rounds.clone() {
                pings.push(server.ping()?);
                http_pings.push(http_server.ping()?);
            }
            if let Some(node) = &mut node {
                for i in rounds.clone() {
                    Samples::push(&mut js, node.echo(&i.to_string())?);
                }
            }
            Ok(())
        })?;
        if let Some(tmux) = &tmux {
            blocking(|| {
                for i in rounds.clone().step_by(plan.peer_every) {
                    let line = i.to_string();
                    Samples::push(
                        &mut t,
                        tmux.round(&line, |s| tmux::ends_with(s, &[&line, &line]))?,
                    );
                }
                Ok(())
            })?;
        }
    }
    // The MCP call alone: a tail with nothing new, no PTY write and no settle.
    let (mut tails, mut http_tails) = (Samples::default(), Samples::default());
    blocking(|| {
        for _ in 0..plan.echo_sends / 5 {
            tails.push(mcp.tail()?);
            http_tails.push(http.tail()?);
        }
        Ok(())
    })?;
    let facade_complete = facade.complete.clone();
    let mcp_complete = mcp.complete.clone();
    let http_complete = http.complete.clone();
    facade.close().await?;
    blocking(|| server.stop())?;
    blocking(|| http_server.stop())?;
    drop(raw);
    drop(tmux);
    let name = format!("echo round trip, `cat`, {} sends", plan.echo_sends);
    report.row(
        &name,
        "limit: openpty echo loop",
        r.summary(),
        String::new(),
        "",
        None,
    );
    for (run, samples) in [
        ("MCP stdio, `ping`", &pings),
        ("MCP HTTP, `ping`", &http_pings),
    ] {
        report.row(
            &name,
            &format!("{run} ({} calls): the protocol alone", samples.len()),
            samples.summary(),
            String::new(),
            "",
            None,
        );
    }
    // The targets: the library adds at most 0.1 ms to the PTY's own round trip, MCP stdio
    // at most 0.3 ms to the protocol's ping and the PTY's round trip together.
    for (run, samples, complete, floor, floor_name, limit_ms) in [
        ("facade", &f, facade_complete, r.p50(), "the limit", 0.10),
        (
            "MCP stdio",
            &m,
            mcp_complete,
            r.p50() + pings.p50(),
            "the limit + stdio `ping`",
            0.30,
        ),
    ] {
        let over = samples.p50() - floor;
        for partial in &complete.partial {
            report.note(format!("{name}, {run}: a reply not whole: {partial}"));
        }
        report.row(
            &name,
            run,
            format!(
                "{}; {complete} replies whole, by input wait",
                samples.summary()
            ),
            format!("+{} ms at p50 over {floor_name}", ms(over)),
            &format!("p50 ≤ {floor_name} + {limit_ms:.2} ms"),
            Some(over <= limit_ms && complete.good == complete.all),
        );
    }
    if let Some(node) = node.take() {
        node_row(report, &name, &js, &r, &node.echo_complete, "by input wait");
    }
    // HTTP against stdio, both measured here: what the transport adds on a kept-alive
    // connection (Nagle's algorithm against a delayed ACK once cost ~40 ms a call).
    for partial in &http_complete.partial {
        report.note(format!("{name}, MCP HTTP: a reply not whole: {partial}"));
    }
    let over_stdio = h.p50() - m.p50();
    report.row(
        &name,
        "MCP HTTP, one kept-alive connection",
        format!(
            "{}; {http_complete} replies whole, by input wait",
            h.summary()
        ),
        format!("+{} ms at p50 over MCP stdio", ms(over_stdio)),
        "p50 within 1 ms of MCP stdio",
        Some(over_stdio <= 1.0 && http_complete.good == http_complete.all),
    );
    report.row(
        &name,
        &format!(
            "MCP stdio, `pty_tail` with nothing new ({} calls)",
            tails.len()
        ),
        format!("{}: the MCP call alone, no PTY", tails.summary()),
        String::new(),
        "",
        None,
    );
    report.row(
        &name,
        &format!(
            "MCP HTTP, `pty_tail` with nothing new ({} calls)",
            http_tails.len()
        ),
        format!("{}: the MCP call alone, no PTY", http_tails.summary()),
        String::new(),
        "",
        None,
    );
    if t.len() > 0 {
        report.row(
            &name,
            &format!("peer: tmux send-keys + capture-pane ({} sends)", t.len()),
            t.summary(),
            format!("+{} ms at p50", ms(overhead(&t, &r))),
            "",
            None,
        );
    }
    pty.shutdown().await;
    Ok(())
}

/// `6*7` to `python3 -q`: raw loop, facade, MCP (and tmux), alternating in blocks.
pub async fn repl(plan: &Plan, report: &mut Report) -> Result<()> {
    let pty = PtyService::new(Config::default());
    let mut raw = blocking(|| raw::Repl::start(&plan.python))?;
    let mut facade = facade::Repl::start(&pty, &plan.python).await?;
    let server = blocking(|| mcp::Server::start(&plan.server))?;
    let mut mcp = blocking(|| mcp::Repl::start(&server, &plan.python))?;
    let mut node = start_node(plan, report);
    let tmux = if tmux_usable(plan, report) {
        let tmux = tmux::Tmux::start(&format!("{} -q", plan.python))?;
        tmux.wait(|s| s.last().is_some_and(|l| l.starts_with(">>>")))?;
        Some(tmux)
    } else {
        None
    };
    let (mut r, mut f, mut m, mut t) = Default::default();
    let mut js = Samples::default();
    let per_block = plan.repl_rounds / plan.blocks;
    for block in 0..plan.blocks {
        let rounds = block * per_block..(block + 1) * per_block;
        blocking(|| {
            for _ in rounds.clone() {
                Samples::push(&mut r, raw.round()?);
            }
            Ok(())
        })?;
        for _ in rounds.clone() {
            Samples::push(&mut f, facade.round().await?);
        }
        blocking(|| {
            for _ in rounds.clone() {
                Samples::push(&mut m, mcp.round()?);
            }
            if let Some(node) = &mut node {
                for _ in rounds.clone() {
                    Samples::push(&mut js, node.repl()?);
                }
            }
            Ok(())
        })?;
        if let Some(tmux) = &tmux {
            blocking(|| {
                for i in rounds.clone().step_by(plan.peer_every) {
                    // A comment tells this round's answer from the last one on the screen.
                    let line = format!("6*7 #{i}");
                    let typed = format!(">>> {line}");
                    Samples::push(
                        &mut t,
                        tmux.round(&line, |s| tmux::ends_with(s, &[&typed, "42", ">>>"]))?,
                    );
                }
                Ok(())
            })?;
        }
    }
    let facade_complete = facade.complete.clone();
    let mcp_complete = mcp.complete.clone();
    facade.close().await?;
    blocking(|| server.stop())?;
    drop(raw);
    drop(tmux);
    let name = format!(
        "REPL answer, `python3 -q`, `6*7`, {} sends",
        plan.repl_rounds
    );
    report.row(
        &name,
        "limit: `42` and `>>> ` on the PTY",
        r.summary(),
        String::new(),
        "",
        None,
    );
    for (run, samples, complete) in [
        ("facade", &f, facade_complete),
        ("MCP stdio", &m, mcp_complete),
    ] {
        let over = overhead(samples, &r);
        for partial in &complete.partial {
            report.note(format!("{name}, {run}: a reply not whole: {partial}"));
        }
        report.row(
            &name,
            run,
            format!(
                "{}; {complete} in one call (`42`, prompt pending, by input wait)",
                samples.summary()
            ),
            format!("+{} ms at p50", ms(over)),
            "≤ 2 ms after the prompt, one call",
            Some(over <= 2.0 && complete.good == complete.all),
        );
    }
    if let Some(node) = node.take() {
        let how = "in one call (`42`, prompt pending, by input wait)";
        node_row(report, &name, &js, &r, &node.repl_complete, how);
    }
    if t.len() > 0 {
        report.row(
            &name,
            &format!("peer: tmux send-keys + capture-pane ({} sends)", t.len()),
            t.summary(),
            format!("+{} ms at p50", ms(overhead(&t, &r))),
            "",
            None,
        );
    }
    pty.shutdown().await;
    Ok(())
}

/// Send → reply by input wait for other interactive programs (bash, node, gdb/MI), on the
/// facade: what the REPL row shows for python, beyond it. A program that is not installed
/// is noted, not measured.
pub async fn programs(plan: &Plan, report: &mut Report) -> Result<()> {
    let pty = PtyService::new(Config::default());
    let cases = [
        ("bash --norc --noprofile -i", "echo $((6*7))", "42"),
        ("node", "6*7", "42"),
        (
            "gdb -q --nx -i=mi2",
            "-data-evaluate-expression 6*7",
            "^done,value=\"42\"",
        ),
    ];
    let name = format!(
        "send → reply by input wait, other programs, {} sends",
        plan.program_rounds
    );
    for (command, data, answer) in cases {
        let program = command.split_whitespace().next().unwrap_or(command);
        if !crate::sys::on_path(program) {
            report.note(format!("NOT MEASURED: {program} is not installed"));
            continue;
        }
        let request = pty_session::OpenRequest::new(command)
            .env("PS1", "$ ")
            .timeout(Duration::from_millis(20_000));
        let session = facade::Session::open(&pty, request).await?;
        let mut times = Samples::default();
        let mut complete = facade::Complete::default();
        for _ in 0..plan.program_rounds {
            let start = std::time::Instant::now();
            let sent = session.send(data).await?;
            times.push(start.elapsed());
            let whole = sent.delta.text.lines().any(|line| line == answer)
                && sent.settled_by == pty_session::SettleReason::Input;
            complete.count(whole, || {
                format!("{:?} {}", sent.delta.text, sent.settled_by)
            });
        }
        session.close().await?;
        for partial in &complete.partial {
            report.note(format!("{command}: a reply not whole: {partial}"));
        }
        report.row(
            &name,
            &format!("facade, `{command}`: `{data}`"),
            format!("{}; {complete} whole, by input wait", times.summary()),
            "–".to_owned(),
            "",
            None,
        );
    }
    shell_steps(&pty, plan, report).await?;
    pty.shutdown().await;
    Ok(())
}

/// A bash step (`true`) with shell integration and without, side by side: two sessions
/// of `bash` with the same private home (its .bashrc sets `PS1='$ '`), sent to in turns,
/// so that both see the same machine. With integration the reply ends on the prompt's
/// mark and carries the command's exit status; without, on input wait.
async fn shell_steps(pty: &PtyService, plan: &Plan, report: &mut Report) -> Result<()> {
    if !crate::sys::on_path("bash") {
        report.note("NOT MEASURED: bash is not installed".to_owned());
        return Ok(());
    }
    let home = scratch("shell-steps")?;
    std::fs::write(home.join(".bashrc"), "PS1='$ '\n").context("write .bashrc")?;
    let home_str = home.to_str().context("a UTF-8 temp path")?;
    let mut sessions = Vec::new();
    for on in [true, false] {
        let request = pty_session::OpenRequest::new("bash")
            .env("HOME", home_str)
            .cwd(&home)
            .shell_integration(on)
            .timeout(Duration::from_millis(20_000));
        sessions.push((
            on,
            facade::Session::open(pty, request).await?,
            Samples::default(),
        ));
    }
    let mut wrong = Vec::new();
    for _ in 0..plan.program_rounds {
        for (on, session, times) in &mut sessions {
            let start = std::time::Instant::now();
            let sent = session.send("true").await?;
            times.push(start.elapsed());
            let expected = if *on {
                sent.settled_by == pty_session::SettleReason::Prompt
                    && sent.commands.len() == 1
                    && sent.commands[0].exit_code == Some(0)
            } else {
                sent.settled_by == pty_session::SettleReason::Input && sent.commands.is_empty()
            };
            if !expected {
                wrong.push(format!("{on}: {:?} {:?}", sent.settled_by, sent.commands));
            }
        }
    }
    let name = format!(
        "bash step `true`, with and without shell integration, {} sends each in turns",
        plan.program_rounds
    );
    for (on, session, times) in sessions {
        session.close().await?;
        let (label, how) = if on {
            (
                "with integration",
                "by the prompt's mark, exit status 0 reported",
            )
        } else {
            ("without integration", "by input wait")
        };
        report.row(
            &name,
            &format!("facade, `bash` {label}"),
            format!("{}; {how}", times.summary()),
            "–".to_owned(),
            "",
            None,
        );
    }
    for wrong in wrong.iter().take(5) {
        report.note(format!("bash step: an unexpected reply: {wrong}"));
    }
    let _ = std::fs::remove_dir_all(&home);
    Ok(())
}

/// What `seq 1 n` writes through a PTY: each number, then `\r\n`.
pub fn seq_bytes(n: u64) -> u64 {
    (1..=n).map(|i| i.to_string().len() as u64 + 2).sum()
}

/// `seq 1 N`: raw read loop and the facade (drained, tailed) in workers, alternating.
pub async fn bulk(plan: &Plan, report: &mut Report) -> Result<()> {
    let n = plan.seq_n;
    let command = format!("seq 1 {n}");
    let expected_bytes = seq_bytes(n);
    let mut raw_rates = Vec::new();
    let mut raw_cpus = Vec::new();
    let mut runs = [
        Runs::new(Reading::Drained, false),
        Runs::new(Reading::Tailed, false),
        Runs::new(Reading::Drained, true),
    ];
    for rep in 0..plan.bulk_reps {
        eprintln!("   rep {}/{}", rep + 1, plan.bulk_reps);
        let drained = blocking(|| raw::read_loop(&["seq", "1", &n.to_string()]))?;
        ensure!(
            drained.bytes == expected_bytes,
            "raw: {} bytes, expected {expected_bytes}",
            drained.bytes
        );
        raw_rates.push(rate(drained.bytes, drained.elapsed.as_secs_f64()));
        raw_cpus.push(drained.cpu_secs);
        for Runs {
            reading,
            screen,
            rates,
            hwms,
            problems,
            cpus,
        } in &mut runs
        {
            // Clearing the screen first starts the session's emulator, which is then fed
            // all of the output.
            let command = if *screen {
                format!("printf '\\033[2J'; {command}")
            } else {
                command.clone()
            };
            let job = Job::Bulk {
                command,
                tailed: *reading == Reading::Tailed,
            };
            let out: Measured<Bulk> = spawn_worker(&job).await?;
            let bulk = out.result;
            rates.push(rate(expected_bytes, bulk.secs));
            hwms.push(out.hwm_kib);
            cpus.push(out.cpu_secs);
            if bulk.total_lines != n || bulk.last_line != n.to_string() {
                problems.push(format!(
                    "{} lines, last {:?}",
                    bulk.total_lines, bulk.last_line
                ));
            }
            if bulk.screen_bottom != n.to_string() {
                problems.push(format!("the screen ends {:?}", bulk.screen_bottom));
            }
            if *reading == Reading::Tailed && bulk.delivered + bulk.skipped != n {
                problems.push(format!(
                    "delivered {} + skipped {} ≠ {n}",
                    bulk.delivered, bulk.skipped
                ));
            }
        }
    }
    let name = format!(
        "bulk `seq 1 {n}` ({:.1} MB on the PTY), {} run(s) each",
        expected_bytes as f64 / 1e6,
        plan.bulk_reps
    );
    report.row(
        &name,
        "limit: raw read loop on a PTY",
        format!(
            "{} MB/s (runs: {}); reader CPU {:.1} s a run",
            rate_str(median(&raw_rates)),
            rates_str(&raw_rates),
            median(&raw_cpus)
        ),
        String::new(),
        "",
        None,
    );
    for Runs {
        reading,
        screen,
        rates,
        hwms,
        problems,
        cpus,
    } in &runs
    {
        let run = match (reading, screen) {
            (Reading::Drained, false) => "facade, drained (one open settles at exit, then a tail)",
            (Reading::Tailed, _) => "facade, tailed (a tail of ≤ 100,000 lines every 5 ms)",
            (Reading::Drained, true) => {
                "facade, drained, the screen on (`printf '\\033[2J'` first starts the emulator)"
            }
        };
        // Each run against the raw run just before it, then the median of those ratios:
        // the two of a pair see the machine in the same phase, and this VM's speed drifts
        // by 2× between runs a minute apart.
        let ratios: Vec<f64> = rates
            .iter()
            .zip(&raw_rates)
            .map(|(r, raw)| r / raw)
            .collect();
        let ratio = median(&ratios);
        let peak = hwms.iter().copied().max().unwrap_or(0);
        let lines = if problems.is_empty() {
            "every run's last line `{n}` delivered and at the screen's bottom, totalLines {n}"
                .replace("{n}", &n.to_string())
        } else {
            format!("PROBLEMS: {}", problems.join("; "))
        };
        report.row(
            &name,
            run,
            format!(
                "{} MB/s (runs: {}); service CPU {:.1} s a run; peak service RSS {:.1} MiB; \
                 {lines}",
                rate_str(median(rates)),
                rates_str(rates),
                median(cpus),
                mib(peak)
            ),
            ratio_str(ratio, &ratios),
            "≥ 0.8× raw; RSS ≤ 64 MiB",
            Some(ratio >= 0.8 && mib(peak) <= 64.0 && problems.is_empty()),
        );
    }
    report.note(
        "Bulk throughput counts the bytes the program writes through the PTY (`\\r\\n` line \
         ends); each run of the facade is a fresh process of the bench, its RSS peak (VmHWM) \
         is the whole service process's, sessions' processes excluded.",
    );
    Ok(())
}

/// The repeated runs of one way of reading a bulk workload.
struct Runs {
    reading: Reading,
    /// Whether the session's screen emulator runs.
    screen: bool,
    /// MB/s of each run.
    rates: Vec<f64>,
    /// Peak RSS of each run's process, in KiB.
    hwms: Vec<u64>,
    /// What a run delivered wrongly, if anything.
    problems: Vec<String>,
    /// CPU seconds of each run's process.
    cpus: Vec<f64>,
}

impl Runs {
    fn new(reading: Reading, screen: bool) -> Runs {
        Runs {
            reading,
            screen,
            rates: Vec::new(),
            hwms: Vec::new(),
            problems: Vec::new(),
            cpus: Vec::new(),
        }
    }
}

fn rate(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / 1e6 / secs
}

/// `0.84× raw (median of each run's ratio to the raw run before it: 0.62, 0.91, …)`.
pub fn ratio_str(ratio: f64, ratios: &[f64]) -> String {
    let runs: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
    format!(
        "{ratio:.2}× raw (median of each run's ratio to the raw run before it: {})",
        runs.join(", ")
    )
}

pub fn rate_str(rate: f64) -> String {
    format!("{rate:.1}")
}

pub fn rates_str(rates: &[f64]) -> String {
    rates
        .iter()
        .map(|r| rate_str(*r))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Lines and the last line's length of `base64` over `bytes` bytes (76 columns).
fn base64_shape(bytes: u64) -> (u64, u64, u64) {
    let chars = bytes.div_ceil(3) * 4;
    let lines = chars.div_ceil(76);
    let last = chars - 76 * (lines - 1);
    // On the PTY every line ends in `\r\n`.
    (lines, last, chars + 2 * lines)
}

/// 1 GiB of base64 through the facade, in a worker.
pub async fn flood(plan: &Plan, report: &mut Report) -> Result<()> {
    let bytes = plan.flood_bytes;
    let (lines, last_len, pty_bytes) = base64_shape(bytes);
    let dir = scratch("flood")?;
    let last_file = dir.join("last-line");
    let out: Measured<Bulk> = spawn_worker(&Job::Flood {
        bytes,
        last_file: last_file.display().to_string(),
    })
    .await?;
    // `tail` writes the file from a process substitution, which may finish just after.
    let mut expected = String::new();
    for _ in 0..500 {
        expected = std::fs::read_to_string(&last_file).unwrap_or_default();
        if expected.ends_with('\n') {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let _ = std::fs::remove_dir_all(&dir);
    let bulk = out.result;
    let final_ok = bulk.last_line == expected.trim_end()
        && bulk.last_line.len() as u64 == last_len
        && bulk.total_lines == lines;
    let size = if bytes >= 1 << 30 {
        format!("{} GiB", bytes >> 30)
    } else {
        format!("{} MiB", bytes >> 20)
    };
    report.row(
        &format!(
            "`head -c {size} /dev/urandom \\| base64` ({:.2} GB on the PTY)",
            pty_bytes as f64 / 1e9
        ),
        "facade, drained",
        format!(
            "{:.1} s, {} MB/s; service CPU {:.1} s; peak service RSS {:.1} MiB; final line {} \
             ({} lines)",
            bulk.secs,
            rate_str(rate(pty_bytes, bulk.secs)),
            out.cpu_secs,
            mib(out.hwm_kib),
            if final_ok {
                "delivered"
            } else {
                "NOT delivered"
            },
            bulk.total_lines
        ),
        "–".to_owned(),
        "RSS ≤ 64 MiB; final line delivered",
        Some(mib(out.hwm_kib) <= 64.0 && final_ok),
    );
    Ok(())
}

/// Idle `cat` sessions: the facade (settle auto and none) and a bare spawn loop, each in
/// a worker.
pub async fn idle(plan: &Plan, report: &mut Report) -> Result<()> {
    let n = plan.idle_sessions;
    let raw: Measured<RawIdle> = spawn_worker(&Job::IdleRaw { n }).await?;
    let raw_opens = Samples::from_ms(raw.result.opens.clone());
    let name = format!("{n} concurrent idle `cat` sessions");
    report.row(
        &name,
        "limit: bare openpty + spawn loop",
        format!(
            "per spawn {}; RSS +{:.1} MiB",
            raw_opens.summary(),
            mib(raw.result.rss_kib.saturating_sub(raw.result.rss_before_kib))
        ),
        String::new(),
        "",
        None,
    );
    for (settle_none, screens) in [(false, false), (true, false), (false, true)] {
        let out: Measured<Idle> = spawn_worker(&Job::Idle {
            n,
            settle_none,
            screens,
        })
        .await?;
        let idle = out.result;
        let opens = Samples::from_ms(idle.opens.clone());
        let close_one = Samples::from_ms(idle.close_one.clone());
        let run = match (settle_none, screens) {
            (true, _) => "facade, open with settle none (spawn only)",
            (false, false) => "facade, open with default settle (until `cat` waits for input)",
            (false, true) => {
                "facade, open with default settle, then `screen` (every session holds an \
                 emulator: the design not taken, measured to choose)"
            }
        };
        // Sessions start their emulators lazily because of this row, so it has no target
        // of its own: the target is the idle sessions', which the rows above meet.
        let (target, verdict) = if screens {
            ("– (idle sessions hold none)", None)
        } else {
            (
                "RSS ≤ 150 MiB; open p50 ≤ 5 ms",
                Some(mib(idle.rss_kib) <= 150.0 && opens.p50() <= 5.0),
            )
        };
        report.row(
            &name,
            run,
            format!(
                "open {} (first tenth p50 {}, last tenth p50 {}); service RSS {:.1} MiB \
                 (+{:.1} MiB, {:.1} kB a session), {} threads; beside it (PSS) the spawner \
                 and its spare {:.1} MiB, {} shims {:.0} kB each; close one p50 {} ms; \
                 shutdown of the rest {:.2} s; one scan of /proc ({} processes) {} ms",
                opens.summary(),
                ms(tenth(&idle.opens, false)),
                ms(tenth(&idle.opens, true)),
                mib(idle.rss_kib),
                mib(idle.rss_kib.saturating_sub(idle.rss_before_kib)),
                idle.rss_kib.saturating_sub(idle.rss_before_kib) as f64 * 1.024 / n as f64,
                idle.threads,
                mib(idle.spawner_pss_kib),
                idle.shims,
                idle.shims_pss_kib as f64 / idle.shims.max(1) as f64,
                ms(close_one.p50()),
                idle.shutdown_secs,
                idle.processes,
                ms(idle.proc_scan_ms)
            ),
            format!("open p50 {:.1}× raw", opens.p50() / raw_opens.p50()),
            target,
            verdict,
        );
    }
    Ok(())
}

/// The median of the first or the last tenth of `values` (in the order taken).
fn tenth(values: &[f64], last: bool) -> f64 {
    let k = (values.len() / 10).max(1).min(values.len());
    let part = if last {
        &values[values.len() - k..]
    } else {
        &values[..k]
    };
    median(part)
}

/// Closing a bash with setsid, nohup, double-forked and background children.
pub async fn close(plan: &Plan, report: &mut Report) -> Result<()> {
    let config = Config::default();
    let grace = config.close_grace;
    let pty = PtyService::new(config);
    let dir = scratch("close")?;
    let name = "close a bash with setsid, nohup, double-fork and `&` children";
    for ignore_term in [false, true] {
        let mut times = Samples::default();
        let (mut recorded, mut survivors) = (0, 0);
        for _ in 0..plan.close_reps {
            let closed = facade::close_tree(&pty, &dir, ignore_term).await?;
            times.push(closed.elapsed);
            recorded += closed.recorded;
            survivors += closed.survivors;
        }
        let (run, limit_ms, target) = if ignore_term {
            (
                "facade, children ignore SIGTERM and SIGHUP",
                grace.as_secs_f64() * 1000.0 + 50.0,
                format!(
                    "0 survivors; p50 ≤ grace ({} ms) + 50 ms",
                    grace.as_millis()
                ),
            )
        } else {
            ("facade, plain", 50.0, "0 survivors; p50 ≤ 50 ms".to_owned())
        };
        report.row(
            name,
            run,
            format!(
                "{} ({} closes); {survivors} of {recorded} pids survived",
                times.summary(),
                times.len()
            ),
            "–".to_owned(),
            &target,
            Some(survivors == 0 && times.p50() <= limit_ms),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    pty.shutdown().await;
    Ok(())
}

fn scratch(name: &str) -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("pty-session-bench-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    Ok(dir)
}

/// A memory workload for a fresh process of the bench.
#[derive(Debug, Serialize, Deserialize)]
enum Job {
    Bulk {
        command: String,
        tailed: bool,
    },
    Flood {
        bytes: u64,
        last_file: String,
    },
    Idle {
        n: usize,
        settle_none: bool,
        screens: bool,
    },
    IdleRaw {
        n: usize,
    },
}

/// A worker's answer: its result, its whole process's peak RSS and CPU time.
#[derive(Debug, Serialize, Deserialize)]
struct Measured<T> {
    result: T,
    hwm_kib: u64,
    cpu_secs: f64,
}

/// The bare spawn loop's figures.
#[derive(Debug, Serialize, Deserialize)]
struct RawIdle {
    opens: Vec<f64>,
    rss_before_kib: u64,
    rss_kib: u64,
}

/// Runs `job` in a fresh process of this binary and reads its answer (one JSON line).
async fn spawn_worker<T: for<'de> Deserialize<'de>>(job: &Job) -> Result<Measured<T>> {
    let exe = std::env::current_exe().context("where is this binary")?;
    let output = tokio::process::Command::new(exe)
        .arg("--worker")
        .arg(serde_json::to_string(job)?)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .output()
        .await
        .context("run a worker")?;
    ensure!(
        output.status.success(),
        "worker {job:?} failed: {}",
        output.status
    );
    serde_json::from_slice(&output.stdout).with_context(|| {
        format!(
            "worker {job:?} answered {:?}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// The `--worker` side: runs one job and prints its answer on stdout.
pub async fn worker(job: &str) -> Result<()> {
    let job: Job = serde_json::from_str(job).context("parse the worker's job")?;
    crate::sys::raise_nofile();
    let answer = match job {
        Job::Bulk { command, tailed } => {
            let reading = if tailed {
                Reading::Tailed
            } else {
                Reading::Drained
            };
            let pty = PtyService::new(Config::default());
            let result = facade::bulk(&pty, &command, reading).await?;
            pty.shutdown().await;
            measured(result)?
        }
        Job::Flood { bytes, last_file } => {
            let command = format!(
                "bash -c 'head -c {bytes} /dev/urandom | base64 | tee >(tail -n 1 > {last_file})'"
            );
            let pty = PtyService::new(Config::default());
            let result = facade::bulk(&pty, &command, Reading::Drained).await?;
            pty.shutdown().await;
            measured(result)?
        }
        Job::Idle {
            n,
            settle_none,
            screens,
        } => {
            let settle = if settle_none {
                Settle::None
            } else {
                Settle::Auto
            };
            measured(facade::idle(n, settle, screens).await?)?
        }
        Job::IdleRaw { n } => {
            let rss_before_kib = crate::sys::rss_kib();
            let (opens, held) = raw::spawn_loop(n)?;
            let rss_kib = crate::sys::rss_kib();
            raw::reap(held);
            measured(RawIdle {
                opens: opens.values(),
                rss_before_kib,
                rss_kib,
            })?
        }
    };
    println!("{answer}");
    Ok(())
}

fn measured<T: Serialize>(result: T) -> Result<String> {
    Ok(serde_json::to_string(&Measured {
        result,
        hwm_kib: crate::sys::hwm_kib(),
        cpu_secs: crate::sys::cpu_secs(),
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(seq_bytes(10), 9 * 3 + 4);
        // 1 GiB: 1,431,655,768 characters in 18,837,576 lines, the last of 68.
        let (lines, last, _) = base64_shape(1 << 30);
        assert_eq!((lines, last), (18_837_576, 68));
        assert_eq!(base64_shape(57), (1, 76, 78));
    }
}
