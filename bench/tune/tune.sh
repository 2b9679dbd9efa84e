#!/usr/bin/env bash
# The tuning run behind `--kernel auto` on the CUDA backend: every kernel of ours that can
# win somewhere, timed beside cuBLAS over the shape suite, one JSON file per dtype. Then
# bench/tune/make_auto_table.py OUT_DIR writes src/ops/gemm/auto_table.inc from them.
#
#   bench/tune/tune.sh OUT_DIR [DTYPE ...]      (default dtypes: bf16 f16 tf32 f32)
#
# Environment: GEMMKIT (the gemmkit binary; default gemmkit on PATH), SUITE (default all),
# REPS (default 5), MAX_SECONDS (default 0.3), KERNELS (instead of the candidates below;
# e.g. KERNELS=auto to measure what auto picks, after the table is built in).
set -euo pipefail
out=${1:?usage: tune.sh OUT_DIR [DTYPE ...]}
shift
if [[ $# -gt 0 ]]; then dtypes=("$@"); else dtypes=(bf16 f16 tf32 f32); fi
gemmkit=${GEMMKIT:-gemmkit}
suite=${SUITE:-all}
mkdir -p "$out"

# The candidates per dtype: each family of ours (its per-shape configuration is its own).
kernels_for() {
  case $1 in
    bf16 | f16 | tf32) echo cuda_wgmma_tuned,cuda_wgmma_ws,cuda_skinny,cuda_skinny_cluster,cuda_wgmma_padded ;;
    f32) echo cuda_autotuned,cuda_stream_k,cuda_split_k,cuda_skinny,cuda_skinny_cluster ;;
    *) echo "tune.sh: no candidates for dtype $1" >&2; exit 2 ;;
  esac
}

for d in "${dtypes[@]}"; do
  kernels=${KERNELS:-$(kernels_for "$d")}
  echo "== $d: $kernels" >&2
  "$gemmkit" bench --suite "$suite" --dtype "$d" --kernels "$kernels" \
    --reps "${REPS:-5}" --max-seconds "${MAX_SECONDS:-0.3}" \
    --json "$out/suite_${suite}_$d.json" | tee "$out/suite_${suite}_$d.txt" | tail -12
done
