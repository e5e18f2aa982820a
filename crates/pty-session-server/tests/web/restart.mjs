// The web view across a server restart, as a person would see it: logged in, the server
// stops (the page says it cannot be reached and keeps the token), the server starts
// again at the same address (the page lists its sessions without a new login). A line
// `{"ask":"stop"}` or `{"ask":"start"}` asks the test to do that; the answer (a line on
// stdin) says it is done, `start`'s with the id of a session the new server holds.
"use strict";

import { loggedInPage } from "./cdp.mjs";
import { env, step, ask } from "./script.mjs";

const CDP_URL = env("CDP_URL");
const PAGE_URL = env("PAGE_URL");
const TOKEN = env("TOKEN");
const SESSION_ID = env("SESSION_ID");
const DEADLINE_MS = 30000;

const { page, close, evaluate, waitFor } = await loggedInPage({
  cdpUrl: CDP_URL, pageUrl: PAGE_URL, token: TOKEN, deadlineMs: DEADLINE_MS,
});
await waitFor("the session in the list", `!!document.querySelector('tr[data-id="${SESSION_ID}"]')`);
step("logged in", {});

await ask({ ask: "stop" });
const away = await waitFor("the page to say the server is away",
  "!document.getElementById('server-state').hidden && document.getElementById('server-state').textContent");
const kept = await evaluate(`({ token: sessionStorage.getItem('pty-session-token') !== null,
  login: !document.getElementById('login').hidden })`);
step("server stopped", { away, kept });
if (!kept.token || kept.login) throw new Error("the page logged out: " + JSON.stringify(kept));

const { id } = await ask({ ask: "start" });
await waitFor("the new server's session in the list", `!!document.querySelector('tr[data-id="${id}"]')`);
const back = await evaluate(`({ token: sessionStorage.getItem('pty-session-token') !== null,
  login: !document.getElementById('login').hidden, away: !document.getElementById('server-state').hidden })`);
step("server back", back);
if (!back.token || back.login || back.away) throw new Error("not back as it was: " + JSON.stringify(back));

// That session printed a red line before the page opened it: it is drawn in red.
await evaluate(`document.querySelector('tr[data-id="${id}"]').click()`);
await waitFor("the red line in the terminal",
  "typeof term !== 'undefined' && term && term.buffer.active.getLine(0)?.translateToString(true) === 'red plain'");
const cells = await evaluate(`(() => { const line = term.buffer.active.getLine(0);
  const of = (col) => { const c = line.getCell(col); return { chars: c.getChars(), palette: c.isFgPalette(), fg: c.getFgColor(), default: c.isFgDefault() }; };
  return { red: of(0), plain: of(4) }; })()`);
step("history in colour", cells);
if (!(cells.red.palette && cells.red.fg === 1 && cells.plain.default)) throw new Error("not in its colours: " + JSON.stringify(cells));

await close();
console.log(JSON.stringify({ ok: true }));
process.exit(0);
