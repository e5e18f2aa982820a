//! Output beyond the facade's defaults: more lines than a reply's budget, and a line
//! longer than the 64 KiB that pty-session cuts lines at.

use pty_session_gdb::{GdbOptions, Record};

use crate::support::*;

#[tokio::test]
async fn a_command_with_a_thousand_lines_loses_none() {
    // The service keeps the default budget of 200 lines a reply; the driver asks for more.
    let pty = service();
    assert_eq!(pty.config().tail_lines, 200);
    let mut gdb = start(&pty, "t", GdbOptions::new()).await;
    gdb.command("-break-insert square").await.unwrap();
    gdb.command("-exec-run").await.unwrap();
    gdb.wait_stopped().await.unwrap();
    // 4,000 words of the buffer, four to a line: 1,000 lines of console output.
    let dumped = gdb.command("x/4000xw buffer").await.unwrap();
    let console = dumped.console();
    let dump: Vec<&str> = console
        .lines()
        .skip_while(|line| !line.starts_with("0x"))
        .collect();
    assert_eq!(dump.len(), 1000, "{console}");
    assert!(dump[0].contains("<buffer>:\t0xabababab"), "{}", dump[0]);
    assert!(dump[999].contains("<buffer+15984>:"), "{}", dump[999]);
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
