// What every TypeScript client check shares: the server it drives, the PASS/FAIL lines
// that interop/run counts, and the scenario itself, written once against a small
// adapter ({ list(), call(name, args) }) that each client script provides.

import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const BIN = process.argv[2] || "target/debug/pty-session";
export const TOOLS = ["pty_close", "pty_list", "pty_open", "pty_screen", "pty_send", "pty_tail"];
export const ALICE = "tok-alice-0123456789";
export const BOB = "tok-bob-01234567890";
// Every server of these checks runs commands without a shell (so a missing program is
// SPAWN_FAILED) and allows few sessions (so SESSION_LIMIT is quick to reach).
export const SERVER_ARGS = ["--backend-type", "exec", "--max-sessions-per-owner", "4"];

/** The installed version of an npm package of interop/package.json. */
export function versionOf(pkg) {
  const path = new URL(`./node_modules/${pkg}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(path, "utf8")).version;
}

let failed = 0;
let passed = 0;

export function check(rule, ok, detail) {
  if (ok) {
    passed++;
    console.log(`PASS ${rule}`);
  } else {
    failed++;
    const shown = typeof detail === "string" ? detail : JSON.stringify(detail);
    console.log(`FAIL ${rule}  -- ${String(shown).slice(0, 600)}`);
  }
}

/** Runs `body`, turning a throw into a failed rule instead of an abort. */
export async function step(rule, body) {
  try {
    await body();
  } catch (err) {
    check(rule, false, `threw: ${err?.stack || err}`);
  }
}

/** Prints the closing line, `[label: ]N passed, M failed`, and exits. */
export function finish(label) {
  console.log(`${label ? `${label}: ` : ""}${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

/**
 * Collects what the client library writes through console.warn/console.error (ajv's
 * "unknown format" warnings go there): the tools must validate without a word.
 */
export function captureWarnings() {
  const seen = [];
  for (const name of ["warn", "error"]) {
    const original = console[name];
    console[name] = (...args) => {
      seen.push(args.map(String).join(" "));
      original.apply(console, args);
    };
  }
  return seen;
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/** `pty-session serve` on a free loopback port with two owners, alice and bob. */
export async function startHttpServer() {
  const dir = mkdtempSync(join(tmpdir(), "pty-interop-"));
  const tokens = join(dir, "tokens");
  writeFileSync(tokens, `alice ${ALICE}\nbob ${BOB}\n`);
  chmodSync(tokens, 0o600);
  const port = await freePort();
  const child = spawn(BIN, ["serve", "--listen", `127.0.0.1:${port}`, "--tokens", tokens, ...SERVER_ARGS], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const url = `http://127.0.0.1:${port}/mcp`;
  for (let i = 0; i < 200; i++) {
    if (stderr.includes("listening on")) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return {
    url,
    child,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** A result as the checks read it, from a client's CallToolResult. */
export function shape(result) {
  const text = (result.content || [])
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("");
  return { isError: result.isError === true, text, structured: result.structuredContent };
}

/** Asserts that a result is the tool error `code` as docs/tools.md has it. */
export function checkError(label, what, result, code) {
  check(
    `${label}: ${what} → ${code} as text, no structuredContent`,
    result.isError && result.text.startsWith(`${code}: `) && result.structured === undefined,
    result,
  );
}

/** Integer formats and type unions: what a strict validator warns about. */
function schemaNoise(schema, path = "#") {
  const noise = [];
  if (Array.isArray(schema)) {
    schema.forEach((item, i) => noise.push(...schemaNoise(item, `${path}/${i}`)));
  } else if (schema && typeof schema === "object") {
    if ("format" in schema && typeof schema.format === "string") noise.push(`${path}: format ${schema.format}`);
    if (Array.isArray(schema.type)) noise.push(`${path}: type ${schema.type}`);
    for (const [key, value] of Object.entries(schema)) {
      if (key !== "format") noise.push(...schemaNoise(value, `${path}/${key}`));
    }
  }
  return noise;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * The scenario every client runs on one connection: `c` is { list(), call(name, args) }
 * returning shape()d results. `warnings` is what captureWarnings() collects.
 */
export async function scenario(label, c, warnings) {
  await step(`${label}: tools/list`, async () => {
    const before = warnings.length;
    const tools = await c.list();
    const names = tools.map((t) => t.name).sort();
    check(`${label}: tools/list has the six tools, each with an outputSchema`,
      JSON.stringify(names) === JSON.stringify(TOOLS) && tools.every((t) => t.outputSchema), names);
    const noise = tools.flatMap((t) => [...schemaNoise(t.inputSchema, `${t.name}/in`), ...schemaNoise(t.outputSchema, `${t.name}/out`)]);
    check(`${label}: schemas are standard JSON Schema (no formats, no type unions)`, noise.length === 0, noise);
    check(`${label}: tools/list validates without a warning`, warnings.length === before, warnings.slice(before));
  });

  await step(`${label}: round trip`, async () => {
    let r = await c.call("pty_open", { command: "python3 -q" });
    const id = r.structured?.sessionId;
    check(`${label}: pty_open settles at the prompt`,
      !r.isError && r.structured.status === "running" && r.structured.pending === ">>> " && r.structured.settledBy === "input", r);
    check(`${label}: the text block is output and a status line, not JSON`,
      r.text.trimEnd().endsWith("]") && r.text.includes(id) && !r.text.startsWith("{"), r.text);
    r = await c.call("pty_send", { id, data: "6*7" });
    check(`${label}: pty_send returns the new lines`, !r.isError && r.structured.delta.includes("42\n") && r.structured.pending === ">>> ", r);
    r = await c.call("pty_tail", { id });
    check(`${label}: pty_tail after the send has nothing new`, !r.isError && r.structured.lines === 0, r);
    r = await c.call("pty_send", { id, data: "import time; time.sleep(30)", timeoutMs: 500 });
    check(`${label}: a busy program settles by timeout`, !r.isError && r.structured.settledBy === "timeout", r);
    r = await c.call("pty_send", { id, data: "\u0003", submit: false });
    check(`${label}: pty_send of "\\u0003" is Ctrl-C`,
      !r.isError && r.structured.delta.includes("KeyboardInterrupt") && r.structured.pending === ">>> ", r);
    await c.call("pty_send", { id, data: "time.sleep(30)", timeoutMs: 500 });
    r = await c.call("pty_send", { id, keys: ["C-c"] });
    check(`${label}: pty_send of keys ["C-c"] is Ctrl-C`, !r.isError && r.structured.delta.includes("KeyboardInterrupt"), r);
    r = await c.call("pty_screen", { id });
    check(`${label}: pty_screen shows the prompt`, !r.isError && r.structured.screen.includes(">>>"), r);
    r = await c.call("pty_list", {});
    check(`${label}: pty_list lists the session`, !r.isError && r.structured.sessions.some((s) => s.id === id), r);
    r = await c.call("pty_close", { id });
    check(`${label}: pty_close closes`, !r.isError && r.structured.closed === true, r);
    r = await c.call("pty_close", { id });
    check(`${label}: pty_close again is closed: false, not an error`, !r.isError && r.structured.closed === false, r);
    r = await c.call("pty_tail", { id });
    checkError(label, "pty_tail after close", r, "UNKNOWN_SESSION");
  });

  await step(`${label}: errors`, async () => {
    checkError(label, "an empty command", await c.call("pty_open", { command: "" }), "INVALID_ARGUMENT");
    checkError(label, "a string for cols", await c.call("pty_open", { command: "true", cols: "wide" }), "INVALID_ARGUMENT");
    checkError(label, "a missing program", await c.call("pty_open", { command: "/nonexistent/program" }), "SPAWN_FAILED");
    checkError(label, "pty_send to a made-up id", await c.call("pty_send", { id: "nosuchid", data: "x" }), "UNKNOWN_SESSION");

    let r = await c.call("pty_open", { command: "true" });
    const done = r.structured?.sessionId;
    checkError(label, "pty_send after exit", await c.call("pty_send", { id: done, data: "x" }), "NOT_RUNNING");
    await c.call("pty_close", { id: done });

    r = await c.call("pty_open", { command: "sh -c 'stty raw -echo; exec sleep 300'", settle: "quiet", quietMs: 200 });
    const stuck = r.structured?.sessionId;
    r = await c.call("pty_send", { id: stuck, data: "y".repeat(512 * 1024), timeoutMs: 1000 });
    checkError(label, "a write nobody reads", r, "WRITE_TIMEOUT");
    await c.call("pty_close", { id: stuck });

    const opened = [];
    let limited;
    for (let i = 0; i < 6 && !limited; i++) {
      r = await c.call("pty_open", { command: "cat", settle: "none" });
      if (r.isError) limited = r;
      else opened.push(r.structured.sessionId);
    }
    checkError(label, "one session past the limit", limited || { text: "no limit reached" }, "SESSION_LIMIT");
    for (const id of opened) await c.call("pty_close", { id });
  });
}

/** FOREIGN_SESSION: `bob` touches a session of `alice`'s. */
export async function foreign(label, alice, bob) {
  await step(`${label}: another owner`, async () => {
    const r = await alice.call("pty_open", { command: "cat", settle: "none" });
    const id = r.structured.sessionId;
    for (const [tool, args] of [["pty_send", { id, data: "x" }], ["pty_tail", { id }], ["pty_close", { id }]]) {
      checkError(label, `${tool} by another token`, await bob.call(tool, args), "FOREIGN_SESSION");
    }
    const mine = await alice.call("pty_send", { id, data: "still mine" });
    check(`${label}: the owner's session is untouched`, !mine.isError && mine.structured.delta.includes("still mine"), mine);
    await alice.call("pty_close", { id });
  });
}

/** CANCELLED: the server stops while a call waits; the call's reply still goes out. */
export async function cancelled(label, c, server) {
  await step(`${label}: server stop`, async () => {
    const r = await c.call("pty_open", { command: "cat", settle: "none" });
    const id = r.structured.sessionId;
    // Quiet mode ignores cat's wait for input: this waits a minute unless stopped.
    const waiting = c.call("pty_tail", { id, settle: "quiet", quietMs: 600000, timeoutMs: 60000 });
    await sleep(700);
    server.child.kill("SIGTERM");
    checkError(label, "a wait when the server stops", await waiting, "CANCELLED");
    await server.stop();
  });
}

/** Whether process `pid` runs (a zombie counts as gone). */
function running(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
  } catch {
    return false;
  }
}

/**
 * `mcp --persist`: a session outlives the client process that opened it. `connect(options)`
 * starts a stdio client of `pty-session mcp --persist` with the spawn options given (env,
 * cwd) and returns `{ c, close }`. A private XDG_RUNTIME_DIR keeps the user's own
 * background server out of it; `pty-session stop` ends it.
 */
export async function persisted(label, connect) {
  const runtime = mkdtempSync(join(tmpdir(), "pty-session-interop-persist-"));
  const project = mkdtempSync(join(tmpdir(), "pty-session-interop-project-"));
  const env = { ...process.env, XDG_RUNTIME_DIR: runtime };
  const options = { env, cwd: project };
  const stop = () =>
    new Promise((resolve) => {
      const child = spawn(BIN, ["stop"], { env, stdio: ["ignore", "pipe", "pipe"] });
      let said = "";
      child.stdout.on("data", (chunk) => (said += chunk));
      child.stderr.on("data", (chunk) => (said += chunk));
      child.on("exit", (code) => resolve({ code, said }));
    });
  try {
    await step(`${label}: --persist`, async () => {
      const first = await connect(options);
      const opened = await first.c.call("pty_open", { command: "python3 -q" });
      const id = opened.structured?.sessionId;
      const pid = opened.structured?.pid;
      const sent = await first.c.call("pty_send", { id, data: "x = 41" });
      check(`${label} --persist: python3 opened and x = 41 sent`, !sent.isError && sent.structured.pending === ">>> ", sent);
      await first.close();
      check(`${label} --persist: the session outlives its client`, running(pid), pid);

      const second = await connect(options);
      const listed = await second.c.call("pty_list", {});
      check(
        `${label} --persist: a new client in the same directory lists the session`,
        !listed.isError && listed.structured.sessions.some((s) => s.id === id),
        listed,
      );
      const answer = await second.c.call("pty_send", { id, data: "x + 1" });
      check(`${label} --persist: x + 1 gives 42`, !answer.isError && answer.structured.delta.includes("42\n"), answer);
      await second.close();
      const stopped = await stop();
      check(`${label} --persist: pty-session stop stops it`, stopped.code === 0, stopped.said);
      const until = Date.now() + 10000;
      while (running(pid) && Date.now() < until) await sleep(20);
      check(`${label} --persist: no session process after stop`, !running(pid), pid);
    });
  } finally {
    await stop();
    rmSync(runtime, { recursive: true, force: true });
    rmSync(project, { recursive: true, force: true });
  }
}
