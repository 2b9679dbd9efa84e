// Every reduction kernel (the ladder and CUB) against the CPU reference on seeded random
// data at many lengths; sums within the stated bound; NaN/Inf; misaligned starts; and the
// same bits run after run.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "runtime/cuda/device_buffer.hpp"
#include "gemmkit/reduce.hpp"
#include "gpu/gpu_test_support.hpp"
#include "reduce_test_support.hpp"

namespace gemmkit {
namespace {

// Mixed signs over a wide range of magnitudes (2^-20 .. 2^20): sums cancel a lot, and the
// relative error of the result can be large while the bound (on sum |x|) must still hold.
template <class T>
std::vector<T> adversarial(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::vector<T> x(n);
  for (auto& v : x) v = static_cast<T>(std::ldexp(mantissa(gen), exponent(gen)));
  return x;
}

template <class T>
cuda::DeviceBuffer<T> upload(const std::vector<T>& x) {
  cuda::DeviceBuffer<T> d(std::max<std::size_t>(x.size(), 1));
  if (!x.empty()) d.copy_from_host(x.data(), x.size());
  return d;
}

// The CUDA kernels of the registry (the ladder and CUB).
std::vector<const ReduceKernel*> cuda_kernels() {
  std::vector<const ReduceKernel*> out;
  for (const auto& k : reduce_registry().entries())
    if (k.backend == Backend::cuda) out.push_back(&k);
  return out;
}

// One reduction of device memory through the device API, on the default stream; the result
// read back.
template <class T>
T reduce_device(const T* x, std::size_t n, ReduceOp op, const std::string& kernel) {
  Context ctx(Backend::cuda);
  cuda::DeviceBuffer<T> result(1);
  reduce(ctx, x, n, op, result.data(), nullptr, kernel);
  T value;
  result.copy_to_host(&value, 1);
  return value;
}

template <class T>
void check_all_kernels(const std::vector<T>& x, std::size_t offset, const std::string& what) {
  const std::size_t n = x.size() - offset;
  const auto device = upload(x);
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::max, ReduceOp::norm2})
    for (const ReduceKernel* k : cuda_kernels())
      ASSERT_TRUE(test::reduce_result_matches(x.data() + offset, n, op,
                                              reduce_device(device.data() + offset, n, op, k->name)))
          << what << " " << k->name;
}

const std::size_t kSizes[] = {0,     1,     2,     3,     4,      5,      7,      31,      32,
                              33,    255,   256,   257,   1023,   1024,   1025,   4097,    65535,
                              65536, 65537, 131073, 270337, 1048581, 4194307};

TEST(GpuReduce, EveryKernelEveryOpF32) {
  SKIP_WITHOUT_DEVICE();
  for (std::size_t n : kSizes) check_all_kernels(adversarial<float>(n, 100 + n), 0, "f32");
}

TEST(GpuReduce, EveryKernelEveryOpF64) {
  SKIP_WITHOUT_DEVICE();
  for (std::size_t n : kSizes) check_all_kernels(adversarial<double>(n, 200 + n), 0, "f64");
}

// Integer-valued data whose every partial sum is exact: every kernel's sum must be exact, so
// one value skipped or counted twice fails.
TEST(GpuReduce, IntegerSumsAreExactEveryKernel) {
  SKIP_WITHOUT_DEVICE();
  for (std::size_t n : kSizes) {
    check_all_kernels(test::integer_values<float>(n, 600 + n), 0, "f32 integers");
    check_all_kernels(test::integer_values<double>(n, 700 + n), 0, "f64 integers");
  }
}

// The check above fails on each planted fault of every kernel's real result.
TEST(GpuReduce, CatchesPlantedFaults) {
  SKIP_WITHOUT_DEVICE();
  for (std::size_t n : {std::size_t(33), std::size_t(65537), std::size_t(1048581)}) {
    const std::vector<float> x = test::integer_values<float>(n, 800 + n);
    const auto device = upload(x);
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::max, ReduceOp::norm2})
      for (const ReduceKernel* k : cuda_kernels()) {
        SCOPED_TRACE(k->name + " n=" + std::to_string(n) + " " + std::string(reduce_op_name(op)));
        float got = reduce_device(device.data(), n, op, k->name);
        const auto faults = test::reduce_faults(x.data(), n, op, got);
        EXPECT_EQ(test::expect_faults_caught({&got, sizeof got},
                                             [&] { return test::reduce_result_matches(x.data(), n, op, got); },
                                             faults),
                  int(faults.size()));
      }
  }
}

// Starts that are not 16-byte aligned: rung 6 reads a head of single values first.
TEST(GpuReduce, MisalignedStarts) {
  SKIP_WITHOUT_DEVICE();
  for (std::size_t offset : {1, 2, 3}) {
    check_all_kernels(adversarial<float>(1000003 + offset, 300 + offset), offset, "f32 offset");
    check_all_kernels(adversarial<double>(100003 + offset, 400 + offset), offset, "f64 offset");
    check_all_kernels(adversarial<float>(5 + offset, 500 + offset), offset, "f32 short offset");
  }
}

// A large f32 sum, 2^26 + 3 values, every kernel. First integers 1..8 of random signs: every
// partial sum a reduction forms (blocks, strides, trees of them) is a sum of random signs, of
// the order of 5 sqrt(its length), 4e4 for the whole, far below 2^24: each is exact in f32, and
// so is the result. It must equal the exact sum, and a kernel that drops or duplicates one
// value (or reads one past the end) is off by at least 1; the stated bound, (n - 1) u sum |x|
// = 1.2e9 here, would let that pass. Then adversarial data against the bound.
TEST(GpuReduce, LargeF32SumWithinTheStatedBound) {
  SKIP_WITHOUT_DEVICE();
  const std::size_t n = (std::size_t(1) << 26) + 3;
  std::vector<float> ints(n);
  std::mt19937_64 gen(76);
  std::uniform_int_distribution<int> magnitude(1, 8);
  for (auto& v : ints) v = static_cast<float>((gen() >> 63) ? magnitude(gen) : -magnitude(gen));
  long double exact = 0, largest_prefix = 0;
  for (float v : ints) {
    exact += v;  // exact: integers far below 2^64
    largest_prefix = std::max(largest_prefix, std::fabs(exact));
  }
  ASSERT_LT(largest_prefix, 0x1p24L);  // the sequential order's partial sums are exact in f32
  ASSERT_EQ(static_cast<long double>(static_cast<float>(exact)), exact);
  const auto int_device = upload(ints);
  for (const ReduceKernel* k : cuda_kernels())
    EXPECT_EQ(static_cast<long double>(reduce_device(int_device.data(), n, ReduceOp::sum, k->name)), exact)
        << k->name << ": integers whose every partial sum f32 holds must sum exactly";

  const auto x = adversarial<float>(n, 77);
  const auto device = upload(x);
  const long double ref = reduce_reference_wide(x.data(), n, ReduceOp::sum);
  double sum_abs = 0;
  for (float v : x) sum_abs += std::fabs(v);
  const double bound = reduce_sum_error_bound(n, sum_abs, DType::f32);
  for (const ReduceKernel* k : cuda_kernels()) {
    const float got = reduce_device(device.data(), n, ReduceOp::sum, k->name);
    const double err = std::fabs(double(got) - double(ref));
    EXPECT_LE(err, bound) << k->name;
    std::printf("[ reduce ] n=%zu %-20s |error| = %.3g, bound %.3g, sum|x| u = %.3g\n", n, k->name.c_str(),
                err, bound, sum_abs * std::ldexp(1.0, -24));
  }
}

// Any NaN gives NaN (min, max, sum, norm2) wherever it is: first, in the head or tail of a
// vectorised kernel, in the middle; +-Inf are ordinary values for min and max.
TEST(GpuReduce, NaNAndInfinities) {
  SKIP_WITHOUT_DEVICE();
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (std::size_t n : {1, 2, 5, 33, 1025, 65537, 1048581}) {
    for (std::size_t at : {std::size_t(0), n / 2, n - 1}) {
      auto x = adversarial<float>(n, n + at);
      x[at] = nan;
      const auto device = upload(x);
      for (const ReduceKernel* k : cuda_kernels()) {
        for (ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::max, ReduceOp::norm2}) {
          if (k->name == "cub" && (op == ReduceOp::min || op == ReduceOp::max)) continue;  // CUB: unspecified
          EXPECT_TRUE(std::isnan(reduce_device(device.data(), n, op, k->name)))
              << k->name << " " << reduce_op_name(op) << " n=" << n << " NaN at " << at;
        }
      }
    }
    auto y = adversarial<float>(n, 9 * n);
    y[n / 3] = -inf;
    y[n - 1] = inf;
    const auto device = upload(y);
    for (const ReduceKernel* k : cuda_kernels()) {
      if (n > 1) {
        EXPECT_EQ(reduce_device(device.data(), n, ReduceOp::min, k->name), -inf) << k->name;
        EXPECT_TRUE(std::isnan(reduce_device(device.data(), n, ReduceOp::sum, k->name))) << k->name;
      }
      EXPECT_EQ(reduce_device(device.data(), n, ReduceOp::max, k->name), inf) << k->name;
      EXPECT_EQ(reduce_device(device.data(), n, ReduceOp::norm2, k->name), inf) << k->name;
    }
  }
}

// f32 norm2 accumulates in double: squares far beyond f32's range still give the norm.
TEST(GpuReduce, Norm2OfLargeF32) {
  SKIP_WITHOUT_DEVICE();
  std::vector<float> x(100001, 1e30f);
  const auto device = upload(x);
  const float expected = static_cast<float>(1e30 * std::sqrt(100001.0));
  for (const ReduceKernel* k : cuda_kernels())
    EXPECT_NEAR(reduce_device(device.data(), x.size(), ReduceOp::norm2, k->name), expected, expected * 1e-6)
        << k->name;
}

// The same input gives the same bits, run after run, for every kernel of ours.
TEST(GpuReduce, BitIdenticalRunToRun) {
  SKIP_WITHOUT_DEVICE();
  const std::size_t n = (std::size_t(1) << 24) + 5;
  const auto x = adversarial<float>(n, 4242);
  const auto device = upload(x);
  for (const ReduceKernel* k : cuda_kernels()) {
    if (k->name == "cub") continue;
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::norm2}) {
      const float first = reduce_device(device.data(), n, op, k->name);
      for (int run = 0; run < 3; ++run) {
        const float again = reduce_device(device.data(), n, op, k->name);
        EXPECT_EQ(std::memcmp(&first, &again, sizeof first), 0) << k->name << " run " << run;
      }
    }
  }
}

TEST(GpuReduce, HostEntryAndDispatch) {
  SKIP_WITHOUT_DEVICE();
  const auto x = adversarial<double>(12345, 5);
  const ReduceChoice choice = choose_reduce(std::nullopt, "auto");
  EXPECT_EQ(choice.backend, Backend::cuda);
  EXPECT_EQ(choice.kernel, kReduceAutoKernel);
  EXPECT_EQ(reduce(x.data(), x.size(), ReduceOp::max, choice), reduce_cpu(x.data(), x.size(), ReduceOp::max));
}

}  // namespace
}  // namespace gemmkit
