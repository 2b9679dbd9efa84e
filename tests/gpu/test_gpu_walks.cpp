// The GPU walk engine (int8 tensor-core GEMMs modulo the primes below 256) against the CPU
// engine (f64 GEMMs modulo 21-bit primes) on random directed graphs with signed weights:
// every count equal, for one length far past 2^64, for all lengths 1..K, and for one row.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "gemmkit/error.hpp"
#include "gemmkit/walks.hpp"
#include "gpu/gpu_test_support.hpp"

using namespace gemmkit;

namespace {

Graph random_graph(std::int64_t n, int degree, int max_weight, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> vertex(0, n - 1), weight(-max_weight, max_weight);
  std::vector<Edge> edges;
  for (std::int64_t u = 0; u < n; ++u)
    for (int d = 0; d < degree; ++d) edges.push_back({u, vertex(rng), max_weight ? weight(rng) : 1});
  return graph_from_edges(n, edges);
}

void expect_same_counts(const Graph& g, WalkQuery q) {
  q.method = WalkMethod::dense;
  q.backend = WalkBackend::cuda;
  const WalkCounts gpu = count_walks(g, q);
  ASSERT_TRUE(gpu.gpu.has_value()) << gpu.method;
  q.backend = WalkBackend::cpu;
  const WalkCounts cpu = count_walks(g, q);
  ASSERT_FALSE(cpu.gpu.has_value());
  ASSERT_EQ(gpu.lengths, cpu.lengths);
  std::int64_t checked = 0;
  for (std::size_t li = 0; li < gpu.lengths.size(); ++li)
    for (std::int64_t r = 0; r < gpu.rows(); ++r)
      for (std::int64_t c = 0; c < gpu.cols(); ++c, ++checked)
        ASSERT_EQ(gpu.at(li, r, c), cpu.at(li, r, c))
            << "length " << gpu.lengths[li] << ", entry (" << r << ", " << c << ")";
  std::cout << "[   NOTE   ] " << gpu.method << ": " << checked << " counts equal the CPU's, "
            << gpu.gpu->products << " products x " << gpu.gpu->primes << " primes" << std::endl;
}

TEST(GpuWalks, ExactCountsEqualTheCpuEngine) {
  SKIP_WITHOUT_DEVICE();
  // 600 vertices (not a multiple of 16: padded leading dimensions), signed weights up to 3:
  // counts of length 21 reach about 2^90 and need 12 primes below 256.
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
