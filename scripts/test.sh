#!/usr/bin/env bash
# Builds skillbox and runs the whole test suite. Does all set-up on a fresh Debian 12 machine:
# installs the Debian packages (scripts/setup.sh), fetches and verifies QuickJS with npm pack (CMake),
# configures, builds and runs every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset default
cmake --build --preset default -j "$(nproc)"
ctest --preset default -j "$(nproc)"
