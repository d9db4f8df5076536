// SeqSlotIndex against std::unordered_map under seeded random inserts and erases: ids
// counting up (a scheduler's fresh ids), ids sharing their low bits (clusters for a weak
// hash) and random ids, with erases of present and absent ids. After every operation both
// agree on size and on the lookup of the ids touched; every so often on every id ever used,
// and valid() holds (each entry reachable from its home bucket, which backward-shift
// deletion must keep).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "allocator/paged/seq_slot_index.h"

namespace pagesim::alloc {
namespace {

enum class Ids { kCounting, kSharedLowBits, kRandom };

class SeqSlotIndexRandom : public ::testing::TestWithParam<Ids> {};

TEST_P(SeqSlotIndexRandom, AgreesWithAHashMap) {
  std::mt19937_64 rng(31 + static_cast<int>(GetParam()));
  SeqSlotIndex index;
  std::unordered_map<SeqId, std::uint32_t> ref;
  std::vector<SeqId> used;
  SeqId next = 0;
  auto fresh = [&]() -> SeqId {
    switch (GetParam()) {
      case Ids::kCounting: return next++;
      case Ids::kSharedLowBits: return (next++) << 20;
      case Ids::kRandom: return rng();
    }
    return 0;
  };
  for (int op = 0; op < 60000; ++op) {
    // Grow to a few hundred live ids, then hover: both growth and long probe histories.
    const bool insert = ref.size() < 8 || (rng() % 100) < (ref.size() < 300 ? 60u : 48u);
    SeqId id;
    if (insert) {
      id = fresh();
      if (ref.count(id)) continue;
      const auto slot = static_cast<std::uint32_t>(rng() % 100000);
      index.insert(id, slot);
      ref.emplace(id, slot);
      used.push_back(id);
    } else {
      id = used[rng() % used.size()];  // live or erased already
      ASSERT_EQ(index.erase(id), ref.erase(id) == 1) << "id " << id;
    }
    ASSERT_EQ(index.size(), ref.size());
    const auto it = ref.find(id);
    ASSERT_EQ(index.find(id), it == ref.end() ? SeqSlotIndex::kNone : it->second);
    if (op % 997 == 0) {
      ASSERT_TRUE(index.valid()) << "after op " << op;
      for (const SeqId u : used) {
        const auto f = ref.find(u);
        ASSERT_EQ(index.find(u), f == ref.end() ? SeqSlotIndex::kNone : f->second) << "id " << u;
        ASSERT_EQ(index.contains(u), f != ref.end());
      }
    }
  }
  EXPECT_TRUE(index.valid());
}

INSTANTIATE_TEST_SUITE_P(Ids, SeqSlotIndexRandom, ::testing::Values(Ids::kCounting, Ids::kSharedLowBits, Ids::kRandom));

TEST(SeqSlotIndex, EmptyFindsNothing) {
  SeqSlotIndex index;
  EXPECT_EQ(index.find(0), SeqSlotIndex::kNone);
  EXPECT_FALSE(index.erase(7));
  EXPECT_EQ(index.size(), 0u);
  EXPECT_TRUE(index.valid());
}

}  // namespace
}  // namespace pagesim::alloc
