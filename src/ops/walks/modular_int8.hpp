// Walk counting on GPU tensor cores, end to end on the device: the modular GEMMs of exact
// mode as int8 GEMMs with int32 accumulation (modular_gemm, gemmkit/modular.hpp), every
// modulus of a batch that fits in device memory at each step, and the counts rebuilt from
// their residues on the device (crt_rebuild, gemmkit/exact.hpp).
//   - Moduli: the odd primes below 256. Centred residues mod p lie in [-(p-1)/2, (p-1)/2],
//     so they are int8 values, and their 53 primes cover every count up to 2^344.
//   - Exactness: a product of two residues is at most 125^2 = 15625 in magnitude, so an
//     int32 sum of K of them cannot overflow while K <= int8_k_limit() = 137,438: every
//     square adjacency matrix that fits on a GPU (an int8 matrix of that order takes 18 GB).
//     Larger graphs take the CPU engine.
//   - The graph goes to the device once (CSR); one kernel scatters its weights mod each
//     prime into zeroed planes; each product's epilogue writes centred residues in both
//     layouts the next product reads; at each recorded length the rebuild writes the final
//     two's-complement words, gathered to the rows and columns asked for, and they are
//     copied to the host once; or the planes of the last power stay on the device, for
//     callers that rebuild residues of several runs together (gpu_int8_power_planes).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/modular.hpp"
#include "gemmkit/walks.hpp"

namespace gemmkit::walks_detail {

// One step of computing A^t: R = R R, R = R A, or hand R's residues for length index
// `length_index` to the caller. R starts as A.
struct PowerStep {
  enum Kind { square, times_a, record } kind = square;
  int length_index = 0;
};

// The odd primes below 256, largest first: gemmkit::int8_moduli() (gemmkit/modular.hpp).
inline const std::vector<std::uint32_t>& int8_primes() { return int8_moduli(); }

// The fewest int8 primes whose product exceeds 2 * bound + 1; nullopt if all 53 do not.
std::optional<int> int8_primes_for_bound(const BigInt& bound);

// The largest K for which a sum of K products of centred residues modulo any int8 prime
// fits an int32: floor((2^31 - 1) / 125^2) (gemmkit/modular.hpp).
using gemmkit::int8_k_limit;

// What the GPU engine measured.
struct Int8PowersReport {
  int gemms = 0;              // modular GEMM steps of order n (each a batch over the moduli)
  int batches = 0;            // moduli groups that fit in device memory together
  double gemm_seconds = 0;    // GPU time of the modular GEMMs (CUDA events)
  double build_seconds = 0;   // GPU time building the residue matrices from the graph
  double crt_seconds = 0;     // GPU time of the Chinese remainder rebuilds (and gathers)
  double copy_seconds = 0;    // wall time copying the finished tables to the host
  double context_seconds = 0; // wall time making the device's context (the first call that needs it)
  double setup_seconds = 0;   // wall time of uploads, allocations (pinned staging too), warm-up
  double total_seconds = 0;   // the engine's wall time
};

// The steps that make A^length for one length (squarings over the bits below the top one,
// each followed by a product with A where the bit is set), then its record.
std::vector<PowerStep> power_steps(int length);

// The GPU engine, when the query allows it (its backend) and it can run this graph: the number
// of int8 primes the bound needs, or nullopt (auto: no device, too few vertices, or a bound
// beyond the int8 primes). A usage error (a device error without a device) when the query
// asks for the GPU and it cannot run.
std::optional<int> gpu_primes_for(const Graph& g, const WalkQuery& query, const BigInt& bound);

// Whether this build and machine can run gpu_int8_powers (CUDA built, a device present).
bool gpu_int8_powers_available();

// The gpu_* functions below are the engine's CUDA part (cuda/walks_int8.cu), defined only in a
// CUDA build: host code calls them through GEMMKIT_CUDA_PART (runtime/cuda_part.hpp).

// Runs `steps` on ctx's device modulo `primes`: at each record step the counts
// R(rows[r], cols[c]) go to out + ((length_index * rows.size() + r) * cols.size() + c) *
// limbs as `limbs` two's-complement words, least significant first (enough for the bound
// the primes were chosen for; host memory, written once, never read: it need not be
// initialised). n must not exceed int8_k_limit().
Int8PowersReport gpu_int8_powers(Context& ctx, const Graph& g, const std::vector<std::uint32_t>& primes,
                                 const std::vector<PowerStep>& steps,
                                 const std::vector<std::int64_t>& rows,
                                 const std::vector<std::int64_t>& cols, int limbs, std::uint64_t* out,
                                 const std::function<void(const std::string&)>& progress,
                                 int max_batch = 0);  // moduli per batch at most (0: all that fit; tests)

// Where gpu_int8_power_planes leaves the planes: in device memory on the context's device, or
// in host memory (copied there plane by plane, for a caller that moves them without the GPU).
enum class PlanesIn { device, host };

// Runs the steps of A^length (power_steps(length)) on ctx's device modulo `primes`, in the
// batches gpu_int8_powers takes, and leaves the centred residues of A^length modulo prime q
// (in the order of `primes`) as the row-major n x n int8 plane at planes + q n^2 (n^2
// primes.size() bytes, in memory `where` says), with no rebuild: planes for several sets of
// primes rebuild the counts together (gpu_counts_from_planes). Returns once they are written.
Int8PowersReport gpu_int8_power_planes(Context& ctx, const Graph& g, const std::vector<std::uint32_t>& primes,
                                       int length, std::int8_t* planes, PlanesIn where = PlanesIn::device,
                                       const std::function<void(const std::string&)>& progress = {},
                                       int max_batch = 0);  // as gpu_int8_powers's

// Centred residues of a rows x cols block of counts in device memory: the residue modulo
// primes[q] of count (i, j) at data[q plane_stride + i ld + j] (n x n planes one after the
// other: ld n, plane_stride n^2).
struct ResiduePlanes {
  const std::int8_t* data = nullptr;
  std::int64_t ld = 0, plane_stride = 0, rows = 0, cols = 0;
};

// The counts whose centred residues modulo each of `primes` are `planes` (on ctx's device),
// rebuilt on the device (crt_rebuild) and copied to out (host memory, rows x cols, `limbs`
// words per count as gpu_int8_powers writes them) once. Reports the rebuild (crt_seconds),
// the copy and the total.
Int8PowersReport gpu_counts_from_planes(Context& ctx, const std::vector<std::uint32_t>& primes,
                                        const ResiduePlanes& planes, int limbs, std::uint64_t* out);

// memcpy on every core, in pieces of a megabyte: the host side of copying a table off the
// device into memory touched for the first time (compiled as C++ with OpenMP, which the
// engine's CUDA file is not).
void parallel_copy(void* dst, const void* src, std::size_t bytes);

// Reference timings in the same run, for the benchmark (see walk_gemm_references).
struct GemmReferenceTimes {
  double int8_seconds = 0, fp64_seconds = 0;
};
GemmReferenceTimes gpu_reference_gemm_times(std::int64_t n);

}  // namespace gemmkit::walks_detail
