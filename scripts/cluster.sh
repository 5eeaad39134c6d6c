#!/usr/bin/env bash
# The scale-out rig on one machine, all on 127.0.0.1 (docs/scale-out.md "The rig"): a PostgreSQL 15
# cluster, `skillbox serve --database` replicas, and HAProxy in front of them checking /readyz.
#
#   scripts/cluster.sh up STATE_DIR [SKILLS_DIR]   start it all; prints `url: ...` (HAProxy) and `key: ...`
#   scripts/cluster.sh down STATE_DIR              stop it all and delete the database
#
# SKILLS_DIR defaults to examples/skills. Environment: SKILLBOX (the binary; default build/skillbox),
# REPLICAS (default 3), ISOLATION (process or inprocess; default process). STATE_DIR holds what a user
# or a test needs: url, key (0600), haproxy.cfg, haproxy.log, and replica-N/{pid,url,stderr} for each
# replica (a test kills one by its pid). The database's URL, with its password, is in STATE_DIR/pg/url
# (0600).
set -euo pipefail

usage() {
  echo "usage: scripts/cluster.sh up STATE_DIR [SKILLS_DIR] | down STATE_DIR" >&2
  exit 64
}
(($# >= 2 && $# <= 3)) || usage
action=$1
state=$2
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
skillbox=${SKILLBOX:-$repo/build/skillbox}
replicas=${REPLICAS:-3}
isolation=${ISOLATION:-process}

# Whether process $1 runs (a zombie, killed and not yet reaped, does not).
running() {
  local stat
  stat=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [[ "$stat" != Z* ]]
}

# Stops the process of pid file $1 (SIGTERM, then SIGKILL after 10 s) and removes the file.
stop_pid() {
  [[ -f "$1" ]] || return 0
  local pid
  pid=$(<"$1")
  # Only a process this rig started: after a reboot the pid may be another program's.
  if running "$pid" && grep -qaE 'skillbox|haproxy' "/proc/$pid/cmdline" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do
      running "$pid" || break
      sleep 0.1
    done
    if running "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
  fi
  rm -f -- "$1"
}

down() {
  stop_pid "$state/haproxy.pid"
  for dir in "$state"/replica-*; do
    [[ -d "$dir" ]] && stop_pid "$dir/pid"
  done
  bash "$repo/scripts/pg-cluster.sh" stop "$state/pg"
  rm -rf -- "$state"/replica-* "$state/url" "$state/key" "$state/haproxy.cfg"
}

# A free TCP port on 127.0.0.1 (the kernel picks it; another program could take it before we bind it).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits up to 30 s for the line "url: ..." in file $1 and prints the URL.
await_url() {
  for _ in $(seq 300); do
    if grep -q '^url: ' "$1" 2>/dev/null; then
      sed -n 's/^url: //p' "$1" | head -n 1
      return 0
    fi
    sleep 0.1
  done
  return 1
}

case "$action" in
  down)
    (($# == 2)) || usage
    down
    exit 0
    ;;
  up) ;;
  *) usage ;;
esac

skills=$(realpath "${3:-$repo/examples/skills}")
[[ -x "$skillbox" ]] || {
  echo "cluster: no skillbox binary at $skillbox: build it (cmake --build --preset default) or set SKILLBOX" >&2
  exit 69
}
command -v haproxy >/dev/null || {
  echo "cluster: haproxy is not installed: run scripts/setup.sh" >&2
  exit 69
}
[[ "$replicas" =~ ^[1-9]$ ]] || {
  echo "cluster: REPLICAS must be 1 to 9, got '$replicas'" >&2
  exit 64
}
mkdir -p "$state"
down 2>/dev/null || true # what a crashed earlier run left behind
# Whatever stops `up` before it is done (an error, Ctrl-C, a harness's SIGTERM) stops what it started.
up_done=0
trap 'if ((up_done == 0)); then echo "cluster: up did not finish; stopping what started" >&2; down; fi' EXIT
trap 'exit 130' INT TERM

database=$(bash "$repo/scripts/pg-cluster.sh" start "$state/pg")
SKILLBOX_DATABASE_URL=$database "$skillbox" db migrate >/dev/null
(umask 077 && od -An -N24 -tx1 /dev/urandom | tr -d ' \n' >"$state/key")

servers=""
for i in $(seq "$replicas"); do
  dir="$state/replica-$i"
  mkdir -p "$dir"
  SKILLBOX_DATABASE_URL=$database nohup "$skillbox" serve "$skills" --api-key-file "$state/key" \
    --listen 127.0.0.1:0 --isolation "$isolation" --data-dir "$dir/data" >"$dir/stdout" 2>"$dir/stderr" &
  echo $! >"$dir/pid"
done
for i in $(seq "$replicas"); do
  dir="$state/replica-$i"
  if ! url=$(await_url "$dir/stdout"); then
    echo "cluster: replica $i printed no url; its stderr:" >&2
    tail -n 20 "$dir/stderr" >&2
    false
  fi
  echo "$url" >"$dir/url"
  servers+="    server r$i ${url#http://}"$'\n'
done

port=$(free_port)
# Health checks on /readyz every 500 ms: a replica is out after 2 failed checks (killed, or its database
# gone) and back after 2 passed ones. A request whose connection to a replica fails before anything was
# sent is sent to another (retry-on conn-failure, redispatch); one in progress when its replica dies is
# answered 502, since a run may have had effects and only the client, with its idempotency key, may
# send it again.
cat >"$state/haproxy.cfg" <<EOF
global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout http-request 10s
    retries 2
    retry-on conn-failure
    option redispatch 1

frontend skillbox
    bind 127.0.0.1:$port
    default_backend replicas

backend replicas
    balance leastconn
    option httpchk GET /readyz
    http-check expect status 200
    default-server check inter 500ms fastinter 250ms downinter 500ms rise 2 fall 2
$servers
EOF
haproxy -c -q -f "$state/haproxy.cfg"
nohup haproxy -db -f "$state/haproxy.cfg" >"$state/haproxy.log" 2>&1 &
echo $! >"$state/haproxy.pid"

# Ready when HAProxy answers /readyz from a replica (every replica's database probe has passed).
url="http://127.0.0.1:$port"
for _ in $(seq 300); do
  [[ "$(curl -s -o /dev/null -w '%{http_code}' --noproxy '*' "$url/readyz" || true)" == 200 ]] && break
  sleep 0.1
done
[[ "$(curl -s -o /dev/null -w '%{http_code}' --noproxy '*' "$url/readyz" || true)" == 200 ]] || {
  echo "cluster: HAProxy at $url never answered /readyz with 200; its log:" >&2
  tail -n 20 "$state/haproxy.log" >&2
  false
}
up_done=1
echo "$url" >"$state/url"
echo "url: $url"
echo "key: $(<"$state/key")"
