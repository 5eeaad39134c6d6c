// bench/mcp/sdk_server.mjs — the official TypeScript SDK's own kind of stdio server (McpServer and
// StdioServerTransport, as the SDK's examples write one), serving `echo`, the tool skillbox serves in
// the MCP benchmark: {n} -> {"n": n + 1} as JSON text. MCP_NODE_DIR: where the pinned SDK is installed
// (tests/mcp/node/install.sh).
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.resolve(process.env.MCP_NODE_DIR, 'package.json'));
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const server = new McpServer({ name: 'sdk-echo', version: '1.0.0' });
server.registerTool(
  'echo',
  { description: 'Adds one to n', inputSchema: { n: z.number() } },
  async ({ n }) => ({ content: [{ type: 'text', text: JSON.stringify({ n: n + 1 }) }] }),
);
await server.connect(new StdioServerTransport());
