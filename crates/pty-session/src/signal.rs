//! Signal names for exit statuses (`"SIGKILL"`), without a crate for a table.

/// The conventional name of signal `number` on Linux, or `SIG<number>` when it has none.
pub(crate) fn name(number: i32) -> String {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    usize::try_from(number)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| NAMES.get(i))
        .map_or_else(|| format!("SIG{number}"), |name| (*name).to_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_match_the_kernel_numbers() {
        assert_eq!(super::name(libc::SIGKILL), "SIGKILL");
        assert_eq!(super::name(libc::SIGTERM), "SIGTERM");
        assert_eq!(super::name(libc::SIGSYS), "SIGSYS");
        assert_eq!(super::name(64), "SIG64");
    }
}
