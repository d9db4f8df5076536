#include "allocator/contiguous/hole_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {

void PrintTo(const Hole& h, std::ostream* os) { *os << "[" << h.start << ", " << h.end() << ")"; }

namespace {

TEST(HoleTreeTest, EmptyTree) {
  const HoleTree t(HoleOrder::kByAddress);
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.size(), 0);
  EXPECT_EQ(t.total_length(), 0);
  EXPECT_EQ(t.max_length(), 0);
  EXPECT_FALSE(t.first_with_length_at_least(1).has_value());
  EXPECT_FALSE(t.last_before({5, 0}).has_value());
  EXPECT_FALSE(t.first_not_before({5, 0}).has_value());
  EXPECT_EQ(t.length_before({5, 0}), 0);
  t.validate();
}

TEST(HoleTreeTest, ByAddressQueries) {
  HoleTree t(HoleOrder::kByAddress);
  for (Hole h : {Hole{50, 5}, Hole{0, 10}, Hole{20, 30}, Hole{80, 20}}) t.insert(h);
  t.validate();
  EXPECT_EQ(t.holes(), (std::vector<Hole>{{0, 10}, {20, 30}, {50, 5}, {80, 20}}));
  EXPECT_EQ(t.total_length(), 65);
  EXPECT_EQ(t.max_length(), 30);
  EXPECT_EQ(t.first_with_length_at_least(11), (Hole{20, 30}));
  EXPECT_EQ(t.first_with_length_at_least(10), (Hole{0, 10}));
  EXPECT_FALSE(t.first_with_length_at_least(31).has_value());
  EXPECT_EQ(t.last_before({50, 0}), (Hole{20, 30}));
  EXPECT_EQ(t.first_not_before({50, 0}), (Hole{50, 5}));
  EXPECT_EQ(t.first_not_before({51, 0}), (Hole{80, 20}));
  EXPECT_EQ(t.length_before({50, 0}), 40);
  EXPECT_TRUE(t.contains({50, 5}));
  EXPECT_FALSE(t.contains({50, 6}));
  t.erase({20, 30});
  t.validate();
  EXPECT_EQ(t.first_with_length_at_least(11), (Hole{80, 20}));
  EXPECT_EQ(t.size(), 3);
}

TEST(HoleTreeTest, BySizeQueries) {
  HoleTree t(HoleOrder::kBySize);
  for (Hole h : {Hole{50, 5}, Hole{0, 10}, Hole{20, 30}, Hole{80, 10}}) t.insert(h);
  t.validate();
  EXPECT_EQ(t.holes(), (std::vector<Hole>{{50, 5}, {0, 10}, {80, 10}, {20, 30}}));
  EXPECT_EQ(t.first_with_length_at_least(6), (Hole{0, 10}));  // ties: lowest address
  EXPECT_EQ(t.first_with_length_at_least(11), (Hole{20, 30}));
  EXPECT_EQ(t.length_before({HoleTree::kMinStart, 10}), 5);
  EXPECT_EQ(t.length_before({HoleTree::kMinStart, 11}), 25);
  EXPECT_EQ(t.length_before({HoleTree::kMinStart, 31}), 55);
}

// Random inserts, erases and queries against a plain std::set, validating every step.
TEST(HoleTreeTest, MatchesAReferenceSetUnderRandomOperations) {
  for (HoleOrder order : {HoleOrder::kByAddress, HoleOrder::kBySize}) {
    const auto key = [order](const Hole& h) {
      return order == HoleOrder::kByAddress ? std::make_tuple(h.start, std::int64_t{0})
                                            : std::make_tuple(h.length, h.start);
    };
    const auto cmp = [&key](const Hole& a, const Hole& b) { return key(a) < key(b); };
    std::set<Hole, decltype(cmp)> ref(cmp);
    HoleTree tree(order);
    std::mt19937_64 rng(order == HoleOrder::kByAddress ? 7 : 11);
    for (int step = 0; step < 20'000; ++step) {
      const std::int64_t start = static_cast<std::int64_t>(rng() % 400);
      const std::int64_t length = 1 + static_cast<std::int64_t>(rng() % 40);
      const Hole probe{start, length};
      if (rng() % 2 == 0) {
        // Insert unless a hole with the same key exists.
        if (!ref.contains(probe)) {
          ref.insert(probe);
          tree.insert(probe);
        }
      } else if (!ref.empty()) {
        auto it = ref.lower_bound(probe);
        if (it == ref.end()) it = ref.begin();
        tree.erase(*it);
        ref.erase(it);
      }
      tree.validate();
      ASSERT_EQ(tree.size(), static_cast<std::int64_t>(ref.size()));
      ASSERT_EQ(tree.holes(), std::vector<Hole>(ref.begin(), ref.end()));

      std::optional<Hole> want_fit;
      std::int64_t want_before = 0;
      std::int64_t want_total = 0;
      for (const Hole& h : ref) {
        if (!want_fit && h.length >= length) want_fit = h;
        if (cmp(h, probe)) want_before += h.length;
        want_total += h.length;
      }
      ASSERT_EQ(tree.first_with_length_at_least(length), want_fit);
      ASSERT_EQ(tree.length_before(probe), want_before);
      ASSERT_EQ(tree.total_length(), want_total);
      const auto lb = ref.lower_bound(probe);
      ASSERT_EQ(tree.first_not_before(probe), lb == ref.end() ? std::nullopt : std::optional(*lb));
      ASSERT_EQ(tree.last_before(probe),
                lb == ref.begin() ? std::nullopt : std::optional(*std::prev(lb)));
    }
  }
}

}  // namespace
}  // namespace pagesim::alloc
