// The TypeScript SDK 2.x client (@modelcontextprotocol/client): over stdio, and over
// streamable HTTP both ways it speaks: legacy (2025-11-25, with Mcp-Session-Id) and
// modern (2026-07-28, no MCP session). usage: node ts-client2.mjs path/to/pty-session
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import {
  ALICE, BIN, BOB, SERVER_ARGS, cancelled, captureWarnings, check, finish, foreign, persisted, scenario, shape,
  startHttpServer, step, versionOf,
} from "./lib.mjs";

const name = `@modelcontextprotocol/client ${versionOf("@modelcontextprotocol/client")}`;
const warnings = captureWarnings();

function adapter(client) {
  return {
    list: async () => (await client.listTools()).tools,
    call: async (tool, args) => shape(await client.callTool({ name: tool, arguments: args })),
  };
}

async function connect(transport, mode) {
  const client = new Client({ name: "pty-session-interop", version: "1" }, { versionNegotiation: { mode } });
  await client.connect(transport);
  return client;
}

const expected = { legacy: "2025-11-25", auto: "2026-07-28" };
for (const mode of ["legacy", "auto"]) {
  const label = `${name} stdio (${mode})`;
  await step(label, async () => {
    const transport = new StdioClientTransport({ command: BIN, args: ["mcp", ...SERVER_ARGS], stderr: "pipe" });
    let stderr = "";
    transport.stderr?.on("data", (chunk) => (stderr += chunk));
    const client = await connect(transport, mode);
    const version = client.getNegotiatedProtocolVersion?.();
    check(`${label}: negotiated ${expected[mode]}`, version === expected[mode], version);
    await scenario(label, adapter(client), warnings);
    await client.close();
    check(`${label}: the server wrote nothing on stderr`, stderr === "", stderr);
  });
}

for (const [mode, what] of [["legacy", "legacy, Mcp-Session-Id"], [{ pin: "2026-07-28" }, "2026-07-28, no session"]]) {
  const label = `${name} http (${what})`;
  await step(label, async () => {
    const server = await startHttpServer();
    const http = (token) =>
      new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    try {
      const alice = await connect(http(ALICE), mode);
      const bob = await connect(http(BOB), mode);
      const version = alice.getNegotiatedProtocolVersion?.();
      const want = mode === "legacy" ? "2025-11-25" : "2026-07-28";
      check(`${label}: negotiated ${want}`, version === want, version);
      await scenario(label, adapter(alice), warnings);
      await foreign(label, adapter(alice), adapter(bob));
      await bob.close();
      await cancelled(label, adapter(alice), server);
    } finally {
      await server.stop();
    }
  });
}

await persisted(`${name} stdio`, async ({ env, cwd }) => {
  const transport = new StdioClientTransport({ command: BIN, args: ["mcp", "--persist", ...SERVER_ARGS], env, cwd });
  const client = await connect(transport, "auto");
  return { c: adapter(client), close: () => client.close() };
});

finish();
