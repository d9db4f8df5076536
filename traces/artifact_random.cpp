#include "traces/artifact_random.h"

#include <bit>
#include <cassert>
#include <cmath>

namespace pagesim::traces {
namespace {

constexpr std::size_t kN = 624;
constexpr std::size_t kM = 397;

// The 32-bit words of |seed|, least significant first; {0} for 0 (CPython's random_seed).
std::vector<std::uint32_t> seed_words(std::uint64_t seed) {
  std::vector<std::uint32_t> key{static_cast<std::uint32_t>(seed)};
  if (seed >> 32) key.push_back(static_cast<std::uint32_t>(seed >> 32));
  return key;
}

}  // namespace

void Mt19937::init_genrand(std::uint32_t seed) {
  mt_[0] = seed;
  for (std::size_t i = 1; i < kN; ++i) {
    mt_[i] = 1812433253U * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
  }
  pos_ = kN;
}

Mt19937::Mt19937(std::span<const std::uint32_t> key) {
  assert(!key.empty());
  init_genrand(19650218U);
  std::size_t i = 1;
  std::size_t j = 0;
  for (std::size_t k = std::max(kN, key.size()); k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525U)) + key[j] +
             static_cast<std::uint32_t>(j);
    ++i;
    ++j;
    if (i >= kN) {
      mt_[0] = mt_[kN - 1];
      i = 1;
    }
    if (j >= key.size()) j = 0;
  }
  for (std::size_t k = kN - 1; k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941U)) -
             static_cast<std::uint32_t>(i);
    ++i;
    if (i >= kN) {
      mt_[0] = mt_[kN - 1];
      i = 1;
    }
  }
  mt_[0] = 0x80000000U;  // a non-zero initial state
  pos_ = kN;
}

void Mt19937::twist() {
  constexpr std::uint32_t kUpper = 0x80000000U;
  constexpr std::uint32_t kLower = 0x7fffffffU;
  constexpr std::uint32_t kMatrixA = 0x9908b0dfU;
  for (std::size_t i = 0; i < kN; ++i) {
    const std::uint32_t y = (mt_[i] & kUpper) | (mt_[(i + 1) % kN] & kLower);
    mt_[i] = mt_[(i + kM) % kN] ^ (y >> 1) ^ ((y & 1U) ? kMatrixA : 0U);
  }
  pos_ = 0;
}

std::uint32_t Mt19937::next_u32() {
  if (pos_ >= kN) twist();
  std::uint32_t y = mt_[pos_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= y >> 18;
  return y;
}

double NumpyLegacyRandom::random() {
  const std::uint32_t a = mt_.next_u32() >> 5;
  const std::uint32_t b = mt_.next_u32() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

std::int64_t NumpyLegacyRandom::poisson(double lam) {
  assert(lam >= 0.0 && lam < 10.0);
  if (lam == 0.0) return 0;
  // Multiply uniforms until the product falls to exp(-lam) or below.
  const double enlam = std::exp(-lam);
  std::int64_t x = 0;
  double prod = 1.0;
  for (;;) {
    prod *= random();
    if (prod <= enlam) return x;
    ++x;
  }
}

CpythonRandom::CpythonRandom(std::uint64_t seed) : mt_(seed_words(seed)) {}

std::uint32_t CpythonRandom::getrandbits(int k) {
  assert(k >= 1 && k <= 32);
  return mt_.next_u32() >> (32 - k);
}

std::uint64_t CpythonRandom::randbelow(std::uint64_t n) {
  assert(n >= 1 && n < (std::uint64_t{1} << 32));
  const int k = std::bit_width(n);  // n.bit_length(): n itself, not n - 1, as CPython
  std::uint64_t r = getrandbits(k);
  while (r >= n) r = getrandbits(k);
  return r;
}

}  // namespace pagesim::traces
