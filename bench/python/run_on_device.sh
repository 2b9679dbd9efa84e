#!/usr/bin/env bash
# On the GPU machine: the Python package's GPU tests and the torch benchmark, with a module
# built elsewhere for that machine's Python (3.12). Run from a folder that holds
#   python/gemmkit, python/tests, bench/python             (the package's sources and tests)
#   .device/_gemmkit.cpython-312-x86_64-linux-gnu.so.xz   (the extension module, xz-compressed)
#   .device/lib/                                         (libraries the machine lacks: OpenBLAS, ...)
# as bench/python/device_bundle.sh makes it (or the repository root with those in .device/).
# Results (pytest.log, bench.log, matmul_torch.json) go to ${OUT:-.}.
#   bash bench/python/run_on_device.sh [benchmark options, e.g. --n 8192 --profile]
set -euo pipefail
out=${OUT:-.}
export PYTHONUNBUFFERED=1
pkg=$(mktemp -d)/site
mkdir -p "$pkg/gemmkit"
cp python/gemmkit/*.py python/gemmkit/py.typed "$pkg/gemmkit/"
module=$(ls .device/_gemmkit.cpython-*.so.xz)
xz -dc "$module" > "$pkg/gemmkit/$(basename "$module" .xz)"
for f in .device/lib/*.xz; do [ -e "${f%.xz}" ] || xz -dk "$f"; done
export LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$pkg
python3 -c "import gemmkit; print('gemmkit', gemmkit.versions()); print(gemmkit.device()['name'])"
status=0
python3 -m pytest -q -rs -p no:cacheprovider python/tests 2>&1 | tee "$out/pytest.log" || status=1
python3 bench/python/matmul_torch.py --json "$out/matmul_torch.json" "$@" 2>&1 | tee "$out/bench.log" || status=1
exit $status
