//! Measures how fast sends to real REPLs settle by input wait after their prompt.
//!
//! `cargo run --release -p pty-session --example settle_times [rounds]` prints, per REPL,
//! the median and worst time from the start of a send to its reply.

use std::time::Instant;

use pty_session::{CancellationToken, Config, OpenRequest, Owner, PtyService, SendRequest};

#[tokio::main]
async fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(50);
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_else(|_| "python3".into());
    let cases = [
        (format!("{python} -q"), "6*7"),
        ("bash --norc --noprofile -i".to_owned(), "echo $((6*7))"),
        ("cat".to_owned(), "42"),
        ("node".to_owned(), "6*7"),
        (
            "gdb -q --nx -i=mi2".to_owned(),
            "-data-evaluate-expression 6*7",
        ),
    ];
    let pty = PtyService::new(Config::default());
    let owner = Owner::new("bench");
    println!("| program | settled by | median ms | max ms |");
    println!("|---|---|---|---|");
    for (command, data) in cases {
        let request = OpenRequest::new(&command)
            .env("PS1", "$ ")
            .timeout_ms(20_000);
        let opened = match pty.open(&owner, request, &CancellationToken::new()).await {
            Ok(opened) if opened.status == pty_session::Status::Running => opened,
            _ => {
                println!("| {command} | not available | | |");
                continue;
            }
        };
        let mut times = Vec::new();
        let mut reasons = std::collections::BTreeSet::new();
        for _ in 0..rounds {
            let start = Instant::now();
            let sent = pty
                .send(&owner, &opened.session_id, SendRequest::new(data))
                .await;
            times.push(start.elapsed().as_secs_f64() * 1000.0);
            reasons.insert(sent.map_or_else(|e| e.code().to_owned(), |s| s.settled_by.to_string()));
        }
        times.sort_by(f64::total_cmp);
        let reasons: Vec<_> = reasons.into_iter().collect();
        println!(
            "| `{command}` | {} | {:.2} | {:.2} |",
            reasons.join(", "),
            times[times.len() / 2],
            times[times.len() - 1]
        );
        let _ = pty.close(&owner, &opened.session_id).await;
    }
    pty.shutdown().await;
}
