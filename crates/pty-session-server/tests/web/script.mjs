// What every browser script shares with the test that runs it (tests/it/browser.rs):
// its settings from the environment, its steps as JSON lines on stdout, and questions
// the test answers, one line on stdin each, in the order asked.
import { createInterface } from "node:readline";

/** The environment variable `name`; throws naming it when it is not set. */
export const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

/** Tells the test that `what` happened, with `detail`. */
export const step = (what, detail) => console.log(JSON.stringify({ step: what, ...detail }));

let answers;

/** Asks the test to do `what` (a JSON line on stdout); resolves with its answer. */
export const ask = (what) => {
  if (!answers) {
    // Read stdin only once a script asks: a script that never does ends by itself.
    answers = [];
    createInterface({ input: process.stdin }).on("line", (line) => answers.shift()?.(JSON.parse(line)));
  }
  return new Promise((resolve) => {
    answers.push(resolve);
    console.log(JSON.stringify(what));
  });
};
