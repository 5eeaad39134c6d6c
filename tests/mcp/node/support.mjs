// tests/mcp/node/support.mjs — what the SDK tests share: the pinned clients (installed into the build
// tree by install.sh), the paths CTest passes, temporary skill folders, a loopback HTTP server and a
// connected SDK client on `skillbox mcp`.
//
// Environment (set by tests/CMakeLists.txt): SKILLBOX (the built command), SKILLBOX_SOURCE_DIR,
// SKILLBOX_BUNDLES_DIR (the example bundles built from TypeScript), MCP_NODE_DIR (install.sh's folder).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set; run these tests with ctest (tests/CMakeLists.txt sets it)`);
  return value;
}

export const skillbox = required('SKILLBOX');
export const sourceDir = required('SKILLBOX_SOURCE_DIR');
export const bundlesDir = required('SKILLBOX_BUNDLES_DIR');
export const nodeDir = required('MCP_NODE_DIR');

// The packages live in the build tree, not beside this file: resolve them from there.
export const requireFromClients = createRequire(path.join(nodeDir, 'package.json'));
export const { Client } = requireFromClients('@modelcontextprotocol/sdk/client/index.js');
export const { StdioClientTransport } = requireFromClients('@modelcontextprotocol/sdk/client/stdio.js');
export const types = requireFromClients('@modelcontextprotocol/sdk/types.js');

/** A fresh temporary folder, removed when the process exits. */
export function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `skillbox-sdk-${prefix}-`));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes a skill folder `dir` with `manifest` (skill.json) and `files` ({name: text}). */
export function writeSkill(dir, manifest, files) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'skill.json'), JSON.stringify({ version: '1.0.0', entry: 'index.js', ...manifest }));
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

/** A copy of the built example bundle `name` with the operator's `grants` as skill.json beside it. */
export function bundleCopy(name, grants, root) {
  const dir = path.join(root, name);
  fs.cpSync(path.join(bundlesDir, name), dir, { recursive: true });
  if (grants) fs.writeFileSync(path.join(dir, 'skill.json'), JSON.stringify(grants));
  return dir;
}

/** A loopback HTTP server calling `handle(req, body) -> {status, type, body}`; records every request. */
export async function loopbackServer(handle) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      const out = handle(req, body);
      res.writeHead(out.status ?? 200, { 'Content-Type': out.type ?? 'application/json' });
      res.end(out.body);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return { origin, requests, close: () => new Promise((resolve) => server.close(resolve)) };
}

/**
 * An SDK Client connected to `skillbox mcp ARGS...` over the SDK's StdioClientTransport. `stderr()`
 * gives what the server wrote on stderr so far.
 */
export async function connect(args, { capabilities = {} } = {}) {
  const transport = new StdioClientTransport({
    command: skillbox,
    args: ['mcp', ...args],
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.tmpdir() },
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'skillbox-sdk-test', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

/** The text of a CallToolResult's single text item. */
export function textOf(result) {
  if (!Array.isArray(result.content) || result.content.length !== 1 || result.content[0].type !== 'text')
    throw new Error(`expected one text item, got ${JSON.stringify(result)}`);
  return result.content[0].text;
}

/** Resolves once `predicate()` holds, polling every 20 ms; rejects after `ms`. */
export async function waitFor(predicate, ms, what) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const { StreamableHTTPClientTransport } = requireFromClients('@modelcontextprotocol/sdk/client/streamableHttp.js');

/**
 * `skillbox serve` with one loopback listener without authentication (auth = "none") for a tenant whose
 * skills folder is `skillsDir`; `extra` is more TOML for the top level. Resolves with its /mcp URL and a
 * stop() that ends it.
 */
export async function serveMcp(skillsDir, root, extra = '') {
  const { spawn } = await import('node:child_process');
  const config = path.join(root, 'serve.toml');
  fs.writeFileSync(
    config,
    `listen = [{address = "127.0.0.1:0", auth = "none", tenant = "t"}]\n${extra}\n` +
      `[tenants.t]\nskills = ${JSON.stringify(skillsDir)}\ndata_dir = ${JSON.stringify(path.join(root, 'data'))}\n`,
  );
  const child = spawn(skillbox, ['serve', '--config', config], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.tmpdir(), SKILLBOX_HOME: path.join(root, 'home') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (err += c));
  await waitFor(() => /^url: /m.test(out) || child.exitCode !== null, 30000, 'skillbox serve to listen');
  const match = /^url: (\S+)/m.exec(out);
  if (!match) throw new Error(`skillbox serve did not start: ${out}\n${err}`);
  const url = new URL('mcp', match[1].endsWith('/') ? match[1] : match[1] + '/');
  return {
    url,
    stderr: () => err,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}

/** An SDK Client connected to `url` over the SDK's StreamableHTTPClientTransport. */
export async function connectHttp(url) {
  const client = new Client({ name: 'skillbox-sdk-test', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}
