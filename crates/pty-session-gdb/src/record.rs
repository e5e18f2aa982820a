//! MI output records ([`Record`]): what one line of gdb's machine interface says.

use std::fmt;

use crate::error::ParseError;
use crate::value::{Results, write_c_string, write_results};

/// One record of gdb's MI output: usually one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// `[token]^class,results`: the answer to a command.
    Result(ResultRecord),
    /// `[token]*class,...`, `+class,...`, `=class,...`: news gdb sends on its own.
    Async(AsyncRecord),
    /// `~"..."`, `@"..."`, `&"..."`: text for the console, from the target, or gdb's log.
    Stream(StreamRecord),
    /// `(gdb) `: gdb is ready for the next command.
    Prompt,
    /// Text that is not MI: most often the debugged program's own output, which shares
    /// gdb's terminal, or a line that does not parse (with why).
    Unparsed(Unparsed),
}

/// The class of a result record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultClass {
    /// `^done`: the command succeeded.
    Done,
    /// `^running`: the target runs (the stop comes later as `*stopped`).
    Running,
    /// `^connected`: gdb connected to a remote target.
    Connected,
    /// `^error`: the command failed; `msg` says why, `code` sometimes says more.
    Error,
    /// `^exit`: gdb exits.
    Exit,
}

impl ResultClass {
    /// The name in MI, such as `"done"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResultClass::Done => "done",
            ResultClass::Running => "running",
            ResultClass::Connected => "connected",
            ResultClass::Error => "error",
            ResultClass::Exit => "exit",
        }
    }

    /// The class named `name`, if MI has it.
    pub fn from_name(name: &str) -> Option<ResultClass> {
        Some(match name {
            "done" => ResultClass::Done,
            "running" => ResultClass::Running,
            "connected" => ResultClass::Connected,
            "error" => ResultClass::Error,
            "exit" => ResultClass::Exit,
            _ => return None,
        })
    }
}

/// `[token]^class,results`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultRecord {
    /// The token of the command it answers, if the command had one.
    pub token: Option<u64>,
    /// What happened.
    pub class: ResultClass,
    /// The command's results, such as `bkpt={...}` or `value="42"`.
    pub results: Results,
}

impl ResultRecord {
    /// The message of an `^error` (`msg`).
    pub fn error_message(&self) -> Option<&str> {
        match self.class {
            ResultClass::Error => self.results.str("msg"),
            _ => None,
        }
    }
}

/// Which of the three kinds an async record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsyncKind {
    /// `*`: the target's execution state changed (`running`, `stopped`).
    Exec,
    /// `+`: progress of a slow operation.
    Status,
    /// `=`: other news (breakpoints, threads, libraries).
    Notify,
}

impl AsyncKind {
    /// The record's first character.
    pub fn prefix(self) -> char {
        match self {
            AsyncKind::Exec => '*',
            AsyncKind::Status => '+',
            AsyncKind::Notify => '=',
        }
    }
}

/// `[token]*class,results` and its `+` and `=` siblings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsyncRecord {
    /// The token of the command that caused it, if any.
    pub token: Option<u64>,
    /// Which kind.
    pub kind: AsyncKind,
    /// The class, such as `stopped` or `thread-group-started`.
    pub class: String,
    /// The details.
    pub results: Results,
}

/// Which stream a stream record belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    /// `~`: what the CLI would print on the console.
    Console,
    /// `@`: output of the target (remote targets).
    Target,
    /// `&`: gdb's own log: echoes of CLI commands, warnings, errors.
    Log,
}

impl StreamKind {
    /// The record's first character.
    pub fn prefix(self) -> char {
        match self {
            StreamKind::Console => '~',
            StreamKind::Target => '@',
            StreamKind::Log => '&',
        }
    }
}

/// `~"text"` and its `@` and `&` siblings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamRecord {
    /// Which stream.
    pub kind: StreamKind,
    /// The text, decoded; gdb splits it where it likes, so lines span records.
    pub text: String,
}

/// Text that is not an MI record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unparsed {
    /// The text as it came.
    pub text: String,
    /// Why it is not MI.
    pub error: ParseError,
}

/// The MI line, which parses back to the same record (an unparsed one is its text).
impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let token = |f: &mut fmt::Formatter<'_>, token: Option<u64>| match token {
            Some(token) => write!(f, "{token}"),
            None => Ok(()),
        };
        match self {
            Record::Result(record) => {
                token(f, record.token)?;
                write!(f, "^{}", record.class.as_str())?;
                if !record.results.is_empty() {
                    f.write_str(",")?;
                    write_results(f, &record.results)?;
                }
                Ok(())
            }
            Record::Async(record) => {
                token(f, record.token)?;
                write!(f, "{}{}", record.kind.prefix(), record.class)?;
                if !record.results.is_empty() {
                    f.write_str(",")?;
                    write_results(f, &record.results)?;
                }
                Ok(())
            }
            Record::Stream(record) => {
                write!(f, "{}", record.kind.prefix())?;
                write_c_string(f, &record.text)
            }
            Record::Prompt => f.write_str("(gdb) "),
            Record::Unparsed(unparsed) => f.write_str(&unparsed.text),
        }
    }
}
