#!/usr/bin/env bash
# Runs the libFuzzer targets (fuzz/) for a long time each and prints, per target, executions,
# executions per second, CPU seconds, coverage, corpus size and findings. Builds them with the `asan`
# preset first.
#
#   scripts/fuzz.sh [--parallel | --cpu] [SECONDS] [TARGET...]   default: 1800 s each, every target, in turn
#
# --parallel runs the targets at the same time (each for SECONDS of wall time, sharing the cores: the
# CPU column says how much each got).
# --cpu gives each target SECONDS of CPU time (its own and its children's, e.g. js_eval's workers)
# instead of wall time, running as many at once as there are cores, at the lowest CPU priority. Use it
# on a machine that does other work too: a target is stopped only once it has had its budget.
# New inputs go to build-asan/fuzz/corpus/<target>/ (keep interesting ones by copying them into
# fuzz/corpus/<target>/); a crash is saved as build-asan/fuzz/<target>-crash-*: fix the kind, then move
# the input into fuzz/regressions/<target>/ so ctest replays it forever.
set -euo pipefail
cd "$(dirname "$0")/.."
parallel=0
cpu_budget=0
if [[ "${1:-}" == --parallel ]]; then
  parallel=1
  shift
elif [[ "${1:-}" == --cpu ]]; then
  cpu_budget=1
  shift
fi
seconds=${1:-1800}
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || ((seconds < 1)); then
  echo "fuzz: SECONDS must be a positive integer, got \"$seconds\"" >&2
  exit 2
fi
all=(manifest bundle_manifest workspace_path url_policy bus_frame env_file base64_utf8 js_eval mcp_session serve_request)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")
for t in "${targets[@]}"; do
  if [[ ! -f "fuzz/$t.cpp" ]]; then
    echo "fuzz: no target \"$t\"; the targets are: ${all[*]}" >&2
    exit 2
  fi
done

cmake --preset asan >/dev/null
cmake --build --preset asan -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"

# One target: its log, and its CPU seconds (user + system, from bash's `time`) in <log>.cpu.
# With --cpu the wall-time cap is only a backstop; the watcher below stops the fuzzer (SIGINT, after
# which libFuzzer prints its final stats and exits with status 72) once it has had its CPU, and leaves
# <log>.stopped to say that status 72 was its doing.
run_one() {
  local t=$1 log=build-asan/fuzz/$1.log work=build-asan/fuzz/corpus/$1
  mkdir -p "$work" "fuzz/regressions/$t"
  rm -f "$log.stopped" "$log.treecpu"
  local TIMEFORMAT='%U %S' rc=0 wall=$seconds
  ((cpu_budget)) && wall=$((seconds * 20))
  {
    time scripts/hermetic.sh build-asan/fuzz/fuzz_"$t" -max_total_time="$wall" -timeout=20 \
      -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="build-asan/fuzz/$t-" "$work" "fuzz/corpus/$t" "fuzz/regressions/$t" \
      >"$log" 2>&1 || rc=$?
  } 2>"$log.cpu"
  echo "$rc" >"$log.status"
}

# CPU seconds used so far by process $1 and all its descendants: each live process's own time plus
# that of its reaped children (/proc/PID/stat fields 14-17, in clock ticks). A worker reaped by the
# zygote is in the zygote's count, so nothing is counted twice.
tree_cpu() {
  local pids=("$1") i=0 kids
  while ((i < ${#pids[@]})); do
    kids=$(pgrep -P "${pids[i]}" || true)
    [[ -n "$kids" ]] && pids+=($kids)
    i=$((i + 1))
  done
  local files=()
  for p in "${pids[@]}"; do files+=("/proc/$p/stat"); done
  # After the ") " that ends the command name, fields 14-17 are the 12th to 15th. A worker may end
  # between pgrep and cat: its file is gone, which is not an error (its time is in its parent's now).
  { cat "${files[@]}" 2>/dev/null || true; } |
    awk -v hz="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); t += $12 + $13 + $14 + $15} END {printf "%d\n", t / hz}'
}

watch_cpu() {
  local t=$1 used pid
  while sleep 5; do
    pid=$(pgrep -f "^build-asan/fuzz/fuzz_$t " | head -1) || continue
    used=$(tree_cpu "$pid")
    [[ -n "$used" ]] && echo "$used" >"build-asan/fuzz/$t.log.treecpu"
    if [[ -n "$used" ]] && ((used >= seconds)); then
      touch "build-asan/fuzz/$t.log.stopped"
      kill -INT "$pid" 2>/dev/null || true
      return
    fi
  done
}

if ((cpu_budget)); then
  renice -n 19 $$ >/dev/null
  running=0
  for t in "${targets[@]}"; do
    if ((running >= $(nproc))); then
      wait -n || true
      running=$((running - 1))
    fi
    echo "fuzz: $t for $seconds CPU s (log: build-asan/fuzz/$t.log)"
    (
      run_one "$t" &
      watch_cpu "$t" &
      watcher=$!
      wait %1
      kill "$watcher" 2>/dev/null || true
    ) &
    running=$((running + 1))
  done
  wait
else
  for t in "${targets[@]}"; do
    echo "fuzz: $t for $seconds s (log: build-asan/fuzz/$t.log)"
    if ((parallel)); then
      run_one "$t" &
    else
      run_one "$t"
    fi
  done
  wait
fi

for t in "${targets[@]}"; do
  log=build-asan/fuzz/$t.log
  status=ok
  rc=$(cat "$log.status" 2>/dev/null || echo missing)
  [[ "$rc" == 0 || ("$rc" == 72 && -f "$log.stopped") ]] || status="FINDING (see $log)"
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  cpu=$(awk '{printf "%d", $1 + $2}' "$log.cpu" 2>/dev/null || echo 0)
  # With --cpu, the watcher's reading of the whole process tree: bash's `time` misses what a child
  # that was never reaped by the fuzzer used (js_eval's zygote and its workers).
  tree=$(cat "$log.treecpu" 2>/dev/null || echo 0)
  ((tree > cpu)) && cpu=$tree
  corpus=$(find "build-asan/fuzz/corpus/$t" -type f | wc -l)
  printf '%-16s %11s execs %7s/s  cpu %5s s  cov %6s  ft %6s  corpus %6s  %s\n' \
    "$t" "$execs" "$rate" "$cpu" "$cov" "$ft" "$corpus" "$status"
done
