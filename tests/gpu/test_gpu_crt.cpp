// The Chinese remainder rebuild on the device (gemmkit/exact.hpp) against GMP and against the
// CPU context's rebuild, which runs the same arithmetic: every word equal, for every work
// width (1 to 53 moduli), the edges of (-P/2, P/2), gathers, strided planes, on a stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <vector>

#include "crt_test_support.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "fault_injection.hpp"
#include "gemmkit/exact.hpp"
#include "gpu/gpu_test_support.hpp"

using namespace gemmkit;

namespace {

struct Table {
  std::int64_t rows, cols, ld;
  std::vector<std::uint32_t> moduli;
  std::vector<std::int8_t> planes;  // plane stride rows * ld + 5
  std::int64_t plane_stride() const { return rows * ld + 5; }
};

// The table rebuilt by `ctx` (device pointers for a CUDA context), entry-major words.
std::vector<std::uint64_t> rebuild(Context& ctx, const Table& t, int limbs,
                                   const std::vector<std::int64_t>& rows = {},
                                   const std::vector<std::int64_t>& cols = {}) {
  const std::int64_t out_rows = rows.empty() ? t.rows : std::int64_t(rows.size());
  const std::int64_t out_cols = cols.empty() ? t.cols : std::int64_t(cols.size());
  const std::size_t words = std::size_t(out_rows * out_cols * limbs);
  std::vector<std::uint64_t> out(words, 0);
  CrtProblem p;
  p.rows = out_rows;
  p.cols = out_cols;
  p.moduli = t.moduli;
  p.ld = t.ld;
  p.plane_stride = t.plane_stride();
  p.ld_out = out_cols;
  p.limbs = limbs;
  if (ctx.backend() == Backend::cpu) {
    p.residues = t.planes.data();
    p.row_index = rows.empty() ? nullptr : rows.data();
    p.col_index = cols.empty() ? nullptr : cols.data();
    p.out = out.data();
    crt_rebuild(ctx, p);
    return out;
  }
  cuda::DeviceBuffer<std::int8_t> planes(t.planes.size());
  planes.copy_from_host(t.planes.data(), t.planes.size());
  cuda::DeviceBuffer<std::int64_t> row_index(std::max<std::size_t>(rows.size(), 1)),
      col_index(std::max<std::size_t>(cols.size(), 1));
  if (!rows.empty()) row_index.copy_from_host(rows.data(), rows.size());
  if (!cols.empty()) col_index.copy_from_host(cols.data(), cols.size());
  cuda::DeviceBuffer<std::uint64_t> device_out(words);
  cudaStream_t stream = nullptr;
  EXPECT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  p.residues = planes.data();
  p.row_index = rows.empty() ? nullptr : row_index.data();
  p.col_index = cols.empty() ? nullptr : col_index.data();
  p.out = device_out.data();
  crt_rebuild(ctx, p, stream);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  device_out.copy_to_host(out.data(), words);
  return out;
}

// Every word of a rebuilt table (entry-major, t.rows x t.cols) equals GMP's words of the
// values (row-major in planes of width t.ld).
::testing::AssertionResult words_match(const Table& t, const std::vector<mpz_class>& values,
                                       const std::vector<std::uint64_t>& out, int limbs) {
  for (std::int64_t r = 0; r < t.rows; ++r)
    for (std::int64_t c = 0; c < t.cols; ++c) {
      const auto want = test::twos_complement_words(values[std::size_t(r * t.ld + c)], limbs);
      for (int l = 0; l < limbs; ++l)
        if (out[std::size_t((r * t.cols + c) * limbs + l)] != want[std::size_t(l)])
          return ::testing::AssertionFailure() << "entry (" << r << ", " << c << ") word " << l;
    }
  return ::testing::AssertionSuccess();
}

TEST(GpuCrt, EveryPrefixOfTheInt8PrimesAgainstGmp) {
  SKIP_WITHOUT_DEVICE();
  Context gpu(Backend::cuda);
  const std::vector<std::uint32_t> primes = test::odd_primes_below_256();
  for (std::size_t q = 1; q <= primes.size(); q += (q < 8 ? 1 : 5)) {
    Table t{3, 97, 101, {primes.begin(), primes.begin() + q}, {}};
    const std::vector<mpz_class> values = test::crt_test_values(t.moduli, std::size_t(t.rows * t.ld), unsigned(q));
    t.planes = test::centred_residues(values, t.moduli, std::size_t(t.plane_stride()));
    const int limbs = crt_limbs(t.moduli) + 1;  // one word of sign extension too
    ASSERT_TRUE(words_match(t, values, rebuild(gpu, t, limbs), limbs)) << q << " moduli";
  }
}

// The word check above fails on each planted fault: the device rebuilding planes with one
// residue of the wrong sign, one dropped (zero), one off by one; its real words one less,
// one more, negated, the last row rebuilt as the row before it.
TEST(GpuCrt, CatchesPlantedFaults) {
  SKIP_WITHOUT_DEVICE();
  Context gpu(Backend::cuda);
  const std::vector<std::uint32_t> primes = test::odd_primes_below_256();
  for (std::size_t q : {std::size_t(1), std::size_t(7), std::size_t(20), std::size_t(53)}) {
    SCOPED_TRACE(std::to_string(q) + " moduli");
    Table t{3, 97, 101, {primes.begin(), primes.begin() + q}, {}};
    const std::vector<mpz_class> values = test::crt_test_values(t.moduli, std::size_t(t.rows * t.ld), unsigned(q));
    t.planes = test::centred_residues(values, t.moduli, std::size_t(t.plane_stride()));
    const int limbs = crt_limbs(t.moduli);
    std::vector<std::uint64_t> out = rebuild(gpu, t, limbs);
    // Entry (0, 1) is the value 1: every residue 1, so each change of one shows.
    const auto misread = [&](std::function<void(std::vector<std::int8_t>&)> change) {
      return [&, change] {
        Table bad = t;
        change(bad.planes);
        const std::vector<std::uint64_t> misrebuilt = rebuild(gpu, bad, limbs);
        std::copy(misrebuilt.begin(), misrebuilt.end(), out.begin());  // in place: the harness restores it
      };
    };
    const std::size_t last_plane = (q - 1) * std::size_t(t.plane_stride()), plane = std::size_t(t.plane_stride());
    std::vector<test::PlantedFault> faults = {
        {"the residue of entry 1 in the last plane with the wrong sign", misread([&](auto& v) { v[last_plane + 1] *= -1; })},
        {"the residue of entry 1 in the first plane dropped", misread([&](auto& v) { v[1] = 0; })},
    };
    if (q > 1) faults.push_back({"the residue of entry 1 in plane 1 off by one", misread([&](auto& v) { v[plane + 1] += 1; })});
    for (test::PlantedFault& f : test::limb_table_faults(out.data(), t.rows, t.cols, t.cols, limbs))
      faults.push_back(std::move(f));
    EXPECT_EQ(test::expect_faults_caught(test::output_bytes(out), [&] { return words_match(t, values, out, limbs); },
                                         faults),
              int(faults.size()));
  }
}

TEST(GpuCrt, LargeTableAndGathersMatchTheCpuRebuild) {
  SKIP_WITHOUT_DEVICE();
  Context gpu(Backend::cuda), cpu(Backend::cpu);
  const std::vector<std::uint32_t> primes = test::odd_primes_below_256();
  // 50 moduli (a 4096-vertex walk table's), random residues: each stands for some integer.
  Table t{700, 1000, 1024, {primes.begin(), primes.begin() + 50}, {}};
  t.planes.resize(std::size_t(t.plane_stride()) * t.moduli.size());
  std::mt19937 rng(5);
  for (std::size_t q = 0; q < t.moduli.size(); ++q) {
    const int h = int(t.moduli[q] - 1) / 2;
    std::uniform_int_distribution<int> residue(-h, h);
    for (std::int64_t i = 0; i < t.plane_stride(); ++i) t.planes[q * t.plane_stride() + i] = std::int8_t(residue(rng));
  }
  const int limbs = crt_limbs(t.moduli);
  EXPECT_EQ(rebuild(gpu, t, limbs), rebuild(cpu, t, limbs));
  const std::vector<std::int64_t> rows = {699, 0, 350}, cols = {999, 3, 0, 512, 4};
  EXPECT_EQ(rebuild(gpu, t, limbs, rows, cols), rebuild(cpu, t, limbs, rows, cols));
  EXPECT_EQ(rebuild(gpu, t, limbs, {}, {7}), rebuild(cpu, t, limbs, {}, {7}));
}

}  // namespace
