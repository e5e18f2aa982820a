//! The pseudo-terminal pair: opening it with a window size and echo setting, and the few
//! questions the core asks of the master side.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
use rustix::termios::{self, LocalModes, OptionalActions, Winsize};

/// A freshly opened PTY pair. The parent must drop `slave` right after spawning, or the
/// master never reports the end of output.
pub(crate) struct PtyPair {
    /// The service's side: non-blocking, close-on-exec.
    pub(crate) master: OwnedFd,
    /// The program's side, close-on-exec (the spawn dups it onto the child's stdio).
    pub(crate) slave: OwnedFd,
}

/// Opens a PTY pair with the window `cols`×`rows`. With `echo` false, the terminal does
/// not echo input. The pair is opened close-on-exec atomically (O_CLOEXEC + TIOCGPTPEER on
/// Linux), so a concurrent spawn in another session can never inherit it.
pub(crate) fn open(cols: u16, rows: u16, echo: bool) -> io::Result<PtyPair> {
    let winsize = Winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pair = rustix_openpty::openpty(None, Some(&winsize))?;
    let mut modes = termios::tcgetattr(&pair.user)?;
    // IUTF8 lets the line discipline erase a whole UTF-8 character on backspace.
    modes.input_modes |= termios::InputModes::IUTF8;
    if !echo {
        modes.local_modes &= !(LocalModes::ECHO | LocalModes::ECHONL);
    }
    termios::tcsetattr(&pair.user, OptionalActions::Now, &modes)?;
    let flags = fcntl_getfl(&pair.controller)?;
    fcntl_setfl(&pair.controller, flags | OFlags::NONBLOCK)?;
    Ok(PtyPair {
        master: pair.controller,
        slave: pair.user,
    })
}

/// Sets the window size: the kernel sends SIGWINCH to the terminal's foreground group.
pub(crate) fn resize(master: impl AsFd, cols: u16, rows: u16) -> io::Result<()> {
    let winsize = Winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    Ok(termios::tcsetwinsize(master, winsize)?)
}

/// The foreground process group of the terminal, asked through the master (Linux answers
/// TIOCGPGRP on the master for its slave).
pub(crate) fn foreground_group(master: impl AsFd) -> Option<i32> {
    termios::tcgetpgrp(master)
        .ok()
        .map(|pid| pid.as_raw_nonzero().get())
}

/// The name of the terminal's slave side (`/dev/pts/3`), as `/proc/PID/fd/N` shows a
/// descriptor of it.
pub(crate) fn terminal_name(master: impl AsFd) -> Option<String> {
    let name = rustix::pty::ptsname(master, Vec::new()).ok()?;
    name.into_string().ok()
}

/// Whether output waits on the master, unread by the service, including output still on
/// its way: like input (see [`input_unread`]), what the program writes reaches the
/// master's line discipline through a kernel worker, and a poll finishes that hand-over
/// first, where FIONREAD would answer 0 while the bytes are in flight.
pub(crate) fn output_unread(master: impl AsFd) -> bool {
    readable_now(master).unwrap_or(false)
}

/// Whether input waits in the terminal, unread by the program: a complete line in canonical
/// mode, any byte otherwise. `None` when the slave cannot be opened.
///
/// The kernel hands bytes written to the master over to the slave's line discipline in a
/// worker thread, so for a moment after a write they are neither readable by the program
/// nor visible from the master; under load that moment grows to milliseconds. The line
/// discipline's poll first finishes that hand-over, so asking it through a fresh
/// descriptor of the slave (TIOCGPTPEER: no path, never a controlling terminal) sees
/// input still on its way too.
pub(crate) fn input_unread(master: impl AsFd) -> Option<bool> {
    use rustix::pty::OpenptFlags;
    let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
    let slave = rustix::pty::ioctl_tiocgptpeer(master, flags).ok()?;
    readable_now(&slave).ok()
}

/// Polls `fd` for reading without waiting.
fn readable_now(fd: impl AsFd) -> io::Result<bool> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    poll(&mut fds, Some(&now))?;
    Ok(fds[0].revents().contains(PollFlags::IN))
}

/// Writes as much of `data` as the terminal takes now, without blocking.
pub(crate) fn write_some(master: impl AsFd, data: &[u8]) -> io::Result<usize> {
    Ok(rustix::io::write(master, data)?)
}

/// Reads what is there now, without blocking. `Ok(0)` means the end of output: every
/// holder of the slave closed it (Linux answers EIO then, other systems 0).
pub(crate) fn read_some(master: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    match rustix::io::read(master, buf) {
        Ok(n) => Ok(n),
        Err(rustix::io::Errno::IO) => Ok(0),
        Err(err) => Err(err.into()),
    }
}

/// Puts a descriptor (the master, a timer) on tokio's reactor.
pub(crate) fn register(fd: OwnedFd) -> io::Result<tokio::io::unix::AsyncFd<OwnedFd>> {
    // SAFETY: an `OwnedFd` owns its descriptor: it stays open and the same until the
    // `AsyncFd` (which now owns the `OwnedFd`) drops it.
    unsafe { tokio::io::unix::AsyncFd::register(fd) }.map_err(|err| err.into_parts().1)
}
