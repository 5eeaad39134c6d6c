// bench/serve/peer_server.mjs — the peers of the serve benchmark (bench/serve/run.sh): a Node HTTP server
// (keep-alive) that answers POST {"input": ...} by running the skill in a fresh sandbox per request, as
// `skillbox serve` does, and answering {"outcome": "ok", "value": ...}.
//
//   node [--no-node-snapshot] peer_server.mjs isolated-vm|quickjs-emscripten SKILL_JS
//
// Prints "url: http://127.0.0.1:PORT" once listening; exit status 3 when the peer's package is not
// installed or does not load here (the reason on stderr). Limits as skillbox's defaults where the peer
// has them: a 32 MiB heap, a 512 KiB stack (quickjs-emscripten) and a 5 s deadline. The sandbox parses
// the input and stringifies the value itself, as a skillbox run does.
import http from 'node:http';
import { readFileSync } from 'node:fs';

const SKIPPED = 3;
const MEMORY_MB = 32;
const DEADLINE_MS = 5000;
const [peer, skillFile] = process.argv.slice(2);
// The skill's module text, its `export default` made an expression: the same function skillbox runs.
const fn = readFileSync(skillFile, 'utf8').replace(/^\s*export default\s*/m, 'const f = ');
const program = (inputJson) => `(function () {\n${fn}\nreturn JSON.stringify(f(JSON.parse(${JSON.stringify(inputJson)})));\n})()`;

async function load(name) {
  try {
    return await import(name);
  } catch (e) {
    console.error(`${name} is not installed or does not load here: ${e.message.split('\n')[0]}`);
    process.exit(SKIPPED);
  }
}

async function makeRun() {
  if (peer === 'isolated-vm') {
    const ivm = (await load('isolated-vm')).default;
    return (inputJson) => {
      const isolate = new ivm.Isolate({ memoryLimit: MEMORY_MB });
      try {
        const ctx = isolate.createContextSync();
        const out = ctx.evalSync(program(inputJson), { timeout: DEADLINE_MS });
        ctx.release();
        return out;
      } finally {
        isolate.dispose();
      }
    };
  }
  if (peer === 'quickjs-emscripten') {
    const { getQuickJS, shouldInterruptAfterDeadline } = await load('quickjs-emscripten');
    const QuickJS = await getQuickJS();
    return (inputJson) => {
      const rt = QuickJS.newRuntime();
      rt.setMemoryLimit(MEMORY_MB * 1024 * 1024);
      rt.setMaxStackSize(512 * 1024);
      rt.setInterruptHandler(shouldInterruptAfterDeadline(Date.now() + DEADLINE_MS));
      const ctx = rt.newContext();
      try {
        const result = ctx.evalCode(program(inputJson));
        if (result.error) {
          const e = ctx.dump(result.error);
          result.error.dispose();
          throw new Error(String(e?.message ?? e));
        }
        const out = ctx.getString(result.value);
        result.value.dispose();
        return out;
      } finally {
        ctx.dispose();
        rt.dispose();
      }
    };
  }
  console.error(`unknown peer ${peer}`);
  process.exit(2);
}

const run = await makeRun();
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body;
    try {
      const input = JSON.parse(Buffer.concat(chunks).toString() || '{}').input ?? null;
      body = `{"outcome":"ok","value":${run(JSON.stringify(input))}}`;
    } catch (e) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'invalid_request', message: String(e.message) } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body + '\n');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  console.log(`url: http://127.0.0.1:${server.address().port}`);
});
