//! The sandbox as the kernel enforces it: a Landlock ruleset and seccomp filters, built by
//! the shim and applied by the command's child between `clone` and `exec`, inside the
//! namespaces [`isolate`](crate::isolate) made.
//!
//! The child shares the shim's memory (`CLONE_VM | CLONE_VFORK`) and must not allocate,
//! so everything that allocates happens in the shim first ([`prepare`]): the ruleset is
//! created and filled (a file descriptor), the BPF programs compiled (plain arrays), the
//! namespaces' plan made. The child then makes syscalls only ([`apply`]): its own `/proc`,
//! every capability dropped, the session's `/tmp` added to the ruleset, then
//! `PR_SET_NO_NEW_PRIVS`, `landlock_restrict_self` on that descriptor, and
//! `seccomp(SET_MODE_FILTER)` for each program. The shim itself never restricts itself:
//! it stays outside the sandbox, so it can still signal and reap the whole tree
//! (Landlock's signal scope stops signals going out of the sandbox, not in); the service,
//! outside too, still reads the sandboxed processes' `/proc` records to settle.
//!
//! What each layer does:
//! - Landlock, files: everything readable and executable; writable only the policy's
//!   paths (workspace mode) and the session's own `/tmp`, the session's terminal,
//!   `/dev/tty` and `/dev/null`. The file rights this kernel knows beyond those the policy
//!   needs (device ioctls, …) are handled too, so newer kernels restrict more, never less.
//! - Landlock, network (when cut): TCP bind and connect refused.
//! - Landlock, scopes (ABI 6 and later): no signal to, and no connect to an abstract Unix
//!   socket of, a process outside the sandbox.
//! - seccomp, `EPERM` (see [`filters`]): when the network is cut, `socket` of any family
//!   but `AF_UNIX` (UDP, raw, ICMP, netlink, which Landlock has no rules for) and Unix
//!   datagram sockets, `connect` and `bind` of any socket, `sendto` with an address;
//!   always `ptrace` and process memory access, the mount family, `chroot`, `unshare`,
//!   `setns`, `clone` with namespace flags, io_uring (whose operations bypass seccomp),
//!   SysV IPC, fanotify, keyrings, bpf, perf events, userfaultfd, `open_by_handle_at`,
//!   device nodes, acting on another process (`prlimit64` setting, `setpriority`,
//!   `ioprio_set`, `sched_set*` with a pid but 0), and host administration (reboot, kexec,
//!   modules, swap, acct, clocks, host and domain names).
//! - seccomp, ABI: another architecture's calls kill the process (seccompiler's check);
//!   x32 calls (bit 30 of the number on x86_64) fail with `EPERM`.
//! - seccomp, `ENOSYS`: `clone3`, whose flags a filter cannot read, so that libc falls
//!   back to `clone`.

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
    /// Making the sandbox's namespaces (user namespaces off, or out of them).
    Namespaces = 6,
    /// Mapping the service's user into the new user namespace.
    Identity = 7,
    /// Building the sandbox's mount tree.
    Mounts = 8,
    /// Mounting the sandbox's own `/proc`.
    Proc = 9,
    /// Dropping the capabilities.
    Capabilities = 10,
}

impl Stage {
    pub(crate) fn from_code(code: i64) -> Option<Stage> {
        [
            Stage::Ruleset,
            Stage::Filter,
            Stage::NoNewPrivs,
            Stage::Restrict,
            Stage::Install,
            Stage::Namespaces,
            Stage::Identity,
            Stage::Mounts,
            Stage::Proc,
            Stage::Capabilities,
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
            Stage::Namespaces => {
                "the sandbox's user, mount, PID, IPC and UTS namespaces could not be made \
                 (user namespaces are off on this kernel or for this user: sysctl \
                 user.max_user_namespaces, kernel.unprivileged_userns_clone, an AppArmor or \
                 container policy)"
            }
            Stage::Identity => {
                "the service's user could not be mapped into the sandbox's user namespace \
                 (an AppArmor policy may restrict user namespaces: Ubuntu's sysctl \
                 kernel.apparmor_restrict_unprivileged_userns, unless a profile for this \
                 program allows `userns`)"
            }
            Stage::Mounts => "the sandbox's mount tree could not be built",
            Stage::Proc => "the sandbox's own /proc could not be mounted",
            Stage::Capabilities => "the capabilities could not be dropped",
        }
    }
}

/// A sandbox ready to apply: what the child needs, made before `clone`.
pub(crate) struct Prepared {
    ruleset: OwnedFd,
    /// One `sock_fprog` per filter, in install order, pointing into [`FILTERS`].
    programs: Vec<libc::sock_fprog>,
    /// The namespaces and their mount tree.
    pub(crate) plan: crate::isolate::Plan,
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
    let plan = crate::isolate::Plan::new(policy, terminal.as_deref());
    let ruleset = ruleset(policy, terminal).map_err(|_| Stage::Ruleset)?;
    let filters = compiled(policy.network).ok_or(Stage::Filter)?;
    let programs = filters
        .iter()
        .map(|filter| libc::sock_fprog {
            len: filter.len() as u16,
            filter: filter.as_ptr().cast_mut(),
        })
        .collect();
    Ok(Prepared {
        ruleset,
        programs,
        plan,
    })
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
        // `/tmp` is the session's own tmpfs, mounted on the service's `/tmp`, whose rule
        // the walk up from a file in it meets.
        let temp = std::iter::once(PathBuf::from("/tmp"));
        created = created.add_rules(landlock::path_beneath_rules(
            policy.writable.iter().cloned().chain(temp),
            AccessFs::from_all(newest),
        ))?;
    }
    Option::<OwnedFd>::from(created).ok_or_else(|| "Landlock made no ruleset".into())
}

/// One condition on argument `arg`, as a rule of its own.
fn when(arg: u8, len: SeccompCmpArgLen, op: SeccompCmpOp, value: u64) -> Option<SeccompRule> {
    all(&[(arg, len, op, value)])
}

/// A rule that holds when every condition does.
fn all(conditions: &[(u8, SeccompCmpArgLen, SeccompCmpOp, u64)]) -> Option<SeccompRule> {
    let conditions = conditions
        .iter()
        .map(|(arg, len, op, value)| {
            SeccompCondition::new(*arg, len.clone(), op.clone(), *value).ok()
        })
        .collect::<Option<Vec<_>>>()?;
    SeccompRule::new(conditions).ok()
}

/// The syscalls refused whatever their arguments: tracing and other processes' memory,
/// mounts and namespaces, io_uring (whose operations bypass seccomp), SysV IPC, fanotify,
/// keyrings, bpf, perf events, userfaultfd, and what administers the whole machine.
const ALWAYS_DENIED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
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
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_shmctl,
    libc::SYS_shmdt,
    libc::SYS_msgget,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semctl,
    libc::SYS_semtimedop,
    libc::SYS_fanotify_init,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_keyctl,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_open_by_handle_at,
    libc::SYS_reboot,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
];

/// The Landlock file rights of a writable path, as the rulesets of this kernel handle
/// them (what [`ruleset`] asks, cut to what the kernel knows), for a rule added by the
/// command itself.
pub(crate) fn writable_access() -> u64 {
    let abi = ABI::from(crate::sandbox::landlock_abi()).min(ABI::V7);
    AccessFs::from_all(abi).bits()
}

/// The seccomp programs: the ABI one, the `EPERM` one, then the `ENOSYS` one for `clone3`.
fn filters(network: bool) -> Option<Vec<Vec<libc::sock_filter>>> {
    use SeccompCmpArgLen::{Dword, Qword};
    use SeccompCmpOp::{Eq, MaskedEq, Ne};
    let arch = arch()?;
    let mut denied: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &syscall in ALWAYS_DENIED {
        denied.insert(syscall, Vec::new());
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
        .map(|flag| when(0, Qword, MaskedEq(flag as u64), flag as u64))
        .collect::<Option<Vec<_>>>()?;
    denied.insert(libc::SYS_clone, clone_rules);
    // Acting on another process: only the caller itself (pid 0) may be changed. The PID
    // namespace already hides every process outside; this holds inside it too, and
    // reading another's limits (no new limit given) stays allowed.
    denied.insert(
        libc::SYS_prlimit64,
        vec![all(&[(0, Dword, Ne, 0), (2, Qword, Ne, 0)])?],
    );
    for syscall in [
        libc::SYS_sched_setaffinity,
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setattr,
    ] {
        denied.insert(syscall, vec![when(0, Dword, Ne, 0)?]);
    }
    // setpriority(which, who, prio) and ioprio_set(which, who, prio): only who 0 (the
    // caller, its group), never a whole user's processes.
    const PRIO_USER: u64 = 2;
    const IOPRIO_WHO_USER: u64 = 3;
    denied.insert(
        libc::SYS_setpriority,
        vec![when(1, Dword, Ne, 0)?, when(0, Dword, Eq, PRIO_USER)?],
    );
    denied.insert(
        libc::SYS_ioprio_set,
        vec![when(1, Dword, Ne, 0)?, when(0, Dword, Eq, IOPRIO_WHO_USER)?],
    );
    // Device nodes: no character or block device may be made (FIFOs and files may).
    let devices = |arg: u8| -> Option<Vec<SeccompRule>> {
        let kind = libc::S_IFMT as u64;
        Some(vec![
            when(arg, Dword, MaskedEq(kind), libc::S_IFCHR as u64)?,
            when(arg, Dword, MaskedEq(kind), libc::S_IFBLK as u64)?,
        ])
    };
    #[cfg(target_arch = "x86_64")]
    denied.insert(libc::SYS_mknod, devices(1)?);
    denied.insert(libc::SYS_mknodat, devices(2)?);
    if !network {
        // No socket but a Unix one, and no Unix datagram socket either (one could send to
        // a path without `connect`); no `connect` or `bind` of any socket at all (Unix
        // ones by path or abstract name included); no `sendto` with an address. A
        // `socketpair` stays: it reaches only the process that made it.
        const TYPE_MASK: u64 = 0xf;
        denied.insert(
            libc::SYS_socket,
            vec![
                when(0, Dword, Ne, libc::AF_UNIX as u64)?,
                all(&[
                    (0, Dword, Eq, libc::AF_UNIX as u64),
                    (1, Dword, MaskedEq(TYPE_MASK), libc::SOCK_DGRAM as u64),
                ])?,
            ],
        );
        denied.insert(libc::SYS_connect, Vec::new());
        denied.insert(libc::SYS_bind, Vec::new());
        denied.insert(libc::SYS_sendto, vec![when(4, Qword, Ne, 0)?]);
    }
    let eperm = compile(denied, libc::EPERM, arch)?;
    let mut clone3 = BTreeMap::new();
    clone3.insert(libc::SYS_clone3, Vec::new());
    let enosys = compile(clone3, libc::ENOSYS, arch)?;
    Some(vec![abi(), eperm, enosys])
}

/// A filter that refuses every syscall of another ABI than this build's: seccompiler's
/// programs already kill a process that calls in with another architecture (32-bit
/// `int 0x80` on x86_64), but x32 calls come in as x86_64 with bit 30 of the number set,
/// and each would need its own rule; this refuses them all (`EPERM`).
fn abi() -> Vec<libc::sock_filter> {
    const LD_W_ABS: u16 = 0x20;
    const JGE_K: u16 = 0x05 | 0x30;
    const RET_K: u16 = 0x06;
    /// `offsetof(struct seccomp_data, nr)`.
    const NR: u32 = 0;
    let stmt = |code: u16, k: u32| libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    };
    let allow = stmt(RET_K, libc::SECCOMP_RET_ALLOW);
    if cfg!(target_arch = "x86_64") {
        const X32_SYSCALL_BIT: u32 = 0x4000_0000;
        vec![
            stmt(LD_W_ABS, NR),
            libc::sock_filter {
                code: JGE_K,
                jt: 0,
                jf: 1,
                k: X32_SYSCALL_BIT,
            },
            stmt(RET_K, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
            allow,
        ]
    } else {
        vec![allow]
    }
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
    last_cap: i32,
    temp_rule: u64,
}

impl Prepared {
    /// Pointers into `self`, valid while it lives.
    pub(crate) fn raw(&self) -> Raw {
        Raw {
            ruleset: self.ruleset.as_raw_fd(),
            programs: self.programs.as_ptr(),
            count: self.programs.len(),
            last_cap: self.plan.last_cap(),
            temp_rule: self.plan.temp_rule(),
        }
    }
}

/// Restricts the calling process, the command's child inside the sandbox's namespaces,
/// for good: its own `/proc` and no capability ([`isolate::enter`](crate::isolate::enter)),
/// no new privileges, the Landlock ruleset, the seccomp filters. Only syscalls: safe in a
/// `CLONE_VM` child.
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
        crate::isolate::enter(raw.last_cap, raw.ruleset, raw.temp_rule)
            .map_err(|stage| (stage, errno()))?;
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
    hidden: &[std::ffi::CString],
) -> Option<Policy> {
    let paths = |list: &[std::ffi::CString]| {
        list.iter()
            .map(|path| PathBuf::from(OsStr::from_bytes(path.as_bytes())))
            .collect()
    };
    let mode = match mode {
        1 => Sandbox::Workspace,
        2 => Sandbox::ReadOnly,
        _ => return None,
    };
    Some(Policy {
        mode,
        network,
        writable: paths(writable),
        hidden: paths(hidden),
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
