#!/usr/bin/env bash
# On the GPU machine, from the repository's root: the Python package's tests (the GPU ones
# included) and the torch benchmark, with the module built elsewhere for that machine's
# Python (bench/python/device_bundle.sh) and the package's Python files from python/gemmkit:
#   .device/python/_gemmkit.cpython-*.so.xz    the extension module, xz-compressed, and its stub
#   .device/lib/                               libraries the machine lacks (OpenBLAS, GMP, ...)
# Writes pytest.log, bench.log and matmul_torch.json to ${OUT:-.}.
#   bench/python/run_on_device.sh [benchmark options, e.g. --n 8192 --kernel cuda_wgmma_ws]
set -euo pipefail
out=${OUT:-.}
export PYTHONUNBUFFERED=1
site=$(mktemp -d)
mkdir -p "$site/gemmkit"
cp python/gemmkit/*.py python/gemmkit/py.typed .device/python/_gemmkit.pyi "$site/gemmkit/"
module=$(ls .device/python/_gemmkit.cpython-*.so.xz)
xz -dc "$module" > "$site/gemmkit/$(basename "$module" .xz)"
for f in .device/lib/*.xz; do [ -e "${f%.xz}" ] || xz -dk "$f"; done
export LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$site
python3 -c "import gemmkit; print('gemmkit', gemmkit.versions()); print(gemmkit.device()['name'])"
status=0
python3 -m pytest -q -rs -p no:cacheprovider python/tests 2>&1 | tee "$out/pytest.log" || status=1
python3 bench/python/matmul_torch.py --json "$out/matmul_torch.json" "$@" 2>&1 | tee "$out/bench.log" || status=1
exit $status
