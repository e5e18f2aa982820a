//! The MI output parser: one line into [`Record`]s. Pure: no I/O, and it never panics; a
//! line that is not MI becomes [`Record::Unparsed`] with a [`ParseError`].
//!
//! The grammar is gdb's ("GDB/MI Output Syntax"), with what real gdb does beyond it:
//! - MI2 prints a breakpoint with several locations as `bkpt={...},{...},{...}`: bare
//!   tuples after a result. A bare value after `name=value` in a list of results is read
//!   as another `name=value` (the name repeats), so no location is lost.
//! - The debugged program shares gdb's terminal, so its output arrives as lines of its
//!   own, and text it printed without a line end runs into gdb's next record
//!   (`Enter: *stopped,...`). [`parse_line`] finds such a record and returns the text
//!   before it as [`Record::Unparsed`]. A program that prints digits right before a
//!   record with a token makes the token ambiguous; the longest reading wins.

use std::str::FromStr;

use crate::error::{ParseError, Problem};
use crate::record::{
    AsyncKind, AsyncRecord, Record, ResultClass, ResultRecord, StreamKind, StreamRecord, Unparsed,
};
use crate::value::{Results, Value};

/// How deep values may nest; deeper lines are [`Problem::TooDeep`], not a stack overflow.
const MAX_DEPTH: usize = 128;
/// How many places inside a line that does not parse are tried as the start of a record.
const MAX_EMBEDDED_TRIES: usize = 16;

/// Parses one line (without its line end) into records: one, or two when text that is
/// not MI runs into a record (see the module doc). Never fails: what is not MI becomes
/// [`Record::Unparsed`].
///
/// ```
/// use pty_session_gdb::{Record, parse_line};
/// let records = parse_line("Enter: *stopped,reason=\"signal-received\"");
/// assert!(matches!(&records[0], Record::Unparsed(u) if u.text == "Enter: "));
/// assert!(matches!(&records[1], Record::Async(a) if a.class == "stopped"));
/// ```
pub fn parse_line(line: &str) -> Vec<Record> {
    let error = match parse_record(line) {
        Ok(record) => return vec![record],
        Err(error) => error,
    };
    if let Some((at, record)) = embedded_record(line) {
        let text = line[..at].to_owned();
        return vec![Record::Unparsed(Unparsed { text, error }), record];
    }
    vec![Record::Unparsed(Unparsed {
        text: line.to_owned(),
        error,
    })]
}

/// Parses one line that must be exactly one record.
pub fn parse_record(line: &str) -> Result<Record, ParseError> {
    let mut parser = Parser::new(line);
    let record = parser.record()?;
    parser.end()?;
    Ok(record)
}

/// Parses one MI value, such as `{func="main",line="20"}`.
pub fn parse_value(text: &str) -> Result<Value, ParseError> {
    let mut parser = Parser::new(text);
    let value = parser.value(0)?;
    parser.end()?;
    Ok(value)
}

impl FromStr for Record {
    type Err = ParseError;

    /// [`parse_record`].
    fn from_str(line: &str) -> Result<Record, ParseError> {
        parse_record(line)
    }
}

impl FromStr for Value {
    type Err = ParseError;

    /// [`parse_value`].
    fn from_str(text: &str) -> Result<Value, ParseError> {
        parse_value(text)
    }
}

/// A record that starts inside `line`, after text that is not MI, and runs to its end.
fn embedded_record(line: &str) -> Option<(usize, Record)> {
    let bytes = line.as_bytes();
    let starts = (1..bytes.len()).filter(|&at| plausible_start(bytes, at));
    for at in starts.take(MAX_EMBEDDED_TRIES) {
        // Every candidate is an ASCII byte, so `at` is a char boundary.
        match parse_record(&line[at..]) {
            // A bare `=word` or `*word` is too easily ordinary text ("x=y"): only a
            // record with details counts.
            Ok(Record::Async(record)) if record.results.is_empty() => {}
            Ok(record) => return Some((at, record)),
            Err(_) => {}
        }
    }
    None
}

/// Whether a record could start at `at`: a cheap look at the next few bytes, so that a
/// long line of ordinary text costs little.
fn plausible_start(bytes: &[u8], at: usize) -> bool {
    let next = bytes.get(at + 1).copied().unwrap_or(0);
    match bytes[at] {
        b'0'..=b'9' => {
            !bytes[at - 1].is_ascii_digit() && {
                let rest = &bytes[at..];
                let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
                matches!(rest.get(digits), Some(b'^' | b'*' | b'+' | b'='))
            }
        }
        b'^' | b'*' | b'+' | b'=' => next.is_ascii_lowercase(),
        b'~' | b'@' | b'&' => next == b'"' && bytes.last() == Some(&b'"'),
        b'(' => bytes[at..].starts_with(b"(gdb)"),
        _ => false,
    }
}

/// A cursor over one line.
struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        Parser {
            bytes: text.as_bytes(),
            at: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn error(&self, problem: Problem) -> ParseError {
        ParseError {
            at: self.at,
            problem,
        }
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), ParseError> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(Problem::Expected(what)))
        }
    }

    fn end(&self) -> Result<(), ParseError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error(Problem::Expected("the end of the line"))),
        }
    }

    /// The bytes while `f` holds, as text (they are ASCII whenever `f` accepts only ASCII).
    fn take_while(&mut self, f: impl Fn(u8) -> bool) -> &'a str {
        let start = self.at;
        while self.peek().is_some_and(&f) {
            self.at += 1;
        }
        std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or_default()
    }

    fn record(&mut self) -> Result<Record, ParseError> {
        if self.bytes.is_empty() {
            return Err(self.error(Problem::Empty));
        }
        let token = self.token()?;
        let Some(prefix) = self.peek() else {
            return Err(self.error(Problem::Expected("'^', '*', '+' or '=' after a token")));
        };
        let kind = match prefix {
            b'^' => {
                self.at += 1;
                let class_at = self.at;
                let name = self.take_while(|b| b.is_ascii_lowercase() || b == b'-');
                let class = ResultClass::from_name(name).ok_or(ParseError {
                    at: class_at,
                    problem: Problem::UnknownResultClass(name.to_owned()),
                })?;
                let results = self.trailing_results()?;
                return Ok(Record::Result(ResultRecord {
                    token,
                    class,
                    results,
                }));
            }
            b'*' => AsyncKind::Exec,
            b'+' => AsyncKind::Status,
            b'=' => AsyncKind::Notify,
            b'~' | b'@' | b'&' if token.is_none() => {
                self.at += 1;
                let kind = match prefix {
                    b'~' => StreamKind::Console,
                    b'@' => StreamKind::Target,
                    _ => StreamKind::Log,
                };
                let text = self.c_string()?;
                return Ok(Record::Stream(StreamRecord { kind, text }));
            }
            b'(' if token.is_none() => return self.prompt(),
            _ if token.is_some() => {
                return Err(self.error(Problem::Expected("'^', '*', '+' or '=' after a token")));
            }
            _ => return Err(self.error(Problem::NotARecord)),
        };
        self.at += 1;
        if !self.peek().is_some_and(|b| b.is_ascii_alphabetic()) {
            return Err(self.error(Problem::Expected("an async class")));
        }
        let class = self
            .take_while(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            .to_owned();
        let results = self.trailing_results()?;
        Ok(Record::Async(AsyncRecord {
            token,
            kind,
            class,
            results,
        }))
    }

    fn token(&mut self) -> Result<Option<u64>, ParseError> {
        let start = self.at;
        let digits = self.take_while(|b| b.is_ascii_digit());
        if digits.is_empty() {
            return Ok(None);
        }
        digits.parse().map(Some).map_err(|_| ParseError {
            at: start,
            problem: Problem::TokenTooLarge,
        })
    }

    fn prompt(&mut self) -> Result<Record, ParseError> {
        if !self.bytes[self.at..].starts_with(b"(gdb)") {
            return Err(self.error(Problem::NotARecord));
        }
        self.at += "(gdb)".len();
        self.take_while(|b| b == b' ');
        Ok(Record::Prompt)
    }

    /// `("," result)*` up to the end of the line.
    fn trailing_results(&mut self) -> Result<Results, ParseError> {
        let mut results = Results::default();
        while self.peek().is_some() {
            self.expect(b',', "',' before a result")?;
            self.result_or_bare_value(&mut results, 0)?;
        }
        Ok(results)
    }

    /// `name=value`, or a bare value after one (MI2's multi-location breakpoints), which
    /// takes the previous name.
    fn result_or_bare_value(
        &mut self,
        results: &mut Results,
        depth: usize,
    ) -> Result<(), ParseError> {
        if matches!(self.peek(), Some(b'{' | b'[' | b'"'))
            && let Some((name, _)) = results.0.last()
        {
            let name = name.clone();
            let value = self.value(depth)?;
            results.0.push((name, value));
            return Ok(());
        }
        let (name, value) = self.result(depth)?;
        results.0.push((name, value));
        Ok(())
    }

    fn result(&mut self, depth: usize) -> Result<(String, Value), ParseError> {
        let name = self.take_while(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if name.is_empty() {
            return Err(self.error(Problem::Expected("a result's name")));
        }
        let name = name.to_owned();
        self.expect(b'=', "'=' after a name")?;
        let value = self.value(depth)?;
        Ok((name, value))
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth >= MAX_DEPTH {
            return Err(self.error(Problem::TooDeep));
        }
        match self.peek() {
            Some(b'"') => Ok(Value::Const(self.c_string()?)),
            Some(b'{') => {
                self.at += 1;
                let mut results = Results::default();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                    return Ok(Value::Tuple(results));
                }
                loop {
                    self.result_or_bare_value(&mut results, depth + 1)?;
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(Value::Tuple(results));
                        }
                        _ => return Err(self.error(Problem::Expected("',' or '}' in a tuple"))),
                    }
                }
            }
            Some(b'[') => {
                self.at += 1;
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Ok(Value::List(Vec::new()));
                }
                if matches!(self.peek(), Some(b'{' | b'[' | b'"')) {
                    let mut values = Vec::new();
                    loop {
                        values.push(self.value(depth + 1)?);
                        match self.peek() {
                            Some(b',') => self.at += 1,
                            Some(b']') => {
                                self.at += 1;
                                return Ok(Value::List(values));
                            }
                            _ => {
                                return Err(self.error(Problem::Expected("',' or ']' in a list")));
                            }
                        }
                    }
                }
                let mut results = Results::default();
                loop {
                    self.result_or_bare_value(&mut results, depth + 1)?;
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(Value::ResultList(results));
                        }
                        _ => return Err(self.error(Problem::Expected("',' or ']' in a list"))),
                    }
                }
            }
            _ => Err(self.error(Problem::Expected("a value: '\"', '{' or '['"))),
        }
    }

    /// A c-string with C's escapes, including octal (`\303\251` is "é" in UTF-8) and hex;
    /// bytes that do not form UTF-8 become U+FFFD.
    fn c_string(&mut self) -> Result<String, ParseError> {
        let start = self.at;
        self.expect(b'"', "'\"'")?;
        let mut out = Vec::new();
        loop {
            let Some(byte) = self.peek() else {
                return Err(ParseError {
                    at: start,
                    problem: Problem::UnterminatedString,
                });
            };
            self.at += 1;
            match byte {
                b'"' => return Ok(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => out.push(self.escape()?),
                byte => out.push(byte),
            }
        }
    }

    /// The byte an escape stands for; the backslash is consumed.
    fn escape(&mut self) -> Result<u8, ParseError> {
        let Some(byte) = self.peek() else {
            return Err(self.error(Problem::UnterminatedString));
        };
        self.at += 1;
        Ok(match byte {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'v' => 0x0b,
            b'a' => 0x07,
            b'e' => 0x1b,
            b'"' | b'\\' | b'\'' | b'?' => byte,
            b'0'..=b'7' => {
                let mut value = u32::from(byte - b'0');
                for _ in 0..2 {
                    match self.peek() {
                        Some(digit @ b'0'..=b'7') => {
                            self.at += 1;
                            value = value * 8 + u32::from(digit - b'0');
                        }
                        _ => break,
                    }
                }
                // `\777` is 511: C wraps it into a byte, and so do we.
                value as u8
            }
            b'x' => {
                let mut value = 0u32;
                let mut digits = 0;
                while digits < 2 {
                    match self.peek().and_then(|b| (b as char).to_digit(16)) {
                        Some(digit) => {
                            self.at += 1;
                            digits += 1;
                            value = value * 16 + digit;
                        }
                        None => break,
                    }
                }
                if digits == 0 {
                    self.at -= 1;
                    return Err(self.error(Problem::BadEscape('x')));
                }
                value as u8
            }
            other => {
                self.at -= 1;
                let c = std::str::from_utf8(&self.bytes[self.at..])
                    .ok()
                    .and_then(|rest| rest.chars().next())
                    .unwrap_or(other as char);
                return Err(self.error(Problem::BadEscape(c)));
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;

    use expect_test::{Expect, expect, expect_file};

    use super::*;
    use crate::framer::LineFramer;
    use crate::test_support::chunked;

    /// A value in a form that shows its structure and its decoded strings.
    fn dump_value(value: &Value, out: &mut String) {
        match value {
            Value::Const(text) => write!(out, "{text:?}").unwrap(),
            Value::Tuple(results) => {
                out.push('{');
                dump_results(results, out);
                out.push('}');
            }
            Value::List(values) => {
                out.push('[');
                for (i, value) in values.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    dump_value(value, out);
                }
                out.push(']');
            }
            Value::ResultList(results) => {
                out.push_str("[results ");
                dump_results(results, out);
                out.push(']');
            }
        }
    }

    fn dump_results(results: &Results, out: &mut String) {
        for (i, (name, value)) in results.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write!(out, "{name}: ").unwrap();
            dump_value(value, out);
        }
    }

    fn dump(record: &Record) -> String {
        let token = |t: Option<u64>| t.map_or("-".to_owned(), |t| t.to_string());
        let mut out = String::new();
        match record {
            Record::Result(r) => {
                write!(out, "result {} {}", token(r.token), r.class.as_str()).unwrap();
                if !r.results.is_empty() {
                    out.push(' ');
                    dump_results(&r.results, &mut out);
                }
            }
            Record::Async(r) => {
                let kind = match r.kind {
                    AsyncKind::Exec => "exec",
                    AsyncKind::Status => "status",
                    AsyncKind::Notify => "notify",
                };
                write!(out, "{kind} {} {}", token(r.token), r.class).unwrap();
                if !r.results.is_empty() {
                    out.push(' ');
                    dump_results(&r.results, &mut out);
                }
            }
            Record::Stream(r) => {
                let kind = match r.kind {
                    StreamKind::Console => "console",
                    StreamKind::Target => "target",
                    StreamKind::Log => "log",
                };
                write!(out, "{kind} {:?}", r.text).unwrap();
            }
            Record::Prompt => out.push_str("prompt"),
            Record::Unparsed(u) => write!(out, "unparsed {:?} ({})", u.text, u.error).unwrap(),
        }
        out
    }

    /// Frames `chunks` into lines and parses each; every parsed record must print back
    /// to MI that parses to itself.
    fn parse_stream(chunks: &mut dyn Iterator<Item = &[u8]>) -> String {
        let mut framer = LineFramer::new();
        let mut lines = Vec::new();
        for chunk in chunks {
            lines.extend(framer.push(chunk));
        }
        lines.extend(framer.finish());
        let mut out = String::new();
        for line in &lines {
            for record in parse_line(line) {
                if !matches!(record, Record::Unparsed(_)) {
                    let printed = record.to_string();
                    assert_eq!(
                        parse_record(&printed).as_ref(),
                        Ok(&record),
                        "{printed} does not parse back"
                    );
                }
                out.push_str(&dump(&record));
                out.push('\n');
            }
        }
        out
    }

    /// Parses `input` fed whole, byte by byte and in random chunks; all must agree.
    fn parsed_every_way(input: &[u8]) -> String {
        let whole = parse_stream(&mut std::iter::once(input));
        assert_eq!(whole, parse_stream(&mut input.chunks(1)), "byte by byte");
        for seed in 1..=5 {
            let chunks = parse_stream(&mut chunked(input, seed).into_iter());
            assert_eq!(whole, chunks, "chunks of seed {seed}");
        }
        whole
    }

    #[track_caller]
    fn check(input: &str, expect: Expect) {
        expect.assert_eq(&parsed_every_way(input.as_bytes()));
    }

    #[track_caller]
    fn check_recorded(raw: &[u8], expect: expect_test::ExpectFile) {
        expect.assert_eq(&parsed_every_way(raw));
    }

    #[test]
    fn recorded_session() {
        // break, run, frames, next, finish, print, locals, watchpoint, step, exit, ^error.
        check_recorded(
            include_bytes!("../test_data/session.raw"),
            expect_file!["../test_data/session.expected"],
        );
    }

    #[test]
    fn recorded_interrupt() {
        // MI2's multi-location breakpoint, a breakpoint table, memory, -exec-interrupt.
        check_recorded(
            include_bytes!("../test_data/interrupt.raw"),
            expect_file!["../test_data/interrupt.expected"],
        );
    }

    #[test]
    fn recorded_ctrl_c() {
        check_recorded(
            include_bytes!("../test_data/ctrl-c.raw"),
            expect_file!["../test_data/ctrl-c.expected"],
        );
    }

    #[test]
    fn result_classes_and_tokens() {
        check(
            "^done\n12^running\n^connected\n3^error,msg=\"No symbol \\\"x\\\".\",code=\"undefined-command\"\n18446744073709551615^exit\n",
            expect![[r#"
                result - done
                result 12 running
                result - connected
                result 3 error msg: "No symbol \"x\".", code: "undefined-command"
                result 18446744073709551615 exit
            "#]],
        );
    }

    #[test]
    fn async_and_stream_kinds() {
        check(
            "*running,thread-id=\"all\"\n7*stopped\n+download,section=\".text\"\n=thread-exited,id=\"1\"\n~\"con\"\n@\"tgt\"\n&\"log\\n\"\n",
            expect![[r#"
                exec - running thread-id: "all"
                exec 7 stopped
                status - download section: ".text"
                notify - thread-exited id: "1"
                console "con"
                target "tgt"
                log "log\n"
            "#]],
        );
    }

    #[test]
    fn c_string_escapes() {
        check(
            r#"~"tab\t nl\n cr\r q\" bs\\ sq\' qm\? bel\a bs\b ff\f vt\v esc\e oct\033 \0 \101\102 utf8\303\251 hex\x41\x7e wrap\777 raw é""#,
            expect![[r#"
                console "tab\t nl\n cr\r q\" bs\\ sq' qm? bel\u{7} bs\u{8} ff\u{c} vt\u{b} esc\u{1b} oct\u{1b} \0 AB utf8é hexA~ wrap� raw é"
            "#]],
        );
        check(
            r#"~"\377\376 alone\303""#,
            expect![[r#"
                console "�� alone�"
            "#]],
        );
    }

    #[test]
    fn prompts() {
        check(
            "(gdb) \n(gdb)\n(gdb)   \n",
            expect![[r#"
                prompt
                prompt
                prompt
            "#]],
        );
    }

    #[test]
    fn tuples_and_lists() {
        check(
            r#"^done,a={},b=[],c=["1",["2"],{x="3"}],d=[f={l="0"},f={l="1"}],e={n={m=[]}},x.y_z-1="v""#,
            expect![[r#"
                result - done a: {}, b: [], c: ["1", ["2"], {x: "3"}], d: [results f: {l: "0"}, f: {l: "1"}], e: {n: {m: []}}, x.y_z-1: "v"
            "#]],
        );
    }

    #[test]
    fn mi2_bare_values_after_a_result_take_its_name() {
        check(
            r#"^done,bkpt={number="1",addr="<MULTIPLE>"},{number="1.1"},{number="1.2"}
^done,body=[bkpt={number="1"},{number="1.1"}]"#,
            expect![[r#"
                result - done bkpt: {number: "1", addr: "<MULTIPLE>"}, bkpt: {number: "1.1"}, bkpt: {number: "1.2"}
                result - done body: [results bkpt: {number: "1"}, bkpt: {number: "1.1"}]
            "#]],
        );
    }

    #[test]
    fn malformed_lines_are_unparsed_with_why() {
        check(
            concat!(
                "\n",
                "hello world\n",
                "^bogus\n",
                "1~\"x\"\n",
                "12\n",
                "~\"unterminated\n",
                "~\"bad \\q escape\"\n",
                "~\"ends in \\\n",
                "~\"\\x\"\n",
                "~x\n",
                "^done,x\n",
                "^done,x=\n",
                "^done,x=y\n",
                "^done,x=\"1\"junk\n",
                "^done,=\"1\"\n",
                "^done,a={b=\"1\"\n",
                "^done,a=[\"1\"\n",
                "^done,a=[b=\"1\",\"2\"x]\n",
                "*\n",
                "*1x\n",
                "99999999999999999999999^done\n",
                "(gdb) x\n",
                "(gd\n",
                "é ü\n",
            ),
            expect![[r#"
                unparsed "" (at byte 0: empty line)
                unparsed "hello world" (at byte 0: not an MI record)
                unparsed "^bogus" (at byte 1: unknown result class "bogus")
                unparsed "1" (at byte 1: expected '^', '*', '+' or '=' after a token)
                console "x"
                unparsed "12" (at byte 2: expected '^', '*', '+' or '=' after a token)
                unparsed "~\"unterminated" (at byte 1: unterminated c-string)
                unparsed "~\"bad \\q escape\"" (at byte 7: unknown escape \q)
                unparsed "~\"ends in \\" (at byte 11: unterminated c-string)
                unparsed "~\"\\x\"" (at byte 3: unknown escape \x)
                unparsed "~x" (at byte 1: expected '"')
                unparsed "^done,x" (at byte 7: expected '=' after a name)
                unparsed "^done,x=" (at byte 8: expected a value: '"', '{' or '[')
                unparsed "^done,x=y" (at byte 8: expected a value: '"', '{' or '[')
                unparsed "^done,x=\"1\"junk" (at byte 11: expected ',' before a result)
                unparsed "^done,=\"1\"" (at byte 6: expected a result's name)
                unparsed "^done,a={b=\"1\"" (at byte 14: expected ',' or '}' in a tuple)
                unparsed "^done,a=[\"1\"" (at byte 12: expected ',' or ']' in a list)
                unparsed "^done,a=[b=\"1\",\"2\"x]" (at byte 18: expected ',' or ']' in a list)
                unparsed "*" (at byte 1: expected an async class)
                unparsed "*1x" (at byte 1: expected an async class)
                unparsed "99999999999999999999999" (at byte 0: token too large)
                result - done
                unparsed "(gdb) x" (at byte 6: expected the end of the line)
                unparsed "(gd" (at byte 0: not an MI record)
                unparsed "é ü" (at byte 0: not an MI record)
            "#]],
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let line = format!("^done,a={}{}", "[".repeat(100_000), "]".repeat(100_000));
        let records = parse_line(&line);
        let [Record::Unparsed(unparsed)] = records.as_slice() else {
            panic!("{records:?}");
        };
        assert_eq!(unparsed.error.problem, Problem::TooDeep);
    }

    #[test]
    fn program_output_running_into_a_record() {
        check(
            concat!(
                "Enter a number: *stopped,reason=\"signal-received\",signal-name=\"SIGINT\"\n",
                "progress 50%~\"Run till exit\\n\"\n",
                "no newline(gdb) \n",
                "abc12^done,value=\"1\"\n",
                "total=28\n",
                "x=y\n",
                "a*b and c^d\n",
                "é=ü*stopped,reason=\"x\"\n",
            ),
            expect![[r#"
                unparsed "Enter a number: " (at byte 0: not an MI record)
                exec - stopped reason: "signal-received", signal-name: "SIGINT"
                unparsed "progress 50%" (at byte 0: not an MI record)
                console "Run till exit\n"
                unparsed "no newline" (at byte 0: not an MI record)
                prompt
                unparsed "abc" (at byte 0: not an MI record)
                result 12 done value: "1"
                unparsed "total=28" (at byte 0: not an MI record)
                unparsed "x=y" (at byte 0: not an MI record)
                unparsed "a*b and c^d" (at byte 0: not an MI record)
                unparsed "é=ü" (at byte 0: not an MI record)
                exec - stopped reason: "x"
            "#]],
        );
    }

    #[test]
    fn values_parse_alone() {
        let value: Value = r#"{a="1",b=["x","y"]}"#.parse().unwrap();
        assert_eq!(value.str("a"), Some("1"));
        let items: Vec<_> = value.get("b").unwrap().items().collect();
        assert_eq!(
            items,
            [&Value::Const("x".into()), &Value::Const("y".into())]
        );
        assert_eq!(value.to_string(), r#"{a="1",b=["x","y"]}"#);
        assert!("{a=\"1\"} x".parse::<Value>().is_err());
        assert!("".parse::<Value>().is_err());
    }

    #[test]
    fn arbitrary_lines_never_panic() {
        // Lines drawn from MI's own characters, so they get deep into the parser.
        let alphabet = br#"0123456789^*+=~@&(gdb) ,{}[]"\\abcxyz-_.nt0377"#;
        let mut state = 0x9e3779b97f4a7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let len = (next() % 40) as usize;
            let line: Vec<u8> = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            let line = String::from_utf8_lossy(&line);
            for record in parse_line(&line) {
                if !matches!(record, Record::Unparsed(_)) {
                    assert_eq!(parse_record(&record.to_string()), Ok(record));
                }
            }
        }
    }
}
