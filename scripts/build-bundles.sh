#!/usr/bin/env bash
# Builds the example OpenHuman bundles (examples/openhuman/NAME/src/index.ts) the way OpenHuman builds
# its skills: tsc type-checks every source, then esbuild bundles each one into NAME/index.js with
# bundle, format 'iife', globalName '__skill_bundle', platform 'neutral', target 'es2019' and the
# footer that sets globalThis.__skill (examples/openhuman/build.mjs). NAME/manifest.json is copied
# beside it.
#
# Usage: scripts/build-bundles.sh OUT_DIR [NPM_DIR]   (the build runs it: tests/CMakeLists.txt)
#        scripts/build-bundles.sh --fetch             (only fetch and verify the packages: scripts/test.sh
#                                                      does it before the hermetic test run)
#
# typescript, esbuild and esbuild's binary package @esbuild/linux-x64 come from npm: pinned versions,
# fetched with npm pack, verified against their sha512 integrity (scripts/npm-fetch.sh), unpacked into
# NPM_DIR (default build/npm). Nothing is installed globally, no package scripts run, and nothing is
# written to the source tree.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/npm-fetch.sh
source "$root/scripts/npm-fetch.sh"

ts_version=5.9.3
ts_integrity='sha512-jl1vZzPDinLr9eUt3J/t7V6FgNEw9QjvBPdysz9KfQDD41fQrC2Y4vKQdiaUpFT4bXlb1RHhLpp8wtm6M5TgSw=='
esbuild_version=0.28.2
esbuild_integrity='sha512-HKVLS8dvII+xoKW9kmqxbRKrnWEXfJJr/FZhhJmiqIB0e053QNYFqOBouTMO/k5sID4MvCiUCvv8b9M4h32wIA=='
esbuild_linux_x64_integrity='sha512-4xTZr1FUmSoQW4XIWmit3tzQrUTZM+N3P0XV8xROKYF50XfI7xeO90+1bZvNwxIufQ9hDQVRJH5YhgPVF8A/HQ=='

if [[ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]]; then
  echo "build-bundles: esbuild's binary is pinned for linux x86_64 only (@esbuild/linux-x64); this is $(uname -s)-$(uname -m)" >&2
  exit 1
fi

ts_tgz=$(npm_fetch typescript "$ts_version" "$ts_integrity")
esbuild_tgz=$(npm_fetch esbuild "$esbuild_version" "$esbuild_integrity")
binary_tgz=$(npm_fetch @esbuild/linux-x64 "$esbuild_version" "$esbuild_linux_x64_integrity")
if [[ "${1:-}" == --fetch ]]; then
  exit 0
fi

out=${1:?usage: scripts/build-bundles.sh OUT_DIR [NPM_DIR] | --fetch}
npm_dir=${2:-$root/build/npm}
npm_unpack "$ts_tgz" "$npm_dir/typescript" "$ts_version"
npm_unpack "$esbuild_tgz" "$npm_dir/esbuild" "$esbuild_version"
npm_unpack "$binary_tgz" "$npm_dir/esbuild-linux-x64" "$esbuild_version"

src=$root/examples/openhuman
echo "build-bundles: tsc $ts_version: type-checking examples/openhuman"
node "$npm_dir/typescript/package/lib/tsc.js" -p "$src/tsconfig.json" --pretty false

echo "build-bundles: esbuild $esbuild_version: bundling into ${out#"$root"/}"
mkdir -p "$out"
rm -f "$out/bundles.stamp"
# The esbuild package finds its binary here instead of in a node_modules tree.
ESBUILD_BINARY_PATH="$npm_dir/esbuild-linux-x64/package/bin/esbuild" \
  node "$src/build.mjs" "$npm_dir/esbuild/package/lib/main.js" "$src" "$out"
touch "$out/bundles.stamp"
