// SpillQueue against std::deque under random pushes and pops: the same records in the same
// order, the same sizes, for chunks of 1, 2, 7 and 64 records and no bound (0); the records in
// memory stay within two chunks, and a bounded queue does spill.
#include "sim/output/spill_queue.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>

namespace pagesim::sim {
namespace {

struct Record {
  std::uint64_t id;
  double when;
  std::int32_t n;
};

TEST(SpillQueue, KeepsFifoOrderUnderRandomOperations) {
  for (const std::size_t chunk : {0, 1, 2, 7, 64}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    std::mt19937_64 rng(chunk + 1);
    SpillQueue<Record> q(chunk, "test records");
    std::deque<Record> want;
    std::uint64_t next = 0;
    std::size_t most_spilled = 0;
    for (int step = 0; step < 20000; ++step) {
      // Phases that mostly grow, then mostly shrink the queue, so that it spills and drains.
      const bool growing = (step / 2500) % 2 == 0;
      const bool push = want.empty() || std::uniform_int_distribution<int>(0, 9)(rng) < (growing ? 7 : 3);
      if (push) {
        const Record r{next, static_cast<double>(next) * 0.5, static_cast<std::int32_t>(next % 5)};
        ++next;
        q.push_back(r);
        want.push_back(r);
      } else {
        ASSERT_EQ(q.front().id, want.front().id);
        ASSERT_EQ(q.front().when, want.front().when);
        ASSERT_EQ(q.front().n, want.front().n);
        q.pop_front();
        want.pop_front();
      }
      ASSERT_EQ(q.size(), want.size());
      ASSERT_EQ(q.empty(), want.empty());
      if (chunk > 0) {
        ASSERT_LE(q.size() - q.spilled(), 2 * chunk);
      } else {
        ASSERT_EQ(q.spilled(), 0u);
      }
      most_spilled = std::max(most_spilled, q.spilled());
    }
    if (chunk > 0) {
      EXPECT_GT(most_spilled, 10 * chunk) << "the queue should have spilled";
    }
    while (!want.empty()) {
      ASSERT_EQ(q.front().id, want.front().id);
      q.pop_front();
      want.pop_front();
    }
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.spilled(), 0u);
  }
}

}  // namespace
}  // namespace pagesim::sim
