#!/bin/sh
# CI's check that every kernel compiled on first use still compiles (NVRTC needs no GPU):
# empties the tests' kernel cache ($GEMMKIT_CACHE_DIR), then compiles every kernel into it for
# each architecture CI checks, on every core, and requires each one to have been compiled now.
# The tests that plan those kernels (explain, the GPU tests) then read them from the cache.
# The wgmma kernels keep their tile of sums in registers at the register cap, so ptxas must
# spill none of them: a spill costs 5-10% on short K (measured on the H200 at 6069848).
# usage: jit_compile_all.sh GEMMKIT_BINARY
set -u
gemmkit=$1
[ -n "${GEMMKIT_CACHE_DIR:-}" ] || { echo "jit_compile_all: GEMMKIT_CACHE_DIR is not set" >&2; exit 1; }
"$gemmkit" cache clear || exit 1
for arch in 90 80; do
  out=$("$gemmkit" cache warm --arch "$arch") || { printf '%s\n' "$out"; exit 1; }
  printf '%s\n' "$out"
  summary=$(printf '%s\n' "$out" | tail -n 1)
  kernels=$(printf '%s\n' "$summary" | sed -n 's/^\([0-9]*\) kernels, \([0-9]*\) compiled now.*/\1/p')
  compiled=$(printf '%s\n' "$summary" | sed -n 's/^\([0-9]*\) kernels, \([0-9]*\) compiled now.*/\2/p')
  if [ -z "$kernels" ] || [ "$kernels" != "$compiled" ]; then
    echo "jit_compile_all: sm_$arch: expected every kernel compiled now, got: $summary" >&2
    exit 1
  fi
done
spilled=$("$gemmkit" cache list | grep '^sm_90a' | grep ' wgmma' | grep '(spills:')
if [ -n "$spilled" ]; then
  printf 'jit_compile_all: wgmma kernels that spill registers:\n%s\n' "$spilled" >&2
  exit 1
fi
