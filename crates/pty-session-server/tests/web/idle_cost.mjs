// What a watched idle session costs: the MCP App view under the SDK's host side (as in
// mcp_app.mjs), on a python prompt that prints nothing, for SECONDS; then how soon the
// view shows a line the agent makes the program print. Not a test: a measurement, run by
// hand against a running `pty-session serve` and a headless chromium:
//   CDP_URL=ws://… MCP_URL=http://…/mcp TOKEN=… SERVER_PID=… BROWSER_PGID=… node idle_cost.mjs
// VIEW_HTML_FILE replaces the resource's HTML (to measure another version of the view).
import { createServer } from "node:http";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { build } from "esbuild";
import { openPage } from "./cdp.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const { CDP_URL, MCP_URL, TOKEN, SERVER_PID, BROWSER_PGID } = process.env;
const SECONDS = Number(process.env.SECONDS ?? 60);
const TICK = 100; // clock ticks per second (getconf CLK_TCK)

// CPU seconds of one process, or of every process in a group.
function cpuOf(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return { pgrp: Number(fields[2]), ticks: Number(fields[11]) + Number(fields[12]) };
}
function cpuSeconds(pid) {
  return cpuOf(pid).ticks / TICK;
}
function groupSeconds(pgrp) {
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cpu = cpuOf(entry);
      if (cpu.pgrp === Number(pgrp)) ticks += cpu.ticks;
    } catch {}
  }
  return ticks / TICK;
}

const client = new Client({ name: "idle-cost", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
const [resource] = (await client.readResource({ uri: "ui://pty-session/terminal" })).contents;
const html = process.env.VIEW_HTML_FILE ? readFileSync(process.env.VIEW_HTML_FILE, "utf8") : resource.text;
const csp = resource._meta?.ui?.csp;

const hostScript = (await build({
  entryPoints: [join(here, "app_host.js")], bundle: true, format: "esm", platform: "browser", write: false, logLevel: "error",
})).outputFiles[0].text;
const calls = [];
let bytesIn = 0;
let bytesOut = 0;
const listen = (handler) => new Promise((resolve) => {
  const server = createServer(handler);
  server.listen(0, "127.0.0.1", () => resolve(server));
});
const hostServer = await listen(async (req, res) => {
  if (req.url === "/") return res.end('<!doctype html><body style="margin:0"><script type="module" src="/host.js"></script>');
  if (req.url === "/host.js") {
    res.writeHead(200, { "Content-Type": "text/javascript" });
    return res.end(hostScript);
  }
  if (req.url !== "/call") return res.writeHead(404).end();
  let data = "";
  for await (const chunk of req) data += chunk;
  const { params } = JSON.parse(data);
  const result = await client.callTool(params);
  const out = JSON.stringify(result);
  calls.push({ at: Date.now(), name: params.name });
  bytesOut += JSON.stringify(params).length;
  bytesIn += out.length;
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end(out);
});
const sandboxServer = await listen((req, res) => {
  if (req.url.startsWith("/sandbox.html")) return res.end('<!doctype html><body style="margin:0;height:100vh"><script src="/sandbox.js"></script>');
  res.writeHead(200, { "Content-Type": "text/javascript" });
  res.end(readFileSync(join(here, "sandbox.js")));
});

const contexts = [];
const { page, close } = await openPage(CDP_URL, (m) => {
  if (m.method === "Runtime.executionContextCreated") contexts.push(m.params.context);
});
await page("Runtime.enable");
await page("Page.navigate", { url: `http://127.0.0.1:${hostServer.address().port}/` });
const hostOrigin = `http://127.0.0.1:${hostServer.address().port}`;
const evaluate = async (expression, contextId) =>
  (await page("Runtime.evaluate", { expression, contextId, returnByValue: true, awaitPromise: true }))?.result?.value;
const until = async (probe) => {
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
};
await until(async () => {
  const main = contexts.find((c) => c.auxData?.isDefault && c.origin === hostOrigin);
  return main && evaluate("Boolean(window.host)", main.id);
});
const inPage = (expression) => evaluate(expression, contexts.find((c) => c.auxData?.isDefault && c.origin === hostOrigin).id);
const inView = async (expression) => {
  const { frameTree } = await page("Page.getFrameTree");
  const frame = frameTree.childFrames?.[0]?.frame;
  const context = frame && contexts.findLast((c) => c.auxData?.frameId === frame.id && c.auxData?.isDefault);
  if (!context) return null;
  return evaluate(`(() => { const d = document.querySelector('iframe')?.contentDocument; return d ? (${expression.replaceAll("document", "d")}) : null; })()`, context.id);
};

const opened = (await client.callTool({ name: "pty_open", arguments: { command: "python3 -q" } })).structuredContent;
await inPage(`window.host.mount(${JSON.stringify({
  name: "idle", sandboxUrl: `http://127.0.0.1:${sandboxServer.address().port}/sandbox.html`, width: 1100, height: 700,
  hostContext: { theme: "dark", displayMode: "inline", containerDimensions: { width: 1100, maxHeight: 900 } },
  html, csp, toolInput: {}, toolResult: { content: [], structuredContent: { sessionId: opened.sessionId } },
})})`);
await until(() => inView("(document.querySelector('.xterm-rows')?.innerText ?? '').includes('>>> ')"));
await new Promise((r) => setTimeout(r, 5000)); // past the first looks

const start = { at: Date.now(), calls: calls.length, bytesIn, bytesOut, server: cpuSeconds(SERVER_PID), browser: groupSeconds(BROWSER_PGID), host: process.cpuUsage() };
await new Promise((r) => setTimeout(r, SECONDS * 1000));
const minutes = (Date.now() - start.at) / 60000;
const hostCpu = process.cpuUsage(start.host);
const perMinute = (n) => Math.round((n / minutes) * 100) / 100;
console.log(JSON.stringify({
  seconds: SECONDS,
  toolCallsPerMinute: perMinute(calls.length - start.calls),
  bytesToServerPerMinute: perMinute(bytesOut - start.bytesOut),
  bytesFromServerPerMinute: perMinute(bytesIn - start.bytesIn),
  serverCpuSecondsPerMinute: perMinute(cpuSeconds(SERVER_PID) - start.server),
  browserCpuSecondsPerMinute: perMinute(groupSeconds(BROWSER_PGID) - start.browser),
  hostScriptCpuSecondsPerMinute: perMinute((hostCpu.user + hostCpu.system) / 1e6),
}));

// Freshness: the agent makes the idle program print; how long until the view shows it.
const latencies = [];
for (let i = 1; i <= 6; i++) {
  await new Promise((r) => setTimeout(r, 5000 + i * 333)); // idle again, at another phase
  const word = `fresh${i}x${Date.now() % 1000}`;
  await client.callTool({ name: "pty_send", arguments: { id: opened.sessionId, data: `print("${word}")` } });
  const sent = Date.now();
  await until(() => inView(`(document.querySelector('.xterm-rows')?.innerText ?? '').split('\\n').some((l) => l.trim() === '${word}')`));
  latencies.push(Date.now() - sent);
}
console.log(JSON.stringify({ msUntilTheViewShowsANewLine: latencies }));

await client.callTool({ name: "pty_close", arguments: { id: opened.sessionId } });
await close();
hostServer.close();
sandboxServer.close();
await client.close();
process.exit(0);
