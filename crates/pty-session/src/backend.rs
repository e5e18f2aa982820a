//! Backends: how a command string becomes the argv a session runs.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::Error;

/// Turns the `command` of an open request into the program and arguments to run.
///
/// Register your own with [`Backends::register`]; config `backend_type` picks one by name.
///
/// ```
/// use pty_session::{Backend, Error};
/// struct Bash;
/// impl Backend for Bash {
///     fn argv(&self, command: &str) -> Result<Vec<String>, Error> {
///         Ok(vec!["bash".into(), "--norc".into(), "-c".into(), command.into()])
///     }
/// }
/// let mut config = pty_session::Config::default();
/// config.backends.register("bash", Bash);
/// config.backend_type = "bash".into();
/// ```
pub trait Backend: Send + Sync + 'static {
    /// The argv for `command`; the first element is the program, found on `PATH` when it
    /// has no `/`. The command is never empty when this is called.
    fn argv(&self, command: &str) -> Result<Vec<String>, Error>;
}

/// `/bin/sh -c <command>`: the command is shell text.
///
/// A simple command (words of plain characters, no shell syntax, not a shell builtin) is
/// run as `exec <command>`, as bash does by itself: the program then *is* the session's
/// process, its pid and exit status are the ones reported, and no shell sits in the
/// foreground group to take Ctrl-C personally (dash, Debian's `/bin/sh`, would otherwise
/// die of a SIGINT the program handled).
#[derive(Debug, Clone, Copy, Default)]
pub struct ShellBackend;

impl Backend for ShellBackend {
    fn argv(&self, command: &str) -> Result<Vec<String>, Error> {
        let text = if is_simple_command(command) {
            format!("exec {}", command.trim())
        } else {
            command.to_owned()
        };
        Ok(vec!["/bin/sh".to_owned(), "-c".to_owned(), text])
    }
}

/// Whether `command` is words of plain characters whose first word names a program.
fn is_simple_command(command: &str) -> bool {
    const BUILTINS: &[&str] = &[
        ".", ":", "alias", "bg", "break", "cd", "command", "continue", "eval", "exec", "exit",
        "export", "fg", "getopts", "hash", "jobs", "local", "read", "readonly", "return", "set",
        "shift", "source", "times", "trap", "type", "ulimit", "umask", "unalias", "unset", "wait",
    ];
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:@%+,=-".contains(c) || c == ' ';
    let mut words = command.split_whitespace();
    let Some(first) = words.next() else {
        return false;
    };
    command.chars().all(plain) && !first.contains('=') && !BUILTINS.contains(&first)
}

/// The command split into words by POSIX shell rules and run without a shell.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExecBackend;

impl Backend for ExecBackend {
    fn argv(&self, command: &str) -> Result<Vec<String>, Error> {
        let argv = shell_words::split(command).map_err(|err| {
            Error::invalid(
                "command",
                format!("{command:?} cannot be split into words ({err}); check its quotes"),
            )
        })?;
        if argv.is_empty() {
            return Err(Error::invalid(
                "command",
                "has no words; give a program to run",
            ));
        }
        Ok(argv)
    }
}

/// `word` as one word of a command line for either backend: unchanged when it is plainly
/// safe, otherwise in single quotes, where a `'` becomes `'\''`. `/bin/sh -c` (the `shell`
/// backend) and POSIX word splitting (the `exec` backend) both read it back as `word`.
///
/// ```
/// use pty_session::quote_word;
///
/// assert_eq!(quote_word("--tty=/dev/pts/3"), "--tty=/dev/pts/3");
/// assert_eq!(quote_word("it's a file"), r"'it'\''s a file'");
/// assert_eq!(quote_word(""), "''");
/// ```
///
/// `shell_words::quote` (the crate the exec backend splits with) is not used here: it
/// quotes only the characters on its list of specials, which leaves out `{`, `}`, `!` and
/// control characters such as `\r`, which bash (an ssh remote's shell, say) would act on.
/// This keeps a short list of characters that are safe unquoted and quotes everything
/// else.
pub fn quote_word(word: &str) -> std::borrow::Cow<'_, str> {
    let safe = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if safe {
        word.into()
    } else {
        format!("'{}'", word.replace('\'', r"'\''")).into()
    }
}

/// The registered backends, by name. The default holds `shell` and `exec`.
#[derive(Clone)]
pub struct Backends(BTreeMap<String, Arc<dyn Backend>>);

impl Default for Backends {
    fn default() -> Backends {
        let mut backends = Backends(BTreeMap::new());
        backends.register("shell", ShellBackend);
        backends.register("exec", ExecBackend);
        backends
    }
}

impl Backends {
    /// Registers `backend` under `name`, replacing any backend of that name.
    pub fn register(&mut self, name: impl Into<String>, backend: impl Backend) {
        self.0.insert(name.into(), Arc::new(backend));
    }

    /// The backend registered under `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Backend>> {
        self.0.get(name)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

impl fmt::Debug for Backends {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_splits_like_a_shell_without_expanding() {
        let argv = ExecBackend
            .argv(r#"printf '%s|' "a b" c\ d '$HOME'"#)
            .unwrap();
        assert_eq!(argv, ["printf", "%s|", "a b", "c d", "$HOME"]);
    }

    #[test]
    fn exec_rejects_unbalanced_quotes() {
        let err = ExecBackend.argv("echo 'oops").unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT");
    }

    #[test]
    fn shell_passes_the_text_to_sh() {
        assert_eq!(
            ShellBackend.argv("a | b").unwrap(),
            ["/bin/sh", "-c", "a | b"]
        );
        for text in [
            "echo 'x'",
            "A=1 prog",
            "cd /tmp",
            "read x",
            "a; b",
            "echo $HOME",
        ] {
            assert_eq!(ShellBackend.argv(text).unwrap()[2], text, "{text}");
        }
    }

    #[test]
    fn shell_execs_a_simple_command() {
        assert_eq!(
            ShellBackend.argv(" python3 -q ").unwrap(),
            ["/bin/sh", "-c", "exec python3 -q"]
        );
        assert_eq!(
            ShellBackend.argv("gdb -q --nx -i=mi2").unwrap()[2],
            "exec gdb -q --nx -i=mi2"
        );
    }
}
