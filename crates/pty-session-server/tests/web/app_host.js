// A chat host's side of MCP Apps, in the browser: the official SDK's AppBridge and
// PostMessageTransport, talking to a view through a sandbox proxy page on another origin
// (sandbox.html), as hosts do. mcp_app.mjs bundles this file for the page it serves and
// drives it over the DevTools protocol; the view's tools/call go to that script's /call,
// which carries them to pty-session with the SDK's MCP client.
import {
  AppBridge,
  PostMessageTransport,
  McpUiInitializeRequestSchema,
  McpUiInitializedNotificationSchema,
  McpUiResourceTeardownResultSchema,
  McpUiSizeChangedNotificationSchema,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { CallToolRequestSchema, JSONRPCMessageSchema } from "@modelcontextprotocol/core";

// What the view may send, checked against the SDK's schemas as it arrives.
const SCHEMAS = {
  "ui/initialize": McpUiInitializeRequestSchema,
  "ui/notifications/initialized": McpUiInitializedNotificationSchema,
  "ui/notifications/size-changed": McpUiSizeChangedNotificationSchema,
  "tools/call": CallToolRequestSchema,
};

function check(schema, value) {
  const result = schema.safeParse(value);
  return result.success ? null : JSON.stringify(result.error.issues);
}

const views = new Map();

// Mounts one view: a sandbox frame of `width`×`height` px, the resource's HTML inside it,
// then the tool's input and result once the view is initialized.
async function mount({ name, sandboxUrl, width, height, hostContext, html, csp, toolInput, toolResult }) {
  const view = { name, messages: [], problems: [], sizes: [], initialized: false };
  views.set(name, view);
  const frame = document.createElement("iframe");
  frame.style.width = `${width}px`;
  frame.style.height = `${height}px`;
  frame.style.border = "1px solid #888";
  frame.src = `${sandboxUrl}?csp=${encodeURIComponent(JSON.stringify(csp ?? null))}`;
  document.body.append(frame);
  view.frame = frame;

  window.addEventListener("message", (event) => {
    if (event.source !== frame.contentWindow) return;
    const message = event.data;
    view.messages.push({ at: performance.now(), message });
    const envelope = check(JSONRPCMessageSchema, message);
    if (envelope) view.problems.push({ method: message?.method, problem: envelope });
    const schema = SCHEMAS[message?.method];
    if (schema) {
      const problem = check(schema, { method: message.method, params: message.params });
      if (problem) view.problems.push({ method: message.method, problem });
    }
  });

  const bridge = new AppBridge(
    null,
    { name: "pty-session-test-host", version: "1" },
    { serverTools: {}, openLinks: {} },
    { hostContext },
  );
  view.bridge = bridge;
  bridge.oncalltool = async (params) => {
    const response = await fetch("/call", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ view: name, params }),
    });
    return response.json();
  };
  bridge.onsizechange = (params) => view.sizes.push({ at: performance.now(), ...params });
  bridge.onsandboxready = () => bridge.sendSandboxResourceReady({ html, csp });
  bridge.oninitialized = async () => {
    view.initialized = true;
    await bridge.sendToolInput({ arguments: toolInput });
    await bridge.sendToolResult(toolResult);
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  return true;
}

// A request the extension does not define: the view must answer method-not-found.
async function probeUnknown(name) {
  try {
    const result = await views.get(name).bridge.request(
      { method: "ui/pty-session-test/no-such-method", params: {} },
      McpUiResourceTeardownResultSchema,
    );
    return { answered: result };
  } catch (err) {
    return { code: err.code, message: err.message };
  }
}

async function teardown(name) {
  return views.get(name).bridge.teardownResource({});
}

function report(name) {
  const view = views.get(name);
  return {
    initialized: view.initialized,
    messages: view.messages.map(({ at, message }) => ({ at, method: message.method, params: message.params, id: message.id })),
    problems: view.problems,
    sizes: view.sizes,
    appCapabilities: view.bridge.getAppCapabilities() ?? null,
    appVersion: view.bridge.getAppVersion() ?? null,
  };
}

window.host = { mount, probeUnknown, teardown, report };
