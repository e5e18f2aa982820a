//! The service's configuration: limits, scrollback budget, environment defaults, backends.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::backend::Backends;

/// Configuration of a [`PtyService`](crate::PtyService). `Config::default()` has the
/// defaults of docs/configuration.md; change fields directly.
///
/// ```
/// use pty_session::Config;
/// let mut config = Config::default();
/// config.tail_lines = 50;
/// config.default_env.insert("PAGER".into(), String::new()); // drop the PAGER default
/// assert_eq!(config.max_sessions_per_owner, 32);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// The backend `open` uses, by registered name (`"shell"` or `"exec"` built in).
    pub backend_type: String,
    /// The registered backends.
    pub backends: Backends,
    /// How many lines a reply returns at most when the call gives no budget.
    pub tail_lines: usize,
    /// How many bytes of lines a reply returns at most when the call gives no budget
    /// (1,024..=1,048,576).
    pub tail_bytes: usize,
    /// How many completed lines a session keeps.
    pub scrollback_lines: usize,
    /// How many bytes of completed lines a session keeps.
    pub scrollback_bytes: usize,
    /// Running sessions an owner may have at once (exited ones do not count).
    pub max_sessions_per_owner: usize,
    /// Running sessions the service may have at once.
    pub max_sessions: usize,
    /// Exited sessions an owner keeps readable; past it, the oldest are closed.
    pub max_exited_per_owner: usize,
    /// Merged over the built-in environment defaults; a key set to `""` removes that
    /// default.
    pub default_env: BTreeMap<String, String>,
    /// How long close waits after SIGHUP/SIGTERM before it sends SIGKILL.
    pub close_grace: Duration,
    /// Where every session is recorded as an asciinema v2 `.cast` file
    /// (`<UTC time>-<id>.cast`, mode 0600); `None` (the default) records nothing.
    pub record_dir: Option<PathBuf>,
    /// Whether recordings also hold what agents send (`"i"` events). Off by default; what
    /// a person types through [`PtyService::person_input`](crate::PtyService::person_input)
    /// is never recorded.
    pub record_input: bool,
    /// The size cap of one recording in bytes (default 64 MiB): the file then ends with a
    /// marker event saying it was cut.
    pub record_max_bytes: u64,
    /// The sandbox of an open that names none (default [`Sandbox::None`](crate::Sandbox)).
    pub sandbox: crate::Sandbox,
    /// Paths a `workspace` sandbox may write besides the session's working directory and
    /// the temp directory, each absolute. Paths that do not exist are left out.
    pub sandbox_writable: Vec<PathBuf>,
    /// Whether sandboxed sessions may use the network (default false).
    pub sandbox_network: bool,
    /// Paths no sandboxed session sees, each absolute: a directory shows empty, a file
    /// cannot be opened; they stay hidden inside writable paths too. For the places
    /// secrets live (token files, recordings, credentials). Paths that do not exist when
    /// a session opens are left out, and a session cannot be opened inside one.
    pub sandbox_hidden: Vec<PathBuf>,
    /// The executable the service starts as its spawner, an absolute path; `None` (the
    /// default) is the current executable (`/proc/self/exe`). Set it where the current
    /// executable does not link this library, such as a Node.js addon inside `node`: any
    /// program that links this same version of the library will do, a dedicated one
    /// being a `main` that calls [`spawner_main`](crate::spawner_main).
    pub spawner: Option<PathBuf>,
    /// Whether an interactive bash, zsh or fish session gets our hooks, which report each
    /// command's exit status and the shell's directory (default true); an open may say
    /// otherwise ([`OpenRequest::shell_integration`](crate::OpenRequest::shell_integration)).
    pub shell_integration: bool,
    /// The default colours sessions say their terminal has when a program asks (OSC 10,
    /// 11 and 12): set them to what the people's views draw, so that a program that picks
    /// its palette by the background (vim's `background`) picks one that reads there.
    pub colours: Colours,
}

/// A terminal's default colours, each as red, green and blue.
///
/// The default is what the web view and the MCP App view draw (their dark theme): light
/// grey `#dddddd` text and cursor on black.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Colours {
    /// The default text colour (OSC 10).
    pub foreground: [u8; 3],
    /// The default background colour (OSC 11).
    pub background: [u8; 3],
    /// The cursor's colour (OSC 12).
    pub cursor: [u8; 3],
}

impl Default for Colours {
    fn default() -> Colours {
        Colours {
            foreground: [0xdd; 3],
            background: [0; 3],
            cursor: [0xdd; 3],
        }
    }
}

impl Colours {
    /// `colour` as CSS and the configuration spell it: `#rrggbb`.
    pub fn hex(colour: [u8; 3]) -> String {
        let [r, g, b] = colour;
        format!("#{r:02x}{g:02x}{b:02x}")
    }

    /// `text` (`#rrggbb`) as red, green and blue, or `None` when it is not of that form.
    pub fn parse_hex(text: &str) -> Option<[u8; 3]> {
        let digits = text.strip_prefix('#')?;
        if digits.len() != 6 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let channel = |at: usize| u8::from_str_radix(&digits[at..at + 2], 16).ok();
        Some([channel(0)?, channel(2)?, channel(4)?])
    }

    /// `colour` as an OSC colour answer spells it: `rgb:rrrr/gggg/bbbb`, each channel's
    /// byte repeated, as xterm does.
    pub(crate) fn spelled(colour: [u8; 3]) -> String {
        let [r, g, b] = colour;
        format!("rgb:{r:02x}{r:02x}/{g:02x}{g:02x}/{b:02x}{b:02x}")
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            backend_type: "shell".to_owned(),
            backends: Backends::default(),
            tail_lines: 200,
            tail_bytes: crate::limits::DEFAULT_BYTES as usize,
            scrollback_lines: 10_000,
            scrollback_bytes: 8 * 1024 * 1024,
            max_sessions_per_owner: 32,
            max_sessions: 1024,
            max_exited_per_owner: 32,
            default_env: BTreeMap::new(),
            close_grace: Duration::from_millis(500),
            record_dir: None,
            record_input: false,
            record_max_bytes: 64 * 1024 * 1024,
            sandbox: crate::Sandbox::None,
            sandbox_writable: Vec::new(),
            sandbox_network: false,
            sandbox_hidden: Vec::new(),
            spawner: None,
            colours: Colours::default(),
            shell_integration: true,
        }
    }
}

/// The built-in environment defaults, so that no pager or locale question ever waits for
/// a key.
fn builtin_env(service_env: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    env.insert("TERM".to_owned(), "xterm-256color".to_owned());
    env.insert("PAGER".to_owned(), "cat".to_owned());
    env.insert("GIT_PAGER".to_owned(), "cat".to_owned());
    let has_locale = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .any(|key| service_env.get(*key).is_some_and(|v| !v.is_empty()));
    if !has_locale {
        env.insert("LANG".to_owned(), "C.UTF-8".to_owned());
    }
    env
}

impl Config {
    /// The environment of a child: the service's, overlaid with the defaults (built-in,
    /// then `default_env`), overlaid with the call's. The caller always wins.
    pub(crate) fn child_env(
        &self,
        service_env: BTreeMap<String, String>,
        call_env: &BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        let mut defaults = builtin_env(&service_env);
        for (key, value) in &self.default_env {
            if value.is_empty() {
                defaults.remove(key);
            } else {
                defaults.insert(key.clone(), value.clone());
            }
        }
        let mut env = service_env;
        env.extend(defaults);
        env.extend(call_env.iter().map(|(k, v)| (k.clone(), v.clone())));
        env
    }

    /// Checks the values a service cannot work with: the error
    /// ([`Error::InvalidArgument`](crate::Error::InvalidArgument)) names the field.
    pub fn validate(&self) -> Result<(), crate::Error> {
        if self.backends.get(&self.backend_type).is_none() {
            return Err(crate::Error::invalid(
                "backend_type",
                format!(
                    "{:?} is not a registered backend (known: {})",
                    self.backend_type,
                    self.backends.names().join(", ")
                ),
            ));
        }
        for (name, value) in [
            ("tail_lines", self.tail_lines),
            ("scrollback_lines", self.scrollback_lines),
            ("scrollback_bytes", self.scrollback_bytes),
            ("max_sessions_per_owner", self.max_sessions_per_owner),
            ("max_sessions", self.max_sessions),
            ("max_exited_per_owner", self.max_exited_per_owner),
        ] {
            if value == 0 {
                return Err(crate::Error::invalid(name, "must be at least 1"));
            }
        }
        for name in self.default_env.keys() {
            if !crate::request::is_env_name(name) {
                return Err(crate::Error::invalid(
                    "default_env",
                    format!(
                        "{name:?} is not a valid environment variable name (it must be \
                         non-empty, without '=' or NUL)"
                    ),
                ));
            }
        }
        for (key, paths) in [
            ("sandbox_writable", &self.sandbox_writable),
            ("sandbox_hidden", &self.sandbox_hidden),
        ] {
            if let Some(path) = paths.iter().find(|path| !path.is_absolute()) {
                return Err(crate::Error::invalid(
                    key,
                    format!("{} is not an absolute path", path.display()),
                ));
            }
        }
        if let Some(spawner) = &self.spawner
            && !(spawner.is_absolute() && spawner.is_file())
        {
            return Err(crate::Error::invalid(
                "spawner",
                format!("{} is not an absolute path to a file", spawner.display()),
            ));
        }
        if self.record_max_bytes < crate::limits::MIN_RECORD_BYTES {
            return Err(crate::Error::invalid(
                "record_max_bytes",
                format!("must be at least {}", crate::limits::MIN_RECORD_BYTES),
            ));
        }
        let bytes = self.tail_bytes as u64;
        if !(crate::limits::MIN_BYTES..=crate::limits::MAX_BYTES).contains(&bytes) {
            return Err(crate::Error::invalid(
                "tail_bytes",
                format!(
                    "{bytes} is out of range; give {}..={}",
                    crate::limits::MIN_BYTES,
                    crate::limits::MAX_BYTES
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn colours_are_spelled_and_read_as_hex() {
        assert_eq!(Colours::hex([0x10, 0xa0, 0xff]), "#10a0ff");
        assert_eq!(Colours::parse_hex("#10A0ff"), Some([0x10, 0xa0, 0xff]));
        for bad in ["10a0ff", "#10a0f", "#10a0fff", "#10a0fg", "#+1a0ff", ""] {
            assert_eq!(Colours::parse_hex(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn caller_wins_over_defaults_and_defaults_over_service() {
        let config = Config {
            default_env: map(&[("PAGER", ""), ("EDITOR", "true")]),
            ..Config::default()
        };
        let env = config.child_env(
            map(&[("TERM", "dumb"), ("HOME", "/root"), ("PAGER", "less")]),
            &map(&[("EDITOR", "vi"), ("X", "a b $c")]),
        );
        assert_eq!(env["TERM"], "xterm-256color");
        assert_eq!(env["HOME"], "/root");
        assert_eq!(
            env["PAGER"], "less",
            "an empty default removes only the default"
        );
        assert_eq!(env["EDITOR"], "vi");
        assert_eq!(env["X"], "a b $c");
        assert_eq!(env["LANG"], "C.UTF-8");
    }

    #[test]
    fn lang_default_only_without_a_locale() {
        let env = Config::default().child_env(map(&[("LC_ALL", "de_DE.UTF-8")]), &map(&[]));
        assert!(!env.contains_key("LANG"));
    }
}
