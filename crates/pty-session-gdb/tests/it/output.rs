//! Output beyond the facade's defaults: more lines than a reply's budget, and a line
//! longer than the 64 KiB that pty-session cuts lines at.

use pty_session_gdb::{GdbOptions, Record};

use crate::support::*;

#[tokio::test]
async fn a_command_with_thousands_of_lines_loses_none() {
    // The service keeps the default budget of 200 lines a reply; the driver asks for more.
    let pty = service();
    assert_eq!(pty.config().tail_lines, 200);
    let mut gdb = start(&pty, "t", GdbOptions::new()).await;
    gdb.command("-break-insert main").await.unwrap();
    gdb.command("-exec-run").await.unwrap();
    gdb.wait_stopped().await.unwrap();
    // With libc loaded, `info functions` lists thousands of symbols, one record a line.
    let listed = gdb.command("info functions").await.unwrap();
    let lines = listed
        .records
        .iter()
        .filter(|r| matches!(r, Record::Stream(_)))
        .count();
    assert!(lines > 1000, "only {lines} lines");
    // The console text of the stop at main comes first, then the whole listing.
    let console = listed.console();
    let listing = console
        .find("All defined functions:")
        .map(|at| &console[at..])
        .expect("the listing's first line");
    assert!(
        listing.contains("int square(int);"),
        "its first lines are there"
    );
    assert!(
        listing.contains("Non-debugging symbols:"),
        "and its last ones"
    );
    assert_eq!(gdb.lines_lost(), 0);
    gdb.exit().await.unwrap();
}

#[tokio::test]
async fn a_result_longer_than_64_kib_arrives_whole() {
    let pty = service();
    let mut gdb = start(&pty, "t", GdbOptions::new()).await;
    gdb.command("-break-insert square").await.unwrap();
    gdb.command("-exec-run").await.unwrap();
    gdb.wait_stopped().await.unwrap();
    // 40,000 bytes of 0xab as hex: an 80,000-character line.
    let memory = gdb
        .command("-data-read-memory-bytes buffer 40000")
        .await
        .unwrap();
    let block = memory
        .get("memory")
        .and_then(|m| m.items().next())
        .expect("a memory block");
    let contents = block.str("contents").expect("contents");
    assert_eq!(contents.len(), 80_000);
    assert!(contents.bytes().all(|b| b == b'a' || b == b'b'));
    assert!(
        !memory
            .records
            .iter()
            .any(|r| matches!(r, Record::Unparsed(_))),
        "no piece of the line is left unparsed: {:?}",
        memory.records
    );
    // gdb goes on answering after it.
    let value = gdb.command("-data-evaluate-expression n").await.unwrap();
    assert_eq!(value.str("value"), Some("1"));
    gdb.exit().await.unwrap();
}
