#!/usr/bin/env bash
# Type-checks the example skills (examples/skills/**/*.js, with checkJs) and the API fixture
# types/tests/*.ts against types/skillbox.d.ts, with TypeScript from npm.
#
# Usage: scripts/typecheck.sh [WORK_DIR]      (ctest runs it as `types.typecheck`)
#        scripts/typecheck.sh --fetch         (only fetch and verify: scripts/test.sh does this before
#                                              the hermetic ctest run, which has no network)
#
# TypeScript is fetched once with `npm pack`, verified against its published sha512 integrity (like
# QuickJS, cmake/QuickJS.cmake), cached in $SKILLBOX_CACHE_DIR (default ~/.cache/skillbox) and
# extracted into WORK_DIR (default build/typescript). Nothing is installed globally and no package
# scripts run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fetch_only=0
if [[ "${1:-}" == --fetch ]]; then
  fetch_only=1
  shift
fi
work=${1:-$root/build/typescript}

ts_version=5.9.3
ts_integrity='sha512-jl1vZzPDinLr9eUt3J/t7V6FgNEw9QjvBPdysz9KfQDD41fQrC2Y4vKQdiaUpFT4bXlb1RHhLpp8wtm6M5TgSw=='

if [[ -n "${SKILLBOX_CACHE_DIR:-}" ]]; then
  cache=$SKILLBOX_CACHE_DIR
elif [[ -n "${HOME:-}" ]]; then
  cache=$HOME/.cache/skillbox
else
  cache=$work/cache
fi
mkdir -p "$cache" "$work"
tarball=$cache/typescript-$ts_version.tgz

# npm's integrity string of a file: "sha512-" + base64 of its SHA-512.
integrity_of() {
  node -e 'const c = require("crypto"), f = require("fs");
           process.stdout.write("sha512-" + c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$1"
}

if [[ ! -f "$tarball" || "$(integrity_of "$tarball")" != "$ts_integrity" ]]; then
  rm -f "$tarball"
  echo "typecheck: fetching typescript@$ts_version with npm pack"
  (cd "$cache" && npm pack "typescript@$ts_version" --silent >/dev/null)
  got=$(integrity_of "$tarball")
  if [[ "$got" != "$ts_integrity" ]]; then
    rm -f "$tarball"
    echo "typecheck: typescript-$ts_version.tgz has integrity $got, expected $ts_integrity" >&2
    exit 1
  fi
fi

if ((fetch_only)); then
  exit 0
fi

tsc=$work/package/lib/tsc.js
if [[ ! -f "$tsc" || "$(cat "$work/version" 2>/dev/null)" != "$ts_version" ]]; then
  rm -rf "$work/package"
  tar -xzf "$tarball" -C "$work"
  echo "$ts_version" >"$work/version"
fi

# What is checked: the declarations themselves (skipLibCheck off) with the strict fixture, then every
# example skill's JavaScript (checkJs; strict, except that untyped parameters are allowed in plain JS).
write_config() {  # FILE NO_IMPLICIT_ANY INCLUDE...
  local file=$1 no_implicit_any=$2
  shift 2
  local include
  include=$(printf '"%s",' "$@")
  cat >"$file" <<JSON
{
  "compilerOptions": {
    "target": "es2020", "module": "es2020", "moduleResolution": "bundler", "lib": ["es2020"], "types": [],
    "allowJs": true, "checkJs": true, "noEmit": true, "strict": true, "noImplicitAny": $no_implicit_any,
    "skipLibCheck": false, "isolatedModules": true
  },
  "files": ["$root/types/skillbox.d.ts"],
  "include": [${include%,}]
}
JSON
}

mapfile -t skills < <(find "$root/examples/skills" -mindepth 2 -maxdepth 2 -name skill.json -printf '%h\n' 2>/dev/null | sort)
echo "typecheck: TypeScript $ts_version: types/skillbox.d.ts and types/tests"
write_config "$work/tsconfig.fixture.json" true "$root/types/tests/**/*.ts"
node "$tsc" -p "$work/tsconfig.fixture.json" --pretty false
if ((${#skills[@]} > 0)); then
  patterns=()
  for dir in "${skills[@]}"; do
    echo "typecheck: example skill ${dir#"$root"/}"
    patterns+=("$dir/**/*.js" "$dir/**/*.mjs")
  done
  write_config "$work/tsconfig.examples.json" false "${patterns[@]}"
  node "$tsc" -p "$work/tsconfig.examples.json" --pretty false
else
  echo "typecheck: no example skills found under examples/skills"
fi
echo "typecheck: ok"
