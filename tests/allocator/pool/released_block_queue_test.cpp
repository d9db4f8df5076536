// ReleasedBlockQueue: first in, first out with release times, across the ring's wrap-around,
// at capacities that are and are not powers of two.
#include "allocator/pool/released_block_queue.h"

#include <gtest/gtest.h>

#include <deque>
#include <utility>

namespace pagesim::alloc {
namespace {

TEST(ReleasedBlockQueue, FirstInFirstOutWithReleaseTimes) {
  ReleasedBlockQueue q(3);
  EXPECT_TRUE(q.empty());
  q.push_back(7, 1);
  q.push_back(2, 5);
  EXPECT_EQ(q.size(), 2);
  EXPECT_EQ(q.front().block, 7);
  EXPECT_EQ(q.front().released_at, 1u);
  EXPECT_EQ(q.pop_front(), 7);
  EXPECT_EQ(q.front().released_at, 5u);
  EXPECT_EQ(q.pop_front(), 2);
  EXPECT_TRUE(q.empty());
}

// Against std::deque over many wraps: the queue is often full (capacity 5, ring of 8).
TEST(ReleasedBlockQueue, MatchesADequeAcrossWraps) {
  for (std::int64_t capacity : {1, 5, 8}) {
    ReleasedBlockQueue q(capacity);
    std::deque<std::pair<BlockId, std::uint64_t>> model;
    std::uint64_t clock = 0;
    for (int step = 0; step < 1000; ++step) {
      const bool push = static_cast<std::int64_t>(model.size()) < capacity && (model.empty() || step % 3 != 0);
      if (push) {
        const auto b = static_cast<BlockId>(step % 97);
        q.push_back(b, ++clock);
        model.emplace_back(b, clock);
      } else {
        ASSERT_EQ(q.front().released_at, model.front().second);
        ASSERT_EQ(q.pop_front(), model.front().first);
        model.pop_front();
      }
      ASSERT_EQ(q.size(), static_cast<std::int64_t>(model.size()));
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
