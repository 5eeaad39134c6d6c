// bench/mcp/sdk_http_server.mjs — the official TypeScript SDK's own kind of Streamable HTTP server
// (McpServer with StreamableHTTPServerTransport, stateless, JSON responses, as the SDK's stateless
// example writes one) serving `echo` like sdk_server.mjs, on 127.0.0.1. Prints "url: URL" when it listens.
// MCP_NODE_DIR: where the pinned SDK is installed.
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.resolve(process.env.MCP_NODE_DIR, 'package.json'));
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { z } = require('zod');

function echoServer() {
  const server = new McpServer({ name: 'sdk-echo', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Adds one to n', inputSchema: { n: z.number() } },
    async ({ n }) => ({ content: [{ type: 'text', text: JSON.stringify({ n: n + 1 }) }] }),
  );
  return server;
}

const httpServer = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const server = echoServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    const text = Buffer.concat(chunks).toString();
    await transport.handleRequest(req, res, text ? JSON.parse(text) : undefined);
  });
});
httpServer.listen(0, '127.0.0.1', () => console.log(`url: http://127.0.0.1:${httpServer.address().port}/mcp`));
