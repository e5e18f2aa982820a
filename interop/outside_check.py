#!/usr/bin/env python3
"""Checks the pty-session binary from outside, through the Python MCP SDK (not rmcp).

usage: interop/run (which installs the pinned `mcp` 2.x into interop/.venv/mcp2), or
       interop/.venv/mcp2/bin/python interop/outside_check.py target/debug/pty-session

It drives the real binary over stdio and over streamable HTTP (current protocol, and a
legacy one with MCP sessions) through the rules of docs/tools.md and prints one line per rule.
Exits non-zero if any rule fails.
"""
import asyncio, json, os, socket, subprocess, sys, tempfile, time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tally import check, finish

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/pty-session"


async def call(s, tool, **args):
    """(is_error, structured result, text); an error has no structuredContent, so its
    code is read from the text, `CODE: message`, as {"error": {"code": ...}}."""
    r = await s.call_tool(tool, args)
    text = "".join(c.text for c in r.content if c.type == "text")
    if r.is_error:
        if r.structured_content is not None:
            return True, {"error": {"code": "structuredContent on an error"}}, text
        return True, {"error": {"code": text.split(":", 1)[0]}}, text
    return False, (r.structured_content or {}), text


def alive(pid):
    try:
        st = open(f"/proc/{pid}/stat").read()
        return st.rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


async def rules(s, label):
    tools = await s.list_tools()
    names = sorted(t.name for t in tools.tools)
    check(f"{label}: six tools with output schemas", names == ["pty_close", "pty_list", "pty_open", "pty_screen", "pty_send", "pty_tail"]
          and all(t.output_schema for t in tools.tools), names)
    py = subprocess.run(["python3", "-c", "import sys;print(sys.executable)"], capture_output=True, text=True).stdout.strip()
    err, o, text = await call(s, "pty_open", command=f"{py} -q")
    sid = o.get("sessionId")
    check(f"{label}: open settles by input with the prompt pending",
          not err and o.get("settledBy") == "input" and o.get("pending") == ">>> " and o.get("status") == "running", o)
    check(f"{label}: text block is output plus one bracketed status line, not JSON",
          text.strip().startswith("[") and "settled by input" in text and not text.strip().startswith("{"), text)
    err, o, text = await call(s, "pty_send", id=sid, data="6*7")
    check(f"{label}: send returns the delta once", o.get("delta") == ">>> 6*7\n42\n" and o.get("pending") == ">>> ", o)
    err, o, _ = await call(s, "pty_tail", id=sid)
    check(f"{label}: tail after send has nothing new (cursor)", o.get("text") == "" and o.get("lines") == 0 and o.get("totalLines") == 2, o)
    err, o, _ = await call(s, "pty_send", id=sid, data="import time; time.sleep(30)", timeoutMs=500)
    check(f"{label}: timeout settles", o.get("settledBy") == "timeout", o)
    err, o, _ = await call(s, "pty_send", id=sid, data="\u0003", submit=False)
    check(f"{label}: Ctrl-C interrupts", "KeyboardInterrupt" in o.get("delta", "") and o.get("settledBy") == "input", o)
    err, o, _ = await call(s, "pty_send", id=sid, data="print('x'*5)", until="^xxxxx$")
    check(f"{label}: until settles by match", o.get("settledBy") == "match", o)
    err, o, _ = await call(s, "pty_send", id=sid, data="exit(3)")
    check(f"{label}: exit settles with exitCode", o.get("settledBy") == "exit" and o.get("status") == "exited" and o.get("exitCode") == 3, o)
    err, o, text = await call(s, "pty_send", id=sid, data="x")
    check(f"{label}: NOT_RUNNING after exit", err and o.get("error", {}).get("code") == "NOT_RUNNING" and text.startswith("NOT_RUNNING"), o)
    err, o, _ = await call(s, "pty_close", id=sid)
    check(f"{label}: close true", o.get("closed") is True, o)
    err, o, _ = await call(s, "pty_close", id=sid)
    check(f"{label}: close again false", o.get("closed") is False, o)
    err, o, _ = await call(s, "pty_tail", id=sid)
    check(f"{label}: UNKNOWN_SESSION after close", err and o.get("error", {}).get("code") == "UNKNOWN_SESSION", o)
    err, o, _ = await call(s, "pty_open", command="seq 1 1000")
    check(f"{label}: budget gives newest 200 with skipped 800",
          o.get("truncated") is True and o.get("skipped") == 800 and o.get("initialOutput", "").startswith("801\n"), {k: o.get(k) for k in ("truncated", "skipped", "settledBy")})
    await call(s, "pty_close", id=o.get("sessionId"))
    for args, code in [({"command": ""}, "INVALID_ARGUMENT"), ({"command": "true", "cwd": "/nope"}, "INVALID_ARGUMENT"),
                       ({"command": "true", "timeoutMs": 700000}, "INVALID_ARGUMENT"), ({"command": "true", "cols": "wide"}, "INVALID_ARGUMENT")]:
        err, o, text = await call(s, "pty_open", **args)
        check(f"{label}: {code} for {args}", err and o.get("error", {}).get("code") == code and text.startswith(code), o)
    err, o, _ = await call(s, "pty_send", id="nosuchid", data="x" * 2_000_000)
    check(f"{label}: huge data is refused cleanly", err and o.get("error", {}).get("code") in ("INVALID_ARGUMENT", "UNKNOWN_SESSION"), o)
    dir = tempfile.mkdtemp()
    f = os.path.join(dir, "pids")
    cmd = ("trap '' HUP TERM; echo $$ >> \"$F\"; setsid sh -c 'echo $$ >> \"$F\"; exec sleep 1002' & "
           "( sh -c 'echo $$ >> \"$F\"; exec sleep 1004' & ); nohup sh -c 'echo $$ >> \"$F\"; exec sleep 1003' >/dev/null 2>&1 & sleep 1000")
    err, o, _ = await call(s, "pty_open", command=cmd, env={"F": f}, settle="none")
    sid = o.get("sessionId")
    for _ in range(200):
        if os.path.exists(f) and len(open(f).read().split()) == 4:
            break
        await asyncio.sleep(0.02)
    pids = [int(p) for p in open(f).read().split()]
    err, o, _ = await call(s, "pty_close", id=sid)
    check(f"{label}: close kills setsid/double-fork/nohup/trap children", o.get("closed") is True and not any(alive(p) for p in pids), [p for p in pids if alive(p)])
    err, o, _ = await call(s, "pty_open", command="cat")
    return o.get("pid")


async def stdio():
    params = StdioServerParameters(command=BIN, args=["mcp"])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            pid = await rules(s, "stdio")
    for _ in range(100):
        if not alive(pid):
            break
        await asyncio.sleep(0.05)
    check("stdio: EOF on stdin kills the sessions", not alive(pid), pid)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def http():
    import urllib.request, urllib.error
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    port = free_port()
    tokens = tempfile.NamedTemporaryFile("w", delete=False)
    tokens.write("alice tok-alice-1234567890\nbob tok-bob-1234567890\n")
    tokens.close()
    server = subprocess.Popen([BIN, "serve", "--listen", f"127.0.0.1:{port}", "--tokens", tokens.name], stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"

    def status(headers):
        req = urllib.request.Request(url, data=b"{}", headers={"Content-Type": "application/json", **headers}, method="POST")
        try:
            return urllib.request.urlopen(req).status
        except urllib.error.HTTPError as e:
            return e.code

    def client(token, mode):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        return Client(streamable_http_client(url, http_client=http), mode=mode)

    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        check("http: no token → 401", status({}) == 401, status({}))
        code = status({"Authorization": "Bearer wrong"})
        check("http: wrong token → 401", code == 401, code)
        code = status({"Authorization": "Bearer tok-alice-1234567890", "Origin": "http://evil.example"})
        check("http: foreign Origin → 403", code == 403, code)
        for mode in ("auto", "legacy"):
            async with client("tok-alice-1234567890", mode) as alice:
                label = f"http {mode} ({alice.session.protocol_version if hasattr(alice, 'session') else '?'})"
                await rules(alice, label)
                err, o, _ = await call(alice, "pty_open", command="cat")
                sid = o["sessionId"]
                async with client("tok-bob-1234567890", mode) as bob:
                    for tool, args in [("pty_send", {"id": sid, "data": "x"}), ("pty_tail", {"id": sid}), ("pty_close", {"id": sid})]:
                        err, o, _ = await call(bob, tool, **args)
                        check(f"{label}: another token gets FOREIGN_SESSION on {tool}", err and o.get("error", {}).get("code") == "FOREIGN_SESSION", o)
                err, o, _ = await call(alice, "pty_send", id=sid, data="still mine")
                check(f"{label}: the owner's session is untouched", o.get("delta") == "still mine\nstill mine\n", o)
                pid = o.get("pid")
                err, o, _ = await call(alice, "pty_open", command="cat")
                kept = o.get("sessionId")
            # The owner is the token, not the MCP session: closing the client (DELETE of
            # its MCP session, in legacy mode) and connecting again reaches the session.
            async with client("tok-alice-1234567890", mode) as again:
                err, o, _ = await call(again, "pty_tail", id=kept)
                check(f"{label}: a new connection of the token reaches its session", not err and o.get("status") == "running", o)
                err, o, _ = await call(again, "pty_close", id=kept)
                check(f"{label}: and closes it", not err and o.get("closed") is True, o)
    finally:
        server.terminate()
        server.wait(10)


async def main():
    await stdio()
    await http()
    finish()

asyncio.run(main())
