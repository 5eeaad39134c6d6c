#!/usr/bin/env bash
# Builds skillbox and runs the example skills end to end with `skillbox run`: a result, a limit being
# enforced, and the capabilities the examples use. Does all set-up on a fresh Debian 12 machine.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" --target skillbox_cli

skillbox=./build/skillbox
export SKILLBOX_HOME="${SKILLBOX_HOME:-$PWD/build/demo-data}"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { step "$*"; "$@" || echo "(exit code $?)"; }

run "$skillbox" --version
run "$skillbox" check examples/skills/hello
run "$skillbox" run examples/skills/hello --input '{"name": "Ada"}'
run "$skillbox" run examples/skills/runaway --steps 1000000
run "$skillbox" run examples/skills/runaway --call hog --memory-mb 8
# Files: the notes skill keeps its notes in its own workspace ($SKILLBOX_HOME/skills/notes/workspace).
run "$skillbox" run examples/skills/notes --input '{"add": "buy milk"}'
run "$skillbox" run examples/skills/notes --input '{"add": "call Ada"}'
run "$skillbox" run examples/skills/notes --input '{"remove": 1}'
# HTTP: the weather skill asks a local API (scripts/demo-api-server.py on 127.0.0.1:8787, started here)
# through openhuman.http and keeps part of each answer in its store; the second run shows "previous".
# The third asks for a path its manifest does not allow and is refused with PermissionDenied.
api_log="$(mktemp)"
python3 scripts/demo-api-server.py --port 8787 >"$api_log" 2>&1 &
api_pid=$!
trap 'kill "$api_pid" 2>/dev/null || true; rm -f "$api_log"' EXIT
for _ in $(seq 50); do grep -q '^listening' "$api_log" && break; sleep 0.1; done
grep -q '^listening' "$api_log" || echo "the demo API did not start (is port 8787 in use?): $(cat "$api_log")"
run "$skillbox" run examples/skills/weather --input '{"city": "Paris"}'
run "$skillbox" run examples/skills/weather --input '{"city": "Paris"}'
run "$skillbox" run examples/skills/weather --input '{"city": "Paris", "api": "http://127.0.0.1:8787/v2/"}'
