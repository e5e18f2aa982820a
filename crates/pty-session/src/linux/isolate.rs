//! The sandbox's namespaces: a session of its own user, mount, PID, IPC and UTS
//! namespaces, with `/` read-only, a private `/tmp`, a fresh `/proc` and a minimal `/dev`.
//!
//! Done by our own code in the shim's child setup rather than by bubblewrap: no new
//! program to install and find at run time, no exec between the shim and the command
//! (so opening stays a `clone` and an `exec`, as without a sandbox), and the command stays
//! the shim's own child, so the shim reaps it and reports its status as for any session.
//!
//! Three processes take part, all started from the shim, which itself enters none of the
//! namespaces:
//! - **the builder**: cloned by the shim (sharing its memory, `CLONE_VFORK`) into new
//!   user, mount, IPC and UTS namespaces. It maps the service's user to itself (root
//!   stays uid 0, a user stays its uid; setgroups is denied), builds the mount tree, asks
//!   for a new PID namespace for its children, starts the two below with `CLONE_PARENT`
//!   (so both are the shim's children, never its own) and exits.
//! - **the init**: pid 1 of the new PID namespace, a plain fork of the builder. A PID
//!   namespace's init ignores every signal it has no handler for and inherits every orphan;
//!   were the command pid 1, Ctrl-C would not stop `cat`. So our init does nothing but reap
//!   orphans, with every capability dropped, not dumpable, outside the Landlock domain (so
//!   the sandbox can neither trace nor signal it), and exits once the command is gone and
//!   nothing is left below it. It dies with the shim (`PR_SET_PDEATHSIG`), and when it
//!   dies the kernel kills everything in the namespace: the whole tree goes with it.
//! - **the command**: pid 2, in its own process group, the terminal's foreground group
//!   (input-wait settling reads it from the outside, by its pid outside); it mounts the
//!   fresh `/proc` (only a process inside the PID namespace can), drops every capability,
//!   then the Landlock ruleset and the seccomp filters ([`confine`](crate::confine)).
//!
//! The mount tree (a copy of the service's, private, so nothing propagates back):
//! - `/` and everything below it read-only, `nosuid`, `nodev` (a `chmod`, `chown`,
//!   `utime`, `setxattr` or `chattr` of a file outside the writable paths fails with
//!   `EROFS` before Landlock, which does not cover them, is even asked);
//! - the writable paths (the working directory and `sandboxWritable`, `workspace` mode
//!   only) bound back as they were (taken before the rest became read-only);
//! - `/tmp`: an empty tmpfs of the session's own (read-only in `read-only` mode), so no
//!   session sees another's files, nor the user's sockets there (tmux, ssh-agent);
//! - `/run`: an empty read-only tmpfs (the user's runtime directory and its sockets, the
//!   Docker socket, the persist server's), with the directory `/etc/resolv.conf` links
//!   into bound back, read-only, when the network is on;
//! - `/dev`: a read-only tmpfs with `null`, `zero`, `full`, `random`, `urandom`, `tty` and
//!   the session's own `pts` bound from the service's, the `fd`, `stdin`, `stdout`,
//!   `stderr` links and an empty `shm` (where a `sandboxWritable` `/dev/shm` is bound). No `ptmx`: a nested terminal would need a devpts of its own, on which
//!   the session's own terminal has no name (`tty` and `ttyname` would fail), and a
//!   terminal server in the sandbox is one more thing that outlives its command; no other
//!   terminal, disk or console exists there;
//! - `/proc`: a fresh proc of the new PID namespace, read-only;
//! - the hidden paths (`sandbox_hidden`: the server's token files, its recordings, and
//!   what the user adds) covered last, over everything above: a directory by an empty
//!   read-only tmpfs, a file by a bind of `/dev/null` that cannot be opened (`nodev`).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::Sandbox;
use crate::confine::Stage;
use crate::sandbox::Policy;

/// What a path brought into the sandbox is there for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A device node of the sandbox's `/dev` (keeps `dev`; must exist).
    Device,
    /// A path the session may write (`nodev`; left out if missing).
    Writable,
    /// The working directory of a `read-only` session, bound read-only (left out if
    /// missing).
    ReadOnly,
}

/// One path of the service's tree brought into the sandbox's, at the same place.
struct Bind {
    path: CString,
    /// Its ancestors below `/`, shortest first: created where a tmpfs of ours covers them.
    parents: Vec<CString>,
    dir: bool,
    kind: Kind,
}

/// A path of the service's tree the sandbox does not see (see the module's doc).
struct Hide {
    path: CString,
    dir: bool,
}

/// Everything the builder needs, made by the shim before the clone: the builder shares
/// the shim's memory and only makes syscalls.
pub(crate) struct Plan {
    /// The working directory, entered again once the tree is built: the shim's was taken
    /// into the new namespace as it was, under the mounts made since.
    cwd: CString,
    /// The Landlock rights on the session's `/tmp` (0: none, `read-only` mode).
    temp_rule: u64,
    uid_map: CString,
    gid_map: CString,
    binds: Vec<Bind>,
    /// Covered after the binds, so that a hidden path inside a writable one stays hidden.
    hidden: Vec<Hide>,
    /// One per bind: the detached copy of its tree, filled in by the builder.
    trees: Vec<i32>,
    read_only: bool,
    /// The highest capability number this kernel knows.
    last_cap: i32,
    builder_stack: Vec<u8>,
}

/// The namespaces the builder is cloned into (the PID namespace comes after, for its
/// children only).
const NAMESPACES: i32 =
    libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;

/// The device nodes of the sandbox's `/dev`, besides the session's terminal.
const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// The resolver's configuration, which on many machines links into `/run`
/// (systemd-resolved's `/run/systemd/resolve`, NetworkManager's, resolvconf's): the
/// directory it links into is bound back, read-only, when the network is on.
const RESOLV_CONF: &str = "/etc/resolv.conf";

impl Plan {
    /// The plan of `policy`, whose terminal is `terminal` (`/dev/pts/N`).
    pub(crate) fn new(policy: &Policy, terminal: Option<&Path>) -> Plan {
        let mut paths: Vec<(PathBuf, Kind)> = DEVICES
            .iter()
            .map(|device| (PathBuf::from(device), Kind::Device))
            .collect();
        paths.extend(terminal.map(|terminal| (terminal.to_path_buf(), Kind::Device)));
        if policy.mode == Sandbox::Workspace {
            paths.extend((policy.writable.iter()).map(|path| (path.clone(), Kind::Writable)));
        } else if let Ok(cwd) = std::env::current_dir() {
            // The working directory stays where it is, to read, even under `/tmp`.
            paths.push((cwd, Kind::ReadOnly));
        }
        if policy.network
            && let Ok(target) = std::fs::canonicalize(RESOLV_CONF)
            && target.starts_with("/run")
            && let Some(dir) = target.parent()
        {
            // Read-only like the rest of `/run` was: it is there to be read.
            paths.push((dir.to_path_buf(), Kind::ReadOnly));
        }
        // `/` itself is already there (and a mount on it is never looked up).
        paths.retain(|(path, ..)| path.parent().is_some());
        // Parents before children: a writable path inside another is bound on top of it.
        paths.sort_by_key(|(path, ..)| path.components().count());
        let binds: Vec<Bind> = paths
            .into_iter()
            .filter_map(|(path, kind)| {
                let dir = std::fs::metadata(&path).is_ok_and(|meta| meta.is_dir());
                let parents = path
                    .ancestors()
                    .skip(1)
                    .filter(|parent| parent.parent().is_some())
                    .filter_map(cstring)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                Some(Bind {
                    path: cstring(&path)?,
                    parents,
                    dir,
                    kind,
                })
            })
            .collect();
        // As the kernel resolves them: a mount covers the place a link leads to, not the
        // link. A path that does not exist is left out (there is nothing to see).
        let hidden = (policy.hidden.iter())
            .filter_map(|path| std::fs::canonicalize(path).ok())
            .filter(|path| path.parent().is_some())
            .filter_map(|path| {
                Some(Hide {
                    dir: path.is_dir(),
                    path: cstring(&path)?,
                })
            })
            .collect();
        // SAFETY: these calls take no arguments and cannot fail.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let last_cap = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(63);
        let cwd = std::env::current_dir()
            .ok()
            .and_then(|cwd| cstring(&cwd))
            .unwrap_or_default();
        let temp_rule = if policy.mode == Sandbox::Workspace {
            crate::confine::writable_access()
        } else {
            0
        };
        Plan {
            cwd,
            temp_rule,
            uid_map: CString::new(format!("{uid} {uid} 1\n")).unwrap_or_default(),
            gid_map: CString::new(format!("{gid} {gid} 1\n")).unwrap_or_default(),
            trees: vec![-1; binds.len()],
            binds,
            hidden,
            read_only: policy.mode == Sandbox::ReadOnly,
            last_cap,
            builder_stack: vec![0u8; 64 * 1024],
        }
    }

    /// The highest capability number, for [`drop_capabilities`].
    pub(crate) fn last_cap(&self) -> i32 {
        self.last_cap
    }

    /// The Landlock rights the command gives its own `/tmp` (0: none).
    pub(crate) fn temp_rule(&self) -> u64 {
        self.temp_rule
    }
}

fn cstring(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

/// What the builder is handed, and what it hands back.
struct Builder {
    plan: *mut Plan,
    command: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    argument: *mut libc::c_void,
    /// The top of the command's stack.
    stack: *mut libc::c_void,
    /// The command's pid (in the shim's PID namespace), once started.
    pid: i32,
    stage: i64,
    errno: i32,
}

/// Starts `command(argument)` on `stack` in the sandbox's namespaces, as the shim's child;
/// returns its pid, or where the setup failed and the errno.
///
/// # Safety
/// As [`libc::clone`] with `CLONE_VM | CLONE_VFORK`: only in the single-threaded shim
/// without signal handlers; `plan`, `argument` and `stack` stay valid until this returns
/// (the builder and the command run on the shim's memory until the command exec'd).
pub(crate) unsafe fn spawn(
    plan: &mut Plan,
    command: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    argument: *mut libc::c_void,
    stack: *mut libc::c_void,
) -> Result<i32, (Stage, i32)> {
    let top = plan.builder_stack.as_mut_ptr_range().end as usize & !15;
    let mut builder = Builder {
        plan,
        command,
        argument,
        stack,
        pid: -1,
        stage: 0,
        errno: 0,
    };
    // SAFETY: the builder runs `build` on its own stack with a pointer to `builder`, both
    // alive until it exits, which is when `clone` returns (CLONE_VFORK); the caller keeps
    // the rest alive.
    let pid = unsafe {
        libc::clone(
            build,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | NAMESPACES | libc::SIGCHLD,
            (&raw mut builder).cast(),
        )
    };
    if pid < 0 {
        return Err((Stage::Namespaces, crate::shim::errno()));
    }
    // SAFETY: waitpid on the builder, our child, which has exited (CLONE_VFORK); then
    // volatile reads of what it wrote into `builder`, which the compiler cannot see.
    unsafe {
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
        let stage = std::ptr::read_volatile(&raw const builder.stage);
        if let Some(stage) = Stage::from_code(stage) {
            return Err((stage, std::ptr::read_volatile(&raw const builder.errno)));
        }
        Ok(std::ptr::read_volatile(&raw const builder.pid))
    }
}

/// The builder: identity, mounts, the PID namespace, the init, the command.
extern "C" fn build(argument: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `argument` is the shim's `Builder`, alive while this child runs; the plan it
    // points to too. Everything below is a syscall or a read of that memory.
    unsafe {
        let builder = argument.cast::<Builder>();
        let plan = &mut *(*builder).plan;
        let fail = |stage: Stage| fail(builder, stage);
        if !identity(plan) {
            fail(Stage::Identity);
        }
        if !mounts(plan) {
            fail(Stage::Mounts);
        }
        // Into the working directory as the new tree has it (the bound-back one); if it is
        // hidden there, the command keeps the old one, still readable by relative paths.
        libc::chdir(plan.cwd.as_ptr());
        // Our children (not we) go into a new PID namespace: the init first, as pid 1.
        if libc::unshare(libc::CLONE_NEWPID) != 0 {
            fail(Stage::Namespaces);
        }
        // The init reads this pipe to its end: every copy of the write end is closed once
        // the command exec'd (close-on-exec) and the builder exited.
        let mut pipe = [-1; 2];
        if libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            fail(Stage::Namespaces);
        }
        // The init's name from its first instant (it is the builder's, inherited; the
        // command's is its program's from exec on).
        libc::prctl(libc::PR_SET_NAME, c"pty-init".as_ptr(), 0, 0, 0);
        let init = libc::syscall(
            libc::SYS_clone,
            libc::CLONE_PARENT | libc::SIGCHLD,
            0usize,
            0usize,
            0usize,
            0usize,
        );
        if init == 0 {
            run_init(pipe[0], plan.last_cap);
        }
        if init < 0 {
            fail(Stage::Namespaces);
        }
        libc::close(pipe[0]);
        let pid = libc::clone(
            (*builder).command,
            (*builder).stack,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PARENT | libc::SIGCHLD,
            (*builder).argument,
        );
        if pid < 0 {
            fail(Stage::Namespaces);
        }
        std::ptr::write_volatile(&raw mut (*builder).pid, pid);
        libc::_exit(0)
    }
}

/// Ends the builder, telling the shim where it failed (and the errno).
///
/// # Safety
/// In the builder only, with the shim's `Builder`.
unsafe fn fail(builder: *mut Builder, stage: Stage) -> ! {
    // SAFETY: the caller's `Builder` is alive while the builder runs.
    unsafe {
        let errno = crate::shim::errno();
        std::ptr::write_volatile(&raw mut (*builder).errno, errno);
        std::ptr::write_volatile(&raw mut (*builder).stage, stage as i64);
        libc::_exit(1)
    }
}

/// Writes `data` to the file `path`; true if all of it went.
///
/// # Safety
/// Syscalls only; `path` and `data` are valid.
unsafe fn write_file(path: &std::ffi::CStr, data: &[u8]) -> bool {
    // SAFETY: the caller's pointers are valid; the descriptor is ours and closed.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let written = libc::write(fd, data.as_ptr().cast(), data.len());
        libc::close(fd);
        written == data.len() as isize
    }
}

/// Maps the service's user and group to themselves in the new user namespace.
///
/// # Safety
/// In the builder only (syscalls on its own `/proc/self`).
unsafe fn identity(plan: &Plan) -> bool {
    // SAFETY: static paths and the plan's strings.
    unsafe {
        // Denied first: an unprivileged user may map its group only so, and no process of
        // the sandbox may then drop a supplementary group to pass a "not this group" rule.
        write_file(c"/proc/self/setgroups", b"deny")
            && write_file(c"/proc/self/uid_map", plan.uid_map.as_bytes())
            && write_file(c"/proc/self/gid_map", plan.gid_map.as_bytes())
    }
}

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    set: u64,
    clear: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_NOEXEC: u64 = 0x8;
const OPEN_TREE_CLONE: u32 = 0x1;
const MOVE_MOUNT_F_EMPTY_PATH: u32 = 0x4;

/// `mount_setattr(dirfd, path, flags, {set})`.
///
/// # Safety
/// Syscall only; `path` is valid.
unsafe fn set_attr(dirfd: i32, path: &std::ffi::CStr, flags: i32, set: u64) -> bool {
    let attr = MountAttr {
        set,
        clear: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: a valid path and a `mount_attr` of the size passed.
    unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path.as_ptr(),
            flags as u32,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        ) == 0
    }
}

/// `mount(2)` of a tmpfs on `target` with `options`.
///
/// # Safety
/// Syscall only.
unsafe fn tmpfs(target: &std::ffi::CStr, options: &std::ffi::CStr) -> bool {
    // SAFETY: static C strings.
    unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr().cast(),
        ) == 0
    }
}

/// Builds the sandbox's mount tree (see the module's doc).
///
/// # Safety
/// In the builder only, in its new mount namespace.
unsafe fn mounts(plan: &mut Plan) -> bool {
    // SAFETY: syscalls on paths of the plan or static strings, in our own namespace.
    unsafe {
        // Nothing we do here reaches the service's namespace, nor the other way round.
        if libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return false;
        }
        // Copies of what is brought back, taken while it is still as the service sees it.
        for (bind, tree) in plan.binds.iter().zip(plan.trees.iter_mut()) {
            let fd = libc::syscall(
                libc::SYS_open_tree,
                libc::AT_FDCWD,
                bind.path.as_ptr(),
                OPEN_TREE_CLONE | libc::O_CLOEXEC as u32 | libc::AT_RECURSIVE as u32,
            ) as i32;
            if fd < 0 {
                if bind.kind != Kind::Device && crate::shim::errno() == libc::ENOENT {
                    continue;
                }
                return false;
            }
            *tree = fd;
            let set = match bind.kind {
                Kind::Device => MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
                Kind::Writable => MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                Kind::ReadOnly => MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_RDONLY,
            };
            if !set_attr(fd, c"", libc::AT_EMPTY_PATH | libc::AT_RECURSIVE, set) {
                return false;
            }
        }
        if !set_attr(
            libc::AT_FDCWD,
            c"/",
            libc::AT_RECURSIVE,
            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        ) {
            return false;
        }
        if !(tmpfs(c"/tmp", c"mode=1777")
            && tmpfs(c"/run", c"mode=0755")
            && tmpfs(c"/dev", c"mode=0755"))
        {
            return false;
        }
        for dir in [c"/dev/pts", c"/dev/shm"] {
            libc::mkdir(dir.as_ptr(), 0o755);
        }
        for (target, link) in [
            (c"/proc/self/fd", c"/dev/fd"),
            (c"/proc/self/fd/0", c"/dev/stdin"),
            (c"/proc/self/fd/1", c"/dev/stdout"),
            (c"/proc/self/fd/2", c"/dev/stderr"),
        ] {
            libc::symlink(target.as_ptr(), link.as_ptr());
        }
        for (bind, &tree) in plan.binds.iter().zip(plan.trees.iter()) {
            if tree < 0 {
                continue;
            }
            // Where a tmpfs of ours covers the place, it is made; elsewhere it exists
            // (and the read-only tree refuses to make anything, which is fine).
            for parent in &bind.parents {
                libc::mkdir(parent.as_ptr(), 0o755);
            }
            if bind.dir {
                libc::mkdir(bind.path.as_ptr(), 0o755);
            } else {
                let fd = libc::open(
                    bind.path.as_ptr(),
                    libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                    0o600,
                );
                if fd >= 0 {
                    libc::close(fd);
                }
            }
            let moved = libc::syscall(
                libc::SYS_move_mount,
                tree,
                c"".as_ptr(),
                libc::AT_FDCWD,
                bind.path.as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH,
            );
            libc::close(tree);
            if moved != 0 {
                return false;
            }
        }
        plan.hidden.iter().all(|hide| cover(hide))
            && filled_read_only(plan.read_only)
                .all(|path| set_attr(libc::AT_FDCWD, path, 0, MOUNT_ATTR_RDONLY))
    }
}

/// Covers a hidden path: a directory by an empty read-only tmpfs, a file by `/dev/null`
/// on a `nodev` mount, so that opening it fails. A path that is not there in the new tree
/// (under one of our tmpfs mounts) is hidden already.
///
/// # Safety
/// In the builder only, in its new mount namespace, once `/dev` is filled.
unsafe fn cover(hide: &Hide) -> bool {
    // SAFETY: syscalls on the plan's strings and static ones.
    unsafe {
        let covered = if hide.dir {
            tmpfs(&hide.path, c"mode=0555,size=4k")
        } else {
            libc::mount(
                c"/dev/null".as_ptr(),
                hide.path.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            ) == 0
        };
        if !covered {
            return crate::shim::errno() == libc::ENOENT;
        }
        set_attr(
            libc::AT_FDCWD,
            &hide.path,
            0,
            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
        )
    }
}

/// The tmpfs mounts made read-only once filled: `/dev` and `/run`, and `/tmp` in
/// `read-only` mode.
fn filled_read_only(read_only: bool) -> impl Iterator<Item = &'static std::ffi::CStr> {
    [c"/dev", c"/run"]
        .into_iter()
        .chain(read_only.then_some(c"/tmp"))
}

/// In the command, inside the namespaces, before the Landlock ruleset and the seccomp
/// filters: mounts the fresh `/proc` (only a process of the new PID namespace can) and
/// drops every capability.
///
/// # Safety
/// In the command's child only, before exec; syscalls only.
pub(crate) unsafe fn enter(last_cap: i32, ruleset: i32, temp_rule: u64) -> Result<(), Stage> {
    // SAFETY: static strings, a local attribute; the calls change only this process and
    // its ruleset.
    unsafe {
        // The session's `/tmp` exists only here, so its rule is added here: a rule on the
        // service's `/tmp` would not count, Landlock ignoring a covered mount point.
        if temp_rule != 0 {
            #[repr(C, packed)]
            struct PathBeneath {
                allowed_access: u64,
                parent_fd: i32,
            }
            let fd = libc::open(
                c"/tmp".as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            );
            if fd < 0 {
                return Err(Stage::Mounts);
            }
            let rule = PathBeneath {
                allowed_access: temp_rule,
                parent_fd: fd,
            };
            const LANDLOCK_RULE_PATH_BENEATH: i32 = 1;
            let added = libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset,
                LANDLOCK_RULE_PATH_BENEATH,
                &raw const rule,
                0u32,
            );
            libc::close(fd);
            if added != 0 {
                return Err(Stage::Ruleset);
            }
        }
        if libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY,
            std::ptr::null(),
        ) != 0
        {
            return Err(Stage::Proc);
        }
        if !drop_capabilities(last_cap) {
            return Err(Stage::Capabilities);
        }
    }
    Ok(())
}

/// Drops every capability for good: the bounding set (so no exec can give one back), the
/// ambient set, then the effective, permitted and inheritable sets, with the securebits
/// that keep uid 0 from getting them back at exec (`SECBIT_NOROOT`), locked.
///
/// # Safety
/// Syscalls only, on the calling process.
unsafe fn drop_capabilities(last_cap: i32) -> bool {
    // SAFETY: prctl and capset take integers and pointers to locals.
    unsafe {
        for cap in 0..=last_cap {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0
                && crate::shim::errno() != libc::EINVAL
            {
                return false;
            }
        }
        if libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        ) != 0
        {
            return false;
        }
        // NOROOT, NO_SETUID_FIXUP and NO_CAP_AMBIENT_RAISE, each locked, and KEEP_CAPS
        // locked off.
        const SECUREBITS: libc::c_ulong = 0b1110_1111;
        if libc::prctl(libc::PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0) != 0 {
            return false;
        }
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        let header = Header {
            version: 0x2008_0522,
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        libc::syscall(libc::SYS_capset, &raw const header, data.as_ptr()) == 0
    }
}

/// The init: pid 1 of the sandbox's PID namespace. Reaps orphans until the command (pid 2)
/// is gone and nothing is left below it, then exits.
///
/// # Safety
/// In the init only, a fresh fork of the builder; `pipe` is the read end of its pipe.
unsafe fn run_init(pipe: i32, last_cap: i32) -> ! {
    // SAFETY: syscalls on this process and its own descriptors.
    unsafe {
        // Hold nothing of the shim's: not the terminal (the service would never see its
        // end), not the control socket.
        if pipe > 0 {
            libc::close_range(0, pipe as u32 - 1, 0);
        }
        libc::close_range(pipe as u32 + 1, u32::MAX, 0);
        libc::chdir(c"/".as_ptr());
        // With the shim goes the init, and with the init the whole namespace.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        drop_capabilities(last_cap);
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        let mut byte = [0u8; 1];
        loop {
            let n = libc::read(pipe, byte.as_mut_ptr().cast(), 1);
            if n == 0 || (n < 0 && crate::shim::errno() != libc::EINTR) {
                break;
            }
        }
        libc::close(pipe);
        // The command is the second process of the namespace. Gone already (it failed to
        // exec, or was quick): -1, and the loop ends once the orphans are reaped.
        let command = libc::syscall(libc::SYS_pidfd_open, 2, 0) as i32;
        // SIGCHLD is blocked (the shim's mask): it is read from a signalfd.
        let mut mask: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut mask);
        libc::sigaddset(&mut mask, libc::SIGCHLD);
        libc::sigprocmask(libc::SIG_BLOCK, &mask, std::ptr::null_mut());
        let signals = libc::signalfd(-1, &mask, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
        let mut command_done = command < 0;
        loop {
            let mut children = true;
            loop {
                let pid = libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG | libc::__WALL);
                if pid > 0 {
                    continue;
                }
                if pid < 0 && crate::shim::errno() == libc::ECHILD {
                    children = false;
                }
                break;
            }
            let mut fds = [
                libc::pollfd {
                    fd: signals,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: if command_done { -1 } else { command },
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            if !command_done && libc::poll(fds[1..].as_mut_ptr(), 1, 0) > 0 {
                command_done = true;
                fds[1].fd = -1;
            }
            if command_done && !children {
                libc::_exit(0);
            }
            fds[1].revents = 0;
            libc::poll(fds.as_mut_ptr(), 2, -1);
            let mut info = [0u8; 128];
            while libc::read(signals, info.as_mut_ptr().cast(), info.len()) > 0 {}
        }
    }
}
