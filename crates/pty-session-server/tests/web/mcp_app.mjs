// The MCP App in a browser, under a minimal host of this repository's that speaks the
// bridge: the view (the HTML of resources/read, in a sandboxed iframe) is initialized,
// told a pty_open result, and its tools/call requests are carried to the server's /mcp.
// Run by tests/it/browser.rs, which opened the session and checks the program afterwards.
import { readFileSync } from "node:fs";
import { connect } from "./cdp.mjs";

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const CDP_URL = env("CDP_URL");
const MCP_URL = env("MCP_URL");
const TOKEN = env("TOKEN");
const SESSION_ID = env("SESSION_ID");
const HTML = readFileSync(env("HTML_FILE"), "utf8");
const DEADLINE_MS = 30000;
const step = (what, detail) => console.log(JSON.stringify({ step: what, ...detail }));

const cdp = await connect(CDP_URL);
let nextId = 1;
const waiting = new Map();
const contexts = [];
let calls = 0;
const send = (method, params = {}, sessionId) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    waiting.set(id, { resolve, reject });
    cdp.send(JSON.stringify({ id, method, params, sessionId }));
  });
let page;
let viewSession = null;
cdp.onmessage = (event) => {
  const message = JSON.parse(event.data);
  if (message.method === "Target.attachedToTarget" && message.params.targetInfo.type === "iframe") {
    // Chromium runs a sandboxed frame in a process of its own: a target of its own.
    viewSession = message.params.sessionId;
    send("Runtime.runIfWaitingForDebugger", {}, viewSession).catch(() => {});
  } else if (message.method === "Runtime.executionContextCreated") {
    contexts.push(message.params.context);
  } else if (message.method === "Runtime.executionContextDestroyed") {
    const gone = contexts.findIndex((c) => c.id === message.params.executionContextId);
    if (gone >= 0) contexts.splice(gone, 1);
  } else if (message.method === "Runtime.exceptionThrown") {
    console.error("page exception:", JSON.stringify(message.params.exceptionDetails));
  } else if (message.method === "Runtime.bindingCalled" && message.params.name === "hostCall") {
    const { id, params } = JSON.parse(message.params.payload);
    calls++;
    callTool(params).then((result) =>
      page("Runtime.evaluate", {
        expression: `__answer(${JSON.stringify(id)}, ${JSON.stringify(result)})`,
      }));
  }
  const entry = waiting.get(message.id);
  if (!entry) return;
  waiting.delete(message.id);
  if (message.error) entry.reject(new Error(JSON.stringify(message.error)));
  else entry.resolve(message.result);
};

// The host's side of tools/call: the server's /mcp, current protocol, with the token.
let rpcId = 1;
async function callTool(params) {
  const response = await fetch(MCP_URL, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${TOKEN}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2026-07-28",
      "Mcp-Method": "tools/call",
      "Mcp-Name": params.name,
    },
    // The current protocol has no initialize: each request says its version and the
    // client's capabilities.
    body: JSON.stringify({
      jsonrpc: "2.0", id: rpcId++, method: "tools/call",
      params: { ...params, _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "pty-session-test-host", version: "0" },
      } },
    }),
  });
  const text = await response.text();
  const json = text.trim().startsWith("{")
    ? JSON.parse(text)
    : text.split("\n").filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5)))
        .find((m) => m.result || m.error);
  if (!json?.result) throw new Error(`tools/call failed: ${text}`);
  return json.result;
}

const { targetId } = await send("Target.createTarget", { url: "about:blank" });
const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
page = (method, params) => send(method, params, sessionId);
await page("Runtime.enable");
await page("Runtime.addBinding", { name: "hostCall" });
await page("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: false, flatten: true });
const { frameTree } = await page("Page.getFrameTree");
const mainFrame = frameTree.frame.id;

// The host: one sandboxed frame (scripts only: no same origin), the bridge's host side.
await page("Runtime.evaluate", {
  expression: `(() => {
    const frame = document.createElement('iframe');
    frame.sandbox = 'allow-scripts';
    frame.style.width = '1100px';
    frame.style.height = '760px';
    frame.srcdoc = ${JSON.stringify(HTML)};
    document.body.append(frame);
    const post = (message) => frame.contentWindow.postMessage({ jsonrpc: '2.0', ...message }, '*');
    window.__seen = [];
    window.__answer = (id, result) => post({ id, result });
    window.addEventListener('message', (event) => {
      if (event.source !== frame.contentWindow) return;
      const m = event.data;
      window.__seen.push(m.method);
      if (m.method === 'ui/initialize') {
        post({ id: m.id, result: { protocolVersion: '2026-01-26',
          hostInfo: { name: 'pty-session-test-host', version: '0' },
          hostCapabilities: { serverTools: {} }, hostContext: { theme: 'dark' } } });
      } else if (m.method === 'ui/notifications/initialized') {
        post({ method: 'ui/notifications/tool-input', params: { arguments: { command: 'python3 -q' } } });
        post({ method: 'ui/notifications/tool-result', params: {
          content: [{ type: 'text', text: 'opened' }],
          structuredContent: { sessionId: ${JSON.stringify(SESSION_ID)} } } });
      } else if (m.method === 'tools/call') {
        hostCall(JSON.stringify({ id: m.id, params: m.params }));
      } else if (m.id !== undefined && m.method) {
        post({ id: m.id, result: {} });
      }
    });
  })()`,
});

async function inView(expression) {
  if (viewSession) {
    const { result } = await send("Runtime.evaluate", { expression, returnByValue: true }, viewSession);
    return result.value;
  }
  // The newest default context of a frame other than the page's: the view's document
  // (the frame's first, empty document has one too, which goes as the view loads).
  const view = contexts.findLast((c) => c.auxData?.frameId !== mainFrame && c.auxData?.isDefault);
  if (!view) return null;
  const { result } = await page("Runtime.evaluate", {
    expression, contextId: view.id, returnByValue: true,
  });
  return result.value;
}

async function waitFor(what, expression) {
  const start = Date.now();
  for (;;) {
    const value = await inView(expression).catch(() => null);
    if (value) return value;
    if (Date.now() - start > DEADLINE_MS) {
      const seen = await page("Runtime.evaluate", { expression: "JSON.stringify(window.__seen)", returnByValue: true });
      throw new Error(`timed out waiting for ${what}; the view got ${seen.result.value}, shows ` +
        JSON.stringify(await inView("document.body.innerText").catch(() => null)));
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const screenText = "(document.querySelector('.xterm-rows')?.innerText ?? '')";
await waitFor("the prompt in the view", `${screenText}.includes('>>> ')`);
step("view shows the session", { screen: (await inView(screenText)).trimEnd(), toolCalls: calls });

await inView("document.querySelector('.xterm-helper-textarea').focus()");
await page("Input.insertText", { text: "6*7" });
await page("Input.dispatchKeyEvent", {
  type: "keyDown", key: "Enter", code: "Enter", windowsVirtualKeyCode: 13, text: "\r",
});
await page("Input.dispatchKeyEvent", { type: "keyUp", key: "Enter", code: "Enter", windowsVirtualKeyCode: 13 });
await waitFor("42 in the view", `${screenText}.split('\\n').some(line => line.trim() === '42')`);
step("typed in the view", { screen: (await inView(screenText)).trimEnd(), toolCalls: calls });

await send("Target.closeTarget", { targetId });
cdp.close();
console.log(JSON.stringify({ ok: true }));
process.exit(0);
