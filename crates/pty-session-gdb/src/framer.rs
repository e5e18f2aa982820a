//! [`LineFramer`]: a byte stream in chunks of any size into lines. Pure, cannot fail.
//!
//! The driver gets lines from pty-session already split; the framer is for MI output
//! that comes as raw bytes instead (a pipe, a recorded transcript, a socket).

/// Splits bytes into lines at `\n`, dropping one `\r` before it (a terminal's `\r\n`).
///
/// A line is decoded once it is complete, so a UTF-8 character split across chunks
/// comes out whole; bytes that are not UTF-8 become U+FFFD.
///
/// ```
/// use pty_session_gdb::LineFramer;
/// let mut framer = LineFramer::new();
/// assert_eq!(framer.push(b"^done\r\n(gd"), vec!["^done".to_owned()]);
/// assert_eq!(framer.push(b"b) \r\n"), vec!["(gdb) ".to_owned()]);
/// assert_eq!(framer.finish(), None);
/// ```
#[derive(Debug, Clone, Default)]
pub struct LineFramer {
    partial: Vec<u8>,
}

impl LineFramer {
    /// A framer with nothing buffered.
    pub fn new() -> LineFramer {
        LineFramer::default()
    }

    /// Feeds a chunk; returns the lines it completed, without their line ends.
    pub fn push(&mut self, chunk: impl AsRef<[u8]>) -> Vec<String> {
        let mut lines = Vec::new();
        let mut rest = chunk.as_ref();
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            self.partial.extend_from_slice(&rest[..end]);
            if self.partial.last() == Some(&b'\r') {
                self.partial.pop();
            }
            lines.push(String::from_utf8_lossy(&self.partial).into_owned());
            self.partial.clear();
            rest = &rest[end + 1..];
        }
        self.partial.extend_from_slice(rest);
        lines
    }

    /// The text after the last line end, such as a prompt not yet ended.
    pub fn pending(&self) -> String {
        String::from_utf8_lossy(&self.partial).into_owned()
    }

    /// Ends the stream: the unfinished last line, if there is one.
    pub fn finish(self) -> Option<String> {
        (!self.partial.is_empty()).then(|| String::from_utf8_lossy(&self.partial).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;
    use crate::test_support::chunked;

    fn frame(chunks: &mut dyn Iterator<Item = &[u8]>) -> String {
        let mut framer = LineFramer::new();
        let mut out = String::new();
        for chunk in chunks {
            for line in framer.push(chunk) {
                out.push_str(&format!("line {line:?}\n"));
            }
        }
        out.push_str(&format!("pending {:?}\n", framer.pending()));
        out.push_str(&format!("finish {:?}\n", framer.finish()));
        out
    }

    /// Frames `input` whole, byte by byte and in random chunks; all must agree.
    #[track_caller]
    fn check(input: &[u8], expect: Expect) {
        let whole = frame(&mut std::iter::once(input));
        assert_eq!(whole, frame(&mut input.chunks(1)), "byte by byte");
        for seed in 1..=5 {
            let chunks = frame(&mut chunked(input, seed).into_iter());
            assert_eq!(whole, chunks, "chunks of seed {seed}");
        }
        expect.assert_eq(&whole);
    }

    #[test]
    fn crlf_lf_and_a_pending_prompt() {
        check(
            b"^done\r\n~\"a\"\n\r\n(gdb) ",
            expect![[r#"
                line "^done"
                line "~\"a\""
                line ""
                pending "(gdb) "
                finish Some("(gdb) ")
            "#]],
        );
    }

    #[test]
    fn a_lone_cr_stays_and_only_one_cr_is_dropped() {
        check(
            b"a\rb\r\r\n",
            expect![[r#"
                line "a\rb\r"
                pending ""
                finish None
            "#]],
        );
    }

    #[test]
    fn utf8_split_across_chunks_and_invalid_bytes() {
        check(
            "é€😀\n".as_bytes(),
            expect![[r#"
                line "é€😀"
                pending ""
                finish None
            "#]],
        );
        check(
            b"ok\xff\xfe\n\xc3",
            expect![[r#"
                line "ok��"
                pending "�"
                finish Some("�")
            "#]],
        );
    }

    #[test]
    fn empty_input() {
        check(
            b"",
            expect![[r#"
                pending ""
                finish None
            "#]],
        );
    }
}
