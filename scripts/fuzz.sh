#!/usr/bin/env bash
# Runs the libFuzzer targets (fuzz/) for a long time each and prints, per target, executions per
# second, coverage, corpus size and findings. Builds them with the `asan` preset first.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     default: 1800 s each, every target
#
# New inputs go to build-asan/fuzz/corpus/<target>/ (keep interesting ones by copying them into
# fuzz/corpus/<target>/); a crash is saved as build-asan/fuzz/<target>-crash-*: fix the kind, then move
# the input into fuzz/regressions/<target>/ so ctest replays it forever.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-1800}
shift || true
all=(manifest bundle_manifest workspace_path url_policy bus_frame env_file base64_utf8 js_eval)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")

cmake --preset asan >/dev/null
cmake --build --preset asan -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

summary=()
for t in "${targets[@]}"; do
  log=build-asan/fuzz/$t.log
  work=build-asan/fuzz/corpus/$t
  mkdir -p "$work" "fuzz/regressions/$t"
  echo "fuzz: $t for $seconds s (log: $log)"
  status=ok
  scripts/hermetic.sh build-asan/fuzz/fuzz_"$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="build-asan/fuzz/$t-" "$work" "fuzz/corpus/$t" "fuzz/regressions/$t" \
    >"$log" 2>&1 || status="FINDING (see $log)"
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  corpus=$(find "$work" -type f | wc -l)
  summary+=("$(printf '%-16s %10s execs %7s/s  cov %6s  corpus %6s  %s' "$t" "$execs" "$rate" "$cov" "$corpus" "$status")")
done
printf '%s\n' "${summary[@]}"
