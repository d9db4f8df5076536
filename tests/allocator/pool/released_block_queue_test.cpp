// ReleasedBlockQueue: first in, first out with release times, across the ring's wrap-around,
// at capacities that are and are not powers of two; the eviction victim against the head.
#include "allocator/pool/released_block_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <utility>

namespace pagesim::alloc {
namespace {

TEST(ReleasedBlockQueue, FirstInFirstOutWithReleaseTimes) {
  ReleasedBlockQueue q(8);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.clock(), 0u);
  q.push_back(7);
  q.stamp(3);  // a cached block: stamped, not queued
  q.push_back(2);
  EXPECT_EQ(q.size(), 2);
  EXPECT_EQ(q.clock(), 3u);
  EXPECT_EQ(q.front().block, 7);
  EXPECT_EQ(q.front().released_at, 1u);
  EXPECT_EQ(q.pop_front(), 7);
  EXPECT_EQ(q.front().released_at, 3u);
  EXPECT_EQ(q.pop_front(), 2);
  EXPECT_TRUE(q.empty());
}

// The victim goes first when it was released before the head, or nothing is queued; no
// victim never goes first.
TEST(ReleasedBlockQueue, TheVictimGoesFirstWhenReleasedBeforeTheHead) {
  ReleasedBlockQueue q(8);
  EXPECT_FALSE(q.victim_goes_first(kNoBlock));
  q.stamp(5);      // released at 1, cached
  q.push_back(1);  // released at 2
  q.stamp(6);      // released at 3, cached
  EXPECT_TRUE(q.victim_goes_first(5));
  EXPECT_FALSE(q.victim_goes_first(6));
  EXPECT_FALSE(q.victim_goes_first(kNoBlock));
  EXPECT_EQ(q.pop_front(), 1);
  EXPECT_TRUE(q.victim_goes_first(6));  // empty queue
  q.push_back(0);                       // released at 4
  q.stamp(5);                           // released again, at 5: after the head
  EXPECT_TRUE(q.victim_goes_first(6));
  EXPECT_FALSE(q.victim_goes_first(5));
}

// Against std::deque over many wraps: the queue is often full (capacity 5, ring of 8).
TEST(ReleasedBlockQueue, MatchesADequeAcrossWraps) {
  for (std::int64_t capacity : {1, 5, 8}) {
    ReleasedBlockQueue q(capacity);
    std::deque<std::pair<BlockId, std::uint64_t>> model;
    std::uint64_t clock = 0;
    for (int step = 0; step < 1000; ++step) {
      const bool push = static_cast<std::int64_t>(model.size()) < capacity && (model.empty() || step % 3 != 0);
      if (step % 7 == 0) {  // a cached block's release moves the clock, queues nothing
        q.stamp(static_cast<BlockId>(step % capacity));
        ++clock;
      }
      if (push) {
        auto b = static_cast<BlockId>(step % capacity);  // a block not queued (REQUIRES)
        while (std::any_of(model.begin(), model.end(), [&](const auto& e) { return e.first == b; }))
          b = static_cast<BlockId>((b + 1) % capacity);
        q.push_back(b);
        model.emplace_back(b, ++clock);
      } else {
        ASSERT_EQ(q.front().released_at, model.front().second);
        ASSERT_EQ(q.pop_front(), model.front().first);
        model.pop_front();
      }
      ASSERT_EQ(q.size(), static_cast<std::int64_t>(model.size()));
      ASSERT_EQ(q.clock(), clock);
      std::size_t i = 0;
      q.for_each([&](const ReleasedBlockQueue::Entry& e) {
        ASSERT_EQ(e.block, model[i].first);
        ++i;
      });
      ASSERT_EQ(i, model.size());
    }
  }
}

}  // namespace
}  // namespace pagesim::alloc
