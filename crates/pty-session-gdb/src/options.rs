//! [`GdbOptions`]: which gdb, which program, and how to run them; and the command line
//! they make.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use pty_session::quote_word;

/// How [`Gdb::start`](crate::Gdb::start) runs gdb.
///
/// ```
/// use std::time::Duration;
/// use pty_session_gdb::GdbOptions;
/// let options = GdbOptions::new()
///     .program("./prog")
///     .args(["spin"])
///     .timeout(Duration::from_secs(30));
/// ```
#[derive(Debug, Clone)]
pub struct GdbOptions {
    pub(crate) gdb: String,
    pub(crate) program: Option<PathBuf>,
    pub(crate) args: Vec<String>,
    pub(crate) gdb_args: Vec<String>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) tty: Option<PathBuf>,
    pub(crate) mi_async: bool,
    pub(crate) timeout: Duration,
}

impl Default for GdbOptions {
    fn default() -> GdbOptions {
        GdbOptions::new()
    }
}

impl GdbOptions {
    /// `gdb` from `PATH`, no program yet, asynchronous MI, a 10 s timeout.
    pub fn new() -> GdbOptions {
        GdbOptions {
            gdb: "gdb".to_owned(),
            program: None,
            args: Vec::new(),
            gdb_args: Vec::new(),
            cwd: None,
            env: BTreeMap::new(),
            tty: None,
            mi_async: true,
            timeout: Duration::from_secs(10),
        }
    }

    /// The gdb executable (default `gdb` from `PATH`).
    pub fn gdb(mut self, gdb: impl Into<String>) -> GdbOptions {
        self.gdb = gdb.into();
        self
    }

    /// The program to debug (gdb's `--args PROGRAM`). Without it, load one with
    /// `-file-exec-and-symbols` or attach with `-target-attach`.
    pub fn program(mut self, program: impl Into<PathBuf>) -> GdbOptions {
        self.program = Some(program.into());
        self
    }

    /// The program's arguments, for `-exec-run` (needs [`program`](Self::program)).
    pub fn args<I, S>(mut self, args: I) -> GdbOptions
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// More arguments for gdb itself, before `--args`, such as `-ex` commands.
    pub fn gdb_args<I, S>(mut self, args: I) -> GdbOptions
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.gdb_args.extend(args.into_iter().map(Into::into));
        self
    }

    /// gdb's working directory, which the program inherits.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> GdbOptions {
        self.cwd = Some(cwd.into());
        self
    }

    /// An environment variable for gdb, which the program inherits.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> GdbOptions {
        self.env.insert(name.into(), value.into());
        self
    }

    /// The terminal the program gets (gdb's `--tty`), instead of sharing gdb's. Its
    /// output then stays out of gdb's lines, and it can read its own input.
    pub fn tty(mut self, tty: impl Into<PathBuf>) -> GdbOptions {
        self.tty = Some(tty.into());
        self
    }

    /// Whether gdb runs the target in the background (`mi-async on`, the default), so
    /// that it takes commands while the target runs and
    /// [`interrupt`](crate::Gdb::interrupt) is `-exec-interrupt`. With `false`, gdb
    /// gives the terminal to the running target and reads nothing until it stops;
    /// interrupt then types Ctrl-C, which the terminal turns into SIGINT for the target.
    pub fn mi_async(mut self, mi_async: bool) -> GdbOptions {
        self.mi_async = mi_async;
        self
    }

    /// How long start, each command and each wait may take by default (default 10 s, at
    /// most 600 s).
    pub fn timeout(mut self, timeout: Duration) -> GdbOptions {
        self.timeout = timeout;
        self
    }

    /// The command line, quoted for a POSIX shell, which is also how pty-session's `exec`
    /// backend splits words. With the `shell` backend it starts with `exec`, so that the
    /// session's pid is gdb's.
    pub(crate) fn command_line(&self, shell: bool) -> String {
        let mut words: Vec<String> = Vec::new();
        if shell {
            words.push("exec".to_owned());
        }
        words.push(quote_word(&self.gdb).into_owned());
        for word in ["-q", "--nx", "-i=mi2"] {
            words.push(word.to_owned());
        }
        if self.mi_async {
            words.push("-iex".to_owned());
            words.push(quote_word("set mi-async on").into_owned());
        }
        if let Some(tty) = &self.tty {
            words.push(quote_word(&format!("--tty={}", tty.display())).into_owned());
        }
        words.extend(self.gdb_args.iter().map(|a| quote_word(a).into_owned()));
        if let Some(program) = &self.program {
            words.push("--args".to_owned());
            words.push(quote_word(&program.to_string_lossy()).into_owned());
            words.extend(self.args.iter().map(|a| quote_word(a).into_owned()));
        }
        words.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        let options = GdbOptions::new()
            .program("/tmp/my prog")
            .args(["it's", "", "a*b"]);
        assert_eq!(
            options.command_line(true),
            r#"exec gdb -q --nx -i=mi2 -iex 'set mi-async on' --args '/tmp/my prog' 'it'\''s' '' 'a*b'"#
        );
        let options = GdbOptions::new().mi_async(false).tty("/dev/null");
        assert_eq!(
            options.command_line(false),
            "gdb -q --nx -i=mi2 --tty=/dev/null"
        );
    }
}
