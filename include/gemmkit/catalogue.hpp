// Every operation and every kernel of each in one list: GEMM's registry, then reduce, spmv,
// conv1d, transpose, modular and walks, each entry as its registry holds it (KernelInfo, the form every
// operation's kernels share). `gemmkit list` and `explain` read it; programs can pick kernels
// from it by operation and name.
#pragma once

#include <string_view>
#include <vector>

#include "gemmkit/explain.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/kernel.hpp"

namespace gemmkit {

struct CatalogueEntry {
  std::string_view operation;  // the operation's name, "gemm", "reduce", ...
  const KernelInfo* kernel;    // the registry's entry: it lives as long as the process
  const KernelTraits<GemmProblem>* gemm;  // the same entry's GEMM traits; nullptr for other operations
};

std::string_view kernel_role_name(KernelRole role);  // "ladder" or "reference"

// One operation as the catalogue lists it: its name, its kernels, and what `explain` needs
// to describe one of them for a problem given as sizes. Each operation's folder defines its
// own (src/ops/<op>/operation.cpp); src/ops/catalogue.cpp lists them, one line each.
struct Operation {
  std::string_view name;        // "gemm", "reduce", ...
  std::string_view shape_form;  // the sizes a problem is given as, e.g. "MxNxK (e.g. 70x200x64)"
  int shape_sizes = 3;          // how many: ExplainRequest's m, then n, then k
  void (*add_entries)(std::vector<CatalogueEntry>& out);  // its kernels, in registry order
  Explanation (*explain)(const ExplainRequest& request);
};
// Every operation, in catalogue order (GEMM first).
const std::vector<Operation>& operations();
// The operation of that name; a usage error naming them all for an unknown one.
const Operation& find_operation(std::string_view name);
// Their names, in the same order.
const std::vector<std::string_view>& catalogue_operations();
// The kernels of `operation` (every operation when empty), grouped by operation in the order
// above; within one, as its registry lists them (GEMM: the CPU backend, then CUDA, each in
// ladder order). A usage error names the operations for an unknown one.
std::vector<CatalogueEntry> catalogue(std::string_view operation = {});

}  // namespace gemmkit
