#!/usr/bin/env python3
"""Records the raw PTY output of a real gdb -i=mi2 session for the parser's replay tests.

usage: record.py OUT.raw SCRIPT -- gdb -q --nx -i=mi2 ARGS...

Each line of SCRIPT is one step:
  N-command    typed (with a carriage return); then wait for the line "N^..." and quiet
  !stopped     wait for a "*stopped" line
  !ctrl-c      type Ctrl-C, then wait for a "*stopped" line
Comment lines start with '#'. Each wait ends after 0.3 s of quiet once its line arrived
(10 s at most); "!stopped" looks at everything since the last input. The terminal's
echo is off, as the driver opens it.

The fixtures were recorded with gdb 13.1 on x86-64 Linux, in /tmp/mi holding prog.c:
  gcc -g -O0 -o prog prog.c
  record.py session.raw session.script -- gdb -q --nx -i=mi2 ./prog
and likewise interrupt and ctrl-c. The parser tests replay them (parse.rs).
"""
import os, pty, re, select, sys, termios, time

def main():
    out_path, script_path = sys.argv[1], sys.argv[2]
    argv = sys.argv[sys.argv.index("--") + 1:]
    steps = [l for l in open(script_path).read().splitlines() if l and not l.startswith("#")]
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update({"TERM": "xterm-256color", "LANG": "C.UTF-8", "DEBUGINFOD_URLS": ""})
        os.execvp(argv[0], argv)
    attrs = termios.tcgetattr(fd)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    raw = bytearray()

    mark = [0]

    def wait(pattern):
        # A "*stopped" may arrive while the command's own wait is still quiet-checking:
        # look from where the last input was typed.
        seen = mark[0]
        found = pattern is None or bool(re.search(pattern, raw[seen:], re.M))
        last = time.monotonic()
        end = last + 10
        while time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    return
                if not data:
                    return
                raw.extend(data)
                last = time.monotonic()
                if not found and re.search(pattern, raw[seen:], re.M):
                    found = True
            elif found and time.monotonic() - last > 0.3:
                return
        sys.stderr.write(raw.decode("utf-8", "replace"))
        sys.exit(f"timed out waiting for {pattern!r}")

    wait(rb"^\(gdb\) ")
    for step in steps:
        if step != "!stopped":
            mark[0] = len(raw)
        if step == "!stopped":
            wait(rb"^\*stopped")
        elif step == "!ctrl-c":
            os.write(fd, b"\x03")
            wait(rb"^\*stopped")
        else:
            token = step.split("-", 1)[0]
            os.write(fd, step.encode() + b"\r")
            wait(rb"^" + token.encode() + rb"\^")
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    open(out_path, "wb").write(raw)

main()
