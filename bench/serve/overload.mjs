// bench/serve/overload.mjs — the overload figure of the serve benchmark (bench/serve/run.sh): how
// `skillbox serve` answers when offered four times what it can run.
//
//   node overload.mjs URL KEY BODY CAPACITY_CONCURRENCY FACTOR SECONDS
//
// Three phases against URL (POST BODY with the bearer KEY, keep-alive):
//   1. unloaded: one request at a time for 3 s: the p50 every ratio is taken against;
//   2. capacity: CAPACITY_CONCURRENCY requests at a time (as many as the server admits: run threads plus
//      queue) for 3 s: X, the runs per second the server completes;
//   3. overload: an open loop at FACTOR * X requests per second for SECONDS (each request sent on
//      schedule, whether or not earlier ones were answered), answers split into admitted (200) and
//      refused (429/503).
// Prints one JSON object. Latencies are milliseconds as this client sees them, its own event loop
// included: under overload the generator competes for the CPU with the server (same machine).
import http from 'node:http';

const [url, key, body, capText, factorText, secondsText] = process.argv.slice(2);
const target = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1000 });

function once() {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(
      {
        host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json',
                   'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
      });
    req.on('error', () => resolve({ status: 0, ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
    req.end(body);
  });
}

function pct(sorted, p) {
  if (sorted.length === 0) return null;
  return +sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(2);
}

async function closedLoop(concurrency, seconds) {
  const end = Date.now() + seconds * 1000;
  const out = [];
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < end) out.push(await once());
  }));
  return out;
}

const unloaded = (await closedLoop(1, 3)).filter((r) => r.status === 200).map((r) => r.ms).sort((a, b) => a - b);
const cap = await closedLoop(Number(capText), 3);
const capacity = cap.filter((r) => r.status === 200).length / 3;
const rate = capacity * Number(factorText);
const seconds = Number(secondsText);

// Open loop: every millisecond, send what the schedule says is due by now.
const results = [];
const pending = [];
const start = performance.now();
let sent = 0;
await new Promise((resolve) => {
  const tick = setInterval(() => {
    const elapsed = (performance.now() - start) / 1000;
    if (elapsed >= seconds) {
      clearInterval(tick);
      resolve();
      return;
    }
    const due = Math.floor(elapsed * rate);
    for (; sent < due; sent++) pending.push(once().then((r) => results.push(r)));
  }, 1);
});
await Promise.all(pending);
const admitted = results.filter((r) => r.status === 200).map((r) => r.ms).sort((a, b) => a - b);
const refused = results.filter((r) => r.status === 429 || r.status === 503).map((r) => r.ms).sort((a, b) => a - b);
const other = results.filter((r) => ![200, 429, 503].includes(r.status)).length;
agent.destroy();
console.log(JSON.stringify({
  unloaded_p50_ms: pct(unloaded, 50),
  capacity_rps: +capacity.toFixed(1),
  offered_rps: +(sent / seconds).toFixed(1),
  admitted: admitted.length,
  admitted_p50_ms: pct(admitted, 50),
  admitted_p99_ms: pct(admitted, 99),
  refused: refused.length,
  refused_p50_ms: pct(refused, 50),
  refused_p99_ms: pct(refused, 99),
  other,
}));
