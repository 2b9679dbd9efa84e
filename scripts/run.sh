#!/usr/bin/env bash
# The main job: build gemmkit (release) and benchmark its kernels beside the reference
# library: on the GPU against cuBLAS when there is one, else on the CPU against OpenBLAS.
# Extra arguments go to `gemmkit bench` (e.g. --sizes 512,1024 --dtype f64).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake --preset release >/dev/null
# The command line alone (the library and gemmkit): scripts/test.sh builds the rest.
cmake --build --preset release --target gemmkit_cli
echo
build/release/bin/gemmkit device || echo "(so the benchmark runs on the CPU, beside OpenBLAS)"
echo
build/release/bin/gemmkit bench "$@"
