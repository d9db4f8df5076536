// BlockPool: under random takes, shares and releases, give_back_sole leaves the free list
// as drop_ref + give_back one block at a time would, take() hands out clean entries either
// way and in the order of a stack that held every id from the start (block 0 on top; the
// pool keeps no place for a block never used), and shared_blocks() counts the blocks with
// more than one reference.
#include "allocator/pool/block_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace pagesim::alloc {
namespace {

TEST(BlockPool, SoleGiveBackMatchesOneByOneAndSharedBlocksAreCounted) {
  constexpr std::int64_t kBlocks = 64;
  constexpr std::int32_t kSlots = 16;
  BlockPool sole(kBlocks, kSlots), one(kBlocks, kSlots);
  std::mt19937_64 rng(7);
  auto draw = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  std::vector<std::vector<BlockId>> tables;  // each: its blocks, one reference per entry
  // The free blocks as a stack holding every id from the start would keep them (top last).
  std::vector<BlockId> stack;
  for (std::int64_t b = kBlocks - 1; b >= 0; --b) stack.push_back(static_cast<BlockId>(b));
  const auto free_blocks = [](const BlockPool& pool) {
    std::vector<BlockId> out;
    pool.for_each_free([&](BlockId b) { out.push_back(b); });
    return out;
  };
  std::int64_t sole_releases = 0, shared_seen = 0;
  for (int step = 0; step < 5000; ++step) {
    const std::int64_t op = draw(0, 9);  // forks rarer than takes and frees: sharing comes and goes
    if (op < 5 && sole.num_free() > 0) {  // a new table of fresh blocks
      std::vector<BlockId> t;
      for (std::int64_t k = draw(1, std::min<std::int64_t>(sole.num_free(), 6)); k > 0; --k) {
        const BlockId b = sole.take();
        ASSERT_EQ(one.take(), b);
        ASSERT_EQ(stack.back(), b) << "step " << step;
        stack.pop_back();
        ASSERT_EQ(sole.ref_count(b), 1);
        ASSERT_EQ(sole.filled(b), 0) << "take() resets an entry give_back_sole left";
        const auto f = static_cast<std::int32_t>(draw(1, kSlots));
        sole.set_filled(b, f);
        one.set_filled(b, f);
        t.push_back(b);
      }
      tables.push_back(t);
    } else if (op == 5 && !tables.empty()) {  // a fork: a second table shares every block
      const std::vector<BlockId> t = tables[static_cast<std::size_t>(draw(0, static_cast<std::int64_t>(tables.size()) - 1))];
      for (BlockId b : t) {
        sole.add_ref(b);
        one.add_ref(b);
      }
      tables.push_back(t);
    } else if (!tables.empty()) {  // a table freed, last block first
      const auto i = static_cast<std::size_t>(draw(0, static_cast<std::int64_t>(tables.size()) - 1));
      const std::vector<BlockId> t = tables[i];
      tables.erase(tables.begin() + static_cast<std::ptrdiff_t>(i));
      if (sole.shared_blocks() == 0) {
        sole.give_back_sole(t.rbegin(), t.rend());
        ++sole_releases;
      } else {
        for (auto it = t.rbegin(); it != t.rend(); ++it)
          if (sole.drop_ref(*it) == 0) sole.give_back(*it);
      }
      for (auto it = t.rbegin(); it != t.rend(); ++it)
        if (one.drop_ref(*it) == 0) {
          one.give_back(*it);
          stack.push_back(*it);
        }
    }
    ASSERT_EQ(free_blocks(sole), free_blocks(one)) << "step " << step;
    ASSERT_EQ(free_blocks(sole), std::vector<BlockId>(stack.rbegin(), stack.rend())) << "step " << step;
    ASSERT_EQ(sole.num_free(), static_cast<std::int64_t>(stack.size()));
    std::vector<std::int32_t> refs(kBlocks, 0);
    for (const auto& t : tables)
      for (BlockId b : t) ++refs[static_cast<std::size_t>(b)];
    const auto shared = std::count_if(refs.begin(), refs.end(), [](std::int32_t r) { return r > 1; });
    ASSERT_EQ(sole.shared_blocks(), shared) << "step " << step;
    ASSERT_EQ(one.shared_blocks(), shared) << "step " << step;
    shared_seen += shared > 0;
    for (std::size_t b = 0; b < refs.size(); ++b) {
      if (refs[b] == 0) continue;
      ASSERT_EQ(sole.ref_count(static_cast<BlockId>(b)), refs[b]);
    }
  }
  EXPECT_GT(sole_releases, 100);  // both paths ran
  EXPECT_GT(shared_seen, 100);
}

TEST(BlockPool, BlocksNeverUsedReadEmptyAndComeLowestFirst) {
  BlockPool pool(5, 16);
  EXPECT_EQ(pool.num_free(), 5);
  EXPECT_EQ(pool.used(), 0);
  for (BlockId b = 0; b < 5; ++b) {
    EXPECT_EQ(pool.ref_count(b), 0);
    EXPECT_EQ(pool.filled(b), 0);
  }
  EXPECT_EQ(pool.take(), 0);
  EXPECT_EQ(pool.take(), 1);
  pool.set_filled(1, 3);
  EXPECT_EQ(pool.drop_ref(0), 0);
  pool.give_back(0);
  EXPECT_EQ(pool.used(), 2);
  EXPECT_EQ(pool.num_free(), 4);
  std::vector<BlockId> order;
  pool.for_each_free([&](BlockId b) { order.push_back(b); });
  EXPECT_EQ(order, (std::vector<BlockId>{0, 2, 3, 4}));
  for (const BlockId b : order) EXPECT_EQ(pool.take(), b);  // the order for_each_free gives
  EXPECT_EQ(pool.num_free(), 0);
  EXPECT_EQ(pool.filled(1), 3);
  EXPECT_EQ(pool.ref_count(4), 1);
}

// take_unwritten() hands out what take() would, in the same order, and leaves a reused
// block's entry as its last owner left it; own() writes it.
TEST(BlockPool, TakeUnwrittenKeepsTakesOrderAndLeavesTheEntry) {
  BlockPool written(6, 16), unwritten(6, 16);
  std::vector<BlockId> a, b;
  for (int i = 0; i < 4; ++i) {
    a.push_back(written.take());
    b.push_back(unwritten.take_unwritten());
  }
  EXPECT_EQ(a, b);
  EXPECT_EQ(unwritten.ref_count(3), 1);  // a block never used gets its entry
  unwritten.own(2, 7);
  EXPECT_EQ(unwritten.filled(2), 7);
  for (BlockPool* pool : {&written, &unwritten}) pool->give_back_sole(a.rbegin() + 1, a.rend());  // 2, 1, 0
  for (int i = 0; i < 4; ++i) EXPECT_EQ(written.take(), unwritten.take_unwritten());
  EXPECT_EQ(unwritten.filled(2), 7) << "take_unwritten() leaves the entry";
  EXPECT_EQ(written.filled(2), 0);
  EXPECT_EQ(unwritten.num_free(), 1);  // block 5, never used
  EXPECT_EQ(unwritten.shared_blocks(), 0);
}

}  // namespace
}  // namespace pagesim::alloc
