// What the views show and send safely, shared by the web page (served as /safe.js) and the
// MCP App view (inlined into its HTML): text a session chose shown escaped, and xterm.js
// kept from answering the program's queries, which the server answers already.
"use strict";

// Text a session chose (a command, a prompt), as a person should see it: the mirror of
// `shown` in src/shown.rs, escape for escape, so that the page and `pty-session ls` show
// a command alike. Control characters (C0, DEL, C1) would be drawn as nothing or as boxes,
// and bidirectional controls (U+202E and its kin) would reorder the characters after them
// — a command could pass for another. Shown escaped, the person sees what was typed.
// The result is set as text (textContent), never as HTML.
function shown(text) {
  return String(text).replace(
    /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g,
    (c) => {
      switch (c) {
        case "\x1b": return "\\e";
        case "\n": return "\\n";
        case "\r": return "\\r";
        case "\t": return "\\t";
      }
      const code = c.charCodeAt(0);
      if (code < 0x20 || code === 0x7f) return "\\x" + code.toString(16).padStart(2, "0");
      return "\\u{" + code.toString(16) + "}";
    });
}

// Keeps xterm.js from answering the queries a program writes (where is the cursor, what
// terminal is this, what is a mode's or a setting's state, what colour is the background).
// The server's terminal answers each of them once, as the program writes it, whoever
// watches; xterm.js's answers would come out of `onData` like keys, and the program would
// read a second `ESC[3;1R` or `ESC[?1;2c` for every page that watches.
//
// Why parser hooks and not a filter on `onData`: `onData` gives an answer and a person's
// keys alike (an answer is indistinguishable from pasted or typed text of the same bytes),
// so a pattern on it would guess. xterm.js's parser API lets a handler claim a sequence
// before xterm.js's own does; ours claim the queries and do nothing, so xterm.js never
// composes an answer. The list is every query xterm.js 5.5 answers (each of its
// `triggerDataEvent` calls): DA1 `CSI c`, DA2 `CSI > c`, DSR and the cursor position
// report `CSI n` / `CSI ? n`, DECRQM `CSI $ p` / `CSI ? $ p`, DECRQSS `DCS $ q`, and the
// colour queries of OSC 4, 10, 11 and 12 (a sequence holding `?`; one that only sets a
// colour is left to xterm.js, which draws it). The window reports of `CSI t` are off by
// xterm.js's default (`windowOptions`), so nothing answers them. Focus reports are not
// answers but events: see `focusQuietly`.
function quietAnswers(term) {
  const claim = () => true;
  const parser = term.parser;
  for (const id of [
    { final: "c" },
    { prefix: ">", final: "c" },
    { final: "n" },
    { prefix: "?", final: "n" },
    { intermediates: "$", final: "p" },
    { prefix: "?", intermediates: "$", final: "p" },
  ]) {
    parser.registerCsiHandler(id, claim);
  }
  parser.registerDcsHandler({ intermediates: "$", final: "q" }, claim);
  for (const osc of [4, 10, 11, 12]) {
    parser.registerOscHandler(osc, (data) => data.split(";").includes("?"));
  }
}

// Focuses `term` without telling the program: when the program asked for focus reports
// (mode 1004), xterm.js reports every focus of its text area as `ESC[I`, the page's own
// focus on opening a session included. Nobody focused anything then, so that report is
// dropped: `send` is called with what `onData` gives, except a focus report that comes
// while this runs (the browser fires the focus event within `focus()`). A person's own
// focus changes later (a click into the terminal, another tab) still reach the program.
function focusQuietly(term, state) {
  state.focusing = true;
  try {
    term.focus();
  } finally {
    state.focusing = false;
  }
}

// Whether `data` from `onData` is a focus report made while `focusQuietly` ran.
function unmadeFocusReport(data, state) {
  return state.focusing && (data === "\x1b[I" || data === "\x1b[O");
}
