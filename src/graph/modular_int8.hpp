// Walk counting on GPU tensor cores: the modular GEMMs of exact mode as int8 GEMMs with
// int32 accumulation (cuBLAS, CUBLAS_COMPUTE_32I), every modulus of a batch that fits in
// device memory at each step.
//   - Moduli: the odd primes below 256. Centred residues mod p lie in [-(p-1)/2, (p-1)/2],
//     so they are int8 values, and their 53 primes cover every count up to 2^344.
//   - Exactness: a product of two residues is at most 125^2 = 15625 in magnitude, so an
//     int32 sum of K of them cannot overflow while K <= int8_k_limit() = 137,438: every
//     square adjacency matrix that fits on a GPU (an int8 matrix of that order takes 18 GB).
//     Larger graphs take the CPU engine.
//   - After each GEMM one kernel reduces the int32 products mod p back to centred int8
//     residues, in both layouts the next GEMM reads.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

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
  int gemms = 0;              // int8 GEMMs of order n (each a batch over the moduli)
  int batches = 0;            // moduli groups that fit in device memory together
  double gemm_seconds = 0;    // GPU time of the GEMMs and their reductions (CUDA events)
  double reduce_seconds = 0;  // the reductions' part of it
  double total_seconds = 0;   // wall time including uploads, downloads and residue copies
};

// Whether this build and machine can run gpu_int8_powers (CUDA built, a device present).
bool gpu_int8_powers_available();

// Runs `steps` on the GPU modulo primes[0..q): at each record step, residues in [0, p) of
// R(rows[r], cols[c]) go to residues[((length_index * rows.size() + r) * cols.size() + c) *
// q + prime_index]. n must not exceed int8_k_limit().
Int8PowersReport gpu_int8_powers(const Graph& g, const std::vector<std::uint32_t>& primes,
                                 const std::vector<PowerStep>& steps,
                                 const std::vector<std::int64_t>& rows,
                                 const std::vector<std::int64_t>& cols,
                                 std::vector<std::uint32_t>& residues,
                                 const std::function<void(const std::string&)>& progress);

// Reference timings in the same run, for the benchmark (see walk_gemm_references).
struct GemmReferenceTimes {
  double int8_seconds = 0, fp64_seconds = 0;
};
GemmReferenceTimes gpu_reference_gemm_times(std::int64_t n);

}  // namespace gemmkit::walks_detail
