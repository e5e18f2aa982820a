// Claude Code (`@anthropic-ai/claude-code`) as a host: `claude mcp add` for pty-session
// over stdio and over HTTP (a right token and a wrong one), then `claude mcp list`, which
// connects to each and reports its health. Calling tools needs a model; this does not.

import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

import { ALICE, BIN, check, finish, startHttpServer, step } from "./lib.mjs";

const run = promisify(execFile);
const CLAUDE = new URL("./node_modules/.bin/claude", import.meta.url).pathname;
const home = mkdtempSync(join(tmpdir(), "pty-interop-claude-"));
const env = { ...process.env, HOME: home, DISABLE_AUTOUPDATER: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" };
const claude = (...args) => run(CLAUDE, args, { cwd: home, env, timeout: 90000 });

const { stdout: versionLine } = await claude("--version");
const version = versionLine.trim().split(" ")[0];
const server = await startHttpServer();
try {
  await step("claude: mcp add", async () => {
    await claude("mcp", "add", "pty", "--", BIN, "mcp");
    await claude("mcp", "add", "--transport", "http", "pty-http", server.url, "--header", `Authorization: Bearer ${ALICE}`);
    await claude("mcp", "add", "--transport", "http", "pty-wrong-token", server.url, "--header", "Authorization: Bearer not-a-token-of-this-server");
  });
  const { stdout } = await claude("mcp", "list");
  const line = (name) => stdout.split("\n").find((l) => l.startsWith(`${name}:`)) ?? "";
  check("claude stdio: mcp list says Connected", /Connected/.test(line("pty")) && !/Failed/.test(line("pty")), stdout);
  check("claude HTTP: mcp list says Connected", /Connected/.test(line("pty-http")) && !/Failed/.test(line("pty-http")), stdout);
  // A wrong token: the person sees why, not only "Failed to connect".
  check(
    "claude HTTP, wrong token: the reason reaches the person",
    /Failed to connect/.test(line("pty-wrong-token")) && /not one of pty-session serve's tokens/.test(line("pty-wrong-token")),
    stdout,
  );
} catch (err) {
  check("claude: mcp list", false, `${err?.stack || err}`);
} finally {
  await server.stop();
}
finish(`Claude Code ${version}`);
