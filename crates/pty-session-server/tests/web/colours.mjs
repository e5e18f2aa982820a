// The web view's colours, as a person would see them: a session whose red line scrolled
// out of its window before the page opened it shows that line in red when scrolled back
// to, and the terminal is drawn on the background the server was configured with (the
// one a program that asks is told). Run by tests/it/browser.rs.
"use strict";

import { loggedInPage } from "./cdp.mjs";
import { env, step } from "./script.mjs";

const CDP_URL = env("CDP_URL");
const PAGE_URL = env("PAGE_URL");
const TOKEN = env("TOKEN");
const SESSION_ID = env("SESSION_ID");
// The configured background, `#rrggbb`, and as CSS computes it.
const BACKGROUND = env("BACKGROUND");
const BACKGROUND_CSS = env("BACKGROUND_CSS");
const DEADLINE_MS = 30000;

const { page, close, evaluate, waitFor } = await loggedInPage({
  cdpUrl: CDP_URL, pageUrl: PAGE_URL, token: TOKEN, deadlineMs: DEADLINE_MS,
});
await waitFor("the session in the list", `!!document.querySelector('tr[data-id="${SESSION_ID}"]')`);
await evaluate(`document.querySelector('tr[data-id="${SESSION_ID}"]').click()`);
await waitFor("the live terminal", "document.getElementById('terminal-state').textContent === 'live'");

// Every line the terminal holds, its scrollback included, once what came is parsed.
const lines = () => evaluate(`new Promise((resolve) => term.write('', () => {
  const buffer = term.buffer.active;
  const lines = [];
  for (let y = 0; y < buffer.length; y++) lines.push(buffer.getLine(y).translateToString(true));
  resolve({ lines, baseY: buffer.baseY, rows: term.rows });
}))`);
await waitFor("the session's last line", `(() => { const b = term.buffer.active;
  for (let y = 0; y < b.length; y++) if (b.getLine(y).translateToString(true) === '40') return true;
  return false; })()`);
const held = await lines();
const red = held.lines.indexOf("error: red");
step("lines", { red, baseY: held.baseY, rows: held.rows, count: held.lines.length });
if (red < 0) throw new Error("no red line: " + JSON.stringify(held.lines));
if (red >= held.baseY) throw new Error(`the red line (${red}) is on the screen, not in the history (base ${held.baseY})`);

// Scrolled back to, as a person would: the line's cells in their colours.
await evaluate(`term.scrollToLine(${red})`);
const cells = await evaluate(`(() => { const line = term.buffer.active.getLine(${red});
  const of = (col) => { const c = line.getCell(col); return { chars: c.getChars(), palette: c.isFgPalette(), fg: c.getFgColor(), default: c.isFgDefault() }; };
  const after = term.buffer.active.getLine(${red} + 1);
  const next = after.getCell(0);
  return { first: of(0), last: of(9), next: { chars: next.getChars(), default: next.isFgDefault() } }; })()`);
step("history in colour", cells);
if (!(cells.first.palette && cells.first.fg === 1 && cells.last.palette && cells.last.fg === 1)) {
  throw new Error("the red line is not red: " + JSON.stringify(cells));
}
if (!(cells.next.chars === "1" && cells.next.default)) {
  throw new Error("the line after it is not in the default colour: " + JSON.stringify(cells));
}

// The background: the terminal's theme, and what the page draws behind the cells.
const drawn = await evaluate(`({
  theme: term.options.theme.background,
  viewport: getComputedStyle(document.querySelector('#terminal .xterm-viewport')).backgroundColor,
  frame: getComputedStyle(document.getElementById('terminal')).backgroundColor,
})`);
step("background", drawn);
if (drawn.theme !== BACKGROUND || drawn.viewport !== BACKGROUND_CSS || drawn.frame !== BACKGROUND_CSS) {
  throw new Error(`not drawn on ${BACKGROUND}: ${JSON.stringify(drawn)}`);
}

await close();
console.log(JSON.stringify({ ok: true }));
process.exit(0);
