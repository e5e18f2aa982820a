//! A process's own children, found without opening a file or allocating.
//!
//! The shim and the spawner kill what is below them, and a session can lower their limits
//! (`prlimit --pid $PPID --nofile=0:0`, `--as=...`): then no `open` succeeds, not even
//! of `/proc/<pid>/stat`, and a scan that needs one finds nothing. So each opens `/proc`
//! once, while it still can, and keeps it: listing a directory already open needs no new
//! descriptor (`getdents64` into a buffer on the stack), and `waitid` with `WNOWAIT`
//! tells of any pid, without touching it, whether it is the caller's child. A subreaper
//! that kills its children over and over gets every descendant this way: each one killed
//! hands its own children to the subreaper.

use std::os::fd::{AsRawFd as _, OwnedFd};

/// `/proc`, opened while the process still could.
pub(crate) struct ProcDir(OwnedFd);

impl ProcDir {
    /// Opens `/proc` (close-on-exec: no command ever inherits it).
    pub(crate) fn open() -> Option<ProcDir> {
        use rustix::fs::{Mode, OFlags};
        rustix::fs::open(
            "/proc",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()
        .map(ProcDir)
    }

    /// Calls `each` with every child of this process that exists now (zombies included),
    /// and returns how many there were, or `None` if `/proc` could not be listed.
    ///
    /// One `waitid` per process on the machine: a few milliseconds with thousands.
    pub(crate) fn for_each_child(&self, mut each: impl FnMut(i32)) -> Option<usize> {
        let fd = self.0.as_raw_fd();
        // SAFETY: lseek takes integers; `fd` is our open directory.
        if unsafe { libc::lseek(fd, 0, libc::SEEK_SET) } < 0 {
            return None;
        }
        // `linux_dirent64` records are 8-byte aligned within the buffer.
        #[repr(C, align(8))]
        struct Buffer([u8; 8192]);
        let mut buf = Buffer([0; 8192]);
        let mut found = 0;
        loop {
            // SAFETY: getdents64 writes at most `len` bytes into our buffer.
            let n =
                unsafe { libc::syscall(libc::SYS_getdents64, fd, buf.0.as_mut_ptr(), buf.0.len()) };
            if n < 0 {
                return None;
            }
            if n == 0 {
                return Some(found);
            }
            let mut at = 0usize;
            while at + 19 < n as usize {
                // d_ino (8), d_off (8), d_reclen (2), d_type (1), then the NUL-ended name.
                let reclen = u16::from_ne_bytes([buf.0[at + 16], buf.0[at + 17]]) as usize;
                if reclen == 0 {
                    break;
                }
                let name = &buf.0[at + 19..(at + reclen).min(n as usize)];
                let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
                if let Some(pid) = parse_pid(name)
                    && is_child(pid)
                {
                    found += 1;
                    each(pid);
                }
                at += reclen;
            }
        }
    }
}

/// A `/proc` entry's name as a pid, if it is one.
fn parse_pid(name: &[u8]) -> Option<i32> {
    if name.is_empty() || name.len() > 10 || !name.iter().all(u8::is_ascii_digit) {
        return None;
    }
    name.iter()
        .try_fold(0i32, |n, &b| {
            n.checked_mul(10)?.checked_add(i32::from(b - b'0'))
        })
        .filter(|&pid| pid > 0)
}

/// Whether `pid` is a child of this process: `waitid` answers ECHILD for any other pid,
/// and with `WNOWAIT | WNOHANG` it neither reaps nor waits.
fn is_child(pid: i32) -> bool {
    // SAFETY: `siginfo_t` is plain data; waitid writes into our local and reaps nothing
    // (WNOWAIT).
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WSTOPPED | libc::WCONTINUED | libc::WNOHANG | libc::WNOWAIT,
        ) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_are_read_from_names() {
        assert_eq!(parse_pid(b"1"), Some(1));
        assert_eq!(parse_pid(b"4194304"), Some(4_194_304));
        for name in [&b""[..], b"self", b"0", b"12a", b"99999999999", b"-1"] {
            assert_eq!(parse_pid(name), None, "{name:?}");
        }
    }

    #[test]
    fn a_child_is_found_and_a_stranger_is_not() {
        let proc = ProcDir::open().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let mut seen = Vec::new();
        assert!(proc.for_each_child(|p| seen.push(p)).unwrap() >= 1);
        assert!(seen.contains(&pid), "{seen:?} lacks {pid}");
        assert!(!seen.contains(&1), "init is no child of ours");
        child.kill().unwrap();
        child.wait().unwrap();
        let mut seen = Vec::new();
        proc.for_each_child(|p| seen.push(p)).unwrap();
        assert!(!seen.contains(&pid), "a reaped child is gone");
    }
}
