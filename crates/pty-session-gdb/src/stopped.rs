//! Typed views of what stops return: [`Stopped`], its [`Frame`], and [`Variable`]s (the
//! frame's arguments, `-stack-list-locals`, `-stack-list-variables`).

use crate::record::{AsyncKind, AsyncRecord};
use crate::value::Value;

/// A `*stopped` record: why the target stopped and where.
///
/// The record itself is kept in [`record`](Self::record) for the fields this view does
/// not name (`bkptno`, `wpt`, `value`, `return-value`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stopped {
    /// `reason`, such as `breakpoint-hit`, `end-stepping-range`, `function-finished`,
    /// `watchpoint-trigger`, `signal-received`, `exited`, `exited-normally`. gdb leaves
    /// it out in some cases (a stop after an interrupt in some modes).
    pub reason: Option<String>,
    /// Where, when the target still exists.
    pub frame: Option<Frame>,
    /// `thread-id`.
    pub thread_id: Option<String>,
    /// The exit code, for `exited` (gdb prints it in octal: `"014"` is 12) and 0 for
    /// `exited-normally`.
    pub exit_code: Option<i64>,
    /// `signal-name`, such as `SIGINT`, for `signal-received` and `exited-signalled`.
    pub signal_name: Option<String>,
    /// The whole record.
    pub record: AsyncRecord,
}

impl Stopped {
    /// The view of `record`, if it is a `*stopped` record.
    pub fn from_record(record: &AsyncRecord) -> Option<Stopped> {
        if record.kind != AsyncKind::Exec || record.class != "stopped" {
            return None;
        }
        let results = &record.results;
        let reason = results.str("reason").map(str::to_owned);
        let exit_code = match reason.as_deref() {
            Some("exited-normally") => Some(0),
            _ => results.str("exit-code").and_then(parse_exit_code),
        };
        Some(Stopped {
            frame: results.get("frame").map(Frame::from_value),
            thread_id: results.str("thread-id").map(str::to_owned),
            exit_code,
            signal_name: results.str("signal-name").map(str::to_owned),
            reason,
            record: record.clone(),
        })
    }

    /// Whether the program ended (`exited`, `exited-normally`, `exited-signalled`).
    pub fn exited(&self) -> bool {
        self.reason
            .as_deref()
            .is_some_and(|r| r.starts_with("exited"))
    }
}

/// gdb prints exit codes as C octal (`"0%o"`): `"014"` is 12; `"0"` is 0.
fn parse_exit_code(text: &str) -> Option<i64> {
    match text.strip_prefix('0') {
        Some("") => Some(0),
        Some(octal) => i64::from_str_radix(octal, 8).ok(),
        None => text.parse().ok(),
    }
}

/// A stack frame, from a `frame={...}` tuple.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Frame {
    /// `level`: 0 is the innermost (absent in a stop's frame).
    pub level: Option<u32>,
    /// `addr`, such as `0x0000555555555160`.
    pub addr: Option<String>,
    /// `func`, the function's name, when gdb knows it.
    pub func: Option<String>,
    /// `file`, the source file as compiled.
    pub file: Option<String>,
    /// `fullname`, the source file's absolute path.
    pub fullname: Option<String>,
    /// `line`.
    pub line: Option<u32>,
    /// `args`, when the record lists them.
    pub args: Vec<Variable>,
}

impl Frame {
    /// The view of a `frame` tuple; missing fields stay `None`.
    pub fn from_value(value: &Value) -> Frame {
        let string = |name| value.str(name).map(str::to_owned);
        Frame {
            level: value.str("level").and_then(|l| l.parse().ok()),
            addr: string("addr"),
            func: string("func"),
            file: string("file"),
            fullname: string("fullname"),
            line: value.str("line").and_then(|l| l.parse().ok()),
            args: value
                .get("args")
                .map(|args| args.items().map(Variable::from_value).collect())
                .unwrap_or_default(),
        }
    }
}

/// A variable as MI lists it: `{name="p",value="{x = 3, ...}"}`, sometimes with a type.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Variable {
    /// `name`.
    pub name: String,
    /// `value`, when it was asked for (`--all-values`, `--simple-values` for scalars).
    pub value: Option<String>,
    /// `type`, with `--simple-values`.
    pub type_name: Option<String>,
    /// Whether it is an argument (`arg="1"`), for `-stack-list-variables`.
    pub arg: bool,
}

impl Variable {
    /// The view of one element of `locals=[...]`, `variables=[...]` or `args=[...]`. A bare
    /// c-string (`--no-values` in MI1 style) is taken as the name.
    pub fn from_value(value: &Value) -> Variable {
        if let Some(name) = value.as_str() {
            return Variable {
                name: name.to_owned(),
                ..Variable::default()
            };
        }
        Variable {
            name: value.str("name").unwrap_or_default().to_owned(),
            value: value.str("value").map(str::to_owned),
            type_name: value.str("type").map(str::to_owned),
            arg: value.str("arg") == Some("1"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Record, parse_record};

    fn stopped(line: &str) -> Stopped {
        let Ok(Record::Async(record)) = parse_record(line) else {
            panic!("not an async record: {line}");
        };
        Stopped::from_record(&record).expect("a stop")
    }

    #[test]
    fn exit_codes_are_octal() {
        let stop = stopped(r#"*stopped,reason="exited",exit-code="014""#);
        assert_eq!((stop.exit_code, stop.exited()), (Some(12), true));
        let stop = stopped(r#"*stopped,reason="exited-normally""#);
        assert_eq!(stop.exit_code, Some(0));
        assert_eq!(parse_exit_code("0"), Some(0));
        assert_eq!(parse_exit_code("09"), None, "not octal");
    }

    #[test]
    fn a_breakpoint_stop_has_its_frame_and_args() {
        let stop = stopped(
            r#"*stopped,reason="breakpoint-hit",disp="keep",bkptno="1",frame={addr="0x0000555555555160",func="square",args=[{name="n",value="1"}],file="prog.c",fullname="/tmp/mi/prog.c",line="21",arch="i386:x86-64"},thread-id="1",stopped-threads="all",core="0""#,
        );
        assert_eq!(stop.reason.as_deref(), Some("breakpoint-hit"));
        let frame = stop.frame.expect("frame");
        assert_eq!(
            (frame.func.as_deref(), frame.line, frame.level),
            (Some("square"), Some(21), None)
        );
        assert_eq!(frame.args[0].name, "n");
        assert_eq!(frame.args[0].value.as_deref(), Some("1"));
        assert_eq!(stop.thread_id.as_deref(), Some("1"));
    }

    #[test]
    fn other_records_are_not_stops() {
        let Ok(Record::Async(record)) = parse_record(r#"*running,thread-id="all""#) else {
            panic!()
        };
        assert_eq!(Stopped::from_record(&record), None);
    }
}
