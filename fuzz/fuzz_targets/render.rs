//! Bytes → lines: never a panic, lines within 64 KiB, and the same result however the
//! bytes are cut into reads.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pty_session::fuzzing::{MAX_LINE_BYTES, render};

fuzz_target!(|data: &[u8]| {
    // The first byte picks where to cut the rest into reads.
    let Some((&seed, bytes)) = data.split_first() else { return };
    let whole = render(bytes, &[]);
    let step = usize::from(seed % 31) + 1;
    let cuts: Vec<usize> = (step..bytes.len()).step_by(step).collect();
    let chunked = render(bytes, &cuts);
    assert_eq!(whole, chunked, "cut every {step} bytes");
    let single: Vec<usize> = (1..bytes.len()).collect();
    assert_eq!(whole, render(bytes, &single), "byte by byte");
    assert!(whole.0.iter().all(|line| line.len() <= MAX_LINE_BYTES));
    assert!(whole.1.len() <= MAX_LINE_BYTES);
});
