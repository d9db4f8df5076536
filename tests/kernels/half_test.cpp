// Host fp16/bf16 conversions: exact round trips, round-to-nearest-even against a slow
// search over all representable values, overflow, subnormals, NaN.
#include "kernels/half.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace pagesim::kernels {
namespace {

// All finite non-negative values of a 16-bit format, ascending, with their bit patterns.
struct Grid {
  std::vector<double> values;
  std::vector<std::uint16_t> bits;
};

Grid finite_grid(float (*to_float)(std::uint16_t), std::uint16_t max_bits) {
  Grid g;
  for (std::uint32_t b = 0; b <= max_bits; ++b) {
    g.values.push_back(to_float(static_cast<std::uint16_t>(b)));
    g.bits.push_back(static_cast<std::uint16_t>(b));
  }
  return g;
}

// Nearest representable value with ties to the even bit pattern; values beyond the largest
// finite + half an ulp become inf (0x7c00 / 0x7f80).
std::uint16_t slow_round(const Grid& g, double x, std::uint16_t inf_bits) {
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::abs(x);
  const double top = g.values.back();
  const double top_ulp = top - g.values[g.values.size() - 2];
  if (a >= top + top_ulp / 2) return sign | inf_bits;
  const auto it = std::lower_bound(g.values.begin(), g.values.end(), a);
  if (it == g.values.end()) return sign | g.bits.back();
  const auto hi = static_cast<std::size_t>(it - g.values.begin());
  if (*it == a || hi == 0) return sign | g.bits[hi];
  const double dl = a - g.values[hi - 1], dh = g.values[hi] - a;
  if (dl < dh) return sign | g.bits[hi - 1];
  if (dh < dl) return sign | g.bits[hi];
  return sign | ((g.bits[hi] & 1) == 0 ? g.bits[hi] : g.bits[hi - 1]);
}

float h2f(std::uint16_t b) { return half_bits_to_float(b); }
float b2f(std::uint16_t b) { return bf16_bits_to_float(b); }

TEST(Half, EveryHalfRoundTripsExactly) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float f = half_bits_to_float(bits);
    if ((bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) != 0) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << b;
      EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(f)))) << std::hex << b;
      continue;
    }
    ASSERT_EQ(float_to_half_bits(f), bits) << std::hex << b << " -> " << f;
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65519.99f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);  // the midpoint to "65536" rounds to inf
  EXPECT_EQ(float_to_half_bits(1e10f), 0x7c00);
  EXPECT_EQ(float_to_half_bits(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000);  // tie -> even (0)
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_half_bits(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 units: tie -> 2
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);       // tie -> even
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);   // tie -> even
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(std::nanf("")))));
  EXPECT_EQ(static_cast<float>(Half(0.5f)), 0.5f);
}

TEST(Half, MatchesNearestEvenSearchOnMidpointsAndRandomFloats) {
  const Grid g = finite_grid(h2f, 0x7bff);
  // Every midpoint between neighbours, and points just beside it.
  for (std::size_t i = 0; i + 1 < g.values.size(); ++i) {
    const auto mid = static_cast<float>((g.values[i] + g.values[i + 1]) / 2);  // exact
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      ASSERT_EQ(float_to_half_bits(f), slow_round(g, f, 0x7c00)) << f;
      ASSERT_EQ(float_to_half_bits(-f), slow_round(g, -static_cast<double>(f), 0x7c00)) << f;
    }
  }
  std::mt19937 rng(5);
  std::uniform_int_distribution<std::uint32_t> bits(0, 0x477fffffu);  // up to ~65535
  for (int i = 0; i < 200000; ++i) {
    const float f = std::bit_cast<float>(bits(rng));
    ASSERT_EQ(float_to_half_bits(f), slow_round(g, f, 0x7c00)) << f;
  }
}

TEST(Half, EveryBFloat16RoundTripsExactly) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float f = bf16_bits_to_float(bits);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(f))));
      continue;
    }
    ASSERT_EQ(float_to_bf16_bits(f), bits) << std::hex << b;
  }
}

TEST(Half, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);        // tie -> even
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);    // tie -> even
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);  // rounds to inf
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::infinity()), 0x7f80);
  const std::uint16_t nan = float_to_bf16_bits(std::bit_cast<float>(0x7f800001u));
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(nan)));  // a NaN with low payload stays NaN
  const Grid g = finite_grid(b2f, 0x7f7f);
  std::mt19937 rng(6);
  std::uniform_int_distribution<std::uint32_t> bits(0, 0x7f7fffffu);
  for (int i = 0; i < 200000; ++i) {
    const float f = std::bit_cast<float>(bits(rng));
    ASSERT_EQ(float_to_bf16_bits(f), slow_round(g, f, 0x7f80)) << f;
  }
}

}  // namespace
}  // namespace pagesim::kernels
