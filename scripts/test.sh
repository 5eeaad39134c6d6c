#!/usr/bin/env bash
# Builds skillbox and runs the whole test suite. Does all set-up on a fresh Debian 12 machine:
# installs the Debian packages (scripts/setup.sh), fetches and verifies QuickJS with npm pack (CMake),
# configures, builds and runs every test with ctest, and checks that every C++ file is formatted.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
format_ok=1
bash scripts/check-format.sh || format_ok=0
cmake --preset default
cmake --build --preset default -j "$(nproc)"
ctest --preset default -j "$(nproc)"
if ((format_ok == 0)); then
  echo "test: the suite passed, but some files are not formatted (see check-format above)" >&2
  exit 1
fi
