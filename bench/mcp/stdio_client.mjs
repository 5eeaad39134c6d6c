// bench/mcp/stdio_client.mjs — times tools/call of `echo` against a stdio MCP server (bench/mcp/run.sh).
//
//   node stdio_client.mjs sdk ITERATIONS WARMUP -- COMMAND ARGS...
//   node stdio_client.mjs sdk-http ITERATIONS WARMUP -- URL        (Streamable HTTP)
//
// The official SDK's Client over StdioClientTransport, as an agent built on the SDK calls a tool: the
// figure includes the SDK's own client costs (result schema validation, its transport). The minimal
// client without them is C++: bench_mcp_inlib stdio. Prints each timed call's microseconds, one a line.
import { createRequire } from 'node:module';
import path from 'node:path';

const [mode, iterationsText, warmupText, dashes, command, ...args] = process.argv.slice(2);
if (dashes !== '--' || !command) {
  console.error('usage: node stdio_client.mjs raw|sdk ITERATIONS WARMUP -- COMMAND ARGS...');
  process.exit(2);
}
const iterations = Number(iterationsText);
const warmup = Number(warmupText);
const samples = [];

function check(text, i) {
  if (JSON.parse(text).n !== i + 1) throw new Error(`call ${i}: unexpected result ${text}`);
}

if (mode !== 'sdk' && mode !== 'sdk-http') {
  console.error('modes: sdk, sdk-http (the minimal stdio client is bench_mcp_inlib stdio, in C++)');
  process.exit(2);
}
{
  const require = createRequire(path.resolve(process.env.MCP_NODE_DIR, 'package.json'));
  const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
  const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const client = new Client({ name: 'bench', version: '1' });
  // sdk-http: COMMAND is the URL of a running server's /mcp.
  await client.connect(
    mode === 'sdk-http'
      ? new StreamableHTTPClientTransport(new URL(command))
      : new StdioClientTransport({ command, args, stderr: 'inherit', env: process.env }),
  );
  for (let i = 0; i < warmup + iterations; i++) {
    const start = process.hrtime.bigint();
    const r = await client.callTool({ name: 'echo', arguments: { n: i } });
    const us = Number(process.hrtime.bigint() - start) / 1000;
    if (r.isError) throw new Error(JSON.stringify(r));
    check(r.content[0].text, i);
    if (i >= warmup) samples.push(us);
  }
  await client.close();
}
process.stdout.write(samples.map((s) => Math.round(s)).join('\n') + '\n');
