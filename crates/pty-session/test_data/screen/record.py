#!/usr/bin/env python3
"""Records the raw PTY output of a full-screen program for the screen's replay tests.

usage: record_screen.py OUT.raw KEYS_FILE -- PROGRAM ARGS...

The window is 120x40. Each line of KEYS_FILE is typed once the output has been quiet for
0.5 s; Python escapes in it are decoded ("\\x1b" is Escape, "\\r" Enter). A line
"sleep N" waits N seconds, recording. The recording ends 0.5 s after the last line, or
when the program exits.
"""
import fcntl, os, pty, select, struct, sys, termios, time

def main():
    out_path, keys_path = sys.argv[1], sys.argv[2]
    argv = sys.argv[sys.argv.index("--") + 1:]
    steps = open(keys_path).read().splitlines()
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update({"TERM": "xterm-256color", "LANG": "C.UTF-8"})
        os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    raw = bytearray()
    last = time.monotonic()
    wait_until = 0.0
    while True:
        ready, _, _ = select.select([fd], [], [], 0.05)
        now = time.monotonic()
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            raw += data
            last = now
        elif now - last > 0.5 and now >= wait_until:
            if not steps:
                break
            step = steps.pop(0)
            if step.startswith("sleep "):
                wait_until = now + float(step.split()[1])
            else:
                os.write(fd, step.encode().decode("unicode_escape").encode())
            last = now
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    open(out_path, "wb").write(bytes(raw))

main()
