#!/usr/bin/env bash
# Proof by a consumer: installs a gemmkit build into a temporary prefix, moves it to another
# (nothing installed may name where it was installed), and uses it as
# another project would. Builds examples/consumer with find_package(gemmkit) and runs its
# programs (the device API with gemmkit::gemmkit, with gemmkit::core alone and with the
# shared library; the C API from C when gemmkit.h is installed), checks that the GEMM-only
# program needs neither GMP nor cuSPARSE, builds a program from gemmkit.pc with pkg-config,
# runs the installed CLI, links the shared library alone (no OpenMP development files asked
# for; of CUDA, in a CUDA build, the runtime linked, no headers), checks that the package
# files name no path of the build machine and libgemmkit.so has no run path, and checks that gemmkit as a subproject (add_subdirectory) adds
# no flags and no build type. Uses a CUDA device when there is one, else the CPU context.
#   scripts/test_consumer.sh [BUILD_DIR]    (default build/release, already built)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
[ -f "$build/CMakeCache.txt" ] || { echo "test_consumer: no build in $build (build it first)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/gemmkit-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

echo "== install $build into a temporary prefix, then move it: nothing may name the first one"
cmake --install "$build" --prefix "$work/installed-here" >/dev/null
mv "$work/installed-here" "$prefix"
if grep -rlF "$work/installed-here" "$prefix" --exclude='*.a' --exclude='*.so*' --exclude=gemmkit; then
  echo "test_consumer: the files above name the prefix they were installed into" >&2
  exit 1
fi
echo "== the package files (.cmake, .pc) name no folder of the build machine"
# Its dependencies are found again on the consumer's machine (gemmkitConfig.cmake).
if grep -rnE '(^|[^}A-Za-z0-9_.])/(usr|opt|home|root|srv|tmp|work)/' "$prefix/lib/cmake" "$prefix/lib/pkgconfig" ||
   grep -rnF -e "$PWD" -e "$(realpath "$build")" "$prefix/lib/cmake" "$prefix/lib/pkgconfig"; then
  echo "test_consumer: the lines above name paths of the build machine" >&2
  exit 1
fi
if [ -f "$prefix/lib/libgemmkit.so" ] && readelf -d "$prefix/lib/libgemmkit.so" | grep -E 'R(UN)?PATH'; then
  echo "test_consumer: the installed libgemmkit.so has the run path above (the build machine's folders)" >&2
  exit 1
fi

echo "== build examples/consumer against it (find_package)"
args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix")
if command -v ccache >/dev/null; then
  args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$work  # the consumer's temporary paths still hit the cache
fi
cmake -S examples/consumer -B "$work/build" "${args[@]}" >/dev/null
cmake --build "$work/build" -j "$(nproc)" >/dev/null

programs=(device_gemm device_gemm_core device_gemm_shared)
[ -f "$prefix/include/gemmkit.h" ] && programs+=(c_api_gemm)
for program in "${programs[@]}"; do
  echo "== $program"
  "$work/build/$program"
done

if [ -x "$work/build/dist_gemm" ]; then
  # As root (CI's container) Open MPI wants these; --oversubscribe: more processes than cores;
  # no single-copy shared memory, which a container without ptrace rights refuses.
  echo "== dist_gemm (gemmkit::distributed) on 4 processes"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 \
    OMPI_MCA_btl_vader_single_copy_mechanism=none \
    mpiexec -q --oversubscribe -np 4 "$work/build/dist_gemm"
fi

echo "== the GEMM-only program links neither GMP nor cuSPARSE"
# Its link command (the linker may drop unused libraries, so NEEDED entries would not tell).
link_of() { ninja -C "$work/build" -t commands "$1" | tail -n 1; }
if grep -oE '[^ ]*(libgmp|libcusparse|-lgmp|-lcusparse)[^ ]*' <<<"$(link_of device_gemm_core)"; then
  echo "test_consumer: device_gemm_core (gemmkit::core only) links the libraries above" >&2
  exit 1
fi
grep -q libgmp <<<"$(link_of device_gemm)" ||
  { echo "test_consumer: device_gemm (gemmkit::gemmkit) does not link GMP: is the check above blind?" >&2; exit 1; }

echo "== pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
pkg-config --cflags --libs gemmkit
pc_flags=$(pkg-config --cflags --libs gemmkit)
# shellcheck disable=SC2086  # the flags are words
c++ -std=c++20 -o "$work/pkg_config_gemm" examples/consumer/pkg_config_gemm.cpp $pc_flags
LD_LIBRARY_PATH=$prefix/lib "$work/pkg_config_gemm"

echo "== the installed CLI"
"$prefix/bin/gemmkit" --version
python=$(sed -n 's/^GEMMKIT_PYTHON:[A-Z]*=//p' "$build/CMakeCache.txt")
if "${python:-python3}" -c 'import matplotlib' 2>/dev/null; then
  # The plot script from share/gemmkit/, found beside the binary.
  (cd "$work" && env -u GEMMKIT_PLOT_SCRIPT "$prefix/bin/gemmkit" bench --backend cpu --sizes 16 \
     --reps 1 --warmup 0 --plot "$work/plot.png" >/dev/null)
  [ -s "$work/plot.png" ] && echo "bench --plot: the installed plot script ran"
fi
if [ -f "$prefix/lib/libgemmkit.so" ]; then
  echo "== the shared library alone: find_package(gemmkit COMPONENTS shared) needs no OpenMP, and of CUDA only the libraries it links"
  mkdir -p "$work/shared_only"
  cat > "$work/shared_only/CMakeLists.txt" <<END
cmake_minimum_required(VERSION 3.25)
project(shared_only CXX)
find_package(gemmkit 0.2 REQUIRED COMPONENTS shared)
add_executable(app "$PWD/examples/consumer/pkg_config_gemm.cpp")
target_link_libraries(app PRIVATE gemmkit::shared)
END
  shared_args=(-DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON)
  cuda=0
  grep -q '^set(gemmkit_HAVE_CUDA ON)' "$prefix/lib/cmake/gemmkit/gemmkitConfig.cmake" && cuda=1
  [ $cuda = 1 ] || shared_args+=(-DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON)
  cmake -S "$work/shared_only" -B "$work/shared_only/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    "${shared_args[@]}" --no-warn-unused-cli >/dev/null
  cmake --build "$work/shared_only/build" >/dev/null
  commands=$(ninja -C "$work/shared_only/build" -t commands app)
  # The public headers include none of CUDA's, and the CUDA libraries are linked shared.
  if grep -- ' -c ' <<<"$commands" | grep -oE -- '-(I|isystem) *[^ ]*cuda[^ ]*'; then
    echo "test_consumer: gemmkit::shared compiles its consumer with the CUDA headers above" >&2
    exit 1
  fi
  if tail -n 1 <<<"$commands" | grep -oE '[^ ]*(_static|culibos)[^ ]*'; then
    echo "test_consumer: gemmkit::shared links its consumer with the static libraries above" >&2
    exit 1
  fi
  if [ $cuda = 1 ] && ! tail -n 1 <<<"$commands" | grep -q 'libcudart\.so'; then
    echo "test_consumer: gemmkit::shared of a CUDA build does not link the CUDA runtime (where the linker finds it)" >&2
    exit 1
  fi
  "$work/shared_only/build/app"
fi

echo "== as a subproject (add_subdirectory): no flags, no build type, libraries only"
mkdir -p "$work/sub"
cat > "$work/sub/CMakeLists.txt" <<END
cmake_minimum_required(VERSION 3.25)
project(sub CXX)
add_subdirectory("$PWD" gemmkit)
add_executable(app app.cpp)
target_link_libraries(app PRIVATE gemmkit::core)
END
echo 'int main() { return 0; }' > "$work/sub/app.cpp"
cmake -S "$work/sub" -B "$work/sub/build" -G Ninja -DGEMMKIT_CUDA=OFF >/dev/null
sub_fail() { echo "test_consumer: as a subproject, gemmkit $*" >&2; exit 1; }
grep -q '^CMAKE_BUILD_TYPE:STRING=$' "$work/sub/build/CMakeCache.txt" || sub_fail "set a build type"
app_compile=$(ninja -C "$work/sub/build" -t commands app | grep -- ' -c .*app\.cpp$')
! grep -qE ' -W[a-z]| -fsanitize' <<<"$app_compile" || sub_fail "added flags to the project's target: $app_compile"
! ninja -C "$work/sub/build" -t targets all | grep -qE '^(bin/gemmkit|tests/gemmkit_host_tests):' ||
  sub_fail "builds the CLI or the tests"
echo "ok: no warning flags, no build type, no CLI or tests"

echo "consumer: all passed"
