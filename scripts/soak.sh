#!/usr/bin/env bash
# scripts/soak.sh N — N mixed invocations in worker mode (tests/runner/worker_soak_test.cpp): ok runs,
# skill errors, every limit, crashes from the test trigger, denied fs and http calls, and store writes
# each acknowledged to a loopback server. Prints the supervisor's RSS, descriptor and thread counts at
# the start, middle and end, zombies, temporary files left, and acknowledged writes against stored
# values, and fails unless all of them hold (flat counts, 0 zombies, 0 temporary files, every write).
#
# Builds the default preset first when needed. Runs inside the hermetic network namespace
# (scripts/hermetic.sh), like the test command. The test command runs the 2,000-invocation version.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-100000}"
if ! [[ "$n" =~ ^[0-9]+$ ]] || ((n < 100 || n > 10000000)); then
  echo "soak: N must be an integer from 100 to 10000000, got \"$n\"" >&2
  exit 2
fi
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" --target skillbox_tests_runner
SKILLBOX_SOAK_N="$n" scripts/hermetic.sh build/tests/skillbox_tests_runner --gtest_filter='WorkerSoak.*'
