// bench/mcp/stdio_client.mjs — times tools/call of `echo` against a stdio MCP server (bench/mcp/run.sh).
//
//   node stdio_client.mjs raw|sdk ITERATIONS WARMUP -- COMMAND ARGS...
//
// raw: a minimal client of its own (one JSON line out, read lines until the response), so the figure is
// the server's and the pipe's; sdk: the official SDK's Client over StdioClientTransport (adds the SDK's
// own client costs: schema validation, its transport). Prints each timed call's microseconds, one a line.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';

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

if (mode === 'raw') {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout });
  const waiting = new Map();
  lines.on('line', (line) => {
    const m = JSON.parse(line);
    if (m.id !== undefined && waiting.has(m.id)) {
      waiting.get(m.id)(m);
      waiting.delete(m.id);
    }
  });
  let next = 1;
  const request = (method, params) =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  for (let i = 0; i < warmup + iterations; i++) {
    const start = process.hrtime.bigint();
    const r = await request('tools/call', { name: 'echo', arguments: { n: i } });
    const us = Number(process.hrtime.bigint() - start) / 1000;
    if (r.error || r.result.isError) throw new Error(JSON.stringify(r));
    check(r.result.content[0].text, i);
    if (i >= warmup) samples.push(us);
  }
  child.stdin.end();
} else {
  const require = createRequire(path.join(process.env.MCP_NODE_DIR, 'package.json'));
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
