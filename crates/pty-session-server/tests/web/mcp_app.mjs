// The MCP App in a browser under the official MCP Apps SDK's host side: AppBridge and
// PostMessageTransport (app_host.js, bundled with esbuild), a sandbox proxy on a second
// origin (sandbox.js) under the CSP that the SDK's example host builds from the
// resource's _meta.ui.csp, and the SDK's MCP client carrying the view's tools/call to
// pty-session. The same client is the agent: it opens the sessions, reads with pty_tail,
// resizes and closes. Run by tests/it/browser.rs (npm ci in this folder first).
// Prints one JSON line per step and {"ok":true} at the end; any failed check throws.
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { build } from "esbuild";
import { openPage } from "./cdp.mjs";
import { env, step } from "./script.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const CDP_URL = env("CDP_URL");
const MCP_URL = env("MCP_URL");
const TOKEN = env("TOKEN");
// The background the server was configured with, as CSS computes it.
const BACKGROUND_CSS = env("BACKGROUND_CSS");
const CSP_KIND = process.env.CSP ?? "sdk";
const DEADLINE_MS = 30000;
const URI = "ui://pty-session/terminal";
function assert(condition, what, detail) {
  if (!condition) throw new Error(`${what}: ${JSON.stringify(detail)}`);
}

// The agent and the host: one MCP client, the current protocol, the token's owner.
const client = new Client({ name: "pty-session-test-host", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), {
  requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
}));
const tool = async (name, args) => {
  const result = await client.callTool({ name, arguments: args });
  assert(!result.isError, `${name} succeeds`, result.content);
  return result.structuredContent;
};

// The tools name the view, the resource is an MCP App with a CSP of no outside origin.
const { tools } = await client.listTools();
for (const name of ["pty_open", "pty_screen"]) {
  const meta = tools.find((t) => t.name === name)?._meta ?? {};
  assert(meta.ui?.resourceUri === URI, `${name} names the view`, meta);
  assert(!("ui/resourceUri" in meta), `${name} has no deprecated flat key`, meta);
}
const { contents } = await client.readResource({ uri: URI });
const [resource] = contents;
assert(resource.mimeType === "text/html;profile=mcp-app", "the MIME type", resource.mimeType);
const csp = resource._meta?.ui?.csp;
assert(csp && csp.connectDomains?.length === 0 && csp.resourceDomains?.length === 0, "no outside origin", csp);
const html = resource.text;

// The frame's Content-Security-Policy. "sdk": the policy the SDK's example host builds
// from _meta.ui.csp (same origin and inline code, the listed domains, no frames, plugins
// or base URI); "spec": the extension's restrictive default for a resource without one.
function policy(kind, given) {
  if (kind === "spec") {
    return "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
      "img-src 'self' data:; media-src 'self' data:; connect-src 'none'";
  }
  const list = (domains) => (domains ?? []).filter((d) => !/[;\r\n'" ]/.test(d)).join(" ");
  const resources = list(given?.resourceDomains);
  const frames = list(given?.frameDomains);
  const bases = list(given?.baseUriDomains);
  return [
    "default-src 'self' 'unsafe-inline'",
    `script-src 'self' 'unsafe-inline' 'unsafe-eval' blob: data: ${resources}`.trim(),
    `style-src 'self' 'unsafe-inline' blob: data: ${resources}`.trim(),
    `img-src 'self' data: blob: ${resources}`.trim(),
    `font-src 'self' data: blob: ${resources}`.trim(),
    `media-src 'self' data: blob: ${resources}`.trim(),
    `connect-src 'self' ${list(given?.connectDomains)}`.trim(),
    `worker-src 'self' blob: ${resources}`.trim(),
    frames ? `frame-src ${frames}` : "frame-src 'none'",
    "object-src 'none'",
    bases ? `base-uri ${bases}` : "base-uri 'none'",
  ].join("; ");
}

// The host's origin: the page, the bundled AppBridge, /call. The sandbox's: sandbox.html.
const bundle = await build({
  entryPoints: [join(here, "app_host.js")], bundle: true, format: "esm", platform: "browser",
  write: false, logLevel: "error",
});
const hostScript = bundle.outputFiles[0].text;
const calls = [];
const listen = (handler) => new Promise((resolve) => {
  const server = createServer(handler);
  server.listen(0, "127.0.0.1", () => resolve(server));
});
const body = (req) => new Promise((resolve) => {
  let data = "";
  req.on("data", (chunk) => (data += chunk));
  req.on("end", () => resolve(data));
});
const hostServer = await listen(async (req, res) => {
  if (req.url === "/") {
    res.writeHead(200, { "Content-Type": "text/html" });
    res.end('<!doctype html><html><body style="margin:0"><script type="module" src="/host.js"></script></body></html>');
  } else if (req.url === "/host.js") {
    res.writeHead(200, { "Content-Type": "text/javascript" });
    res.end(hostScript);
  } else if (req.url === "/call" && req.method === "POST") {
    const { view, params } = JSON.parse(await body(req));
    calls.push({ view, at: Date.now(), name: params.name, arguments: params.arguments });
    const result = await client.callTool(params);
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify(result));
  } else {
    res.writeHead(404).end();
  }
});
const sandboxServer = await listen((req, res) => {
  const url = new URL(req.url, "http://sandbox");
  if (url.pathname === "/sandbox.html") {
    const given = JSON.parse(url.searchParams.get("csp") ?? "null");
    res.writeHead(200, {
      "Content-Type": "text/html",
      "Content-Security-Policy": policy(CSP_KIND, given),
      "Cache-Control": "no-store",
    });
    res.end('<!doctype html><html><body style="margin:0;height:100vh"><script src="/sandbox.js"></script></body></html>');
  } else if (url.pathname === "/sandbox.js") {
    res.writeHead(200, { "Content-Type": "text/javascript" });
    res.end(readFileSync(join(here, "sandbox.js")));
  } else {
    res.writeHead(404).end();
  }
});
const hostUrl = `http://127.0.0.1:${hostServer.address().port}/`;
const sandboxUrl = `http://127.0.0.1:${sandboxServer.address().port}/sandbox.html`;

// The browser: one page on the host's origin.
const contexts = [];
const { page, close } = await openPage(CDP_URL, (message) => {
  if (message.method === "Runtime.executionContextCreated") {
    contexts.push(message.params.context);
  } else if (message.method === "Runtime.executionContextDestroyed") {
    const gone = contexts.findIndex((c) => c.id === message.params.executionContextId);
    if (gone >= 0) contexts.splice(gone, 1);
  } else if (message.method === "Runtime.exceptionThrown") {
    console.error("page exception:", JSON.stringify(message.params.exceptionDetails));
  } else if (message.method === "Runtime.consoleAPICalled" && message.params.type === "error") {
    console.error("console:", JSON.stringify(message.params.args.map((a) => a.value ?? a.description)));
  }
});
await page("Runtime.enable");
await page("Page.enable");
// Focus as if the page were the window in front, whatever else the browser shows.
await page("Emulation.setFocusEmulationEnabled", { enabled: true });
await page("Page.bringToFront");
await page("Emulation.setDeviceMetricsOverride", { width: 1400, height: 1000, deviceScaleFactor: 1, mobile: false });
await page("Page.navigate", { url: hostUrl });

async function inPage(expression) {
  const main = contexts.find((c) => c.auxData?.isDefault && c.origin === new URL(hostUrl).origin);
  if (!main) return null;
  const { result, exceptionDetails } = await page("Runtime.evaluate", {
    expression, contextId: main.id, returnByValue: true, awaitPromise: true,
  });
  if (exceptionDetails) throw new Error(JSON.stringify(exceptionDetails));
  return result.value;
}
async function waitFor(what, probe) {
  const start = Date.now();
  let last;
  for (;;) {
    last = await probe().catch((err) => `error: ${err.message}`);
    if (last && !String(last).startsWith("error:")) return last;
    if (Date.now() - start > DEADLINE_MS) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
await waitFor("the host page", () => inPage("Boolean(window.host)"));

// The view's document: the inner frame of the sandbox frame of view `index`, reached
// from the sandbox proxy's context (the same origin as the inner frame).
async function inView(index, expression) {
  const { frameTree } = await page("Page.getFrameTree");
  const sandbox = frameTree.childFrames?.[index]?.frame;
  if (!sandbox) return null;
  const context = contexts.findLast((c) => c.auxData?.frameId === sandbox.id && c.auxData?.isDefault);
  if (!context) return null;
  const { result, exceptionDetails } = await page("Runtime.evaluate", {
    expression: `(() => { const w = document.querySelector('iframe')?.contentWindow; if (!w?.document?.body) return null;
      with (w) { return (${expression}); } })()`,
    contextId: context.id, returnByValue: true,
  });
  if (exceptionDetails) throw new Error(JSON.stringify(exceptionDetails.exception?.description ?? exceptionDetails));
  return result.value;
}
const screenText = "(document.querySelector('.xterm-rows')?.innerText ?? '')";
const stateText = "(document.getElementById('state')?.textContent ?? '')";

// A session wider than its container: 120 columns in a 640 px frame.
const opened = await tool("pty_open", { command: "python3 -q", cols: 120, rows: 20 });
const id = opened.sessionId;
const WIDTH = 640;
const hostContext = {
  theme: "dark", displayMode: "inline", availableDisplayModes: ["inline"], platform: "web",
  containerDimensions: { width: WIDTH, maxHeight: 900 },
};
const mount = (index, name, session, width, height) => inPage(`window.host.mount(${JSON.stringify({
  name, sandboxUrl, width, height, hostContext: { ...hostContext, containerDimensions: { width, maxHeight: 900 } },
  html, csp, toolInput: { command: "python3 -q" },
  toolResult: { content: [{ type: "text", text: `[${session} running]` }], structuredContent: { sessionId: session } },
})})`);
const started = Date.now();
await mount(0, "narrow", id, WIDTH, 480);

// The handshake, as the SDK's host saw it.
await waitFor("the prompt in the view", () => inView(0, `${screenText}.includes('>>> ')`));
const background = await inView(0, "getComputedStyle(document.querySelector('.xterm-viewport')).backgroundColor");
step("background", { background });
assert(background === BACKGROUND_CSS, "the terminal is drawn on the configured background", background);
let report = await inPage("window.host.report('narrow')");
// The proxy's own sandbox-proxy-ready aside, what the view sent.
const methods = report.messages.map((m) => m.method).filter((m) => m !== "ui/notifications/sandbox-proxy-ready");
step("handshake", { ms: Date.now() - started, methods: [...new Set(methods)], appCapabilities: report.appCapabilities });
assert(report.initialized, "ui/notifications/initialized reached the bridge", methods);
assert(methods.indexOf("ui/initialize") === 0, "ui/initialize comes first", methods);
assert(methods.indexOf("ui/notifications/initialized") < methods.indexOf("tools/call"), "initialized before any tools/call", methods);
assert(report.problems.length === 0, "every message fits the SDK's schemas", report.problems);
assert(JSON.stringify(report.appCapabilities?.availableDisplayModes) === '["inline"]', "availableDisplayModes", report.appCapabilities);
assert(report.sizes.length >= 1, "size-changed sent", report.sizes);
const calledTools = new Set(calls.filter((c) => c.view === "narrow").map((c) => c.name));
assert(!calledTools.has("pty_tail"), "the view never calls pty_tail", [...calledTools]);

// Every column shows: the terminal is scaled into the container.
const geometry = await waitFor("the scaled terminal", () => inView(0, `(() => {
  const r = document.getElementById('terminal').getBoundingClientRect();
  const scale = Number(document.documentElement.dataset.scale);
  return scale < 1 ? { right: r.right, viewport: document.documentElement.clientWidth, scale } : null;
})()`));
step("narrow container", geometry);
assert(geometry.right <= geometry.viewport + 0.5, "the last column inside the frame", geometry);

// A person types 6*7 and Enter in the view; the agent's next pty_tail holds both.
// Keys go to the focused frame: focus the terminal until the view's document has it.
await waitFor("the terminal focused", () => inView(0, `(() => { const input = document.querySelector('.xterm-helper-textarea');
  window.focus(); input.focus(); return document.hasFocus() && document.activeElement === input; })()`));
await page("Input.insertText", { text: "6*7" });
await page("Input.dispatchKeyEvent", { type: "keyDown", key: "Enter", code: "Enter", windowsVirtualKeyCode: 13, text: "\r" });
await page("Input.dispatchKeyEvent", { type: "keyUp", key: "Enter", code: "Enter", windowsVirtualKeyCode: 13 });
await waitFor("42 in the view", () => inView(0, `${screenText}.split('\\n').some((line) => line.trim() === '42')`)).catch(async (err) => {
  console.error("the view at the timeout:", JSON.stringify(calls.filter((c) => c.name !== "pty_screen")), await inView(0, `${screenText} + '|' + ${stateText} + '|' + document.activeElement?.className + '|' + document.hasFocus()`));
  throw err;
});
const sends = calls.filter((c) => c.view === "narrow" && c.name === "pty_send");
assert(sends.length > 0 && sends.every((c) => c.arguments.read === false), "the view's sends do not read", sends);
const tail = await tool("pty_tail", { id });
step("agent's tail after the person typed", { text: tail.text, lines: tail.lines });
assert(tail.text.includes("6*7") && tail.text.split("\n").includes("42"), "the agent's tail holds 6*7 and 42", tail);

// The agent resizes: the view follows and tells the host its new size.
const before = (await inPage("window.host.report('narrow')")).sizes.length;
await tool("pty_send", { id, data: "", submit: false, rows: 30, timeoutMs: 1000 });
const sizes = await waitFor("size-changed after the resize", async () => {
  const now = (await inPage("window.host.report('narrow')")).sizes;
  return now.length > before ? now : null;
});
step("resize re-sent size-changed", { sizes: sizes.map(({ width, height }) => ({ width, height })) });
assert(sizes.at(-1).height > sizes[before - 1].height, "a taller view", sizes);

// A request the extension does not define gets method-not-found.
const unknown = await inPage("window.host.probeUnknown('narrow')");
step("unknown host request", unknown);
assert(unknown.code === -32601, "method not found", unknown);

// The same, through the sandbox at the frame's own JSON-RPC: no answer of {} anywhere.
report = await inPage("window.host.report('narrow')");
assert(report.problems.length === 0, "still every message fits the SDK's schemas", report.problems);

// pty_close: the view shows the session ended and stops calling.
await tool("pty_close", { id });
const ended = await waitFor("the view to show the end", () => inView(0, `document.documentElement.dataset.ended === 'true' && ${stateText}`));
let count = calls.filter((c) => c.view === "narrow").length;
await new Promise((r) => setTimeout(r, 2000));
const after = calls.filter((c) => c.view === "narrow").length - count;
step("after pty_close", { state: ended, toolCallsWithin2s: after });
assert(after === 0, "no tools/call after the end", calls.slice(-3));

// ui/resource-teardown: a second view stops calling at once.
const second = await tool("pty_open", { command: "python3 -q" });
await mount(1, "torn", second.sessionId, 900, 400);
await waitFor("the prompt in the second view", () => inView(1, `${screenText}.includes('>>> ')`));
const torn = await inPage("window.host.teardown('torn')");
count = calls.filter((c) => c.view === "torn").length;
await new Promise((r) => setTimeout(r, 2000));
const afterTeardown = calls.filter((c) => c.view === "torn").length - count;
step("after ui/resource-teardown", { answer: torn, toolCallsWithin2s: afterTeardown });
assert(afterTeardown === 0, "no tools/call after teardown", calls.slice(-3));
await tool("pty_close", { id: second.sessionId });

// The program exits: a third view shows how it ended and stops calling.
const third = await tool("pty_open", { command: "python3 -q" });
await mount(2, "exits", third.sessionId, 900, 400);
await waitFor("the prompt in the third view", () => inView(2, `${screenText}.includes('>>> ')`));
await tool("pty_send", { id: third.sessionId, data: "exit(3)" });
const exited = await waitFor("the view to show the exit", () => inView(2, `document.documentElement.dataset.ended === 'true' && ${stateText}`));
count = calls.filter((c) => c.view === "exits").length;
await new Promise((r) => setTimeout(r, 2000));
const afterExit = calls.filter((c) => c.view === "exits").length - count;
step("after the program exited", { state: exited, toolCallsWithin2s: afterExit });
assert(exited.includes("exit code 3"), "the view says how it ended", exited);
assert(afterExit === 0, "no tools/call after the exit", calls.slice(-3));
await tool("pty_close", { id: third.sessionId });

// A coloured program: the view's first frame has its colours, bold and inverse, in the
// cells xterm.js holds and in what it renders.
const coloured = await tool("pty_open", {
  command: "printf '\\033[31mred\\033[0m \\033[1;7mbold inverse\\033[0m \\033[38;5;208;44morange on blue\\033[0m\\n'; exec cat",
});
// A page tall enough that this fourth view is in sight: xterm.js renders nothing out of it.
await page("Emulation.setDeviceMetricsOverride", { width: 1400, height: 1800, deviceScaleFactor: 1, mobile: false });
await mount(3, "colours", coloured.sessionId, 900, 400);
await waitFor("the coloured line in the view", () => inView(3, `${screenText}.includes('orange on blue')`)).catch(async (err) => {
  console.error("the view at the timeout:", JSON.stringify(calls.filter((c) => c.view === "colours").slice(-2)),
    JSON.stringify(await inView(3, `${screenText} + '|' + ${stateText}`)), JSON.stringify(await tool("pty_screen", { id: coloured.sessionId, frame: true })));
  throw err;
});
const cells = await inView(3, `(() => { const { cell } = window.ptySessionView;
  return { red: cell(0, 0), space: cell(0, 3), bold: cell(0, 4), orange: cell(0, 17),
    rendered: [...document.querySelectorAll('.xterm-rows span')].filter((s) => s.classList.contains('xterm-fg-1')).map((s) => s.textContent).join('') }; })()`);
const viewScreens = calls.filter((c) => c.view === "colours" && c.name === "pty_screen");
step("coloured first frame", { cells, screenCalls: viewScreens.length });
assert(viewScreens.every((c) => c.arguments.frame === true), "the view asks for the frame", viewScreens);
assert(cells.red?.chars === "r" && cells.red.fgPalette && cells.red.fg === 1 && !cells.red.bold, "red is red", cells);
assert(!cells.space.fgPalette && !cells.space.bold && !cells.space.inverse, "plain between", cells);
assert(cells.bold?.chars === "b" && cells.bold.bold && cells.bold.inverse, "bold and inverse", cells);
assert(cells.orange?.chars === "o" && cells.orange.fg === 208 && cells.orange.bgPalette && cells.orange.bg === 4, "orange on blue", cells);
assert(cells.rendered === "red", "rendered in red", cells);
await tool("pty_close", { id: coloured.sessionId });

// vim asks for focus reports (mode 1004): the view's focus coming and going is no key,
// and nothing is sent while nobody types.
const vim = await tool("pty_open", {
  command: `vim -u NONE -N -n --cmd 'let &t_fe = "\\e[?1004h"' --cmd 'let &t_fd = "\\e[?1004l"'`, cols: 80, rows: 10,
});
await waitFor("vim's focus reports on", async () => {
  const frame = await tool("pty_screen", { id: vim.sessionId, frame: true });
  return JSON.stringify(frame).includes("\\u001b[?1004h");
});
await page("Emulation.setDeviceMetricsOverride", { width: 1400, height: 2600, deviceScaleFactor: 1, mobile: false });
await mount(4, "vim", vim.sessionId, 900, 300);
await waitFor("vim in the view", () => inView(4, `${screenText}.includes('~')`));
for (let round = 0; round < 3; round++) {
  await waitFor("the vim view focused", () => inView(4, `(() => { const input = document.querySelector('.xterm-helper-textarea');
    window.focus(); input.focus(); return document.activeElement === input; })()`));
  await inView(4, `(() => { document.querySelector('.xterm-helper-textarea').blur(); return true; })()`);
}
await new Promise((r) => setTimeout(r, 1500));
const vimSends = calls.filter((c) => c.view === "vim" && c.name === "pty_send");
step("focus in and out of vim's view", { sends: vimSends.map((c) => c.arguments.data) });
assert(vimSends.length === 0, "no pty_send without a key typed", vimSends);
await tool("pty_close", { id: vim.sessionId });

// The idle schedule, a pure function of the view: 0.5 s while the screen changes, twice
// as long after each unchanged look, at most 2 s.
const schedule = await inView(1, `(() => { const { nextDelay } = window.ptySessionView; let d = 500; const out = [];
  for (const changed of [false, false, false, false, true, false]) { d = nextDelay(d, changed); out.push(d); } return out; })()`);
step("idle schedule", { delays: schedule });
assert(JSON.stringify(schedule) === "[1000,2000,2000,2000,500,1000]", "the schedule", schedule);

await close();
hostServer.close();
sandboxServer.close();
await client.close();
console.log(JSON.stringify({ ok: true }));
process.exit(0);
