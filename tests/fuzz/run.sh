#!/usr/bin/env bash
# Builds the libFuzzer harnesses (the "fuzz" preset: clang, ASan + UBSan) and runs each one
# for a bounded time on its committed seed corpus. Any finding (crash, hang, leak,
# sanitizer report, broken error contract) fails the script and prints the reproducer.
#   tests/fuzz/run.sh [SECONDS_PER_HARNESS] [HARNESS...]
# SECONDS_PER_HARNESS defaults to $GEMMKIT_FUZZ_SECONDS or 30. See docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-${GEMMKIT_FUZZ_SECONDS:-30}}
# A fixed seed keeps CI's runs the same from one run to the next (the time limit only cuts
# them short); set GEMMKIT_FUZZ_SEED=0 for a random one when exploring.
seed=${GEMMKIT_FUZZ_SEED:-1}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=(npy mtx csv edges pipes cli)

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"

bin=build/fuzz/fuzz
findings=$PWD/build/fuzz/findings  # absolute: fuzz_cli runs in a scratch folder
mkdir -p "$findings"
failed=()
for h in "${harnesses[@]}"; do
  # New inputs go to a scratch corpus; the committed seeds are only read.
  work=$(mktemp -d)
  log="$findings/$h.log"
  rm -f "$findings/$h-"*
  echo "== fuzz_$h for ${seconds}s"
  dict=()
  [ -f "tests/fuzz/dict/$h.dict" ] && dict=(-dict="tests/fuzz/dict/$h.dict")
  if "$bin/fuzz_$h" "$work" "tests/fuzz/corpus/$h" "${dict[@]}" \
       -seed="$seed" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=4096 \
       -max_len=4096 -print_final_stats=1 -artifact_prefix="$findings/$h-" >"$log" 2>&1; then
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' "$log" | tr '\n' ' '; echo
  else
    failed+=("$h")
    # The finding itself (our contract checks, sanitizers, libFuzzer's own), not the stack.
    grep -a -A4 -E 'FINDING|ERROR: |runtime error|ALARM|Test unit written' "$log" | head -n 30
    echo "fuzz_$h: FINDING; reproducer: $(ls -t "$findings/$h-"* 2>/dev/null | head -1)" \
         "(rerun: $bin/fuzz_$h FILE); log: $log" >&2
  fi
  rm -rf "$work"
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "gemmkit: error: fuzzing found problems in: ${failed[*]}" >&2
  exit 1
fi
