// What a session chose, on the web page: commands holding terminal controls and a
// right-to-left override are listed escaped, as `pty-session ls` shows them; and a
// program that queries the terminal while the page watches it gets one answer per query
// (the server's), xterm.js's own answers and the page's focus report never reaching it.
// Run by tests/it/browser.rs, which opens the sessions, starts the browser and reads what
// the program got. Needs nothing but Node (18 or later).
import { writeFileSync } from "node:fs";
import { loggedInPage } from "./cdp.mjs";
import { env, step } from "./script.mjs";

const CDP_URL = env("CDP_URL");
const PAGE_URL = env("PAGE_URL");
const TOKEN = env("TOKEN");
// {id: the command as the page must show it}
const EXPECTED = JSON.parse(env("EXPECTED"));
const QUERY_ID = env("QUERY_ID");
const GO_FILE = env("GO_FILE");
const DEADLINE_MS = 30000;


const { page, evaluate, waitFor } = await loggedInPage({
  cdpUrl: CDP_URL, pageUrl: PAGE_URL, token: TOKEN, deadlineMs: DEADLINE_MS,
  // The page counts as focused, as a person's window would: its own focus on opening a
  // session then fires a focus event, and xterm.js would report it.
  setUp: (page) => page("Emulation.setFocusEmulationEnabled", { enabled: true }),
});

// 1. The list: each command cell is the escaped text, as one line.
const shownCommands = {};
for (const [id, expected] of Object.entries(EXPECTED)) {
  const cell = await waitFor(`session ${id} in the list`,
    `document.querySelector('tr[data-id="${id}"] td.command')?.textContent`);
  shownCommands[id] = cell;
  if (cell !== expected) {
    throw new Error(`the list shows ${JSON.stringify(cell)} for ${id}, not ${JSON.stringify(expected)}`);
  }
  const html = await evaluate(`document.querySelector('tr[data-id="${id}"] td.command').innerHTML`);
  if (/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(html)) {
    throw new Error(`the cell of ${id} holds a control: ${JSON.stringify(html)}`);
  }
}
step("listed escaped", { shownCommands });

// 2. The querying program, watched: once the page is live, it may ask.
await evaluate(`document.querySelector('tr[data-id="${QUERY_ID}"]').click()`);
await waitFor("the terminal live", "document.getElementById('terminal-state').textContent === 'live'");
await waitFor("the program waiting", "(document.querySelector('.xterm-rows')?.innerText ?? '').includes('waiting')");
const focused = await evaluate("document.activeElement?.classList.contains('xterm-helper-textarea')");
writeFileSync(GO_FILE, "go\n");
const got = await waitFor("what the program got",
  "(document.querySelector('.xterm-rows')?.innerText ?? '').split('\\n').find(l => /^cpr=\\d/.test(l))");
step("queried", { focused, got });
console.log(JSON.stringify({ ok: true }));
process.exit(0);
