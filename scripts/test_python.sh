#!/usr/bin/env bash
# The Python package's tests: builds the package into a virtual environment and runs its
# pytest suite (python/tests; the GPU tests there skip themselves visibly without PyTorch and
# a CUDA device).
#   scripts/test_python.sh [BUILD_DIR]   the module on BUILD_DIR (default build/release, already
#                                        built) installed into a prefix: the kernels are
#                                        compiled once for the C++ tests and the package
#   scripts/test_python.sh --from-source `pip install .` as a user runs it: the library too
# The environment is build/python/venv: Debian's python3 with its numpy, scipy, networkx,
# pandas and pytest (--system-site-packages), and the pinned build tooling from PyPI
# (python/requirements-build.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=build/python/venv
base_python=${GEMMKIT_BASE_PYTHON:-/usr/bin/python3}

echo "== Python: virtual environment $venv"
[ -x "$venv/bin/python" ] || "$base_python" -m venv --system-site-packages "$venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" install -r python/requirements-build.txt

if [ "${1:-}" = "--from-source" ]; then
  echo "== Python: pip install . (library and module)"
  "${pip[@]}" install --no-build-isolation --no-deps .
else
  build=${1:-build/release}
  [ -f "$build/CMakeCache.txt" ] || { echo "test_python: no build in $build (build it first)" >&2; exit 2; }
  [ -x "$build/bin/gemmkit" ] && export GEMMKIT_CLI=$(realpath "$build/bin/gemmkit")  # walks tests compare with it
  prefix=$root/build/python/prefix
  echo "== Python: pip install . on $build (installed into $prefix)"
  rm -rf "$prefix"
  cmake --install "$build" --prefix "$prefix" >/dev/null
  "${pip[@]}" install --no-build-isolation --no-deps \
    --config-settings=cmake.define.GEMMKIT_PYTHON_PREBUILT=ON \
    --config-settings=cmake.define.CMAKE_PREFIX_PATH="$prefix" \
    --config-settings=build-dir=build/python/prebuilt .
fi

echo "== Python: pytest"
# From outside the source tree, so that `import gemmkit` is the installed package.
cd build/python
"$root/$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$root/python/tests"
