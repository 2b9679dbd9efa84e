// Every kernel of every operation in one list: GEMM's registry, then reduce, spmv and conv1d,
// each entry in the same form (the fields of KernelEntry that describe a kernel). `gemmkit
// list` prints it; programs can pick kernels from it by operation and name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/dtype.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit {

struct CatalogueEntry {
  std::string operation;  // "gemm", "reduce", "spmv" or "conv1d"
  std::string name;       // unique within its operation
  Backend backend = Backend::cpu;
  int rung = 0;
  KernelRole role = KernelRole::ladder;
  std::string summary;
  std::vector<DType> dtypes;
  std::optional<DType> accuracy;  // GEMM only: computes in less precision than the dtype
  int min_compute_capability = 0;
  int auto_priority = 0;  // > 0: "auto" may choose it
};

std::string_view kernel_role_name(KernelRole role);  // "ladder" or "reference"

// The operations, in catalogue order: gemm, reduce, spmv, conv1d.
const std::vector<std::string_view>& catalogue_operations();

// The kernels of `operation` (every operation when empty), grouped by operation in the order
// above; within one, as its registry lists them (GEMM: the CPU backend, then CUDA, each in
// ladder order). A usage error names the operations for an unknown one.
std::vector<CatalogueEntry> catalogue(std::string_view operation = {});

}  // namespace gemmkit
