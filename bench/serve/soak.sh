#!/usr/bin/env bash
# bench/serve/soak.sh — the serve soak (docs/benchmarks.md "skillbox serve: a soak"): `skillbox serve`
# (process isolation, 4 run threads) under a steady 80 % of the capacity it showed a moment before, for
# SOAK_SECONDS (default 600), sampling every 10 s the resident memory of the server and every process
# below it, the server's open descriptors and threads, and the processes below it. Prints the samples
# and, per figure, the first, the last and the largest; a leak shows as a figure that keeps growing.
# Not part of the test command.
#
#   bench/serve/soak.sh                      10 minutes
#   SOAK_SECONDS=60 SOAK_LOAD=0.8 bench/serve/soak.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${SKILLBOX_BUILD_DIR:-$src/build}
seconds=${SOAK_SECONDS:-600}
load=${SOAK_LOAD:-0.8}
isolation=${SOAK_ISOLATION:-process}
say() { printf '%s\n' "$*" >&2; }

if [ ! -x "$build/skillbox" ] || [ ! -x "$build/skillbox-worker" ]; then
  say "== building skillbox and its worker"
  nice -n 10 cmake --build "$build" --target skillbox_cli skillbox_worker >&2
fi
out=$(mktemp -d /tmp/skillbox-soak-XXXXXX)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$out"
}
trap cleanup EXIT
key="soak-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
cat >"$out/serve.toml" <<TOML
listen = ["127.0.0.1:0"]
isolation = "$isolation"
run_threads = 4
queue_limit = 64
# The generator is one address standing for many clients, with up to 256 connections: the default cap
# of 64 per address would close the rest at once (ECONNRESET at the client), as it should for one client.
max_connections_per_address = 300
[tenants.soak]
key_sha256 = ["$(printf %s "$key" | sha256sum | cut -d' ' -f1)"]
skills = "$here/skills"
data_dir = "$out/data"
max_concurrent_runs = 4
max_queued_runs = 64
TOML
"$build/skillbox" serve --config "$out/serve.toml" >"$out/serve.out" 2>"$out/serve.err" &
server_pid=$!
url=""
for _ in $(seq 300); do
  url=$(sed -n 's/^url: //p' "$out/serve.out" | head -1)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { say "the server did not start: $(tail -2 "$out/serve.err")"; exit 1; }
run_url="$url/v1/skills/greet/run"
body='{"input": {"name": "Ada"}}'

# tree PID: the processes below PID (not PID itself), one pid a line.
tree() {
  ps -e -o pid=,ppid= | awk -v root="$1" '
    { parent[$1] = $2 }
    END { for (p in parent) { q = parent[p]; while (q != "" && q != root && q != 0 && q != 1) q = parent[q]; if (q == root) print p } }'
}
sample() {  # t_s rss_kib fds threads children
  local rss=0 p
  for p in $server_pid $(tree "$server_pid"); do
    rss=$((rss + $(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)))
  done
  echo "$1 $rss $(ls "/proc/$server_pid/fd" | wc -l) $(awk '/^Threads:/ { print $2 }' "/proc/$server_pid/status") $(tree "$server_pid" | wc -l)"
}

capacity=$(node "$here/soak.mjs" "$run_url" "$key" "$body" 5 | python3 -c 'import json,sys; print(json.load(sys.stdin)["capacity_rps"])')
rate=$(python3 -c "print(max(1, round($capacity * $load)))")
say "== capacity $capacity req/s; soaking at $rate req/s ($load) for $seconds s"
node "$here/soak.mjs" "$run_url" "$key" "$body" "$seconds" "$rate" >"$out/load.json" &
gen=$!
started=$SECONDS
: >"$out/samples"
while kill -0 "$gen" 2>/dev/null; do
  sample $((SECONDS - started)) >>"$out/samples"
  sleep 10
done
wait "$gen"
sample $((SECONDS - started)) >>"$out/samples"

echo "load: $(cat "$out/load.json")"
echo "capacity before: $capacity req/s; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| t s | RSS KiB (server and below) | server fds | server threads | processes below |"
echo "|---:|---:|---:|---:|---:|"
awk '{ printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }' "$out/samples"
echo
awk 'NR == 1 { for (i = 2; i <= 5; i++) first[i] = $i } { for (i = 2; i <= 5; i++) { last[i] = $i; if ($i > max[i]) max[i] = $i } }
     END { split("RSS_KiB fds threads processes", n, " ");
           for (i = 2; i <= 5; i++) printf "%s: first %s, last %s, largest %s\n", n[i - 1], first[i], last[i], max[i] }' "$out/samples"
