// Internal: the steps of the Ozaki scheme II on the GPU (ozaki_steps.cu), shared by the
// single-process run (ozaki_gemm.cu) and the run with the moduli split over ranks
// (ozaki_ranks.cu): the scan, the planes, the passes of modular GEMMs and the rebuild, and the
// workspace's layout. The steps are described in ozaki_steps.cu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "arith/crt_math.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/ozaki.hpp"

namespace gemmkit::ozaki_detail {

// The first bytes of the workspace, what the scan of the operands found: the
// first row of op(A) and column of op(B) with a non-finite entry (all ones:
// none), and the spread: the largest ceil(log2(2^e / mean)) of |entries| over
// those rows and columns, e the exponent of the line's largest (0 when none is
// above 1), which the default plan adds to its bits.
struct Scan {
  unsigned long long bad_a, bad_b;
  int spread;
};

// The rebuild's constants for the moduli p_i (product P), made on the host once
// per call and passed by value (no device state). The moduli are taken in pairs,
// each as one modulus p_t = p_a p_b < 2^16 (the first, the largest, alone when
// their count is odd: the rest pair up to 15 and more), which halves the
// multiword work per entry:
//   y_t = C' (P / p_t)^-1 mod p_t, from the pair's centred residues r_a, r_b:
//     with x = r + 128 (the residue's byte with its top bit flipped, in [1, 255])
//     u = x_a g_a + x_b g_b + offset_t = y_t (mod p_t), g_a, g_b < p_t the
//     Chinese remainder weights of the pair times (P / p_t)^-1, u < 2^25; the
//     quotient umulhi(u, inverse_t) >> shift_t is exact for u < 2^31;
//   raw = sum_t y_t M_t (M_t = P / p_t) = C' + q P with q = round(sum_t y_t /
//     p_t), taken in fixed point: sum_t y_t round(2^35 / p_t) is off by less
//     than 27 2^-20 of 2^35, so q is right whenever |C'| < P (1/2 - 2^-13),
//     which the plan's margin guarantees (ozaki_plan.cpp);
//   C' = raw - q P modulo 2^(32 W): W words of two's complement hold
//     |C'| < P / 2, so the words above them never need computing.
constexpr int kMaxPairs = (kCrtMaxModuli + 1) / 2;
struct OzakiRebuild {
  int moduli = 0, pairs = 0;
  int odd = 0;  // moduli % 2: pair t takes planes 2t - odd and 2t - odd + 1; pair 0 of an odd count, plane 0 alone
  std::uint32_t weight_a[kMaxPairs] = {}, weight_b[kMaxPairs] = {};  // g_a, g_b
  std::uint32_t offset[kMaxPairs] = {};
  std::uint32_t inverse[kMaxPairs] = {};
  std::uint32_t shift[kMaxPairs] = {};
  std::uint32_t minus_p[kMaxPairs] = {};   // 2^32 - p_t: y_t = u + quotient (2^32 - p_t), mod 2^32
  std::uint32_t fraction[kMaxPairs] = {};  // round(2^35 / p_t)
  std::uint32_t m[kMaxPairs][crt_detail::kMaxWords] = {};   // M_t, least significant word first
  std::uint32_t minus_modulus[crt_detail::kMaxWords] = {};  // -P, two's complement
  int words = 0;                                            // ceil(bits(P) / 32)
};


// The constants for the first `moduli` int8 primes.
OzakiRebuild make_rebuild(int moduli);

// Byte offsets of the workspace's parts, for passes of `block` rows of C: the
// planes of all of op(B), and those of op(A) and C for one pass. The planes
// are sized for `plan`: the largest plan the call can take (the default plan
// with the most extra bits, or the caller's moduli).
struct Regions {
  std::size_t shift_a = 0, shift_b = 0, sum_a = 0, sum_b = 0, a = 0, b = 0, c = 0, gemm = 0, total = 0;
  std::int64_t block = 0;
};

Regions regions(const Context& ctx, const GemmProblem& p, const OzakiPlan& plan, std::int64_t block);
// The fewest rows of C a pass takes (a smaller workspace is refused).
constexpr std::int64_t kMinBlock = 64;
// Rows of C per pass when each row takes `per_row` bytes of planes (ozaki_steps.cu).
std::int64_t pass_rows_within(const GemmProblem& p, int moduli, double per_row);
// The layout of the declared workspace, and the one `bytes` of workspace hold, if any.
Regions default_regions(const Context& ctx, const GemmProblem& p, const OzakiPlan& plan);
std::optional<Regions> regions_within(const Context& ctx, const GemmProblem& p, const OzakiPlan& plan,
                                      std::size_t bytes);

// Why the emulation does not take a problem (the registry entry's precondition), or nullopt.
std::optional<std::string> ozaki_rejects(const GemmProblem& p);
// validate(), ozaki_rejects and one product at a time, as usage errors.
void check_ozaki_problem(const GemmProblem& problem);
// The largest plan a call can take: the caller's moduli, or the default plan with the most
// extra bits the operands can ask for.
OzakiPlan largest_plan(const GemmProblem& p, int moduli);

// The scan's buffers: what it found, the exponents (then shifts) and the sums of
// |entries| of the rows of op(A) and the columns of op(B).
struct ScanBuffers {
  Scan* found;
  int *shift_a, *shift_b;
  double *sum_a, *sum_b;
};

// The four steps, for T = double or float (ozaki_steps.cu says what each does).
template <class T>
OzakiPlan scan_operands(const GemmProblem& problem, const GemmProblem& p, int moduli, const ScanBuffers& s,
                        Stream stream);
template <class T>
void make_b_planes(const GemmProblem& p, int first, int count, const int* shift_b, std::int8_t* out, Stream stream);
template <class T>
void pass_residues(Context& ctx, const GemmProblem& p, int first, int count, std::int64_t r0, std::int64_t rows,
                   const int* shift_a, std::int8_t* a_planes, const std::int8_t* b_planes, std::int8_t* c_planes,
                   Workspace gemm, Stream stream);
template <class T>
void rebuild_rows(const OzakiRebuild& rebuild, const GemmProblem& p, std::int64_t r0, std::int64_t rows,
                  const std::int8_t* c_planes, const int* shift_a, const int* shift_b, Stream stream);

}  // namespace gemmkit::ozaki_detail
