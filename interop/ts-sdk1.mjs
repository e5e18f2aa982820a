// The TypeScript SDK 1.x client (@modelcontextprotocol/sdk), what most MCP hosts are
// built on: over stdio, and over streamable HTTP with its protocol (2025-11-25, with
// Mcp-Session-Id). usage: node ts-sdk1.mjs path/to/pty-session
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ALICE, BIN, BOB, SERVER_ARGS, cancelled, captureWarnings, check, finish, foreign, persisted, scenario, shape,
  startHttpServer, step, versionOf,
} from "./lib.mjs";

const name = `@modelcontextprotocol/sdk ${versionOf("@modelcontextprotocol/sdk")}`;
const warnings = captureWarnings();

function adapter(client) {
  return {
    list: async () => (await client.listTools()).tools,
    call: async (tool, args) => shape(await client.callTool({ name: tool, arguments: args })),
  };
}

async function connect(transport) {
  const client = new Client({ name: "pty-session-interop", version: "1" });
  await client.connect(transport);
  return client;
}

await step(`${name} stdio`, async () => {
  const transport = new StdioClientTransport({ command: BIN, args: ["mcp", ...SERVER_ARGS], stderr: "pipe" });
  let stderr = "";
  transport.stderr.on("data", (chunk) => (stderr += chunk));
  const client = await connect(transport);
  await scenario(`${name} stdio`, adapter(client), warnings);
  await client.close();
  check(`${name} stdio: the server wrote nothing on stderr`, stderr === "", stderr);
});

await step(`${name} http`, async () => {
  const server = await startHttpServer();
  const http = (token) =>
    new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const label = `${name} http (legacy, Mcp-Session-Id)`;
  try {
    const alice = await connect(http(ALICE));
    const bob = await connect(http(BOB));
    check(`${label}: the server gave an Mcp-Session-Id`, Boolean(alice.transport?.sessionId), alice.transport?.sessionId);
    await scenario(label, adapter(alice), warnings);
    await foreign(label, adapter(alice), adapter(bob));
    await bob.close();
    await cancelled(label, adapter(alice), server);
  } finally {
    await server.stop();
  }
});

await persisted(`${name} stdio`, async ({ env, cwd }) => {
  const transport = new StdioClientTransport({ command: BIN, args: ["mcp", "--persist", ...SERVER_ARGS], env, cwd });
  const client = await connect(transport);
  return { c: adapter(client), close: () => client.close() };
});

finish();
