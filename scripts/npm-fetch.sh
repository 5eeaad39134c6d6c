# scripts/npm-fetch.sh — sourced by scripts that use a package from npm without installing it.
#
#   npm_fetch NAME VERSION INTEGRITY    prints the path of NAME-VERSION's tarball in the cache
#
# The tarball is fetched once with `npm pack` (no install, no package scripts), checked against its
# pinned npm integrity (sha512), and kept in $SKILLBOX_CACHE_DIR (default ~/.cache/skillbox). A cached
# tarball whose integrity does not match is fetched again; a fetched one that does not match is an
# error and is removed.

npm_cache_dir() {
  if [[ -n "${SKILLBOX_CACHE_DIR:-}" ]]; then
    echo "$SKILLBOX_CACHE_DIR"
  elif [[ -n "${HOME:-}" ]]; then
    echo "$HOME/.cache/skillbox"
  else
    echo "${TMPDIR:-/tmp}/skillbox-cache-$(id -u)"
  fi
}

# npm's integrity string of a file: "sha512-" + base64 of its SHA-512.
npm_integrity_of() {
  node -e 'const c = require("crypto"), f = require("fs");
           process.stdout.write("sha512-" + c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$1"
}

npm_fetch() {
  local name=$1 version=$2 integrity=$3 cache file tarball got
  cache=$(npm_cache_dir)
  mkdir -p "$cache"
  # npm pack names a scoped package @scope/name as scope-name-VERSION.tgz.
  file=${name#@}
  file=${file//\//-}-$version.tgz
  tarball=$cache/$file
  if [[ ! -f "$tarball" || "$(npm_integrity_of "$tarball")" != "$integrity" ]]; then
    rm -f "$tarball"
    echo "npm-fetch: fetching $name@$version with npm pack" >&2
    (cd "$cache" && npm pack "$name@$version" --silent >/dev/null) || {
      echo "npm-fetch: npm pack $name@$version failed; is the npm registry reachable?" >&2
      return 1
    }
    got=$(npm_integrity_of "$tarball")
    if [[ "$got" != "$integrity" ]]; then
      rm -f "$tarball"
      echo "npm-fetch: $file has integrity $got, expected $integrity" >&2
      return 1
    fi
  fi
  echo "$tarball"
}

# npm_unpack TARBALL DIR VERSION: extracts the tarball's package/ into DIR/package once per version.
npm_unpack() {
  local tarball=$1 dir=$2 version=$3
  if [[ ! -d "$dir/package" || "$(cat "$dir/version" 2>/dev/null)" != "$version" ]]; then
    rm -rf "$dir/package"
    mkdir -p "$dir"
    tar -xzf "$tarball" -C "$dir" --no-same-owner
    echo "$version" >"$dir/version"
  fi
}
