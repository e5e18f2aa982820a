//! Recordings: each session written as an asciinema v2 `.cast` file, from a task of its
//! own.
//!
//! The header is written before the session's first output, when the file is created, so
//! that even a session that never printed anything leaves a file a player opens. A window
//! resize is an `"r"` event (`"COLSxROWS"`), so that a replay draws at the size the
//! program drew at.
//!
//! The drain hands every chunk of output to [`Recorder::output`], which only queues it on a
//! bounded channel (`try_send`: the drain never waits on the disk). The writer task turns
//! the chunks into `[seconds, "o", text]` lines and flushes after each batch, so the file
//! is complete up to the last output at any time. When the queue is full the chunk is
//! counted instead, and the next line written is a marker (`"m"`) saying how many bytes
//! the recording is missing. The file is cut at a size cap, with a marker saying so.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use tokio::io::AsyncWriteExt as _;
use tokio::sync::mpsc;

use crate::SessionId;

/// How many chunks (each at most one read, 64 KiB) may wait for the writer: at most 4 MiB
/// a session, whatever the disk does.
const QUEUE: usize = 64;

/// What a recording starts with: the header's fields.
pub(crate) struct Header<'a> {
    pub(crate) id: &'a SessionId,
    pub(crate) command: &'a str,
    pub(crate) cols: u16,
    pub(crate) rows: u16,
    /// The child's environment; `TERM` and `SHELL` go into the header.
    pub(crate) env: &'a BTreeMap<String, String>,
}

enum Event {
    Output(Instant, Vec<u8>),
    Input(Instant, Vec<u8>),
    Resize(Instant, u16, u16),
}

/// The drain's handle on one session's recording. Dropping it ends the file.
pub(crate) struct Recorder {
    queue: mpsc::Sender<Event>,
    /// Bytes the queue had no room for, not yet reported in the file.
    lost: Arc<AtomicU64>,
    /// Whether agent input (sends) is recorded too.
    input: bool,
}

impl Recorder {
    /// Creates the `.cast` file in `dir` (mode 0600; `dir` created 0700 if missing), writes
    /// its header and starts its writer task. Needs a tokio runtime.
    pub(crate) fn start(
        dir: &Path,
        header: &Header<'_>,
        max_bytes: u64,
        input: bool,
    ) -> io::Result<(Recorder, PathBuf)> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let path = dir.join(format!(
            "{}-{}.cast",
            utc_stamp(now.as_secs()),
            header.id.as_str()
        ));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        // The header now, not from the writer task: the file is valid from the start.
        let head = header_line(header, now.as_secs());
        std::io::Write::write_all(&mut file, head.as_bytes())?;
        let (queue, events) = mpsc::channel(QUEUE);
        let lost = Arc::new(AtomicU64::new(0));
        let writer = Writer {
            file: tokio::io::BufWriter::with_capacity(64 * 1024, tokio::fs::File::from_std(file)),
            start: Instant::now(),
            written: head.len() as u64,
            max_bytes,
            utf8: Utf8Carry::default(),
            lost: lost.clone(),
        };
        tokio::spawn(writer.run(events));
        Ok((Recorder { queue, lost, input }, path))
    }

    /// Queues a chunk of output; counts it as lost if the writer is behind.
    pub(crate) fn output(&self, bytes: &[u8]) {
        self.queue(Event::Output(Instant::now(), bytes.to_vec()), bytes.len());
    }

    /// Queues a window resize.
    pub(crate) fn resize(&self, cols: u16, rows: u16) {
        self.queue(Event::Resize(Instant::now(), cols, rows), 0);
    }

    /// Queues what an agent typed, if input is recorded.
    pub(crate) fn input(&self, bytes: &[u8]) {
        if self.input {
            self.queue(Event::Input(Instant::now(), bytes.to_vec()), 0);
        }
    }

    fn queue(&self, event: Event, len: usize) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.queue.try_send(event) {
            self.lost.fetch_add(len as u64, Ordering::Relaxed);
        }
    }
}

/// The writer task's state.
struct Writer {
    file: tokio::io::BufWriter<tokio::fs::File>,
    start: Instant,
    /// Bytes in the file so far.
    written: u64,
    max_bytes: u64,
    /// Output may split a character between reads.
    utf8: Utf8Carry,
    lost: Arc<AtomicU64>,
}

impl Writer {
    async fn run(mut self, mut events: mpsc::Receiver<Event>) {
        let mut batch = Vec::new();
        while events.recv_many(&mut batch, QUEUE).await > 0 {
            match self.write_batch(&mut batch).await {
                Ok(true) => {}
                Ok(false) => break, // cut at the cap
                Err(err) => {
                    tracing::warn!("cannot write the recording: {err}; it ends here");
                    break;
                }
            }
        }
        // Whatever the channel still holds is dropped with it; what was written is flushed.
        let _ = self.file.flush().await;
    }

    /// Writes a batch of events and flushes; `Ok(false)` once the cap is reached.
    async fn write_batch(&mut self, batch: &mut Vec<Event>) -> io::Result<bool> {
        for event in batch.drain(..) {
            let lost = self.lost.swap(0, Ordering::Relaxed);
            let (at, kind, text) = match &event {
                Event::Output(at, bytes) => (*at, "o", self.utf8.decode(bytes)),
                Event::Input(at, bytes) => (*at, "i", String::from_utf8_lossy(bytes).into_owned()),
                Event::Resize(at, cols, rows) => (*at, "r", format!("{cols}x{rows}")),
            };
            let seconds = at.saturating_duration_since(self.start).as_secs_f64();
            if lost > 0 {
                let note = format!("{lost} bytes of output are missing here: the disk fell behind");
                self.write_all(event_line(seconds, "m", &note)).await?;
            }
            let line = event_line(seconds, kind, &text);
            if self.written + line.len() as u64 > self.max_bytes {
                let note = format!(
                    "recording cut: it reached its size cap of {} bytes; later output is not recorded",
                    self.max_bytes
                );
                self.write_all(event_line(seconds, "m", &note)).await?;
                self.file.flush().await?;
                return Ok(false);
            }
            self.write_all(line).await?;
        }
        self.file.flush().await?;
        Ok(true)
    }

    async fn write_all(&mut self, line: String) -> io::Result<()> {
        self.file.write_all(line.as_bytes()).await?;
        self.written += line.len() as u64;
        Ok(())
    }
}

/// The header line: version 2, the window, the start time, the command, `TERM`/`SHELL`.
fn header_line(header: &Header<'_>, unix_seconds: u64) -> String {
    let mut env = String::new();
    for name in ["TERM", "SHELL"] {
        if let Some(value) = header.env.get(name) {
            if !env.is_empty() {
                env.push(',');
            }
            env.push_str(&format!("{}:{}", json_string(name), json_string(value)));
        }
    }
    format!(
        "{{\"version\":2,\"width\":{},\"height\":{},\"timestamp\":{},\"command\":{},\"title\":{},\"env\":{{{}}}}}\n",
        header.cols,
        header.rows,
        unix_seconds,
        json_string(header.command),
        json_string(&format!("pty-session {}", header.id.as_str())),
        env
    )
}

/// One event line: `[seconds, "kind", "text"]`.
fn event_line(seconds: f64, kind: &str, text: &str) -> String {
    format!("[{seconds:.6},\"{kind}\",{}]\n", json_string(text))
}

/// `text` as a JSON string literal.
///
/// Written here, not with `serde_json`: the library must not depend on it (a wire crate:
/// see the dependency invariant in ARCHITECTURE.md). The tests hold this and the lines
/// built with it to `serde_json`'s reading, on arbitrary text.
fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Decodes a byte stream cut anywhere as UTF-8: a character split between chunks is
/// carried to the next; invalid bytes become U+FFFD, one for each maximal invalid run, as
/// [`String::from_utf8_lossy`] does.
#[derive(Default)]
struct Utf8Carry {
    /// The start of a character the last chunk ended in: at most 3 bytes.
    carry: Vec<u8>,
}

impl Utf8Carry {
    fn decode(&mut self, bytes: &[u8]) -> String {
        let mut input = std::mem::take(&mut self.carry);
        input.extend_from_slice(bytes);
        let mut out = String::with_capacity(input.len());
        let mut chunks = input.utf8_chunks().peekable();
        while let Some(chunk) = chunks.next() {
            out.push_str(chunk.valid());
            let invalid = chunk.invalid();
            if invalid.is_empty() {
                continue;
            }
            // Only the last run can be a character whose rest is in the next chunk.
            let incomplete = chunks.peek().is_none()
                && std::str::from_utf8(invalid).is_err_and(|err| err.error_len().is_none());
            if incomplete {
                self.carry = invalid.to_vec();
            } else {
                out.push('\u{fffd}');
            }
        }
        out
    }
}

/// `YYYYMMDDTHHMMSSZ` of a Unix time, in UTC: the start of a recording's file name.
fn utc_stamp(unix_seconds: u64) -> String {
    i64::try_from(unix_seconds)
        .ok()
        .and_then(|seconds| chrono::DateTime::from_timestamp(seconds, 0))
        .map_or_else(
            || unix_seconds.to_string(),
            |time| time.format("%Y%m%dT%H%M%SZ").to_string(),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_split_anywhere_decodes_as_whole() {
        let text = "a€b😀c\u{1b}[31mé";
        let bytes = text.as_bytes();
        for cut in 0..=bytes.len() {
            let mut carry = Utf8Carry::default();
            let joined = carry.decode(&bytes[..cut]) + &carry.decode(&bytes[cut..]);
            assert_eq!(joined, text, "cut at {cut}");
        }
        let mut carry = Utf8Carry::default();
        assert_eq!(carry.decode(b"x\xffy\xe2\x82"), "x\u{fffd}y");
        assert_eq!(carry.decode(b"\xacz"), "€z");
    }

    proptest::proptest! {
        /// Any output, cut into two chunks anywhere, reads as `from_utf8_lossy` reads the
        /// whole (only a character cut in two is carried, never an invalid byte).
        #[test]
        fn utf8_carry_reads_as_lossy_whole(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..32), cut in 0usize..32) {
            let cut = cut.min(bytes.len());
            let mut carry = Utf8Carry::default();
            let joined = carry.decode(&bytes[..cut]) + &carry.decode(&bytes[cut..]);
            // A character cut at the very end stays carried, waiting for its rest.
            let expected = String::from_utf8_lossy(&bytes[..bytes.len() - carry.carry.len()]);
            proptest::prop_assert_eq!(joined, expected);
        }

        /// Any text, and an event line carrying it, reads back through `serde_json`.
        #[test]
        fn json_lines_read_back(text in "\\PC*|[\\x00-\\x7f]*", micros in 0u64..10_000_000_000) {
            let back: String = serde_json::from_str(&json_string(&text)).unwrap();
            proptest::prop_assert_eq!(&back, &text);
            let seconds = micros as f64 / 1e6;
            let line = event_line(seconds, "o", &text);
            proptest::prop_assert!(line.ends_with("]\n"));
            let (at, kind, data): (f64, String, String) = serde_json::from_str(&line).unwrap();
            proptest::prop_assert!((at - seconds).abs() < 1e-6, "{} read as {}", seconds, at);
            proptest::prop_assert_eq!(kind, "o");
            proptest::prop_assert_eq!(data, text);
        }
    }

    #[test]
    fn json_strings_escape_controls() {
        assert_eq!(
            json_string("a\"b\\c\r\n\t\u{1b}[0m\u{7f}é"),
            r#""a\"b\\c\r\n\t\u001b[0m\u007fé""#
        );
        assert_eq!(
            event_line(1.5, "o", "hi\r\n"),
            "[1.500000,\"o\",\"hi\\r\\n\"]\n"
        );
    }

    #[test]
    fn header_names_window_command_and_terminal() {
        let env = [("TERM", "xterm-256color"), ("HOME", "/root")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let id = SessionId::new("abc");
        let header = Header {
            id: &id,
            command: "echo \"hi\"",
            cols: 100,
            rows: 30,
            env: &env,
        };
        assert_eq!(
            header_line(&header, 1_700_000_000),
            "{\"version\":2,\"width\":100,\"height\":30,\"timestamp\":1700000000,\
             \"command\":\"echo \\\"hi\\\"\",\"title\":\"pty-session abc\",\
             \"env\":{\"TERM\":\"xterm-256color\"}}\n"
        );
    }

    #[test]
    fn stamps_are_utc() {
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        assert_eq!(utc_stamp(1_764_792_381), "20251203T200621Z");
    }
}
