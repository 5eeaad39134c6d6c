#!/usr/bin/env bash
# ctest mcp.conformance: the MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# tests/mcp/node/package-lock.json) against `skillbox serve`'s /mcp hosting examples/mcp/conformance.
# The suite sends no credentials, so the server has one listener with auth = "none" (loopback only) for
# a tenant whose skills folder holds the example; tool names are bare ([mcp] tool_names), as the suite
# calls them. Every scenario of the active suite must pass, or be listed with its reason in
# tests/mcp/conformance-expected-failures.yml (a listed scenario that passes fails the run too).
#
# Usage: tests/mcp/conformance.sh SKILLBOX MCP_NODE_DIR [SCENARIO]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
skillbox=$1
node_dir=$(cd "$2" && pwd)
scenario=${3:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/skillbox-conformance-XXXXXX")
server=""
cleanup() {
  [[ -n "$server" ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/skills" "$work/data"
cp -r "$root/examples/mcp/conformance" "$work/skills/conformance"
cat >"$work/serve.toml" <<TOML
listen = [{address = "127.0.0.1:0", auth = "none", tenant = "conformance"}]
[mcp]
tool_names = "bare"
[tenants.conformance]
skills = "$work/skills"
data_dir = "$work/data"
TOML
# The file exists before the loop reads it (the shell of `&` opens it only when that job starts).
: >"$work/serve.out"
SKILLBOX_HOME=$work/home "$skillbox" serve --config "$work/serve.toml" >"$work/serve.out" 2>"$work/serve.err" &
server=$!
url=""
for _ in $(seq 1 300); do
  url=$(sed -n 's/^url: //p' "$work/serve.out" | head -1)
  [[ -n "$url" ]] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
if [[ -z "$url" ]]; then
  echo "conformance: skillbox serve did not start:" >&2
  cat "$work/serve.out" "$work/serve.err" >&2
  exit 1
fi
echo "conformance: skillbox serve at $url"

args=(server --url "${url%/}/mcp" --expected-failures "$here/conformance-expected-failures.yml")
[[ -n "$scenario" ]] && args+=(--scenario "$scenario")
status=0
(cd "$work" && "$node_dir/bin/node" "$node_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" "${args[@]}") || status=$?
if ((status != 0)); then
  echo "conformance: the suite failed (exit $status); skillbox serve's stderr:" >&2
  tail -n 40 "$work/serve.err" >&2
fi
exit "$status"
