#!/usr/bin/env bash
# Builds the Python module for the GPU machine's Python (3.12) here and gathers everything the
# GPU tests and the torch benchmark need there into one self-contained, git-ignored folder:
#   bench/python/device_bundle.sh [BUNDLE_DIR]     (default .device/python)
# Needs: the release build installed by scripts/test_python.sh (build/python/prefix), a
# CPython 3.12 (GEMMKIT_DEVICE_PYTHON, default /root/.pyenv/versions/3.12.1/bin/python3.12)
# and the libraries that machine lacks in .device/lib (OpenBLAS, ...). Then, with the bundle
# named in the device tool's `carry`, on the machine:
#   cd BUNDLE_DIR && bash bench/python/run_on_device.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
bundle=${1:-.device/python}
python=${GEMMKIT_DEVICE_PYTHON:-/root/.pyenv/versions/3.12.1/bin/python3.12}
prefix=$root/build/python/prefix
[ -d "$prefix" ] || { echo "device_bundle: no $prefix (run scripts/test_python.sh first)" >&2; exit 2; }
venv=build/py312/venv
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" install -r python/requirements-build.txt
rm -rf build/py312/site
"${pip[@]}" install --no-build-isolation --no-deps \
  --config-settings=cmake.define.GEMMKIT_PYTHON_PREBUILT=ON \
  --config-settings=cmake.define.CMAKE_PREFIX_PATH="$prefix" \
  --config-settings=build-dir=build/py312/prebuilt --target build/py312/site .
module=$(ls build/py312/site/gemmkit/_gemmkit.cpython-*.so)
rm -rf "$bundle"
mkdir -p "$bundle/python" "$bundle/bench" "$bundle/.device"
cp -r python/gemmkit python/tests "$bundle/python/"
cp -r bench/python "$bundle/bench/"
find "$bundle" -name __pycache__ -prune -exec rm -rf {} +
strip --strip-unneeded -o "$bundle/.device/$(basename "$module")" "$module"
xz -T1 -9 "$bundle/.device/$(basename "$module")"
[ -d .device/lib ] && cp -r .device/lib "$bundle/.device/"
du -sh "$bundle"
