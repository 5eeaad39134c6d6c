#!/usr/bin/env bash
# bench/mcp/run.sh — the MCP benchmark (docs/benchmarks.md "MCP"): tools/call of a trivial tool over stdio
# against the same skill run in-library (Runner::run), per `skillbox run`, and the official SDK's own
# example-style Node server (McpServer + StdioServerTransport) serving an equivalent tool, in one run.
# Prints p50, p90 and calls per second (sequential calls) of each, and the ratios. Each server is driven
# by a minimal C++ client (bench_mcp_inlib stdio: a line out, lines in) and by the SDK's own Client
# (stdio_client.mjs). Not part of the test command.
#
#   bench/mcp/run.sh                 300 timed calls each (30 more as warm-up); MCP_BENCH_CALLS=N for more
#
# Environment: SKILLBOX_BUILD_DIR (default build/ of this checkout, configured by the preset), NICE.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${SKILLBOX_BUILD_DIR:-$src/build}
calls=${MCP_BENCH_CALLS:-300}
warmup=30
run_calls=$((calls / 5))  # `skillbox run` starts a process per call: fewer
nice_level=${NICE:-10}

[[ -f "$build/CMakeCache.txt" ]] || (cd "$src" && cmake --preset default >/dev/null)
echo "== building skillbox, the worker, bench_mcp_inlib and the pinned MCP SDK" >&2
nice -n "$nice_level" cmake --build "$build" --target skillbox_cli skillbox_worker bench_mcp_inlib mcp_node_clients >&2
export MCP_NODE_DIR=$build/mcp-node
skillbox=$build/skillbox

work=$(mktemp -d /tmp/skillbox-mcp-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
export SKILLBOX_HOME=$work/home
skill=$work/echo
mkdir -p "$skill"
echo '{"id": "echo", "version": "1.0.0", "entry": "index.js"}' >"$skill/skill.json"
echo 'export default (input) => ({ n: input.n + 1 });' >"$skill/index.js"

client=$here/stdio_client.mjs
measure() {  # NAME COMMAND...: writes $work/NAME.samples (microseconds, one a line)
  local name=$1
  shift
  echo "== $name" >&2
  "$@" >"$work/$name.samples"
}
inlib() {  # MODE: Runner::run, the first $warmup calls dropped
  "$build/bench/mcp/bench_mcp_inlib" "$1" "$skill" $((calls + warmup)) '{"n": 0}' | tail -n +$((warmup + 1))
}
run_per_call() {  # `skillbox run` per call, process isolation (its default)
  node -e '
    const { spawnSync } = require("node:child_process");
    const [skillbox, skill, n] = process.argv.slice(1);
    const out = [];
    for (let i = 0; i < Number(n) + 3; i++) {
      const start = process.hrtime.bigint();
      const r = spawnSync(skillbox, ["run", skill, "--input", JSON.stringify({ n: i })]);
      const us = Number(process.hrtime.bigint() - start) / 1000;
      if (r.status !== 0) throw new Error(r.stderr.toString());
      if (i >= 3) out.push(Math.round(us));
    }
    console.log(out.join("\n"));' "$skillbox" "$skill" "$run_calls"
}

measure inlib-inprocess inlib in-process
measure inlib-worker inlib worker
minimal() {  # COMMAND...: the C++ minimal client, the first $warmup calls dropped
  "$build/bench/mcp/bench_mcp_inlib" stdio $((calls + warmup)) "$@" | tail -n +$((warmup + 1))
}
measure mcp-inprocess-raw minimal "$skillbox" mcp "$skill" --isolation inprocess
measure mcp-process-raw minimal "$skillbox" mcp "$skill"
measure sdk-server-raw minimal node "$here/sdk_server.mjs"
measure mcp-process-sdk node "$client" sdk "$calls" "$warmup" -- "$skillbox" mcp "$skill"
measure sdk-server-sdk node "$client" sdk "$calls" "$warmup" -- node "$here/sdk_server.mjs"
measure skillbox-run run_per_call

# Over Streamable HTTP (once `skillbox serve` has /mcp): skillbox serve hosting the skill on a loopback
# listener without authentication, and the SDK's own HTTP server; both driven by the SDK's Client.
background=()
trap 'for p in "${background[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
url_of() {  # FILE PID: the "url: " line a server printed, waiting for it
  for _ in $(seq 1 300); do
    local url=""
    # The file may not exist yet: the shell of `&` opens it only when that job starts.
    [[ -f "$1" ]] && url=$(sed -n 's/^url: //p' "$1" | head -1)
    if [[ -n "$url" ]]; then echo "$url"; return; fi
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  echo "bench: a server did not start: $(cat "$1")" >&2
  return 1
}
if grep -q auth_none "$src/server/config.h"; then
  mkdir -p "$work/skills" && cp -r "$skill" "$work/skills/echo"
  printf 'listen = [{address = "127.0.0.1:0", auth = "none", tenant = "t"}]\n[tenants.t]\nskills = "%s"\ndata_dir = "%s"\n' \
    "$work/skills" "$work/data" >"$work/serve.toml"
  "$skillbox" serve --config "$work/serve.toml" >"$work/serve.out" 2>"$work/serve.err" &
  background+=($!)
  url=$(url_of "$work/serve.out" $!)
  measure mcp-http-sdk node "$client" sdk-http "$calls" "$warmup" -- "${url%/}/mcp"
  node "$here/sdk_http_server.mjs" >"$work/sdk-http.out" &
  background+=($!)
  url=$(url_of "$work/sdk-http.out" $!)
  measure sdk-http-server-sdk node "$client" sdk-http "$calls" "$warmup" -- "$url"
fi

python3 - "$work" <<'PY'
import statistics, sys
work = sys.argv[1]
rows = [
    ("inlib-inprocess", "in-library InProcessRunner::run"),
    ("inlib-worker", "in-library WorkerRunner::run"),
    ("mcp-inprocess-raw", "skillbox mcp --isolation inprocess, C++ client"),
    ("mcp-process-raw", "skillbox mcp (process isolation), C++ client"),
    ("sdk-server-raw", "SDK Node server (McpServer), C++ client"),
    ("mcp-process-sdk", "skillbox mcp (process isolation), SDK Client"),
    ("sdk-server-sdk", "SDK Node server (McpServer), SDK Client"),
    ("skillbox-run", "skillbox run, one process per call"),
    ("mcp-http-sdk", "skillbox serve /mcp (process isolation), SDK Client"),
    ("sdk-http-server-sdk", "SDK Node HTTP server (stateless), SDK Client"),
]
import os
rows = [r for r in rows if os.path.exists(f"{work}/{r[0]}.samples")]
stats = {}
for key, _ in rows:
    s = sorted(float(x) for x in open(f"{work}/{key}.samples").read().split())
    stats[key] = (statistics.median(s), s[int(len(s) * 0.9) - 1], 1e6 / statistics.mean(s), len(s))
print(f"{'what':52} {'p50 µs':>9} {'p90 µs':>9} {'calls/s':>9} {'n':>5}")
for key, label in rows:
    p50, p90, cps, n = stats[key]
    print(f"{label:52} {p50:9.0f} {p90:9.0f} {cps:9.0f} {n:5}")
def ratio(a, b):
    return stats[a][0] / stats[b][0]
print()
print(f"p50 ratios: mcp inprocess / in-library in-process {ratio('mcp-inprocess-raw', 'inlib-inprocess'):.2f}; "
      f"mcp process / in-library worker {ratio('mcp-process-raw', 'inlib-worker'):.2f}; "
      f"mcp process / SDK server (C++ client) {ratio('mcp-process-raw', 'sdk-server-raw'):.2f}; "
      f"(SDK client) {ratio('mcp-process-sdk', 'sdk-server-sdk'):.2f}; "
      f"skillbox run / mcp process {ratio('skillbox-run', 'mcp-process-raw'):.1f}")
if "mcp-http-sdk" in stats:
    print(f"HTTP p50 ratios: skillbox serve /mcp / SDK HTTP server {ratio('mcp-http-sdk', 'sdk-http-server-sdk'):.2f}; "
          f"skillbox serve /mcp / skillbox mcp stdio (SDK client) {ratio('mcp-http-sdk', 'mcp-process-sdk'):.2f}")
PY
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
