//! Which files, directories and sockets this user trusts: a secret is read, and a Unix
//! socket trusted, only where nobody else could have put it or can change it.
//!
//! The rule lives here alone, and `serve`, `mcp --persist`, its background server, `ls`,
//! `attach` and `stop` all call it:
//! - the **item** (a token file, the background server's directory) belongs to this user
//!   and nobody else can write it;
//! - the **directory a secret file is made in** (a generated token) belongs to this user
//!   or to root and nobody else can write it (no sticky exception: in `/tmp` another user
//!   could take the name first);
//! - **every directory above**, and the one holding a secret file that exists already (a
//!   `--tokens` file), belongs to this user or to root, and nobody else can write it
//!   unless it is sticky: there, others cannot rename, remove or replace what is not
//!   theirs, and a file they made first is theirs, which the item's rule refuses;
//! - the **process at the other end of a Unix socket** runs as this user
//!   (`SO_PEERCRED`), whichever side asks.
//!
//! Paths are resolved first (symbolic links followed), and the rule is applied to where
//! they lead: a link can only be planted by someone who may write a directory on the way,
//! which the rule already refuses. Root is trusted because it can read and write
//! everything anyway; another user never is, however the permission bits read.
//!
//! Why refuse rather than repair: a file or directory another user owns may have been read
//! or replaced already, and nothing here can tell; the message names the path, its owner
//! and what to do.

use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// Writable by the group or by others.
const WRITABLE_BY_OTHERS: u32 = 0o022;
/// The sticky bit of a directory.
const STICKY: u32 = 0o1000;

/// This process's real user id.
pub fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// This user's private directory of pty-session: `$XDG_RUNTIME_DIR/pty-session`, else
/// `~/.local/state/pty-session`. The background server's socket and the token a `serve`
/// generates live there. With neither variable set to an absolute path there is no
/// private place, and no fallback (a shared directory such as `/tmp` would let another
/// user plant what is read from it).
pub fn private_dir() -> anyhow::Result<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    if let Some(runtime) = absolute("XDG_RUNTIME_DIR") {
        return Ok(runtime.join("pty-session"));
    }
    if let Some(home) = absolute("HOME") {
        return Ok(home.join(".local/state/pty-session"));
    }
    bail!(
        "neither XDG_RUNTIME_DIR nor HOME is set to an absolute path, so this user has no \
         private directory for pty-session (there is no /tmp fallback: another user could \
         plant files there); set one of them"
    )
}

/// Creates `dir` (and missing parents) 0700 if it is missing, narrows it to 0700 if it is
/// this user's and looser, and refuses it unless [`check_dir`] accepts it then: for the
/// directories pty-session makes for itself ([`private_dir`]).
pub fn make_private_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let meta =
        std::fs::symlink_metadata(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    if meta.is_dir() && meta.uid() == uid() && meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot make {} private (0700)", dir.display()))?;
    }
    check_dir(dir)
}

/// Refuses directory `dir` unless it is this user's and nobody else can write it or any
/// directory above it (see the module's rule).
pub fn check_dir(dir: &Path) -> anyhow::Result<()> {
    let real = resolve(dir)?;
    let meta =
        std::fs::metadata(&real).with_context(|| format!("cannot read {}", real.display()))?;
    if !meta.is_dir() {
        bail!("{} is not a directory", shown(dir, &real));
    }
    item(dir, &real, &meta)?;
    above(&real)
}

/// Refuses the secret file `path` (a token file) unless it is a regular file of this user
/// that nobody else can write, in directories that pass the module's rule (a sticky one
/// such as `/tmp` included). Returns its metadata.
pub fn check_secret_file(path: &Path) -> anyhow::Result<std::fs::Metadata> {
    let real = resolve(path)?;
    let meta =
        std::fs::metadata(&real).with_context(|| format!("cannot read {}", real.display()))?;
    if !meta.is_file() {
        bail!("{} is not a regular file", shown(path, &real));
    }
    item(path, &real, &meta)?;
    above(&real)?;
    Ok(meta)
}

/// Refuses directory `dir` as the home of a new secret file: it must be of this user or
/// root, writable by nobody else, under directories that pass the module's rule.
pub fn check_secret_dir(dir: &Path) -> anyhow::Result<()> {
    let real = resolve(dir)?;
    let meta =
        std::fs::metadata(&real).with_context(|| format!("cannot read {}", real.display()))?;
    if !meta.is_dir() {
        bail!("{} is not a directory", shown(dir, &real));
    }
    trusted_dir(&real, &meta, false)?;
    above(&real)
}

/// Why the process at the other end of a Unix socket is not trusted.
#[derive(Debug)]
pub enum Stranger {
    /// It runs as another user.
    OtherUser(u32),
    /// The kernel would not say who it is.
    Unknown(std::io::Error),
}

impl std::fmt::Display for Stranger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stranger::OtherUser(peer) => write!(
                f,
                "the process at the other end runs as uid {peer}, not as this user (uid {})",
                uid()
            ),
            Stranger::Unknown(err) => {
                write!(
                    f,
                    "the user of the process at the other end cannot be told: {err}"
                )
            }
        }
    }
}

/// The credentials of the process at the other end of `stream` (`SO_PEERCRED`), if it
/// runs as this user: the background server asks it of its clients, and every client of
/// the background server (`mcp --persist`, `ls`, `attach`, `stop`) of its server.
pub fn peer_of_this_user(
    stream: &tokio::net::UnixStream,
) -> Result<tokio::net::unix::UCred, Stranger> {
    let cred = stream.peer_cred().map_err(Stranger::Unknown)?;
    if cred.uid() != uid() {
        return Err(Stranger::OtherUser(cred.uid()));
    }
    Ok(cred)
}

/// `path` with its symbolic links resolved.
fn resolve(path: &Path) -> anyhow::Result<PathBuf> {
    path.canonicalize()
        .with_context(|| format!("cannot resolve {}", path.display()))
}

/// `path`, and where it leads when that is elsewhere, for messages.
fn shown(path: &Path, real: &Path) -> String {
    if path == real {
        path.display().to_string()
    } else {
        format!("{} (-> {})", path.display(), real.display())
    }
}

/// The item's own rule: this user's, writable by nobody else.
fn item(path: &Path, real: &Path, meta: &std::fs::Metadata) -> anyhow::Result<()> {
    let me = uid();
    if meta.uid() != me {
        bail!(
            "{} belongs to uid {}, not to this user (uid {me}): refusing to trust what another \
             user could have written; remove it, or use a path of your own",
            shown(path, real),
            meta.uid()
        );
    }
    if meta.mode() & WRITABLE_BY_OTHERS != 0 {
        bail!(
            "{} is writable by others (mode {:o}): refusing to trust it; chmod go-w it",
            shown(path, real),
            meta.mode() & 0o7777
        );
    }
    Ok(())
}

/// A directory on the way: this user's or root's, writable by nobody else (unless
/// `sticky_ok` and it is sticky).
fn trusted_dir(dir: &Path, meta: &std::fs::Metadata, sticky_ok: bool) -> anyhow::Result<()> {
    let me = uid();
    if meta.uid() != me && meta.uid() != 0 {
        bail!(
            "{} belongs to uid {}, neither this user (uid {me}) nor root: whoever owns it \
             could replace what is inside; use a directory of your own",
            dir.display(),
            meta.uid()
        );
    }
    let sticky = meta.mode() & STICKY != 0;
    if meta.mode() & WRITABLE_BY_OTHERS != 0 && !(sticky_ok && sticky) {
        bail!(
            "{} is writable by others (mode {:o}): they could replace what is inside; use a \
             directory that only you can write",
            dir.display(),
            meta.mode() & 0o7777
        );
    }
    Ok(())
}

/// The directories above `real` (resolved), under the sticky exception.
fn above(real: &Path) -> anyhow::Result<()> {
    for dir in real.ancestors().skip(1) {
        let meta =
            std::fs::metadata(dir).with_context(|| format!("cannot read {}", dir.display()))?;
        trusted_dir(dir, &meta, true)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory of mode 0755, removed when dropped.
    fn scratch(name: &str) -> tempfile::TempDir {
        let dir = tempfile::Builder::new()
            .prefix(&format!("pty-session-ownership-{name}-"))
            .tempdir()
            .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        dir
    }

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_private_file_in_a_private_directory_is_trusted() {
        let tmp = scratch("file");
        let dir = tmp.path();
        let file = dir.join("token");
        std::fs::write(&file, "x").unwrap();
        chmod(&file, 0o600);
        check_secret_file(&file).unwrap();
        // Readable by others is a leak, not a plant: the callers decide about it.
        chmod(&file, 0o644);
        check_secret_file(&file).unwrap();
        chmod(&file, 0o620);
        let err = format!("{:#}", check_secret_file(&file).unwrap_err());
        assert!(err.contains("writable by others"), "{err}");
        chmod(&file, 0o600);
        chmod(dir, 0o775);
        let err = format!("{:#}", check_secret_file(&file).unwrap_err());
        assert!(err.contains("writable by others"), "{err}");
        // A sticky directory is fine for a file that is there (nobody else can swap it),
        // not for one to be made (nobody else must take its name first).
        chmod(dir, 0o1777);
        check_secret_file(&file).unwrap();
        assert!(check_secret_dir(dir).is_err());
        let sub = dir.join("sub");
        std::fs::create_dir(&sub).unwrap();
        chmod(&sub, 0o700);
        let inner = sub.join("token");
        std::fs::write(&inner, "x").unwrap();
        check_secret_file(&inner).unwrap();
        check_dir(&sub).unwrap();
    }

    #[test]
    fn a_link_is_judged_by_where_it_leads() {
        let tmp = scratch("link");
        let dir = tmp.path();
        let open = dir.join("open");
        std::fs::create_dir(&open).unwrap();
        chmod(&open, 0o777);
        std::fs::write(open.join("token"), "x").unwrap();
        std::os::unix::fs::symlink(open.join("token"), dir.join("token")).unwrap();
        let err = format!("{:#}", check_secret_file(&dir.join("token")).unwrap_err());
        assert!(
            err.contains("open is writable by others"),
            "the link's target's directory: {err}"
        );
    }
}
