#!/usr/bin/env python3
"""Checks full-screen programs through the pty-session binary from outside, with the
Python MCP SDK over stdio: the screen in replies, pty_screen, named keys and resize, as
docs/tools.md gives them, with real vim, less, htop, git, top, nano and bash.

usage: interop/run (which installs the pinned `mcp` 2.x into interop/.venv/mcp2), or
       interop/.venv/mcp2/bin/python interop/screens_check.py target/debug/pty-session

Prints one line per rule, and under it, indented, what the agent saw at that moment
(a few rows of the screen, or the reply's text). Exits non-zero if any rule fails.
"""
import asyncio, os, shutil, subprocess, sys, tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tally import check, finish

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/pty-session"


def saw(text, rows=None):
    """Shows what the agent read: the given rows of a screen, or the text's lines."""
    lines = text.split("\n")
    for i in rows if rows is not None else range(len(lines)):
        if 0 <= i < len(lines):
            print(f"      | {lines[i]}")


async def call(s, tool, **args):
    r = await s.call_tool(tool, args)
    text = "".join(c.text for c in r.content if c.type == "text")
    if r.is_error:
        return True, {"error": text}, text
    return False, (r.structured_content or {}), text


async def press(s, sid, *keys):
    """Presses keys and waits as an agent would, by default (until the program waits for
    input again, or exits)."""
    return await call(s, "pty_send", id=sid, keys=list(keys), timeoutMs=15000)


def slow_open(**args):
    return dict(timeoutMs=15000, **args)


async def vim(s, dir):
    path = os.path.join(dir, "notes.txt")
    open(path, "w").write("first line\nsecond line\n")
    err, o, text = await call(s, "pty_open", command=f"vim --clean {path}", **slow_open())
    sid = o.get("sessionId")
    check("vim: the open reply carries the screen (altScreen, cursor at 0,0)",
          o.get("altScreen") is True and o.get("screen", "").startswith("first line\nsecond line")
          and o.get("cursor") == {"row": 0, "col": 0}, o)
    check("vim: the text block is the screen, then the status line",
          text.startswith("first line\nsecond line\n~") and text.rstrip().split("\n")[-1].startswith("[")
          and "alt screen on" in text.rstrip().split("\n")[-1], text[-200:])
    err, o, _ = await press(s, sid, "O", "inserted by the agent", "Escape")
    check("vim: the inserted line is on the screen in the send's reply",
          o.get("screen", "").startswith("inserted by the agent\nfirst line\nsecond line"), o)
    saw(o.get("screen", ""), [0, 1, 2])
    err, o, _ = await press(s, sid, "Down", "Down", "0", "Right")
    check("vim: Down Down 0 Right move the cursor to 2,1", o.get("cursor") == {"row": 2, "col": 1}, o.get("cursor"))
    err, o, _ = await press(s, sid, "Up")
    check("vim: Up moves it to 1,1", o.get("cursor") == {"row": 1, "col": 1}, o.get("cursor"))
    err, o, _ = await press(s, sid, ":w", "Enter")
    last = o.get("screen", "").split("\n")[-1]
    check("vim: :w shows the written message", "written" in last, o.get("screen"))
    saw(last)
    err, o, _ = await press(s, sid, ":q", "Enter")
    check("vim: :q exits, no screen in the reply",
          o.get("status") == "exited" and o.get("exitCode") == 0 and "screen" not in o and not o.get("altScreen"), o)
    check("vim: the file holds the edit", open(path).read() == "inserted by the agent\nfirst line\nsecond line\n", open(path).read())


def children(pid, name):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat").read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid == pid and comm == name:
            found.append(int(entry))
    return found


async def killed_vim(s):
    err, o, _ = await call(s, "pty_open", command="bash --norc --noprofile -i", env={"PS1": "$ "})
    sid, bash = o.get("sessionId"), o.get("pid")
    err, o, _ = await call(s, "pty_send", id=sid, data="vim --clean", settle="quiet", quietMs=1000, timeoutMs=15000)
    vims = children(bash, "vim")
    check("vim under bash: alt screen on", o.get("altScreen") is True and len(vims) == 1, (o.get("altScreen"), vims))
    for pid in vims:
        os.kill(pid, 9)
    err, o, _ = await call(s, "pty_send", id=sid, data="reset; echo after-reset", timeoutMs=15000)
    err, sc, _ = await call(s, "pty_screen", id=sid)
    check("vim killed with SIGKILL, then reset: altScreen false, the shell's screen back",
          o.get("altScreen") is not True and sc.get("altScreen") is False and "after-reset" in sc.get("screen", ""), (o, sc))
    saw(sc.get("screen", ""), range(max(0, sc.get("screen", "").count("\n") - 1), 99))
    await call(s, "pty_close", id=sid)


async def less(s, dir):
    path = os.path.join(dir, "lines.txt")
    open(path, "w").write("".join(f"line {n} needle here\n" if n == 250 else f"line {n}\n" for n in range(1, 501)))
    err, o, _ = await call(s, "pty_open", command=f"less {path}")
    sid = o.get("sessionId")
    check("less: the first page in the open reply", o.get("screen", "").startswith("line 1\nline 2\n"), o)
    err, o, _ = await press(s, sid, "/needle", "Enter")
    check("less: /needle brings the hit to the top", o.get("screen", "").startswith("line 250 needle here\n"), o.get("screen"))
    saw(o.get("screen", ""), [0, 1])
    err, o, _ = await call(s, "pty_send", id=sid, keys=["q"])
    check("less: q leaves", o.get("status") == "exited" and o.get("exitCode") == 0 and not o.get("altScreen"), o)


async def htop(s, dir):
    # A home of its own: htop reads its layout from the user's config and writes it back.
    home = os.path.join(dir, "htop-home")
    os.makedirs(home, exist_ok=True)
    err, o, _ = await call(s, "pty_open", command="htop", env={"HOME": home, "XDG_CONFIG_HOME": home},
                           **slow_open())
    sid = o.get("sessionId")
    rows = o.get("screen", "").split("\n")
    header = next((i for i, row in enumerate(rows) if "PID USER" in row), None)
    check("htop: the header and the process list are on the screen",
          any("Tasks:" in r for r in rows) and header is not None and len(rows) > header + 2
          and rows[header + 1].split()[0].isdigit(), o.get("screen"))
    if header is not None:
        saw(o.get("screen", ""), [header, header + 1])
    err, o, _ = await call(s, "pty_send", id=sid, keys=["F10"])
    check("htop: F10 quits", o.get("status") == "exited", o)


async def git_commit(s, dir):
    repo = os.path.join(dir, "repo")
    os.mkdir(repo)
    git = lambda *args: subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout
    git("init", "-q")
    open(os.path.join(repo, "a.txt"), "w").write("a\n")
    git("add", "a.txt")
    err, o, _ = await call(s, "pty_open", command="git -c user.name=Agent -c user.email=agent@example.com commit",
                           cwd=repo, env={"EDITOR": "vim --clean"}, **slow_open())
    sid = o.get("sessionId")
    screen = o.get("screen", "")
    check("git commit: the message screen is visible", "# Please enter the commit message" in screen and "new file:   a.txt" in screen, screen)
    saw(screen, [1, 2])
    await press(s, sid, "i", "Add a by the agent", "Escape")
    err, o, _ = await press(s, sid, ":wq", "Enter")
    check("git commit: the commit lands", o.get("status") == "exited" and o.get("exitCode") == 0
          and git("log", "--format=%s") == "Add a by the agent\n", o)
    saw(o.get("delta", ""), [0])


async def top(s):
    err, o, _ = await call(s, "pty_open", command="top -d 0.5")
    sid = o.get("sessionId")
    await asyncio.sleep(1.2)
    err, sc, _ = await call(s, "pty_screen", id=sid)
    rows = sc.get("screen", "").split("\n")
    check("top -d 0.5 on the main screen: pty_screen shows one clean frame",
          sc.get("altScreen") is False and rows[0].startswith("top - ") and sum("top - " in r for r in rows) == 1
          and any(r.lstrip().startswith("PID USER") for r in rows), sc.get("screen"))
    saw(sc.get("screen", ""), [0])
    err, o, _ = await call(s, "pty_send", id=sid, keys=["q"])
    check("top: q quits", o.get("status") == "exited", o)


async def nano(s, dir):
    path = os.path.join(dir, "memo.txt")
    open(path, "w").write("old\n")
    err, o, _ = await call(s, "pty_open", command=f"nano {path}", **slow_open())
    sid = o.get("sessionId")
    check("nano: its screen in the open reply", "GNU nano" in o.get("screen", ""), o)
    err, o, _ = await press(s, sid, "hello nano", "Enter")
    check("nano: the typed line on the screen", o.get("screen", "").split("\n")[1:2] == ["hello nano"], o.get("screen"))
    err, o, _ = await press(s, sid, "C-o")
    check("nano: Ctrl-O asks for the file name", "File Name to Write" in o.get("screen", ""), o.get("screen"))
    err, o, _ = await press(s, sid, "Enter")
    check("nano: Enter writes", "Wrote 2 lines" in o.get("screen", ""), o.get("screen"))
    saw(next((r for r in o.get("screen", "").split("\n") if "Wrote" in r), ""))
    err, o, _ = await call(s, "pty_send", id=sid, keys=["C-x"])
    check("nano: Ctrl-X exits, the file written", o.get("status") == "exited" and open(path).read() == "hello nano\nold\n", o)


async def resize(s):
    err, o, _ = await call(s, "pty_open", command="bash --norc --noprofile -i", env={"PS1": "$ "})
    sid = o.get("sessionId")
    err, o, _ = await call(s, "pty_send", id=sid, data="", submit=False, cols=80, rows=24)
    check("resize: data '' with submit false only resizes", not err and o.get("status") == "running", o)
    err, o, _ = await call(s, "pty_send", id=sid, data="tput cols; tput lines")
    check("resize: tput says 80 and 24", o.get("delta", "").endswith("80\n24\n"), o)
    saw(o.get("delta", "").rstrip("\n"))
    err, sc, _ = await call(s, "pty_screen", id=sid)
    check("resize: the screen follows", (sc.get("cols"), sc.get("rows")) == (80, 24), sc)
    err, o, text = await call(s, "pty_send", id=sid, data="", cols=0)
    check("resize: cols 0 is INVALID_ARGUMENT", err and text.startswith("INVALID_ARGUMENT"), text)
    await call(s, "pty_close", id=sid)


async def main():
    missing = [p for p in ("vim", "less", "htop", "git", "top", "nano", "bash") if not shutil.which(p)]
    if missing:
        print(f"FAIL programs missing: {missing}")
        sys.exit(1)
    dir = tempfile.mkdtemp()
    params = StdioServerParameters(command=BIN, args=["mcp"])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            for step in (vim(s, dir), killed_vim(s), less(s, dir), htop(s, dir), git_commit(s, dir), top(s), nano(s, dir), resize(s)):
                await step
    shutil.rmtree(dir, ignore_errors=True)
    finish()

asyncio.run(main())
