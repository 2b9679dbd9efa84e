#!/usr/bin/env bash
# Builds the Python module for the GPU machine's Python (3.12) here, stripped and
# xz-compressed into a git-ignored folder that the device tool carries with the working tree:
#   bench/python/device_bundle.sh [BUNDLE_DIR]     (default .device/python)
# Needs: the release build installed by scripts/test_python.sh (build/python/prefix), a
# CPython 3.12 (GEMMKIT_DEVICE_PYTHON, default /root/.pyenv/versions/3.12.1/bin/python3.12)
# Then, with .device (the bundle, and in .device/lib the libraries that machine lacks:
# OpenBLAS, GMP, ...) named in the device tool's `carry`, on the machine, from the
# repository's root:  bash bench/python/run_on_device.sh
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
mkdir -p "$bundle"
rm -f "$bundle"/_gemmkit.*.xz
strip --strip-unneeded -o "$bundle/$(basename "$module")" "$module"
xz -T1 -9 "$bundle/$(basename "$module")"
cp build/py312/site/gemmkit/_gemmkit.pyi "$bundle/"
du -sh "$bundle"
