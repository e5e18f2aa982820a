//! Debugs a program you built: breaks at `main`, runs it, prints the backtrace and the
//! locals, and continues it to its exit.
//!
//! ```text
//! gcc -g -O0 -o /tmp/prog crates/pty-session-gdb/test_data/prog.c
//! cargo run -p pty-session-gdb --example debug -- /tmp/prog [ARGS...]
//! ```

use std::process::ExitCode;

use pty_session::{Config, Owner, PtyService};
use pty_session_gdb::{Frame, Gdb, GdbOptions, Record, Variable};

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(program) = args.next() else {
        eprintln!("usage: debug PROGRAM [ARGS...]");
        return ExitCode::from(2);
    };
    match debug(program, args.collect()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("debug: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn debug(program: String, args: Vec<String>) -> Result<(), pty_session_gdb::Error> {
    let pty = PtyService::new(Config::default());
    let options = GdbOptions::new().program(&program).args(args);
    let mut gdb = Gdb::start(&pty, Owner::new("debug-example"), options).await?;

    gdb.command("-break-insert main").await?;
    gdb.command("-exec-run").await?;
    let stop = gdb.wait_stopped().await?;
    println!("stopped: {}", stop.reason.as_deref().unwrap_or("?"));

    println!("backtrace:");
    let frames = gdb.command("-stack-list-frames").await?;
    for value in frames
        .get("stack")
        .into_iter()
        .flat_map(|stack| stack.items())
    {
        let frame = Frame::from_value(value);
        println!(
            "  #{} {} at {}:{}",
            frame.level.unwrap_or(0),
            frame.func.as_deref().unwrap_or("??"),
            frame.file.as_deref().unwrap_or("??"),
            frame.line.map_or("?".to_owned(), |l| l.to_string()),
        );
    }

    println!("locals:");
    let locals = gdb.command("-stack-list-locals --all-values").await?;
    for value in locals.get("locals").into_iter().flat_map(|l| l.items()) {
        let local = Variable::from_value(value);
        println!(
            "  {} = {}",
            local.name,
            local.value.as_deref().unwrap_or("?")
        );
    }

    gdb.command("-break-delete").await?;
    gdb.command("-exec-continue").await?;
    let stop = gdb.wait_stopped().await?;
    // The program's own output shares gdb's terminal: show it.
    for record in gdb.take_events() {
        if let Record::Unparsed(line) = record {
            println!("program: {}", line.text);
        }
    }
    match (stop.exited(), stop.exit_code) {
        (true, Some(code)) => println!("exited with code {code}"),
        _ => println!(
            "stopped again: {} (signal {})",
            stop.reason.as_deref().unwrap_or("?"),
            stop.signal_name.as_deref().unwrap_or("none")
        ),
    }
    gdb.exit().await?;
    Ok(())
}
