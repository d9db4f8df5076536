// FenwickTree against a plain array: prefix sums after appends and point updates mixed.
#include "sim/analysis/fenwick_tree.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <vector>

namespace pagesim::sim {
namespace {

TEST(FenwickTree, EmptyTreeSumsToZero) {
  FenwickTree t;
  EXPECT_EQ(t.size(), 0);
  EXPECT_EQ(t.prefix_sum(0), 0);
}

TEST(FenwickTree, MatchesAPlainArrayUnderAppendsAndUpdates) {
  FenwickTree t;
  std::vector<std::int64_t> plain;
  std::mt19937_64 rng(7);
  for (int step = 0; step < 3000; ++step) {
    if (plain.empty() || rng() % 3 != 0) {
      const auto v = static_cast<std::int64_t>(rng() % 5);
      EXPECT_EQ(t.push_back(v), static_cast<std::int64_t>(plain.size()) + 1);
      plain.push_back(v);
    } else {
      const auto pos = static_cast<std::int64_t>(rng() % plain.size()) + 1;
      const auto d = static_cast<std::int64_t>(rng() % 7) - 3;
      t.add(pos, d);
      plain[static_cast<std::size_t>(pos - 1)] += d;
    }
    const auto q = static_cast<std::int64_t>(rng() % (plain.size() + 1));
    ASSERT_EQ(t.prefix_sum(q), std::accumulate(plain.begin(), plain.begin() + q, std::int64_t{0})) << step;
  }
  EXPECT_EQ(t.prefix_sum(t.size()), std::accumulate(plain.begin(), plain.end(), std::int64_t{0}));
}

}  // namespace
}  // namespace pagesim::sim
