// count_walks: entries of A^t for the requested lengths, sources and targets.
//
// Two engines, each in three modes:
//   dense   A^t by repeated squaring (or by t - 1 products for --all-lengths) with GEMMs on
//           n x n matrices: modular GEMMs per prime (exact), doubles (float64). Cost about
//           n^3 per product.
//   sparse  X_{t+1} = A X_t (or A^T X_t) with the CSR matrix, X holding one column per
//           source or target: modular (exact), checked 128-bit (int64), doubles (float64).
//           Cost about nnz per column per step.
// Exact mode runs modulo the primes that cover walk_bound(), and rebuilds each count by
// the Chinese remainder theorem. Exact dense products run on the GPU's int8 tensor cores
// when there is one (ops/walks/modular_int8.hpp), with f64 GEMMs on the CPU otherwise.
#include <gmp.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <new>
#include <omp.h>

#include "gemmkit/device.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/memory.hpp"
#include "gemmkit/walks.hpp"
#include "ops/walks/modular.hpp"
#include "ops/walks/modular_int8.hpp"
#include "io/io_common.hpp"
#include "runtime/cuda_part.hpp"

namespace gemmkit {
namespace {

using walks_detail::CrtRebuilder;
using walks_detail::PowerStep;
using walks_detail::gpu_primes_for;

// Which vertices label the rows and columns of the answer, and which lengths to keep.
struct Plan {
  std::vector<int> lengths;  // ascending
  std::vector<std::int64_t> sources, targets;
  int max_length = 0;
};

std::vector<std::int64_t> all_vertices(std::int64_t n) {
  std::vector<std::int64_t> v(n);
  for (std::int64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

void report(const WalkQuery& q, const std::string& line) {
  if (q.progress) q.progress(line);
}

// ---- sparse engine -----------------------------------------------------------------------
//
// Columns of X are "seeds". Backward (A X): X_t(v, s) = walks of length t from v to seed s,
// so the answer's rows are vertices and its columns seeds. Forward (A^T X): X_t(v, s) =
// walks from seed s to v, so rows are seeds and columns vertices.
struct SparseSetup {
  const Graph* csr = nullptr;  // A (backward) or A^T (forward)
  Graph transposed;            // storage for A^T when forward
  bool forward = false;
  std::vector<std::int64_t> seeds;
  std::vector<std::int64_t> others;  // the vertices kept on the other side of the answer
};

SparseSetup sparse_setup(const Graph& g, const Plan& plan) {
  SparseSetup s;
  // From one source: forward from it. Otherwise backward from the targets (all of them
  // for a whole table, which needs A alone, not its transpose).
  s.forward = plan.sources.size() == 1;
  if (s.forward) {
    s.transposed = g.transposed();
    s.csr = &s.transposed;
    s.seeds = plan.sources;
    s.others = plan.targets;
  } else {
    s.csr = &g;
    s.seeds = plan.targets;
    s.others = plan.sources;
  }
  return s;
}

// Position of (vertex v on the other side, seed index s) in the answer table.
std::pair<std::int64_t, std::int64_t> table_position(const SparseSetup& s, std::int64_t other_index,
                                                     std::int64_t seed_index) {
  return s.forward ? std::pair{seed_index, other_index} : std::pair{other_index, seed_index};
}

// Calls store(o, k, entry) for every (other vertex o, seed k) pair of the sparse vectors,
// `entry` being where the pair lands in the table of length `length_index` in `out`.
template <class Store>
void for_each_table_entry(const SparseSetup& s, const WalkCounts& out, std::size_t length_index,
                          std::int64_t seeds, Store&& store) {
  const std::int64_t others = static_cast<std::int64_t>(s.others.size());
  const std::size_t base = length_index * static_cast<std::size_t>(out.rows() * out.cols());
#pragma omp parallel for schedule(static)
  for (std::int64_t o = 0; o < others; ++o)
    for (std::int64_t k = 0; k < seeds; ++k) {
      const auto [r, c] = table_position(s, o, k);
      store(o, k, base + static_cast<std::size_t>(r * out.cols() + c));
    }
}

// acc mod p for acc < 2^64, p < 2^21: the double estimate of acc / p is within 1 of the
// true quotient (relative error 2^-52 on a quotient below 2^44), so one correction each
// way suffices; the loops make that obvious rather than assumed.
inline std::uint32_t reduce_u64(std::uint64_t acc, std::uint64_t p, double inv_p) {
  const auto q = static_cast<std::uint64_t>(static_cast<double>(acc) * inv_p);
  auto r = static_cast<std::int64_t>(acc - q * p);
  while (r < 0) r += static_cast<std::int64_t>(p);
  while (r >= static_cast<std::int64_t>(p)) r -= static_cast<std::int64_t>(p);
  return static_cast<std::uint32_t>(r);
}

void sparse_exact(const Graph& g, const Plan& plan, const WalkQuery& query, WalkCounts& out) {
  SparseSetup s = sparse_setup(g, plan);
  const Graph& a = *s.csr;
  const int nq = out.primes;
  const std::vector<std::uint32_t> primes = walks_detail::crt_primes(nq);
  std::vector<double> inv(nq);
  for (int q = 0; q < nq; ++q) inv[q] = 1.0 / primes[q];
  const CrtRebuilder crt(primes, out.limbs);
  const std::int64_t n = g.n, seeds = static_cast<std::int64_t>(s.seeds.size());
  const std::int64_t width = seeds * nq;  // (seed, prime) residues per vertex
  std::vector<std::uint32_t> x(static_cast<std::size_t>(n * width), 0), y(x.size());
  for (std::int64_t k = 0; k < seeds; ++k)
    for (int q = 0; q < nq; ++q) x[s.seeds[k] * width + k * nq + q] = 1;

  // Weight residues per stored entry and prime (weighted graphs only).
  std::vector<std::uint32_t> wres;
  if (a.weighted()) {
    wres.resize(static_cast<std::size_t>(a.edges()) * nq);
    for (std::int64_t e = 0; e < a.edges(); ++e)
      for (int q = 0; q < nq; ++q) {
        const std::int64_t p = primes[q];
        wres[e * nq + q] = static_cast<std::uint32_t>(((a.weight[e] % p) + p) % p);
      }
  }

  std::size_t next_record = 0;
  for (int t = 1; t <= plan.max_length; ++t) {
    report(query, "sparse step " + std::to_string(t) + "/" + std::to_string(plan.max_length));
#pragma omp parallel
    {
      std::vector<std::uint64_t> acc(width);
#pragma omp for schedule(dynamic, 64)
      for (std::int64_t v = 0; v < n; ++v) {
        std::fill(acc.begin(), acc.end(), 0);
        std::uint32_t* dst = &y[v * width];
        const std::int64_t b = a.row_start[v], e = a.row_start[v + 1];
        if (!a.weighted()) {
          // Terms below 2^21: any row length below 2^43 fits.
          for (std::int64_t i = b; i < e; ++i) {
            const std::uint32_t* src = &x[a.target[i] * width];
            for (std::int64_t c = 0; c < width; ++c) acc[c] += src[c];
          }
        } else {
          // Terms below 2^42: reduce every 2^22 of them.
          std::int64_t since_reduce = 0;
          for (std::int64_t i = b; i < e; ++i) {
            const std::uint32_t* src = &x[a.target[i] * width];
            const std::uint32_t* w = &wres[i * nq];
            for (std::int64_t k = 0; k < seeds; ++k)
              for (int q = 0; q < nq; ++q)
                acc[k * nq + q] += static_cast<std::uint64_t>(src[k * nq + q]) * w[q];
            if (++since_reduce == walks_detail::kSparseTermsBeforeReduce) {
              for (std::int64_t c = 0; c < width; ++c)
                acc[c] = reduce_u64(acc[c], primes[c % nq], inv[c % nq]);
              since_reduce = 0;
            }
          }
        }
        for (std::int64_t c = 0; c < width; ++c) dst[c] = reduce_u64(acc[c], primes[c % nq], inv[c % nq]);
      }
    }
    std::swap(x, y);
    if (next_record < plan.lengths.size() && plan.lengths[next_record] == t) {
      for_each_table_entry(s, out, next_record, seeds, [&](std::int64_t o, std::int64_t k, std::size_t e) {
        crt.rebuild(&x[s.others[o] * width + k * nq], &out.words[e * out.limbs]);
      });
      ++next_record;
    }
  }
}

void sparse_int64(const Graph& g, const Plan& plan, const WalkQuery& query, WalkCounts& out) {
  SparseSetup s = sparse_setup(g, plan);
  const Graph& a = *s.csr;
  const std::int64_t n = g.n, width = static_cast<std::int64_t>(s.seeds.size());
  std::vector<std::int64_t> x(static_cast<std::size_t>(n * width), 0), y(x.size());
  for (std::int64_t k = 0; k < width; ++k) x[s.seeds[k] * width + k] = 1;
  std::size_t next_record = 0;
  for (int t = 1; t <= plan.max_length; ++t) {
    report(query, "sparse step " + std::to_string(t) + "/" + std::to_string(plan.max_length));
    // The first overflowing entry in (from, to) order, as a key from * n + to.
    std::int64_t first = std::numeric_limits<std::int64_t>::max();
#pragma omp parallel
    {
      std::vector<i128> acc(width);
      std::int64_t mine = std::numeric_limits<std::int64_t>::max();
#pragma omp for schedule(dynamic, 64)
      for (std::int64_t v = 0; v < n; ++v) {
        std::fill(acc.begin(), acc.end(), 0);
        // Each product of two int64 fits in 127 bits; fewer than 2^63 of them cannot
        // overflow 128 bits, so the sums are exact and only the result is checked.
        for (std::int64_t i = a.row_start[v]; i < a.row_start[v + 1]; ++i) {
          const std::int64_t* src = &x[a.target[i] * width];
          const i128 w = a.weight_at(i);
          for (std::int64_t c = 0; c < width; ++c) acc[c] += w * src[c];
        }
        for (std::int64_t c = 0; c < width; ++c) {
          if (acc[c] > std::numeric_limits<std::int64_t>::max() ||
              acc[c] < std::numeric_limits<std::int64_t>::min()) {
            const std::int64_t seed = s.seeds[c];
            const std::int64_t key = s.forward ? seed * n + v : v * n + seed;
            mine = std::min(mine, key);
            y[v * width + c] = 0;
          } else {
            y[v * width + c] = static_cast<std::int64_t>(acc[c]);
          }
        }
      }
#pragma omp critical
      first = std::min(first, mine);
    }
    if (first != std::numeric_limits<std::int64_t>::max())
      fail(ErrorCategory::numeric,
           "int64 overflow: the number of walks of length " + std::to_string(t) + " from " +
               io::quoted(g.label(first / n)) + " to " + io::quoted(g.label(first % n)) +
               " does not fit a 64-bit integer (use --mode exact)");
    std::swap(x, y);
    if (next_record < plan.lengths.size() && plan.lengths[next_record] == t) {
      for_each_table_entry(s, out, next_record, width, [&](std::int64_t o, std::int64_t k, std::size_t e) {
        out.words[e] = static_cast<std::uint64_t>(x[s.others[o] * width + k]);
      });
      ++next_record;
    }
  }
}

void sparse_float(const Graph& g, const Plan& plan, const WalkQuery& query, WalkCounts& out) {
  SparseSetup s = sparse_setup(g, plan);
  const Graph& a = *s.csr;
  const std::int64_t n = g.n, width = static_cast<std::int64_t>(s.seeds.size());
  std::vector<double> x(static_cast<std::size_t>(n * width), 0), y(x.size());
  for (std::int64_t k = 0; k < width; ++k) x[s.seeds[k] * width + k] = 1;
  std::size_t next_record = 0;
  double largest = 0;
  for (int t = 1; t <= plan.max_length; ++t) {
    report(query, "sparse step " + std::to_string(t) + "/" + std::to_string(plan.max_length));
#pragma omp parallel for schedule(dynamic, 64) reduction(max : largest)
    for (std::int64_t v = 0; v < n; ++v) {
      double* dst = &y[v * width];
      std::fill_n(dst, width, 0.0);
      for (std::int64_t i = a.row_start[v]; i < a.row_start[v + 1]; ++i) {
        const double* src = &x[a.target[i] * width];
        const double w = static_cast<double>(a.weight_at(i));
        for (std::int64_t c = 0; c < width; ++c) dst[c] += w * src[c];
      }
      for (std::int64_t c = 0; c < width; ++c) largest = std::max(largest, std::fabs(dst[c]));
    }
    std::swap(x, y);
    if (next_record < plan.lengths.size() && plan.lengths[next_record] == t) {
      for_each_table_entry(s, out, next_record, width, [&](std::int64_t o, std::int64_t k, std::size_t e) {
        out.reals[e] = x[s.others[o] * width + k];
      });
      ++next_record;
    }
  }
  out.rounded = largest >= 9007199254740992.0;
}

// ---- dense engine ------------------------------------------------------------------------

// The products that make A^t for every recorded length: squarings for one length (left to
// right over the bits of the length below the top one), t - 1 products by A for all of them.
std::vector<PowerStep> power_steps(const Plan& plan) {
  std::vector<PowerStep> steps;
  if (plan.lengths.size() > 1) {
    for (int t = 1; t <= plan.max_length; ++t) {
      if (t > 1) steps.push_back({PowerStep::times_a, 0});
      steps.push_back({PowerStep::record, t - 1});  // lengths are 1..max_length
    }
    return steps;
  }
  return walks_detail::power_steps(plan.max_length);
}

// Runs power_steps on the CPU: `multiply(x, y, z)` makes z = x y, `record(li, m)` sees the
// power of length index li.
template <class Multiply, class Record>
void dense_powers(const Plan& plan, const Matrix<double>& a, Multiply&& multiply, Record&& record,
                  const WalkQuery& query, const std::string& what) {
  const std::vector<PowerStep> steps = power_steps(plan);
  const auto total = std::count_if(steps.begin(), steps.end(),
                                   [](const PowerStep& s) { return s.kind != PowerStep::record; });
  Matrix<double> r = a, tmp(a.rows(), a.rows());
  int done = 0;
  for (const PowerStep& step : steps) {
    if (step.kind == PowerStep::record) {
      record(step.length_index, r);
      continue;
    }
    report(query, what + "product " + std::to_string(++done) + "/" + std::to_string(total));
    multiply(r, step.kind == PowerStep::square ? r : a, tmp);
    std::swap(r, tmp);
  }
}

// The counts from their residues (each count's residues for every prime in a row) by the
// Chinese remainder theorem, into out.words (the CPU engine).
void rebuild_counts(const std::vector<std::uint32_t>& primes, const std::vector<std::uint32_t>& residues,
                    WalkCounts& out) {
  const std::size_t nq = primes.size();
  const CrtRebuilder crt(primes, out.limbs);
  const std::int64_t entries = static_cast<std::int64_t>(residues.size() / nq);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < entries; ++i) crt.rebuild(&residues[i * nq], &out.words[i * out.limbs]);
}


void dense_exact_gpu(Context& ctx, const Graph& g, const Plan& plan, const WalkQuery& query, int nq,
                     WalkCounts& out) {
  const std::vector<std::uint32_t> primes(walks_detail::int8_primes().begin(),
                                          walks_detail::int8_primes().begin() + nq);
  // The engine writes every word of the table (out.limbs, as the CPU engine's), once, in
  // its final form: no zero fill first.
  out.words.resize(plan.lengths.size() * plan.sources.size() * plan.targets.size() *
                   static_cast<std::size_t>(out.limbs));
  // The engine is CUDA code (cuda/walks_int8.cu), registered in CUDA builds only.
  GEMMKIT_CUDA_PART(
      const walks_detail::Int8PowersReport r = walks_detail::gpu_int8_powers(
          ctx, g, primes, power_steps(plan), plan.sources, plan.targets, out.limbs, out.words.data(),
          query.progress);
      GpuWalkTiming t;
      t.products = r.gemms / r.batches;
      t.primes = nq;
      t.gemm_seconds = r.gemm_seconds;
      t.total_seconds = r.total_seconds;
      t.build_seconds = r.build_seconds;
      t.crt_seconds = r.crt_seconds;
      t.copy_seconds = r.copy_seconds;
      t.setup_seconds = r.setup_seconds;
      t.context_seconds = r.context_seconds;
      out.gpu = t;
      return;)
  detail::fail_without_cuda();
}

void dense_exact(const Graph& g, const Plan& plan, const WalkQuery& query, WalkCounts& out) {
  const int nq = out.primes;
  const std::vector<std::uint32_t> primes = walks_detail::crt_primes(nq);
  const std::int64_t rows = out.rows(), cols = out.cols();
  const std::size_t per_length = static_cast<std::size_t>(rows * cols);
  std::vector<std::uint32_t> residues(per_length * plan.lengths.size() * nq);
  for (int q = 0; q < nq; ++q) {
    const std::uint32_t p = primes[q];
    const Matrix<double> a = walks_detail::dense_adjacency(g, p);
    dense_powers(
        plan, a,
        [p](const Matrix<double>& x, const Matrix<double>& y, Matrix<double>& z) {
          walks_detail::modular_gemm(x.view(), y.view(), z.view(), p);
        },
        [&](int li, const Matrix<double>& m) {
#pragma omp parallel for schedule(static)
          for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t c = 0; c < cols; ++c) {
              const double x = m(plan.sources[r], plan.targets[c]);
              residues[(li * per_length + static_cast<std::size_t>(r * cols + c)) * nq + q] =
                  static_cast<std::uint32_t>(x < 0 ? x + p : x);
            }
        },
        query, "prime " + std::to_string(q + 1) + "/" + std::to_string(nq) + ": ");
  }
  rebuild_counts(primes, residues, out);
}

void dense_float(const Graph& g, const Plan& plan, const WalkQuery& query, WalkCounts& out) {
  const Matrix<double> a = walks_detail::dense_adjacency(g, 0);
  const std::int64_t rows = out.rows(), cols = out.cols();
  double largest = 0;
  GemmOptions options;
  options.backend = Backend::cpu;
  dense_powers(
      plan, a,
      [&](const Matrix<double>& x, const Matrix<double>& y, Matrix<double>& z) {
        gemm(make_problem<double>(x.view(), false, y.view(), false, z.view()), options);
        for (std::int64_t i = 0; i < z.rows(); ++i)
          for (std::int64_t j = 0; j < z.cols(); ++j) largest = std::max(largest, std::fabs(z(i, j)));
      },
      [&](int li, const Matrix<double>& m) {
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t c = 0; c < cols; ++c)
            out.reals[li * rows * cols + static_cast<std::size_t>(r * cols + c)] =
                m(plan.sources[r], plan.targets[c]);
      },
      query, "");
  for (std::int64_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::fabs(a.data()[i]));
  out.rounded = largest >= 9007199254740992.0;
}

// ---- the engines as a registry ----------------------------------------------------------

// The answer's rows, columns and lengths, as count_walks set them in the table it fills.
Plan plan_of(const WalksProblem& p) {
  return {p.out->lengths, p.out->sources, p.out->targets, p.query->length};
}

std::size_t table_entries(const WalkCounts& out) {
  return out.lengths.size() * out.sources.size() * out.targets.size();
}

// Exact mode on the CPU: the primes that cover the bound, and a zeroed table.
void start_exact(WalkCounts& out) {
  out.primes = walks_detail::primes_for_bound(out.bound);
  out.limbs = walks_detail::limbs_for_bound(out.bound);
  out.words.assign(table_entries(out) * out.limbs, 0);
}

std::string primes_text(int primes) { return std::to_string(primes) + (primes == 1 ? " prime" : " primes"); }
std::string dense_how(const Plan& plan) { return plan.lengths.size() > 1 ? "dense products" : "dense squaring"; }

void run_sparse(const WalksProblem& p) {
  const Graph& g = *p.graph;
  const WalkQuery& query = *p.query;
  WalkCounts& out = *p.out;
  const Plan plan = plan_of(p);
  switch (query.mode) {
    case WalkMode::exact:
      start_exact(out);
      out.method = "sparse products mod " + primes_text(out.primes);
      if (g.n > 0) sparse_exact(g, plan, query, out);
      break;
    case WalkMode::int64:
      out.limbs = 1;
      out.words.assign(table_entries(out), 0);
      out.method = "sparse products in checked int64";
      if (g.n > 0) sparse_int64(g, plan, query, out);
      break;
    case WalkMode::float64:
      out.reals.assign(table_entries(out), 0.0);
      out.method = "sparse products in double";
      if (g.n > 0) sparse_float(g, plan, query, out);
      break;
  }
}

void run_dense(const WalksProblem& p) {
  const Graph& g = *p.graph;
  WalkCounts& out = *p.out;
  const Plan plan = plan_of(p);
  if (p.query->mode == WalkMode::exact) {
    start_exact(out);
    out.method = dense_how(plan) + " mod " + primes_text(out.primes);
    if (g.n > 0) dense_exact(g, plan, *p.query, out);
  } else {
    out.reals.assign(table_entries(out), 0.0);
    out.method = "dense products in double";
    if (g.n > 0) dense_float(g, plan, *p.query, out);
  }
}

void run_dense_gpu(const WalksProblem& p, const KernelLaunch& launch) {
  WalkCounts& out = *p.out;
  const Plan plan = plan_of(p);
  out.primes = *walks_detail::int8_primes_for_bound(out.bound);  // the precondition's check
  out.limbs = walks_detail::limbs_for_bound(out.bound);
  out.method = dense_how(plan) + " on GPU tensor cores (int8) mod " + std::to_string(out.primes) + " primes below 256";
  dense_exact_gpu(launch.context, *p.graph, plan, *p.query, out.primes, out);
}

// Rough costs in seconds on one core of a current x86 server: an f64 GEMM multiply-add
// takes about 0.05 ns (OpenBLAS, AVX2 FMA), a sparse modular multiply-add about 0.5 ns.
// Only the ratio matters; the choice is between costs that usually differ tenfold. Above
// 40000 vertices the dense matrices alone take 25 GB: sparse whatever the costs say.
struct EngineCosts {
  double dense = 0, sparse = 0;
};
EngineCosts engine_costs(const WalksProblem& p) {
  const Graph& g = *p.graph;
  const Plan plan = plan_of(p);
  const double n = static_cast<double>(g.n), k = plan.max_length;
  const double products =
      plan.lengths.size() > 1 ? k - 1 : std::bit_width(static_cast<unsigned>(plan.max_length)) - 1 +
                                            std::popcount(static_cast<unsigned>(plan.max_length)) - 1;
  const double seeds = std::min(plan.sources.size() == 1 ? 1.0 : n, plan.targets.size() == 1 ? 1.0 : n);
  return {products * n * n * n * 0.05e-9 + n * n * 2.0e-9,
          k * (static_cast<double>(g.edges()) + n) * seeds * 0.5e-9};
}

bool sparse_is_cheaper(const WalksProblem& p) {
  const EngineCosts c = engine_costs(p);
  return c.sparse <= c.dense || p.graph->n > 40000;
}

MeasuredTable<WalksProblem> cost_model() {
  MeasuredTable<WalksProblem> t;
  t.backend = Backend::cpu;
  t.compute_capability = 0;
  t.rule = "the CPU engine a cost model says is cheaper (dense: products x n^3 x 0.05 ns; sparse: "
           "length x (edges + n) x seeds x 0.5 ns; sparse above 40000 vertices)";
  t.picks = [](const WalksProblem& p, bool described) {
    std::vector<MeasuredTable<WalksProblem>::Pick> picks;
    if (!p.graph || !p.query || !p.out) return picks;
    const EngineCosts c = engine_costs(p);
    const bool sparse = sparse_is_cheaper(p);
    std::string where;
    if (described) {
      char text[160];
      std::snprintf(text, sizeof text, "the cheaper by the cost model (dense %.3g s, sparse %.3g s%s)", c.dense,
                    c.sparse, p.graph->n > 40000 ? ", above 40000 vertices" : "");
      where = text;
    }
    picks.push_back({sparse ? "cpu_sparse" : "cpu_dense", std::move(where)});
    return picks;
  };
  return t;
}

WalksKernel engine(std::string name, Backend backend, int rung, WalkMethod method, std::string summary,
                   std::vector<DType> dtypes, int auto_priority) {
  WalksKernel e;
  e.name = std::move(name);
  e.backend = backend;
  e.rung = rung;
  e.summary = std::move(summary);
  e.dtypes = std::move(dtypes);
  e.auto_priority = auto_priority;
  e.method = method;
  return e;
}

Registry<WalksProblem> make_registry() {
  Registry<WalksProblem> r("walks");
  WalksKernel sparse = engine("cpu_sparse", Backend::cpu, 1, WalkMethod::sparse,
                              "k sparse products with the CSR matrix, one column per source or target: every mode",
                              {DType::i64, DType::f64}, 2);
  sparse.run = [](const WalksProblem& p, const KernelLaunch&) { run_sparse(p); };
  r.add(std::move(sparse));
  WalksKernel dense = engine("cpu_dense", Backend::cpu, 2, WalkMethod::dense,
                             "dense powers by repeated squaring: f64 GEMMs mod primes (exact) or doubles (float64)",
                             {DType::i64, DType::f64}, 1);
  dense.precondition = [](const WalksProblem& p) -> std::optional<std::string> {
    if (p.query && p.query->mode == WalkMode::int64)
      return "int64 mode runs sparse products only (it checks every length for overflow)";
    return std::nullopt;
  };
  dense.run = [](const WalksProblem& p, const KernelLaunch&) { run_dense(p); };
  r.add(std::move(dense));
  // The GPU engine is CUDA code (cuda/walks_int8.cu): registered in CUDA builds only.
  GEMMKIT_CUDA_PART({
    WalksKernel gpu = engine("cuda_dense_int8", Backend::cuda, 1, WalkMethod::dense,
                             "dense powers on int8 tensor cores mod primes below 256, rebuilt on the device: exact mode",
                             {DType::i64}, 1);
    gpu.min_compute_capability = 75;
    gpu.precondition = [](const WalksProblem& p) -> std::optional<std::string> {
      if (!p.query || !p.graph || !p.out) return std::nullopt;
      if (p.query->mode != WalkMode::exact) return std::string("the GPU engine counts exactly only (mode exact)");
      if (p.graph->n > walks_detail::int8_k_limit())
        return "more than " + std::to_string(walks_detail::int8_k_limit()) +
               " vertices overflow the int32 sums of int8 products";
      if (!walks_detail::int8_primes_for_bound(p.out->bound))
        return "the counts may reach " + std::to_string(p.out->bound.bit_length()) +
               " bits; the primes below 256 cover 344";
      return std::nullopt;
    };
    gpu.run = run_dense_gpu;
    r.add(std::move(gpu));
  })
  r.set_measured_table(cost_model());
  return r;
}

// Whether count_walks runs on the GPU: the query's backend allows it, exact mode, the dense
// method (automatic: a whole table, whose int8 GEMMs beat any CPU path by far, or the cost
// model's choice), and gpu_primes_for's conditions (a device, enough vertices to gain, a bound
// the primes below 256 cover).
bool on_gpu(const WalksProblem& p) {
  const WalkQuery& query = *p.query;
  if (query.backend == WalkBackend::cpu || query.mode != WalkMode::exact || p.graph->n == 0) return false;
  if (query.method == WalkMethod::sparse) return false;
  const bool whole_table = p.out->sources.size() > 1 && p.out->targets.size() > 1;
  if (query.method == WalkMethod::automatic && query.backend != WalkBackend::cuda && !whole_table &&
      sparse_is_cheaper(p))
    return false;
  return gpu_primes_for(*p.graph, query, p.out->bound).has_value();
}

}  // namespace

const Registry<WalksProblem>& walks_registry() {
  static const Registry<WalksProblem> registry = make_registry();
  return registry;
}

BigInt walk_bound(const Graph& g, int length) {
  // Row and column sums of |A| in 128 bits: at most 2^31 entries below 2^63 each.
  u128 row_max = 0;
  std::vector<u128> col(g.n, 0);
  for (std::int64_t u = 0; u < g.n; ++u) {
    u128 sum = 0;
    for (std::int64_t e = g.row_start[u]; e < g.row_start[u + 1]; ++e) {
      const std::int64_t w = g.weight_at(e);
      const u128 mag = w < 0 ? static_cast<u128>(-(w + 1)) + 1 : w;
      sum += mag;
      col[g.target[e]] += mag;
    }
    row_max = std::max(row_max, sum);
  }
  u128 col_max = 0;
  for (auto c : col) col_max = std::max(col_max, c);
  u128 base = std::max<u128>(1, std::min(row_max, col_max));
  mpz_t b;
  mpz_init(b);
  mpz_import(b, 2, -1, sizeof(std::uint64_t), 0, 0,
             std::array<std::uint64_t, 2>{static_cast<std::uint64_t>(base),
                                          static_cast<std::uint64_t>(base >> 64)}
                 .data());
  mpz_pow_ui(b, b, static_cast<unsigned long>(std::max(length, 0)));
  std::vector<std::uint64_t> limbs((mpz_sizeinbase(b, 2) + 63) / 64 + 1, 0);
  std::size_t count = 0;
  mpz_export(limbs.data(), &count, -1, sizeof(std::uint64_t), 0, 0, b);
  mpz_clear(b);
  limbs.resize(count);
  return BigInt::from_limbs(std::move(limbs), false);
}

WalkCounts count_walks(const Graph& g, const WalkQuery& query) {
  if (query.length < 1)
    fail(ErrorCategory::usage, "the walk length must be at least 1, not " + std::to_string(query.length));
  if (query.length > 1'000'000)
    fail(ErrorCategory::usage, "the walk length " + std::to_string(query.length) + " is above the supported 1000000");
  for (const auto& v : {query.from, query.to})
    if (v && (*v < 0 || *v >= g.n))
      fail(ErrorCategory::usage, "vertex " + std::to_string(*v) + " is outside the graph's " +
                                     std::to_string(g.n) + " vertices");
  Plan plan;
  plan.max_length = query.length;
  if (query.all_lengths)
    for (int t = 1; t <= query.length; ++t) plan.lengths.push_back(t);
  else
    plan.lengths = {query.length};
  plan.sources = query.from ? std::vector<std::int64_t>{*query.from} : all_vertices(g.n);
  plan.targets = query.to ? std::vector<std::int64_t>{*query.to} : all_vertices(g.n);

  WalkCounts out;
  out.lengths = plan.lengths;
  out.sources = plan.sources;
  out.targets = plan.targets;
  out.mode = query.mode;
  out.bound = walk_bound(g, query.length);
  const WalksProblem problem{&g, &query, &out, query.mode == WalkMode::float64 ? DType::f64 : DType::i64};

  // The engine: the GPU's where on_gpu says so, else a CPU engine of the query's method
  // (automatic: the cost model's choice; int64 mode: sparse, whatever the method, as
  // docs/walks.md says).
  std::optional<Context> own;
  const bool gpu = on_gpu(problem);
  Context& ctx = gpu && query.context ? *query.context : own.emplace(gpu ? Backend::cuda : Backend::cpu);
  const WalksKernel& entry =
      walks_registry().choose(ctx, problem, "auto", [&query](const WalksKernel& e) -> std::optional<std::string> {
        if (query.method == WalkMethod::automatic || query.mode == WalkMode::int64 || e.method == query.method)
          return std::nullopt;
        return "the query asks for the " + std::string(query.method == WalkMethod::dense ? "dense" : "sparse") +
               " method";
      });
  out.kernel = entry.name;

  // Refused with the figures before anything is allocated: the table of counts, and for the
  // dense method at least two n x n matrices of residues (or doubles) to multiply.
  const bool dense = entry.method == WalkMethod::dense;
  const std::uint64_t words_per_entry =
      query.mode == WalkMode::exact ? std::uint64_t(walks_detail::limbs_for_bound(out.bound)) : 1;
  const u128 needed = u128(table_entries(out)) * words_per_entry * 8 + (dense ? u128(g.n) * u128(g.n) * 16 : 0);
  const std::string what = "counting walks on " + std::to_string(g.n) + " vertices" +
                           (dense ? " with the dense method (try --method sparse)" : "");
  require_host_memory(needed > UINT64_MAX ? UINT64_MAX : std::uint64_t(needed), what);
  try {
    run_operation(entry, ctx, problem, nullptr, {});
  } catch (const std::bad_alloc&) {
    fail(ErrorCategory::out_of_memory,
         "not enough host memory for " + what + ": " + std::to_string(host_memory().available >> 20) +
             " MiB available");
  }
  return out;
}

BigInt WalkCounts::at(std::size_t length_index, std::int64_t row, std::int64_t col) const {
  const std::size_t i = index(length_index, row, col);
  if (mode == WalkMode::float64) {
    const double x = reals[i];
    if (std::fabs(x) < 9.2e18) return BigInt(static_cast<std::int64_t>(x));
    if (!std::isfinite(x)) fail(ErrorCategory::numeric, "a walk count overflowed the double range");
    // |x| = mantissa * 2^shift exactly, with a 53-bit integer mantissa and shift >= 11.
    int exponent = 0;
    const double fraction = std::frexp(std::fabs(x), &exponent);
    const auto mantissa = static_cast<std::uint64_t>(std::ldexp(fraction, 53));
    const int shift = exponent - 53;
    std::vector<std::uint64_t> magnitude(static_cast<std::size_t>(shift / 64) + 2, 0);
    magnitude[shift / 64] = mantissa << (shift % 64);
    if (shift % 64 != 0) magnitude[shift / 64 + 1] = mantissa >> (64 - shift % 64);
    return BigInt::from_limbs(std::move(magnitude), x < 0);
  }
  return walks_detail::bigint_from_words(&words[i * limbs], limbs);
}

double WalkCounts::approx(std::size_t length_index, std::int64_t row, std::int64_t col) const {
  if (mode == WalkMode::float64) return reals[index(length_index, row, col)];
  if (limbs == 1) return static_cast<double>(static_cast<std::int64_t>(words[index(length_index, row, col)]));
  return at(length_index, row, col).to_double();
}

bool WalkCounts::fits_int64() const {
  if (mode == WalkMode::float64) {
    return std::all_of(reals.begin(), reals.end(), [](double x) { return std::fabs(x) < 9.2e18; });
  }
  if (limbs == 1) return true;
  const std::size_t entries = words.size() / limbs;
  for (std::size_t i = 0; i < entries; ++i) {
    const std::uint64_t* w = &words[i * limbs];
    const std::uint64_t extension = (w[0] >> 63) ? ~std::uint64_t{0} : 0;
    for (int l = 1; l < limbs; ++l)
      if (w[l] != extension) return false;
  }
  return true;
}

std::int64_t WalkCounts::int64_at(std::size_t length_index, std::int64_t row, std::int64_t col) const {
  if (mode == WalkMode::float64) return static_cast<std::int64_t>(reals[index(length_index, row, col)]);
  if (limbs == 1) return static_cast<std::int64_t>(words[index(length_index, row, col)]);
  return at(length_index, row, col).to_int64();
}

std::string_view walk_mode_name(WalkMode mode) {
  switch (mode) {
    case WalkMode::exact: return "exact";
    case WalkMode::int64: return "int64";
    case WalkMode::float64: return "float";
  }
  return "?";
}

std::optional<WalkMode> parse_walk_mode(std::string_view text) {
  if (text == "exact") return WalkMode::exact;
  if (text == "int64") return WalkMode::int64;
  if (text == "float" || text == "float64" || text == "double") return WalkMode::float64;
  return std::nullopt;
}

WalkGemmReferences walk_gemm_references(std::int64_t n) {
  GEMMKIT_CUDA_PART(const walks_detail::GemmReferenceTimes t = walks_detail::gpu_reference_gemm_times(n);
                    return {t.int8_seconds, t.fp64_seconds};)
  detail::fail_without_cuda();
}

std::optional<WalkBackend> parse_walk_backend(std::string_view text) {
  if (text == "auto") return WalkBackend::automatic;
  if (text == "cpu") return WalkBackend::cpu;
  if (text == "cuda") return WalkBackend::cuda;
  return std::nullopt;
}

std::optional<WalkMethod> parse_walk_method(std::string_view text) {
  if (text == "auto") return WalkMethod::automatic;
  if (text == "dense") return WalkMethod::dense;
  if (text == "sparse") return WalkMethod::sparse;
  return std::nullopt;
}

}  // namespace gemmkit

namespace gemmkit::walks_detail {

std::vector<PowerStep> power_steps(int length) {
  std::vector<PowerStep> steps;
  for (int bit = std::bit_width(static_cast<unsigned>(length)) - 2; bit >= 0; --bit) {
    steps.push_back({PowerStep::square, 0});
    if ((length >> bit) & 1) steps.push_back({PowerStep::times_a, 0});
  }
  steps.push_back({PowerStep::record, 0});
  return steps;
}

std::optional<int> gpu_primes_for(const Graph& g, const WalkQuery& query, const BigInt& bound) {
  if (query.backend == WalkBackend::cpu) return std::nullopt;
  const bool forced = query.backend == WalkBackend::cuda;
  auto refuse = [&](const std::string& why) -> std::optional<int> {
    if (forced) fail(ErrorCategory::usage, "--backend cuda: " + why);
    return std::nullopt;
  };
  if (!walks_detail::gpu_int8_powers_available()) {
    if (forced) require_cuda_device();  // the device error every command gives
    return std::nullopt;
  }
  if (!forced && g.n < kGpuWalkMinVertices) return std::nullopt;
  if (g.n > walks_detail::int8_k_limit())
    return refuse("more than " + std::to_string(walks_detail::int8_k_limit()) +
                  " vertices overflow the int32 sums of int8 products");
  const std::optional<int> primes = walks_detail::int8_primes_for_bound(bound);
  if (!primes)
    return refuse("the counts may reach " + std::to_string(bound.bit_length()) +
                  " bits; the primes below 256 cover 344");
  return primes;
}

}  // namespace gemmkit::walks_detail
