// The Chinese remainder rebuild on the device (gemmkit/exact.hpp) against GMP and against the
// CPU context's rebuild, which runs the same arithmetic: every word equal, for every work
// width (1 to 53 moduli), the edges of (-P/2, P/2), gathers, strided planes, on a stream.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "crt_test_support.hpp"
#include "cuda/device_buffer.hpp"
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

TEST(GpuCrt, EveryPrefixOfTheInt8PrimesAgainstGmp) {
  SKIP_WITHOUT_DEVICE();
  Context gpu(Backend::cuda);
  const std::vector<std::uint32_t> primes = test::odd_primes_below_256();
  for (std::size_t q = 1; q <= primes.size(); q += (q < 8 ? 1 : 5)) {
    Table t{3, 97, 101, {primes.begin(), primes.begin() + q}, {}};
    const std::vector<mpz_class> values = test::crt_test_values(t.moduli, std::size_t(t.rows * t.ld), unsigned(q));
    t.planes = test::centred_residues(values, t.moduli, std::size_t(t.plane_stride()));
    const int limbs = crt_limbs(t.moduli) + 1;  // one word of sign extension too
    const std::vector<std::uint64_t> out = rebuild(gpu, t, limbs);
    for (std::int64_t r = 0; r < t.rows; ++r)
      for (std::int64_t c = 0; c < t.cols; ++c) {
        const auto want = test::twos_complement_words(values[std::size_t(r * t.ld + c)], limbs);
        for (int l = 0; l < limbs; ++l)
          ASSERT_EQ(out[std::size_t((r * t.cols + c) * limbs + l)], want[std::size_t(l)])
              << q << " moduli, entry (" << r << ", " << c << ") word " << l;
      }
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
