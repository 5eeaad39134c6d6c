// bench/serve/overload.mjs — the overload figure of the serve benchmark (bench/serve/run.sh): how
// `skillbox serve` answers when offered four times what it can run.
//
//   node overload.mjs URL KEY BODY CAPACITY_CONCURRENCY FACTOR SECONDS
//
// Three phases against URL (POST BODY with the bearer KEY, keep-alive):
//   1. unloaded: one request at a time for 3 s: the p50 every ratio is taken against;
//   2. capacity: CAPACITY_CONCURRENCY requests at a time (as many as the server admits: run threads plus
//      queue places) for 3 s: the runs per second the server completes;
//   3. overload: FACTOR * CAPACITY_CONCURRENCY clients in closed loops for SECONDS, answers split into
//      admitted (200) and refused (429/503).
// Prints one JSON object. Latencies are milliseconds as this client sees them, its own event loop
// included: under overload the generator competes for the CPU with the server (same machine).
import http from 'node:http';

const [url, key, body, capText, factorText, secondsText] = process.argv.slice(2);
const target = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1000 });

function once(method = 'POST') {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(
      {
        host: target.hostname, port: target.port, method, agent,
        path: method === 'POST' ? target.pathname : '/healthz',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json',
                   'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
      });
    req.on('error', () => resolve({ status: 0, ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
    req.end(method === 'POST' ? body : undefined);
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
const seconds = Number(secondsText);

// Overload: FACTOR times as many clients as the server admits, each sending its next request as soon as
// the last is answered (a refused client comes straight back: a flood that ignores Retry-After). A GET
// /healthz first marks where this phase starts in the server's log (run.sh reads its times there).
await once('GET');
const clients = Number(capText) * Number(factorText);
const results = await closedLoop(clients, seconds);
const sent = results.length;
const admitted = results.filter((r) => r.status === 200).map((r) => r.ms).sort((a, b) => a - b);
const refused = results.filter((r) => r.status === 429 || r.status === 503).map((r) => r.ms).sort((a, b) => a - b);
const other = results.filter((r) => ![200, 429, 503].includes(r.status)).length;
agent.destroy();
console.log(JSON.stringify({
  unloaded_p50_ms: pct(unloaded, 50),
  capacity_rps: +capacity.toFixed(1),
  clients,
  answered_rps: +(sent / seconds).toFixed(1),
  admitted: admitted.length,
  admitted_p50_ms: pct(admitted, 50),
  admitted_p99_ms: pct(admitted, 99),
  refused: refused.length,
  refused_p50_ms: pct(refused, 50),
  refused_p99_ms: pct(refused, 99),
  other,
}));
