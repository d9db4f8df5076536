// Host-side fp8 E4M3 ("e4m3fn", OCP 8-bit floating point: 1 sign, 4 exponent bits of bias 7,
// 3 mantissa bits, no infinities, S.1111.111 is NaN, 448 the largest finite) and its
// conversions: the storage of an fp8 latent KV cache (latent_attention.h), bit-identical to
// CUDA's __nv_fp8_e4m3.
//
// float -> fp8 rounds to nearest, ties to even, and saturates to ±448 (CUDA's
// __NV_SATFINITE, which vLLM's fp8 cache writes use); NaN gives 0x7F. fp8 -> float is exact.
// Every fp8 value is exact in f16 and bf16 too. Pure functions, thread-safe.
#pragma once

#include <cmath>
#include <cstdint>

namespace pagesim::kernels {

inline constexpr float kFp8E4M3Max = 448.0f;

// fp8 E4M3 bits -> float, exact.
constexpr float fp8_e4m3_bits_to_float(std::uint8_t b) {
  const bool negative = (b & 0x80u) != 0;
  const int exponent = (b >> 3) & 0xf;
  const int mantissa = b & 0x7;
  if (exponent == 0xf && mantissa == 0x7) return negative ? -__builtin_nanf("") : __builtin_nanf("");
  float v = 0.0f;
  if (exponent == 0) {
    v = static_cast<float>(mantissa) / 512.0f;  // subnormal: m x 2^-9
  } else {
    v = 1.0f + static_cast<float>(mantissa) / 8.0f;
    for (int e = exponent - 7; e > 0; --e) v *= 2.0f;
    for (int e = exponent - 7; e < 0; ++e) v /= 2.0f;
  }
  return negative ? -v : v;
}

// float -> fp8 E4M3 bits: round to nearest even, saturating to ±448; NaN -> 0x7F.
inline std::uint8_t float_to_fp8_e4m3_bits(float value) {
  if (std::isnan(value)) return 0x7f;
  const std::uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
  float a = std::fabs(value);
  if (a >= kFp8E4M3Max) return static_cast<std::uint8_t>(sign | 0x7e);  // 448 (also for +inf)
  if (a < 0.015625f) {
    // Below the smallest normal 2^-6: a multiple of 2^-9 (8 of them is 2^-6, encoded 0x08).
    const auto q = static_cast<std::uint8_t>(std::nearbyint(a * 512.0f));  // FE_TONEAREST: ties to even
    return static_cast<std::uint8_t>(sign | q);
  }
  int e2 = 0;
  const float f = std::frexp(a, &e2);  // a = f x 2^e2, f in [0.5, 1)
  int exponent = e2 - 1;               // a = (2f) x 2^exponent, 2f in [1, 2)
  auto m = static_cast<int>(std::nearbyint((2.0f * f - 1.0f) * 8.0f));
  if (m == 8) {
    m = 0;
    ++exponent;
  }
  const int biased = exponent + 7;
  if (biased > 15 || (biased == 15 && m == 7)) return static_cast<std::uint8_t>(sign | 0x7e);
  return static_cast<std::uint8_t>(sign | (biased << 3) | m);
}

// An fp8 E4M3 storage type with the layout of CUDA's __nv_fp8_e4m3.
struct Fp8E4M3 {
  std::uint8_t bits = 0;
  Fp8E4M3() = default;
  explicit Fp8E4M3(float f) : bits(float_to_fp8_e4m3_bits(f)) {}
  explicit constexpr operator float() const { return fp8_e4m3_bits_to_float(bits); }
};
static_assert(sizeof(Fp8E4M3) == 1);

}  // namespace pagesim::kernels
