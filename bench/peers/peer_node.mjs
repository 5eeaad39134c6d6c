// bench/peers/peer_node.mjs — the JavaScript peers of the peers benchmark, with the protocol of the C
// peers (bench/peers/run.sh):
//
//   node peer_node.mjs vm|quickjs-emscripten|isolated-vm WORKLOAD_FILE W1|W2|W3 ITERATIONS   wall, CPU µs
//   node peer_node.mjs vm|quickjs-emscripten|isolated-vm WORKLOAD_FILE W4 SANDBOXES          bytes per sandbox
//
// Exit status 3 means "skipped" (the package is not installed or cannot load), with the reason on
// stderr. Each peer is set up as a sandbox the way its documentation suggests, with skillbox's default
// limits where it has them: a 32 MiB heap, a 512 KiB stack and a 5 s deadline.
import { readFileSync } from 'node:fs';
import vm from 'node:vm';

const SKIPPED = 3;
const MEMORY = 32 * 1024 * 1024;
const STACK = 512 * 1024;
const DEADLINE_MS = 5000;

const [peer, file, workload, countText] = process.argv.slice(2);
const text = readFileSync(file, 'utf8');
const expect = /\/\/ expect: (\S+)/.exec(text)[1];
const source = `(function () {\n${text}\n})()`;
const count = Number(countText);

function check(v) {
  if (String(v) !== expect) {
    console.error(`${peer}: ${file} gave ${v}, expected ${expect}`);
    process.exit(1);
  }
}

async function load(name) {
  try {
    return await import(name);
  } catch (e) {
    console.error(`${name} is not installed or does not load here: ${e.message.split('\n')[0]}`);
    process.exit(SKIPPED);
  }
}

// Each peer: open() builds a sandbox and runs the source in it, returning [value, sandbox];
// close(sandbox) frees what can be freed explicitly.
async function makePeer() {
  if (peer === 'vm') {
    // Node's vm: a new context per run; the only limit it has is the timeout. A context is freed by
    // the garbage collector, not by close().
    return {
      open() {
        const ctx = vm.createContext({});
        return [vm.runInContext(source, ctx, { timeout: DEADLINE_MS }), ctx];
      },
      close() {},
    };
  }
  if (peer === 'quickjs-emscripten') {
    const { getQuickJS, shouldInterruptAfterDeadline } = await load('quickjs-emscripten');
    const QuickJS = await getQuickJS();
    return {
      open() {
        const rt = QuickJS.newRuntime();
        rt.setMemoryLimit(MEMORY);
        rt.setMaxStackSize(STACK);
        rt.setInterruptHandler(shouldInterruptAfterDeadline(Date.now() + DEADLINE_MS));
        const ctx = rt.newContext();
        const result = ctx.evalCode(source);
        let v;
        if (result.error) {
          v = ctx.dump(result.error);
          result.error.dispose();
        } else {
          v = ctx.getNumber(result.value);
          result.value.dispose();
        }
        return [v, { rt, ctx }];
      },
      close({ rt, ctx }) {
        ctx.dispose();
        rt.dispose();
      },
    };
  }
  if (peer === 'isolated-vm') {
    const ivm = (await load('isolated-vm')).default;
    return {
      open() {
        const isolate = new ivm.Isolate({ memoryLimit: MEMORY / (1024 * 1024) });
        const ctx = isolate.createContextSync();
        return [ctx.evalSync(source, { timeout: DEADLINE_MS }), { isolate, ctx }];
      },
      close({ isolate, ctx }) {
        ctx.release();
        isolate.dispose();
      },
    };
  }
  console.error(`unknown peer ${peer}`);
  process.exit(2);
}

const p = await makePeer();
if (workload === 'W4') {
  const [v0, s0] = p.open(); // warm the process once
  check(v0);
  p.close(s0);
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  const live = [];
  for (let i = 0; i < count; i++) {
    const [v, s] = p.open();
    check(v);
    live.push(s);
  }
  globalThis.gc?.();
  const after = process.memoryUsage().rss;
  for (const s of live) p.close(s);
  console.log(Math.round((after - before) / count));
} else {
  const out = [];
  for (let i = 0; i < count; i++) {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    const [v, s] = p.open();
    p.close(s);
    const t1 = process.hrtime.bigint();
    const c = process.cpuUsage(c0);
    check(v);
    out.push(`${(Number(t1 - t0) / 1000).toFixed(1)} ${c.user + c.system}`);
  }
  console.log(out.join('\n'));
}
