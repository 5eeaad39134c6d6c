#!/usr/bin/env bash
# Runs a command inside a new network namespace that has only the loopback interface, brought up inside
# it, so nothing the command starts can reach or resolve anything beyond 127.0.0.1 / ::1.
#
#   scripts/hermetic.sh ctest --preset default
#
# As root (how CI runs) it uses `unshare --net`; as an ordinary user `unshare --user --map-root-user
# --net`. If neither works it fails and says why, unless SKILLBOX_HERMETIC=off is set on purpose, in
# which case the command runs on the host network with a warning.
set -euo pipefail

if (($# == 0)); then
  echo "usage: scripts/hermetic.sh COMMAND [ARG...]" >&2
  exit 64
fi

if [[ "${SKILLBOX_HERMETIC:-on}" == off ]]; then
  echo "hermetic: SKILLBOX_HERMETIC=off: running on the host network, tests are not isolated from it" >&2
  exec "$@"
fi

# Inside the namespace: bring loopback up, check that it is the only interface, then run the command.
if [[ "${1:-}" == --inside ]]; then
  shift
  if ! ip link set lo up; then
    echo "hermetic: could not bring up loopback in the new network namespace (ip link set lo up failed)" >&2
    exit 70
  fi
  others=$(ip -o link show | awk -F': ' '$2 != "lo" {print $2}')
  if [[ -n "$others" ]]; then
    echo "hermetic: the namespace has interfaces besides lo: $others" >&2
    exit 70
  fi
  export SKILLBOX_HERMETIC_NETNS=1
  exec "$@"
fi

if ! command -v unshare >/dev/null || ! command -v ip >/dev/null; then
  echo "hermetic: needs unshare (util-linux) and ip (iproute2); run scripts/setup.sh," \
    "or set SKILLBOX_HERMETIC=off to run on the host network" >&2
  exit 69
fi

self="$(cd "$(dirname "$0")" && pwd)/hermetic.sh"
if [[ $(id -u) -eq 0 ]]; then
  flags=(--net)
else
  flags=(--user --map-root-user --net)
fi
if ! unshare "${flags[@]}" true 2>/dev/null; then
  echo "hermetic: cannot create a network namespace (unshare ${flags[*]} failed: as an ordinary user" \
    "this needs unprivileged user namespaces, kernel.unprivileged_userns_clone=1)." >&2
  echo "hermetic: run as root, enable user namespaces, or set SKILLBOX_HERMETIC=off to run the" \
    "suite on the host network" >&2
  exit 69
fi
exec unshare "${flags[@]}" -- "$self" --inside "$@"
