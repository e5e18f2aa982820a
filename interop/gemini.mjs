// Gemini CLI (`@google/gemini-cli`) as a host: `gemini mcp add` for pty-session over stdio
// and over HTTP with a bearer token, then an interactive session's `/mcp list`, which
// shows whether each server is Ready and its tools (`gemini mcp list` only tries a
// connection, and says Connected where the session later fails). The session runs on a
// real terminal: a PTY of pty-session itself (stdio, a separate server). No model is
// asked: a placeholder GEMINI_API_KEY passes its start, and /mcp list is local.

import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { ALICE, BIN, TOOLS, check, finish, startHttpServer, step, versionOf } from "./lib.mjs";

const run = promisify(execFile);
const GEMINI = new URL("./node_modules/.bin/gemini", import.meta.url).pathname;
const version = versionOf("@google/gemini-cli");

const home = mkdtempSync(join(tmpdir(), "pty-interop-gemini-"));
const work = join(home, "work");
mkdirSync(work);
mkdirSync(join(home, ".gemini"));
// A trusted folder (else project servers are suppressed), API-key auth without asking,
// a fixed model (no routing call), no update checks or statistics.
writeFileSync(join(home, ".gemini", "trustedFolders.json"), JSON.stringify({ [work]: "TRUST_FOLDER" }));
writeFileSync(
  join(home, ".gemini", "settings.json"),
  JSON.stringify({
    security: { auth: { selectedType: "gemini-api-key" } },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    model: { name: "gemini-2.5-flash" },
  }),
);
const geminiEnv = { HOME: home, GEMINI_API_KEY: "placeholder-no-model-is-asked", TERM: "xterm-256color" };

const server = await startHttpServer();
// The terminal the session runs on.
const terminal = new Client({ name: "pty-session-interop-gemini", version: "1" });
await terminal.connect(new StdioClientTransport({ command: BIN, args: ["mcp"] }));
const call = async (name, args) => {
  const result = await terminal.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
};

/** The screen of session `id` as text. */
async function screen(id) {
  const shown = await call("pty_screen", { id });
  return Array.isArray(shown.screen) ? shown.screen.join("\n") : String(shown.screen);
}

/** Waits (on the session's output going quiet) until `test(screen)`, for at most `rounds`. */
async function waitFor(id, test, rounds = 60) {
  let text = "";
  for (let i = 0; i < rounds; i++) {
    text = await screen(id);
    if (test(text)) return text;
    await call("pty_send", { id, data: "", submit: false, settle: "quiet", quietMs: 500, timeoutMs: 2000 });
  }
  throw new Error(`the screen never showed what was awaited:\n${text}`);
}

/**
 * `/mcp list` in an interactive session. A slash command submitted before the session's
 * start-up ends is queued as a prompt for the model, so the command is typed only after
 * a quiet spell, longer on each attempt, and the attempt is abandoned if it was queued.
 */
async function mcpList() {
  let last = "";
  for (const settleMs of [3000, 10000, 30000]) {
    const opened = await call("pty_open", {
      command: `exec ${GEMINI}`,
      cwd: work,
      env: geminiEnv,
      cols: 120,
      rows: 50,
      settle: "quiet",
      quietMs: 1000,
      timeoutMs: 20000,
    });
    const id = opened.sessionId;
    try {
      await waitFor(id, (text) => text.includes("Type your message"));
      await call("pty_send", { id, data: "", submit: false, settle: "quiet", quietMs: settleMs, timeoutMs: settleMs + 5000 });
      // Typed, then Enter on its own: typed at once, an Enter is taken as part of a paste.
      await call("pty_send", { id, data: "/mcp list", submit: false, settle: "quiet", quietMs: 300, timeoutMs: 5000 });
      await call("pty_send", { id, keys: ["Enter"], settle: "quiet", quietMs: 500, timeoutMs: 5000 });
      last = await waitFor(
        id,
        (text) => text.includes("Initializing...") || (/Configured MCP servers/.test(text) && !/Starting|Connecting/i.test(text)),
      );
      if (!last.includes("Initializing...")) return last;
    } finally {
      await call("pty_close", { id });
    }
  }
  throw new Error(`every attempt's /mcp list was queued for the model:\n${last}`);
}

try {
  await step("gemini: mcp add", async () => {
    await run(GEMINI, ["mcp", "add", "pty", BIN, "mcp"], { cwd: work, env: { ...process.env, ...geminiEnv } });
    await run(GEMINI, ["mcp", "add", "--transport", "http", "-H", `Authorization: Bearer ${ALICE}`, "pty-http", server.url], {
      cwd: work,
      env: { ...process.env, ...geminiEnv },
    });
  });
  await step("gemini: /mcp list in a session", async () => {
    const text = await mcpList();
    for (const [name, transport] of [
      ["pty", "stdio"],
      ["pty-http", "HTTP"],
    ]) {
      const line = text.split("\n").find((l) => l.includes(` ${name} - `)) ?? "";
      check(`gemini ${transport}: the session's /mcp list says Ready`, /Ready \(6 tools/.test(line), text);
      const listed = TOOLS.every((tool) => text.includes(`mcp_${name}_${tool}`));
      check(`gemini ${transport}: the session lists the six tools`, listed, text);
    }
  });
} finally {
  await terminal.close();
  await server.stop();
}
finish(`Gemini CLI ${version}`);
