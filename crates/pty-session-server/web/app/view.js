// The MCP App view of a session: rendered by the chat host beside a pty_open or
// pty_screen result, it follows the session through the host bridge (JSON-RPC over
// postMessage): pty_screen for what the window shows, pty_send when the person types.
// It never calls pty_tail, which would take lines from the agent's unread output.
"use strict";
(() => {
  const POLL_MS = 500;
  const state = document.getElementById("state");
  let nextId = 1;
  const pending = new Map();
  let sessionId = null;
  let term = null;
  let last = "";
  let busy = false;

  function request(method, params) {
    const id = nextId++;
    window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }
  function notify(method, params) {
    window.parent.postMessage({ jsonrpc: "2.0", method, params }, "*");
  }

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.id !== undefined && pending.has(message.id) && !message.method) {
      const { resolve, reject } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) reject(new Error(message.error.message));
      else resolve(message.result);
      return;
    }
    if (message.method === "ui/notifications/tool-input") {
      const id = message.params?.arguments?.id;
      if (id) follow(id);
    } else if (message.method === "ui/notifications/tool-result") {
      const id = message.params?.structuredContent?.sessionId;
      if (id) follow(id);
    } else if (message.id !== undefined && message.method) {
      // A request this view does not serve (e.g. teardown): answer so the host goes on.
      window.parent.postMessage({ jsonrpc: "2.0", id: message.id, result: {} }, "*");
    }
  });

  async function call(name, args) {
    const result = await request("tools/call", { name, arguments: args });
    if (result.isError) throw new Error(result.content?.[0]?.text ?? "tool error");
    return result.structuredContent;
  }

  function draw(screen) {
    if (!term) {
      term = new Terminal({ cols: screen.cols, rows: screen.rows, cursorBlink: true });
      term.open(document.getElementById("terminal"));
      term.onData((data) => {
        if (!sessionId) return;
        call("pty_send", { id: sessionId, data, submit: false, settle: "quiet", quietMs: 50, timeoutMs: 1000 })
          .then(poll)
          .catch((err) => (state.textContent = err.message));
      });
      notify("ui/notifications/size-changed", {
        width: document.documentElement.scrollWidth,
        height: document.documentElement.scrollHeight,
      });
    }
    if (term.cols !== screen.cols || term.rows !== screen.rows) term.resize(screen.cols, screen.rows);
    const frame = JSON.stringify([screen.screen, screen.cursor]);
    if (frame === last) return;
    last = frame;
    const rows = screen.screen.split("\n").map((line, i) => `\x1b[${i + 1};1H${line}`).join("");
    term.write(`\x1b[H\x1b[2J${rows}\x1b[${screen.cursor.row + 1};${screen.cursor.col + 1}H`);
  }

  async function poll() {
    if (!sessionId || busy) return;
    busy = true;
    try {
      const screen = await call("pty_screen", { id: sessionId });
      draw(screen);
      state.textContent = `${sessionId} · ${screen.status}`;
    } catch (err) {
      state.textContent = err.message;
    } finally {
      busy = false;
    }
  }

  function follow(id) {
    if (sessionId === id) return;
    sessionId = id;
    poll();
  }

  setInterval(poll, POLL_MS);
  request("ui/initialize", {
    protocolVersion: "2026-01-26",
    appInfo: { name: "pty-session terminal", version: "1" },
    appCapabilities: {},
  })
    .then(() => notify("ui/notifications/initialized", {}))
    .catch((err) => (state.textContent = "no host bridge: " + err.message));
})();
