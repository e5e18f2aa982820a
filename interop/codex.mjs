// Codex (`@openai/codex`) as a host, without a model: `codex app-server` speaks JSON-RPC on
// stdio; after `initialize` it lists each configured MCP server's tools
// (`mcpServerStatus/list`) and calls them (`mcpServer/tool/call` in a thread). pty-session
// is configured twice, over stdio and over HTTP with a bearer token.

import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { ALICE, BIN, TOOLS, check, finish, startHttpServer, step, versionOf } from "./lib.mjs";

const CODEX = new URL("./node_modules/.bin/codex", import.meta.url).pathname;
const version = versionOf("@openai/codex");

/** `codex app-server` with CODEX_HOME holding `config`, and a JSON-RPC client of it. */
function appServer(config) {
  const home = mkdtempSync(join(tmpdir(), "pty-interop-codex-"));
  writeFileSync(join(home, "config.toml"), config);
  const child = spawn(CODEX, ["app-server"], {
    env: { ...process.env, CODEX_HOME: home, PTY_INTEROP_TOKEN: ALICE, RUST_LOG: "off" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const waiting = new Map();
  let buffer = "";
  let next = 1;
  child.stdout.on("data", (chunk) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      if (message.id !== undefined && waiting.has(message.id) && !message.method) {
        waiting.get(message.id)(message);
        waiting.delete(message.id);
      }
    }
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return {
    stderr: () => stderr,
    request(method, params, timeoutMs = 60000) {
      const id = next++;
      child.stdin.write(JSON.stringify({ id, method, params }) + "\n");
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${method}: no answer in ${timeoutMs} ms`)), timeoutMs);
        waiting.set(id, (message) => {
          clearTimeout(timer);
          if (message.error) reject(new Error(`${method}: ${JSON.stringify(message.error)}`));
          else resolve(message.result);
        });
      });
    },
    notify(method) {
      child.stdin.write(JSON.stringify({ method }) + "\n");
    },
    async stop() {
      child.stdin.end();
      child.kill("SIGTERM");
      await exited;
    },
  };
}

const server = await startHttpServer();
const codex = appServer(`
[mcp_servers.pty]
command = "${BIN}"
args = ["mcp", "--backend-type", "exec"]

[mcp_servers.pty-http]
url = "${server.url}"
bearer_token_env_var = "PTY_INTEROP_TOKEN"
`);

try {
  await codex.request("initialize", {
    clientInfo: { name: "pty-session-interop", title: null, version: "0" },
    capabilities: { experimentalApi: true, requestAttestation: false },
  });
  codex.notify("initialized");

  let statuses = [];
  await step("codex: mcpServerStatus/list", async () => {
    statuses = (await codex.request("mcpServerStatus/list", {})).data;
  });
  // A thread to call tools in; starting one asks no model anything.
  const thread = (await codex.request("thread/start", {})).thread.id;

  for (const [name, transport] of [
    ["pty", "stdio"],
    ["pty-http", "HTTP"],
  ]) {
    const status = statuses.find((s) => s.name === name);
    const tools = Object.keys(status?.tools ?? {}).sort();
    check(`codex ${transport}: lists the six tools`, JSON.stringify(tools) === JSON.stringify(TOOLS), status);
    check(`codex ${transport}: no tools error`, status && !status.toolsError, status?.toolsError);
    await step(`codex ${transport}: pty_open, pty_send, pty_close`, async () => {
      const call = (tool, args) =>
        codex.request("mcpServer/tool/call", { threadId: thread, server: name, tool, arguments: args });
      const opened = await call("pty_open", { command: "python3 -q" });
      const id = opened.structuredContent?.sessionId;
      check(`codex ${transport}: pty_open waits at the prompt`, !opened.isError && opened.structuredContent?.pending === ">>> ", opened);
      const sent = await call("pty_send", { id, data: "6*7" });
      check(`codex ${transport}: pty_send returns the answer`, !sent.isError && /\b42\b/.test(sent.structuredContent?.delta ?? ""), sent);
      const closed = await call("pty_close", { id });
      check(`codex ${transport}: pty_close`, !closed.isError && closed.structuredContent?.closed === true, closed);
    });
  }
} catch (err) {
  check("codex: app-server session", false, `${err?.stack || err}\n${codex.stderr().slice(-1500)}`);
} finally {
  await codex.stop();
  await server.stop();
}
finish(`Codex ${version}`);
