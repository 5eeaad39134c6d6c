#!/usr/bin/env bash
# The store on PostgreSQL against the embedded SQLite backend, in one run (docs/benchmarks.md "The store
# on PostgreSQL"): starts a throwaway PostgreSQL 15 on 127.0.0.1 (scripts/pg-cluster.sh), migrates it,
# runs bench_pg_store_latency with the SQLite store in a temporary folder on the same disk, stops it.
#
#   bench/pg/run.sh [OPS]        (build first: cmake --build --preset default)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$repo/build}
state=$(mktemp -d /tmp/skillbox-bench-pg.XXXXXX)
trap 'bash "$repo/scripts/pg-cluster.sh" stop "$state/pg" >/dev/null 2>&1 || true; rm -rf "$state"' EXIT
url=$(bash "$repo/scripts/pg-cluster.sh" start "$state/pg")
SKILLBOX_DATABASE_URL=$url "$build/skillbox" db migrate >/dev/null
mkdir -p "$state/data"
"$build/bench/pg/bench_pg_store_latency" "$url" "$state/data" "${1:-2000}"
