#!/usr/bin/env bash
# bench/async/run.sh — async runs against synchronous runs of the same skill, in one run
# (docs/benchmarks.md "Async runs"). The trivial skill of bench/serve (greet), N runs, C clients:
#
#   1. one server, runs in its data directory (runs.sqlite): sync, then async;
#   2. PostgreSQL 15 (a throwaway cluster on 127.0.0.1, scripts/pg-cluster.sh): one replica sync, then
#      async; then two replicas, async, the runs queued on both.
#
# Async throughput is end to end: from the first run's created_at to the last one's ended_at in the
# ledger (enqueue -> claim -> run -> result stored); the enqueue-to-start wait is started_at - created_at
# (under that flood it is mostly the backlog's). Then the same wait with one client queueing at a steady
# rate below capacity (ASYNC_PACED_RATE, 50 runs/s): the delay a run meets on a server that keeps up.
#
#   bench/async/run.sh                         N=2000, C=8, process isolation
#   ASYNC_RUNS=500 ASYNC_ISOLATION=inprocess bench/async/run.sh
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$repo/build}
runs=${ASYNC_RUNS:-2000}
clients=${ASYNC_CLIENTS:-8}
isolation=${ASYNC_ISOLATION:-process}
paced_runs=${ASYNC_PACED_RUNS:-300}
paced_rate=${ASYNC_PACED_RATE:-50}  # runs per second, about a quarter of what one server here runs
state=$(mktemp -d /tmp/skillbox-bench-async.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  bash "$repo/scripts/pg-cluster.sh" stop "$state/pg" >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT

head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$state/key"
key=$(cat "$state/key")
skills="$repo/bench/serve/skills"

# serve NAME [ARGS...]: starts a server, waits for its url line, sets $url; stops none.
serve() {
  local name=$1
  shift
  "$build/skillbox" serve "$skills" --api-key-file "$state/key" --isolation "$isolation" \
    --data-dir "$state/$name" "$@" --listen 127.0.0.1:0 >"$state/$name.out" 2>"$state/$name.err" &
  pids+=($!)
  for _ in $(seq 1 300); do
    url=$(sed -n 's/^url: //p' "$state/$name.out" | head -n 1)
    [[ -n "$url" ]] && return 0
    sleep 0.1
  done
  echo "bench: server $name did not start: $(cat "$state/$name.err")" >&2
  exit 1
}
stop_servers() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}
drive() { python3 "$repo/bench/async/async_bench.py" "$@"; }

echo "runs: $runs, clients: $clients, isolation: $isolation" >&2
serve local
drive sync "$runs" "$clients" "$key" greet "$url" >"$state/local-sync.json"
drive async "$runs" "$clients" "$key" greet "sqlite:$state/local/runs.sqlite" "$url" >"$state/local-async.json"
drive paced "$paced_runs" "$paced_rate" "$key" greet "sqlite:$state/local/runs.sqlite" "$url" >"$state/local-paced.json"
stop_servers

db=$(bash "$repo/scripts/pg-cluster.sh" start "$state/pg")
SKILLBOX_DATABASE_URL=$db "$build/skillbox" db migrate >/dev/null
serve pg1 --database "$db"
one=$url
drive sync "$runs" "$clients" "$key" greet "$one" >"$state/pg-sync.json"
drive async "$runs" "$clients" "$key" greet "postgres:$db" "$one" >"$state/pg-async.json"
serve pg2 --database "$db"
drive async "$runs" "$clients" "$key" greet "postgres:$db" "$one" "$url" >"$state/pg2-async.json"
drive paced "$paced_runs" "$paced_rate" "$key" greet "postgres:$db" "$one" "$url" >"$state/pg2-paced.json"
stop_servers

python3 - "$state" <<'PY'
import json, sys
d = sys.argv[1]
r = {n: json.load(open(f"{d}/{n}.json")) for n in ["local-sync", "local-async", "pg-sync", "pg-async", "pg2-async"]}
print("| setup | sync runs/s | async runs/s | async / sync | enqueue -> start p50 | p99 |")
print("|---|---|---|---|---|---|")
def row(name, s, a):
    sync = f"{s['runs_per_s']:,}" if s else "—"
    ratio = f"{a['runs_per_s'] / s['runs_per_s']:.2f}×" if s else "—"
    print(f"| {name} | {sync} | {a['runs_per_s']:,} | {ratio} | {a['start_wait_ms_p50']} ms | {a['start_wait_ms_p99']} ms |")
row("one server, runs.sqlite", r["local-sync"], r["local-async"])
row("PostgreSQL, one replica", r["pg-sync"], r["pg-async"])
row("PostgreSQL, two replicas", None, r["pg2-async"])
print()
print("| enqueue -> start, one client at a steady rate | p50 | p99 |")
print("|---|---|---|")
for name, f in [("one server, runs.sqlite", "local-paced"), ("PostgreSQL, two replicas", "pg2-paced")]:
    p = json.load(open(f"{d}/{f}.json"))
    print(f"| {name}, {p['rate']:g} runs/s | {p['start_wait_ms_p50']} ms | {p['start_wait_ms_p99']} ms |")
PY
