// Drives headless Chromium over the DevTools protocol through the web view of
// `pty-session serve`, as a person would: a wrong token, the right one, a session opened,
// keys typed, a password typed; vim and htop drawn in their colours from the first frame
// and fitted to windows of 800x600, 1280x800 and 1600x1000 (screenshots of each); the
// page following an agent's resize, and resizing the session itself on request; a
// token's newer streams closing its oldest while the page's own is served. A line `{"ask":"send",...}` asks the test for a
// pty_send by the agent; it answers on stdin. Run by tests/it/browser.rs, which starts the server, the
// agent's sessions and the browser, and checks what the agent sees afterwards.
// Needs nothing but Node (18 or later): the DevTools WebSocket is spoken by a small client
// below, so no flag and no package is needed.
import { writeFileSync } from "node:fs";
import { inflateSync } from "node:zlib";
import { connect, openPage, pageScripts } from "./cdp.mjs";
import { env, step, ask } from "./script.mjs";

const CDP_URL = env("CDP_URL");
const PAGE_URL = env("PAGE_URL");
const TOKEN = env("TOKEN");
const PYTHON_ID = env("PYTHON_ID");
const PASSWORD_ID = env("PASSWORD_ID");
const VIM_ID = env("VIM_ID");
const HTOP_ID = env("HTOP_ID");
const SECRET = env("SECRET");
const SCREENSHOT = env("SCREENSHOT");
const DEADLINE_MS = 30000;



const { page, close } = await openPage(CDP_URL, (message) => {
  if (message.method === "Runtime.exceptionThrown") {
    console.error("page exception:", JSON.stringify(message.params.exceptionDetails));
  } else if (message.method === "Runtime.consoleAPICalled") {
    console.error("page console:", message.params.args.map((a) => a.value ?? a.description).join(" "));
  } else if (message.method === "Log.entryAdded") {
    console.error("page log:", message.params.entry.text);
  }
});
await page("Page.enable");
await page("Runtime.enable");
await page("Log.enable");
await page("Emulation.setDeviceMetricsOverride", {
  width: 1280, height: 900, deviceScaleFactor: 1, mobile: false,
});

const { evaluate, waitFor } = pageScripts(page, DEADLINE_MS);

const screenText = "(document.querySelector('.xterm-rows')?.innerText ?? '')";
const texts = (screen) => screen.rows.map((row) => row.text).join("\n");
const lastRowText = "term.buffer.active.getLine(term.buffer.active.viewportY + term.rows - 1).translateToString(true)";


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
// The list shows the prompt each waits at, and the page who is signed in.
const passwordBadge = await waitFor("the password prompt in the list",
  `document.querySelector('tr[data-id="${PASSWORD_ID}"] .badge')?.textContent`);
if (passwordBadge !== "Password:") throw new Error(`the list shows ${passwordBadge}, not the prompt`);
const pythonBadge = await evaluate(`document.querySelector('tr[data-id="${PYTHON_ID}"] .badge')?.textContent`);
if (pythonBadge !== ">>>") throw new Error(`the list shows ${pythonBadge} for python`);
const who = await waitFor("who is signed in", "document.getElementById('who').textContent");
if (!who.includes("default")) throw new Error(`#who says ${who}`);
const tokenInStorage = await evaluate(`sessionStorage.getItem('pty-session-token') === ${JSON.stringify(TOKEN)}`);
const tokenInUrl = await evaluate(`location.href.includes(${JSON.stringify(TOKEN)})`);
if (!tokenInStorage || tokenInUrl) throw new Error("the token is not kept as it should be");
step("sessions listed", { rows, passwordBadge, pythonBadge, who });

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

// 10. htop: its first frame in colour, fitted at three window sizes (a screenshot each).
await openSession(HTOP_ID, "PID");
const htopFirst = await cells();
const header = htopFirst.rows.findIndex((row) => /PID\s+USER/.test(row.text));
if (header < 0) throw new Error("no column header in htop's first frame:\n" + texts(htopFirst));
if (!htopFirst.rows[header].cells.some((cell) => cell.bgMode !== 0)) {
  throw new Error("htop's column header has no background colour in the first frame");
}
const keyBar = htopFirst.rows[htopFirst.rows.length - 1];
if (!keyBar.cells.some((cell) => cell.bgMode !== 0)) throw new Error("htop's key bar is uncoloured");
for (const [width, height] of [[800, 600], [1280, 800], [1600, 1000]]) {
  const fit = await fitsAt(width, height, "Quit");
  const path = SCREENSHOT.replace(/\.png$/, `-htop-${width}x${height}.png`);
  await screenshot(path);
  step("htop fitted", { width, height, ...fit, path });
}
// htop redraws all of it (Ctrl-L), then opens its filter (F4) on the last row: once the
// filter shows, the redraw before it is on the page. Its rows must be as first drawn.
// A first frame taken while htop was itself redrawing (its second look at the processes
// comes a moment after its start, later on a loaded machine) shows that redraw half done:
// the page is opened again for a new first frame, three times at most.
let first = htopFirst;
let same;
for (let attempt = 1; ; attempt++) {
  await evaluate("term.input('\\x0c\\x1bOS')");
  await waitFor("htop's filter prompt", `${lastRowText}.includes('Filter')`);
  const htopAgain = await cells();
  same = compareRows(first, htopAgain, first.rows.length - 1);
  if (same.compared.includes(header)) break;
  if (attempt === 3) {
    throw new Error(`htop's column header changed text: first ${JSON.stringify(first.rows[header].text)}, ` +
      `then ${JSON.stringify(htopAgain.rows[header].text)}`);
  }
  await evaluate("term.input('\\x1b')");
  await evaluate("document.getElementById('back').click()");
  await openSession(HTOP_ID, "PID");
  first = await cells();
}
step("htop first frame", { comparedRows: same.compared.length, header, cursor: first.cursor });
await evaluate("term.input('\\x1b')");

// 11. vim: its first frame as vim draws it itself, at 800x600 and 1600x1000.
await evaluate("document.getElementById('back').click()");
await openSession(VIM_ID, "~");
const vimFirst = await cells();
const tilde = vimFirst.rows.find((row) => row.text === "~");
if (!tilde || tilde.cells[0].fgMode === 0) throw new Error("vim's ~ lines are uncoloured:\n" + texts(vimFirst));
const status = vimFirst.rows[vimFirst.rows.length - 2];
if (!status.text.includes("notes.txt") || !status.cells[0].inverse) {
  throw new Error("vim's status line is not drawn in reverse: " + JSON.stringify(status.cells[0]));
}
for (const [width, height] of [[800, 600], [1600, 1000]]) {
  const fit = await fitsAt(width, height, "notes.txt", 2);
  const path = SCREENSHOT.replace(/\.png$/, `-vim-${width}x${height}.png`);
  await screenshot(path);
  step("vim fitted", { width, height, ...fit, path });
}
await evaluate(`term.input('\\x0c:echo "mark"\\r')`);
await waitFor("vim's echo", `${lastRowText}.includes('mark')`);
const vimAgain = await cells();
const vimSame = compareRows(vimFirst, vimAgain, vimFirst.rows.length - 1);
if (vimSame.compared.length !== vimFirst.rows.length - 1) {
  throw new Error("vim's rows changed text after a redraw: " + JSON.stringify(vimSame) + "\nfirst:\n" + texts(vimFirst) + "\nagain:\n" + texts(vimAgain));
}
step("vim first frame", { comparedRows: vimSame.compared.length, cursor: vimFirst.cursor });

// 12. The agent resizes vim to 80x24: the page follows, and vim draws at that size.
await ask({ ask: "send", id: VIM_ID, arguments: { data: "", cols: 80, rows: 24 } });
await waitFor("the page at 80x24", "term.cols === 80 && term.rows === 24");
await waitFor("vim's status line on row 23",
  "term.buffer.active.getLine(term.buffer.active.viewportY + 22).translateToString(true).includes('notes.txt')");
const followed = await fitsAt(1600, 1000, "", 2);
step("followed the agent's resize", { cols: 80, rows: 24, ...followed });

// 13. "Fit the session to my window": the session takes the page's size, and says so.
await evaluate("document.getElementById('fit-session').click()");
const fitted = await waitFor("the session's new size", "term.cols > 80 && term.rows > 24 && [term.cols, term.rows]");
await waitFor("vim redrawn at the new size",
  `term.buffer.active.getLine(term.buffer.active.viewportY + ${fitted[1] - 2}).translateToString(true).includes('notes.txt')`);
step("session fitted to the window", { cols: fitted[0], rows: fitted[1], fit: await fitsAt(1600, 1000, "", 2) });

// 14. A token's streams are capped (maxStreamsPerToken, 32): its newer ones close its
// oldest, saying why, so the view a person opens last is always served.
await evaluate("document.getElementById('back').click()");
const streamUrl = PAGE_URL.replace(/^http:/, "ws:") + `api/sessions/${PYTHON_ID}/stream`;
const held = [];
let replaced = 0;
for (let i = 0; i < 40; i++) {
  const socket = await connect(streamUrl);
  const hello = new Promise((resolve) => { socket.onmessage = resolve; });
  socket.send(JSON.stringify({ token: TOKEN }));
  await hello;
  socket.onmessage = (event) => { if (/newer stream/.test(event.data)) replaced++; };
  held.push(socket);
}
await evaluate(`document.querySelector('tr[data-id="${PYTHON_ID}"]').click()`);
await waitFor("the page's own stream, live", "document.getElementById('terminal-state').textContent === 'live'");
for (let waited = 0; replaced < 8 && waited < DEADLINE_MS; waited += 50) {
  await new Promise((r) => setTimeout(r, 50));
}
if (replaced < 8) throw new Error(`only ${replaced} of 40 streams were closed for newer ones`);
for (const socket of held) socket.close();
step("streams capped per token", { held: held.length, replaced });

await close();
console.log(JSON.stringify({ ok: true }));
process.exit(0);

// Opens a session from the list and waits until it is live with `text` on its screen.
async function openSession(id, text) {
  await waitFor("the session in the list", `!!document.querySelector('tr[data-id="${id}"]')`);
  await evaluate(`document.querySelector('tr[data-id="${id}"]').click()`);
  await waitFor("the live terminal", "document.getElementById('terminal-state').textContent === 'live'");
  await waitFor(JSON.stringify(text), `${screenText}.includes(${JSON.stringify(text)})`);
}

// Every cell of the terminal's screen as xterm.js holds it, once what came is parsed. A
// cell never written and a space look the same, and count the same.
async function cells() {
  return evaluate(`new Promise((resolve) => term.write('', () => {
    const buffer = term.buffer.active;
    const rows = [];
    for (let y = 0; y < term.rows; y++) {
      const line = buffer.getLine(buffer.viewportY + y);
      const cells = [];
      for (let x = 0; x < term.cols; x++) {
        const c = line.getCell(x);
        cells.push({
          chars: c.getChars() || ' ', fgMode: c.getFgColorMode(), fg: c.getFgColor(),
          bgMode: c.getBgColorMode(), bg: c.getBgColor(), bold: c.isBold(),
          inverse: c.isInverse(), dim: c.isDim(), italic: c.isItalic(),
          underline: c.isUnderline(),
        });
      }
      rows.push({ text: line.translateToString(true).trimEnd(), cells });
    }
    resolve({ rows, cursor: [buffer.cursorX, buffer.cursorY] });
  }))`);
}


// The rows before `upTo` whose text is the same in both, each checked to have the same
// colours and attributes cell by cell.
function compareRows(first, again, upTo) {
  const compared = [];
  for (let y = 0; y < upTo; y++) {
    if (first.rows[y].text !== again.rows[y].text) continue;
    first.rows[y].cells.forEach((cell, x) => {
      const other = again.rows[y].cells[x];
      if (JSON.stringify(visible(cell)) !== JSON.stringify(visible(other))) {
        throw new Error(`row ${y} column ${x} was first drawn ${JSON.stringify(cell)}, ` +
          `by the program ${JSON.stringify(other)}: ${JSON.stringify(first.rows[y].text)}`);
      }
    });
    compared.push(y);
  }
  return { compared };
}

// What of a cell shows: a blank's foreground, weight and slant show nowhere.
function visible(cell) {
  if (cell.chars !== " " || cell.inverse || cell.underline) return cell;
  return { chars: " ", bgMode: cell.bgMode, bg: cell.bg };
}

// Sets the window's size and waits until the whole terminal is in view, its row
// `fromBottom` (1: the last) showing `text`, with nothing to scroll.
async function fitsAt(width, height, text, fromBottom = 1) {
  await page("Emulation.setDeviceMetricsOverride", { width, height, deviceScaleFactor: 1, mobile: false });
  const check = `(() => {
    const rows = document.querySelectorAll('#terminal .xterm-rows > div');
    const row = rows[rows.length - ${fromBottom}];
    const screen = document.querySelector('#terminal .xterm-screen').getBoundingClientRect();
    const box = row.getBoundingClientRect();
    const doc = document.documentElement;
    // Large windows get a large terminal: it fills most of one of the two directions.
    const grown = screen.width >= innerWidth * 0.85 || screen.height >= (innerHeight - 120) * 0.85;
    const fits = rows.length === term.rows && box.bottom <= innerHeight && screen.right <= innerWidth &&
      screen.bottom <= innerHeight && doc.scrollWidth <= innerWidth && doc.scrollHeight <= innerHeight &&
      row.textContent.includes(${JSON.stringify(text)}) && grown;
    return fits && { fontSize: term.options.fontSize, screen: [Math.round(screen.width), Math.round(screen.height)],
      rowBottom: Math.round(box.bottom), rowText: row.textContent.trim().slice(0, 60) };
  })()`;
  return waitFor(`the terminal to fit ${width}x${height}`, check);
}

async function screenshot(path) {
  const { data } = await page("Page.captureScreenshot", { format: "png" });
  writeFileSync(path, Buffer.from(data, "base64"));
}

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
