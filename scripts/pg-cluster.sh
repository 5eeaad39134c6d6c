#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster on loopback, for the tests (and for trying `skillbox db migrate`).
#
#   scripts/pg-cluster.sh start STATE_DIR   initdb into a new temporary folder, start postgres on
#                                           127.0.0.1 at a free port, create the database `skillbox_test`;
#                                           prints its postgres:// URL and writes it to STATE_DIR/url
#   scripts/pg-cluster.sh stop STATE_DIR    stop that cluster and delete its folder
#   scripts/pg-cluster.sh down STATE_DIR    stop its server at once (immediate mode: as if it crashed),
#                                           keeping its data: for tests of a database that goes away
#   scripts/pg-cluster.sh up STATE_DIR      start that server again, on the same port
#
# The cluster is real: fsync on, password (SCRAM) authentication over TCP, its unix socket in its own
# folder (never /var/run/postgresql). `initdb` refuses to run as root, so as root (how CI runs) every
# PostgreSQL program runs as the `postgres` system user (runuser), which owns the folder; as uid 0 of a
# user namespace, in a nested one (see owner_mode below). A start over a
# STATE_DIR whose cluster is still recorded stops that one first, so a crashed test run leaves nothing
# behind for long. PG_BIN overrides where the programs are (default /usr/lib/postgresql/15/bin).
#
# ctest starts and stops it as the fixture `postgres` (tests/CMakeLists.txt); docs/scale-out.md.
set -euo pipefail

usage() {
  echo "usage: scripts/pg-cluster.sh start|stop|down|up STATE_DIR" >&2
  exit 64
}
(($# == 2)) || usage
action=$1
state=$2
bin=${PG_BIN:-/usr/lib/postgresql/15/bin}

if [[ ! -x "$bin/initdb" ]]; then
  echo "pg-cluster: no PostgreSQL 15 programs in $bin (initdb missing): run scripts/setup.sh, which" \
    "installs postgresql-15, or set PG_BIN" >&2
  exit 69
fi

# Who runs the PostgreSQL programs (initdb and postgres refuse uid 0):
#   plain   not root: as ourselves
#   runuser real root (CI): as the `postgres` system user, which owns the cluster's folder
#   nested  uid 0 of a user namespace (scripts/hermetic.sh run by an ordinary user): `postgres` is not
#           mapped there, so the programs run in a nested user namespace as uid 1000, which maps back to
#           the same real user; the folder stays ours
owner_mode=plain
if [[ $(id -u) -eq 0 ]]; then
  if id postgres >/dev/null 2>&1 && runuser -u postgres -- true 2>/dev/null; then
    owner_mode=runuser
  elif unshare --user --map-user=1000 --map-group=1000 -- true 2>/dev/null; then
    owner_mode=nested
  else
    owner_mode=none
  fi
fi

# The options postgres runs with (start, and up again at the same port).
server_options() {
  echo "-c listen_addresses=127.0.0.1 -p $1 -k $2/sock -c fsync=on -c max_connections=200"
}

# Runs a PostgreSQL program as the cluster's owner.
as_owner() {
  case "$owner_mode" in
    runuser) runuser -u postgres -- "$@" ;;
    nested) unshare --user --map-user=1000 --map-group=1000 -- "$@" ;;
    *) "$@" ;;
  esac
}

stop_cluster() {
  [[ -f "$state/folder" ]] || return 0
  local folder
  folder=$(<"$state/folder")
  # Immediate: a throwaway cluster needs no shutdown checkpoint (a fast stop spends seconds on it).
  if [[ -f "$folder/data/postmaster.pid" ]]; then
    as_owner "$bin/pg_ctl" -D "$folder/data" -m immediate -w -t 30 stop >/dev/null ||
      echo "pg-cluster: pg_ctl stop failed for $folder/data; deleting it anyway" >&2
  fi
  # Only ever a folder this script made (mktemp's pattern below).
  [[ "$folder" == /tmp/skillbox-pg.* ]] && rm -rf -- "$folder"
  rm -f -- "$state/folder" "$state/url"
}

# The folder of the cluster recorded in STATE_DIR, for down and up.
recorded_folder() {
  if [[ ! -f "$state/folder" || ! -f "$state/url" ]]; then
    echo "pg-cluster: no cluster recorded in $state; run 'scripts/pg-cluster.sh start $state' first" >&2
    exit 66
  fi
  cat "$state/folder"
}

case "$action" in
  stop)
    stop_cluster
    exit 0
    ;;
  down)
    folder=$(recorded_folder)
    as_owner "$bin/pg_ctl" -D "$folder/data" -m immediate -w -t 30 stop >/dev/null
    exit 0
    ;;
  up)
    folder=$(recorded_folder)
    url=$(<"$state/url")
    port=${url##*:}
    port=${port%%/*}
    as_owner "$bin/pg_ctl" -D "$folder/data" -l "$folder/postgres.log" -w -t 60 -o "$(server_options "$port" "$folder")" \
      start >/dev/null
    exit 0
    ;;
  start) ;;
  *) usage ;;
esac

if [[ "$owner_mode" == none ]]; then
  echo "pg-cluster: running as uid 0, and initdb refuses root; found neither the 'postgres' system user" \
    "(postgresql-15 creates it: run scripts/setup.sh) nor a way to leave uid 0 (unshare --user)" >&2
  exit 69
fi

mkdir -p "$state"
stop_cluster
folder=$(mktemp -d /tmp/skillbox-pg.XXXXXXXX)
chmod 0700 "$folder"
[[ "$owner_mode" == runuser ]] && chown postgres: "$folder"
# Written now, so that a failure below still lets `stop` clean up.
printf '%s\n' "$folder" >"$state/folder"

password=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
as_owner bash -c 'umask 077 && cat >"$1/pwfile"' _ "$folder" <<<"$password"
as_owner mkdir -m 0700 "$folder/sock"
if ! as_owner "$bin/initdb" -D "$folder/data" -U skillbox --pwfile="$folder/pwfile" -E UTF8 --no-locale \
  --auth-local=trust --auth-host=scram-sha-256 >"$state/initdb.log" 2>&1; then
  echo "pg-cluster: initdb failed; its output:" >&2
  cat "$state/initdb.log" >&2
  exit 70
fi
as_owner rm -f "$folder/pwfile"
rm -f "$state/initdb.log"

# A free port: the kernel picks one, we release it and postgres binds it. Another program may take it
# in between, so a start that could not bind tries a new port (a few times).
started=0
for _ in 1 2 3 4 5; do
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  if as_owner "$bin/pg_ctl" -D "$folder/data" -l "$folder/postgres.log" -w -t 60 \
    -o "$(server_options "$port" "$folder")" start >/dev/null; then
    started=1
    break
  fi
  grep -q "could not bind" "$folder/postgres.log" 2>/dev/null || break
done
if ((started == 0)); then
  echo "pg-cluster: postgres did not start; its log ($folder/postgres.log):" >&2
  tail -n 20 "$folder/postgres.log" >&2 || true
  exit 70
fi

as_owner "$bin/createdb" -h "$folder/sock" -p "$port" -U skillbox skillbox_test
url="postgres://skillbox:$password@127.0.0.1:$port/skillbox_test"
(umask 077 && printf '%s\n' "$url" >"$state/url")
printf '%s\n' "$url"
