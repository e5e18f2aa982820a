#!/usr/bin/env python3
"""Checks MCP progress notifications of the pty-session binary through the Python MCP SDK's
progress callback (not rmcp), over stdio.

usage: interop/run, or interop/.venv/mcp2/bin/python interop/progress_check.py target/debug/pty-session

A waiting pty_tail on a three-second job, called with a progress callback, must report
progress after its first second, carrying the job's lines, a few times a second at most;
a quick call must report nothing. Exits non-zero if a check fails.
"""
import asyncio, sys, time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tally import check, finish

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/debug/pty-session"


async def main():
    params = StdioServerParameters(command=BIN, args=["mcp"])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            job = "for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.5; done"
            opened = await s.call_tool("pty_open", {"command": job, "settle": "none"})
            sid = opened.structured_content["sessionId"]
            seen = []

            async def progress(value, total, message):
                seen.append((time.monotonic(), value, message))

            start = time.monotonic()
            tail = await s.call_tool(
                "pty_tail",
                {"id": sid, "until": "tick 6", "timeoutMs": 30000},
                progress_callback=progress,
            )
            took = time.monotonic() - start
            check("the waiting tail matched", tail.structured_content.get("settledBy") == "match",
                  tail.structured_content)
            check("progress notifications arrived", len(seen) >= 2, seen)
            check("none in the first second", all(v >= 1000 for _, v, _ in seen), seen)
            check("progress increases", all(a[1] < b[1] for a, b in zip(seen, seen[1:])), seen)
            check("they carry the lines", any("tick" in (m or "") for _, _, m in seen), seen)
            check("a few a second at most", len(seen) <= 4 * took + 1, f"{len(seen)} in {took:.1f} s")

            quick = []

            async def none(value, total, message):
                quick.append(message)

            await s.call_tool("pty_tail", {"id": sid}, progress_callback=none)
            check("a quick call reports nothing", not quick, quick)
            await s.call_tool("pty_close", {"id": sid})
            print(f"{len(seen)} notifications in {took:.1f} s: "
                  + "; ".join(f"{v:.0f} ms {m!r}" for _, v, m in seen))
    finish()


asyncio.run(main())
