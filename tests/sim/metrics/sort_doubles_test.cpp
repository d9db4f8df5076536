// sort_doubles against std::sort: bit for bit the same sequence on latency-like data (many
// near-equal magnitudes, ties), on values of every sign and magnitude (infinities,
// subnormals, +0.0), below and above the radix sort's size threshold, and with a NaN (which
// falls back to std::sort).
#include "sim/metrics/sort_doubles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace pagesim::sim {
namespace {

void expect_sorts_as_std_sort(std::vector<double> v) {
  std::vector<double> want = v;
  std::sort(want.begin(), want.end());
  sort_doubles(v);
  ASSERT_EQ(v.size(), want.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint64_t>(v[i]), std::bit_cast<std::uint64_t>(want[i])) << "at " << i;
}

TEST(SortDoubles, LatencyLikeValuesInEveryOrder) {
  std::mt19937_64 rng(7);
  for (std::size_t n : {0, 1, 2, 63, 64, 100, 255, 256, 257, 720, 2047, 2048, 4096, 5000, 100000}) {
    std::lognormal_distribution<double> latency(0.0, 2.0);
    std::vector<double> v(n);
    for (double& x : v) x = latency(rng);
    for (std::size_t i = 0; i + 1 < n; i += 7) v[i] = v[i + 1];  // ties
    if (n > 3) v[n / 2] = 0.0;
    expect_sorts_as_std_sort(v);
    std::sort(v.begin(), v.end());
    expect_sorts_as_std_sort(v);  // sorted already
    std::reverse(v.begin(), v.end());
    expect_sorts_as_std_sort(v);
  }
}

TEST(SortDoubles, EverySignAndMagnitude) {
  std::mt19937_64 rng(11);
  std::vector<double> v(20000);
  for (double& x : v) {
    do x = std::bit_cast<double>(rng());  // any finite double, subnormals included
    while (std::isnan(x));
  }
  v[3] = std::numeric_limits<double>::infinity();
  v[5] = -std::numeric_limits<double>::infinity();
  v[9] = std::numeric_limits<double>::denorm_min();
  v[10] = -std::numeric_limits<double>::denorm_min();
  v[11] = 0.0;
  expect_sorts_as_std_sort(v);
}

TEST(SortDoubles, SameDigitsInEveryPass) {
  std::vector<double> v(10000, 1.5);  // every pass skipped
  expect_sorts_as_std_sort(v);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(v.size() - i);  // small integers
  expect_sorts_as_std_sort(v);
}

TEST(SortDoubles, ANanFallsBackToStdSort) {
  std::vector<double> v(10000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7919) % 10007);
  v[0] = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> want = v;
  std::sort(want.begin(), want.end());
  sort_doubles(v);
  for (std::size_t i = 0; i < v.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint64_t>(v[i]), std::bit_cast<std::uint64_t>(want[i])) << "at " << i;
}

}  // namespace
}  // namespace pagesim::sim
