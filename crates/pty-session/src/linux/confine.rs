//! The sandbox as the kernel enforces it: a Landlock ruleset and seccomp filters, built by
//! the shim and applied by the command's child between `clone` and `exec`.
//!
//! The child shares the shim's memory (`CLONE_VM | CLONE_VFORK`) and must not allocate,
//! so everything that allocates happens in the shim first ([`prepare`]): the ruleset is
//! created and filled (a file descriptor), the BPF programs compiled (plain arrays). The
//! child then makes three kinds of syscall only ([`apply`]): `PR_SET_NO_NEW_PRIVS`,
//! `landlock_restrict_self` on that descriptor, and `seccomp(SET_MODE_FILTER)` for each
//! program. The shim itself never restricts itself: it stays outside the sandbox, so it
//! can still signal and reap the whole tree (Landlock's signal scope stops signals going
//! out of the sandbox, not in); the service, outside too, still reads the sandboxed
//! processes' `/proc` records to settle.
//!
//! What each layer does:
//! - Landlock, files: everything readable and executable; writable only the policy's
//!   paths (workspace mode), the session's terminal, `/dev/tty` and `/dev/null`. The
//!   file rights this kernel knows beyond those the policy needs (device ioctls, …) are
//!   handled too, so newer kernels restrict more, never less.
//! - Landlock, network (when cut): TCP bind and connect refused.
//! - Landlock, scopes (ABI 6 and later): no signal to, and no connect to an abstract Unix
//!   socket of, a process outside the sandbox.
//! - seccomp: `socket` of any family but `AF_UNIX` (when the network is cut: UDP, raw,
//!   ICMP, netlink, which Landlock has no rules for), `ptrace` and process memory access,
//!   the mount family, `unshare`, `setns`, `clone` with namespace flags, and io_uring
//!   (whose operations bypass seccomp) fail with `EPERM`; `clone3`, whose flags a filter
//!   cannot read, fails with `ENOSYS`, so that libc falls back to `clone`.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope,
};
use seccompiler::{
    SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

use crate::Sandbox;
use crate::sandbox::Policy;

/// The seccomp target of this build, if seccompiler has one.
pub(crate) fn arch() -> Option<TargetArch> {
    TargetArch::try_from(std::env::consts::ARCH).ok()
}

/// Where setting up the sandbox failed, as the shim reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Building the Landlock ruleset.
    Ruleset = 1,
    /// Compiling the seccomp filters.
    Filter = 2,
    /// `PR_SET_NO_NEW_PRIVS`.
    NoNewPrivs = 3,
    /// `landlock_restrict_self`.
    Restrict = 4,
    /// Installing a seccomp filter.
    Install = 5,
}

impl Stage {
    pub(crate) fn from_code(code: i64) -> Option<Stage> {
        [
            Stage::Ruleset,
            Stage::Filter,
            Stage::NoNewPrivs,
            Stage::Restrict,
            Stage::Install,
        ]
        .into_iter()
        .find(|stage| *stage as i64 == code)
    }

    /// What failed, for the error message.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Stage::Ruleset => "the Landlock ruleset could not be built",
            Stage::Filter => "the seccomp filter could not be compiled",
            Stage::NoNewPrivs => "no_new_privs could not be set",
            Stage::Restrict => "Landlock refused to restrict the command",
            Stage::Install => "the seccomp filter could not be installed",
        }
    }
}

/// A sandbox ready to apply: what the child needs, made before `clone`.
pub(crate) struct Prepared {
    ruleset: OwnedFd,
    /// One `sock_fprog` per filter, in install order, pointing into [`FILTERS`].
    programs: Vec<libc::sock_fprog>,
}

/// The compiled seccomp programs, without and with the network: they depend on nothing
/// else, so the spawner compiles them once ([`warm`]) and every shim, a fork of it, finds
/// them made.
static FILTERS: std::sync::OnceLock<[Option<Vec<Vec<libc::sock_filter>>>; 2]> =
    std::sync::OnceLock::new();

/// Compiles the seccomp programs, if not done yet.
pub(crate) fn warm() {
    FILTERS.get_or_init(|| [filters(false), filters(true)]);
}

/// The compiled programs for `network`.
fn compiled(network: bool) -> Option<&'static [Vec<libc::sock_filter>]> {
    warm();
    FILTERS.get()?[usize::from(network)].as_deref()
}

/// Builds `policy`'s ruleset and filters. `terminal` is the session's PTY slave by path.
/// Runs in the shim, single-threaded, before the command's child exists.
pub(crate) fn prepare(policy: &Policy, terminal: Option<PathBuf>) -> Result<Prepared, Stage> {
    let ruleset = ruleset(policy, terminal).map_err(|_| Stage::Ruleset)?;
    let filters = compiled(policy.network).ok_or(Stage::Filter)?;
    let programs = filters
        .iter()
        .map(|filter| libc::sock_fprog {
            len: filter.len() as u16,
            filter: filter.as_ptr().cast_mut(),
        })
        .collect();
    Ok(Prepared { ruleset, programs })
}

/// The Landlock ruleset of `policy`, created and filled, as its descriptor (close-on-exec,
/// as the kernel makes it).
fn ruleset(
    policy: &Policy,
    terminal: Option<PathBuf>,
) -> Result<OwnedFd, Box<dyn std::error::Error>> {
    // The newest ABI this crate knows: whatever the kernel has of it is handled, so a
    // newer kernel restricts more. What the policy cannot do without is asked first as a
    // hard requirement (the service checked it already; this is the backstop).
    let newest = ABI::V7;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V3))?;
    if !policy.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI::V4))?;
    }
    let mut created = ruleset
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(newest))?
        .scope(Scope::from_all(newest))?
        .create()?
        .add_rule(PathBeneath::new(
            PathFd::new("/")?,
            AccessFs::from_read(newest),
        ))?;
    // The terminal: the session's own PTY (reopened by name or as /dev/tty) and /dev/null.
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
    let mut devices: Vec<PathBuf> = vec!["/dev/null".into(), "/dev/tty".into()];
    devices.extend(terminal);
    created = created.add_rules(landlock::path_beneath_rules(devices, device))?;
    if policy.mode == Sandbox::Workspace {
        created = created.add_rules(landlock::path_beneath_rules(
            &policy.writable,
            AccessFs::from_all(newest),
        ))?;
    }
    Option::<OwnedFd>::from(created).ok_or_else(|| "Landlock made no ruleset".into())
}

/// The seccomp programs: the `EPERM` one, then the `ENOSYS` one for `clone3`.
fn filters(network: bool) -> Option<Vec<Vec<libc::sock_filter>>> {
    let arch = arch()?;
    let always = |rules: &mut BTreeMap<i64, Vec<SeccompRule>>, syscall: libc::c_long| {
        rules.insert(syscall, Vec::new());
    };
    let mut denied: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for syscall in [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        always(&mut denied, syscall);
    }
    let namespaces = [
        libc::CLONE_NEWNS,
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWCGROUP,
    ];
    let clone_rules = namespaces
        .into_iter()
        .map(|flag| {
            let flag = flag as u64;
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )
            .and_then(|condition| SeccompRule::new(vec![condition]))
        })
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    denied.insert(libc::SYS_clone, clone_rules);
    if !network {
        let not_unix = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )
        .and_then(|condition| SeccompRule::new(vec![condition]))
        .ok()?;
        denied.insert(libc::SYS_socket, vec![not_unix]);
    }
    let eperm = compile(denied, libc::EPERM, arch)?;
    let mut clone3 = BTreeMap::new();
    always(&mut clone3, libc::SYS_clone3);
    let enosys = compile(clone3, libc::ENOSYS, arch)?;
    Some(vec![eperm, enosys])
}

fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: i32,
    arch: TargetArch,
) -> Option<Vec<libc::sock_filter>> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )
    .ok()?;
    let program: seccompiler::BpfProgram = filter.try_into().ok()?;
    Some(
        program
            .into_iter()
            .map(|op| libc::sock_filter {
                code: op.code,
                jt: op.jt,
                jf: op.jf,
                k: op.k,
            })
            .collect(),
    )
}

/// The raw parts of a [`Prepared`] sandbox, for the command's child.
#[derive(Clone, Copy)]
pub(crate) struct Raw {
    ruleset: i32,
    programs: *const libc::sock_fprog,
    count: usize,
}

impl Prepared {
    /// Pointers into `self`, valid while it lives.
    pub(crate) fn raw(&self) -> Raw {
        Raw {
            ruleset: self.ruleset.as_raw_fd(),
            programs: self.programs.as_ptr(),
            count: self.programs.len(),
        }
    }
}

/// Restricts the calling process for good: no new privileges, the Landlock ruleset, the
/// seccomp filters. Only syscalls: safe in a `CLONE_VM` child.
///
/// # Safety
/// `raw` must come from a [`Prepared`] that outlives the call.
pub(crate) unsafe fn apply(raw: Raw) -> Result<(), (Stage, i32)> {
    let errno = || {
        // SAFETY: reads the calling thread's errno.
        unsafe { *libc::__errno_location() }
    };
    // SAFETY: prctl and the two syscalls take integers and pointers into `raw`'s
    // `Prepared`, which the caller keeps alive; none allocates in this process.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err((Stage::NoNewPrivs, errno()));
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, raw.ruleset, 0u32) != 0 {
            return Err((Stage::Restrict, errno()));
        }
        for i in 0..raw.count {
            let program = raw.programs.add(i);
            if libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0u32,
                program,
            ) != 0
            {
                return Err((Stage::Install, errno()));
            }
        }
    }
    Ok(())
}

/// The policy as the spawner request carries it back to a [`Policy`].
pub(crate) fn policy_from(
    mode: u8,
    network: bool,
    writable: &[std::ffi::CString],
) -> Option<Policy> {
    let mode = match mode {
        1 => Sandbox::Workspace,
        2 => Sandbox::ReadOnly,
        _ => return None,
    };
    Some(Policy {
        mode,
        network,
        writable: writable
            .iter()
            .map(|path| PathBuf::from(OsStr::from_bytes(path.as_bytes())))
            .collect(),
    })
}

/// A mode's number in the spawner request (0: none).
pub(crate) fn mode_code(mode: Sandbox) -> u8 {
    match mode {
        Sandbox::None => 0,
        Sandbox::Workspace => 1,
        Sandbox::ReadOnly => 2,
    }
}
