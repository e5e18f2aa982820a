"""README's commands, run as written: the shell block that starts `pty-session serve` and
calls it with curl and the MCP Inspector. The one change is the port (a free one instead
of 7717, which a machine may be using); `pty-session` is the binary under test. Each curl
must get a JSON-RPC result, the Inspector the six tools.

usage: python3 readme_commands.py path/to/pty-session
"""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(HERE, "..", "README.md")
TOOLS = ["pty_close", "pty_list", "pty_open", "pty_screen", "pty_send", "pty_tail"]

passed = 0
failed = 0


def check(rule, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS {rule}")
    else:
        failed += 1
        print(f"FAIL {rule}  -- {str(detail)[:1500]}")


def block():
    """The README's sh block that runs `pty-session serve` and curl."""
    text = open(README, encoding="utf-8").read()
    for body in re.findall(r"```sh\n(.*?)```", text, re.S):
        if "pty-session serve" in body and "curl " in body:
            return body
    raise SystemExit("FAIL README has no sh block with `pty-session serve` and curl")


def commands_of(text):
    """The commands of a block: a command starts at a line's first column; indented lines
    continue it (after a backslash, or inside a quoted argument)."""
    commands = []
    for line in text.strip().splitlines():
        if line[:1].isspace() and commands:
            commands[-1] += "\n" + line
        elif line.strip():
            commands.append(line)
    return commands


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    binary = os.path.abspath(sys.argv[1])
    port = free_port()
    commands = block().replace("7717", str(port))
    # Between the server's start and the first request, wait until it listens (a person
    # types slower than a script); each command's output goes to a file of its own (and its
# stderr, where curl shows progress, to another).
    out = tempfile.mkdtemp(prefix="pty-interop-readme-")
    script = ["set -u", "n=0"]
    for command in commands_of(commands):
        if command.strip().endswith("&"):
            script.append(command)
            script.append("server=$!")
            script.append(
                f"for i in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:{port}/ && break; sleep 0.1; done"
            )
        else:
            script.append(f'n=$((n+1)); {{\n{command}\n}} > "{out}/$n" 2> "{out}/$n.err"')
    script.append('kill "$server"; wait "$server"')
    bindir = os.path.join(out, "bin")
    os.mkdir(bindir)
    os.symlink(binary, os.path.join(bindir, "pty-session"))
    env = {k: v for k, v in os.environ.items() if k not in ("PTY_SESSION_TOKEN", "RUST_LOG")}
    env["PATH"] = bindir + os.pathsep + env["PATH"]
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=HERE, env=env, timeout=180,
                          capture_output=True, text=True)
    check("README: the block runs and the server stops", done.returncode == 0, done.stderr)
    outputs = sorted(os.listdir(out), key=lambda n: int(n) if n.isdigit() else -1)
    outputs = [open(os.path.join(out, n)).read() for n in outputs if n.isdigit()]
    lines = [c for c in commands_of(commands) if not c.strip().endswith("&")]
    for command, output in zip(lines, outputs):
        name = command.split()[0]
        if name == "curl":
            data = [line[5:].strip() for line in output.splitlines() if line.startswith("data:")]
            messages = [json.loads(d) for d in data if d]
            tools = [t["name"] for m in messages for t in m.get("result", {}).get("tools", [])]
            check("README: curl gets the tools", sorted(tools) == TOOLS, output)
        elif name == "npx":
            try:
                tools = sorted(t["name"] for t in json.loads(output)["tools"])
            except (ValueError, KeyError) as err:
                tools = err
            check("README: the Inspector lists the tools", tools == TOOLS, output)
    check("README: every command ran", len(outputs) == len(lines) and len(lines) >= 2, outputs)
    print(f"README's commands: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


main()
