// How a kernel entry launches for one problem, in the launcher's own terms: each launch's
// kernel, grid, block, cluster and dynamic shared memory, and which elements of C a thread
// writes. A launcher computes its configuration once (one function per kernel) and both its
// run path and KernelEntry::launches read it, so `gemmkit explain` (gemmkit/explain.hpp)
// describes what really runs. Plain host types: no CUDA header.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gemmkit {

class Context;

struct Dim3 {
  std::int64_t x = 1, y = 1, z = 1;
  std::int64_t count() const { return x * y * z; }
};

// A lattice of C elements: rows row, row + row_step, ... (rows of them) times columns col,
// col + col_step, ... (cols of them). Already clipped to C: an edge thread may write fewer.
struct CElements {
  std::int64_t row = 0, rows = 0, row_step = 1;
  std::int64_t col = 0, cols = 0, col_step = 1;
  std::int64_t count() const { return rows * cols; }
};

// One kernel launch of an entry for a problem.
struct LaunchPlan {
  // The kernel's name as its template is instantiated, without namespaces, e.g.
  // "naive_kernel<false,false,float>": the key of the attributes recorded at build time.
  std::string kernel;
  // For live attributes (CUDA): the kernel's host stub, or for a kernel compiled on first use
  // its cudaKernel_t in the context that loaded it (null when planned without a device).
  const void* function = nullptr;
  // A kernel compiled on first use: what ptxas reported when it was compiled (`known`), for
  // explain without a device or build-time records.
  struct Compiled {
    bool known = false;
    int registers = 0;
    std::size_t static_smem = 0, local_bytes = 0;  // bytes; local: the stack frame
    int spill_stores = 0, spill_loads = 0;         // bytes
    std::string arch;                              // "sm_90a"
  } compiled;
  std::string purpose;             // its part in the entry, e.g. "the product"
  Dim3 grid, block;
  Dim3 cluster;                    // 1x1x1: no clusters
  std::size_t dynamic_smem = 0;    // bytes
  // Which elements of C a thread writes, in words with the formula (or, for persistent and
  // warp-specialised kernels, which tile a block takes in which round and what each
  // warpgroup does).
  std::string mapping;
  // The elements thread (block_idx, thread_idx) writes, when a formula gives them; empty
  // for launches told in words only, and for launches that write no C (copies).
  std::function<std::vector<CElements>(Dim3 block_idx, Dim3 thread_idx)> elements;
};

// What planning a launch may ask of the device: launchers that size a persistent grid or
// split work by the number of resident blocks ask through this, so that the same plan can
// be made from live queries on a GPU or from recorded attributes without one.
struct LaunchQueries {
  int sm_count = 0;
  int compute_capability = 0;  // e.g. 90
  // Blocks of this launch's kernel (block and shared memory as given) one SM holds.
  std::function<int(const LaunchPlan&)> blocks_per_sm;
  // Clusters of this launch (its cluster dims) the whole device holds at once.
  std::function<int(const LaunchPlan&)> active_clusters;
  // Live: the context kernels compiled on first use are loaded into (then a plan's function
  // is theirs). Null: they are compiled for compute_capability only, to read their resources.
  Context* context = nullptr;
};

}  // namespace gemmkit
