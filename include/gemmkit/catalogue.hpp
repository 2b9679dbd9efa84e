// Every kernel of every operation in one list: GEMM's registry, then reduce, spmv and conv1d,
// each entry as its registry holds it (KernelInfo, the form every operation's kernels share).
// `gemmkit list` prints it; programs can pick kernels from it by operation and name.
#pragma once

#include <string_view>
#include <vector>

#include "gemmkit/gemm.hpp"
#include "gemmkit/kernel.hpp"

namespace gemmkit {

struct CatalogueEntry {
  std::string_view operation;  // "gemm", "reduce", "spmv" or "conv1d"
  const KernelInfo* kernel;    // the registry's entry: it lives as long as the process
  const KernelTraits<GemmProblem>* gemm;  // the same entry's GEMM traits; nullptr for other operations
};

std::string_view kernel_role_name(KernelRole role);  // "ladder" or "reference"

// The operations, in catalogue order: gemm, reduce, spmv, conv1d.
const std::vector<std::string_view>& catalogue_operations();

// The kernels of `operation` (every operation when empty), grouped by operation in the order
// above; within one, as its registry lists them (GEMM: the CPU backend, then CUDA, each in
// ladder order). A usage error names the operations for an unknown one.
std::vector<CatalogueEntry> catalogue(std::string_view operation = {});

}  // namespace gemmkit
