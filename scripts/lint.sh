#!/usr/bin/env bash
# Runs clang-tidy (the repository's .clang-tidy, every warning an error) on the C++ files changed since a
# base revision, or on the whole tree. Too slow for every CI run (a minute or more per file on a small
# machine); run it before sending a change.
#
#   scripts/lint.sh                  files changed against the merge-base with origin/main (else main)
#   scripts/lint.sh BASE             files changed against the merge-base with BASE (a branch, tag, commit)
#   scripts/lint.sh --all            every C++ file of the tree
#   options: -p DIR (build directory with compile_commands.json, default build), -j N (parallel
#            clang-tidy processes, default 2), --list (print the files and stop)
#
# "Changed" covers commits since the merge-base, staged and unstaged edits and untracked files. A changed
# .cpp is checked itself; a changed .h through the .cpp beside it when there is one (its diagnostics
# then come from the header filter of .clang-tidy), otherwise on its own. Files the build does not
# compile are skipped. Exit status: 0 clean, 1 findings, 2 usage or setup errors.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
jobs=2
all=false
list=false
base=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --all) all=true ;;
    --list) list=true ;;
    -p) build_dir="${2:?-p needs a directory}"; shift ;;
    -j) jobs="${2:?-j needs a number}"; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "lint.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) [[ -z "$base" ]] || { echo "lint.sh: one base revision only" >&2; exit 2; }; base="$1" ;;
  esac
  shift
done

command -v clang-tidy >/dev/null || { echo "lint.sh: clang-tidy not found (apt-get install clang-tidy)" >&2; exit 2; }
db="$build_dir/compile_commands.json"
[[ -f "$db" ]] || { echo "lint.sh: $db missing; configure first: cmake --preset default" >&2; exit 2; }

is_cxx() {
  case "$1" in
    *.cpp|*.cc|*.h|*.hpp) return 0 ;;
    *) return 1 ;;
  esac
}

if $all; then
  mapfile -t candidates < <(git ls-files -- '*.cpp' '*.cc')
else
  if [[ -z "$base" ]]; then
    if git rev-parse -q --verify origin/main >/dev/null; then base=origin/main; else base=main; fi
  fi
  git rev-parse -q --verify "$base^{commit}" >/dev/null || { echo "lint.sh: unknown revision $base" >&2; exit 2; }
  merge_base="$(git merge-base "$base" HEAD)"
  mapfile -t changed < <({ git diff --name-only --diff-filter=d "$merge_base" --; git ls-files --others --exclude-standard; } | sort -u)
  candidates=()
  for f in "${changed[@]}"; do
    is_cxx "$f" || continue
    [[ -f "$f" ]] || continue
    if [[ "$f" == *.h || "$f" == *.hpp ]]; then
      sibling="${f%.*}.cpp"
      if [[ -f "$sibling" ]]; then candidates+=("$sibling"); else candidates+=("$f"); fi
    else
      candidates+=("$f")
    fi
  done
fi

# Only what the build compiles has flags; a header without a .cpp beside it gets flags interpolated
# from its neighbours by clang-tidy.
# The database names files by absolute path, which CMake takes with symlinks resolved.
root="$(pwd -P)"
files=()
skipped=0
mapfile -t candidates < <(printf '%s\n' "${candidates[@]+"${candidates[@]}"}" | sed '/^$/d' | sort -u)
for f in "${candidates[@]+"${candidates[@]}"}"; do
  if [[ "$f" == *.h || "$f" == *.hpp ]] || grep -qF -e "\"$root/$f\"" -e "\"$PWD/$f\"" "$db"; then
    files+=("$f")
  else
    skipped=$((skipped + 1))
    $all || echo "lint.sh: $f is not in $db (a new file? build once to re-glob); skipped" >&2
  fi
done
# With --all, a database that matches no file (another checkout's, a stale one) must not pass as clean.
if $all && [[ ${#files[@]} -eq 0 ]]; then
  echo "lint.sh: none of the tree's ${#candidates[@]} C++ files is in $db (built from another checkout?)" >&2
  exit 2
fi
if $all && [[ $skipped -gt 0 ]]; then echo "lint.sh: $skipped file(s) the build does not compile; skipped" >&2; fi

if [[ ${#files[@]} -eq 0 ]]; then
  echo "lint.sh: no C++ files to check"
  exit 0
fi
if $list; then printf '%s\n' "${files[@]}"; exit 0; fi

echo "lint.sh: clang-tidy on ${#files[@]} file(s), $jobs at a time" >&2
status=0
# One clang-tidy per file; each file's report is printed in one piece so parallel runs do not interleave.
printf '%s\0' "${files[@]}" | xargs -0 -n 1 -P "$jobs" sh -c '
  out=$(clang-tidy -p "$0" --quiet "$1" 2>&1); rc=$?
  out=$(printf "%s\n" "$out" | grep -v -E "^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$")
  [ -z "$out" ] || printf "%s\n" "$out"
  [ "$rc" -eq 0 ] || { echo "lint.sh: findings in $1" >&2; exit 1; }' "$build_dir" || status=1
if [[ $status -ne 0 ]]; then echo "lint.sh: clang-tidy reported findings" >&2; else echo "lint.sh: clean" >&2; fi
exit "$status"
