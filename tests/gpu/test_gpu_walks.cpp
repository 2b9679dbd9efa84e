// The GPU walk engine (residues built on the device, modular int8 GEMMs modulo the primes
// below 256, the Chinese remainder rebuild on the device) against the CPU engine (f64 GEMMs
// modulo 21-bit primes): every count equal, on directed graphs with signed weights,
// undirected and unweighted ones, vertex counts that are not multiples of 64, one row, one
// column and one pair, all lengths 1..K, lengths that need most of the 53 primes, the
// moduli split into several batches (as when device memory is short), and the residue
// planes left on the device for other sets of primes to join (the distributed walks).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

#include "runtime/cuda/device_buffer.hpp"
#include "fault_injection.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/exact.hpp"
#include "gemmkit/walks.hpp"
#include "gpu/gpu_test_support.hpp"
#include "ops/walks/modular_int8.hpp"

using namespace gemmkit;

namespace {

Graph random_graph(std::int64_t n, int degree, int max_weight, std::uint64_t seed, bool undirected = false) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> vertex(0, n - 1), weight(-max_weight, max_weight);
  std::vector<Edge> edges;
  for (std::int64_t u = 0; u < n; ++u)
    for (int d = 0; d < degree; ++d) {
      const std::int64_t v = vertex(rng), w = max_weight ? weight(rng) : 1;
      edges.push_back({u, v, w});
      if (undirected && v != u) edges.push_back({v, u, w});
    }
  return graph_from_edges(n, edges);
}

// Every count of the GPU engine's table equals the CPU engine's.
::testing::AssertionResult same_counts(const WalkCounts& gpu, const WalkCounts& cpu) {
  if (gpu.lengths != cpu.lengths || gpu.sources != cpu.sources || gpu.targets != cpu.targets)
    return ::testing::AssertionFailure() << "the tables have different lengths, rows or columns";
  for (std::size_t li = 0; li < gpu.lengths.size(); ++li)
    for (std::int64_t r = 0; r < gpu.rows(); ++r)
      for (std::int64_t c = 0; c < gpu.cols(); ++c)
        if (gpu.at(li, r, c) != cpu.at(li, r, c))
          return ::testing::AssertionFailure() << "length " << gpu.lengths[li] << ", entry (" << r << ", " << c
                                               << "): " << gpu.at(li, r, c).to_string() << ", the CPU's "
                                               << cpu.at(li, r, c).to_string();
  return ::testing::AssertionSuccess();
}

// A count as gpu_int8_powers writes it: `limbs` words of two's complement, least first.
BigInt from_words(const std::uint64_t* w, int limbs) {
  const bool negative = w[limbs - 1] >> 63;
  std::vector<std::uint64_t> magnitude(w, w + limbs);
  if (negative) {
    std::uint64_t carry = 1;
    for (auto& x : magnitude) {
      x = ~x + carry;
      carry = carry && x == 0;
    }
  }
  while (!magnitude.empty() && magnitude.back() == 0) magnitude.pop_back();
  return BigInt::from_limbs(magnitude, negative);
}

void expect_same_counts(const Graph& g, WalkQuery q, Context* ctx = nullptr) {
  q.method = WalkMethod::dense;
  q.backend = WalkBackend::cuda;
  q.context = ctx;
  const WalkCounts gpu = count_walks(g, q);
  ASSERT_TRUE(gpu.gpu.has_value()) << gpu.method;
  q.backend = WalkBackend::cpu;
  const WalkCounts cpu = count_walks(g, q);
  ASSERT_FALSE(cpu.gpu.has_value());
  ASSERT_EQ(gpu.lengths, cpu.lengths);
  ASSERT_EQ(gpu.sources, cpu.sources);
  ASSERT_EQ(gpu.targets, cpu.targets);
  ASSERT_TRUE(same_counts(gpu, cpu));
  std::int64_t checked = 0, nonzero = 0;
  for (std::size_t li = 0; li < gpu.lengths.size(); ++li)
    for (std::int64_t r = 0; r < gpu.rows(); ++r)
      for (std::int64_t c = 0; c < gpu.cols(); ++c, ++checked) nonzero += !gpu.at(li, r, c).is_zero();
  EXPECT_GT(nonzero, checked / 4) << "too few nonzero counts to mean much";
  std::cout << "[   NOTE   ] " << gpu.method << ": " << checked << " counts equal the CPU's (" << nonzero
            << " nonzero), " << gpu.gpu->products << " products x " << gpu.gpu->primes << " primes, "
            << gpu.limbs << " words each; engine " << gpu.gpu->total_seconds << " s" << std::endl;
}

TEST(GpuWalks, ExactCountsEqualTheCpuEngine) {
  SKIP_WITHOUT_DEVICE();
  // 600 vertices (not a multiple of 64: padded planes), signed weights up to 3: counts of
  // length 21 reach about 2^90 and need 12 primes below 256.
  const Graph g = random_graph(600, 5, 3, 1);
  WalkQuery q;
  q.length = 21;
  expect_same_counts(g, q);
  // Every length 1..9 (products by A, no squaring), unweighted, one source row.
  const Graph h = random_graph(517, 8, 0, 2);
  WalkQuery all;
  all.length = 9;
  all.all_lengths = true;
  expect_same_counts(h, all);
  WalkQuery row;
  row.length = 33;
  row.from = 5;
  expect_same_counts(h, row);
}

// The comparison above fails on each planted fault of the GPU engine's real table: a count
// one less or one more, one negated, the last row rebuilt as the row before it.
TEST(GpuWalks, CatchesPlantedFaults) {
  SKIP_WITHOUT_DEVICE();
  const Graph g = random_graph(600, 6, 2, 31);
  WalkQuery q;
  q.length = 9;
  q.all_lengths = true;
  q.method = WalkMethod::dense;
  q.backend = WalkBackend::cuda;
  WalkCounts gpu = count_walks(g, q);
  ASSERT_TRUE(gpu.gpu.has_value()) << gpu.method;
  q.backend = WalkBackend::cpu;
  const WalkCounts cpu = count_walks(g, q);
  const auto faults = test::limb_table_faults(gpu.words.data(), std::int64_t(gpu.lengths.size()) * gpu.rows(),
                                              gpu.cols(), gpu.cols(), gpu.limbs);
  const test::OutputBytes out{gpu.words.data(), gpu.words.size() * sizeof(std::uint64_t)};
  EXPECT_EQ(test::expect_faults_caught(out, [&] { return same_counts(gpu, cpu); }, faults), int(faults.size()));
}

TEST(GpuWalks, RowsColumnsPairsAndAllLengthsOfThem) {
  SKIP_WITHOUT_DEVICE();
  const Graph g = random_graph(700, 6, 2, 4);  // signed weights, 700 = 10 x 64 + 60
  WalkQuery q;
  q.length = 27;  // squarings and products by A: 27 = 11011b
  q.to = 699;     // the last vertex: the padding's neighbour
  expect_same_counts(g, q);
  q.from = 0;  // one pair
  expect_same_counts(g, q);
  q.to.reset();
  q.all_lengths = true;  // one row, every length
  q.length = 12;
  expect_same_counts(g, q);
  q.from.reset();
  q.to = 3;  // one column, every length
  expect_same_counts(g, q);
}

TEST(GpuWalks, UndirectedGraphAndTheCallersContext) {
  SKIP_WITHOUT_DEVICE();
  const Graph g = random_graph(640, 4, 0, 5, true);  // a multiple of 64: no padding
  Context ctx(Backend::cuda);
  WalkQuery q;
  q.length = 40;
  expect_same_counts(g, q, &ctx);
  WalkQuery all;
  all.length = 6;
  all.all_lengths = true;
  expect_same_counts(g, all, &ctx);
  // Symmetric: walks u -> v and v -> u are as many.
  all.backend = WalkBackend::cuda;
  all.method = WalkMethod::dense;
  all.context = &ctx;
  const WalkCounts w = count_walks(g, all);
  for (std::int64_t u = 0; u < 640; u += 37)
    for (std::int64_t v = 0; v < 640; v += 41) EXPECT_EQ(w.at(5, u, v), w.at(5, v, u));
}

TEST(GpuWalks, LengthsThatNeedMostOfThePrimes) {
  SKIP_WITHOUT_DEVICE();
  // Weights up to 7 and degree 6: row sums up to 42; this graph's bound at length 60 is
  // about 2^318: 48 of the 53 primes, and five-word counts.
  const Graph g = random_graph(576, 6, 7, 6);
  WalkQuery q;
  q.length = 60;
  const WalkCounts bound_check = [&] {
    WalkQuery b = q;
    b.backend = WalkBackend::cuda;
    b.method = WalkMethod::dense;
    return count_walks(g, b);
  }();
  EXPECT_GE(bound_check.primes, 45) << bound_check.method;
  expect_same_counts(g, q);
}

TEST(GpuWalks, ModuliInSeveralBatches) {
  SKIP_WITHOUT_DEVICE();
  // The engine called directly with at most 5 moduli per batch (as when device memory is
  // short): the residues of each batch are kept and rebuilt after the last one.
  const Graph g = random_graph(520, 7, 2, 7);
  WalkQuery q;
  q.length = 16;  // a bound of about 2^60: 8 primes, so two batches of at most 5
  q.all_lengths = true;
  q.method = WalkMethod::dense;
  q.backend = WalkBackend::cpu;
  const WalkCounts cpu = count_walks(g, q);
  const BigInt bound = walk_bound(g, q.length);
  const int nq = *walks_detail::int8_primes_for_bound(bound);
  ASSERT_GT(nq, 5);
  const std::vector<std::uint32_t> primes(walks_detail::int8_primes().begin(), walks_detail::int8_primes().begin() + nq);
  std::vector<walks_detail::PowerStep> steps;
  for (int t = 1; t <= q.length; ++t) {
    if (t > 1) steps.push_back({walks_detail::PowerStep::times_a, 0});
    steps.push_back({walks_detail::PowerStep::record, t - 1});
  }
  // Rows in a scrambled order and a few columns, to exercise the gathers.
  std::vector<std::int64_t> rows, cols = {519, 0, 64, 63, 200};
  for (std::int64_t r = 0; r < 520; ++r) rows.push_back((r * 7) % 520);
  const int limbs = crt_limbs(primes);  // all the words of (-P/2, P/2): more than the bound needs
  for (int max_batch : {5, 0}) {
    std::vector<std::uint64_t> out(std::size_t(q.length) * rows.size() * cols.size() * limbs);
    Context ctx(Backend::cuda);
    const auto report = walks_detail::gpu_int8_powers(ctx, g, primes, steps, rows, cols, limbs, out.data(), {}, max_batch);
    EXPECT_EQ(report.batches, max_batch ? (nq + 4) / 5 : 1);
    for (int li = 0; li < q.length; ++li)
      for (std::size_t r = 0; r < rows.size(); ++r)
        for (std::size_t c = 0; c < cols.size(); ++c) {
          const std::uint64_t* w = &out[((li * rows.size() + r) * cols.size() + c) * limbs];
          ASSERT_EQ(from_words(w, limbs), cpu.at(li, rows[r], cols[c]))
              << "max_batch " << max_batch << ", length " << li + 1 << ", (" << rows[r] << ", " << cols[c] << ")";
        }
  }
}

// The engine sizes its modular GEMM's workspace once, for its batch of moduli, then runs a
// warm-up of one modulus and a last batch of fewer in it; those can plan stream-K where the
// full batch plans none (an 8192-vertex walk at k = 32 failed so, "needs 17302784 bytes of
// workspace, 0 were given"). Every batch size from 1 to all the primes, on 700 vertices (9
// tiles of 256 x 256 a modulus: batches of 10-12 and 18-19 plan stream-K on 66 clusters,
// 13-17 do not), each against the CPU engine.
TEST(GpuWalks, EveryBatchSizeOfTheModuli) {
  SKIP_WITHOUT_DEVICE();
  const std::int64_t n = 700;
  const Graph g = random_graph(n, 6, 7, 12);
  WalkQuery q;
  q.length = 48;  // row sums up to 42: about 38 of the 53 primes
  q.method = WalkMethod::dense;
  q.backend = WalkBackend::cpu;
  const WalkCounts cpu = count_walks(g, q);
  const std::optional<int> primes_needed = walks_detail::int8_primes_for_bound(walk_bound(g, q.length));
  ASSERT_TRUE(primes_needed.has_value());
  const int nq = *primes_needed;
  ASSERT_GE(nq, 30);
  const std::vector<std::uint32_t> primes(walks_detail::int8_primes().begin(), walks_detail::int8_primes().begin() + nq);
  std::vector<walks_detail::PowerStep> steps;  // A^48: A^16 by squarings, then times A
  for (int t = 0; t < 4; ++t) steps.push_back({walks_detail::PowerStep::square, 0});
  for (int t = 16; t < 48; ++t) steps.push_back({walks_detail::PowerStep::times_a, 0});
  steps.push_back({walks_detail::PowerStep::record, 0});
  std::vector<std::int64_t> rows, cols = {699, 0, 7, 64, 300};
  for (std::int64_t r = 0; r < n; ++r) rows.push_back(r);
  const int limbs = crt_limbs(primes);
  Context ctx(Backend::cuda);
  for (int max_batch = 1; max_batch <= nq; ++max_batch) {
    SCOPED_TRACE("batches of at most " + std::to_string(max_batch) + " of " + std::to_string(nq) + " primes");
    std::vector<std::uint64_t> out(rows.size() * cols.size() * limbs);
    walks_detail::Int8PowersReport report;
    ASSERT_NO_THROW(report = walks_detail::gpu_int8_powers(ctx, g, primes, steps, rows, cols, limbs, out.data(), {},
                                                           max_batch));
    EXPECT_EQ(report.batches, (nq + max_batch - 1) / max_batch);
    int errors = 0;
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::size_t c = 0; c < cols.size(); ++c) {
        if (from_words(&out[(r * cols.size() + c) * limbs], limbs) != cpu.at(0, rows[r], cols[c]) && ++errors <= 3)
          ADD_FAILURE() << "(" << rows[r] << ", " << cols[c] << ") differs from the CPU engine's count";
      }
  }
}

TEST(GpuWalks, PowerPlanesOfSeveralSetsOfPrimesRebuildTogether) {
  SKIP_WITHOUT_DEVICE();
  // As the distributed walks run the engine: each of three "ranks" (prime q on rank q mod 3)
  // leaves the residue planes of A^length modulo its primes on the device (one of them in
  // batches of 2), rank by rank in one buffer, and one rebuild of them all, the primes in
  // that order, gives the single-process engine's table word for word.
  const Graph g = random_graph(520, 7, 2, 11);  // 520: planes narrower than the engine's padded ones
  const int length = 21;
  const std::int64_t n = g.n;
  const std::size_t plane = std::size_t(n * n);
  const int nq = *walks_detail::int8_primes_for_bound(walk_bound(g, length));
  ASSERT_GT(nq, 7);  // at least 3 primes on the "rank" of batches of 2
  const std::vector<std::uint32_t> primes(walks_detail::int8_primes().begin(), walks_detail::int8_primes().begin() + nq);
  const int limbs = crt_limbs(primes);
  std::vector<std::int64_t> all;
  for (std::int64_t v = 0; v < n; ++v) all.push_back(v);
  Context ctx(Backend::cuda);
  std::vector<std::uint64_t> expected(plane * std::size_t(limbs));
  walks_detail::gpu_int8_powers(ctx, g, primes, walks_detail::power_steps(length), all, all, limbs, expected.data(), {});

  cuda::DeviceBuffer<std::int8_t> planes(plane * std::size_t(nq));
  std::vector<std::uint32_t> by_rank;
  for (int r = 0; r < 3; ++r) {
    std::vector<std::uint32_t> own;
    for (int q = r; q < nq; q += 3) own.push_back(primes[std::size_t(q)]);
    const int max_batch = r == 1 ? 2 : 0;
    const auto report = walks_detail::gpu_int8_power_planes(ctx, g, own, length, planes.data() + by_rank.size() * plane,
                                                            walks_detail::PlanesIn::device, {}, max_batch);
    EXPECT_EQ(report.batches, max_batch ? (int(own.size()) + 1) / 2 : 1);
    by_rank.insert(by_rank.end(), own.begin(), own.end());
  }
  // The same planes in host memory, for rank 0's primes.
  std::vector<std::uint32_t> rank0;
  for (int q = 0; q < nq; q += 3) rank0.push_back(primes[std::size_t(q)]);
  std::vector<std::int8_t> host(rank0.size() * plane), device(rank0.size() * plane);
  walks_detail::gpu_int8_power_planes(ctx, g, rank0, length, host.data(), walks_detail::PlanesIn::host);
  planes.copy_to_host(device.data(), device.size());
  EXPECT_TRUE(host == device);
  // Centred residues: |r| <= (p - 1) / 2.
  const std::int64_t half = (primes[0] - 1) / 2;
  EXPECT_TRUE(std::all_of(device.begin(), device.begin() + std::ptrdiff_t(plane),
                          [&](std::int8_t x) { return x >= -half && x <= half; }));

  std::vector<std::uint64_t> got(plane * std::size_t(limbs));
  const auto report =
      walks_detail::gpu_counts_from_planes(ctx, by_rank, {planes.data(), n, n * n, n, n}, limbs, got.data());
  EXPECT_GT(report.total_seconds, 0);
  EXPECT_TRUE(got == expected);
}

TEST(GpuWalks, BoundsPastTheInt8PrimesAreRefusedOrLeftToTheCpu) {
  SKIP_WITHOUT_DEVICE();
  // Degree 30 and length 80: counts up to 30^80, about 2^393, past the 2^344 the primes
  // below 256 cover: auto runs the CPU engine, --backend cuda says why it cannot.
  const Graph g = random_graph(520, 30, 0, 3);
  WalkQuery q;
  q.length = 80;
  q.method = WalkMethod::dense;
  EXPECT_FALSE(count_walks(g, q).gpu.has_value());
  q.backend = WalkBackend::cuda;
  EXPECT_THROW(count_walks(g, q), Error);
}

}  // namespace
