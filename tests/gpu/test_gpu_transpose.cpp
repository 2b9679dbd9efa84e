// Every CUDA transpose rung against the CPU reference, bit for bit: every dtype size, sides
// around the 32x32 tile and its 8-row steps, padded leading dimensions (whose padding must
// survive), empty sides, and more rows of tiles than the grid's 65535 y blocks (the blocks
// then step down the rows). The comparison is shown to catch a planted wrong element.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gemmkit/transpose.hpp"
#include "gpu/gpu_test_support.hpp"

using namespace gemmkit;

namespace {

struct Shape {
  std::int64_t rows, cols, lda_pad, ldb_pad;
};

std::vector<unsigned char> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

// A device copy of host bytes, freed at scope exit.
struct DeviceBytes {
  void* data = nullptr;
  explicit DeviceBytes(const std::vector<unsigned char>& host) {
    EXPECT_EQ(cudaMalloc(&data, host.size()), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data, host.data(), host.size(), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceBytes() { cudaFree(data); }
  std::vector<unsigned char> to_host(std::size_t n) const {
    std::vector<unsigned char> out(n);
    EXPECT_EQ(cudaMemcpy(out.data(), data, n, cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
};

// The first byte where two results differ, as a message; empty when they agree.
std::string first_difference(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want,
                             std::size_t size, std::int64_t ldb) {
  for (std::size_t at = 0; at < want.size(); ++at)
    if (got[at] != want[at]) {
      const std::int64_t element = std::int64_t(at / size);
      return "B(" + std::to_string(element / ldb) + ", " + std::to_string(element % ldb) + ") differs";
    }
  return {};
}

// `kernel` on the device and the CPU reference on the host, from the same A and the same
// initial B (padding included).
void expect_same_as_reference(const std::string& kernel, DType dtype, const Shape& s, std::uint64_t seed) {
  SCOPED_TRACE(kernel + " " + std::string(dtype_name(dtype)) + " " + std::to_string(s.rows) + "x" +
               std::to_string(s.cols) + " lda+" + std::to_string(s.lda_pad) + " ldb+" + std::to_string(s.ldb_pad));
  const std::size_t size = dtype_size(dtype);
  const std::int64_t lda = s.cols + s.lda_pad, ldb = s.rows + s.ldb_pad;
  const auto a = random_bytes(std::size_t(std::max<std::int64_t>(s.rows * lda, 1)) * size, seed);
  auto want = random_bytes(std::size_t(std::max<std::int64_t>(s.cols * ldb, 1)) * size, seed + 1);
  DeviceBytes da(a), db(want);
  Context cpu(Backend::cpu);
  transpose(cpu, TransposeProblem{dtype, s.rows, s.cols, a.data(), lda, want.data(), ldb}, nullptr, "cpu_reference");
  const TransposeKernel& ran =
      transpose(gpu_test::sweep_context(), TransposeProblem{dtype, s.rows, s.cols, da.data, lda, db.data, ldb}, nullptr,
                kernel);
  EXPECT_EQ(ran.name, kernel);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto got = db.to_host(want.size());
  EXPECT_EQ(first_difference(got, want, size, ldb), "");
}

std::vector<std::string> cuda_kernels() {
  std::vector<std::string> names;
  for (const auto& e : transpose_registry().entries())
    if (e.backend == Backend::cuda) names.push_back(e.name);
  return names;
}

}  // namespace

TEST(GpuTranspose, EveryRungMatchesTheReferenceBitForBit) {
  SKIP_WITHOUT_DEVICE();
  const std::vector<Shape> shapes = {{1, 1, 0, 0},   {1, 33, 0, 0},   {33, 1, 0, 0},  {7, 9, 3, 5},
                                     {31, 32, 0, 0}, {32, 32, 0, 0},  {33, 65, 1, 2}, {64, 96, 0, 0},
                                     {257, 129, 4, 0}, {1000, 3, 0, 0}, {3, 1000, 0, 9}, {0, 17, 0, 0},
                                     {17, 0, 0, 0}};
  std::uint64_t seed = 1;
  for (const std::string& kernel : cuda_kernels())
    for (DType dtype : {DType::i8, DType::f16, DType::f32, DType::f64})
      for (const Shape& s : shapes) expect_same_as_reference(kernel, dtype, s, ++seed);
}

TEST(GpuTranspose, MoreTileRowsThanTheGridHoldsAndAutoIsTheLastRung) {
  SKIP_WITHOUT_DEVICE();
  // 65535 * 32 rows of tiles: 2^21 + 5 rows step past both grids' y sides (8 and 32 rows a block).
  for (const std::string& kernel : cuda_kernels()) expect_same_as_reference(kernel, DType::f32, {2097157, 3, 0, 1}, 9);
  const auto& entries = transpose_registry().entries();
  const TransposeKernel* best = nullptr;
  for (const auto& e : entries)
    if (e.backend == Backend::cuda && (!best || e.auto_priority > best->auto_priority)) best = &e;
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->name, "transpose_padded_tile");
  expect_same_as_reference("transpose_padded_tile", DType::i64, {4099, 2051, 0, 0}, 10);
}

TEST(GpuTranspose, TheComparisonCatchesAPlantedWrongElement) {
  const std::vector<unsigned char> want = random_bytes(4 * 6 * 5, 3);
  std::vector<unsigned char> got = want;
  EXPECT_EQ(first_difference(got, want, 4, 5), "");
  got[4 * 13 + 2] ^= 1;  // one bit of element 13: B(2, 3)
  EXPECT_EQ(first_difference(got, want, 4, 5), "B(2, 3) differs");
}
