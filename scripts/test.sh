#!/usr/bin/env bash
# Builds and runs every test: the release build (host tests, command-line tests, and the
# GPU tests, which skip themselves visibly without a CUDA device), then installs it into a
# temporary prefix and builds and runs examples/consumer against it (scripts/test_consumer.sh),
# builds the Python package on it into a virtual environment and runs its pytest suite
# (scripts/test_python.sh), then the host tests
# again under AddressSanitizer + UndefinedBehaviorSanitizer (a CPU-only build), then the
# libFuzzer harnesses of the readers and the command line for a bounded time
# ($GEMMKIT_FUZZ_SECONDS each, default 30; any finding fails). --quick skips both.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
[ "${1:-}" = "--quick" ] && quick=1

scripts/install-deps.sh
jobs=$(nproc)

echo "== release build and tests"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"

echo "== install, and a consumer of the installed package"
scripts/test_consumer.sh build/release

echo "== the Python package, built on the same build, and its pytest suite"
scripts/test_python.sh build/release

if [ "$quick" -eq 0 ]; then
  echo "== sanitizer build (ASan + UBSan) and host tests"
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  ctest --preset asan -j "$jobs"

  echo "== fuzzing (libFuzzer, ASan + UBSan)"
  tests/fuzz/run.sh
fi
