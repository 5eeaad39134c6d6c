#!/usr/bin/env bash
# Fails (exit 1) listing every tracked C/C++ file that clang-format (the repo's .clang-format) would change.
# Run by scripts/test.sh; `scripts/check-format.sh --fix` rewrites the files instead.
set -euo pipefail
cd "$(dirname "$0")/.."

clang_format="${CLANG_FORMAT:-clang-format}"
if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "check-format: $clang_format not found; install the Debian package clang-format (scripts/setup.sh does)" >&2
  exit 1
fi

mapfile -t files < <(git ls-files '*.c' '*.cc' '*.cpp' '*.h' '*.hpp' | grep -v '^patches/')
if [[ "${1:-}" == "--fix" ]]; then
  "$clang_format" -i "${files[@]}"
  exit 0
fi

# One clang-format process for the whole tree; its diagnostics start with "file:line:col: error:".
mapfile -t bad < <("$clang_format" --dry-run -Werror "${files[@]}" 2>&1 |
                   sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u)
if ((${#bad[@]} > 0)); then
  echo "check-format: ${#bad[@]} file(s) are not formatted with .clang-format:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "fix with: scripts/check-format.sh --fix" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
