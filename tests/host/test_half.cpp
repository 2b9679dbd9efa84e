// The f16 and bf16 conversions the benchmark generates tensor-core operands with.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

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
