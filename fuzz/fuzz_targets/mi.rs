//! GDB/MI output → records: never a panic, whatever the bytes; the framer gives the same
//! lines however the stream is cut; a line that is not one record keeps its text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pty_session_gdb::{LineFramer, Record, parse_line, parse_value};

fuzz_target!(|data: &[u8]| {
    // The first byte picks where to cut the rest into reads.
    let Some((&seed, bytes)) = data.split_first() else { return };
    let mut whole = LineFramer::new();
    let mut lines = whole.push(bytes);
    let mut chunked = LineFramer::new();
    let mut pieces = Vec::new();
    for chunk in bytes.chunks(usize::from(seed % 23) + 1) {
        pieces.extend(chunked.push(chunk));
    }
    assert_eq!(lines, pieces, "cut every {} bytes", seed % 23 + 1);
    assert_eq!(whole.pending(), chunked.pending());
    lines.extend(whole.finish());

    for line in &lines {
        let records = parse_line(line);
        assert!(matches!(records.len(), 1 | 2), "{line:?} gave {records:?}");
        if let [Record::Unparsed(first), ..] = records.as_slice() {
            assert!(line.starts_with(&first.text), "{line:?} lost its text");
        }
        let _ = parse_value(line);
    }
});
