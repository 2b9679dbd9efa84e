// Counting walks in a graph: entry (u, v) of A^k is the number of walks of length k from u
// to v (with integer edge weights: the sum over those walks of the product of the weights).
// The counts grow exponentially, so the default mode is exact: A^k modulo enough primes to
// cover a proven bound on every entry, rebuilt by the Chinese remainder theorem. See
// docs/walks.md for the method, the bounds and what each mode guarantees.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/kernel.hpp"

namespace gemmkit {

// An exact integer of any size: a sign and a magnitude, normalised (no leading zero limbs,
// zero is never negative), so == compares values.
class BigInt {
 public:
  BigInt() = default;
  BigInt(std::int64_t value);  // NOLINT: implicit on purpose, BigInt(7) == 7 reads well
  // Decimal digits with an optional sign; usage error for anything else.
  static BigInt from_string(std::string_view decimal);
  // From magnitude limbs (least significant first) and a sign.
  static BigInt from_limbs(std::vector<std::uint64_t> magnitude, bool negative);

  std::string to_string() const;
  bool is_zero() const { return magnitude_.empty(); }
  bool negative() const { return negative_; }
  bool fits_int64() const;
  std::int64_t to_int64() const;  // numeric error if it does not fit
  double to_double() const;       // nearest double (inf beyond the range)
  std::size_t bit_length() const; // of the magnitude; 0 for zero
  const std::vector<std::uint64_t>& magnitude() const { return magnitude_; }

  friend bool operator==(const BigInt&, const BigInt&) = default;
  friend std::strong_ordering operator<=>(const BigInt& a, const BigInt& b);

 private:
  std::vector<std::uint64_t> magnitude_;
  bool negative_ = false;
};

// A directed graph with integer edge weights, stored as CSR (row u lists the edges u -> v).
// Parallel edges are merged (their weights added), so A(u, v) is one entry.
struct Graph {
  std::int64_t n = 0;
  std::vector<std::int64_t> row_start;  // n + 1 offsets into target/weight
  std::vector<std::int32_t> target;     // column index of each stored entry, sorted per row
  std::vector<std::int64_t> weight;     // empty: every stored entry is 1
  std::vector<std::string> labels;      // empty: vertex v is called by its index "v"
  std::string source;                   // the file it came from, for messages

  std::int64_t edges() const { return static_cast<std::int64_t>(target.size()); }
  bool weighted() const { return !weight.empty(); }
  std::int64_t weight_at(std::int64_t e) const { return weight.empty() ? 1 : weight[e]; }
  std::string label(std::int64_t v) const;
  // The vertex with this label; nullopt if there is none.
  std::optional<std::int64_t> find(std::string_view label) const;
  // The vertex with this label, or an input error "no vertex named 'X' in FILE".
  std::int64_t vertex(std::string_view label) const;
  // The same graph with every edge reversed (the transpose of A).
  Graph transposed() const;
};

struct Edge {
  std::int64_t from = 0, to = 0, weight = 1;
};
// A graph on n vertices from an edge list (parallel edges added; zero sums dropped).
Graph graph_from_edges(std::int64_t n, const std::vector<Edge>& edges,
                       std::vector<std::string> labels = {});
// A graph from a dense row-major n x n adjacency matrix of integer weights.
Graph graph_from_dense(std::int64_t n, const std::int64_t* adjacency,
                       std::vector<std::string> labels = {});

enum class GraphFormat { edges, mtx, npy, csv };
struct GraphReadOptions {
  std::optional<GraphFormat> format;  // nullopt: from the extension (.mtx .npy .csv; else edges)
  bool undirected = false;            // edge lists only: every line is an edge both ways
  std::vector<std::string> labels;    // vertex names for matrix files and integer edge lists
};
// Edge lists: "u v" or "u v w" per line (w an integer weight), '#' starts a comment.
// Vertices that are all non-negative integers are indices (0..max); otherwise tokens are
// names, numbered in order of first appearance. Matrix Market (pattern, integer, or real
// with integer values; general or symmetric), .npy and CSV adjacency matrices must be
// square. Malformed input throws an input error naming the file and line; so does a file
// with no graph in it (an edge list without edges, a 0 x 0 matrix).
Graph read_graph(const std::string& path, const GraphReadOptions& options = {});

enum class WalkMode {
  exact,    // arbitrary precision, never wrong
  int64,    // exact while every count fits; a numeric error names the first that does not
  float64,  // doubles; counts beyond 2^53 are rounded (WalkCounts::rounded says so)
};
enum class WalkMethod {
  automatic,  // the cheaper of the two for this graph and query
  dense,      // powers of the dense adjacency matrix by repeated squaring (GEMMs)
  sparse,     // k sparse products with the CSR matrix, one vector per source or target
};

// Where exact dense products run. auto: on GPU tensor cores (int8 GEMMs modulo primes
// below 256) when a CUDA device is present, the graph has at least kGpuWalkMinVertices
// vertices and those primes cover the bound; on the CPU otherwise.
enum class WalkBackend { automatic, cpu, cuda };
inline constexpr std::int64_t kGpuWalkMinVertices = 512;

// What the GPU engine measured (exact dense counts on the GPU only).
struct GpuWalkTiming {
  int products = 0;          // n x n x n int8 GEMMs per prime
  int primes = 0;            // moduli, each a GEMM of every product
  double gemm_seconds = 0;   // GPU time of all the modular GEMMs (products and reductions)
  double reduce_seconds = 0; // 0: the reductions run inside the modular GEMMs, not timed apart
  double total_seconds = 0;  // the engine's wall time, transfers included
  double build_seconds = 0;  // GPU time building the residue matrices from the graph
  double crt_seconds = 0;    // GPU time rebuilding the counts (Chinese remainders, gathers)
  double copy_seconds = 0;   // wall time copying the finished tables to host memory
  double context_seconds = 0;  // wall time making the device's context (its first use)
  double setup_seconds = 0;  // wall time of uploads, allocations (pinned staging too), warm-up
};

// Storage for big tables that the engines fill entirely: new elements are left
// uninitialised (default- instead of value-initialised), so that resizing costs no
// single-threaded zero fill, and the pages are first touched by the threads that fill them.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}  // NOLINT: rebinding
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

struct WalkQuery {
  int length = 1;
  std::optional<std::int64_t> from, to;  // vertices; unset: all of them
  bool all_lengths = false;              // lengths 1..length instead of length alone
  WalkMode mode = WalkMode::exact;
  WalkMethod method = WalkMethod::automatic;
  WalkBackend backend = WalkBackend::automatic;
  std::function<void(const std::string&)> progress;  // called with a short status line
  Context* context = nullptr;  // the GPU engine's device; null: a context of its own
};

// The answer: for each length, a table whose rows are `sources` and columns `targets`.
class WalkCounts {
 public:
  std::vector<int> lengths;
  std::vector<std::int64_t> sources, targets;
  WalkMode mode = WalkMode::exact;
  std::string method;    // what ran, e.g. "dense squaring mod 4 primes"
  std::string kernel;    // the engine that ran: its name in walks_registry(), e.g. "cpu_dense"
  BigInt bound;          // proven bound on |count| used to size the computation
  int primes = 0;        // exact mode: how many primes
  bool rounded = false;  // float64 mode: some count reached 2^53
  std::optional<GpuWalkTiming> gpu;  // set when the GPU engine ran

  std::int64_t rows() const { return static_cast<std::int64_t>(sources.size()); }
  std::int64_t cols() const { return static_cast<std::int64_t>(targets.size()); }
  BigInt at(std::size_t length_index, std::int64_t row, std::int64_t col) const;
  double approx(std::size_t length_index, std::int64_t row, std::int64_t col) const;
  bool fits_int64() const;  // every count of every length
  std::int64_t int64_at(std::size_t length_index, std::int64_t row, std::int64_t col) const;

  // Storage (filled by count_walks): exact and int64 counts as `limbs` 64-bit words per
  // entry, two's complement, least significant first; float64 counts as doubles.
  int limbs = 1;
  std::vector<std::uint64_t, UninitializedAllocator<std::uint64_t>> words;
  std::vector<double> reals;

 private:
  std::size_t index(std::size_t length_index, std::int64_t row, std::int64_t col) const {
    return (length_index * sources.size() + static_cast<std::size_t>(row)) * targets.size() +
           static_cast<std::size_t>(col);
  }
};

// Chooses an engine of walks_registry() and runs it (see WalksProblem for how).
WalkCounts count_walks(const Graph& graph, const WalkQuery& query);

// The walk engines as one registry, like every operation's kernels (`gemmkit list walks`):
//   cpu_sparse       k sparse products with the CSR matrix, one column per source or target:
//                    every mode (modular, checked 128-bit, doubles)
//   cpu_dense        powers of the dense matrix by repeated squaring (or t - 1 products for
//                    every length): f64 GEMMs modulo primes (exact) or doubles (float64)
//   cuda_dense_int8  the dense powers on GPU tensor cores, int8 GEMMs modulo primes below
//                    256 (the modular registry's kernels), rebuilt on the device: exact mode
// count_walks takes the CUDA engine when the query's backend allows it and a whole exact
// table of at least kGpuWalkMinVertices vertices is asked for (or the backend is cuda), and
// otherwise chooses between the CPU engines by a cost model (the registry's table for the CPU
// backend: the cheaper first) unless the query's method names one.
struct WalksProblem {
  const Graph* graph = nullptr;
  const WalkQuery* query = nullptr;
  // The answer being made: lengths, sources, targets, mode and bound set; the engine fills
  // the rest (primes, limbs, method, the table). Null for a problem only described.
  WalkCounts* out = nullptr;
  DType dtype = DType::i64;  // the counts': i64 (exact and int64 modes) or f64 (float64)
};
// What only walk engines say of themselves: the method they run.
template <>
struct KernelTraits<WalksProblem> {
  WalkMethod method = WalkMethod::dense;
};
using WalksKernel = Kernel<WalksProblem>;
const Registry<WalksProblem>& walks_registry();

// The proven bound on |(A^t)(u, v)| for every t <= length: max(1, min(r, c))^length, where
// r and c are the largest absolute row and column sums of A.
BigInt walk_bound(const Graph& graph, int length);

// The GPU benchmark's references, measured in the calling run: seconds per cuBLAS int8 GEMM
// (int32 output) and per DGEMM, both n x n x n, run back to back on residue-like random data
// as the engine runs its GEMMs. Throws without a CUDA device.
struct WalkGemmReferences {
  double int8_seconds = 0, fp64_seconds = 0;
};
WalkGemmReferences walk_gemm_references(std::int64_t n);

std::string_view walk_mode_name(WalkMode mode);
std::optional<WalkMode> parse_walk_mode(std::string_view text);
std::optional<WalkMethod> parse_walk_method(std::string_view text);
std::optional<WalkBackend> parse_walk_backend(std::string_view text);

}  // namespace gemmkit
