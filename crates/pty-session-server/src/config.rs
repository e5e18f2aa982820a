//! The configuration of docs/configuration.md from a TOML file (`--config`, camelCase keys) and from
//! flags (their kebab-case forms), flags winning; checked at start, naming the bad key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, anyhow};

use crate::http::HttpLimits;
use crate::mcp_sessions;

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

/// The configuration flags shared by `mcp` and `serve`.
#[derive(Debug, Default, Clone, clap::Args)]
#[command(next_help_heading = "Configuration (flags win over the --config file)")]
pub struct ConfigArgs {
    /// A TOML file with any of the keys backendType, tailLines, tailBytes, scrollbackLines,
    /// scrollbackBytes, maxSessionsPerOwner, maxSessions, maxExitedPerOwner,
    /// maxRequestBytes, ownerIdleTimeoutSecs, maxConnections, httpIdleTimeoutSecs,
    /// httpBodyTimeoutSecs, maxMcpSessionsPerToken, mcpSessionIdleSecs, recordDir,
    /// recordInput, recordMaxBytes, persist, persistIdleSecs, persistExitSecs, sandbox,
    /// sandboxWritable, sandboxNetwork and a
    /// defaultEnv table
    #[arg(long, value_name = "FILE")]
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
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1024..=1_048_576))]
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
    pub default_env: Vec<(String, String)>,
    /// Record every session into this directory as an asciinema v2 file
    /// (`<UTC time>-<session id>.cast`, mode 0600; output only unless --record-input)
    #[arg(long, value_name = "DIR")]
    pub record_dir: Option<PathBuf>,
    /// Also record what agents send (input events); what a person types is never recorded
    #[arg(long)]
    pub record_input: bool,
    /// Cut a recording at this many bytes, with a marker event saying so [default: 67108864]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(4096..))]
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
}

fn parse_env_pair(pair: &str) -> Result<(String, String), String> {
    let (name, value) = pair
        .split_once('=')
        .ok_or_else(|| format!("{pair:?} is not NAME=VALUE"))?;
    Ok((name.to_owned(), value.to_owned()))
}

/// The configuration flags of `serve` only.
#[derive(Debug, Default, Clone, clap::Args)]
#[command(next_help_heading = "HTTP limits (flags win over the --config file)")]
pub struct ServeFlags {
    /// Close the sessions of an owner that made no call for this long; 0 never [default: 1800]
    #[arg(long, value_name = "SECS")]
    pub owner_idle_timeout_secs: Option<u64>,
    /// Connections open at once; one more closes the connection idle longest [default:
    /// what the limit of open files leaves after maxSessions' share, at most 1024]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: Option<u64>,
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

/// The flags of `mcp` for persistent sessions (docs/configuration.md).
#[derive(Debug, Default, Clone, clap::Args)]
#[command(next_help_heading = "Persistent sessions (flags win over the --config file)")]
pub struct PersistFlags {
    /// Keep sessions in a per-user background server that outlives this client, reached
    /// over a Unix socket (started if none runs); a client restarted with the same owner
    /// finds them again
    #[arg(long)]
    pub persist: bool,
    /// The owner of the sessions with --persist [default: the canonical working directory]
    #[arg(long, value_name = "NAME")]
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

/// The values of a config file; every key is optional, an unknown key is an error.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FileConfig {
    backend_type: Option<String>,
    tail_lines: Option<u64>,
    scrollback_lines: Option<u64>,
    scrollback_bytes: Option<u64>,
    max_sessions_per_owner: Option<u64>,
    max_sessions: Option<u64>,
    owner_idle_timeout_secs: Option<u64>,
    tail_bytes: Option<u64>,
    max_exited_per_owner: Option<u64>,
    #[serde(default)]
    default_env: BTreeMap<String, String>,
    record_dir: Option<PathBuf>,
    record_input: Option<bool>,
    record_max_bytes: Option<u64>,
    sandbox: Option<String>,
    #[serde(default)]
    sandbox_writable: Vec<PathBuf>,
    sandbox_network: Option<bool>,
    max_request_bytes: Option<u64>,
    max_connections: Option<u64>,
    http_idle_timeout_secs: Option<u64>,
    http_body_timeout_secs: Option<u64>,
    max_mcp_sessions_per_token: Option<u64>,
    mcp_session_idle_secs: Option<u64>,
    persist: Option<bool>,
    persist_idle_secs: Option<u64>,
    persist_exit_secs: Option<u64>,
}

impl FileConfig {
    /// Parses a config file; an error names the key (`serde_path_to_error` gives its path).
    fn parse(text: &str) -> anyhow::Result<FileConfig> {
        let table = toml::Deserializer::parse(text)?;
        serde_path_to_error::deserialize(table).map_err(|err| {
            let path = err.path().to_string();
            let inner = err.into_inner();
            let message = inner.message();
            if path == "." {
                anyhow!("{message}")
            } else {
                anyhow!("key `{path}`: {message}")
            }
        })
    }

    fn read(path: &Path) -> anyhow::Result<FileConfig> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        FileConfig::parse(&text).with_context(|| format!("bad config file {}", path.display()))
    }
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
        if let Some(backend) = self.backend_type.clone().or(file.backend_type) {
            service.backend_type = backend;
        }
        let numbers: [(&str, Option<u64>, Option<u64>, &mut usize); 7] = [
            (
                "tailLines",
                self.tail_lines,
                file.tail_lines,
                &mut service.tail_lines,
            ),
            (
                "scrollbackLines",
                self.scrollback_lines,
                file.scrollback_lines,
                &mut service.scrollback_lines,
            ),
            (
                "scrollbackBytes",
                self.scrollback_bytes,
                file.scrollback_bytes,
                &mut service.scrollback_bytes,
            ),
            (
                "maxSessionsPerOwner",
                self.max_sessions_per_owner,
                file.max_sessions_per_owner,
                &mut service.max_sessions_per_owner,
            ),
            (
                "maxSessions",
                self.max_sessions,
                file.max_sessions,
                &mut service.max_sessions,
            ),
            (
                "tailBytes",
                self.tail_bytes,
                file.tail_bytes,
                &mut service.tail_bytes,
            ),
            (
                "maxExitedPerOwner",
                self.max_exited_per_owner,
                file.max_exited_per_owner,
                &mut service.max_exited_per_owner,
            ),
        ];
        for (key, flag, from_file, field) in numbers {
            if let Some(value) = flag.or(from_file) {
                *field = to_usize(key, value)?;
            }
        }
        service.default_env = file.default_env;
        service.default_env.extend(self.default_env.iter().cloned());
        service.record_dir = self.record_dir.clone().or(file.record_dir);
        service.record_input = self.record_input || file.record_input.unwrap_or(false);
        if let Some(bytes) = self.record_max_bytes.or(file.record_max_bytes) {
            service.record_max_bytes = bytes;
        }
        if let Some(dir) = &service.record_dir {
            check_record_dir(dir)?;
        }
        if let Some(mode) = self.sandbox.as_ref().or(file.sandbox.as_ref()) {
            service.sandbox = pty_session::Sandbox::parse("sandbox", mode)
                .map_err(|err| anyhow!("invalid configuration: {err}"))?;
        }
        service.sandbox_writable = file.sandbox_writable;
        service
            .sandbox_writable
            .extend(self.sandbox_writable.iter().cloned());
        service.sandbox_network = self.sandbox_network || file.sandbox_network.unwrap_or(false);
        // The library names its fields (`tail_lines`); the file and flags say `tailLines`.
        service.validate().map_err(|err| {
            let err = match err {
                pty_session::Error::InvalidArgument { argument, problem } => {
                    format!("{} {problem}", crate::reply::wire_name(&argument))
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
            .or(file.owner_idle_timeout_secs)
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
            file.max_request_bytes,
            DEFAULT_MAX_REQUEST_BYTES,
        )?;
        let max_request_bytes = to_usize("maxRequestBytes", max_request_bytes)?;
        let max_connections = match serve.max_connections.or(file.max_connections) {
            Some(n) => Some(to_usize(
                "maxConnections",
                at_least("maxConnections", 1, Some(n), None, 0)?,
            )?),
            None => None,
        };
        let secs = |key, flag, from_file, default| {
            at_least(key, 1, flag, from_file, default).map(Duration::from_secs)
        };
        let http = HttpLimits {
            max_connections,
            idle_timeout: secs(
                "httpIdleTimeoutSecs",
                serve.http_idle_timeout_secs,
                file.http_idle_timeout_secs,
                DEFAULT_HTTP_IDLE_TIMEOUT_SECS,
            )?,
            body_timeout: secs(
                "httpBodyTimeoutSecs",
                serve.http_body_timeout_secs,
                file.http_body_timeout_secs,
                DEFAULT_HTTP_BODY_TIMEOUT_SECS,
            )?,
            max_body_bytes: max_request_bytes,
            max_mcp_sessions_per_token: to_usize(
                "maxMcpSessionsPerToken",
                at_least(
                    "maxMcpSessionsPerToken",
                    1,
                    serve.max_mcp_sessions_per_token,
                    file.max_mcp_sessions_per_token,
                    mcp_sessions::DEFAULT_MAX_PER_TOKEN as u64,
                )?,
            )?,
            mcp_session_idle: secs(
                "mcpSessionIdleSecs",
                serve.mcp_session_idle_secs,
                file.mcp_session_idle_secs,
                mcp_sessions::DEFAULT_IDLE_SECS,
            )?,
        };
        let persist = PersistSettings {
            enabled: file.persist.unwrap_or(false),
            idle: secs(
                "persistIdleSecs",
                None,
                file.persist_idle_secs,
                DEFAULT_PERSIST_IDLE_SECS,
            )?,
            exit_after: secs(
                "persistExitSecs",
                None,
                file.persist_exit_secs,
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
                "key `tailLine`: unknown field `tailLine`, expected one of `backendType`, `tailLines`, `scrollbackLines`, `scrollbackBytes`, `maxSessionsPerOwner`, `maxSessions`, `ownerIdleTimeoutSecs`, `tailBytes`, `maxExitedPerOwner`, `defaultEnv`, `recordDir`, `recordInput`, `recordMaxBytes`, `sandbox`, `sandboxWritable`, `sandboxNetwork`, `maxRequestBytes`, `maxConnections`, `httpIdleTimeoutSecs`, `httpBodyTimeoutSecs`, `maxMcpSessionsPerToken`, `mcpSessionIdleSecs`, `persist`, `persistIdleSecs`, `persistExitSecs`"
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
    }

    #[test]
    fn flags_win_over_the_file() {
        let dir = std::env::temp_dir().join(format!("pty-session-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.toml");
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
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_sandbox_keys_come_from_the_file_and_the_flags() {
        let dir = std::env::temp_dir().join(format!("pty-session-sbx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.toml");
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
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_tail_bytes_out_of_range_in_the_file_is_refused() {
        let dir = std::env::temp_dir().join(format!("pty-session-bytes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.toml");
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
        std::fs::remove_dir_all(dir).unwrap();
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
