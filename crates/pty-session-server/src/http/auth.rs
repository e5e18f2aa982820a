//! Bearer tokens: where they come from (`PTY_SESSION_TOKEN`, `--tokens FILE`, or one
//! generated into a file only the user can read) and how a request is checked against
//! them, in constant time.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use http::HeaderValue;

use crate::mcp::owner::Principal;
use crate::ownership;

/// The environment variable that holds a single token.
pub const TOKEN_ENV: &str = "PTY_SESSION_TOKEN";

/// The principal of the token from [`TOKEN_ENV`], and of a generated token.
const DEFAULT_PRINCIPAL: &str = "default";

/// The shortest token accepted: 16 characters make guessing hopeless only when they are
/// random, but shorter ones are certainly not.
const MIN_TOKEN_LEN: usize = 16;

/// The tokens a server accepts, each the credential of one principal.
pub struct Tokens {
    entries: Vec<(Principal, Vec<u8>)>,
}

impl Tokens {
    /// The configured tokens: the `name token` lines of `file`, and `env` (the value of
    /// [`TOKEN_ENV`]) as principal `default`. Empty when neither is given.
    pub fn configured(file: Option<&Path>, env: Option<String>) -> anyhow::Result<Tokens> {
        let mut tokens = Tokens {
            entries: Vec::new(),
        };
        if let Some(token) = env.filter(|t| !t.is_empty()) {
            tokens
                .add(DEFAULT_PRINCIPAL, token.trim())
                .with_context(|| format!("bad {TOKEN_ENV}"))?;
        }
        if let Some(path) = file {
            tokens.read_file(path)?;
        }
        Ok(tokens)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn principals(&self) -> Vec<&str> {
        self.entries.iter().map(|(p, _)| &*p.0).collect()
    }

    /// Every token, for proofs that the server holds them ([`crate::http::proof`]).
    pub(crate) fn secrets(&self) -> impl Iterator<Item = &[u8]> {
        self.entries.iter().map(|(_, token)| token.as_slice())
    }

    fn add(&mut self, name: &str, token: &str) -> anyhow::Result<()> {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.@".contains(c))
        {
            bail!("token name {name:?} must be letters, digits and - _ . @ only");
        }
        if token.len() < MIN_TOKEN_LEN || token.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            bail!(
                "the token of {name:?} must be at least {MIN_TOKEN_LEN} characters without \
                 spaces (generate one with `openssl rand -hex 32`)"
            );
        }
        if self.entries.iter().any(|(p, _)| &*p.0 == name) {
            bail!("token name {name:?} appears twice");
        }
        if self.entries.iter().any(|(_, t)| t == token.as_bytes()) {
            bail!("the token of {name:?} is also another name's token");
        }
        self.entries
            .push((Principal(Arc::from(name)), token.as_bytes().to_vec()));
        Ok(())
    }

    /// Reads the `name token` lines of `path`, a file that must pass
    /// [`ownership::check_secret_file`]: a tokens file another user could have written
    /// would let them choose a token of this server.
    fn read_file(&mut self, path: &Path) -> anyhow::Result<()> {
        let meta = ownership::check_secret_file(path)
            .with_context(|| format!("refusing the tokens file {}", path.display()))?;
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(path = %path.display(), "the tokens file is readable by others; chmod 600 it");
        }
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read tokens file {}", path.display()))?;
        let mut any = false;
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let context = || format!("tokens file {} line {}", path.display(), index + 1);
            let mut words = line.split_whitespace();
            let (Some(name), Some(token), None) = (words.next(), words.next(), words.next()) else {
                return Err(anyhow::anyhow!("expected `name token`")).with_context(context);
            };
            self.add(name, token).with_context(context)?;
            any = true;
        }
        if !any {
            bail!("tokens file {} has no `name token` line", path.display());
        }
        Ok(())
    }

    /// A fresh random token for principal `default`, written to `path` (mode 0600, in a
    /// directory created 0700) — or the token already there, so that clients keep working
    /// across restarts.
    ///
    /// The directory must pass [`ownership::check_secret_dir`], and a file already there is
    /// reused only if it passes [`ownership::check_secret_file`] and only this user can
    /// read it: a file another user planted is refused (its token is theirs), one of this
    /// user that others can read is replaced (its token may have leaked).
    pub fn generated(path: &Path) -> anyhow::Result<Tokens> {
        let mut tokens = Tokens {
            entries: Vec::new(),
        };
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        ownership::check_secret_dir(dir)
            .with_context(|| format!("refusing to keep a token in {}", dir.display()))?;
        match std::fs::symlink_metadata(path) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => {
                return Err(err).with_context(|| format!("cannot read {}", path.display()));
            }
            Ok(_) => {
                let meta = ownership::check_secret_file(path)
                    .with_context(|| format!("refusing the token file {}", path.display()))?;
                if meta.permissions().mode() & 0o077 == 0
                    && let Ok(existing) = std::fs::read_to_string(path)
                    && tokens.add(DEFAULT_PRINCIPAL, existing.trim()).is_ok()
                {
                    return Ok(tokens);
                }
            }
        }
        let token = random_token()?;
        write_private(path, &token)?;
        tokens.add(DEFAULT_PRINCIPAL, &token)?;
        Ok(tokens)
    }

    /// The principal whose token the `Authorization: Bearer` header carries.
    ///
    /// Every configured token is compared, each in time independent of where it differs,
    /// so the timing of an answer tells nothing about how close a guess was.
    pub fn authenticate(&self, authorization: Option<&HeaderValue>) -> Option<Principal> {
        let presented = bearer(authorization?)?;
        let mut found = None;
        for (principal, token) in &self.entries {
            if constant_time_eq(presented, token) {
                found = Some(principal.clone());
            }
        }
        found
    }
}

/// What a 401 says to a request with `authorization`: its `WWW-Authenticate`, a bearer
/// challenge whose `error_description` says what was wrong (RFC 6750: `invalid_request`
/// without a bearer token, `invalid_token` with a wrong one), and its body, which says
/// the same for clients that show only the body (Claude Code's "Error detail").
pub fn refusal(authorization: Option<&HeaderValue>) -> (&'static str, &'static str) {
    match authorization.and_then(bearer) {
        None => (
            "Bearer error=\"invalid_request\", error_description=\"no bearer token: send \
             Authorization: Bearer <token> (pty-session serve's token)\"",
            "401 Unauthorized: no bearer token: send Authorization: Bearer <token>\n",
        ),
        Some(_) => (
            "Bearer error=\"invalid_token\", error_description=\"the bearer token is not one \
             of pty-session serve's tokens (PTY_SESSION_TOKEN, --tokens, or the generated \
             token's file)\"",
            "401 Unauthorized: the bearer token is not one of pty-session serve's tokens \
             (PTY_SESSION_TOKEN, --tokens, or the generated token's file); send \
             Authorization: Bearer <token>\n",
        ),
    }
}

/// The token of an `Authorization: Bearer <token>` header (the scheme in any case).
fn bearer(value: &HeaderValue) -> Option<&[u8]> {
    let value = value.as_bytes();
    let (scheme, rest) = value.split_at_checked(7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let start = rest.iter().position(|b| *b != b' ')?;
    let token = &rest[start..];
    let end = token.iter().rposition(|b| *b != b' ')? + 1;
    Some(&token[..end])
}

/// Whether `a == b`, looking at every byte of both whatever they hold.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= usize::from(x ^ y);
    }
    std::hint::black_box(diff) == 0
}

/// 32 random bytes from the OS, as 64 hex digits.
fn random_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|err| anyhow::anyhow!("no OS randomness for a token: {err}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes `token` to `path` so that only the user can read it: the file is created anew
/// with mode 0600 (never widened by a umask).
fn write_private(path: &Path, token: &str) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(err).with_context(|| format!("cannot replace {}", path.display())),
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create token file {}", path.display()))?;
    writeln!(file, "{token}").with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Where a generated token goes by default: `token-PORT` in this user's private directory
/// of pty-session ([`ownership::private_dir`]: under `$XDG_RUNTIME_DIR`, else under
/// `~/.local/state`); an error without either, never a shared directory.
pub fn default_token_path(port: u16) -> anyhow::Result<PathBuf> {
    Ok(ownership::private_dir()?.join(format!("token-{port}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(value: &str) -> HeaderValue {
        HeaderValue::from_str(value).unwrap()
    }

    #[test]
    fn bearer_tokens_are_matched_exactly() {
        let mut tokens = Tokens {
            entries: Vec::new(),
        };
        tokens.add("alice", "aaaaaaaaaaaaaaaaaaaa").unwrap();
        tokens.add("bob", "bbbbbbbbbbbbbbbbbbbb").unwrap();
        let who = |value: &str| {
            tokens
                .authenticate(Some(&header(value)))
                .map(|p| p.0.to_string())
        };
        assert_eq!(who("Bearer aaaaaaaaaaaaaaaaaaaa").as_deref(), Some("alice"));
        assert_eq!(who("bearer  bbbbbbbbbbbbbbbbbbbb ").as_deref(), Some("bob"));
        assert_eq!(
            who("Bearer aaaaaaaaaaaaaaaaaaa"),
            None,
            "a prefix is not the token"
        );
        assert_eq!(
            who("Bearer aaaaaaaaaaaaaaaaaaaaa"),
            None,
            "nor is a longer string"
        );
        assert_eq!(who("Basic aaaaaaaaaaaaaaaaaaaa"), None);
        assert_eq!(who("Bearer "), None);
        assert_eq!(tokens.authenticate(None), None);
    }

    #[test]
    fn token_files_are_checked_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens");
        std::fs::write(&path, "# agents\nalice 0123456789abcdef0123\n\nbob short\n").unwrap();
        let err = Tokens::configured(Some(&path), None).err().unwrap();
        assert!(format!("{err:#}").contains("line 4"), "{err:#}");
        std::fs::write(
            &path,
            "alice 0123456789abcdef0123\nbob 0123456789abcdef9999\n",
        )
        .unwrap();
        let tokens = Tokens::configured(Some(&path), Some("e".repeat(20))).unwrap();
        assert_eq!(tokens.principals(), ["default", "alice", "bob"]);
    }

    #[test]
    fn generated_tokens_are_private_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("token");
        let first = Tokens::generated(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.trim().len(), 64);
        let second = Tokens::generated(&path).unwrap();
        assert_eq!(
            first.entries[0].1, second.entries[0].1,
            "a restart reuses the token"
        );
    }
}
