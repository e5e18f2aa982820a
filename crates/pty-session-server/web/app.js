// The web view of pty-session: a token's sessions, live, and one of them in xterm.js.
// The token lives in sessionStorage and travels only as a header (fetch) or as the first
// message of a WebSocket, never in a URL.
"use strict";

const TOKEN_KEY = "pty-session-token";
// The font size the terminal is drawn at before it is fitted, and its bounds.
const BASE_FONT = 15;
const MIN_FONT = 5;
const MAX_FONT = 40;
const $ = (id) => document.getElementById(id);

let listAbort = null;   // ends the live list's request
let socket = null;      // the open terminal's WebSocket
let term = null;        // the open terminal
let sessions = [];

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

function show(section) {
  for (const id of ["login", "sessions", "terminal-view"]) {
    $(id).hidden = id !== section;
  }
  $("logout").hidden = section === "login";
}

function loginError(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  stopList();
  $("login-error").textContent = message;
  show("login");
}

function age(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m";
  return Math.floor(s / 3600) + "h" + (Math.floor(s / 60) % 60) + "m";
}

function renderList() {
  const rows = $("session-rows");
  rows.replaceChildren();
  const now = Date.now();
  for (const s of sessions) {
    const tr = document.createElement("tr");
    tr.dataset.id = s.id;
    tr.className = s.running ? "running" : "exited";
    // What the session chose is shown escaped (see safe.js), and set as text, never HTML.
    const cells = [
      shown(s.id), shown(s.command), shown(s.status), age(now - s.startedAtMs),
      String(s.unreadLines),
    ];
    cells.forEach((text, i) => {
      const td = document.createElement("td");
      td.textContent = text;
      if (i === 1) td.className = "command";
      tr.append(td);
    });
    // The prompt it waits at, as it reads: ">>> " and "Password: " look different.
    const badge = document.createElement("td");
    if (s.promptPending) {
      const span = document.createElement("span");
      span.className = "badge";
      const pending = s.pending.trim();
      span.title = "waits at this prompt: " + shown(s.pending);
      span.textContent = shown(pending.length > 60 ? "…" + pending.slice(-59) : pending);
      badge.append(span);
    }
    tr.append(badge);
    tr.addEventListener("click", () => openTerminal(s));
    rows.append(tr);
  }
  $("no-sessions").hidden = sessions.length > 0;
}

function stopList() {
  if (listAbort) listAbort.abort();
  listAbort = null;
}

// While the server cannot be reached, says so and tries again every second with the
// same token: a server stopped and started again (or still starting) is no reason to
// log the person out. Only the server's 401 forgets the token.
function serverAway(abort, reason) {
  const state = $("server-state");
  state.textContent = "The server cannot be reached (" + reason + "); trying again every second.";
  state.hidden = false;
  if ($("login").hidden === false) show("sessions");
  setTimeout(() => listAbort === abort && token() && startList(), 1000);
}

// Reads the server-sent events of /api/sessions/live through fetch, which, unlike
// EventSource, can send the Authorization header. `fromLogin`: the token was just typed,
// and a server that cannot be reached is told on the login form.
async function startList(fromLogin = false) {
  stopList();
  const abort = new AbortController();
  listAbort = abort;
  let response;
  try {
    response = await fetch("/api/sessions/live", {
      headers: { Authorization: "Bearer " + token() },
      signal: abort.signal,
      cache: "no-store",
    });
  } catch (err) {
    if (abort.signal.aborted) return;
    if (fromLogin) loginError("Cannot reach the server: " + err.message);
    else serverAway(abort, err.message);
    return;
  }
  if (response.status === 401) {
    loginError("401 Unauthorized: the server does not know this token.");
    return;
  }
  if (!response.ok && !fromLogin && response.status >= 500) {
    serverAway(abort, "it answered " + response.status);
    return;
  }
  if (!response.ok) {
    loginError("The server answered " + response.status + ": " + (await response.text()));
    return;
  }
  $("login-error").textContent = "";
  $("server-state").hidden = true;
  if ($("terminal-view").hidden) show("sessions");
  showWho(abort);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""))
          .join("\n");
        if (data) {
          sessions = JSON.parse(data);
          renderList();
        }
      }
    }
  } catch (err) {
    if (abort.signal.aborted) return;
  }
  // The server went away or restarted: try again shortly, with the same token.
  if (listAbort === abort) setTimeout(() => token() && startList(), 1000);
}

// Says which token is signed in, by its name.
async function showWho(abort) {
  try {
    const response = await fetch("/api/me", {
      headers: { Authorization: "Bearer " + token() },
      signal: abort.signal,
      cache: "no-store",
    });
    if (response.ok) $("who").textContent = "signed in as " + (await response.json()).name;
  } catch (err) {
    // The list's own request reports a server that cannot be reached.
  }
}

// Draws the terminal as large as the window allows, at the session's size in cells: the
// font size changes, the session's window does not.
function fitToWindow() {
  if (!term) return;
  const box = $("terminal");
  const screen = box.querySelector(".xterm-screen");
  if (!screen) return;
  const top = box.getBoundingClientRect().top + window.scrollY;
  const frame = box.offsetWidth - screen.offsetWidth; // the padding around the cells
  const width = document.documentElement.clientWidth - 2 * box.offsetLeft - frame;
  const height = window.innerHeight - top - frame - 8;
  let size = term.options.fontSize;
  for (let i = 0; i < 6; i++) {
    const ratio = Math.min(width / screen.offsetWidth, height / screen.offsetHeight);
    const next = Math.max(MIN_FONT, Math.min(MAX_FONT, Math.floor(size * ratio * 2) / 2));
    if (next === size) break;
    size = next;
    term.options.fontSize = size;
  }
  // Rounding may leave it a little too large: step down until it fits.
  while (size > MIN_FONT && (screen.offsetWidth > width || screen.offsetHeight > height)) {
    size -= 0.5;
    term.options.fontSize = size;
  }
  box.dataset.fontSize = String(size);
}

// Asks for the session's window to be as many cells as fit this window at the base font
// size: the program sees a resize, as it would from any terminal.
function fitSessionToWindow() {
  if (!term || !socket || socket.readyState !== WebSocket.OPEN) return;
  const screen = $("terminal").querySelector(".xterm-screen");
  const scale = BASE_FONT / term.options.fontSize;
  const cellWidth = (screen.offsetWidth / term.cols) * scale;
  const cellHeight = (screen.offsetHeight / term.rows) * scale;
  const box = $("terminal");
  const top = box.getBoundingClientRect().top + window.scrollY;
  const frame = box.offsetWidth - screen.offsetWidth;
  const width = document.documentElement.clientWidth - 2 * box.offsetLeft - frame;
  const height = window.innerHeight - top - frame - 8;
  const cols = Math.max(20, Math.min(1000, Math.floor(width / cellWidth)));
  const rows = Math.max(5, Math.min(1000, Math.floor(height / cellHeight)));
  socket.send(JSON.stringify({ type: "resize", cols, rows }));
}

function setState(text, isError) {
  $("terminal-state").textContent = text;
  $("terminal-state").classList.toggle("error", !!isError);
}

function closeTerminal() {
  if (socket) socket.close();
  socket = null;
  if (term) term.dispose();
  term = null;
}

// An xterm.js theme of a hello's colours, each `#rrggbb` (anything else is left out).
function themeOf(colours) {
  const theme = {};
  for (const key of ["background", "foreground", "cursor"]) {
    if (/^#[0-9a-fA-F]{6}$/.test(colours[key] ?? "")) theme[key] = colours[key];
  }
  return theme;
}

function openTerminal(s) {
  closeTerminal();
  show("terminal-view");
  $("terminal-title").textContent = shown(s.id) + "  " + shown(s.command);
  setState("connecting");
  // The colours the server answers a program that asks (OSC 10, 11, 12): the same here,
  // so that vim and others pick a palette that reads on this background.
  const t = new Terminal({
    convertEol: false, cursorBlink: true, scrollback: 5000, fontSize: BASE_FONT,
    theme: { background: "#000000", foreground: "#dddddd", cursor: "#dddddd" },
  });
  term = t;
  quietAnswers(t);
  const focus = { focusing: false };
  t.open($("terminal"));
  let greeted = false;
  const ws = new WebSocket(
    (location.protocol === "https:" ? "wss://" : "ws://") + location.host +
      "/api/sessions/" + encodeURIComponent(s.id) + "/stream");
  socket = ws;
  ws.binaryType = "arraybuffer";
  const encoder = new TextEncoder();
  ws.addEventListener("open", () => ws.send(JSON.stringify({ token: token() })));
  ws.addEventListener("message", (event) => {
    if (typeof event.data !== "string") {
      t.write(new Uint8Array(event.data));
      return;
    }
    const message = JSON.parse(event.data);
    if (message.type === "hello") {
      greeted = true;
      // The server's configured colours, when it names them: drawn before the first frame.
      if (message.colours) {
        t.options.theme = { ...t.options.theme, ...themeOf(message.colours) };
        // The frame around the cells too, so no stripe of another colour shows.
        $("terminal").style.background = t.options.theme.background;
      }
      t.resize(message.cols, message.rows);
      fitToWindow();
      setState("live");
      focusQuietly(t, focus);
    } else if (message.type === "resize") {
      // The session's window changed (an agent, or a person): follow it. The resize is
      // queued with the output, so the bytes before it are drawn at the old size.
      t.write("", () => {
        if (term !== t) return;
        t.resize(message.cols, message.rows);
        fitToWindow();
      });
    } else if (message.type === "ended") {
      setState("the session ended");
    } else if (message.type === "skipped") {
      t.write("\r\n\x1b[7m[output skipped: the view fell behind]\x1b[0m\r\n");
    } else if (message.type === "error") {
      setState("error: " + message.message, true);
    }
  });
  ws.addEventListener("close", (event) => {
    if (socket !== ws) return;
    if (event.code === 4401) {
      loginError("401 Unauthorized: the server does not know this token.");
    } else if (!greeted) {
      // Refused before it began (503 when the server's stream cap is reached, or any
      // failed upgrade): the browser gives no body, only that it failed.
      if (!$("terminal-state").classList.contains("error")) {
        setState(
          "error: the server refused the terminal stream (code " + event.code +
            "); it may have too many open streams; try again later", true);
      }
    } else if ($("terminal-state").textContent === "live") {
      setState("disconnected", true);
    }
  });
  t.onData((data) => {
    if (unmadeFocusReport(data, focus)) return;
    if (ws.readyState === WebSocket.OPEN) ws.send(encoder.encode(data));
  });
  t.onBinary((data) => {
    if (ws.readyState !== WebSocket.OPEN) return;
    const bytes = new Uint8Array(data.length);
    for (let i = 0; i < data.length; i++) bytes[i] = data.charCodeAt(i) & 0xff;
    ws.send(bytes);
  });
}

$("login-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const value = $("token").value.trim();
  $("token").value = "";
  if (!value) return;
  sessionStorage.setItem(TOKEN_KEY, value);
  startList(true);
});

$("logout").addEventListener("click", () => {
  closeTerminal();
  $("who").textContent = "";
  stopList();
  sessionStorage.removeItem(TOKEN_KEY);
  $("server-state").hidden = true;
  sessions = [];
  renderList();
  show("login");
});

$("fit-session").addEventListener("click", fitSessionToWindow);
window.addEventListener("resize", fitToWindow);

$("back").addEventListener("click", () => {
  closeTerminal();
  show("sessions");
});

// Ages move on between updates of the list.
setInterval(() => {
  if (!$("sessions").hidden) renderList();
}, 1000);

if (token()) startList();
else show("login");
document.body.dataset.ready = "yes";
