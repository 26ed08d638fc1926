// tests/e2e/mcp/client.mjs - drive `sharness-client mcp` with the official MCP
// TypeScript SDK client (stdio transport).  Usage:
//   node client.mjs CLIENT_BINARY CALLS_JSON
// CALLS_JSON is an array of run_command argument objects.  Prints one JSON
// object: the negotiated protocol version, server info, the tool list and
// every call's result (or the thrown error's message).  The shell test checks it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, callsJson] = process.argv.slice(2);
const calls = JSON.parse(callsJson || "[]");
const out = { calls: [] };
const transport = new StdioClientTransport({
  command: bin,
  args: ["mcp"],
  env: process.env,          // SHARNESS_URL/CA/CERT/KEY from the harness
  stderr: "inherit",
});
transport.setProtocolVersion = (v) => { out.protocolVersion = v; };
const client = new Client({ name: "sharness-e2e", version: "0.0.1" });
try {
  await client.connect(transport);  // initialize + notifications/initialized
  out.serverVersion = client.getServerVersion();
  out.capabilities = client.getServerCapabilities();
  out.instructions = client.getInstructions();
  out.tools = (await client.listTools()).tools;
  out.ping = await client.ping();
  for (const args of calls) {
    try {
      out.calls.push(await client.callTool({ name: "run_command", arguments: args }));
    } catch (e) {
      out.calls.push({ thrown: String(e && e.message ? e.message : e) });
    }
  }
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
    out.unknownTool = "no error";
  } catch (e) {
    out.unknownTool = String(e.message);
  }
} catch (e) {
  out.fatal = String(e && e.stack ? e.stack : e);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + "\n");
