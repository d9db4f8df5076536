// LoadIndex against a scan in index order under random updates: the least load with ties to
// the lowest index (what least_outstanding's scan picked), and the largest load.
#include "sim/cluster/load_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace pagesim::sim {
namespace {

TEST(LoadIndex, StartsAtZeroWithTheFirstEntryLeast) {
  const LoadIndex index(5);
  EXPECT_EQ(index.size(), 5u);
  EXPECT_EQ(index.argmin(), 0);
  EXPECT_EQ(index.min(), 0);
  EXPECT_EQ(index.max(), 0);
}

TEST(LoadIndex, TiesGoToTheLowestIndex) {
  LoadIndex index(4);
  index.set(0, 3);
  index.set(1, 1);
  index.set(2, 1);
  index.set(3, 1);
  EXPECT_EQ(index.argmin(), 1);
  index.set(1, 2);
  EXPECT_EQ(index.argmin(), 2);
  index.set(2, 5);
  EXPECT_EQ(index.argmin(), 3);
  EXPECT_EQ(index.max(), 5);
  index.set(3, 9);
  EXPECT_EQ(index.argmin(), 1);
  EXPECT_EQ(index.min(), 2);
  EXPECT_EQ(index.max(), 9);
}

TEST(LoadIndex, MatchesAScanUnderRandomUpdates) {
  for (const std::size_t n : {1u, 2u, 3u, 7u, 8u, 9u, 100u, 1000u}) {
    std::mt19937_64 rng(n);
    LoadIndex index(n);
    std::vector<std::int64_t> loads(n, 0);
    for (int step = 0; step < 5000; ++step) {
      const std::size_t i = rng() % n;
      // Small loads make ties common; an occasional large one moves the maximum.
      const auto load = static_cast<std::int64_t>(rng() % 6) + (rng() % 50 == 0 ? 1000 : 0);
      index.set(i, load);
      loads[i] = load;
      const auto least = std::min_element(loads.begin(), loads.end());
      ASSERT_EQ(index.argmin(), least - loads.begin()) << "n " << n << " step " << step;
      ASSERT_EQ(index.min(), *least);
      ASSERT_EQ(index.max(), *std::max_element(loads.begin(), loads.end()));
      ASSERT_EQ(index.load(i), load);
    }
  }
}

}  // namespace
}  // namespace pagesim::sim
