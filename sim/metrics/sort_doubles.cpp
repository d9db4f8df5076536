#include "sim/metrics/sort_doubles.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

namespace pagesim::sim {
namespace {

// Below this, std::sort's n log n is no slower than the passes' fixed cost (the counts).
// From it the passes win: bench/sim/sort_doubles_bench.cpp, lognormal values on this
// project's machine, ns a value against std::sort's: 21.9 / 27.4 at 64 values (a replica's
// batch at 10,000 replicas), 15.1 / 33.0 at 128, 9.5 / 38.2 at 720, 7.2 / 53.3 at 7,200.
constexpr std::size_t kRadixMinSize = 64;
// Digits of 8 bits below this many values, of 11 from it. A pass costs a scan of the values
// plus one of its counts; 11-bit digits take six passes and 48 KiB of counts, 8-bit ones
// eight passes and 8 KiB, which a fleet replica's few hundred values a sort repay sooner
// (its batches spill 262 values at a time at 1,000 replicas).
constexpr std::size_t kWideDigitsFrom = 2048;

// Unsigned keys that order as the doubles do (for non-NaN values).
std::uint64_t key_of(double v) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  return (bits >> 63) ? ~bits : bits | (std::uint64_t{1} << 63);
}
double value_of(std::uint64_t key) {
  return std::bit_cast<double>((key >> 63) ? key & ~(std::uint64_t{1} << 63) : ~key);
}

// The radix passes, `Bits` a digit. REQUIRES: no NaN; values.size() < 2^32 (the counts).
template <int Bits>
void radix_sort(std::span<double> values) {
  constexpr int kPasses = (64 + Bits - 1) / Bits;
  constexpr std::size_t kBuckets = std::size_t{1} << Bits;
  const auto digit = [](std::uint64_t key, int pass) {
    return static_cast<std::size_t>((key >> (pass * Bits)) & (kBuckets - 1));
  };
  const std::size_t n = values.size();
  // The keys ping-pong between `values` (each stored as the double of its bits: only copied,
  // never computed with, so every bit pattern survives) and one scratch array, which every
  // pass writes in full before reading: left uninitialized.
  const auto scratch = std::make_unique_for_overwrite<std::uint64_t[]>(n);
  std::vector<std::uint32_t> counts(kPasses * kBuckets);  // pass p's at [p * kBuckets, ...)
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t k = key_of(values[i]);
    values[i] = std::bit_cast<double>(k);
    for (int p = 0; p < kPasses; ++p) ++counts[static_cast<std::size_t>(p) * kBuckets + digit(k, p)];
  }
  bool in_scratch = false;
  const std::uint64_t first = std::bit_cast<std::uint64_t>(values[0]);
  for (int p = 0; p < kPasses; ++p) {
    std::uint32_t* const c = counts.data() + static_cast<std::size_t>(p) * kBuckets;
    if (c[digit(first, p)] == n) continue;  // every key has this digit: the order stays
    std::uint32_t start = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) start += std::exchange(c[b], start);
    if (in_scratch) {
      for (std::size_t i = 0; i < n; ++i) values[c[digit(scratch[i], p)]++] = std::bit_cast<double>(scratch[i]);
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        const auto k = std::bit_cast<std::uint64_t>(values[i]);
        scratch[c[digit(k, p)]++] = k;
      }
    }
    in_scratch = !in_scratch;
  }
  for (std::size_t i = 0; i < n; ++i)
    values[i] = value_of(in_scratch ? scratch[i] : std::bit_cast<std::uint64_t>(values[i]));
}

}  // namespace

void sort_doubles(std::span<double> values) {
  const std::size_t n = values.size();
  if (n < kRadixMinSize || n > std::numeric_limits<std::uint32_t>::max() ||
      std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); })) {
    std::sort(values.begin(), values.end());
    return;
  }
  if (n < kWideDigitsFrom) radix_sort<8>(values);
  else radix_sort<11>(values);
}

}  // namespace pagesim::sim
