// bench/mcp/stdio_client.mjs — times tools/call of `echo` against a stdio MCP server (bench/mcp/run.sh).
//
//   node stdio_client.mjs sdk ITERATIONS WARMUP -- COMMAND ARGS...
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

if (mode !== 'sdk') {
  console.error('only the sdk mode is here: the minimal client is bench_mcp_inlib stdio (C++)');
  process.exit(2);
}
{
  const require = createRequire(path.resolve(process.env.MCP_NODE_DIR, 'package.json'));
  const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command, args, stderr: 'inherit', env: process.env }));
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
