#!/usr/bin/env bash
# bench/serve/run.sh — the serve benchmark (docs/benchmarks.md "skillbox serve"): a trivial skill over
# HTTP keep-alive, driven by wrk at concurrency 1, 16 and 64, against skillbox serve (process isolation,
# then --isolation inprocess) and two Node 20 HTTP servers that run the same skill in a fresh sandbox
# per request (isolated-vm, quickjs-emscripten: peer_server.mjs), one server at a time, in one run. Then
# the overload figure of each skillbox mode (overload.mjs). Prints a Markdown table; not part of the
# test command.
#
#   bench/serve/run.sh                    10 s per point
#   SERVE_SECONDS=20 bench/serve/run.sh   longer points
#   SERVE_ONLY="skillbox-inprocess" bench/serve/run.sh   a subset (names as in the table)
#
# Needs wrk (Debian package; installed here with apt-get when missing) and Node with npm. The npm peers
# come from bench/peers/package-lock.json, installed into $SKILLBOX_BUILD_DIR/peers as
# bench/peers/run.sh does; a peer that cannot load here is reported as skipped.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${SKILLBOX_BUILD_DIR:-$src/build}
seconds=${SERVE_SECONDS:-10}
nice_level=${NICE:-10}
servers=${SERVE_ONLY:-"skillbox-process skillbox-inprocess isolated-vm quickjs-emscripten"}
say() { printf '%s\n' "$*" >&2; }

# --- what it needs -----------------------------------------------------------------------------------
if ! command -v wrk >/dev/null; then
  say "== installing wrk (Debian)"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get install -y -qq --no-install-recommends wrk >&2
fi
if [ ! -x "$build/skillbox" ] || [ ! -x "$build/skillbox-worker" ]; then
  say "== building skillbox and its worker"
  nice -n "$nice_level" cmake --build "$build" --target skillbox_cli skillbox_worker >&2
fi
npm_dir="$build/peers"
mkdir -p "$npm_dir"
if ! cmp -s "$src/bench/peers/package-lock.json" "$npm_dir/.installed-lock.json"; then
  say "== npm ci into $npm_dir (isolated-vm is optional: if it does not build, it is skipped)"
  cp "$src/bench/peers/package.json" "$src/bench/peers/package-lock.json" "$npm_dir/"
  if nice -n "$nice_level" npm ci --prefix "$npm_dir" --no-audit --no-fund >"$npm_dir/npm-ci.log" 2>&1; then
    cp "$src/bench/peers/package-lock.json" "$npm_dir/.installed-lock.json"
  else
    say "npm ci failed (see $npm_dir/npm-ci.log); the npm peers will be skipped"
  fi
fi
cp "$here/peer_server.mjs" "$here/overload.mjs" "$npm_dir/"

out=$(mktemp -d /tmp/skillbox-serve-bench-XXXXXX)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$out"
}
trap cleanup EXIT
key="bench-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
key_hash=$(printf %s "$key" | sha256sum | cut -d' ' -f1)
body='{"input": {"name": "Ada"}}'
cat >"$out/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $key"
LUA

# write_config FILE ISOLATION RUN_THREADS MAX_RUNNING MAX_QUEUED QUEUE_LIMIT
write_config() {
  cat >"$1" <<TOML
listen = ["127.0.0.1:0"]
isolation = "$2"
run_threads = $3
queue_limit = $6
max_connections_per_address = 1000
[tenants.bench]
key_sha256 = ["$key_hash"]
skills = "$here/skills"
data_dir = "$out/data"
max_concurrent_runs = $4
max_queued_runs = $5
TOML
}

# start NAME COMMAND...: runs the server in the background and sets $url from its "url:" line.
start() {
  local name=$1
  shift
  : >"$out/$name.out"  # exists before the loop reads it (the job opens it only when it starts)
  "$@" >"$out/$name.out" 2>"$out/$name.err" &
  server_pid=$!
  url=""
  for _ in $(seq 300); do
    url=$(sed -n 's/^url: //p' "$out/$name.out" | head -1)
    [ -n "$url" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  wait "$server_pid" 2>/dev/null
  local rc=$?
  server_pid=""
  say "$name: did not start (exit $rc): $(tail -2 "$out/$name.err")"
  return 1
}
stop() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# ms VALUE_WITH_UNIT: wrk's "1.23ms", "850.00us", "1.02s" in milliseconds.
ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /[0-9]s$/ && v !~ /ms$/) n *= 1000; printf "%.2f", n }'; }

# rss_kb PID: resident memory of PID and every process below it (the zygote and workers), in KiB.
rss_kb() {
  ps -e -o pid=,ppid=,rss= | awk -v root="$1" '
    { parent[$1] = $2; rss[$1] = $3 }
    END { for (p in parent) { q = p; while (q != "" && q != root && q != 0 && q != 1) q = parent[q]; if (q == root) s += rss[p] } print s + 0 }'
}

# measure NAME: wrk at concurrency 1, 16, 64 against $url; one result line per point.
measure() {
  local name=$1
  wrk -t1 -c1 -d2s -s "$out/post.lua" "$url/v1/skills/greet/run" >/dev/null  # warm-up
  for c in 1 16 64; do
    local threads=$((c < 2 ? c : 2))
    wrk -t"$threads" -c"$c" -d"${seconds}s" --latency -s "$out/post.lua" "$url/v1/skills/greet/run" >"$out/wrk"
    local rps p50 p99 bad
    rps=$(awk '/^Requests\/sec:/ { print $2 }' "$out/wrk")
    p50=$(ms "$(awk '$1 == "50%" { print $2 }' "$out/wrk")")
    p99=$(ms "$(awk '$1 == "99%" { print $2 }' "$out/wrk")")
    bad=$(awk '/Non-2xx/ { print $NF }' "$out/wrk")
    echo "$name $c $rps $p50 $p99 ${bad:-0} $(rss_kb "$server_pid")" >>"$out/points"
    say "  $name c=$c: $rps req/s, p50 $p50 ms, p99 $p99 ms, non-2xx ${bad:-0}"
  done
}

say "== load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$out/points"
: >"$out/skips"
for s in $servers; do
  say "== $s"
  case $s in
    skillbox-process | skillbox-inprocess)
      write_config "$out/$s.toml" "${s#skillbox-}" 4 4 1000 1000
      start "$s" "$build/skillbox" serve --config "$out/$s.toml" || { echo "$s" >>"$out/skips"; continue; } ;;
    isolated-vm | quickjs-emscripten)
      flags=()
      [ "$s" = isolated-vm ] && flags+=(--no-node-snapshot)  # Node 20 needs it for isolated-vm
      # Its imports resolve from where the script is: the copy beside the installed node_modules.
      start "$s" node "${flags[@]}" "$npm_dir/peer_server.mjs" "$s" "$here/skills/greet/index.js" ||
        { echo "$s" >>"$out/skips"; continue; } ;;
  esac
  measure "$s"
  stop
done

# --- overload: 2 run threads, 2 more may wait; 16 clients in closed loops ----------------------------
for s in skillbox-process skillbox-inprocess; do
  case " $servers " in *" $s "*) ;; *) continue ;; esac
  say "== overload, $s"
  write_config "$out/$s-overload.toml" "${s#skillbox-}" 2 2 2 2
  start "$s-overload" "$build/skillbox" serve --config "$out/$s-overload.toml" || continue
  rss_before=$(rss_kb "$server_pid")
  peak=$rss_before
  node "$npm_dir/overload.mjs" "$url/v1/skills/greet/run" "$key" "$body" 4 4 "$seconds" >"$out/overload.json" &
  gen=$!
  while kill -0 "$gen" 2>/dev/null; do
    r=$(rss_kb "$server_pid")
    [ "$r" -gt "$peak" ] && peak=$r
    sleep 0.2
  done
  wait "$gen"
  stop
  # The server's own times (its log lines' ms, after the GET /healthz that starts the overload phase).
  server_side=$(python3 - "$out/$s-overload.err" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
marks = [i for i, l in enumerate(lines) if '"GET /healthz"' in l]
ok, refused = [], []
for l in lines[marks[-1] + 1 if marks else 0:]:
    m = re.search(r" status=(\d+) .* ms=(\d+)$", l)
    if m:
        (ok if m.group(1) == "200" else refused if m.group(1) in ("429", "503") else []).append(int(m.group(2)))
p = lambda v, q: sorted(v)[min(len(v) - 1, int(q * len(v)))] if v else "-"
print(p(ok, 0.5), p(ok, 0.99), p(refused, 0.5), p(refused, 0.99))
PY
)
  echo "$s $(cat "$out/overload.json") $rss_before $peak $(rss_kb "$server_pid" 2>/dev/null || echo 0) $server_side" >>"$out/overload"
  say "  $(cat "$out/overload.json") rss_kb before=$rss_before peak=$peak; server-side ms (admitted p50 p99, refused p50 p99): $server_side"
done
say "== load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

# --- the table -------------------------------------------------------------------------------------
python3 - "$out/points" "$out/skips" "$out/overload" <<'PY'
import json, sys
points = [l.split() for l in open(sys.argv[1]) if l.strip()]
skips = [l.strip() for l in open(sys.argv[2]) if l.strip()]
rows = {}
for name, c, rps, p50, p99, bad, rss in points:
    rows.setdefault(name, {})[int(c)] = (float(rps), float(p50), float(p99), int(bad), int(rss))
print("| server | c | req/s | p50 ms | p99 ms | non-2xx | RSS MiB |")
print("|---|---|---|---|---|---|---|")
for name, by_c in rows.items():
    for c, (rps, p50, p99, bad, rss) in sorted(by_c.items()):
        print(f"| {name} | {c} | {rps:.0f} | {p50:.2f} | {p99:.2f} | {bad} | {rss / 1024:.0f} |")
for s in skips:
    print(f"| {s} | - | skipped (see the log above) | | | | |")
peers = [n for n in rows if not n.startswith("skillbox")]
print()
for c in (1, 16, 64):
    best = max((rows[p][c][0] for p in peers if c in rows[p]), default=None)
    if not best:
        continue
    for mode in ("skillbox-process", "skillbox-inprocess"):
        if mode in rows and c in rows[mode]:
            print(f"- c={c}: {mode} / best peer = {rows[mode][c][0] / best:.2f}x")
try:
    lines = [l for l in open(sys.argv[3]) if l.strip()]
except FileNotFoundError:
    lines = []
if lines:
    print()
    print("| overload (4x) | unloaded p50 ms | capacity req/s | answered req/s | admitted | admitted p50 / p99 ms | p99 / unloaded p50 | refused | refused p50 / p99 ms | server-side ms: admitted p99, refused p99 | RSS MiB before / peak |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for l in lines:
        name, rest = l.split(" ", 1)
        j, tail = rest.split("} ", 1)
        o = json.loads(j + "}")
        f = tail.split()
        before, peak = int(f[0]) / 1024, int(f[1]) / 1024
        srv = f[3:7] + ["?"] * (4 - len(f[3:7]))
        ratio = o["admitted_p99_ms"] / o["unloaded_p50_ms"] if o["admitted_p99_ms"] and o["unloaded_p50_ms"] else float("nan")
        print(f"| {name} | {o['unloaded_p50_ms']} | {o['capacity_rps']} | {o['answered_rps']} | {o['admitted']} | "
              f"{o['admitted_p50_ms']} / {o['admitted_p99_ms']} | {ratio:.2f} | {o['refused']} | "
              f"{o['refused_p50_ms']} / {o['refused_p99_ms']} | {srv[1]}, {srv[3]} | {before:.0f} / {peak:.0f} |")
PY
