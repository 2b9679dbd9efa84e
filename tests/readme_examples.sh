#!/bin/sh
# Runs every command line of README.md's sh code blocks exactly as written, in a scratch copy
# of examples/ with `gemmkit` found on PATH, and checks each one's exit status:
#   - a line that needs a GPU (--bench, --backend cuda, or "needs a GPU" in its comment) exits
#     0 with a device and, without one, 1 with "gemmkit: error: no CUDA device: ...";
#   - any other line exits with the "exit N" its comment names, else 0;
#   - a comment that is a bare number ("# 7") is what the line prints.
# Lines that start with scripts/ (the build and benchmark scripts themselves) are not run.
# usage: readme_examples.sh README.md BIN_DIR EXAMPLES_DIR
set -u
readme=$1 bin_dir=$(cd "$2" && pwd) examples=$3
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cp -R "$examples"/. "$work"/ || exit 1
# The lines between "```sh" and "```", one per line; fences indented inside a list item too
# (their lines without the indent).
awk '/^ *```sh$/ { inside = 1; next } /^ *```/ { inside = 0 } inside && NF { sub(/^ +/, ""); print }' \
  "$readme" > "$work/lines.txt" || exit 1
cd "$work" || exit 1
PATH="$bin_dir:$PATH"
export PATH
if gemmkit device >/dev/null 2>&1; then gpu=1; else gpu=0; fi
failures=0 count=0
while IFS= read -r line; do
  case "$line" in scripts/*|'#'*) continue ;; esac
  count=$((count + 1))
  comment=$(printf '%s\n' "$line" | sed -n 's/.*[[:space:]]#[[:space:]]*//p')
  needs_gpu=0
  case "$line" in *--bench*|*"--backend cuda"*|*"needs a GPU"*) needs_gpu=1 ;; esac
  expected=$(printf '%s\n' "$comment" | sed -n 's/.*exit \([0-9]\).*/\1/p')
  [ -n "$expected" ] || expected=0
  [ "$needs_gpu" = 1 ] && expected=$((1 - gpu))
  sh -c "$line" > out.txt 2> err.txt </dev/null
  status=$?
  problem=
  [ "$status" = "$expected" ] || problem="exit $status, expected $expected"
  if [ -z "$problem" ] && [ "$needs_gpu" = 1 ] && [ "$gpu" = 0 ] &&
     ! grep -q '^gemmkit: error: no CUDA device: ' err.txt; then
    problem="no 'no CUDA device' line"
  fi
  case "$comment" in
    ''|*[!0-9]*) ;;
    *) [ -n "$problem" ] || [ "$(cat out.txt)" = "$comment" ] || problem="printed '$(cat out.txt)', not '$comment'" ;;
  esac
  if [ -n "$problem" ]; then
    failures=$((failures + 1))
    printf 'FAILED (%s): %s\n' "$problem" "$line"
    tail -n 5 out.txt err.txt | sed 's/^/    /'
  else
    printf 'ok (exit %s): %s\n' "$status" "$line"
  fi
done < lines.txt
echo "$count README example lines, $failures failed (GPU: $gpu)"
[ "$count" -gt 0 ] && [ "$failures" = 0 ]
