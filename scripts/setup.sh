#!/usr/bin/env bash
# Installs the Debian 12 packages skillbox needs to build, test and benchmark. Idempotent: packages that
# are already installed are skipped, and apt is not touched at all when nothing is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config patch git ca-certificates
  ccache                           # rebuilds and fresh clones reuse compiled objects
  clang-format                     # scripts/check-format.sh, run by the test command
  man-db zsh fish                   # tests: the man pages render, the zsh and fish completion scripts work
  nodejs npm                       # npm pack fetches the QuickJS sources (qjsc@0.3.0)
  nlohmann-json3-dev libcli11-dev libcurl4-openssl-dev libsqlite3-dev libseccomp-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost1.81-dev libtomlplusplus-dev libsodium-dev  # skillbox serve: Beast/Asio, the TOML config, key hashes
  libarchive-dev                   # skillbox serve: skill uploads as tar archives
  prometheus                       # tests: promtool check metrics on what GET /metrics serves
  zlib1g-dev                       # tests: gzip bodies from the loopback HTTP server
  libvalijson-dev                  # JSON Schema (draft 7) validation of MCP tool arguments and results
  json-schema-test-suite           # tests: the official JSON Schema Test Suite, run against that validator
  libre2-dev                       # that validator's "pattern" keywords, matched in linear time (RE2)
  openssl python3                  # tests: certificates and loopback servers
  python3-yaml python3-jsonschema  # tests: the server checked against docs/openapi.yaml
  iproute2 util-linux              # scripts/hermetic.sh: a network namespace with only loopback
  libpq-dev                        # the PostgreSQL backends (pg/, docs/scale-out.md)
  postgresql-15                    # tests: the throwaway cluster of scripts/pg-cluster.sh
  haproxy                          # tests and scripts/cluster.sh: the load balancer in front of replicas
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# Node and npm may come from outside Debian (e.g. a preinstalled Node 20): accept any working npm.
if command -v npm >/dev/null 2>&1; then
  filtered=()
  for p in "${missing[@]}"; do [[ "$p" == nodejs || "$p" == npm ]] || filtered+=("$p"); done
  missing=("${filtered[@]}")
fi

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
