#!/usr/bin/env python3
"""Drives skillbox serve for bench/async/run.sh: synchronous runs, or async runs and their completion.

  async_bench.py sync  N CLIENTS KEY SKILL URL [URL...]    N runs, CLIENTS at once, round robin over URLs
  async_bench.py async N CLIENTS KEY SKILL LEDGER URL [URL...]
                                 N runs queued (one Idempotency-Key each), CLIENTS at once; then waits
                                 until the ledger holds every one completed. LEDGER: sqlite:PATH (the
                                 tenant's runs.sqlite) or postgres:URL (read with psql)
  async_bench.py paced N RATE KEY SKILL LEDGER URL [URL...]
                                 N async runs queued by one client at RATE per second (below capacity),
                                 then as async: the enqueue-to-start wait of a server that keeps up
Prints one JSON line. sync: runs_per_s over the wall time of the whole batch. async: runs_per_s from the
first run's created_at to the last one's ended_at, and the enqueue-to-start wait (started_at -
created_at) p50 and p99 in ms, all on the ledger's own clock; the completion is read from the ledger, so
that checking adds no requests to the servers being measured.
"""
import http.client
import json
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from urllib.parse import urlparse


def connection(url):
    u = urlparse(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=60)


def post(conn, path, key, body, headers=None):
    h = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
    h.update(headers or {})
    conn.request("POST", path, body=body, headers=h)
    r = conn.getresponse()
    return r.status, r.read()


def paced(n, rate, key, skill, ledger, urls):
    body = json.dumps({"input": {"name": "Ada"}})
    conns = [connection(u) for u in urls]
    tag = uuid.uuid4().hex[:8]
    ids = []
    started = time.monotonic()
    for i in range(n):
        time.sleep(max(0.0, started + i / rate - time.monotonic()))
        status, data = post(conns[i % len(conns)], f"/v1/skills/{skill}/run?async=true", key, body,
                            {"Idempotency-Key": f"paced-{tag}-{i}"})
        if status != 202:
            print(f"enqueue answered {status}: {data[:200]!r}", file=sys.stderr)
            sys.exit(1)
        ids.append(json.loads(data)["id"])
    times = wait_for_ledger(ledger, ids)
    waits = sorted(t[1] - t[0] for t in times)
    print(json.dumps({"mode": "paced", "runs": n, "rate": rate,
                      "start_wait_ms_p50": waits[len(waits) // 2],
                      "start_wait_ms_p99": waits[min(len(waits) - 1, (len(waits) * 99) // 100)]}))


def drive(mode, n, clients, key, skill, ledger, urls):
    body = json.dumps({"input": {"name": "Ada"}})
    path = f"/v1/skills/{skill}/run" + ("?async=true" if mode == "async" else "")
    lock = threading.Lock()
    next_run = [0]
    ids = []
    errors = []
    run_tag = uuid.uuid4().hex[:8]

    def client(c):
        conns = [connection(u) for u in urls]
        while True:
            with lock:
                i = next_run[0]
                if i >= n:
                    return
                next_run[0] += 1
            conn = conns[(c + i) % len(conns)]
            headers = {"Idempotency-Key": f"bench-{run_tag}-{i}"} if mode == "async" else None
            for _ in range(200):
                status, data = post(conn, path, key, body, headers)
                if status not in (429, 503):
                    break
                time.sleep(0.01)
            with lock:
                if mode == "sync" and status == 200 and json.loads(data).get("outcome") == "ok":
                    pass
                elif mode == "async" and status == 202:
                    ids.append(json.loads(data)["id"])
                else:
                    errors.append(f"{status} {data[:200]!r}")

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        print(f"{len(errors)} runs failed; the first: {errors[0]}", file=sys.stderr)
        sys.exit(1)
    if mode == "sync":
        seconds = time.monotonic() - started
        print(json.dumps({"mode": mode, "runs": n, "clients": clients, "seconds": round(seconds, 3),
                          "runs_per_s": round(n / seconds, 1)}))
        return
    times = wait_for_ledger(ledger, ids)
    first_created = min(t[0] for t in times)
    last_ended = max(t[2] for t in times)
    waits = sorted(t[1] - t[0] for t in times)
    seconds = (last_ended - first_created) / 1000.0
    print(json.dumps({"mode": mode, "runs": n, "clients": clients, "seconds": round(seconds, 3),
                      "runs_per_s": round(n / seconds, 1),
                      "start_wait_ms_p50": waits[len(waits) // 2],
                      "start_wait_ms_p99": waits[min(len(waits) - 1, (len(waits) * 99) // 100)]}))


def ledger_rows(ledger, ids):
    """(created, started, ended) in ms of each of `ids` that completed; None for a run that failed."""
    kind, where = ledger.split(":", 1)
    if kind == "sqlite":
        db = sqlite3.connect(f"file:{where}?mode=ro", uri=True)
        rows = db.execute("SELECT id, state, created_ms, started_ms, ended_ms FROM runs").fetchall()
        db.close()
    else:
        sql = ("SELECT id, state, (extract(epoch FROM created_at) * 1000)::bigint, "
               "(extract(epoch FROM started_at) * 1000)::bigint, (extract(epoch FROM ended_at) * 1000)::bigint "
               "FROM async_runs")
        text = subprocess.run(["psql", "-qAtX", "-F", "\t", where, "-c", sql], check=True,
                              capture_output=True, text=True).stdout
        rows = [line.split("\t") for line in text.splitlines() if line]
    wanted = set(ids)
    out = {}
    for rid, state, created, started, ended in rows:
        if rid not in wanted:
            continue
        if state in ("failed", "dead"):
            print(f"run {rid} ended {state}", file=sys.stderr)
            sys.exit(1)
        if state == "completed":
            out[rid] = (int(created), int(started), int(ended))
    return out


def wait_for_ledger(ledger, ids):
    give_up = time.monotonic() + 600
    while time.monotonic() < give_up:
        done = ledger_rows(ledger, ids)
        if len(done) == len(ids):
            return list(done.values())
        time.sleep(0.1)
    print("the async runs did not all complete within 10 minutes", file=sys.stderr)
    sys.exit(1)


if __name__ == "__main__":
    mode, n, clients, key, skill, *rest = sys.argv[1:]
    ledger = rest.pop(0) if mode in ("async", "paced") else None
    if mode == "paced":
        paced(int(n), float(clients), key, skill, ledger, rest)
    else:
        drive(mode, int(n), int(clients), key, skill, ledger, rest)
