// The MCP Inspector's CLI (@modelcontextprotocol/inspector, `mcp-inspector --cli`), one
// process per request as a person or a script would run it: over stdio (a fresh server
// each time) and over HTTP, legacy and 2026-07-28. Over HTTP the owner is the token in
// every era, so sessions outlive one invocation (checked in each era); the whole round
// trip runs over 2026-07-28.
// One argument of a command line holds at most 128 KiB, so its WRITE_TIMEOUT write is smaller.
// usage: node inspector.mjs path/to/pty-session
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ALICE, BIN, BOB, SERVER_ARGS, check, checkError, finish, startHttpServer, step, versionOf } from "./lib.mjs";

const name = `@modelcontextprotocol/inspector ${versionOf("@modelcontextprotocol/inspector")} --cli`;
const CLI = fileURLToPath(new URL("./node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js", import.meta.url));

/** Runs the CLI with `args`; resolves to { code, stdout, stderr, result }. */
function inspector(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "--cli", ...args, "--format", "json"], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("exit", (code) => {
      let result;
      try {
        result = JSON.parse(stdout).result;
      } catch {}
      resolve({ code, stdout, stderr, result });
    });
  });
}

function shaped(run) {
  const result = run.result || {};
  const text = (result.content || []).filter((b) => b.type === "text").map((b) => b.text).join("");
  return { isError: result.isError === true, text, structured: result.structuredContent, run: run.stderr.slice(0, 300) };
}

/** A target: the arguments that name the server, and how to call a tool through it. */
function target(args) {
  return {
    list: () => inspector([...args, "--method", "tools/list", "--strict"]),
    call: async (tool, toolArgs) =>
      shaped(await inspector([...args, "--method", "tools/call", "--tool-name", tool, "--tool-args-json", JSON.stringify(toolArgs)])),
  };
}

async function listsCleanly(label, t) {
  const run = await t.list();
  const names = (run.result?.tools || []).map((tool) => tool.name);
  check(`${label}: tools/list --strict passes with six tools and nothing on stderr`,
    run.code === 0 && names.length === 6 && run.stderr.trim() === "", { code: run.code, names, stderr: run.stderr });
}

await step(`${name} stdio`, async () => {
  const label = `${name} stdio`;
  const t = target([BIN, "mcp", ...SERVER_ARGS]);
  await listsCleanly(label, t);
  const r = await t.call("pty_open", { command: "sh -c 'echo hello; exit 3'" });
  check(`${label}: pty_open runs a command to its exit`,
    !r.isError && r.structured?.initialOutput === "hello\n" && r.structured?.exitCode === 3, r);
  const closed = await t.call("pty_close", { id: "nosuchid" });
  check(`${label}: pty_close of an unknown id is closed: false`, !closed.isError && closed.structured?.closed === false, closed);
  checkError(label, "an empty command", await t.call("pty_open", { command: "" }), "INVALID_ARGUMENT");
  checkError(label, "a missing program", await t.call("pty_open", { command: "/nonexistent/program" }), "SPAWN_FAILED");
  checkError(label, "pty_tail of a made-up id", await t.call("pty_tail", { id: "nosuchid" }), "UNKNOWN_SESSION");
});

await step(`${name} http`, async () => {
  const server = await startHttpServer();
  try {
    const auth = (token) => ["--header", `Authorization: Bearer ${token}`];
    const unauthorized = await fetch(server.url, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    const body = await unauthorized.text();
    check(`${name} http: without a token, 401 says which header to send`,
      unauthorized.status === 401 && body.includes("Authorization: Bearer <token>"), { status: unauthorized.status, body });

    const legacyLabel = `${name} http (legacy, Mcp-Session-Id)`;
    const legacy = target([server.url, ...auth(ALICE), "--protocol-era", "legacy"]);
    await listsCleanly(legacyLabel, legacy);
    checkError(legacyLabel, "pty_tail of a made-up id", await legacy.call("pty_tail", { id: "nosuchid" }), "UNKNOWN_SESSION");

    // Each CLI call is a connection of its own (with the default era, as README's command
    // has it; a new MCP session each time in the legacy era): the owner is the token, so
    // what one call opened, the next reaches.
    for (const [era, args] of [["default era", []], ["legacy era", ["--protocol-era", "legacy"]]]) {
      const each = target([server.url, ...auth(ALICE), ...args]);
      const eraLabel = `${name} http (${era}, a connection per call)`;
      const opened = await each.call("pty_open", { command: "python3 -q" });
      const sent = await each.call("pty_send", { id: opened.structured?.sessionId, data: "6*7" });
      check(`${eraLabel}: pty_send reaches what the last call opened`, !sent.isError && sent.structured?.delta?.includes("42\n"), sent);
      const closed = await each.call("pty_close", { id: opened.structured?.sessionId });
      check(`${eraLabel}: and pty_close closes it`, !closed.isError && closed.structured?.closed === true, closed);
    }

    const label = `${name} http (2026-07-28, no session)`;
    const alice = target([server.url, ...auth(ALICE), "--protocol-era", "modern"]);
    const bob = target([server.url, ...auth(BOB), "--protocol-era", "modern"]);
    await listsCleanly(label, alice);
    let r = await alice.call("pty_open", { command: "python3 -q" });
    const id = r.structured?.sessionId;
    check(`${label}: pty_open settles at the prompt`, !r.isError && r.structured?.pending === ">>> ", r);
    r = await alice.call("pty_send", { id, data: "6*7" });
    check(`${label}: pty_send returns the new lines`, !r.isError && r.structured?.delta.includes("42\n"), r);
    await alice.call("pty_send", { id, data: "import time; time.sleep(30)", timeoutMs: 500 });
    r = await alice.call("pty_send", { id, data: "\u0003", submit: false });
    check(`${label}: pty_send of "\\u0003" is Ctrl-C`, !r.isError && r.structured?.delta.includes("KeyboardInterrupt"), r);
    await alice.call("pty_send", { id, data: "time.sleep(30)", timeoutMs: 500 });
    r = await alice.call("pty_send", { id, keys: ["C-c"] });
    check(`${label}: pty_send of keys ["C-c"] is Ctrl-C`, !r.isError && r.structured?.delta.includes("KeyboardInterrupt"), r);
    r = await alice.call("pty_tail", { id });
    check(`${label}: pty_tail after the send has nothing new`, !r.isError && r.structured?.lines === 0, r);
    for (const [tool, args] of [["pty_send", { id, data: "x" }], ["pty_tail", { id }], ["pty_close", { id }]]) {
      checkError(label, `${tool} by another token`, await bob.call(tool, args), "FOREIGN_SESSION");
    }
    r = await alice.call("pty_close", { id });
    check(`${label}: pty_close closes`, !r.isError && r.structured?.closed === true, r);
    r = await alice.call("pty_close", { id });
    check(`${label}: pty_close again is closed: false`, !r.isError && r.structured?.closed === false, r);
    checkError(label, "pty_tail after close", await alice.call("pty_tail", { id }), "UNKNOWN_SESSION");
    checkError(label, "an empty command", await alice.call("pty_open", { command: "" }), "INVALID_ARGUMENT");
    checkError(label, "a missing program", await alice.call("pty_open", { command: "/nonexistent/program" }), "SPAWN_FAILED");
    r = await alice.call("pty_open", { command: "true" });
    checkError(label, "pty_send after exit", await alice.call("pty_send", { id: r.structured?.sessionId, data: "x" }), "NOT_RUNNING");
    await alice.call("pty_close", { id: r.structured?.sessionId });
    r = await alice.call("pty_open", { command: "sh -c 'stty raw -echo; exec sleep 300'", settle: "quiet", quietMs: 200 });
    const stuck = r.structured?.sessionId;
    checkError(label, "a write nobody reads",
      await alice.call("pty_send", { id: stuck, data: "y".repeat(120 * 1024), timeoutMs: 1000 }), "WRITE_TIMEOUT");
    await alice.call("pty_close", { id: stuck });
    const opened = [];
    let limited;
    for (let i = 0; i < 6 && !limited; i++) {
      r = await alice.call("pty_open", { command: "cat", settle: "none" });
      if (r.isError) limited = r;
      else opened.push(r.structured?.sessionId);
    }
    checkError(label, "one session past the limit", limited || { text: "no limit reached" }, "SESSION_LIMIT");
    // Each call starts an Inspector process of its own, which takes a second or more on a
    // loaded machine: the server must not stop before the waiting call has reached it, so
    // the wait before SIGTERM is three times what a whole call just took.
    const started = Date.now();
    await alice.call("pty_close", { id: opened.pop() });
    const oneCall = Date.now() - started;
    const catId = opened[0];
    const waiting = alice.call("pty_tail", { id: catId, settle: "quiet", quietMs: 600000, timeoutMs: 60000 });
    await new Promise((r) => setTimeout(r, Math.max(1500, 3 * oneCall)));
    server.child.kill("SIGTERM");
    checkError(label, "a wait when the server stops", await waiting, "CANCELLED");
  } finally {
    await server.stop();
  }
});

finish();
