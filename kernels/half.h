// Host-side IEEE binary16 (Half) and bfloat16 (BFloat16) storage types and conversions.
//
// Usable without CUDA: the CPU reference stores fp16/bf16 caches through these, and tests
// and benchmarks fill device buffers with them (same bit layout as CUDA's __half and
// __nv_bfloat16). float -> 16-bit rounds to nearest, ties to even; overflow gives ±inf;
// NaN stays NaN (quiet); subnormals are kept. 16-bit -> float is exact. Pure functions,
// thread-safe.
#pragma once

#include <bit>
#include <cstdint>

namespace pagesim::kernels {

// float -> binary16 bits, round to nearest even.
constexpr std::uint16_t float_to_half_bits(float value) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((x >> 13) & 0x3ffu));
  if (x >= 0x47800000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65536: inf
  if (x < 0x38800000u) {
    // Below 2^-14: a subnormal half (or zero). Its unit is 2^-24; shift the 24-bit
    // significand right and round to nearest even by hand.
    if (x < 0x33000000u) return static_cast<std::uint16_t>(sign);  // < 2^-25 rounds to 0
    const std::uint32_t exponent = x >> 23;                          // 102..112
    const std::uint32_t significand = (x & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - exponent;                     // 14..24
    std::uint32_t h = significand >> shift;
    const std::uint32_t rest = significand & ((1u << shift) - 1u);
    const std::uint32_t half_way = 1u << (shift - 1u);
    if (rest > half_way || (rest == half_way && (h & 1u))) ++h;  // may carry into 2^-14: fine
    return static_cast<std::uint16_t>(sign | h);
  }
  // Normal half: rebias the exponent, drop 13 mantissa bits with round-to-nearest-even.
  // A carry out of the mantissa bumps the exponent, up to inf (65520 and above).
  const std::uint32_t odd = (x >> 13) & 1u;
  x += 0xc8000000u + 0xfffu + odd;  // (15 - 127) << 23, plus the rounding bias
  return static_cast<std::uint16_t>(sign | (x >> 13));
}

// binary16 bits -> float, exact.
constexpr float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) {
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  }
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // Subnormal: normalise the mantissa.
  std::uint32_t e = 113;  // exponent of 2^-14 in float bias
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (e << 23) | ((mantissa & 0x3ffu) << 13));
}

// float -> bfloat16 bits, round to nearest even; NaN stays a quiet NaN.
constexpr std::uint16_t float_to_bf16_bits(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

constexpr float bf16_bits_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

// 16-bit storage types with the layout of CUDA's __half / __nv_bfloat16.
struct Half {
  std::uint16_t bits = 0;
  Half() = default;
  explicit constexpr Half(float f) : bits(float_to_half_bits(f)) {}
  static constexpr Half from_bits(std::uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
  constexpr explicit operator float() const { return half_bits_to_float(bits); }
};

struct BFloat16 {
  std::uint16_t bits = 0;
  BFloat16() = default;
  explicit constexpr BFloat16(float f) : bits(float_to_bf16_bits(f)) {}
  static constexpr BFloat16 from_bits(std::uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  constexpr explicit operator float() const { return bf16_bits_to_float(bits); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

}  // namespace pagesim::kernels
