//! Which sandbox a session runs in, and whether this kernel can enforce it.
//!
//! The policy itself is built and applied by the shim (see `linux/confine.rs`): the
//! service only checks, before it starts anything, that the kernel offers every feature
//! the asked policy needs, so that no session ever runs weaker than its caller believes.

use std::fmt;
use std::path::PathBuf;

/// The sandbox of a session (`sandbox` of `pty_open`, config `sandbox`). See
/// docs/tools.md, "Sandbox".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Sandbox {
    /// No sandbox: the session's programs have every right of the service's user.
    #[default]
    None,
    /// Read everything the service can; write only the session's working directory, the
    /// temp directory and `sandbox_writable`; no network unless `sandbox_network`.
    Workspace,
    /// Write nothing but the terminal and `/dev/null`; no network unless
    /// `sandbox_network`.
    ReadOnly,
}

impl Sandbox {
    /// Every mode, in the order docs and errors list them.
    pub const ALL: [Sandbox; 3] = [Sandbox::None, Sandbox::Workspace, Sandbox::ReadOnly];

    /// The wire name: `"none"`, `"workspace"` or `"read-only"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Sandbox::None => "none",
            Sandbox::Workspace => "workspace",
            Sandbox::ReadOnly => "read-only",
        }
    }

    /// The mode named `name`, or an `INVALID_ARGUMENT` error (for `argument`) listing
    /// the modes.
    pub fn parse(argument: &str, name: &str) -> Result<Sandbox, crate::Error> {
        Sandbox::ALL
            .into_iter()
            .find(|mode| mode.as_str() == name)
            .ok_or_else(|| {
                let names: Vec<String> = Sandbox::ALL
                    .iter()
                    .map(|mode| format!("\"{}\"", mode.as_str()))
                    .collect();
                crate::Error::invalid(
                    argument,
                    format!(
                        "{name:?} is not a sandbox; give one of {}",
                        names.join(", ")
                    ),
                )
            })
    }
}

impl fmt::Display for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A sandboxed session's temp directory (its `TMPDIR`): the session's own tmpfs, which no
/// other session sees.
pub(crate) const TEMP_DIR: &str = "/tmp";

/// What the shim enforces for one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Policy {
    /// `Workspace` or `ReadOnly` (a session without a sandbox has no policy).
    pub(crate) mode: Sandbox,
    /// Whether the session may use the network.
    pub(crate) network: bool,
    /// Directories (and files) of the service's the session may write (the working
    /// directory and `sandbox_writable`), besides the terminal and its own `/tmp`.
    pub(crate) writable: Vec<PathBuf>,
    /// Paths of the service's the session does not see (`sandbox_hidden`).
    pub(crate) hidden: Vec<PathBuf>,
}

/// The environment variable that lowers the Landlock ABI the service believes the kernel
/// offers: a seam for tests of `SANDBOX_UNAVAILABLE`. It can only make the check stricter.
pub const ABI_CEILING_VAR: &str = "PTY_SESSION_LANDLOCK_ABI";

/// The Landlock ABI the sandbox needs for its file rules: 3 has truncation, without which
/// a sandboxed program could truncate any file it can read.
pub(crate) const FILES_ABI: i32 = 3;
/// The Landlock ABI with TCP bind and connect rules, needed to cut the network.
pub(crate) const TCP_ABI: i32 = 4;

/// What this kernel lacks to enforce a `mode` sandbox (with or without `network`), given
/// the Landlock ABI it offers (`abi` ≤ 0: none) and whether it has seccomp filters;
/// `None` if nothing is missing.
pub(crate) fn missing(
    mode: Sandbox,
    network: bool,
    abi: i32,
    seccomp: bool,
    namespaces: Namespaces,
) -> Option<String> {
    if mode == Sandbox::None {
        return None;
    }
    let mut missing = Vec::new();
    if let Namespaces::Off(why) = namespaces {
        missing.push(format!("user namespaces ({why})"));
    }
    if abi <= 0 {
        missing.push(
            "Landlock (this kernel has it off or predates it; it needs Linux 5.13 or newer with \
             landlock in the lsm= boot list)"
                .to_owned(),
        );
    } else if abi < FILES_ABI {
        missing.push(format!(
            "Landlock ABI {FILES_ABI} for file rules (Linux 6.2); this kernel offers ABI {abi}"
        ));
    } else if !network && abi < TCP_ABI {
        missing.push(format!(
            "Landlock ABI {TCP_ABI} for TCP rules, which cut the network (Linux 6.7); this \
             kernel offers ABI {abi} (config sandboxNetwork = true needs only ABI {FILES_ABI})"
        ));
    }
    if !seccomp {
        missing.push("seccomp filters (CONFIG_SECCOMP_FILTER)".to_owned());
    }
    if crate::confine::arch().is_none() {
        missing.push(format!(
            "seccomp filters for {} (built for x86_64, aarch64 and riscv64)",
            std::env::consts::ARCH
        ));
    }
    (!missing.is_empty()).then(|| missing.join("; "))
}

/// Whether this kernel lets the service make the user namespace a sandbox starts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Namespaces {
    /// Nothing known against it (the shim still reports a refusal it meets).
    Available,
    /// Off, and why.
    Off(&'static str),
}

/// What the kernel's settings say about user namespaces: the ones that turn them off for
/// everyone, or for users without privileges (Debian's).
pub(crate) fn kernel_namespaces() -> Namespaces {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .map(|text| text.trim().to_owned())
    };
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return Namespaces::Off("sysctl user.max_user_namespaces is 0");
    }
    if !std::path::Path::new("/proc/self/ns/user").exists() {
        return Namespaces::Off("this kernel is built without them (CONFIG_USER_NS)");
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root && read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return Namespaces::Off("sysctl kernel.unprivileged_userns_clone is 0 for users");
    }
    // Ubuntu's AppArmor restriction (kernel.apparmor_restrict_unprivileged_userns) is not
    // asked here: a profile may lift it for this binary. Where it holds, the shim's
    // attempt fails and says so.
    Namespaces::Available
}

/// The Landlock ABI the kernel offers (0: none), lowered to [`ABI_CEILING_VAR`] if that is
/// set lower.
pub(crate) fn kernel_abi() -> i32 {
    let abi = landlock_abi();
    match std::env::var(ABI_CEILING_VAR)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
    {
        Some(ceiling) => abi.min(ceiling),
        None => abi,
    }
}

/// The Landlock ABI the kernel offers (0: none), as it is.
pub(crate) fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag, the syscall only
    // returns the ABI version (or an error) and touches no memory.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(abi).unwrap_or(0).max(0)
}

/// Whether the kernel has seccomp filters.
pub(crate) fn kernel_seccomp() -> bool {
    // SAFETY: PR_GET_SECCOMP takes no pointer; it fails with EINVAL without seccomp.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_by_their_wire_names() {
        for mode in Sandbox::ALL {
            assert_eq!(Sandbox::parse("sandbox", mode.as_str()).ok(), Some(mode));
        }
        let err = Sandbox::parse("sandbox", "strict").unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT");
        assert_eq!(
            err.to_string(),
            "sandbox: \"strict\" is not a sandbox; give one of \"none\", \"workspace\", \
             \"read-only\""
        );
    }

    #[test]
    fn what_a_kernel_lacks_is_named() {
        let on = Namespaces::Available;
        let missing = |mode, network, abi, seccomp| missing(mode, network, abi, seccomp, on);
        assert_eq!(missing(Sandbox::None, false, 0, false), None);
        assert_eq!(missing(Sandbox::Workspace, false, 7, true), None);
        assert_eq!(missing(Sandbox::ReadOnly, false, 4, true), None);
        assert_eq!(missing(Sandbox::Workspace, true, 3, true), None);
        let no_landlock = missing(Sandbox::Workspace, false, 0, true).unwrap();
        assert!(
            no_landlock.starts_with("Landlock (this kernel"),
            "{no_landlock}"
        );
        let old = missing(Sandbox::ReadOnly, true, 2, true).unwrap();
        assert!(
            old.contains("ABI 3 for file rules") && old.contains("offers ABI 2"),
            "{old}"
        );
        let no_tcp = missing(Sandbox::Workspace, false, 3, true).unwrap();
        assert!(no_tcp.contains("ABI 4 for TCP rules"), "{no_tcp}");
        let no_seccomp = missing(Sandbox::Workspace, true, 7, false).unwrap();
        assert!(no_seccomp.contains("seccomp"), "{no_seccomp}");
    }

    #[test]
    fn a_kernel_without_user_namespaces_is_named() {
        let off = Namespaces::Off("sysctl user.max_user_namespaces is 0");
        for mode in [Sandbox::Workspace, Sandbox::ReadOnly] {
            let text = missing(mode, false, 7, true, off).unwrap();
            assert_eq!(
                text,
                "user namespaces (sysctl user.max_user_namespaces is 0)"
            );
        }
        assert_eq!(missing(Sandbox::None, false, 7, true, off), None);
        // This machine has them: the sandbox tests run here.
        assert_eq!(kernel_namespaces(), Namespaces::Available);
    }
}
