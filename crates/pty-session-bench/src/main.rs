//! `pty-session-bench`: runs each workload on pty-session and on the raw PTY
//! limit in the same run, and prints a markdown table of absolute figures and ratios.
//!
//! ```text
//! cargo build --release -p pty-session-server -p pty-session-bench
//! target/release/pty-session-bench            # the full run (a few minutes)
//! target/release/pty-session-bench --quick    # small counts, no verdicts (CI's smoke test)
//! ```
//!
//! The MCP rows run the real `pty-session` binary, found next to this one (`--server`
//! names another). Memory is measured in fresh child processes of this binary (hidden
//! `--worker`), so that each peak (`VmHWM`) belongs to one workload; sessions' processes
//! are separate processes and never counted.

mod facade;
mod fairness;
mod latency;
mod looks;
mod mcp;
mod node;
mod raw;
mod reads;
mod report;
mod sandboxes;
mod screens;
mod ssh;
mod stats;
mod sys;
mod tmux;
mod viewers;
mod workloads;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, ValueEnum};

/// Benchmarks pty-session against the raw PTY limit and prints a markdown table.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Small counts and no verdicts: a smoke test (CI runs it once).
    #[arg(long)]
    quick: bool,
    /// The `pty-session` binary for the MCP rows [default: `pty-session` next to this one].
    #[arg(long)]
    server: Option<PathBuf>,
    /// Run only these workloads (comma-separated).
    #[arg(long, value_delimiter = ',')]
    only: Vec<Workload>,
    /// Skip peer tools (tmux) even where they are installed.
    #[arg(long)]
    no_peers: bool,
    /// Internal: runs one memory workload in this fresh process and prints its result.
    #[arg(long, hide = true)]
    worker: Option<String>,
}

/// The workloads (BENCHMARKS.md describes each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Workload {
    /// Echo round trip on `cat`.
    Echo,
    /// `6*7` to a python REPL.
    Repl,
    /// Round trips to bash, node and gdb.
    Programs,
    /// `seq 1 5000000`.
    Bulk,
    /// 1 GiB of base64.
    Flood,
    /// 1,000 idle `cat` sessions.
    Idle,
    /// Closing a bash whose children escaped.
    Close,
    /// Re-reads, and an agent's task on a long failed build.
    Reads,
    /// The cost of one look at a foreground group.
    Looks,
    /// A flood watched by two viewers of `serve`, and a viewer's keystroke.
    Viewers,
    /// `pty_screen` reads, and an agent's edit in vim.
    Screens,
    /// Opens, echo and bulk in a workspace sandbox beside the same without one.
    Sandboxes,
    /// Plain `ssh` to a local sshd: settled by the remote prompt beside `until`.
    Ssh,
    /// One owner's echo beside another owner's floods, and alone.
    Fairness,
    /// Where one echo's time goes, stage by stage, and 50 echo sessions at once (last:
    /// it turns the library's timeline on in this process).
    Latency,
}

/// Counts for one run: the full figures of BENCHMARKS.md, or small ones for `--quick`.
#[derive(Debug, Clone)]
pub struct Plan {
    pub quick: bool,
    pub echo_sends: usize,
    pub repl_rounds: usize,
    pub program_rounds: usize,
    /// Sends of each kind over ssh.
    pub ssh_rounds: usize,
    /// Rounds are taken in blocks, alternating between the runs, so that the machine's
    /// load falls on all of them alike.
    pub blocks: usize,
    /// Every how many rounds the (slow) peer tool takes one.
    pub peer_every: usize,
    pub seq_n: u64,
    pub bulk_reps: usize,
    pub flood_bytes: u64,
    pub idle_sessions: usize,
    pub close_reps: usize,
    pub server: PathBuf,
    pub python: String,
    pub peers: bool,
}

impl Plan {
    fn new(args: &Args) -> Result<Plan> {
        let server = match &args.server {
            Some(path) => path.clone(),
            None => std::env::current_exe()
                .context("where is this binary")?
                .with_file_name("pty-session"),
        };
        anyhow::ensure!(
            server.is_file(),
            "the pty-session binary is not at {}; build it first \
             (`cargo build [--release] -p pty-session-server`) or pass --server PATH",
            server.display()
        );
        let python = sys::python();
        let full = Plan {
            quick: false,
            echo_sends: 1000,
            repl_rounds: 200,
            program_rounds: 50,
            ssh_rounds: 40,
            blocks: 10,
            peer_every: 10,
            seq_n: 5_000_000,
            bulk_reps: 5,
            flood_bytes: 1 << 30,
            idle_sessions: 1000,
            close_reps: 10,
            server,
            python,
            peers: !args.no_peers,
        };
        Ok(if args.quick {
            Plan {
                quick: true,
                echo_sends: 20,
                repl_rounds: 10,
                program_rounds: 3,
                ssh_rounds: 3,
                blocks: 2,
                peer_every: 5,
                seq_n: 50_000,
                bulk_reps: 1,
                flood_bytes: 4 << 20,
                idle_sessions: 20,
                close_reps: 2,
                // The smoke test needs nothing beyond what the tests install.
                peers: false,
                ..full
            }
        } else {
            full
        })
    }
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let result = match &args.worker {
        Some(job) => workloads::worker(job).await,
        None => run(&args).await,
    };
    if let Err(err) = result {
        eprintln!("pty-session-bench: {err:#}");
        std::process::exit(1);
    }
}

async fn run(args: &Args) -> Result<()> {
    sys::raise_nofile();
    let plan = Plan::new(args)?;
    let machine = sys::machine();
    let mut report = report::Report::new(plan.quick);
    let all = [
        Workload::Echo,
        Workload::Repl,
        Workload::Programs,
        Workload::Bulk,
        Workload::Flood,
        Workload::Idle,
        Workload::Close,
        Workload::Reads,
        Workload::Looks,
        Workload::Viewers,
        Workload::Screens,
        Workload::Sandboxes,
        Workload::Ssh,
        Workload::Fairness,
        Workload::Latency,
    ];
    for workload in all {
        if !args.only.is_empty() && !args.only.contains(&workload) {
            continue;
        }
        eprintln!("== {workload:?}");
        let ran = match workload {
            Workload::Echo => workloads::echo(&plan, &mut report).await,
            Workload::Repl => workloads::repl(&plan, &mut report).await,
            Workload::Programs => workloads::programs(&plan, &mut report).await,
            Workload::Bulk => workloads::bulk(&plan, &mut report).await,
            Workload::Flood => workloads::flood(&plan, &mut report).await,
            Workload::Idle => workloads::idle(&plan, &mut report).await,
            Workload::Close => workloads::close(&plan, &mut report).await,
            Workload::Reads => reads::reads(&plan, &mut report).await,
            Workload::Looks => looks::looks(&plan, &mut report).await,
            Workload::Viewers => viewers::viewers(&plan, &mut report).await,
            Workload::Screens => screens::screens(&plan, &mut report).await,
            Workload::Sandboxes => sandboxes::sandboxes(&plan, &mut report).await,
            Workload::Ssh => ssh::ssh(&plan, &mut report).await,
            Workload::Fairness => fairness::fairness(&plan, &mut report).await,
            Workload::Latency => latency::latency(&plan, &mut report).await,
        };
        ran.with_context(|| format!("workload {workload:?}"))?;
    }
    report.print(&machine, &plan);
    if !plan.quick && report.missed() > 0 {
        eprintln!("pty-session-bench: {} target(s) missed", report.missed());
    }
    Ok(())
}
