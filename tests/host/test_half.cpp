// The f16 and bf16 conversions and the host storage types Half and BFloat16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "gemmkit/dtype.hpp"
#include "gemmkit/half.hpp"

using namespace gemmkit;

TEST(Half, EveryBitPatternRoundTripsThroughFloat) {
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const auto bits = std::uint16_t(i);
    const float h = half_bits_to_float(bits), b = bfloat16_bits_to_float(bits);
    if (std::isnan(h)) EXPECT_TRUE(std::isnan(half_bits_to_float(to_half_bits(h)))) << i;
    else EXPECT_EQ(to_half_bits(h), bits) << i;
    if (std::isnan(b)) EXPECT_TRUE(std::isnan(bfloat16_bits_to_float(to_bfloat16_bits(b)))) << i;
    else EXPECT_EQ(to_bfloat16_bits(b), bits) << i;
  }
}

TEST(Half, RoundsToNearestTiesToEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10 in f16: ties go to the even 1.
  EXPECT_EQ(half_bits_to_float(to_half_bits(1.0f + 0x1p-11f)), 1.0f);
  EXPECT_EQ(half_bits_to_float(to_half_bits(1.0f + 3 * 0x1p-11f)), 1.0f + 0x1p-9f);
  EXPECT_EQ(half_bits_to_float(to_half_bits(1.0f + 0x1p-11f + 0x1p-20f)), 1.0f + 0x1p-10f);
  // bf16 keeps 7 mantissa bits.
  EXPECT_EQ(bfloat16_bits_to_float(to_bfloat16_bits(1.0f + 0x1p-8f)), 1.0f);
  EXPECT_EQ(bfloat16_bits_to_float(to_bfloat16_bits(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);
  // A mantissa carry moves to the next binade.
  EXPECT_EQ(half_bits_to_float(to_half_bits(2.0f - 0x1p-12f)), 2.0f);
}

TEST(Half, OverflowSubnormalsAndSigns) {
  EXPECT_EQ(half_bits_to_float(to_half_bits(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(half_bits_to_float(to_half_bits(65520.0f))));
  EXPECT_TRUE(std::isinf(half_bits_to_float(to_half_bits(-1e10f))));
  EXPECT_LT(half_bits_to_float(to_half_bits(-1e10f)), 0.0f);
  EXPECT_EQ(half_bits_to_float(to_half_bits(0x1p-24f)), 0x1p-24f);   // smallest subnormal
  EXPECT_EQ(half_bits_to_float(to_half_bits(0x1p-26f)), 0.0f);       // below half of it
  EXPECT_EQ(to_half_bits(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(half_bits_to_float(to_half_bits(std::nanf("")))));
  EXPECT_TRUE(std::isinf(bfloat16_bits_to_float(to_bfloat16_bits(3.4e38f))));
}

TEST(Half, FromDoubleRoundsOnce) {
  // 1 + 2^-11 + 2^-40 lies just above the f16 tie between 1 and 1 + 2^-10: it rounds up.
  // Rounding to f32 first would land on the tie and round to even, down to 1.
  const double just_above_tie = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(static_cast<float>(Half(just_above_tie)), 1.0f + 0x1p-10f);
  EXPECT_EQ(static_cast<float>(Half(static_cast<float>(just_above_tie))), 1.0f);  // the trap
  EXPECT_EQ(static_cast<float>(Half(1.0 + 0x1p-11)), 1.0f);  // an exact tie: to even
  const double bf_above_tie = 1.0 + 0x1p-8 + 0x1p-40;
  EXPECT_EQ(static_cast<float>(BFloat16(bf_above_tie)), 1.0f + 0x1p-7f);
  EXPECT_EQ(static_cast<float>(Half(-just_above_tie)), -(1.0f + 0x1p-10f));
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(1e300))));
  EXPECT_TRUE(std::isinf(static_cast<float>(BFloat16(1e300))));
  EXPECT_EQ(Half(-1e-300).bits, 0x8000);  // underflows to a signed zero
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(std::nan("")))));
}

TEST(Half, StorageTypesHoldTheirBits) {
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const auto bits = std::uint16_t(i);
    ASSERT_EQ(Half::from_bits(bits).bits, bits);
    ASSERT_EQ(BFloat16::from_bits(bits).bits, bits);
    const float h = half_bits_to_float(bits), b = bfloat16_bits_to_float(bits);
    if (std::isnan(h)) ASSERT_TRUE(std::isnan(static_cast<float>(Half::from_bits(bits))));
    else ASSERT_EQ(static_cast<float>(Half::from_bits(bits)), h) << i;
    if (std::isnan(b)) ASSERT_TRUE(std::isnan(static_cast<double>(BFloat16::from_bits(bits))));
    else ASSERT_EQ(static_cast<double>(BFloat16::from_bits(bits)), double(b)) << i;
  }
  EXPECT_EQ(Half().bits, 0);  // zero-initialised matrices hold +0
  static_assert(dtype_of<Half> == DType::f16 && dtype_of<BFloat16> == DType::bf16);
  static_assert(is_float_storage_v<Half> && !is_float_storage_v<std::int32_t>);
}
