//! The pseudo-terminal pair: opening it with a window size and echo setting, and the few
//! questions the core asks of the master side.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

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

/// The foreground process group of the terminal, asked through the master (Linux answers
/// TIOCGPGRP on the master for its slave).
pub(crate) fn foreground_group(master: impl AsFd) -> Option<i32> {
    termios::tcgetpgrp(master)
        .ok()
        .map(|pid| pid.as_raw_nonzero().get())
}

/// Whether output the program wrote waits to be read, including output still on its way
/// through the kernel.
///
/// A write to the slave reaches the master's read queue through a work item of the tty
/// layer, which runs later (under load, milliseconds later): FIONREAD does not see it yet,
/// so a program could look idle with its last output in flight. Polling the master runs
/// that work first (`n_tty_poll` flushes the port's buffer when nothing is readable), so
/// everything written before this call counts. It reads nothing: the drain still gets all.
pub(crate) fn output_pending(master: impl AsFd) -> bool {
    let mut fd = libc::pollfd {
        fd: master.as_fd().as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for a descriptor the caller keeps open; zero timeout.
    let ready = unsafe { libc::poll(&mut fd, 1, 0) };
    ready > 0 && fd.revents & libc::POLLIN != 0
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

/// Puts the master on tokio's reactor.
pub(crate) fn register(master: OwnedFd) -> io::Result<tokio::io::unix::AsyncFd<OwnedFd>> {
    // SAFETY: an `OwnedFd` owns its descriptor: it stays open and the same until the
    // `AsyncFd` (which now owns the `OwnedFd`) drops it.
    unsafe { tokio::io::unix::AsyncFd::register(master) }.map_err(|err| err.into_parts().1)
}
