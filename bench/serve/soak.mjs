// bench/serve/soak.mjs — the load of the serve soak (bench/serve/soak.sh): requests at a fixed rate.
//
//   node soak.mjs URL KEY BODY SECONDS            prints {"capacity_rps": N} after 5 s of 4 closed loops
//   node soak.mjs URL KEY BODY SECONDS RATE       sends RATE requests a second for SECONDS (open loop:
//                                                 a slow answer does not slow the sender), at most 256 in
//                                                 flight; prints one JSON object with what came back
// Latencies in milliseconds as this client sees them (keep-alive connections).
import http from 'node:http';

const [url, key, body, secondsText, rateText] = process.argv.slice(2);
const target = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function once() {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(
      {
        host: target.hostname, port: target.port, method: 'POST', agent, path: target.pathname,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json',
                   'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
      });
    req.on('error', (e) => resolve({ status: 0, code: e.code, ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
    req.end(body);
  });
}

const pct = (sorted, p) =>
  sorted.length === 0 ? null : +sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

if (rateText === undefined) {
  const end = Date.now() + 5000;
  let ok = 0;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (Date.now() < end) if ((await once()).status === 200) ++ok;
  }));
  agent.destroy();
  console.log(JSON.stringify({ capacity_rps: +(ok / 5).toFixed(1) }));
} else {
  const rate = Number(rateText);
  const seconds = Number(secondsText);
  const start = Date.now();
  const results = [];
  const pending = new Set();
  let skipped = 0;
  for (let i = 0; Date.now() - start < seconds * 1000; ++i) {
    await sleep(start + (i * 1000) / rate - Date.now());
    if (pending.size >= 256) { ++skipped; continue; }
    const p = once().then((r) => { results.push(r); pending.delete(p); });
    pending.add(p);
  }
  await Promise.all(pending);
  agent.destroy();
  const ok = results.filter((r) => r.status === 200).map((r) => r.ms).sort((a, b) => a - b);
  // What the others were: 429/503 refusals (the queue's bounds), or 0 and the error's code for a
  // connection that failed.
  const statuses = {};
  for (const r of results) {
    if (r.status === 200) continue;
    const what = r.status === 0 ? `0 ${r.code ?? 'error'}` : String(r.status);
    statuses[what] = (statuses[what] ?? 0) + 1;
  }
  console.log(JSON.stringify({
    rate, seconds, sent: results.length, ok: ok.length, other: results.length - ok.length, other_statuses: statuses,
    skipped, p50_ms: pct(ok, 50), p99_ms: pct(ok, 99),
  }));
}
