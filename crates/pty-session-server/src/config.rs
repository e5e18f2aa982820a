//! The configuration of docs/configuration.md from a TOML file (`--config`, camelCase keys) and from
//! flags (their kebab-case forms), flags winning; checked at start, naming the bad key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, anyhow};

/// The default of `ownerIdleTimeoutSecs`: half an hour.
pub const DEFAULT_OWNER_IDLE_TIMEOUT_SECS: u64 = 1800;

/// The configuration flags shared by `mcp` and `serve`.
#[derive(Debug, Default, Clone, clap::Args)]
#[command(next_help_heading = "Configuration (flags win over the --config file)")]
pub struct ConfigArgs {
    /// A TOML file with any of the keys backendType, tailLines, scrollbackLines,
    /// scrollbackBytes, maxSessionsPerOwner, maxSessions, ownerIdleTimeoutSecs, recordDir,
    /// recordInput, recordMaxBytes and a defaultEnv table
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// How pty_open runs a command: "shell" (/bin/sh -c, the default) or "exec" (split
    /// into words, no shell)
    #[arg(long, alias = "backend", value_name = "NAME")]
    pub backend_type: Option<String>,
    /// How many lines a reply returns at most when the call gives no budget [default: 200]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub tail_lines: Option<u64>,
    /// How many completed lines each session keeps [default: 10000]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub scrollback_lines: Option<u64>,
    /// How many bytes of completed lines each session keeps [default: 8388608]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub scrollback_bytes: Option<u64>,
    /// Open sessions one owner may have at once [default: 32]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_sessions_per_owner: Option<u64>,
    /// Open sessions the server may have at once [default: 1024]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_sessions: Option<u64>,
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
}

fn parse_env_pair(pair: &str) -> Result<(String, String), String> {
    let (name, value) = pair
        .split_once('=')
        .ok_or_else(|| format!("{pair:?} is not NAME=VALUE"))?;
    Ok((name.to_owned(), value.to_owned()))
}

/// What the server runs with: the library's config plus the server's own settings.
#[derive(Debug)]
pub struct Settings {
    pub service: pty_session::Config,
    /// How long an HTTP owner may go without a call before it is disposed; `None` never.
    pub owner_idle_timeout: Option<Duration>,
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
    #[serde(default)]
    default_env: BTreeMap<String, String>,
    record_dir: Option<PathBuf>,
    record_input: Option<bool>,
    record_max_bytes: Option<u64>,
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
    /// The settings: defaults, overlaid with the file, overlaid with the flags.
    /// `owner_idle_timeout_secs` is the `serve` flag of that name.
    pub fn settings(&self, owner_idle_timeout_secs: Option<u64>) -> anyhow::Result<Settings> {
        let file = match &self.config {
            Some(path) => FileConfig::read(path)?,
            None => FileConfig::default(),
        };
        let mut service = pty_session::Config::default();
        if let Some(backend) = self.backend_type.clone().or(file.backend_type) {
            service.backend_type = backend;
        }
        let numbers: [(&str, Option<u64>, Option<u64>, &mut usize); 5] = [
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

        let idle = owner_idle_timeout_secs
            .or(file.owner_idle_timeout_secs)
            .unwrap_or(DEFAULT_OWNER_IDLE_TIMEOUT_SECS);
        let owner_idle_timeout = (idle > 0).then(|| Duration::from_secs(idle));
        Ok(Settings {
            service,
            owner_idle_timeout,
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
                "key `tailLine`: unknown field `tailLine`, expected one of `backendType`, `tailLines`, `scrollbackLines`, `scrollbackBytes`, `maxSessionsPerOwner`, `maxSessions`, `ownerIdleTimeoutSecs`, `defaultEnv`, `recordDir`, `recordInput`, `recordMaxBytes`"
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
        assert_eq!(settings.service.default_env["PAGER"], "less");
        assert_eq!(settings.service.default_env["EDITOR"], "nano");
        assert_eq!(
            settings.owner_idle_timeout, None,
            "0 turns idle disposal off"
        );
        assert_eq!(
            args.settings(Some(60)).unwrap().owner_idle_timeout,
            Some(Duration::from_secs(60))
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
    }
}
