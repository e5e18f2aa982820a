//! Opens N idle `cat` sessions and reports the service's memory, threads and open times.
//!
//! `cargo run --release -p pty-session --example idle_sessions [n]` (default 1,000). The
//! RSS is the service process's own (the shims and `cat`s are separate processes).

use std::time::Instant;

use pty_session::{CancellationToken, Config, OpenRequest, Owner, PtyService};

fn status_field(name: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    // Each session holds a few descriptors (master, control socket, the shim's pidfd).
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let raised = rustix::process::Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    let _ = rustix::process::setrlimit(rustix::process::Resource::Nofile, raised);
    let mut config = Config::default();
    config.max_sessions = n + 1;
    config.max_sessions_per_owner = n + 1;
    let pty = PtyService::new(config);
    let owner = Owner::new("bench");
    // Warm up the runtime and allocator with one session.
    let warm = pty
        .open(&owner, OpenRequest::new("cat"), &CancellationToken::new())
        .await
        .unwrap();
    pty.close(&owner, &warm.session_id).await.unwrap();
    let rss_before = status_field("VmRSS:");
    let mut opens = Vec::with_capacity(n);
    let started = Instant::now();
    for _ in 0..n {
        let start = Instant::now();
        let request = OpenRequest::new("cat").settle(pty_session::Settle::None);
        pty.open(&owner, request, &CancellationToken::new())
            .await
            .expect("open");
        opens.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    let total = started.elapsed();
    let rss_after = status_field("VmRSS:");
    opens.sort_by(f64::total_cmp);
    println!(
        "| sessions | service RSS growth | per session | threads | open p50 | open p99 | all opens |"
    );
    println!("|---|---|---|---|---|---|---|");
    println!(
        "| {n} | {:.1} MiB | {:.1} kB | {} | {:.2} ms | {:.2} ms | {:.2} s |",
        (rss_after - rss_before) as f64 / 1024.0,
        (rss_after - rss_before) as f64 / n as f64,
        status_field("Threads:"),
        opens[n / 2],
        opens[n * 99 / 100],
        total.as_secs_f64()
    );
    let ids = pty.sessions(&owner);
    let mut closes = Vec::new();
    for id in ids.iter().take(20) {
        let start = Instant::now();
        pty.close(&owner, id).await.unwrap();
        closes.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    closes.sort_by(f64::total_cmp);
    println!(
        "close one of {n}: p50 {:.2} ms, max {:.2} ms",
        closes[closes.len() / 2],
        closes[closes.len() - 1]
    );
    let start = Instant::now();
    pty.shutdown().await;
    println!(
        "shutdown of {n} sessions: {:.2} s",
        start.elapsed().as_secs_f64()
    );
}
