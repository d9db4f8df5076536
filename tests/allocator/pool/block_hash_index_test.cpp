// BlockHashIndex: one hash per block and one block per hash, a second block under a hash
// refused; and random inserts and erases against a plain map model, validate() after each.
#include "allocator/pool/block_hash_index.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>

namespace pagesim::alloc {
namespace {

TEST(BlockHashIndex, OneBlockPerHashAndOneHashPerBlock) {
  BlockHashIndex index(4);
  EXPECT_EQ(index.size(), 0);
  EXPECT_EQ(index.find(42), kNoBlock);
  EXPECT_TRUE(index.insert(1, 42));
  EXPECT_FALSE(index.insert(2, 42));  // the hash names block 1 already: 2 stays unindexed
  EXPECT_FALSE(index.contains(2));
  EXPECT_TRUE(index.insert(3, 7));
  EXPECT_EQ(index.find(42), 1);
  EXPECT_EQ(index.hash_of(3), 7u);
  EXPECT_EQ(index.size(), 2);
  EXPECT_EQ(index.erase(1), 42u);
  EXPECT_FALSE(index.contains(1));
  EXPECT_EQ(index.find(42), kNoBlock);
  EXPECT_TRUE(index.insert(2, 42));  // the hash is free again
  EXPECT_EQ(index.find(42), 2);
  std::set<std::pair<BlockHash, BlockId>> seen;
  index.for_each([&](BlockHash h, BlockId b) { seen.emplace(h, b); });
  EXPECT_EQ(seen, (std::set<std::pair<BlockHash, BlockId>>{{7, 3}, {42, 2}}));
  EXPECT_NO_THROW(index.validate("test"));
}

// Random inserts (hashes drawn from a small set, so that some collide with indexed ones) and
// erases of indexed blocks, checked against a map of block -> hash after every operation.
TEST(BlockHashIndex, RandomOperationsMatchAMapModel) {
  for (const bool reserve_all : {false, true}) {
    constexpr std::int64_t kBlocks = 64;
    BlockHashIndex index(kBlocks, reserve_all);
    std::map<BlockId, BlockHash> model;
    std::mt19937_64 rng(7);
    for (int step = 0; step < 20000; ++step) {
      const auto b = static_cast<BlockId>(rng() % kBlocks);
      if (model.count(b)) {
        ASSERT_EQ(index.erase(b), model[b]);
        model.erase(b);
      } else {
        const BlockHash h = rng() % 96;
        bool taken = false;
        for (const auto& [mb, mh] : model) taken = taken || mh == h;
        ASSERT_EQ(index.insert(b, h), !taken);
        if (!taken) model[b] = h;
      }
      ASSERT_EQ(index.size(), static_cast<std::int64_t>(model.size()));
      for (BlockId x = 0; x < kBlocks; ++x) {
        ASSERT_EQ(index.contains(x), model.count(x) != 0);
        if (model.count(x)) {
          ASSERT_EQ(index.find(model[x]), x);
        }
      }
      ASSERT_NO_THROW(index.validate("test"));
    }
  }
}

}  // namespace
}  // namespace pagesim::alloc
