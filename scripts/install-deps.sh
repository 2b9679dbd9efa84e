#!/usr/bin/env bash
# Installs what gemmkit needs to build and test, from Debian's packages. Run as root (or
# with sudo available); otherwise it prints the command to run. Does nothing when all is
# there already. The CUDA toolkit is optional: without nvcc the CPU backend builds alone.
set -euo pipefail

# OpenBLAS: the OpenMP build, not libopenblas-dev (which pulls the pthreads one): it shares
# the OpenMP runtime, and its threads, with cpu_blocked (see CMakeLists.txt). zstd unpacks
# the device code nvcc compresses, for the kernels' recorded resources (gemmkit explain).
# Open MPI: the distributed part (multiply --distributed) and its tests under mpirun.
# python3-jsonschema: the test of every --json against docs/gemmkit.schema.json.
packages=(
  cmake ninja-build g++ git pkg-config ccache zstd
  libcli11-dev nlohmann-json3-dev libgtest-dev
  libopenblas-openmp-dev libomp-dev libgmp-dev
  libopenmpi-dev openmpi-bin
  python3 python3-numpy python3-matplotlib
  python3-dev python3-venv python3-scipy python3-networkx python3-pandas python3-pytest
  python3-jsonschema
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "gemmkit: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  apt_get=(apt-get)
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  apt_get=(sudo apt-get)
else
  echo "gemmkit: error: missing packages; run as root: apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${apt_get[@]}" update -qq
"${apt_get[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
