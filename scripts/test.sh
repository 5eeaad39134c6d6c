#!/usr/bin/env bash
# Builds skillbox and runs the whole test suite. Does all set-up on a fresh Debian 12 machine:
# installs the Debian packages (scripts/setup.sh), fetches and verifies QuickJS with npm pack (CMake),
# then builds and runs the whole suite (RelWithDebInfo) inside a network namespace that has only
# loopback (scripts/hermetic.sh), and checks that every C++ file is formatted.
#
# Then the same suite again under the sanitizers (docs/testing.md): an ASan+UBSan build (clang, QuickJS
# included) running every test and a short pass of each fuzz target, and a TSan build running the tests
# of the threaded parts. SKILLBOX_TEST_SANITIZERS=off skips them, for a quicker run while working; CI
# runs them.
#
# SKILLBOX_TEST_SLOW=on also adds the tests that take minutes (label `slow`: packaging.subdirectory builds
# skillbox a second time, as an add_subdirectory consumer).
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
phase_start=$SECONDS
timings=()
phase_done() {
  timings+=("$(printf '%-28s %5d s' "$1" $((SECONDS - phase_start)))")
  phase_start=$SECONDS
}
# The phase timings, also when a step fails (then the last line is the failing step's time so far).
print_timings() {
  local status=$?
  echo "test: timings"
  printf '  %s\n' "${timings[@]}"
  ((status == 0)) || printf '  %-28s %5d s\n' "(failed in the next step)" $((SECONDS - phase_start))
  printf '  %-28s %5d s\n' "total" $((SECONDS - started))
}
trap print_timings EXIT

bash scripts/setup.sh
# ccache (installed by setup.sh; CMakeLists.txt uses it when present): paths relative to this clone and
# no working directory in the hash, so another clone of the same commit reuses every object.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
format_ok=1
bash scripts/check-format.sh || format_ok=0
phase_done "setup and format check"

jobs=$(nproc)
slow=OFF
[[ "${SKILLBOX_TEST_SLOW:-off}" == on ]] && slow=ON
cmake --preset default -DSKILLBOX_SLOW_TESTS=$slow
# The unit tests first (label `unit`: the layers' quick in-process tests), built and run before the rest
# is built, so that a broken layer fails in minutes rather than at the end; the later ctest runs the rest.
cmake --build --preset default -j "$jobs" --target skillbox_tests_unit
phase_done "default: build unit tests"
scripts/hermetic.sh ctest --preset default -j "$jobs" -L unit
phase_done "default: unit tests"
cmake --build --preset default -j "$jobs"
bash scripts/typecheck.sh --fetch     # the hermetic runs below have no network
bash scripts/build-bundles.sh --fetch # (the build above already fetched these; a no-op then)
phase_done "default: build"
scripts/hermetic.sh ctest --preset default -j "$jobs" -LE unit
phase_done "default: other tests"

if [[ "${SKILLBOX_TEST_SANITIZERS:-on}" != off ]]; then
  cmake --preset asan
  cmake --build --preset asan -j "$jobs"
  phase_done "asan+ubsan: build"
  # The worker-mode pass (label `process`) runs in the default build above; under ASan the worker's own
  # tests (WorkerRunner, WorkerWall, in the plain pass) cover the second wall. The packaging tests (CMake
  # and pkg-config consumers of an installed skillbox) run in the default pass only: under ASan they
  # build the same consumers slower and find nothing the sanitizer could.
  scripts/hermetic.sh ctest --preset asan -j "$jobs" -LE "process|packaging"
  phase_done "asan+ubsan: tests"

  cmake --preset tsan
  cmake --build --preset tsan -j "$jobs" --target skillbox_tests_threaded
  phase_done "tsan: build"
  scripts/hermetic.sh ctest --preset tsan -j "$jobs"
  phase_done "tsan: tests"
fi

if ((format_ok == 0)); then
  echo "test: the suite passed, but some files are not formatted (see check-format above)" >&2
  exit 1
fi
