#!/usr/bin/env python3
"""The Python MCP SDK (`mcp` on PyPI, 1.x or 2.x, whichever this interpreter has) drives
pty-session over stdio and streamable HTTP: the scenario of lib.mjs, in Python.

usage: .venv/mcp2/bin/python python_sdk.py path/to/pty-session

1.x speaks the 2025 protocol (with Mcp-Session-Id over HTTP); 2.x also 2026-07-28
("auto", no MCP session). Prints PASS/FAIL lines and `N passed, M failed`.
"""
import asyncio
import contextlib
import importlib.metadata
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/debug/pty-session")
VERSION = importlib.metadata.version("mcp")
MAJOR = int(VERSION.split(".")[0])
NAME = f"python mcp {VERSION}"
TOOLS = ["pty_close", "pty_list", "pty_open", "pty_screen", "pty_send", "pty_tail"]
ALICE, BOB = "tok-alice-0123456789", "tok-bob-01234567890"
SERVER_ARGS = ["--backend-type", "exec", "--max-sessions-per-owner", "4"]
counts = {"passed": 0, "failed": 0}


def check(rule, ok, detail=""):
    counts["passed" if ok else "failed"] += 1
    print(("PASS " if ok else "FAIL ") + rule + ("" if ok else f"  -- {str(detail)[:600]}"), flush=True)


class Warnings(logging.Handler):
    """What the SDK logs at WARNING or above: the tools must validate without a word."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.seen = []

    def emit(self, record):
        self.seen.append(record.getMessage())


WARNINGS = Warnings()
logging.getLogger().addHandler(WARNINGS)


def field(obj, camel, snake):
    return getattr(obj, camel, None) if hasattr(obj, camel) else getattr(obj, snake, None)


class Adapter:
    def __init__(self, session):
        self.session = session

    async def list(self):
        return (await self.session.list_tools()).tools

    async def call(self, tool, args):
        r = await self.session.call_tool(tool, args)
        text = "".join(c.text for c in r.content if c.type == "text")
        return {"isError": bool(field(r, "isError", "is_error")), "text": text,
                "structured": field(r, "structuredContent", "structured_content")}


def check_error(label, what, r, code):
    check(f"{label}: {what} → {code} as text, no structuredContent",
          r["isError"] and r["text"].startswith(f"{code}: ") and r["structured"] is None, r)


def noise(schema, path="#"):
    found = []
    if isinstance(schema, list):
        for i, item in enumerate(schema):
            found += noise(item, f"{path}/{i}")
    elif isinstance(schema, dict):
        if isinstance(schema.get("format"), str):
            found.append(f"{path}: format {schema['format']}")
        if isinstance(schema.get("type"), list):
            found.append(f"{path}: type {schema['type']}")
        for key, value in schema.items():
            if key != "format":
                found += noise(value, f"{path}/{key}")
    return found


async def scenario(label, c):
    before = len(WARNINGS.seen)
    tools = await c.list()
    names = sorted(t.name for t in tools)
    check(f"{label}: tools/list has the six tools, each with an outputSchema",
          names == TOOLS and all(field(t, "outputSchema", "output_schema") for t in tools), names)
    found = [n for t in tools for n in noise(field(t, "inputSchema", "input_schema")) + noise(field(t, "outputSchema", "output_schema"))]
    check(f"{label}: schemas are standard JSON Schema (no formats, no type unions)", not found, found)
    check(f"{label}: tools/list validates without a warning", len(WARNINGS.seen) == before, WARNINGS.seen[before:])

    r = await c.call("pty_open", {"command": "python3 -q"})
    sid = (r["structured"] or {}).get("sessionId")
    check(f"{label}: pty_open settles at the prompt", not r["isError"] and r["structured"]["pending"] == ">>> ", r)
    r = await c.call("pty_send", {"id": sid, "data": "6*7"})
    check(f"{label}: pty_send returns the new lines", not r["isError"] and "42\n" in r["structured"]["delta"], r)
    r = await c.call("pty_tail", {"id": sid})
    check(f"{label}: pty_tail after the send has nothing new", not r["isError"] and r["structured"]["lines"] == 0, r)
    await c.call("pty_send", {"id": sid, "data": "import time; time.sleep(30)", "timeoutMs": 500})
    r = await c.call("pty_send", {"id": sid, "data": "\u0003", "submit": False})
    check(f"{label}: pty_send of \"\\u0003\" is Ctrl-C", not r["isError"] and "KeyboardInterrupt" in r["structured"]["delta"], r)
    await c.call("pty_send", {"id": sid, "data": "time.sleep(30)", "timeoutMs": 500})
    r = await c.call("pty_send", {"id": sid, "keys": ["C-c"]})
    check(f"{label}: pty_send of keys [\"C-c\"] is Ctrl-C", not r["isError"] and "KeyboardInterrupt" in r["structured"]["delta"], r)
    r = await c.call("pty_screen", {"id": sid})
    check(f"{label}: pty_screen shows the prompt", not r["isError"] and ">>>" in r["structured"]["screen"], r)
    r = await c.call("pty_list", {})
    check(f"{label}: pty_list lists the session", not r["isError"] and any(s["id"] == sid for s in r["structured"]["sessions"]), r)
    r = await c.call("pty_close", {"id": sid})
    check(f"{label}: pty_close closes", not r["isError"] and r["structured"]["closed"] is True, r)
    r = await c.call("pty_close", {"id": sid})
    check(f"{label}: pty_close again is closed: false", not r["isError"] and r["structured"]["closed"] is False, r)
    check_error(label, "pty_tail after close", await c.call("pty_tail", {"id": sid}), "UNKNOWN_SESSION")

    check_error(label, "an empty command", await c.call("pty_open", {"command": ""}), "INVALID_ARGUMENT")
    check_error(label, "a missing program", await c.call("pty_open", {"command": "/nonexistent/program"}), "SPAWN_FAILED")
    r = await c.call("pty_open", {"command": "true"})
    done = r["structured"]["sessionId"]
    check_error(label, "pty_send after exit", await c.call("pty_send", {"id": done, "data": "x"}), "NOT_RUNNING")
    await c.call("pty_close", {"id": done})
    r = await c.call("pty_open", {"command": "sh -c 'stty raw -echo; exec sleep 300'", "settle": "quiet", "quietMs": 200})
    stuck = r["structured"]["sessionId"]
    r = await c.call("pty_send", {"id": stuck, "data": "y" * (512 * 1024), "timeoutMs": 1000})
    check_error(label, "a write nobody reads", r, "WRITE_TIMEOUT")
    await c.call("pty_close", {"id": stuck})
    opened, limited = [], None
    for _ in range(6):
        r = await c.call("pty_open", {"command": "cat", "settle": "none"})
        if r["isError"]:
            limited = r
            break
        opened.append(r["structured"]["sessionId"])
    check_error(label, "one session past the limit", limited or {"isError": False, "text": "", "structured": None}, "SESSION_LIMIT")
    for sid in opened:
        await c.call("pty_close", {"id": sid})


async def foreign(label, alice, bob):
    r = await alice.call("pty_open", {"command": "cat", "settle": "none"})
    sid = r["structured"]["sessionId"]
    for tool, args in [("pty_send", {"id": sid, "data": "x"}), ("pty_tail", {"id": sid}), ("pty_close", {"id": sid})]:
        check_error(label, f"{tool} by another token", await bob.call(tool, args), "FOREIGN_SESSION")
    await alice.call("pty_close", {"id": sid})


async def cancelled(label, c, server):
    r = await c.call("pty_open", {"command": "cat", "settle": "none"})
    sid = r["structured"]["sessionId"]
    waiting = asyncio.ensure_future(c.call("pty_tail", {"id": sid, "settle": "quiet", "quietMs": 600000, "timeoutMs": 60000}))
    await asyncio.sleep(0.7)
    server.send_signal(signal.SIGTERM)
    check_error(label, "a wait when the server stops", await waiting, "CANCELLED")


def running(pid):
    """Whether process `pid` runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


async def persisted(label, connect):
    """`mcp --persist`: a session outlives the client process that opened it. `connect(env,
    cwd)` is an async context manager of an Adapter on a stdio client of `pty-session mcp
    --persist`. A private XDG_RUNTIME_DIR keeps the user's own background server out of
    it; `pty-session stop` ends it."""
    import shutil
    runtime = tempfile.mkdtemp(prefix="pty-session-interop-persist-")
    project = tempfile.mkdtemp(prefix="pty-session-interop-project-")
    env = {**os.environ, "XDG_RUNTIME_DIR": runtime}

    def stop():
        return subprocess.run([BIN, "stop"], env=env, capture_output=True, text=True, timeout=60)

    label = f"{label} --persist"
    try:
        async with connect(env, project) as c:
            r = await c.call("pty_open", {"command": "python3 -q"})
            sid, pid = r["structured"]["sessionId"], r["structured"]["pid"]
            r = await c.call("pty_send", {"id": sid, "data": "x = 41"})
            check(f"{label}: python3 opened and x = 41 sent", not r["isError"] and r["structured"]["pending"] == ">>> ", r)
        check(f"{label}: the session outlives its client", running(pid), pid)
        async with connect(env, project) as c:
            r = await c.call("pty_list", {})
            check(f"{label}: a new client in the same directory lists the session",
                  not r["isError"] and any(s["id"] == sid for s in r["structured"]["sessions"]), r)
            r = await c.call("pty_send", {"id": sid, "data": "x + 1"})
            check(f"{label}: x + 1 gives 42", not r["isError"] and "42\n" in r["structured"]["delta"], r)
        stopped = stop()
        check(f"{label}: pty-session stop stops it", stopped.returncode == 0, stopped.stdout + stopped.stderr)
        until = time.monotonic() + 10
        while running(pid) and time.monotonic() < until:
            await asyncio.sleep(0.02)
        check(f"{label}: no session process after stop", not running(pid), pid)
    except Exception as err:  # a failed step, not a crash of the whole check
        check(f"{label}: ran to the end", False, repr(err))
    finally:
        stop()
        shutil.rmtree(runtime, ignore_errors=True)
        shutil.rmtree(project, ignore_errors=True)


@contextlib.contextmanager
def http_server():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tokens = tempfile.NamedTemporaryFile("w", delete=False)
    tokens.write(f"alice {ALICE}\nbob {BOB}\n")
    tokens.close()
    os.chmod(tokens.name, 0o600)
    server = subprocess.Popen([BIN, "serve", "--listen", f"127.0.0.1:{port}", "--tokens", tokens.name, *SERVER_ARGS],
                              stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    try:
        yield server, f"http://127.0.0.1:{port}/mcp"
    finally:
        if server.poll() is None:
            server.terminate()
        server.wait(10)


async def run_v1():
    errlog = tempfile.TemporaryFile("w+")
    label = f"{NAME} stdio"
    async with stdio_client(StdioServerParameters(command=BIN, args=["mcp", *SERVER_ARGS]), errlog=errlog) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            await scenario(label, Adapter(s))
    errlog.seek(0)
    stderr = errlog.read()
    check(f"{label}: the server wrote nothing on stderr", stderr == "", stderr)

    @contextlib.asynccontextmanager
    async def persist_client(env, cwd):
        params = StdioServerParameters(command=BIN, args=["mcp", "--persist", *SERVER_ARGS], env=env, cwd=cwd)
        async with stdio_client(params, errlog=errlog) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                yield Adapter(s)

    await persisted(label, persist_client)

    import httpx
    label = f"{NAME} http (legacy, Mcp-Session-Id)"
    with http_server() as (server, url):
        async with contextlib.AsyncExitStack() as stack:
            sessions = []
            for token in (ALICE, BOB):
                http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
                r, w, session_id = await stack.enter_async_context(streamable_http_client(url, http_client=http))
                s = await stack.enter_async_context(ClientSession(r, w))
                await s.initialize()
                sessions.append((Adapter(s), session_id))
            (alice, session_id), (bob, _) = sessions
            check(f"{label}: the server gave an Mcp-Session-Id", bool(session_id()), session_id())
            await scenario(label, alice)
            await foreign(label, alice, bob)
            await cancelled(label, alice, server)


async def run_v2():
    import httpx2
    from mcp import Client
    for mode in ("legacy", "auto"):
        label = f"{NAME} stdio ({mode})"
        async with Client(StdioServerParameters(command=BIN, args=["mcp", *SERVER_ARGS]), mode=mode) as client:
            check(f"{label}: negotiated a protocol", True, client.protocol_version)
            await scenario(label, Adapter(client))

    @contextlib.asynccontextmanager
    async def persist_client(env, cwd):
        params = StdioServerParameters(command=BIN, args=["mcp", "--persist", *SERVER_ARGS], env=env, cwd=cwd)
        async with Client(params, mode="auto") as client:
            yield Adapter(client)

    await persisted(f"{NAME} stdio (auto)", persist_client)
    for mode, what in (("legacy", "legacy, Mcp-Session-Id"), ("auto", "2026-07-28, no session")):
        label = f"{NAME} http ({what})"
        with http_server() as (server, url):
            def client(token):
                http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
                return Client(streamable_http_client(url, http_client=http), mode=mode)
            async with client(ALICE) as alice, client(BOB) as bob:
                want = "2025-11-25" if mode == "legacy" else "2026-07-28"
                check(f"{label}: negotiated {want}", alice.protocol_version == want, alice.protocol_version)
                await scenario(label, Adapter(alice))
                await foreign(label, Adapter(alice), Adapter(bob))
                await cancelled(label, Adapter(alice), server)


async def main():
    try:
        await (run_v1() if MAJOR == 1 else run_v2())
    except BaseException as err:  # a client that throws is a failure, not a crash
        check(f"{NAME}: ran to the end", False, repr(err))
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    sys.exit(1 if counts["failed"] else 0)


asyncio.run(main())
