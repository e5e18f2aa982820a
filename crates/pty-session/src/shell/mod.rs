//! Shell integration: an interactive bash, zsh or fish gets hooks of ours that mark each
//! prompt and command, with its exit status, and the shell's directory (docs/tools.md,
//! "Shell integration").
//!
//! [`hooks`] tells a shell from the command (`bash`, `bash -l`, `/usr/bin/env zsh`,
//! `$SHELL`: a shell started for a person, with no script, `-c` or option that changes
//! what it reads) and returns how to start it with our hooks, without touching the user's
//! files: bash reads an rc file of ours (`--rcfile`) that reads the user's as bash would
//! have; zsh a `ZDOTDIR` of ours whose files read the user's; fish runs an init command
//! after its configuration. The hooks live in files of a private directory the service
//! makes once ([`Scripts`]). Each session gets a fresh key in its environment, which the
//! hooks move into a variable of the shell and out of the environment, so no program the
//! shell starts sees it; every mark carries it ([`marks`]).
//!
//! What the marks tell is followed by [`commands::ShellState`].

pub(crate) mod commands;
pub(crate) mod marks;

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The environment variable that hands a session's key to our hooks.
const KEY_VAR: &str = "PTY_SESSION_SHELL_KEY";

/// The shells we have hooks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// How to start a shell with our hooks.
#[derive(Debug)]
pub(crate) struct Hooks {
    /// The argv to run instead of the backend's.
    pub(crate) argv: Vec<String>,
    /// Variables to add to the environment.
    pub(crate) env: Vec<(String, String)>,
    /// The key every mark of the hooks carries.
    pub(crate) key: String,
}

/// The shell `command` starts, and its words: the words before the shell's (`env`, its
/// assignments), the shell's own word, and whether it is a login shell. `None` when the
/// command is not an interactive shell we have hooks for.
fn detect(command: &str, env: &BTreeMap<String, String>) -> Option<(Shell, Vec<String>, bool)> {
    let words = shell_words::split(command).ok()?;
    let mut prefix = Vec::new();
    let mut words = words.into_iter().peekable();
    if words
        .peek()
        .is_some_and(|w| w == "env" || w.ends_with("/env"))
    {
        prefix.push(words.next()?);
        while words.peek().is_some_and(|w| is_assignment(w)) {
            prefix.push(words.next()?);
        }
    }
    let first = words.next()?;
    // `$SHELL` is the user's shell, as /bin/sh would expand it.
    let program = if first == "$SHELL" || first == "${SHELL}" {
        env.get("SHELL")?.clone()
    } else {
        first
    };
    if program.contains('$') || program.contains('=') {
        return None;
    }
    let name = Path::new(&program).file_name()?.to_str()?;
    let shell = match name {
        "bash" => Shell::Bash,
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        _ => return None,
    };
    let mut login = false;
    for word in words {
        match word.as_str() {
            "-l" | "--login" => login = true,
            "-i" => {}
            "--interactive" if shell == Shell::Fish => {}
            // A script, `-c`, `--norc`, `--posix`, …: not a shell for a person as it
            // usually starts; left as it is.
            _ => return None,
        }
    }
    prefix.push(program);
    Some((shell, prefix, login))
}

/// `NAME=value`, as `env` takes it.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// How to start `command` with our hooks, if it is an interactive bash, zsh or fish;
/// `env` is the session's environment.
pub(crate) fn hooks(
    command: &str,
    env: &BTreeMap<String, String>,
    scripts: &Scripts,
) -> Option<Hooks> {
    let (shell, mut argv, login) = detect(command, env)?;
    let key = fresh_key()?;
    let mut vars = vec![(KEY_VAR.to_owned(), key.clone())];
    let dir = scripts.dir.to_str()?;
    match shell {
        Shell::Bash => {
            // A login bash reads no rc file: ours reads the login files instead.
            if login {
                vars.push(("PTY_SESSION_SHELL_LOGIN".to_owned(), "1".to_owned()));
            }
            argv.extend([
                "--rcfile".to_owned(),
                format!("{dir}/bash.rc"),
                "-i".to_owned(),
            ]);
        }
        Shell::Zsh => {
            if let Some(user) = env.get("ZDOTDIR") {
                vars.push(("PTY_SESSION_USER_ZDOTDIR".to_owned(), user.clone()));
            }
            vars.push(("ZDOTDIR".to_owned(), format!("{dir}/zsh")));
            if login {
                argv.push("-l".to_owned());
            }
            argv.push("-i".to_owned());
        }
        Shell::Fish => {
            if login {
                argv.push("-l".to_owned());
            }
            argv.extend([
                "-i".to_owned(),
                "--init-command".to_owned(),
                format!("source {}", crate::quote_word(&format!("{dir}/fish.fish"))),
            ]);
        }
    }
    Some(Hooks {
        argv,
        env: vars,
        key,
    })
}

/// A fresh key of 16 letters and digits, unguessable; `None` if the system has no
/// randomness to give (then the session goes without hooks).
fn fresh_key() -> Option<String> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(
        bytes
            .iter()
            .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
            .collect(),
    )
}

/// The start of the names of the hooks' directories: then the pid of the service that
/// made one, and a random part.
const PREFIX: &str = "pty-session-shell-";

/// Removes from `base` the hooks' directories of this user whose services are gone: a
/// service removes its own when it drops, but one that was killed leaves it. A pid that
/// runs (in this pid namespace) keeps its directory; a directory wrongly taken from a
/// service elsewhere is written again before its next shell starts.
fn sweep(base: &Path) {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    let uid = rustix::process::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let ours = std::fs::symlink_metadata(entry.path())
            .is_ok_and(|meta| meta.is_dir() && meta.uid() == uid);
        if ours && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The hooks' files, in a directory of the service's own (mode 0700, a fresh name made
/// with `mkdir`, so no one else's files can stand in for them), removed when the service
/// goes. It is made in `/var/tmp` where that can be written, and only then in the temp
/// directory: a sandbox has a `/tmp` (and `/run`, `/dev`) of its own, where files of the
/// service's are not, but sees the rest of the file system read-only, so hooks kept in
/// `/var/tmp` reach sandboxed shells too.
#[derive(Debug)]
pub(crate) struct Scripts {
    dir: PathBuf,
}

impl Scripts {
    /// Writes the hooks' files.
    pub(crate) fn write() -> std::io::Result<Scripts> {
        let mut random = [0u8; 8];
        getrandom::fill(&mut random).map_err(std::io::Error::other)?;
        let name: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let dir_name = format!("{PREFIX}{}-{name}", std::process::id());
        for base in [Path::new("/var/tmp"), &std::env::temp_dir()] {
            sweep(base);
        }
        let var_tmp = Path::new("/var/tmp").join(&dir_name);
        let dir = match std::fs::DirBuilder::new().mode(0o700).create(&var_tmp) {
            Ok(()) => var_tmp,
            Err(_) => {
                let dir = std::env::temp_dir().join(&dir_name);
                std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
                dir
            }
        };
        let scripts = Scripts { dir };
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(scripts.dir.join("zsh"))?;
        let files: [(&str, &str); 6] = [
            ("bash.rc", include_str!("scripts/bash.rc")),
            ("fish.fish", include_str!("scripts/fish.fish")),
            ("zsh/.zshenv", include_str!("scripts/zsh/.zshenv")),
            ("zsh/.zprofile", include_str!("scripts/zsh/.zprofile")),
            ("zsh/.zshrc", include_str!("scripts/zsh/.zshrc")),
            ("zsh/.zlogin", include_str!("scripts/zsh/.zlogin")),
        ];
        for (name, text) in files {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(scripts.dir.join(name))?
                .write_all(text.as_bytes())?;
        }
        Ok(scripts)
    }
}

impl Scripts {
    /// Whether the files are still there (a cleaner of the temp directory may have
    /// removed them from a long-lived service).
    pub(crate) fn present(&self) -> bool {
        self.dir.join("zsh/.zlogin").is_file()
    }

    /// Whether a sandboxed session sees the files: they are outside the places a
    /// sandbox has of its own.
    pub(crate) fn seen_in_sandboxes(&self) -> bool {
        !["/tmp", "/run", "/dev"]
            .iter()
            .any(|own| self.dir.starts_with(own))
    }
}

impl Drop for Scripts {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_takes_the_directories_of_gone_services_only() {
        let base = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let dead = base.path().join(format!("{PREFIX}{gone}-a"));
        let alive = base
            .path()
            .join(format!("{PREFIX}{}-b", std::process::id()));
        let other = base.path().join("pty-session-shell-notapid");
        for dir in [&dead, &alive, &other] {
            std::fs::create_dir(dir).unwrap();
            std::fs::write(dir.join("bash.rc"), "x").unwrap();
        }
        sweep(base.path());
        assert!(!dead.exists(), "a gone service's directory is taken");
        assert!(alive.exists() && other.exists());
    }

    #[track_caller]
    fn check(command: &str, expect: Option<(Shell, &[&str], bool)>) {
        let env = BTreeMap::from([("SHELL".to_owned(), "/usr/bin/zsh".to_owned())]);
        let got = detect(command, &env);
        let got = got.as_ref().map(|(shell, words, login)| {
            (
                *shell,
                words.iter().map(String::as_str).collect::<Vec<_>>(),
                *login,
            )
        });
        let expect = expect.map(|(shell, words, login)| (shell, words.to_vec(), login));
        assert_eq!(got, expect, "{command}");
    }

    #[test]
    fn shells_for_a_person_are_told_from_the_command() {
        check("bash", Some((Shell::Bash, &["bash"], false)));
        check("bash -l", Some((Shell::Bash, &["bash"], true)));
        check(
            "/bin/bash --login -i",
            Some((Shell::Bash, &["/bin/bash"], true)),
        );
        check(
            "/usr/bin/env zsh",
            Some((Shell::Zsh, &["/usr/bin/env", "zsh"], false)),
        );
        check(
            "env LANG=C fish",
            Some((Shell::Fish, &["env", "LANG=C", "fish"], false)),
        );
        check("$SHELL", Some((Shell::Zsh, &["/usr/bin/zsh"], false)));
        check("${SHELL} -l", Some((Shell::Zsh, &["/usr/bin/zsh"], true)));
    }

    #[test]
    fn the_files_are_private_and_go_with_the_service() {
        use std::os::unix::fs::PermissionsExt;
        let scripts = Scripts::write().unwrap();
        let dir = scripts.dir.clone();
        assert!(scripts.present());
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::remove_file(dir.join("zsh/.zlogin")).unwrap();
        assert!(
            !scripts.present(),
            "a file gone is seen, to write them again"
        );
        drop(scripts);
        assert!(!dir.exists());
    }

    #[test]
    fn other_commands_get_nothing() {
        for command in [
            "sh",
            "dash",
            "bash --norc",
            "bash -c 'echo hi'",
            "bash script.sh",
            "bash --posix",
            "zsh -f",
            "fish -c true",
            "python3",
            "bash; echo",
            "exec bash",
            "'unclosed",
        ] {
            check(command, None);
        }
    }
}
