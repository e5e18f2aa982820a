#!/usr/bin/env python3
"""Records the raw PTY output of a real program for the renderer's replay tests.

usage: [COLS=N ROWS=N] record.py OUT.raw INPUT_LINES_FILE_OR_- -- PROGRAM ARGS...

Each input line is typed (with a carriage return) once the output has been quiet for
0.3 s (QUIET seconds if set: a slow starter such as IPython needs more); the recording
ends 0.5 s after the last line, or when the program exits.

The window is COLS x ROWS when both are set (else the PTY's default, 0 x 0, which
programs read as 80 x 24).

Terminal queries are answered as the library's renderer answers them, so a recording shows
what a program sends when it gets the answers (vim asks more of a later xterm).
"""
import fcntl, os, pty, re, select, struct, sys, termios, time

QUERY = re.compile(
    rb"\x1b\[([?>]?)([0-9;]*)(\$?)([a-zA-Z])|\x1b\](1[012]);\?(\x07|\x1b\\)|\x1bP([+$]q[^\x1b]*)\x1b\\"
)

def answer(m):
    mark, params, dollar, action = m.group(1), m.group(2), m.group(3), m.group(4)
    if m.group(5):
        colour = b"rgb:ffff/ffff/ffff" if m.group(5) == b"11" else b"rgb:0000/0000/0000"
        return b"\x1b]" + m.group(5) + b";" + colour + m.group(6)
    if m.group(7):
        request = m.group(7)
        return b"\x1bP0+r" + request[2:] + b"\x1b\\" if request[:1] == b"+" else b"\x1bP0$r\x1b\\"
    first = params.split(b";")[0] or b"0"
    if dollar and action == b"p":
        return b"\x1b[" + mark + first + b";0$y"
    return {
        (b"", b"n", b"5"): b"\x1b[0n",
        (b"", b"n", b"6"): b"\x1b[1;1R",
        (b"?", b"n", b"6"): b"\x1b[?1;1;1R",
        (b"", b"c", b"0"): b"\x1b[?1;2c",
        (b">", b"c", b"0"): b"\x1b[>41;0;0c",
        (b">", b"q", b"0"): b"\x1bP>|pty-session(0.1.0)\x1b\\",
    }.get((mark, action, first), b"")

def main():
    out_path, inputs_path = sys.argv[1], sys.argv[2]
    argv = sys.argv[sys.argv.index("--") + 1:]
    inputs = [] if inputs_path == "-" else open(inputs_path).read().splitlines()
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update({"TERM": "xterm-256color", "PS1": "$ ", "LANG": "C.UTF-8"})
        os.execvp(argv[0], argv)
    if os.environ.get("COLS") and os.environ.get("ROWS"):
        size = struct.pack("HHHH", int(os.environ["ROWS"]), int(os.environ["COLS"]), 0, 0)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, size)
    raw = bytearray()
    last = time.monotonic()
    while True:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            raw += data
            last = time.monotonic()
            for query in QUERY.finditer(data):
                os.write(fd, answer(query))
        elif time.monotonic() - last > (float(os.environ.get("QUIET", 0.3)) if inputs else 0.5):
            if not inputs:
                break
            os.write(fd, inputs.pop(0).encode() + b"\r")
            last = time.monotonic()
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    open(out_path, "wb").write(bytes(raw))

main()
