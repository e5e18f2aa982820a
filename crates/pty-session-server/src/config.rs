//! The configuration of docs/configuration.md from a TOML file (`--config`, camelCase keys) and from
//! flags (their kebab-case forms), flags winning; checked at start, naming the bad key.
//!
//! Each key is declared once, as a field of [`ConfigArgs`] (shared by `mcp` and `serve`),
//! [`ServeFlags`] (`serve` only) or [`PersistFlags`] (`mcp` only): clap reads the field as
//! a flag, serde as a key of the file, and the `--config` help lists the keys serde reads.
//! The limits they share with the library are the library's ([`pty_session::limits`]),
//! checked by [`pty_session::Config::validate`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, anyhow};

use pty_session::limits;

use crate::http::HttpLimits;
use crate::http::sessions as mcp_sessions;

/// The default of `ownerIdleTimeoutSecs`: half an hour.
pub const DEFAULT_OWNER_IDLE_TIMEOUT_SECS: u64 = 1800;
/// The default of `maxRequestBytes`: room for the largest valid call, `data` of 1 MiB
/// written as `\u0001` escapes (6 bytes each), with 2 MiB to spare.
pub const DEFAULT_MAX_REQUEST_BYTES: u64 = 8 * 1024 * 1024;
/// The default of `httpIdleTimeoutSecs`.
pub const DEFAULT_HTTP_IDLE_TIMEOUT_SECS: u64 = 60;
/// The default of `httpBodyTimeoutSecs`.
pub const DEFAULT_HTTP_BODY_TIMEOUT_SECS: u64 = 60;
/// The smallest `maxRequestBytes` accepted.
const MIN_REQUEST_BYTES: u64 = 4096;

/// The configuration shared by `mcp` and `serve`: each field is a flag and a key of the
/// file.
#[derive(Debug, Default, Clone, clap::Args, serde::Deserialize)]
#[command(next_help_heading = "Configuration (flags win over the --config file)")]
#[serde(rename_all = "camelCase", default)]
pub struct ConfigArgs {
    #[arg(long, value_name = "FILE", help = config_help())]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// How pty_open runs a command: "shell" (/bin/sh -c, the default) or "exec" (split
    /// into words, no shell)
    #[arg(long, alias = "backend", value_name = "NAME")]
    pub backend_type: Option<String>,
    /// How many lines a reply returns at most when the call gives no budget [default: 200]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub tail_lines: Option<u64>,
    /// How many bytes of lines a reply returns at most when the call gives no budget
    /// (1024..=1048576) [default: 32768]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(limits::MIN_BYTES..=limits::MAX_BYTES))]
    pub tail_bytes: Option<u64>,
    /// How many completed lines each session keeps [default: 10000]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub scrollback_lines: Option<u64>,
    /// How many bytes of completed lines each session keeps [default: 8388608]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub scrollback_bytes: Option<u64>,
    /// Running sessions one owner may have at once (exited ones do not count) [default: 32]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_sessions_per_owner: Option<u64>,
    /// Running sessions the server may have at once [default: 1024]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_sessions: Option<u64>,
    /// The largest request: an HTTP body, or a line over stdio [default: 8388608]
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(MIN_REQUEST_BYTES..))]
    pub max_request_bytes: Option<u64>,
    /// Exited sessions one owner keeps readable until it closes them; past it, the oldest
    /// are closed [default: 32]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_exited_per_owner: Option<u64>,
    /// Sets an environment variable for every session, over the built-in defaults
    /// (TERM=xterm-256color, PAGER=cat, GIT_PAGER=cat, LANG=C.UTF-8 without a locale);
    /// NAME= removes that default. Repeatable
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_env_pair)]
    #[serde(deserialize_with = "env_table")]
    pub default_env: Vec<(String, String)>,
    /// Record every session into this directory as an asciinema v2 file
    /// (`<UTC time>-<session id>.cast`, mode 0600; output only unless --record-input)
    #[arg(long, value_name = "DIR")]
    pub record_dir: Option<PathBuf>,
    /// Also record what agents send (input events); what a person types is never recorded
    #[arg(long)]
    pub record_input: bool,
    /// Cut a recording at this many bytes, with a marker event saying so [default: 67108864]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(limits::MIN_RECORD_BYTES..))]
    pub record_max_bytes: Option<u64>,
    /// The sandbox of a pty_open that names none: "none", "workspace" (write only cwd and
    /// the temp dir, no network) or "read-only" (write nothing, no network) [default: none]
    #[arg(long, value_name = "MODE")]
    pub sandbox: Option<String>,
    /// A path a "workspace" sandbox may also write. Repeatable
    #[arg(long, value_name = "PATH")]
    pub sandbox_writable: Vec<PathBuf>,
    /// Let sandboxed sessions use the network
    #[arg(long)]
    pub sandbox_network: bool,
    /// A path no sandboxed session sees (a directory shows empty, a file cannot be
    /// opened), besides the server's own token and state directories and recordings.
    /// Repeatable
    #[arg(long, value_name = "PATH")]
    pub sandbox_hidden: Vec<PathBuf>,
    /// Give an interactive bash, zsh or fish hooks that report each command's exit status
    /// and the shell's directory; false turns it off unless a pty_open asks [default: true]
    #[arg(long, value_name = "BOOL")]
    pub shell_integration: Option<bool>,
    // The help of these two is an attribute, not a doc comment: rustdoc would take
    // `[default: #dddddd]` for a link.
    #[arg(
        long,
        value_name = "#RRGGBB",
        help = "The default text and cursor colour of sessions' terminals, #rrggbb: what a \
                program that asks is told (OSC 10, 12), and what the web view, attach and \
                the MCP App view draw with [default: #dddddd]"
    )]
    pub foreground: Option<String>,
    #[arg(
        long,
        value_name = "#RRGGBB",
        help = "The default background colour of sessions' terminals, #rrggbb: what a \
                program that asks is told (OSC 11), and what the web view, attach and the \
                MCP App view draw on [default: #000000]"
    )]
    pub background: Option<String>,
}

fn parse_env_pair(pair: &str) -> Result<(String, String), String> {
    let (name, value) = pair
        .split_once('=')
        .ok_or_else(|| format!("{pair:?} is not NAME=VALUE"))?;
    Ok((name.to_owned(), value.to_owned()))
}

/// `defaultEnv` in the file: a table of names to values.
fn env_table<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<(String, String)>, D::Error> {
    let table: BTreeMap<String, String> = serde::Deserialize::deserialize(deserializer)?;
    Ok(table.into_iter().collect())
}

/// The help of `--config`: the keys a file may hold.
fn config_help() -> String {
    let keys = FileConfig::keys();
    let scalars: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|key| *key != "defaultEnv")
        .collect();
    format!(
        "A TOML file with any of the keys {} and a defaultEnv table",
        scalars.join(", ")
    )
}

/// The configuration of `serve` only: each field is a flag and a key of the file.
#[derive(Debug, Default, Clone, clap::Args, serde::Deserialize)]
#[command(next_help_heading = "HTTP limits (flags win over the --config file)")]
#[serde(rename_all = "camelCase", default)]
pub struct ServeFlags {
    /// Close the sessions of an owner that made no call for this long; 0 never [default: 1800]
    #[arg(long, value_name = "SECS")]
    pub owner_idle_timeout_secs: Option<u64>,
    /// Connections open at once; one more closes the connection idle longest [default:
    /// what the limit of open files leaves after maxSessions' share, at most 1024]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: Option<u64>,
    /// Requests one token may have in flight at once; past it a request gets 503 naming
    /// the token [default: a quarter of maxConnections]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections_per_token: Option<u64>,
    /// Live lists and terminal streams one token may hold open; its newer one closes its
    /// oldest [default: 32]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_streams_per_token: Option<u64>,
    /// Close a connection that has not sent a whole request head for this long: idle
    /// between requests, or dribbling one [default: 60]
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub http_idle_timeout_secs: Option<u64>,
    /// Answer 408 to a request whose body takes longer than this [default: 60]
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub http_body_timeout_secs: Option<u64>,
    /// MCP sessions (older protocols, Mcp-Session-Id) one token may have open [default: 64]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_mcp_sessions_per_token: Option<u64>,
    /// Close an MCP session, and its PTY sessions, after this long without a request
    /// [default: 300]
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub mcp_session_idle_secs: Option<u64>,
}

/// The default of `persistIdleSecs`: eight hours.
pub const DEFAULT_PERSIST_IDLE_SECS: u64 = 8 * 3600;
/// The default of `persistExitSecs`: a minute.
pub const DEFAULT_PERSIST_EXIT_SECS: u64 = 60;

/// The configuration of `mcp` for persistent sessions (docs/configuration.md): each field
/// but `owner` is a flag and a key of the file.
#[derive(Debug, Default, Clone, clap::Args, serde::Deserialize)]
#[command(next_help_heading = "Persistent sessions (flags win over the --config file)")]
#[serde(rename_all = "camelCase", default)]
pub struct PersistFlags {
    /// Keep sessions in a per-user background server that outlives this client, reached
    /// over a Unix socket (started if none runs); a client restarted with the same owner
    /// finds them again
    #[arg(long)]
    pub persist: bool,
    /// The owner of the sessions with --persist [default: the canonical working directory]
    #[arg(long, value_name = "NAME")]
    #[serde(skip)]
    pub owner: Option<String>,
    /// The background server closes an owner's sessions after this long without a call
    /// [default: 28800]
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub persist_idle_secs: Option<u64>,
    /// The background server exits this long after its last session and client are gone
    /// [default: 60]
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub persist_exit_secs: Option<u64>,
}

/// How the background server of persistent sessions behaves.
#[derive(Debug, Clone)]
pub struct PersistSettings {
    /// `persist`: whether `mcp` relays to the background server.
    pub enabled: bool,
    /// `persistIdleSecs`.
    pub idle: Duration,
    /// `persistExitSecs`.
    pub exit_after: Duration,
}

/// What the server runs with: the library's config plus the server's own settings.
#[derive(Debug)]
pub struct Settings {
    pub service: pty_session::Config,
    /// How long an HTTP owner may go without a call before it is disposed; `None` never.
    pub owner_idle_timeout: Option<Duration>,
    /// `maxRequestBytes`, for both transports.
    pub max_request_bytes: usize,
    /// What `serve` holds clients to.
    pub http: HttpLimits,
    /// Persistent sessions, from the file (see [`Settings::with_persist_flags`]).
    pub persist: PersistSettings,
}

impl Settings {
    /// Overlays `flags` on the file's persistence settings.
    pub fn with_persist_flags(mut self, flags: &PersistFlags) -> Settings {
        self.persist.enabled |= flags.persist;
        if let Some(secs) = flags.persist_idle_secs {
            self.persist.idle = Duration::from_secs(secs);
        }
        if let Some(secs) = flags.persist_exit_secs {
            self.persist.exit_after = Duration::from_secs(secs);
        }
        self
    }
}

/// The values of a config file: the flags' structs read from it. Every key is optional;
/// an unknown key is an error.
#[derive(Debug, Default)]
struct FileConfig {
    shared: ConfigArgs,
    serve: ServeFlags,
    persist: PersistFlags,
}

impl FileConfig {
    /// Every key, in the order of the structs and their fields.
    fn keys() -> &'static [&'static str] {
        static KEYS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
        KEYS.get_or_init(|| {
            [
                serde_keys::<ConfigArgs>(),
                serde_keys::<ServeFlags>(),
                serde_keys::<PersistFlags>(),
            ]
            .concat()
        })
    }

    /// Parses a config file; an error names the key (`serde_path_to_error` gives its path).
    /// Of several problems, the one of the key the file's deserializer yields first is
    /// told, as when one struct read the whole file.
    fn parse(text: &str) -> anyhow::Result<FileConfig> {
        use serde::Deserializer as _;
        let order = toml::Deserializer::parse(text)?.deserialize_map(KeyOrder)?;
        let keys = FileConfig::keys();
        let unknown = order
            .iter()
            .find(|key| !keys.contains(&key.as_str()))
            .map(|key| Problem {
                path: key.clone(),
                message: <serde::de::value::Error as serde::de::Error>::unknown_field(key, keys)
                    .to_string(),
            });
        let (shared, serve, persist) = (part(text)?, part(text)?, part(text)?);
        let problems = [
            unknown,
            shared.as_ref().err().cloned(),
            serve.as_ref().err().cloned(),
            persist.as_ref().err().cloned(),
        ];
        let at = |problem: &Problem| {
            let key = problem.path.split('.').next().unwrap_or_default();
            order.iter().position(|k| k == key)
        };
        if let Some(first) = problems.into_iter().flatten().min_by_key(at) {
            return Err(first.into());
        }
        Ok(FileConfig {
            shared: shared?,
            serve: serve?,
            persist: persist?,
        })
    }

    fn read(path: &Path) -> anyhow::Result<FileConfig> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        FileConfig::parse(&text).with_context(|| format!("bad config file {}", path.display()))
    }
}

/// A key of a file that cannot be read: its path (`.` for the whole file) and why.
#[derive(Debug, Clone)]
struct Problem {
    path: String,
    message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self.path.as_str() {
            "." => f.write_str(&self.message),
            path => write!(f, "key `{path}`: {}", self.message),
        }
    }
}

impl std::error::Error for Problem {}

/// One of the structs of a file, read from the whole file (whose other keys it ignores).
fn part<T: serde::de::DeserializeOwned>(text: &str) -> anyhow::Result<Result<T, Problem>> {
    let file = toml::Deserializer::parse(text)?;
    Ok(
        serde_path_to_error::deserialize(file).map_err(|err| Problem {
            path: err.path().to_string(),
            message: err.into_inner().message().to_owned(),
        }),
    )
}

/// The top-level keys of a file, in their order.
struct KeyOrder;

impl<'de> serde::de::Visitor<'de> for KeyOrder {
    type Value = Vec<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a table")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
        let mut keys = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            map.next_value::<serde::de::IgnoredAny>()?;
            keys.push(key);
        }
        Ok(keys)
    }
}

/// The keys serde reads for `T` (a struct), in the order of its fields: what its derived
/// `Deserialize` hands to `deserialize_struct`.
fn serde_keys<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    struct Probe<'a>(&'a mut &'static [&'static str]);
    impl<'de> serde::Deserializer<'de> for Probe<'_> {
        type Error = serde::de::value::Error;

        fn deserialize_any<V: serde::de::Visitor<'de>>(
            self,
            _: V,
        ) -> Result<V::Value, Self::Error> {
            Err(serde::de::Error::custom("not a struct"))
        }

        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(serde::de::Error::custom("probed"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Probe(&mut fields));
    fields
}

fn to_usize(key: &str, value: u64) -> anyhow::Result<usize> {
    usize::try_from(value).map_err(|_| anyhow!("{key} {value} is too large"))
}

impl ConfigArgs {
    /// The settings: defaults, overlaid with the file, overlaid with the flags (`serve`'s
    /// own flags when serving HTTP).
    pub fn settings(&self, serve: Option<&ServeFlags>) -> anyhow::Result<Settings> {
        let serve = serve.cloned().unwrap_or_default();
        let file = match &self.config {
            Some(path) => FileConfig::read(path)?,
            None => FileConfig::default(),
        };
        let mut service = pty_session::Config::default();
        if let Some(backend) = self.backend_type.clone().or(file.shared.backend_type) {
            service.backend_type = backend;
        }
        let numbers: [(&str, Option<u64>, Option<u64>, &mut usize); 7] = [
            (
                "tailLines",
                self.tail_lines,
                file.shared.tail_lines,
                &mut service.tail_lines,
            ),
            (
                "scrollbackLines",
                self.scrollback_lines,
                file.shared.scrollback_lines,
                &mut service.scrollback_lines,
            ),
            (
                "scrollbackBytes",
                self.scrollback_bytes,
                file.shared.scrollback_bytes,
                &mut service.scrollback_bytes,
            ),
            (
                "maxSessionsPerOwner",
                self.max_sessions_per_owner,
                file.shared.max_sessions_per_owner,
                &mut service.max_sessions_per_owner,
            ),
            (
                "maxSessions",
                self.max_sessions,
                file.shared.max_sessions,
                &mut service.max_sessions,
            ),
            (
                "tailBytes",
                self.tail_bytes,
                file.shared.tail_bytes,
                &mut service.tail_bytes,
            ),
            (
                "maxExitedPerOwner",
                self.max_exited_per_owner,
                file.shared.max_exited_per_owner,
                &mut service.max_exited_per_owner,
            ),
        ];
        for (key, flag, from_file, field) in numbers {
            if let Some(value) = flag.or(from_file) {
                *field = to_usize(key, value)?;
            }
        }
        service.default_env = file.shared.default_env.into_iter().collect();
        service.default_env.extend(self.default_env.iter().cloned());
        service.record_dir = self.record_dir.clone().or(file.shared.record_dir);
        service.record_input = self.record_input || file.shared.record_input;
        if let Some(bytes) = self.record_max_bytes.or(file.shared.record_max_bytes) {
            service.record_max_bytes = bytes;
        }
        if let Some(dir) = &service.record_dir {
            check_record_dir(dir)?;
        }
        if let Some(mode) = self.sandbox.as_ref().or(file.shared.sandbox.as_ref()) {
            service.sandbox = pty_session::Sandbox::parse("sandbox", mode)
                .map_err(|err| anyhow!("invalid configuration: {err}"))?;
        }
        service.sandbox_writable = file.shared.sandbox_writable;
        service
            .sandbox_writable
            .extend(self.sandbox_writable.iter().cloned());
        service.sandbox_network = self.sandbox_network || file.shared.sandbox_network;
        if let Some(on) = self.shell_integration.or(file.shared.shell_integration) {
            service.shell_integration = on;
        }
        let colour = |key: &str, flag: &Option<String>, from_file: &Option<String>| {
            flag.as_ref()
                .or(from_file.as_ref())
                .map(|text| {
                    pty_session::Colours::parse_hex(text).ok_or_else(|| {
                        anyhow!("invalid configuration: {key} {text:?} is not a colour #rrggbb")
                    })
                })
                .transpose()
        };
        if let Some(foreground) = colour("foreground", &self.foreground, &file.shared.foreground)? {
            // The cursor in the text's colour, as xterm draws it unless told otherwise.
            service.colours.foreground = foreground;
            service.colours.cursor = foreground;
        }
        if let Some(background) = colour("background", &self.background, &file.shared.background)? {
            service.colours.background = background;
        }
        service.sandbox_hidden = file.shared.sandbox_hidden;
        service
            .sandbox_hidden
            .extend(self.sandbox_hidden.iter().cloned());
        service
            .sandbox_hidden
            .extend(crate::secrets::secret_places(service.record_dir.as_deref()));
        // The library names its fields (`tail_lines`); the file and flags say `tailLines`.
        service.validate().map_err(|err| {
            let err = match err {
                pty_session::Error::InvalidArgument { argument, problem } => {
                    format!("{} {problem}", crate::mcp::reply::wire_name(&argument))
                }
                other => other.to_string(),
            };
            match &self.config {
                Some(path) => {
                    anyhow!(
                        "invalid configuration (from {} and the flags): {err}",
                        path.display()
                    )
                }
                None => anyhow!("invalid configuration: {err}"),
            }
        })?;

        let idle = serve
            .owner_idle_timeout_secs
            .or(file.serve.owner_idle_timeout_secs)
            .unwrap_or(DEFAULT_OWNER_IDLE_TIMEOUT_SECS);
        let owner_idle_timeout = (idle > 0).then(|| Duration::from_secs(idle));
        let at_least =
            |key: &str, least: u64, flag: Option<u64>, from_file: Option<u64>, default: u64| {
                let value = flag.or(from_file).unwrap_or(default);
                if value < least {
                    anyhow::bail!(
                        "invalid configuration: {key} {value} is below its least value {least}"
                    );
                }
                anyhow::Ok(value)
            };
        let max_request_bytes = at_least(
            "maxRequestBytes",
            MIN_REQUEST_BYTES,
            self.max_request_bytes,
            file.shared.max_request_bytes,
            DEFAULT_MAX_REQUEST_BYTES,
        )?;
        let max_request_bytes = to_usize("maxRequestBytes", max_request_bytes)?;
        let max_connections = match serve.max_connections.or(file.serve.max_connections) {
            Some(n) => Some(to_usize(
                "maxConnections",
                at_least("maxConnections", 1, Some(n), None, 0)?,
            )?),
            None => None,
        };
        let secs = |key, flag, from_file, default| {
            at_least(key, 1, flag, from_file, default).map(Duration::from_secs)
        };
        let max_connections_per_token = match serve
            .max_connections_per_token
            .or(file.serve.max_connections_per_token)
        {
            Some(n) => Some(to_usize(
                "maxConnectionsPerToken",
                at_least("maxConnectionsPerToken", 1, Some(n), None, 0)?,
            )?),
            None => None,
        };
        let http = HttpLimits {
            max_connections,
            max_connections_per_token,
            max_streams_per_token: to_usize(
                "maxStreamsPerToken",
                at_least(
                    "maxStreamsPerToken",
                    1,
                    serve.max_streams_per_token,
                    file.serve.max_streams_per_token,
                    crate::people::stream_slots::DEFAULT_MAX_STREAMS_PER_TOKEN as u64,
                )?,
            )?,
            idle_timeout: secs(
                "httpIdleTimeoutSecs",
                serve.http_idle_timeout_secs,
                file.serve.http_idle_timeout_secs,
                DEFAULT_HTTP_IDLE_TIMEOUT_SECS,
            )?,
            body_timeout: secs(
                "httpBodyTimeoutSecs",
                serve.http_body_timeout_secs,
                file.serve.http_body_timeout_secs,
                DEFAULT_HTTP_BODY_TIMEOUT_SECS,
            )?,
            max_body_bytes: max_request_bytes,
            max_mcp_sessions_per_token: to_usize(
                "maxMcpSessionsPerToken",
                at_least(
                    "maxMcpSessionsPerToken",
                    1,
                    serve.max_mcp_sessions_per_token,
                    file.serve.max_mcp_sessions_per_token,
                    mcp_sessions::DEFAULT_MAX_PER_TOKEN as u64,
                )?,
            )?,
            mcp_session_idle: secs(
                "mcpSessionIdleSecs",
                serve.mcp_session_idle_secs,
                file.serve.mcp_session_idle_secs,
                mcp_sessions::DEFAULT_IDLE_SECS,
            )?,
        };
        let persist = PersistSettings {
            enabled: file.persist.persist,
            idle: secs(
                "persistIdleSecs",
                None,
                file.persist.persist_idle_secs,
                DEFAULT_PERSIST_IDLE_SECS,
            )?,
            exit_after: secs(
                "persistExitSecs",
                None,
                file.persist.persist_exit_secs,
                DEFAULT_PERSIST_EXIT_SECS,
            )?,
        };
        Ok(Settings {
            service,
            owner_idle_timeout,
            max_request_bytes,
            http,
            persist,
        })
    }
}

/// Makes sure recordings can be written into `dir` (created 0700 if missing), so that a
/// wrong `recordDir` is refused at start rather than found missing later.
fn check_record_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("recordDir {} cannot be created", dir.display()))?;
    let probe = dir.join(format!(".pty-session-probe-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .with_context(|| format!("recordDir {} is not writable", dir.display()))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    /// docs/configuration.md, which the tests hold to the code.
    const CONFIGURATION_DOCS: &str = include_str!("../../../docs/configuration.md");

    #[track_caller]
    fn check_error(toml: &str, expect: Expect) {
        let err = FileConfig::parse(toml).expect_err("the config should be refused");
        expect.assert_eq(&format!("{err:#}"));
    }

    #[test]
    fn bad_files_name_the_key() {
        check_error(
            "tailLine = 5",
            expect![
                "key `tailLine`: unknown field `tailLine`, expected one of `backendType`, `tailLines`, `tailBytes`, `scrollbackLines`, `scrollbackBytes`, `maxSessionsPerOwner`, `maxSessions`, `maxRequestBytes`, `maxExitedPerOwner`, `defaultEnv`, `recordDir`, `recordInput`, `recordMaxBytes`, `sandbox`, `sandboxWritable`, `sandboxNetwork`, `sandboxHidden`, `shellIntegration`, `foreground`, `background`, `ownerIdleTimeoutSecs`, `maxConnections`, `maxConnectionsPerToken`, `maxStreamsPerToken`, `httpIdleTimeoutSecs`, `httpBodyTimeoutSecs`, `maxMcpSessionsPerToken`, `mcpSessionIdleSecs`, `persist`, `persistIdleSecs`, `persistExitSecs`"
            ],
        );
        check_error(
            "tailLines = \"many\"",
            expect![[r#"key `tailLines`: invalid type: string "many", expected u64"#]],
        );
        check_error(
            "maxSessions = -1",
            expect!["key `maxSessions`: invalid value: integer `-1`, expected u64"],
        );
        check_error(
            "[defaultEnv]\nPAGER = 1",
            expect!["key `defaultEnv.PAGER`: invalid type: integer `1`, expected a string"],
        );
        check_error(
            "recordInput = \"yes\"",
            expect![[r#"key `recordInput`: invalid type: string "yes", expected a boolean"#]],
        );
    }

    /// (The keys of these files come in the same order sorted or as written.)
    #[test]
    fn of_several_problems_the_first_key_is_told() {
        check_error(
            "maxConnections = \"x\"\ntailLine = 5\ntailLines = -1",
            expect![[r#"key `maxConnections`: invalid type: string "x", expected u64"#]],
        );
        check_error(
            "maxSessions = -1\npersistIdleSecs = \"x\"",
            expect!["key `maxSessions`: invalid value: integer `-1`, expected u64"],
        );
        let err = FileConfig::parse("maxSessions = -1\nnope = 1").unwrap_err();
        assert!(
            format!("{err:#}").starts_with("key `maxSessions`"),
            "{err:#}"
        );
        let err = FileConfig::parse("nope = 1\ntailLines = -1").unwrap_err();
        assert!(format!("{err:#}").starts_with("key `nope`"), "{err:#}");
    }

    /// `tailLines` → `tail-lines`.
    fn kebab(key: &str) -> String {
        let mut flag = String::new();
        for c in key.chars() {
            if c.is_ascii_uppercase() {
                flag.push('-');
            }
            flag.push(c.to_ascii_lowercase());
        }
        flag
    }

    #[test]
    fn every_key_has_a_flag_and_a_row_in_the_docs_and_back() {
        use clap::Args as _;
        let command = clap::Command::new("keys");
        let command =
            PersistFlags::augment_args(ServeFlags::augment_args(ConfigArgs::augment_args(command)));
        // `--config` names the file and `--owner` is no setting of the server.
        let mut flags: Vec<String> = command
            .get_arguments()
            .filter_map(|arg| arg.get_long())
            .filter(|long| !["config", "owner"].contains(long))
            .map(str::to_owned)
            .collect();
        let mut keys: Vec<&str> = FileConfig::keys().to_vec();
        let mut flags_of_keys: Vec<String> = keys.iter().map(|key| kebab(key)).collect();
        flags.sort();
        flags_of_keys.sort();
        assert_eq!(
            flags, flags_of_keys,
            "a key without a flag or a flag without a key"
        );

        let docs = CONFIGURATION_DOCS;
        let mut rows: Vec<(&str, &str)> = docs
            .lines()
            .filter_map(|line| {
                let mut cells = line.split('|').map(str::trim).skip(1);
                let key = cells.next()?.strip_prefix('`')?.strip_suffix('`')?;
                let flag = cells.next()?.strip_prefix("`--")?;
                let flag = flag.split(['`', ' ']).next()?;
                Some((key, flag))
            })
            .collect();
        for (key, flag) in &rows {
            assert_eq!(*flag, kebab(key), "the row of {key} names another flag");
        }
        let mut documented: Vec<&str> = rows.drain(..).map(|(key, _)| key).collect();
        documented.sort_unstable();
        keys.sort_unstable();
        assert_eq!(
            documented, keys,
            "a key without a row in docs/configuration.md, or back"
        );
    }

    /// The settings of `args`, parsed as the flags of the three structs.
    fn settings_of(args: &[&str]) -> String {
        use clap::{Args as _, FromArgMatches as _};
        let command = clap::Command::new("keys");
        let command =
            PersistFlags::augment_args(ServeFlags::augment_args(ConfigArgs::augment_args(command)));
        let matches = command.try_get_matches_from(args).unwrap();
        let config = ConfigArgs::from_arg_matches(&matches).unwrap();
        let serve = ServeFlags::from_arg_matches(&matches).unwrap();
        let persist = PersistFlags::from_arg_matches(&matches).unwrap();
        let settings = config.settings(Some(&serve)).unwrap();
        format!("{:?}", settings.with_persist_flags(&persist))
    }

    /// A flag's help states its default as `[default: X]`; the docs' table states it too.
    #[test]
    fn the_stated_defaults_are_the_defaults() {
        use clap::Args as _;
        let docs = CONFIGURATION_DOCS;
        let documented = |key: &str| {
            let row = docs
                .lines()
                .find(|line| line.starts_with(&format!("| `{key}` |")))?;
            let cell = row.split('|').nth(3)?.trim();
            let value = cell.strip_prefix('`')?.strip_suffix('`')?;
            Some(value.trim_matches('"').to_owned())
        };
        let command = clap::Command::new("keys");
        let command =
            PersistFlags::augment_args(ServeFlags::augment_args(ConfigArgs::augment_args(command)));
        let defaults = settings_of(&["keys"]);
        let mut checked = 0;
        for key in FileConfig::keys() {
            let flag = kebab(key);
            let arg = command
                .get_arguments()
                .find(|arg| arg.get_long() == Some(&flag))
                .unwrap();
            let help = arg
                .get_help()
                .map(|help| help.to_string())
                .unwrap_or_default();
            let Some(stated) = help
                .split_once("[default: ")
                .and_then(|(_, rest)| rest.split_once(']'))
                .map(|(value, _)| value)
            else {
                continue;
            };
            if let Some(documented) = documented(key) {
                assert_eq!(documented, stated, "the docs and --{flag} differ");
            }
            if stated.parse::<u64>().is_ok() || stated == "none" {
                let given = settings_of(&["keys", &format!("--{flag}"), stated]);
                assert_eq!(given, defaults, "--{flag} {stated} is not the default");
                checked += 1;
            }
        }
        assert!(checked >= 15, "only {checked} defaults checked");
        let tail_bytes = command
            .get_arguments()
            .find(|arg| arg.get_long() == Some("tail-bytes"))
            .and_then(|arg| arg.get_help())
            .unwrap()
            .to_string();
        let range = format!("({}..={})", limits::MIN_BYTES, limits::MAX_BYTES);
        assert!(tail_bytes.contains(&range), "{tail_bytes}");
    }

    #[test]
    fn the_config_help_lists_every_key() {
        let help = config_help();
        for key in FileConfig::keys() {
            assert!(help.contains(key), "{key} missing from {help}");
        }
    }

    /// The colours: a flag wins over the file, the cursor takes the text's colour, and a
    /// colour not spelled `#rrggbb` is refused naming its key.
    #[test]
    fn colours_come_from_the_flags_and_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "foreground = \"#102030\"\nbackground = \"#fdf6e3\"\n",
        )
        .unwrap();
        let args = ConfigArgs {
            config: Some(path.clone()),
            foreground: Some("#657B83".into()),
            ..ConfigArgs::default()
        };
        let colours = args.settings(None).unwrap().service.colours;
        assert_eq!(colours.foreground, [0x65, 0x7b, 0x83], "the flag wins");
        assert_eq!(colours.cursor, colours.foreground);
        assert_eq!(colours.background, [0xfd, 0xf6, 0xe3], "from the file");
        let defaults = ConfigArgs::default()
            .settings(None)
            .unwrap()
            .service
            .colours;
        assert_eq!(defaults, pty_session::Colours::default());
        let bad = ConfigArgs {
            background: Some("black".into()),
            ..ConfigArgs::default()
        };
        let err = bad.settings(None).unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            "invalid configuration: background \"black\" is not a colour #rrggbb"
        );
    }

    #[test]
    fn flags_win_over_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "backendType = \"exec\"\ntailLines = 7\nmaxSessions = 9\nownerIdleTimeoutSecs = 0\n\
             maxConnections = 40\nhttpIdleTimeoutSecs = 7\n\
             tailBytes = 4096\nmaxExitedPerOwner = 5\n\
             [defaultEnv]\nPAGER = \"less\"\nEDITOR = \"vi\"\n",
        )
        .unwrap();
        let args = ConfigArgs {
            config: Some(path),
            tail_lines: Some(3),
            default_env: vec![("EDITOR".into(), "nano".into())],
            ..ConfigArgs::default()
        };
        let settings = args.settings(None).unwrap();
        assert_eq!(settings.service.backend_type, "exec");
        assert_eq!(settings.service.tail_lines, 3, "the flag wins");
        assert_eq!(
            settings.service.max_sessions, 9,
            "the file fills what no flag gave"
        );
        assert_eq!(
            settings.service.max_sessions_per_owner, 32,
            "the default stays"
        );
        assert_eq!(settings.service.tail_bytes, 4096);
        assert_eq!(settings.service.max_exited_per_owner, 5);
        assert_eq!(settings.service.default_env["PAGER"], "less");
        assert_eq!(settings.service.default_env["EDITOR"], "nano");
        assert_eq!(
            settings.owner_idle_timeout, None,
            "0 turns idle disposal off"
        );
        assert_eq!(settings.http.max_connections, Some(40));
        assert_eq!(settings.http.idle_timeout, Duration::from_secs(7));
        let serve = ServeFlags {
            owner_idle_timeout_secs: Some(60),
            max_mcp_sessions_per_token: Some(5),
            ..ServeFlags::default()
        };
        let settings = args.settings(Some(&serve)).unwrap();
        assert_eq!(settings.owner_idle_timeout, Some(Duration::from_secs(60)));
        assert_eq!(settings.http.max_mcp_sessions_per_token, 5);
        assert_eq!(settings.http.mcp_session_idle, Duration::from_secs(300));
        assert_eq!(settings.max_request_bytes, 8 * 1024 * 1024);
    }

    #[test]
    fn the_sandbox_keys_come_from_the_file_and_the_flags() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "sandbox = \"read-only\"\nsandboxWritable = [\"/a\"]\nsandboxNetwork = true\n",
        )
        .unwrap();
        let args = ConfigArgs {
            config: Some(path.clone()),
            sandbox_writable: vec!["/b".into()],
            ..ConfigArgs::default()
        };
        let service = args.settings(None).unwrap().service;
        assert_eq!(service.sandbox, pty_session::Sandbox::ReadOnly);
        assert_eq!(
            service.sandbox_writable,
            [PathBuf::from("/a"), PathBuf::from("/b")]
        );
        assert!(service.sandbox_network);
        let args = ConfigArgs {
            config: Some(path),
            sandbox: Some("workspace".into()),
            ..ConfigArgs::default()
        };
        let service = args.settings(None).unwrap().service;
        assert_eq!(
            service.sandbox,
            pty_session::Sandbox::Workspace,
            "the flag wins"
        );
        let args = ConfigArgs {
            sandbox: Some("strict".into()),
            ..ConfigArgs::default()
        };
        expect![[r#"invalid configuration: sandbox: "strict" is not a sandbox; give one of "none", "workspace", "read-only""#]]
            .assert_eq(&format!("{:#}", args.settings(None).unwrap_err()));
        let args = ConfigArgs {
            sandbox_writable: vec!["cache".into()],
            ..ConfigArgs::default()
        };
        expect!["invalid configuration: sandboxWritable cache is not an absolute path"]
            .assert_eq(&format!("{:#}", args.settings(None).unwrap_err()));
        assert_eq!(
            ConfigArgs::default()
                .settings(None)
                .unwrap()
                .service
                .sandbox,
            pty_session::Sandbox::None
        );
    }

    #[test]
    fn a_tail_bytes_out_of_range_in_the_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "tailBytes = 100\n").unwrap();
        let args = ConfigArgs {
            config: Some(path),
            ..ConfigArgs::default()
        };
        let err = format!("{:#}", args.settings(None).unwrap_err());
        assert!(
            err.contains("tailBytes 100 is out of range; give 1024..=1048576"),
            "{err}"
        );
    }

    #[test]
    fn semantic_errors_name_the_key() {
        let args = ConfigArgs {
            default_env: vec![("A=B".into(), "x".into())],
            ..ConfigArgs::default()
        };
        let err = args.settings(None).unwrap_err();
        expect![[r#"invalid configuration: defaultEnv "A=B" is not a valid environment variable name (it must be non-empty, without '=' or NUL)"#]].assert_eq(&format!("{err:#}"));
        let args = ConfigArgs {
            backend_type: Some("zsh".into()),
            ..ConfigArgs::default()
        };
        let err = args.settings(None).unwrap_err();
        expect![[r#"invalid configuration: backendType "zsh" is not a registered backend (known: exec, shell)"#]]
            .assert_eq(&format!("{err:#}"));
        let serve = ServeFlags {
            mcp_session_idle_secs: Some(0),
            ..ServeFlags::default()
        };
        let err = ConfigArgs::default().settings(Some(&serve)).unwrap_err();
        expect!["invalid configuration: mcpSessionIdleSecs 0 is below its least value 1"]
            .assert_eq(&format!("{err:#}"));
    }
}
