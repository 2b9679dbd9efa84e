#!/usr/bin/env bash
# One call on a GPU machine: GPU tests, compute-sanitizer (memcheck and racecheck) on the
# ladder's edge shapes, then the full benchmark of every CUDA kernel beside cuBLAS.
# Usage: scripts/gpu-session.sh BIN_DIR OUT_DIR [STEPS]
#   BIN_DIR holds gemmkit and gemmkit_gpu_tests (e.g. build/release/bin + build/release/tests
#   copied together); OUT_DIR receives logs, JSON and CSV. STEPS: any of "tests sanitize
#   bench tensor-sanitize tensor" (default: tests sanitize bench tensor; split them when a
#   call has a time limit). Prints a short summary last.
set -uo pipefail
usage="usage: gpu-session.sh BIN_DIR OUT_DIR [STEPS]"
bin=${1:?$usage}
out=${2:?$usage}
steps=${3:-tests sanitize bench tensor}
has() { [[ " $steps " == *" $1 "* ]]; }
mkdir -p "$out"
date -u +%FT%TZ > "$out/date.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv > "$out/nvidia-smi.csv" 2>&1

# 1. Every GPU test.
has tests && {
timeout 300 "$bin/gemmkit_gpu_tests" --gtest_brief=1 > "$out/gpu_tests.txt" 2>&1
echo "gpu tests: exit $? ($(grep -E 'PASSED|FAILED' "$out/gpu_tests.txt" | tr '\n' ' '))"
}

# 2. compute-sanitizer on the edge shapes of the ladder kernels (not the vendor library):
# memcheck on every case; racecheck, which is far slower, on every 8th case of the
# kernels that share memory between threads.
if has sanitize && command -v compute-sanitizer > /dev/null; then
  timeout 280 compute-sanitizer --tool memcheck --error-exitcode 3 "$bin/gemmkit_gpu_tests" \
    --gtest_brief=1 --gtest_filter='Kernels/GpuKernel.EdgeShapes/cuda_*:-*cublas*' \
    > "$out/memcheck.txt" 2>&1
  echo "memcheck: exit $? ($(grep -E 'ERROR SUMMARY' "$out/memcheck.txt" | tail -1))"
  # Racecheck one kernel at a time, each with its own time limit, so that one slow kernel
  # cannot starve the rest (all of them in one run outgrew a single limit).
  race_failed=0 race_timeouts=0
  : > "$out/racecheck.txt"
  for kernel in $("$bin/gemmkit" list | awk '$2 == "cuda" && $4 == "ladder" {print $1}' |
                  grep -vE 'row_per|col_per|naive$|restrict$|coalesced$'); do
    GEMMKIT_GPU_TEST_STRIDE=8 timeout 60 compute-sanitizer --tool racecheck --error-exitcode 3 \
      "$bin/gemmkit_gpu_tests" --gtest_brief=1 \
      --gtest_filter="Kernels/GpuKernel.EdgeShapes/$kernel" > "$out/racecheck_one.txt" 2>&1
    status=$?
    echo "$kernel: exit $status $(grep -E 'RACECHECK SUMMARY' "$out/racecheck_one.txt" | tail -1)" \
      >> "$out/racecheck.txt"
    [ $status -eq 124 ] && race_timeouts=$((race_timeouts + 1))
    [ $status -ne 0 ] && [ $status -ne 124 ] && race_failed=$((race_failed + 1))
  done
  rm -f "$out/racecheck_one.txt"
  echo "racecheck: $race_failed kernels with hazards or errors, $race_timeouts timed out (per kernel: $out/racecheck.txt)"
fi

# 2b. The same for the tensor-core rungs: memcheck on their own suite; racecheck on the
# rungs whose threads share memory through ordinary stores (the Hopper rungs' operands
# move through TMA and wgmma, which the race checker does not follow).
if has tensor-sanitize && command -v compute-sanitizer > /dev/null; then
  timeout 280 compute-sanitizer --tool memcheck --error-exitcode 3 "$bin/gemmkit_gpu_tests" \
    --gtest_brief=1 --gtest_filter='Kernels/GpuTensorKernel.*:-*cublas*' \
    > "$out/tensor_memcheck.txt" 2>&1
  echo "tensor memcheck: exit $? ($(grep -E 'ERROR SUMMARY' "$out/tensor_memcheck.txt" | tail -1))"
  for kernel in cuda_wmma cuda_mma_sync; do
    timeout 120 compute-sanitizer --tool racecheck --error-exitcode 3 "$bin/gemmkit_gpu_tests" \
      --gtest_brief=1 --gtest_filter="Kernels/GpuTensorKernel.*/$kernel" \
      > "$out/tensor_racecheck_$kernel.txt" 2>&1
    echo "racecheck $kernel: exit $? $(grep -E 'RACECHECK SUMMARY' "$out/tensor_racecheck_$kernel.txt" | tail -1)"
  done
fi

# 3. The tensor-core benchmark, A m x k and B k x n as stored (tf32's wgmma rungs copy B
# into K-major form first, inside the timed run); cuBLAS of the same dtype in the same run.
if has tensor; then
  for dtype in bf16 f16 tf32; do
    timeout 240 "$bin/gemmkit" bench --backend cuda --dtype "$dtype" \
      --shapes 1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,4000x4000x4000,8192x2048x8192 \
      --reps 10 --max-seconds 1 --json "$out/tensor_$dtype.json" --csv "$out/tensor_$dtype.csv" \
      > "$out/tensor_$dtype.txt" 2>&1
    echo "tensor bench $dtype: exit $?"
    grep -E "^cuda_(cublas|wgmma_ws|wgmma_tma|mma_sync|wmma)" "$out/tensor_$dtype.txt" |
      grep -E "(4000|4096|8192)" | cut -c1-100
  done
fi

# 4. The SIMT benchmark: square sizes and the issue's non-square shapes, every kernel.
has bench || exit 0
"$bin/gemmkit" device > "$out/device.txt" 2>&1
timeout 420 "$bin/gemmkit" bench --backend cuda --sizes 256,512,1024,2048,4096,8192,16384 \
  --reps 10 --max-seconds 1 --json "$out/square.json" --csv "$out/square.csv" > "$out/square.txt" 2>&1
echo "square bench: exit $?"
timeout 150 "$bin/gemmkit" bench --backend cuda \
  --shapes 4000x4000x4000,8192x1024x8192,1024x8192x256,8192x2048x8192 \
  --reps 10 --max-seconds 1 --json "$out/shapes.json" --csv "$out/shapes.csv" > "$out/shapes.txt" 2>&1
echo "shape bench: exit $?"
grep -E "^(cuda_cublas |cuda_autotuned|cuda_tuned|cuda_stream_k)" "$out/square.txt" "$out/shapes.txt" |
  grep -E "(4000|4096|8192|1024x8192)" | cut -c1-110
