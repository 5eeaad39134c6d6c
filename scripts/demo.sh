#!/usr/bin/env bash
# Builds skillbox and runs the example skills end to end: with `skillbox run` (a result, a limit being
# enforced, the capabilities the examples use), an OpenHuman bundle, then over HTTP with `skillbox serve`
# and over MCP with `skillbox mcp`. Does all set-up on a fresh Debian 12 machine.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" --target skillbox_cli openhuman_bundles

skillbox=./build/skillbox
export SKILLBOX_HOME="${SKILLBOX_HOME:-$PWD/build/demo-data}"

# Each command is shown quoted for the shell, so it can be copied as it is.
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
quoted() {
  local arg out=""
  for arg in "$@"; do
    if [[ "$arg" =~ ^[A-Za-z0-9_./:=@%+-]+$ ]]; then out+="$arg "; else out+="'${arg//\'/\'\\\'\'}' "; fi
  done
  printf '%s' "${out% }"
}
run() {
  step "$(quoted "$@")"
  "$@" || echo "(exit code $?)"
}

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
if grep -q '^listening' "$api_log"; then
  run "$skillbox" run examples/skills/weather --input '{"city": "Paris"}'
  run "$skillbox" run examples/skills/weather --input '{"city": "Paris"}'
  run "$skillbox" run examples/skills/weather --input '{"city": "Paris", "api": "http://127.0.0.1:8787/v2/"}'
else
  echo
  echo "skipping the weather skill: the demo API could not listen on 127.0.0.1:8787 ($(tail -n 1 "$api_log"));"
  echo "stop what uses that port and run the demo again"
fi

# An OpenHuman bundle, unchanged: the build made it from TypeScript into build/openhuman/notes.
# Its own data directory: the id "notes" belongs to examples/skills/notes in $SKILLBOX_HOME.
run "$skillbox" tools build/openhuman/notes
run "$skillbox" call build/openhuman/notes bump --data-dir build/demo-bundles

# The same skills over HTTP: `skillbox serve` on a port the kernel picks, with a fresh API key.
serve_log="$(mktemp)"
"$skillbox" serve examples/skills --listen 127.0.0.1:0 >"$serve_log" 2>&1 &
serve_pid=$!
trap 'kill "$api_pid" "$serve_pid" 2>/dev/null || true; rm -f "$api_log" "$serve_log"' EXIT
for _ in $(seq 100); do grep -q '^key: ' "$serve_log" && break; sleep 0.1; done
url=$(sed -n 's/^url: //p' "$serve_log")
key=$(sed -n 's/^key: //p' "$serve_log")
if [[ -n "$url" && -n "$key" ]]; then
  step "$skillbox serve examples/skills --listen 127.0.0.1:0 &"
  sed -n '/^url: /p' "$serve_log"
  run curl -sS -H "Authorization: Bearer $key" "$url/v1/skills"
  echo
  run curl -sS -H "Authorization: Bearer $key" -d '{"input": {"name": "Ada"}}' "$url/v1/skills/hello/run"
  echo
  kill -TERM "$serve_pid"
  wait "$serve_pid" || true
else
  echo "skillbox serve did not start: $(cat "$serve_log")"
fi

# And as tools for an agent, over MCP on stdin and stdout: initialize, then call the hello skill.
step "$skillbox mcp examples/skills/hello   # three JSON-RPC messages on stdin"
printf '%s\n' \
  '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "demo", "version": "1"}}}' \
  '{"jsonrpc": "2.0", "method": "notifications/initialized"}' \
  '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hello", "arguments": {"name": "Ada"}}}' |
  "$skillbox" mcp examples/skills/hello || echo "(exit code $?)"
