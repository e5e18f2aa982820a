// Drives headless Chromium over the DevTools protocol through the web view of
// `pty-session serve`, as a person would: a wrong token, the right one, a session opened,
// keys typed, a password typed. Run by tests/it/browser.rs, which starts the server, the
// agent's sessions and the browser, and checks what the agent sees afterwards.
// Needs nothing but Node (18 or later): the DevTools WebSocket is spoken by a small client
// below, so no flag and no package is needed.
import { writeFileSync } from "node:fs";
import { inflateSync } from "node:zlib";
import { connect } from "./cdp.mjs";

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const CDP_URL = env("CDP_URL");
const PAGE_URL = env("PAGE_URL");
const TOKEN = env("TOKEN");
const PYTHON_ID = env("PYTHON_ID");
const PASSWORD_ID = env("PASSWORD_ID");
const SECRET = env("SECRET");
const SCREENSHOT = env("SCREENSHOT");
const DEADLINE_MS = 30000;

const step = (what, detail) => console.log(JSON.stringify({ step: what, ...detail }));

const cdp = await connect(CDP_URL);
let nextId = 1;
const waiting = new Map();
cdp.onmessage = (event) => {
  const message = JSON.parse(event.data);
  if (message.method === "Runtime.exceptionThrown") {
    console.error("page exception:", JSON.stringify(message.params.exceptionDetails));
  } else if (message.method === "Runtime.consoleAPICalled") {
    console.error("page console:", message.params.args.map((a) => a.value ?? a.description).join(" "));
  } else if (message.method === "Log.entryAdded") {
    console.error("page log:", message.params.entry.text);
  }
  const entry = waiting.get(message.id);
  if (!entry) return;
  waiting.delete(message.id);
  if (message.error) entry.reject(new Error(JSON.stringify(message.error)));
  else entry.resolve(message.result);
};
const send = (method, params = {}, sessionId) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    waiting.set(id, { resolve, reject });
    cdp.send(JSON.stringify({ id, method, params, sessionId }));
  });

const { targetId } = await send("Target.createTarget", { url: "about:blank" });
const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
const page = (method, params) => send(method, params, sessionId);
await page("Page.enable");
await page("Runtime.enable");
await page("Log.enable");
await page("Emulation.setDeviceMetricsOverride", {
  width: 1280, height: 900, deviceScaleFactor: 1, mobile: false,
});

async function evaluate(expression) {
  const { result, exceptionDetails } = await page("Runtime.evaluate", {
    expression, returnByValue: true, awaitPromise: true,
  });
  if (exceptionDetails) throw new Error(`${expression}: ${JSON.stringify(exceptionDetails)}`);
  return result.value;
}

async function waitFor(what, expression) {
  const start = Date.now();
  for (;;) {
    const value = await evaluate(expression);
    if (value) return value;
    if (Date.now() - start > DEADLINE_MS) {
      const screen = await evaluate("document.body.innerText");
      throw new Error(`timed out waiting for ${what}; the page shows:\n${screen}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const screenText = "(document.querySelector('.xterm-rows')?.innerText ?? '')";

async function press(key, code, keyCode, text) {
  await page("Input.dispatchKeyEvent", {
    type: "keyDown", key, code, windowsVirtualKeyCode: keyCode, nativeVirtualKeyCode: keyCode, text,
  });
  await page("Input.dispatchKeyEvent", {
    type: "keyUp", key, code, windowsVirtualKeyCode: keyCode, nativeVirtualKeyCode: keyCode,
  });
}
const enter = () => press("Enter", "Enter", 13, "\r");

async function login(token) {
  await evaluate(`(() => {
    document.getElementById('token').value = ${JSON.stringify(token)};
    document.querySelector('#login-form button').click();
  })()`);
}

// 1. The page, with no token yet.
await page("Page.navigate", { url: PAGE_URL });
await waitFor("the page's script", "document.readyState === 'complete' && document.body.dataset.ready === 'yes'");
await waitFor("the login form", "!document.getElementById('login').hidden");
const csp = await evaluate("typeof Terminal === 'function'");
step("page loaded", { xtermLoaded: csp });

// 2. A wrong token: the error, and no session.
await login("not-the-token-0123456789");
const error = await waitFor("the error", "document.getElementById('login-error').textContent");
const rowsAfterWrong = await evaluate("document.querySelectorAll('#session-rows tr').length");
const listShown = await evaluate("!document.getElementById('sessions').hidden");
if (rowsAfterWrong !== 0 || listShown) throw new Error("a wrong token showed sessions");
step("wrong token", { error, rows: rowsAfterWrong });

// 3. The right token: the agent's sessions, from both of its MCP clients.
await login(TOKEN);
await waitFor("the python session in the list", `!!document.querySelector('tr[data-id="${PYTHON_ID}"]')`);
await waitFor("the password session in the list", `!!document.querySelector('tr[data-id="${PASSWORD_ID}"]')`);
const rows = await evaluate(
  "[...document.querySelectorAll('#session-rows tr')].map(tr => tr.innerText.replace(/\\s+/g, ' ').trim())");
const tokenInStorage = await evaluate(`sessionStorage.getItem('pty-session-token') === ${JSON.stringify(TOKEN)}`);
const tokenInUrl = await evaluate(`location.href.includes(${JSON.stringify(TOKEN)})`);
if (!tokenInStorage || tokenInUrl) throw new Error("the token is not kept as it should be");
step("sessions listed", { rows });

// 4. Open python: its prompt shows.
await evaluate(`document.querySelector('tr[data-id="${PYTHON_ID}"]').click()`);
await waitFor("the >>> prompt", `${screenText}.includes('>>> ')`);
const size = await evaluate("(() => { const r = document.querySelector('.xterm-rows'); return r.children.length; })()");
step("terminal opened", { screen: (await evaluate(screenText)).trimEnd(), rows: size });

// 5. Type 6*7 Enter: 42.
await evaluate("document.querySelector('.xterm-helper-textarea').focus()");
await page("Input.insertText", { text: "6*7" });
await enter();
await waitFor("42", `${screenText}.split('\\n').some(line => line.trim() === '42')`);
step("typed 6*7", { screen: (await evaluate(screenText)).trimEnd() });

// 6. Keystroke round trips: a key typed until the program's echo is on the page.
const latencies = [];
const countOnes = `(${screenText}.match(/7/g) || []).length`;
for (let i = 0; i < 20; i++) {
  const before = await evaluate(countOnes);
  const start = performance.now();
  await page("Input.insertText", { text: "7" });
  for (;;) {
    if ((await evaluate(countOnes)) > before) break;
    if (performance.now() - start > DEADLINE_MS) throw new Error("no echo of a key");
  }
  latencies.push(performance.now() - start);
}
await press("Backspace", "Backspace", 8, "");
for (let i = 1; i < 20; i++) await press("Backspace", "Backspace", 8, "");
latencies.sort((a, b) => a - b);
step("keystroke echo", {
  p50Ms: +latencies[10].toFixed(2), p90Ms: +latencies[18].toFixed(2), samples: latencies.length,
});

// 7. A screenshot, checked not to be blank.
const { data } = await page("Page.captureScreenshot", { format: "png" });
const png = Buffer.from(data, "base64");
writeFileSync(SCREENSHOT, png);
const share = nonBlankShare(png);
if (share < 0.002) throw new Error(`the screenshot looks blank (${share} of its bytes vary)`);
step("screenshot", { path: SCREENSHOT, bytes: png.length, varyingShare: +share.toFixed(4) });

// 8. The password prompt: typed through the page, never echoed.
await evaluate("document.getElementById('back').click()");
await waitFor("the list again", `!!document.querySelector('tr[data-id="${PASSWORD_ID}"]')`);
const badge = await evaluate(`!!document.querySelector('tr[data-id="${PASSWORD_ID}"] .badge')`);
await evaluate(`document.querySelector('tr[data-id="${PASSWORD_ID}"]').click()`);
await waitFor("the password prompt", `${screenText}.includes('Password:')`);
await evaluate("document.querySelector('.xterm-helper-textarea').focus()");
await page("Input.insertText", { text: SECRET });
await enter();
await waitFor("the length", `${screenText}.split('\\n').some(line => line.trim() === '${SECRET.length}')`);
const shown = await evaluate(screenText);
if (shown.includes(SECRET)) throw new Error("the page echoed the password");
step("password typed", { promptBadge: badge, screen: shown.trimEnd() });

// 9. The program exited: the list says so by itself, and the badge is gone.
await evaluate("document.getElementById('back').click()");
const exited = await waitFor("the exit in the list", `(() => {
  const row = document.querySelector('tr[data-id="${PASSWORD_ID}"]');
  return row && row.innerText.includes('exit code 0') && !row.querySelector('.badge') && row.innerText.replace(/\\s+/g, ' ').trim();
})()`);
step("list updated", { row: exited });

await send("Target.closeTarget", { targetId });
cdp.close();
console.log(JSON.stringify({ ok: true }));
process.exit(0);

// The share of the image's filtered scanline bytes that are not zero: a blank image
// (one colour) filters to zeros, a page with text does not.
function nonBlankShare(png) {
  const idat = [];
  let at = 8;
  while (at < png.length) {
    const length = png.readUInt32BE(at);
    const type = png.toString("ascii", at + 4, at + 8);
    if (type === "IDAT") idat.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  let varying = 0;
  for (const byte of raw) if (byte !== 0) varying++;
  return varying / raw.length;
}
