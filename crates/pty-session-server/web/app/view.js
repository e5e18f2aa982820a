// The MCP App view of a session: rendered by the chat host beside a pty_open or
// pty_screen result, it follows the session through the host bridge (JSON-RPC over
// postMessage): pty_screen with frame true for what the window shows (in its colours),
// pty_send with read false when the person types. It never reads the agent's lines: it
// never calls pty_tail, and its sends leave the session's read cursor where it was.
"use strict";
(() => {
  const PROTOCOL_VERSION = "2026-01-26";
  const METHOD_NOT_FOUND = -32601;

  // How long to wait before the next look at the screen: 0.5 s while the screen changes,
  // then twice as long after each look that found it unchanged, up to 2 s. Pure: `delay`
  // is the wait before this look, `changed` whether it found a new screen.
  const FAST_MS = 500;
  const SLOW_MS = 2000;
  // A look whose answer has not come by then is given up (a host may drop a message):
  // the view looks again rather than wait on it for good.
  const LOOK_TIMEOUT_MS = 5000;
  function nextDelay(delay, changed) {
    if (changed) return FAST_MS;
    return Math.min(SLOW_MS, Math.max(FAST_MS, delay * 2));
  }

  const state = document.getElementById("state");
  const box = document.getElementById("terminal");
  const holder = document.getElementById("holder");
  let nextId = 1;
  const pending = new Map();
  let sessionId = null;
  let term = null;
  let last = "";
  let busy = false;
  // The person's keys, sent one call after the other.
  let typing = Promise.resolve();
  let timer = null;
  let delay = FAST_MS;
  // Set once the session ended or the host tore the view down: nothing is called after.
  let stopped = false;
  let hostContext = {};
  // Known once the host answered ui/initialize.
  let canCallTools = false;

  function post(message) {
    window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  }
  function request(method, params) {
    const id = nextId++;
    post({ id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }
  function notify(method, params) {
    post({ method, params });
  }

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.id !== undefined && !message.method) {
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      if (message.error) waiting.reject(new Error(message.error.message));
      else waiting.resolve(message.result);
      return;
    }
    const params = message.params ?? {};
    switch (message.method) {
      case "ui/notifications/tool-input":
        if (typeof params.arguments?.id === "string") follow(params.arguments.id);
        break;
      case "ui/notifications/tool-result":
        if (typeof params.structuredContent?.sessionId === "string") {
          follow(params.structuredContent.sessionId);
        }
        break;
      case "ui/notifications/host-context-changed":
        applyContext({ ...hostContext, ...params });
        break;
      case "ui/resource-teardown":
        stop("view closed");
        post({ id: message.id, result: {} });
        break;
      case "ping":
        post({ id: message.id, result: {} });
        break;
      default:
        if (message.id !== undefined && message.method) {
          post({
            id: message.id,
            error: { code: METHOD_NOT_FOUND, message: `Method not found: ${message.method}` },
          });
        }
    }
  });

  async function call(name, args) {
    const result = await request("tools/call", { name, arguments: args });
    if (result.isError) throw new Error(result.content?.[0]?.text ?? "tool error");
    return result.structuredContent;
  }

  // The terminal's colours: what the server answers a program that asks for them (OSC
  // 10, 11, 12; pty_session::Colours' default), whatever the host's theme, so that a
  // program that picks its palette by the background (vim) picks one that reads here.
  // The host's theme colours the rest of the frame.
  const TERMINAL_THEME = { background: "#000000", foreground: "#dddddd", cursor: "#dddddd" };
  function applyContext(context) {
    hostContext = context ?? {};
    const theme = hostContext.theme === "light" ? "light" : "dark";
    document.documentElement.dataset.theme = theme;
    fit();
  }

  // The width the host gives the view: the container's fixed or greatest width, else the
  // frame's own.
  function availableWidth() {
    const dims = hostContext.containerDimensions ?? {};
    const given = dims.width ?? dims.maxWidth;
    const own = document.documentElement.clientWidth || window.innerWidth;
    return Math.max(1, Math.min(typeof given === "number" ? given : own, own));
  }

  // Scales the terminal down (never up) so that every column shows in the width there is.
  function fit() {
    if (!term) return;
    // The layout width (a transform leaves it as it was): the terminal's at full size.
    const natural = box.offsetWidth;
    if (!natural) return;
    const scale = Math.min(1, availableWidth() / natural);
    box.style.transform = scale < 1 ? `scale(${scale})` : "";
    // The holder takes the scaled height, so the view is no taller than what shows.
    holder.style.height = scale < 1 ? `${Math.ceil(box.offsetHeight * scale)}px` : "";
    document.documentElement.dataset.scale = String(scale);
  }

  // Tells the host the view's size whenever it changes, as the SDK's own App does.
  let sent = { width: -1, height: -1 };
  let measuring = false;
  function sizeChanged() {
    if (measuring) return;
    measuring = true;
    requestAnimationFrame(() => {
      measuring = false;
      const root = document.documentElement;
      const height = root.style.height;
      root.style.height = "max-content";
      const size = {
        width: Math.ceil(window.innerWidth),
        height: Math.ceil(root.getBoundingClientRect().height),
      };
      root.style.height = height;
      if (size.width === sent.width && size.height === sent.height) return;
      sent = size;
      notify("ui/notifications/size-changed", size);
    });
  }

  function draw(screen) {
    if (!term) {
      term = new Terminal({ cols: screen.cols, rows: screen.rows, cursorBlink: true, theme: TERMINAL_THEME });
      // The server answers the program's queries; xterm.js must not answer them again.
      quietAnswers(term);
      term.open(box);
      term.onData((data) => {
        if (!sessionId || stopped) return;
        // A focus report (mode 1004, vim asks for it) is no key: the frame gaining or
        // losing focus in the chat must not take the session's write turn, nor be
        // recorded as input.
        if (data === "\x1b[I" || data === "\x1b[O") return;
        // read false: the keys go to the program, the lines stay the agent's to read.
        // One send at a time, in the order typed: calls in flight together may reach the
        // server in any order (6*7 and Enter would arrive as Enter, then 6*7).
        typing = typing
          .then(() => call("pty_send", { id: sessionId, data, submit: false, read: false, settle: "quiet", quietMs: 50, timeoutMs: 1000 }))
          .then(() => {
            delay = FAST_MS;
            schedule(0);
          })
          .catch((err) => (state.textContent = err.message));
      });
      const observer = new ResizeObserver(() => {
        fit();
        sizeChanged();
      });
      for (const element of [box, document.documentElement, document.body]) observer.observe(element);
    }
    if (term.cols !== screen.cols || term.rows !== screen.rows) {
      term.resize(screen.cols, screen.rows);
      fit();
      last = ""; // drawn again at the new size
    }
    // The frame redraws every cell in its colours, the cursor and the program's modes, on
    // an empty terminal: a full reset (ESC c) first undoes what the last frame set (the
    // alternate screen, hidden cursor, key and mouse modes).
    if (screen.frame === last) return false;
    last = screen.frame;
    term.write(`\x1bc${screen.frame}`);
    return true;
  }

  function stop(why) {
    stopped = true;
    clearTimeout(timer);
    timer = null;
    document.documentElement.dataset.ended = "true";
    if (term) term.options.disableStdin = true;
    state.textContent = sessionId ? `${sessionId} · ${why}` : why;
  }

  function schedule(ms) {
    clearTimeout(timer);
    timer = stopped ? null : setTimeout(poll, ms);
  }

  async function poll() {
    timer = null;
    if (!sessionId || busy || stopped || !canCallTools) return;
    if (document.hidden) return; // looked at again when the view shows
    busy = true;
    let changed = false;
    try {
      let giveUp;
      const late = new Promise((_, reject) => {
        giveUp = setTimeout(() => reject(new Error("no answer from the host yet")), LOOK_TIMEOUT_MS);
      });
      const screen = await Promise.race([call("pty_screen", { id: sessionId, frame: true }), late])
        .finally(() => clearTimeout(giveUp));
      if (stopped) return;
      changed = draw(screen);
      if (screen.status === "exited") {
        const how = screen.exitCode !== undefined ? `exit code ${screen.exitCode}`
          : screen.signal ? `killed by ${screen.signal}` : "exited";
        return stop(`ended (${how})`);
      }
      state.textContent = `${sessionId} · ${screen.status}`;
    } catch (err) {
      if (/^(UNKNOWN_SESSION|FOREIGN_SESSION)\b/.test(err.message)) return stop("ended (closed)");
      state.textContent = err.message;
    } finally {
      busy = false;
    }
    delay = nextDelay(delay, changed);
    schedule(delay);
  }

  function follow(id) {
    if (sessionId === id || stopped) return;
    sessionId = id;
    last = "";
    delay = FAST_MS;
    schedule(0);
  }

  window.addEventListener("resize", fit);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && !timer && !busy) schedule(0);
  });

  // For tests: the pure schedule, and a cell of the terminal as xterm.js holds it.
  function cell(row, col) {
    const buffer = term?.buffer.active;
    const at = buffer?.getLine(buffer.viewportY + row)?.getCell(col);
    if (!at) return null;
    return {
      chars: at.getChars(), fg: at.getFgColor(), bg: at.getBgColor(),
      fgPalette: Boolean(at.isFgPalette()), bgPalette: Boolean(at.isBgPalette()),
      bold: Boolean(at.isBold()), inverse: Boolean(at.isInverse()),
    };
  }
  window.ptySessionView = { nextDelay, FAST_MS, SLOW_MS, cell };

  request("ui/initialize", {
    protocolVersion: PROTOCOL_VERSION,
    appInfo: { name: "pty-session terminal", version: "1" },
    appCapabilities: { availableDisplayModes: ["inline"] },
  })
    .then((result) => {
      canCallTools = Boolean(result?.hostCapabilities?.serverTools);
      applyContext(result?.hostContext);
      if (!canCallTools) state.textContent = "this host cannot call the server's tools";
      notify("ui/notifications/initialized", {});
      sizeChanged();
      if (sessionId) schedule(0);
    })
    .catch((err) => (state.textContent = "no host bridge: " + err.message));
})();
