// Walk counting: the teaching texts' tables, exact counts against a straightforward GMP matrix power,
// the modular GEMM at the edge of its exactness bound, the Chinese remainder rebuild, the
// three modes, and the graph readers.
#include <gtest/gtest.h>
#include <gmpxx.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "fault_injection.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/walks.hpp"
#include "ops/walks/modular.hpp"
#include "ops/walks/modular_int8.hpp"
#include "host/io_test_support.hpp"

using namespace gemmkit;
namespace fs = std::filesystem;

namespace {

using BigMatrix = std::vector<std::vector<mpz_class>>;

// The reference: A^t by t - 1 schoolbook products in GMP integers.
std::vector<BigMatrix> reference_powers(const std::vector<std::vector<std::int64_t>>& a, int k) {
  const std::size_t n = a.size();
  BigMatrix base(n, std::vector<mpz_class>(n));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) base[i][j] = static_cast<long>(a[i][j]);
  std::vector<BigMatrix> powers{base};
  for (int t = 2; t <= k; ++t) {
    BigMatrix next(n, std::vector<mpz_class>(n));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t l = 0; l < n; ++l)
        if (powers.back()[i][l] != 0)
          for (std::size_t j = 0; j < n; ++j) next[i][j] += powers.back()[i][l] * base[l][j];
    powers.push_back(std::move(next));
  }
  return powers;
}

Graph graph_of(const std::vector<std::vector<std::int64_t>>& a, std::vector<std::string> labels = {}) {
  const auto n = static_cast<std::int64_t>(a.size());
  std::vector<std::int64_t> flat;
  for (const auto& row : a) flat.insert(flat.end(), row.begin(), row.end());
  return graph_from_dense(n, flat.data(), std::move(labels));
}

// Random adjacency: about `density` of the entries nonzero, weights in [lo, hi].
std::vector<std::vector<std::int64_t>> random_adjacency(std::size_t n, double density, int lo, int hi,
                                                        std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> coin(0, 1);
  std::uniform_int_distribution<int> weight(lo, hi);
  std::vector<std::vector<std::int64_t>> a(n, std::vector<std::int64_t>(n, 0));
  for (auto& row : a)
    for (auto& x : row)
      if (coin(rng) < density) x = weight(rng);
  return a;
}

// The teaching texts' 10-vertex graph (vertices A..J) and its tables of lengths 1 to 4.
const std::vector<std::string> kSeedLabels = {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"};
const std::vector<std::vector<std::int64_t>> kSeedTables[4] = {
    {{0, 1, 1, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 1, 1, 0, 1, 0, 0, 0, 0}, {1, 1, 0, 1, 1, 0, 0, 0, 0, 0},
     {0, 1, 1, 0, 0, 1, 0, 0, 0, 0}, {0, 0, 1, 0, 0, 0, 0, 1, 0, 0}, {0, 1, 0, 1, 0, 0, 1, 1, 1, 0},
     {0, 0, 0, 0, 0, 1, 0, 1, 1, 1}, {0, 0, 0, 0, 1, 1, 1, 0, 0, 1}, {0, 0, 0, 0, 0, 1, 1, 0, 0, 1},
     {0, 0, 0, 0, 0, 0, 1, 1, 1, 0}},
    {{2, 1, 1, 2, 1, 1, 0, 0, 0, 0}, {1, 4, 2, 2, 1, 1, 1, 1, 1, 0}, {1, 2, 4, 1, 0, 2, 0, 1, 0, 0},
     {2, 2, 1, 3, 1, 1, 1, 1, 1, 0}, {1, 1, 0, 1, 2, 1, 1, 0, 0, 1}, {1, 1, 2, 1, 1, 5, 2, 1, 1, 3},
     {0, 1, 0, 1, 1, 2, 4, 2, 2, 2}, {0, 1, 1, 1, 0, 1, 2, 4, 3, 1}, {0, 1, 0, 1, 0, 1, 2, 3, 3, 1},
     {0, 0, 0, 0, 1, 3, 2, 1, 1, 3}},
    {{2, 6, 6, 3, 1, 3, 1, 2, 1, 0}, {6, 6, 8, 7, 3, 9, 3, 3, 2, 3}, {6, 8, 4, 8, 5, 4, 3, 2, 2, 1},
     {3, 7, 8, 4, 2, 8, 3, 3, 2, 3}, {1, 3, 5, 2, 0, 3, 2, 5, 3, 1}, {3, 9, 4, 8, 3, 6, 10, 11, 10, 4},
     {1, 3, 3, 3, 2, 10, 8, 9, 8, 8}, {2, 3, 2, 3, 5, 11, 9, 4, 4, 9}, {1, 2, 2, 2, 3, 10, 8, 4, 4, 8},
     {0, 3, 1, 3, 1, 4, 8, 9, 8, 4}},
    {{12, 14, 12, 15, 8, 13, 6, 5, 4, 4}, {14, 30, 22, 23, 11, 21, 17, 18, 15, 8},
     {12, 22, 27, 16, 6, 23, 9, 13, 8, 7}, {15, 23, 16, 23, 11, 19, 16, 16, 14, 8},
     {8, 11, 6, 11, 10, 15, 12, 6, 6, 10}, {13, 21, 23, 19, 15, 48, 31, 23, 20, 31},
     {6, 17, 9, 16, 12, 31, 35, 28, 26, 25}, {5, 18, 13, 16, 6, 23, 28, 34, 29, 17},
     {4, 15, 8, 14, 6, 20, 26, 29, 26, 16}, {4, 8, 7, 8, 10, 31, 25, 17, 16, 25}},
};

// Every count of `w` equals the reference (rows/cols are w's sources/targets).
::testing::AssertionResult matches(const WalkCounts& w, const std::vector<BigMatrix>& ref) {
  for (std::size_t li = 0; li < w.lengths.size(); ++li)
    for (std::int64_t r = 0; r < w.rows(); ++r)
      for (std::int64_t c = 0; c < w.cols(); ++c) {
        const std::string want = ref[w.lengths[li] - 1][w.sources[r]][w.targets[c]].get_str();
        const std::string got = w.at(li, r, c).to_string();
        if (got != want)
          return ::testing::AssertionFailure() << "length " << w.lengths[li] << " (" << w.sources[r] << ", "
                                               << w.targets[c] << "): got " << got << ", want " << want;
      }
  return ::testing::AssertionSuccess();
}
void expect_matches(const WalkCounts& w, const std::vector<BigMatrix>& ref, const std::string& what) {
  EXPECT_TRUE(matches(w, ref)) << what;
}

WalkQuery query(int length, WalkMode mode, WalkMethod method, bool all = false) {
  WalkQuery q;
  q.length = length;
  q.mode = mode;
  q.method = method;
  q.all_lengths = all;
  return q;
}

}  // namespace

// ---- the teaching texts' example ----------------------------------------------------------------------

TEST(Walks, SeedsTablesOfLengthsOneToFour) {
  const Graph g = graph_of(kSeedTables[0], kSeedLabels);
  ASSERT_EQ(g.edges(), 34);  // 17 edges, both ways
  for (WalkMode mode : {WalkMode::exact, WalkMode::int64, WalkMode::float64})
    for (WalkMethod method : {WalkMethod::dense, WalkMethod::sparse}) {
      const WalkCounts w = count_walks(g, query(4, mode, method, true));
      ASSERT_EQ(w.lengths, (std::vector<int>{1, 2, 3, 4}));
      for (int t = 0; t < 4; ++t)
        for (int i = 0; i < 10; ++i)
          for (int j = 0; j < 10; ++j)
            EXPECT_EQ(w.at(t, i, j), BigInt(kSeedTables[t][i][j]))
                << walk_mode_name(mode) << " length " << t + 1 << " " << kSeedLabels[i] << kSeedLabels[j];
    }
}

TEST(Walks, SevenWalksOfLengthFourFromCToJ) {
  const Graph g = graph_of(kSeedTables[0], kSeedLabels);
  for (WalkMethod method : {WalkMethod::dense, WalkMethod::sparse, WalkMethod::automatic}) {
    WalkQuery q = query(4, WalkMode::exact, method);
    q.from = g.vertex("C");
    q.to = g.vertex("J");
    const WalkCounts w = count_walks(g, q);
    ASSERT_EQ(w.rows(), 1);
    ASSERT_EQ(w.cols(), 1);
    EXPECT_EQ(w.at(0, 0, 0), BigInt(7));
  }
}

TEST(Walks, SeedsGraphFromAnEdgeListAgrees) {
  const std::string path = ::testing::TempDir() + "walks_seed_edges.txt";
  {
    std::ofstream out(path);
    out << "# the teaching texts' graph\nA B\nA C\nB C\nB D\nB F\nC D\nC E  # comment\nD F\nE H\nF G\nF H\n"
           "F I\nG H\nG I\nG J\nH J\n\nI J\n";
  }
  GraphReadOptions o;
  o.undirected = true;
  const Graph g = read_graph(path, o);
  fs::remove(path);
  ASSERT_EQ(g.n, 10);
  WalkQuery q = query(3, WalkMode::exact, WalkMethod::automatic);
  const WalkCounts w = count_walks(g, q);
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j)
      EXPECT_EQ(w.at(0, *g.find(kSeedLabels[i]), *g.find(kSeedLabels[j])), BigInt(kSeedTables[2][i][j]));
}

// ---- exact counts beyond 64 bits against GMP -------------------------------------------

TEST(Walks, ExactMatchesGmpReferenceFarBeyondInt64) {
  struct Case {
    std::size_t n;
    double density;
    int lo, hi, length;
  };
  // Weighted, negative weights, sparse and dense, lengths where counts pass 2^64 by far.
  const Case cases[] = {{7, 0.6, 0, 3, 45}, {12, 0.9, 1, 9, 30}, {9, 0.4, -5, 5, 33},
                        {16, 0.25, 0, 1, 64}, {1, 1.0, 7, 7, 50}, {5, 1.0, 1000000, 2000000, 9}};
  std::uint64_t seed = 11;
  for (const Case& c : cases) {
    auto a = random_adjacency(c.n, c.density, c.lo, c.hi, seed++);
    const auto ref = reference_powers(a, c.length);
    mpz_class largest = 0;
    for (const auto& row : ref.back())
      for (const auto& x : row) largest = std::max<mpz_class>(largest, abs(x));
    const Graph g = graph_of(a);
    const std::string what = std::to_string(c.n) + " vertices, length " + std::to_string(c.length);
    for (WalkMethod method : {WalkMethod::dense, WalkMethod::sparse}) {
      const WalkCounts w = count_walks(g, query(c.length, WalkMode::exact, method, true));
      expect_matches(w, ref, what);
      // The bound must hold for what it bounds.
      EXPECT_LE(largest, mpz_class(w.bound.to_string())) << what;
      // Single rows, columns and pairs take the other code paths.
      WalkQuery q = query(c.length, WalkMode::exact, method);
      q.from = static_cast<std::int64_t>(c.n / 2);
      expect_matches(count_walks(g, q), ref, what + " row");
      q.to = 0;
      expect_matches(count_walks(g, q), ref, what + " pair");
      q.from.reset();
      expect_matches(count_walks(g, q), ref, what + " column");
    }
    if (c.n == 12) {
      EXPECT_GT(largest, mpz_class("100000000000000000000000000000000")) << "not big";
    }
  }
}

// The check above fails on each planted fault of a real table of counts (dense and sparse
// engines, counts past 2^64, every length from 1).
TEST(Walks, CatchesPlantedFaults) {
  const auto a = random_adjacency(9, 0.5, -2, 3, 5);
  const auto ref = reference_powers(a, 30);
  for (WalkMethod method : {WalkMethod::dense, WalkMethod::sparse}) {
    WalkCounts w = count_walks(graph_of(a), query(30, WalkMode::exact, method, true));
    ASSERT_GE(w.limbs, 2);
    const auto faults = test::limb_table_faults(w.words.data(), std::int64_t(w.lengths.size()) * w.rows(), w.cols(),
                                                w.cols(), w.limbs);
    const test::OutputBytes out{w.words.data(), w.words.size() * sizeof(std::uint64_t)};
    EXPECT_EQ(test::expect_faults_caught(out, [&] { return matches(w, ref); }, faults), int(faults.size()));
  }
}

TEST(Walks, SelfLoopsIsolatedVerticesAndDirectedEdges) {
  // 0 -> 1 -> 2 -> 0 cycle, a self-loop of weight 2 on 1, vertex 3 isolated, 4 -> 0 only.
  const Graph g = graph_from_edges(5, {{0, 1, 1}, {1, 2, 1}, {2, 0, 1}, {1, 1, 2}, {4, 0, 1}});
  std::vector<std::vector<std::int64_t>> a(5, std::vector<std::int64_t>(5, 0));
  a[0][1] = a[1][2] = a[2][0] = a[4][0] = 1;
  a[1][1] = 2;
  const auto ref = reference_powers(a, 70);
  for (WalkMethod method : {WalkMethod::dense, WalkMethod::sparse})
    expect_matches(count_walks(g, query(70, WalkMode::exact, method, true)), ref, "loops");
  const WalkCounts w = count_walks(g, query(70, WalkMode::exact, WalkMethod::automatic));
  for (int v = 0; v < 5; ++v) {
    EXPECT_TRUE(w.at(0, 3, v).is_zero());
    EXPECT_TRUE(w.at(0, v, 3).is_zero());
    EXPECT_TRUE(w.at(0, v, 4).is_zero());  // nothing enters 4
  }
  EXPECT_FALSE(w.at(0, 1, 1).fits_int64());  // 2^70 and more around the loop
}

TEST(Walks, EmptyGraphGivesAnEmptyTable) {
  const Graph g = graph_from_edges(0, {});
  for (WalkMode mode : {WalkMode::exact, WalkMode::int64, WalkMode::float64}) {
    const WalkCounts w = count_walks(g, query(5, mode, WalkMethod::automatic));
    EXPECT_EQ(w.rows(), 0);
    EXPECT_EQ(w.cols(), 0);
  }
  EXPECT_FALSE(g.find("0"));
  try {
    g.vertex("A");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::input);
    EXPECT_NE(std::string(e.what()).find("'A'"), std::string::npos) << e.what();
  }
}

// ---- int64 and float modes ------------------------------------------------------------------

TEST(Walks, Int64ModeRefusesAtTheFirstOverflowingLength) {
  auto a = random_adjacency(8, 0.7, 1, 4, 99);
  const auto ref = reference_powers(a, 60);
  const mpz_class limit("9223372036854775807");
  int first = 0;
  for (int t = 1; t <= 60 && !first; ++t)
    for (const auto& row : ref[t - 1])
      for (const auto& x : row)
        if (x > limit) first = t;
  ASSERT_GT(first, 2);
  const Graph g = graph_of(a);
  // Up to the last length that fits, int64 agrees exactly.
  expect_matches(count_walks(g, query(first - 1, WalkMode::int64, WalkMethod::automatic, true)), ref, "int64");
  try {
    count_walks(g, query(60, WalkMode::int64, WalkMethod::automatic));
    FAIL() << "int64 mode wrapped instead of refusing";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::numeric);
    EXPECT_NE(std::string(e.what()).find("length " + std::to_string(first) + " "), std::string::npos)
        << e.what();
  }
}

TEST(Walks, FloatModeIsCloseAndWarnsPast2To53) {
  auto a = random_adjacency(10, 0.5, 0, 3, 5);
  const auto ref = reference_powers(a, 40);
  const Graph g = graph_of(a);
  for (WalkMethod method : {WalkMethod::dense, WalkMethod::sparse}) {
    const WalkCounts small = count_walks(g, query(3, WalkMode::float64, method));
    EXPECT_FALSE(small.rounded);
    expect_matches(small, ref, "float, small");
    const WalkCounts big = count_walks(g, query(40, WalkMode::float64, method));
    EXPECT_TRUE(big.rounded);
    for (std::int64_t r = 0; r < 10; ++r)
      for (std::int64_t c = 0; c < 10; ++c) {
        const double want = ref[39][r][c].get_d();
        EXPECT_NEAR(big.approx(0, r, c), want, 1e-12 * std::abs(want) + 0.5);
      }
  }
}

// ---- the modular machinery ------------------------------------------------------------------

TEST(Modular, PrimesCoverTheBoundAndNoFewerWould) {
  for (const char* text : {"0", "1", "2097000", "18446744073709551616", "123456789012345678901234567890123456789"}) {
    const BigInt bound = BigInt::from_string(text);
    const int count = walks_detail::primes_for_bound(bound);
    mpz_class product = 1, fewer = 1;
    const auto primes = walks_detail::crt_primes(count);
    for (int i = 0; i < count; ++i) {
      product *= primes[i];
      if (i + 1 < count) fewer *= primes[i];
    }
    const mpz_class need = 2 * mpz_class(text) + 1;
    EXPECT_GT(product, need) << text;
    if (count > 1) {
      EXPECT_LE(fewer, need) << text;
    }
  }
  const auto primes = walks_detail::crt_primes(50);
  for (std::size_t i = 0; i < primes.size(); ++i) {
    EXPECT_LT(primes[i], walks_detail::kPrimeLimit);
    EXPECT_TRUE(mpz_probab_prime_p(mpz_class(primes[i]).get_mpz_t(), 30) > 0) << primes[i];
    if (i) {
      EXPECT_LT(primes[i], primes[i - 1]);
    }
  }
}

TEST(ModularInt8, PrimesAreTheOddPrimesBelow256AndCoverTheirBound) {
  const auto& primes = walks_detail::int8_primes();
  ASSERT_EQ(primes.size(), 53u);  // the primes below 256, but 2
  mpz_class all = 1;
  for (std::size_t i = 0; i < primes.size(); ++i) {
    EXPECT_TRUE(mpz_probab_prime_p(mpz_class(primes[i]).get_mpz_t(), 30) > 0) << primes[i];
    EXPECT_TRUE(primes[i] > 2 && primes[i] < 256);
    if (i) {
      EXPECT_LT(primes[i], primes[i - 1]);
    }
    all *= primes[i];
  }
  EXPECT_EQ(primes.front(), 251u);
  for (const char* text : {"0", "125", "126", "18446744073709551616", "123456789012345678901234567890"}) {
    const std::optional<int> count = walks_detail::int8_primes_for_bound(BigInt::from_string(text));
    ASSERT_TRUE(count) << text;
    mpz_class product = 1, fewer = 1;
    for (int i = 0; i < *count; ++i) {
      product *= primes[i];
      if (i + 1 < *count) fewer *= primes[i];
    }
    const mpz_class need = 2 * mpz_class(text) + 1;
    EXPECT_GT(product, need) << text;
    if (*count > 1) {
      EXPECT_LE(fewer, need) << text;
    }
  }
  // The largest bound all 53 cover, and one past it.
  const mpz_class largest = (all - 2) / 2;  // 2 b + 1 < P
  EXPECT_EQ(walks_detail::int8_primes_for_bound(BigInt::from_string(largest.get_str())), 53);
  EXPECT_EQ(walks_detail::int8_primes_for_bound(BigInt::from_string(mpz_class(largest + 1).get_str())),
            std::nullopt);
}

TEST(ModularInt8, KLimitIsTheLongestSumThatFitsInt32) {
  // The largest centred residue of any int8 prime is 125 (p = 251).
  const std::int64_t k = walks_detail::int8_k_limit();
  EXPECT_EQ(k, 137438);
  EXPECT_LE(k * 125 * 125, std::int64_t{2147483647});
  EXPECT_GT((k + 1) * 125 * 125, std::int64_t{2147483647});
}

TEST(Walks, CudaBackendWithoutADeviceIsADeviceError) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  const Graph g = graph_from_edges(3, {{0, 1, 1}, {1, 2, 1}, {2, 0, 1}});
  WalkQuery q;
  q.length = 4;
  q.method = WalkMethod::dense;
  q.backend = WalkBackend::cuda;
  try {
    count_walks(g, q);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::device);
    EXPECT_EQ(std::string(e.what()), no_device_message());
  }
  q.backend = WalkBackend::automatic;  // falls back to the CPU
  EXPECT_EQ(count_walks(g, q).at(0, 0, 0), BigInt(0));
  EXPECT_EQ(parse_walk_backend("cuda"), WalkBackend::cuda);
  EXPECT_EQ(parse_walk_backend("gpu"), std::nullopt);
}

namespace {

// Every entry of c is a b reduced mod p, centred, against GMP.
::testing::AssertionResult modular_product_matches(const Matrix<double>& a, const Matrix<double>& b,
                                                   const Matrix<double>& c, std::uint32_t p) {
  const long h = (p - 1) / 2;
  for (std::int64_t i = 0; i < c.rows(); ++i)
    for (std::int64_t j = 0; j < c.cols(); ++j) {
      mpz_class exact = 0;
      for (std::int64_t l = 0; l < a.cols(); ++l)
        exact += mpz_class(static_cast<long>(a(i, l))) * static_cast<long>(b(l, j));
      mpz_class r = exact % p;
      if (r > h) r -= p;
      if (r < -h) r += p;
      if (c(i, j) != r.get_d())
        return ::testing::AssertionFailure() << "(" << i << ", " << j << ") is " << c(i, j) << ", expected " << r.get_d();
    }
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(Modular, ChunkIsTheLargestExactOne) {
  for (std::uint32_t p : walks_detail::crt_primes(3)) {
    const std::int64_t k = walks_detail::modular_chunk(p);
    const mpz_class h = (p - 1) / 2, two53 = mpz_class(1) << 53;
    EXPECT_LE(k * h * h + h, two53);
    EXPECT_GT((k + 1) * h * h + h, two53);
    EXPECT_GE(k, 8192);  // a 4096-vertex power needs no chunking
  }
}

// All entries at the extreme residue, K past the chunk: a plain double accumulator would
// exceed 2^53 and round; chunking keeps it exact.
TEST(Modular, GemmStaysExactPastTheChunkAtExtremeEntries) {
  const std::uint32_t p = walks_detail::crt_primes(1)[0];
  const double h = (p - 1) / 2;
  const std::int64_t chunk = walks_detail::modular_chunk(p);
  for (std::int64_t k : {chunk - 1, chunk, chunk + 1, 3 * chunk + 7}) {
    for (double sign_b : {1.0, -1.0}) {
      Matrix<double> a(2, k), b(k, 3), c(2, 3);
      for (std::int64_t i = 0; i < k; ++i) {
        a(0, i) = h, a(1, i) = -h;
        for (int j = 0; j < 3; ++j) b(i, j) = sign_b * (j == 2 && i % 2 ? -h : h);
      }
      walks_detail::modular_gemm(a.view(), b.view(), c.view(), p);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j) {
          mpz_class exact = 0;
          for (std::int64_t l = 0; l < k; ++l) exact += mpz_class(static_cast<long>(a(i, l))) * static_cast<long>(b(l, j));
          mpz_class r = exact % p;  // sign of the dividend
          if (r > (p - 1) / 2) r -= p;
          if (r < -static_cast<long>((p - 1) / 2)) r += p;
          EXPECT_EQ(c(i, j), r.get_d()) << "k " << k << " (" << i << ", " << j << ")";
        }
    }
    // The naive sum really would have been out of the exact range.
    if (k > chunk) {
      EXPECT_GT(static_cast<double>(k) * h * h, 9007199254740992.0);
    }
  }
}

TEST(Modular, GemmMatchesAnExactReferenceOnRandomResidues) {
  const std::uint32_t p = walks_detail::crt_primes(2)[1];
  const long h = (p - 1) / 2;
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<long> residue(-h, h);
  const std::int64_t m = 37, n = 29, k = 301;
  Matrix<double> a(m, k), b(k, n), c(m, n);
  for (std::int64_t i = 0; i < m * k; ++i) a.data()[i] = static_cast<double>(residue(rng));
  for (std::int64_t i = 0; i < k * n; ++i) b.data()[i] = static_cast<double>(residue(rng));
  walks_detail::modular_gemm(a.view(), b.view(), c.view(), p, 64);  // chunks of 64 too
  EXPECT_TRUE(modular_product_matches(a, b, c, p));
  // The check fails on each planted fault of that result: a term dropped, one counted twice,
  // a residue of the wrong sign, the last row computed as the one before it.
  const auto term = [&](std::int64_t i, std::int64_t j) {  // the largest term of (i, j)
    double t = 0;
    for (std::int64_t l = 0; l < k; ++l)
      if (std::fabs(a(i, l) * b(l, j)) > std::fabs(t)) t = a(i, l) * b(l, j);
    return t;
  };
  const auto reduced = [&](double x) {  // centred mod p
    double r = std::fmod(x, double(p));
    if (r > h) r -= p;
    if (r < -h) r += p;
    return r;
  };
  std::int64_t nonzero = m * n - 1;
  while (c.data()[nonzero] == 0) --nonzero;
  const std::vector<test::PlantedFault> faults = {
      {"a term of (m-1, n-1) dropped", [&] { c(m - 1, n - 1) = reduced(c(m - 1, n - 1) - term(m - 1, n - 1)); }},
      {"a term of (0, 0) counted twice", [&] { c(0, 0) = reduced(c(0, 0) + term(0, 0)); }},
      {"the residue of the last nonzero entry with the wrong sign", [&] { c.data()[nonzero] = -c.data()[nonzero]; }},
      {"the last row computed as the one before it", [&] {
         for (std::int64_t j = 0; j < n; ++j) c(m - 1, j) = c(m - 2, j);
       }},
  };
  EXPECT_EQ(test::expect_faults_caught({c.data(), std::size_t(m * n) * sizeof(double)},
                                       [&] { return modular_product_matches(a, b, c, p); }, faults),
            int(faults.size()));
}

TEST(Modular, ChineseRemainderRebuildsSignedIntegers) {
  gmp_randclass random(gmp_randinit_default);
  random.seed(17);
  for (int bits : {1, 20, 63, 64, 65, 127, 200, 1000}) {
    const mpz_class bound = (mpz_class(1) << bits) - 1;
    const BigInt b = BigInt::from_string(bound.get_str());
    const int q = walks_detail::primes_for_bound(b);
    const int limbs = walks_detail::limbs_for_bound(b);
    const auto primes = walks_detail::crt_primes(q);
    const walks_detail::CrtRebuilder crt(primes, limbs);
    std::vector<mpz_class> values = {0, 1, -1, bound, -bound};
    for (int i = 0; i < 20; ++i) {
      mpz_class x = random.get_z_range(2 * bound + 1) - bound;
      values.push_back(x);
    }
    for (const mpz_class& x : values) {
      std::vector<std::uint32_t> residues(q);
      for (int i = 0; i < q; ++i) {
        mpz_class r = x % primes[i];
        if (r < 0) r += primes[i];
        residues[i] = static_cast<std::uint32_t>(r.get_ui());
      }
      std::vector<std::uint64_t> words(limbs);
      crt.rebuild(residues.data(), words.data());
      EXPECT_EQ(walks_detail::bigint_from_words(words.data(), limbs).to_string(), x.get_str())
          << bits << " bits";
    }
  }
}

// A count that cannot fit in memory is refused before anything is allocated, saying how much
// it needs and how much there is.
TEST(Walks, TooLargeForMemoryIsRefusedWithTheFigures) {
  const Graph g = graph_from_edges(3'000'000, {{0, 1, 1}, {1, 2, 1}});
  for (WalkMethod method : {WalkMethod::dense, WalkMethod::sparse}) {
    try {
      count_walks(g, query(3, WalkMode::exact, method));
      ADD_FAILURE() << "a table of 9e12 counts was not refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::out_of_memory);
      const std::string message = e.what();
      EXPECT_NE(message.find("counting walks on 3000000 vertices"), std::string::npos) << message;
      EXPECT_NE(message.find(" GiB of host memory, "), std::string::npos) << message;
      EXPECT_NE(message.find(" GiB available"), std::string::npos) << message;
    }
  }
}

TEST(BigIntType, ConversionsAndOrder) {
  EXPECT_EQ(BigInt(0).to_string(), "0");
  EXPECT_EQ(BigInt(-42).to_string(), "-42");
  const BigInt min64(std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(min64.to_string(), "-9223372036854775808");
  EXPECT_TRUE(min64.fits_int64());
  EXPECT_EQ(min64.to_int64(), std::numeric_limits<std::int64_t>::min());
  const BigInt big = BigInt::from_string("-340282366920938463463374607431768211457");
  EXPECT_EQ(big.to_string(), "-340282366920938463463374607431768211457");
  EXPECT_FALSE(big.fits_int64());
  EXPECT_EQ(big.bit_length(), 129u);
  EXPECT_THROW(big.to_int64(), Error);
  EXPECT_LT(big, BigInt(-1));
  EXPECT_LT(BigInt(-1), BigInt(0));
  EXPECT_LT(BigInt(5), BigInt::from_string("18446744073709551616"));
  EXPECT_EQ(BigInt::from_string("+00012"), BigInt(12));
  EXPECT_THROW(BigInt::from_string("12x"), Error);
  EXPECT_DOUBLE_EQ(BigInt::from_string("18446744073709551616").to_double(), 18446744073709551616.0);
}

// ---- readers ------------------------------------------------------------------------------

class GraphFiles : public test::ScratchDirTest {
 protected:
  std::string write(const std::string& name, const std::string& text) const {
    return write_file(name, text);
  }
  static void expect_input_error(const std::function<void()>& f, const std::string& needle) {
    test::expect_error(f, ErrorCategory::input, needle);
  }
};

TEST_F(GraphFiles, SymmetricAndGeneralMatrixMarketAgree) {
  const std::string sym = write("s.mtx",
                                "%%MatrixMarket matrix coordinate integer symmetric\n% comment\n"
                                "4 4 5\n1 1 2\n2 1 1\n3 2 3\n4 3 1\n4 1 1\n");
  const std::string gen = write("g.mtx",
                                "%%MatrixMarket matrix coordinate integer general\n4 4 9\n1 1 2\n"
                                "2 1 1\n1 2 1\n3 2 3\n2 3 3\n4 3 1\n3 4 1\n4 1 1\n1 4 1\n");
  const std::string pat = write("p.mtx",
                                "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 4\n"
                                "2 1\n3 2\n4 3\n4 1\n");
  const Graph s = read_graph(sym), g = read_graph(gen), p = read_graph(pat);
  EXPECT_EQ(s.row_start, g.row_start);
  EXPECT_EQ(s.target, g.target);
  EXPECT_EQ(s.weight, g.weight);
  EXPECT_EQ(s.edges(), 9);  // the diagonal entry once, the others mirrored
  EXPECT_FALSE(p.weighted());
  const WalkCounts ws = count_walks(s, query(45, WalkMode::exact, WalkMethod::automatic));
  const WalkCounts wg = count_walks(g, query(45, WalkMode::exact, WalkMethod::dense));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(ws.at(0, i, j), wg.at(0, i, j));
      EXPECT_EQ(ws.at(0, i, j), ws.at(0, j, i));  // symmetric matrix, symmetric powers
    }
  EXPECT_FALSE(ws.fits_int64());
}

TEST_F(GraphFiles, EdgeListsWithIndicesWeightsAndUndirectedSelfLoops) {
  // Indices: vertices 0..6; 5 and 6 appear, 4 does not (isolated).
  const Graph g = read_graph(write("i.txt", "0 1\n1 2 5\n2 0\n6 5 -2\n0 1\n"));
  EXPECT_EQ(g.n, 7);
  EXPECT_TRUE(g.weighted());
  EXPECT_EQ(g.label(4), "4");
  EXPECT_EQ(g.find("6"), 6);
  EXPECT_FALSE(g.find("06"));
  // 0 -> 1 twice: weight 2.
  EXPECT_EQ(g.weight_at(g.row_start[0]), 2);
  GraphReadOptions undirected;
  undirected.undirected = true;
  const Graph u = read_graph(write("u.txt", "a a\na b\n"), undirected);
  EXPECT_EQ(u.edges(), 3);  // loop once, a-b both ways
  EXPECT_EQ(u.label(0), "a");
  WalkQuery q = query(2, WalkMode::exact, WalkMethod::sparse);
  q.from = u.vertex("a");
  q.to = u.vertex("a");
  EXPECT_EQ(count_walks(u, q).at(0, 0, 0), BigInt(2));  // a-a-a, a-b-a
}

TEST_F(GraphFiles, MalformedInputsNameTheFileAndLine) {
  expect_input_error([&] { read_graph(write("a.txt", "a b\nc\n")); }, "line 2");
  expect_input_error([&] { read_graph(write("b.txt", "a b\na b c d\n")); }, "line 2");
  expect_input_error([&] { read_graph(write("c.txt", "1 2\n2 3 x\n")); }, "not an integer");
  expect_input_error([&] { read_graph(write("d.txt", "1 2 99999999999999999999\n")); }, "64-bit");
  expect_input_error([&] { read_graph(write("e.csv", "0,1\n1,0.5\n")); }, "not an integer");
  expect_input_error([&] { read_graph(write("f.csv", "0,1,1\n1,0,1\n")); }, "square");
  expect_input_error([&] { read_graph(write("g.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1.5\n")); },
                     "not an integer");
  expect_input_error([&] { read_graph(dir_ + "/missing.txt"); }, "missing.txt");
  const Graph g = read_graph(write("h.txt", "x y\n"));
  expect_input_error([&] { g.vertex("z"); }, "'z'");
  // Parallel edges whose weights overflow: the labels in the message are quoted, so a
  // control character in one stays escaped and the message one printable line (found by
  // fuzz_pipes).
  try {
    read_graph(write("i.txt", "a\x03" "b c 9223372036854775807\na\x03" "b c 1\n"));
    ADD_FAILURE() << "no error for weights past 64 bits";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("past 64 bits"), std::string::npos) << what;
    EXPECT_EQ(what.find('\x03'), std::string::npos) << what;
    EXPECT_NE(what.find("'a\\x03b' -> 'c'"), std::string::npos) << what;
  }
}

TEST_F(GraphFiles, DenseAdjacencyWithLabelsAndEmptyFiles) {
  GraphReadOptions o;
  o.labels = {"p", "q", "r"};
  const Graph g = read_graph(write("m.csv", "0 1 0\n0 0 1\n1 0 0\n"), o);
  EXPECT_EQ(g.vertex("q"), 1);
  WalkQuery q = query(3, WalkMode::exact, WalkMethod::automatic);
  q.from = g.vertex("p");
  q.to = g.vertex("p");
  EXPECT_EQ(count_walks(g, q).at(0, 0, 0), BigInt(1));
  o.labels = {"p", "q"};
  EXPECT_THROW(read_graph(write("m2.csv", "0 1 0\n0 0 1\n1 0 0\n"), o), Error);
  // A file with no graph in it is an input error naming the file (issue 39), not 0 vertices.
  const std::string empty = write("empty.txt", "# nothing here\n\n");
  test::expect_input_error([&] { read_graph(empty); }, empty, "no edges");
}

// ---- the engines as a registry -------------------------------------------------------------------

// The engines are the walks operation's registry; the answer names the one that ran, which
// the cost model chooses on the CPU unless the method names one (int64 mode: sparse always).
TEST(Walks, EnginesAreARegistryAndTheAnswerNamesTheEngineThatRan) {
  const auto& r = walks_registry();
  EXPECT_EQ(r.operation(), "walks");
  ASSERT_NE(r.find("cpu_sparse"), nullptr);
  ASSERT_NE(r.find("cpu_dense"), nullptr);
  EXPECT_EQ(r.find("cuda_dense_int8") != nullptr, cuda_compiled());
  EXPECT_EQ(r.find("cpu_sparse")->method, WalkMethod::sparse);
  EXPECT_EQ(r.find("cpu_dense")->method, WalkMethod::dense);

  const Graph g = graph_of(kSeedTables[0], kSeedLabels);  // 10 vertices, 34 stored edges
  WalkQuery one = query(4, WalkMode::exact, WalkMethod::automatic);
  one.from = 2;  // a single source: k (nnz + n) sparse multiply-adds, far cheaper
  one.backend = WalkBackend::cpu;
  EXPECT_EQ(count_walks(g, one).kernel, "cpu_sparse");
  // A whole table at length 30: 7 dense products of 10^3 against 30 x 44 x 10 sparse steps.
  WalkQuery whole = query(30, WalkMode::exact, WalkMethod::automatic);
  whole.backend = WalkBackend::cpu;
  const WalkCounts dense = count_walks(g, whole);
  EXPECT_EQ(dense.kernel, "cpu_dense");
  whole.method = WalkMethod::sparse;
  const WalkCounts sparse = count_walks(g, whole);
  EXPECT_EQ(sparse.kernel, "cpu_sparse");
  for (std::int64_t i = 0; i < g.n; ++i)
    for (std::int64_t j = 0; j < g.n; ++j) ASSERT_EQ(dense.at(0, i, j), sparse.at(0, i, j)) << i << " " << j;
  whole.mode = WalkMode::int64;
  whole.length = 4;
  whole.method = WalkMethod::dense;
  EXPECT_EQ(count_walks(g, whole).kernel, "cpu_sparse");

  // The auto rule says it is the cost model's, with both engines' costs.
  WalkCounts described;
  described.lengths = {30};
  described.sources = described.targets = std::vector<std::int64_t>(std::size_t(g.n));
  whole.mode = WalkMode::exact;
  whole.length = 30;
  whole.method = WalkMethod::automatic;
  const WalksProblem problem{&g, &whole, &described, DType::i64};
  const AutoChoice choice = r.explain_auto(Backend::cpu, 0, problem);
  ASSERT_NE(choice.chosen, nullptr);
  EXPECT_EQ(choice.chosen->name, "cpu_dense");
  EXPECT_NE(choice.rule.find("cost model"), std::string::npos) << choice.rule;
  ASSERT_FALSE(choice.candidates.empty());
  EXPECT_NE(choice.candidates[0].reason.find("sparse"), std::string::npos) << choice.candidates[0].reason;
}
