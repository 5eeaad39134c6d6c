#!/usr/bin/env bash
# bench/peers/run.sh — the peers benchmark (docs/benchmarks.md): builds what is missing, runs the four
# workloads against every peer in one go and prints one table of medians, p90s and ratios to the raw
# QuickJS floor measured in the same run. Not part of the test command.
#
#   bench/peers/run.sh                       everything, 3 rounds
#   PEERS_ROUNDS=5 PEERS_SCALE=2 bench/peers/run.sh   more rounds, twice the iterations per round
#   PEERS_ONLY="raw skillbox" bench/peers/run.sh      a subset of the peers (names as in the table)
#
# Environment: SKILLBOX_BUILD_DIR (default: build/ of this checkout; configured with RelWithDebInfo when
# missing), NICE (niceness of the build, default 10). npm peers are installed from the committed
# package-lock.json into $SKILLBOX_BUILD_DIR/peers/node_modules, never globally. A peer that cannot be
# built or loaded here (isolated-vm needs node-gyp and a compiler) is reported as skipped.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${SKILLBOX_BUILD_DIR:-$src/build}
rounds=${PEERS_ROUNDS:-3}
scale=${PEERS_SCALE:-1}
nice_level=${NICE:-10}
all_peers="raw skillbox skillbox-worker quickjs-emscripten node-vm isolated-vm"
peers=${PEERS_ONLY:-$all_peers}

say() { printf '%s\n' "$*" >&2; }

# --- build what is missing -------------------------------------------------------------------------
if [ ! -f "$build/CMakeCache.txt" ]; then
  say "== configuring $build"
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSKILLBOX_BUILD_BENCH=ON \
    "${launcher[@]}" >&2
elif ! grep -q '^SKILLBOX_BUILD_BENCH:BOOL=ON' "$build/CMakeCache.txt"; then
  cmake -S "$src" -B "$build" -DSKILLBOX_BUILD_BENCH=ON >&2
fi
say "== building peer_raw peer_skillbox"
nice -n "$nice_level" cmake --build "$build" --target peer_raw peer_skillbox >&2
# Worker mode (issue 10): once the public API declares WorkerRunner, build the worker executable too
# (target skillbox_worker, file skillbox-worker). Without it the peer reports worker mode as skipped.
worker_exe=""
if grep -q '^class WorkerRunner' "$src/include/skillbox/skillbox.h"; then
  say "== building skillbox_worker"
  if nice -n "$nice_level" cmake --build "$build" --target skillbox_worker >&2; then
    worker_exe=$(find "$build" -name skillbox-worker -type f -perm -u+x -print -quit)
  else
    say "skillbox_worker did not build; worker mode will be skipped"
  fi
fi
bin="$build/bench/peers"

# --- npm peers, pinned by the lockfile, into the build tree ---------------------------------------
npm_dir="$build/peers"
node_ok=0
if command -v node >/dev/null && command -v npm >/dev/null; then
  node_ok=1
  mkdir -p "$npm_dir"
  cp "$here/peer_node.mjs" "$npm_dir/"  # run from there, so its imports resolve to these node_modules
  if ! cmp -s "$here/package-lock.json" "$npm_dir/.installed-lock.json"; then
    say "== npm ci into $npm_dir (isolated-vm is optional: if it does not build, it is skipped)"
    cp "$here/package.json" "$here/package-lock.json" "$npm_dir/"
    if nice -n "$nice_level" npm ci --prefix "$npm_dir" --no-audit --no-fund >"$npm_dir/npm-ci.log" 2>&1; then
      cp "$here/package-lock.json" "$npm_dir/.installed-lock.json"
    else
      say "npm ci failed (see $npm_dir/npm-ci.log); the npm peers will be skipped"
    fi
  fi
fi

# --- run ---------------------------------------------------------------------------------------------
out=$(mktemp -d /tmp/skillbox-peers-run-XXXXXX)
trap 'rm -rf "$out"' EXIT
: >"$out/samples"
: >"$out/skips"
: >"$out/notes"
: >"$out/children"

# peer_command PEER: the command line prefix of a peer, or nothing with a reason in $reason.
peer_command() {
  reason=""
  case $1 in
    raw) cmd=("$bin/peer_raw") ;;
    skillbox) cmd=("$bin/peer_skillbox" in-process) ;;
    skillbox-worker)
      cmd=(env "SKILLBOX_PEERS_WORKER=$worker_exe" "$bin/peer_skillbox" worker) ;;
    node-vm | quickjs-emscripten | isolated-vm)
      if [ $node_ok = 0 ]; then
        reason="node/npm not found"
        return 1
      fi
      local name=$1 flags=(--expose-gc)
      [ "$name" = node-vm ] && name=vm
      [ "$name" = isolated-vm ] && flags+=(--no-node-snapshot)  # Node 20 needs it for isolated-vm
      cmd=(node "${flags[@]}" "$npm_dir/peer_node.mjs" "$name") ;;
    *)
      reason="unknown peer"
      return 1 ;;
  esac
}

skipped() { grep -q "^$1 " "$out/skips"; }

# Iterations per round and leading iterations dropped as warm-up, per workload.
iterations() {
  case $1 in W1) echo $((400 * scale)) 40 ;; W2) echo $((150 * scale)) 20 ;; W3) echo $((12 * scale)) 3 ;;
    W4) echo 200 0 ;; esac
}

for round in $(seq 1 "$rounds"); do
  for w in W1 W2 W3 W4; do
    read -r n warm < <(iterations $w)
    file="$here/workloads/$(echo $w | tr W w).js"
    [ $w = W4 ] && file="$here/workloads/w1.js"  # W4 keeps W1's sandboxes alive
    for peer in $peers; do
      skipped "$peer" && continue
      if [ $w = W4 ] && [ "$peer" = skillbox-worker ]; then
        grep -q "^skillbox-worker W4" "$out/notes" ||
          echo "skillbox-worker W4 not measured: its sandboxes live in worker processes, outside this RSS" >>"$out/notes"
        continue
      fi
      if ! peer_command "$peer"; then
        echo "$peer $reason" >>"$out/skips"
        continue
      fi
      say "== round $round/$rounds $w $peer"
      set +e
      PEERS_WARM=$warm timeout 600 "${cmd[@]}" "$file" $w "$n" >"$out/stdout" 2>"$out/stderr"
      rc=$?
      set -e
      if [ $rc = 3 ]; then
        echo "$peer $(head -n1 "$out/stderr")" >>"$out/skips"
        continue
      elif [ $rc != 0 ]; then
        say "$peer $w failed (exit $rc): $(head -n3 "$out/stderr")"
        echo "$peer $w FAILED (exit $rc): $(head -n1 "$out/stderr")" >>"$out/notes"
        continue
      fi
      grep '^heap ' "$out/stdout" | sed "s/^/$peer $w /" >>"$out/notes" || true
      grep '^children-faults ' "$out/stdout" | sed "s/^/$peer $w /" >>"$out/children" || true
      grep -v '^heap \|^children-faults ' "$out/stdout" | tail -n +$((warm + 1)) | sed "s/^/$peer $w /" >>"$out/samples"
    done
  done
done

# --- report ------------------------------------------------------------------------------------------
version_of() { node -p "require('$npm_dir/node_modules/$1/package.json').version" 2>/dev/null || echo "-"; }
qjs_version=$(sed -n 's/^QJS_VERSION:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)
echo
echo "peers benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $rounds round(s), scale $scale"
echo "machine: $(nproc) cores, $(uname -m), Linux $(uname -r); load average at the end:$(uptime | sed 's/.*load average://')"
echo "versions: skillbox $(git -C "$src" describe --always --dirty 2>/dev/null || echo '?'), QuickJS ${qjs_version:-2021-03-27} (raw, skillbox)," \
  "node $(node --version 2>/dev/null || echo -), quickjs-emscripten $(version_of quickjs-emscripten)," \
  "isolated-vm $(version_of isolated-vm)"
echo
# table COLUMN UNIT: one table of the samples' COLUMN (3 wall-clock, 4 process CPU time, 5 minor page
# faults where the peer reports them); W4 has one value.
table() {
  awk -v col="$1" '$2 == "W4" || NF >= col { print $1, $2, ($2 == "W4" ? $3 : $col) }' "$out/samples" |
    sort -k1,1 -k2,2 -k3,3g | awk -v order="$peers" -v what="$2" '
  function flush() {
    if (n == 0) return
    med[key] = v[int((n - 1) / 2) + 1]
    r = int(0.9 * n); if (r < 0.9 * n) r++; if (r < 1) r = 1
    p90[key] = v[r]; cnt[key] = n
    n = 0
  }
  { k = $1 " " $2; if (k != key) { flush(); key = k }; v[++n] = $3 }
  END {
    flush()
    print "| peer (" what ") | W1 `1+1` p50 µs | p90 | ×raw | W2 JSON p50 µs | p90 | ×raw | W3 fib(27) p50 µs | p90 | ×raw | W4 KiB/sandbox | ×raw |"
    print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    np = split(order, peers, " ")
    for (i = 1; i <= np; i++) {
      p = peers[i]; line = "| " p
      for (w = 1; w <= 4; w++) {
        k = p " W" w; f = "raw W" w
        if (!(k in med)) { line = line (w < 4 ? " | - | - | -" : " | - | -"); continue }
        ratio = (f in med && med[f] > 0) ? sprintf("%.2f", med[k] / med[f]) : "-"
        if (w < 4) line = line sprintf(" | %.0f | %.0f | %s", med[k], p90[k], ratio)
        else line = line sprintf(" | %.1f | %s", med[k] / 1024, ratio)
      }
      print line " |"
    }
    printf "\nsamples per cell (raw, after warm-up): W1 %d, W2 %d, W3 %d; W4: the median of %d round(s)\n",
      cnt["raw W1"], cnt["raw W2"], cnt["raw W3"], cnt["raw W4"]
  }'
}
echo "Wall-clock time per iteration (what a caller waits):"
echo
table 3 "wall"
echo
echo "Process CPU time per iteration (all threads; steadier than wall-clock on a loaded machine):"
echo
table 4 "CPU"
# faults: the mean minor page faults per iteration (column 5; peers that do not report it show -). A
# figure that does not depend on the machine's speed: each fresh page costs a fault, 0.5-15 µs by machine.
faults() {
  awk 'FILENAME ~ /children$/ { s[$1 " " $2] += $4; next }  # the same iterations as the samples
  NF >= 5 && $2 != "W4" { k = $1 " " $2; s[k] += $5; n[k]++ }
  END {
    print "| peer | W1 faults/iteration | W2 | W3 |"
    print "|---|---:|---:|---:|"
    np = split(order, peers, " ")
    for (i = 1; i <= np; i++) {
      p = peers[i]; line = "| " p
      for (w = 1; w <= 3; w++) { k = p " W" w; line = line ((k in n) ? sprintf(" | %.1f", s[k] / n[k]) : " | -") }
      print line " |"
    }
  }' order="$peers" "$out/samples" "$out/children"
}
echo
echo "Minor page faults per iteration (mean after warm-up; the process and, for skillbox-worker, its zygote and workers):"
echo
faults
if [ -s "$out/skips" ]; then
  echo
  echo "skipped:"
  sed 's/^/  /' "$out/skips"
fi
if [ -s "$out/notes" ]; then
  echo
  echo "notes:"
  sed -e 's/^\(.*\) W4 heap \([0-9]*\)$/\1 W4: heap peak of one sandbox (its own allocator count) \2 B/' -e 's/^/  /' "$out/notes" | sort -u
fi
# The project's own peers must work; an outside peer failing is reported above, not fatal.
if grep -Eq '^(raw|skillbox) W[0-9] FAILED' "$out/notes"; then exit 1; fi
