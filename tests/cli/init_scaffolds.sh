#!/usr/bin/env bash
# ctest cli.init_scaffolds: `skillbox init DIR` must type-check (checkJs, strict) against the
# skillbox.d.ts it wrote; `skillbox init DIR --ts`, then the scaffold's own `npm run build`, then
# `skillbox test DIR` must pass. Offline: the pinned typescript and esbuild packages the build tree
# already unpacked (scripts/build-bundles.sh) are linked into the scaffold's node_modules, where
# `npm install` would put them; the versions must be the ones package.json pins.
#
# Usage: tests/cli/init_scaffolds.sh SKILLBOX NPM_DIR
set -euo pipefail
skillbox=$1
npm_dir=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/skillbox-init-ts-XXXXXX")
trap 'rm -rf "$work"' EXIT
export SKILLBOX_HOME=$work/home npm_config_update_notifier=false npm_config_offline=true

tsc=$npm_dir/typescript/package/lib/tsc.js
"$skillbox" init "$work/plain"
cat >"$work/plain/tsconfig.json" <<'JSON'
{
  "compilerOptions": {
    "target": "es2020", "module": "es2020", "moduleResolution": "bundler", "lib": ["es2020"], "types": [],
    "allowJs": true, "checkJs": true, "noEmit": true, "strict": true, "skipLibCheck": false
  },
  "include": ["*.js", "*.d.ts"]
}
JSON
node "$tsc" -p "$work/plain/tsconfig.json" --pretty false

# The hints must work as written: skillbox is not on this PATH, so they call it by its full path.
PATH=/usr/bin:/bin "$skillbox" init "$work/greeter" --ts | tee "$work/init.out"
npm_test=$(sed -n 's/^  \(SKILLBOX=[^ ]* npm test\) .*/\1/p' "$work/init.out")
[[ -n "$npm_test" ]] || { echo "init_scaffolds: no 'SKILLBOX=... npm test' hint" >&2; exit 1; }
grep -q "is not on your PATH" "$work/init.out" || { echo "init_scaffolds: no PATH note" >&2; exit 1; }
# With skillbox on PATH the hint is plain `npm test`.
mkdir -p "$work/bin" && ln -s "$(readlink -f "$skillbox")" "$work/bin/skillbox"
PATH=$work/bin:/usr/bin:/bin skillbox init "$work/other" --ts >"$work/init2.out"
grep -q "^  npm test " "$work/init2.out" || { echo "init_scaffolds: hint: $(cat "$work/init2.out")" >&2; exit 1; }
if grep -q "PATH" "$work/init2.out"; then echo "init_scaffolds: PATH note with skillbox on PATH" >&2; exit 1; fi
cd "$work/greeter"
for pkg in typescript esbuild; do
  pinned=$(node -p "require('./package.json').devDependencies['$pkg']")
  have=$(node -p "require('$npm_dir/$pkg/package/package.json').version")
  if [[ "$pinned" != "$have" ]]; then
    echo "init_scaffolds: package.json pins $pkg $pinned, but the build tree has $have (scripts/build-bundles.sh): update one" >&2
    exit 1
  fi
done
mkdir -p node_modules/.bin node_modules/@esbuild
ln -s "$npm_dir/typescript/package" node_modules/typescript
ln -s "$npm_dir/esbuild/package" node_modules/esbuild
ln -s "$npm_dir/esbuild-linux-x64/package" node_modules/@esbuild/linux-x64
ln -s ../typescript/bin/tsc node_modules/.bin/tsc
ln -s "$npm_dir/esbuild-linux-x64/package/bin/esbuild" node_modules/.bin/esbuild

# Before the build the entry is missing, and skillbox says how to make it.
if "$skillbox" run . 2>"$work/err"; then
  echo "init_scaffolds: run before the build succeeded" >&2
  exit 1
fi
grep -q "npm run build" "$work/err" || { echo "init_scaffolds: no build hint in: $(cat "$work/err")" >&2; exit 1; }

# `npm test` as the hint says (builds, then runs the tests), with no skillbox on PATH.
PATH=/usr/bin:/bin:$(dirname "$(command -v node)") bash -c "$npm_test" | tee "$work/out"
test -f dist/index.js
grep -q "4 tests: 4 passed, 0 failed" "$work/out"
# The build maps dist/index.js back to index.ts (--sourcemap=inline), so an error names index.ts's line.
grep -q "^//# sourceMappingURL=data:application/json;base64," dist/index.js
if "$skillbox" run . --input '{"name": " "}' 2>"$work/err"; then
  echo "init_scaffolds: a blank name did not fail" >&2
  exit 1
fi
line=$(grep -n "throw new TypeError('name: expected" index.ts | cut -d: -f1)
grep -q "(index.ts:$line)" "$work/err" || { echo "init_scaffolds: no index.ts:$line frame in: $(cat "$work/err")" >&2; exit 1; }
# The skill's sources are dist/index.js and what it imports: node_modules is never read.
"$skillbox" check . >"$work/check" || { echo "init_scaffolds: check failed after the build" >&2; exit 1; }

# A type error fails the build (tsc runs first), so a broken skill never reaches dist/.
rm -rf dist
sed -i 's/return { greeting/return { visits: "many", greeting/' index.ts
if npm run --silent build >"$work/build.log" 2>&1; then
  echo "init_scaffolds: a type error did not fail the build" >&2
  exit 1
fi
grep -q "error TS" "$work/build.log" || { echo "init_scaffolds: expected a tsc error: $(cat "$work/build.log")" >&2; exit 1; }
test ! -e dist/index.js
echo "init_scaffolds: ok"
