// What a kernel does with a problem, launch by launch: grid and block, shared memory,
// registers, occupancy and what limits it, which elements of C each thread writes and the
// global thread-id formula of that launch shape. With a CUDA device the attributes and
// occupancy are asked of the device; without one they come from the values recorded when
// the library was built (for sm_90, the H200) and the sm_90 limits. `gemmkit explain`
// prints it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemmkit/dtype.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/launch_plan.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit {

// The per-SM limits occupancy is computed from.
struct SmLimits {
  std::string source;              // "live: <device>" or "recorded for sm_90 (H200)"
  int compute_capability = 90;
  int sm_count = 132;
  int warp_size = 32;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int registers_per_sm = 65536;
  int registers_per_block = 65536;
  int register_unit = 256;          // registers are given to a warp in multiples of this
  int max_registers_per_thread = 255;
  int sub_partitions = 4;           // a block's warps are spread over the SM's quarters
  std::size_t smem_per_sm = 233472;           // 228 KiB
  std::size_t smem_per_block = 49152;         // without opting in
  std::size_t smem_per_block_optin = 232448;  // 227 KiB
  std::size_t smem_reserved_per_block = 1024; // kept by the driver for every block
  int smem_unit = 128;                        // shared memory is given in multiples of this
  int max_cluster_size = 8;                   // portable cluster size
};

// The sm_90 (H200) limits used without a device.
SmLimits sm90_limits();

// What the compiled kernel uses.
struct KernelResources {
  int registers = 0;           // per thread
  std::size_t static_smem = 0; // bytes of __shared__ arrays the kernel declares
  std::size_t local_bytes = 0; // stack frame per thread (spills, local arrays)
  std::string source;          // "live (cudaFuncGetAttributes)" or "recorded at build time for sm_90"
};

struct Occupancy {
  int blocks_per_sm = 0;
  int warps_per_sm = 0;
  double fraction = 0;  // warps_per_sm / the SM's warp slots
  // The blocks per SM each limit alone allows; the smallest decides.
  int by_threads = 0, by_registers = 0, by_smem = 0, by_blocks = 0;
  std::string limited_by;  // "threads", "registers", "shared memory", "blocks per SM"
  std::size_t smem_per_block = 0;   // allocated: static + dynamic + reserved, rounded up
  int registers_per_block = 0;      // allocated
  std::optional<int> live_blocks_per_sm;  // cudaOccupancyMaxActiveBlocksPerMultiprocessor
  std::optional<int> active_clusters;     // cluster launches: clusters the device holds
};

// One thread's answer: its ids and the C elements it writes, with the arithmetic.
struct ThreadAnswer {
  Dim3 block_idx, thread_idx;
  std::int64_t block_id = 0;         // linear block index in the grid
  std::int64_t thread_in_block = 0;  // linear thread index in its block
  std::int64_t global_id = 0;        // block_id * threads per block + thread_in_block
  std::int64_t warp = 0, lane = 0;   // within its block
  std::vector<std::string> steps;    // the worked arithmetic, one line each
  std::vector<CElements> elements;   // empty: told in words (LaunchExplanation::mapping)
};

struct LaunchExplanation {
  LaunchPlan plan;
  std::size_t static_smem = 0;
  KernelResources resources;
  bool resources_known = false;  // false: no record for this kernel (message in `note`)
  Occupancy occupancy;
  std::string thread_id_formula;  // for this grid and block shape
  std::optional<ThreadAnswer> thread;
  std::string note;
};

struct ExplainRequest {
  std::string kernel;                 // a registry entry's name
  // gemm: C is m x n, k the inner size. For explain_operation: the sizes its operation's
  // shape_form names, in order (reduce: m values; spmv: an m x n matrix of k nonzeros; ...).
  std::int64_t m = 0, n = 0, k = 0;
  std::optional<DType> dtype;         // default: the entry's first dtype
  bool trans_a = false, trans_b = false;
  std::optional<Dim3> block_idx, thread_idx;  // answer for this thread (both or neither)
  bool live = true;                   // ask the device when there is one
  std::string recorded_path;          // the recorded attributes; empty: the default place
};

struct Explanation {
  std::string operation;  // the operation's name (gemmkit/catalogue.hpp)
  std::string kernel;
  Backend backend = Backend::cpu;
  KernelRole role = KernelRole::ladder;
  int rung = 0;
  std::string summary;
  DType dtype = DType::f32;
  std::int64_t m = 0, n = 0, k = 0;
  std::string problem;  // the problem in words, e.g. "reduce 1000 values, f32"
  bool live = false;  // attributes and occupancy from a device
  SmLimits limits;
  std::vector<LaunchExplanation> launches;  // in the order the entry makes them
  // Live: the context the launches' kernels compiled on first use were loaded into, kept
  // while the explanation lives, so their LaunchPlan::function stays valid.
  std::shared_ptr<Context> context;
};

// Explains `request`. Usage errors: an unknown kernel (the message lists the names), a
// dtype the kernel does not take, a problem it refuses, a thread outside the grid of every
// launch, a kernel without a launch description.
Explanation explain(const ExplainRequest& request);

// The same for a kernel of any operation of the catalogue (gemmkit/catalogue.hpp), sizes as
// its Operation::shape_form says. Outside GEMM, plans describe which elements of the input
// and output a thread touches in words (LaunchPlan::elements is empty). Part of
// gemmkit::primitives.
Explanation explain_operation(std::string_view operation, const ExplainRequest& request);

// Where the attributes recorded at build time are read from: $GEMMKIT_KERNEL_RESOURCES when
// set, else ../share/gemmkit/kernel_resources.tsv from the running binary's folder.
std::string default_recorded_path();

// The global thread-id formula for a grid and block shape (1-, 2- or 3-D each).
std::string thread_id_formula(const Dim3& grid, const Dim3& block);

// Occupancy from a kernel's resources and the SM limits, as the CUDA occupancy calculator
// computes it.
Occupancy compute_occupancy(const KernelResources& resources, const Dim3& block,
                            std::size_t dynamic_smem, const SmLimits& limits);

// "naive_kernel<false,false,float>" from a demangled or pretty-printed name: no return type,
// parameters, namespaces or spaces. Build-time records and kernel_name<K>() agree on it.
std::string normalized_kernel_name(std::string_view name);

}  // namespace gemmkit
