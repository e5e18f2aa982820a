//! What the bench reads from the machine: its own memory and threads, whether a pid
//! lives, the interpreter behind a `python3` shim, and a description of the machine.

use std::path::Path;

/// A field of `/proc/self/status` in its unit (kB for `Vm*`), 0 if absent.
pub fn status_field(name: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// This process's resident set now, in KiB.
pub fn rss_kib() -> u64 {
    status_field("VmRSS")
}

/// Process `pid`'s proportional set size (its pages, shared ones divided among their
/// sharers), in KiB; 0 if it is gone.
pub fn pss_kib(pid: i32) -> u64 {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    rollup
        .lines()
        .find_map(|line| line.strip_prefix("Pss:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// This process's peak resident set, in KiB.
pub fn hwm_kib() -> u64 {
    status_field("VmHWM")
}

/// CPU seconds (user + system) this process has used so far, its threads included.
pub fn cpu_secs() -> f64 {
    rusage(libc::RUSAGE_SELF)
}

/// CPU seconds (user + system) the calling thread has used so far.
pub fn thread_cpu_secs() -> f64 {
    rusage(libc::RUSAGE_THREAD)
}

fn rusage(who: libc::c_int) -> f64 {
    // SAFETY: getrusage fills the struct it is given; zeroed is a valid rusage.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one `rusage` through the pointer, to a live local.
    if unsafe { libc::getrusage(who, &mut usage) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// Reads `/proc/N/stat` of every process, as the library does to find a process group's
/// members; returns how many it read.
pub fn scan_proc_stats() -> usize {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter(|entry| std::fs::read_to_string(entry.path().join("stat")).is_ok())
        .count()
}

/// KiB as MiB.
pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Raises the soft limit of open files to the hard one: every session holds a few.
pub fn raise_nofile() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let raised = Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    let _ = setrlimit(Resource::Nofile, raised);
}

/// The real python interpreter: `python3` on PATH may be a pyenv shim (a bash script),
/// which would add a bash start to every open and put bash in the foreground group.
pub fn python() -> String {
    std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .filter(|path| !path.is_empty())
        .unwrap_or_else(|| "python3".to_owned())
}

/// Whether `program` is on PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| is_executable(&dir.join(program)))
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `2 × AMD EPYC, Linux 6.18.44, load 1.2`: what the figures were measured on.
pub fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("model name")?.split_once(':'))
        .map_or("unknown CPU".to_owned(), |(_, model)| {
            model.trim().to_owned()
        });
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load.split_whitespace().next().unwrap_or("?");
    format!(
        "{cpus} × {model}, Linux {}, load average {load} at the start",
        kernel.trim()
    )
}

pub use pty_session_testkit::alive;
