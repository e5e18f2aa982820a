#!/usr/bin/env python3
"""Records the raw PTY output of a real program for the renderer's replay tests.

usage: record.py OUT.raw INPUT_LINES_FILE_OR_- -- PROGRAM ARGS...

Each input line is typed (with a carriage return) once the output has been quiet for
0.3 s; the recording ends 0.5 s after the last line, or when the program exits.
"""
import os, pty, select, sys, time

def main():
    out_path, inputs_path = sys.argv[1], sys.argv[2]
    argv = sys.argv[sys.argv.index("--") + 1:]
    inputs = [] if inputs_path == "-" else open(inputs_path).read().splitlines()
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update({"TERM": "xterm-256color", "PS1": "$ ", "LANG": "C.UTF-8"})
        os.execvp(argv[0], argv)
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
        elif time.monotonic() - last > (0.3 if inputs else 0.5):
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
