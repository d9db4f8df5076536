// IdealBlockCache: LRU, FIFO and LFU on hand-computed sequences of single-block requests.
#include "sim/analysis/ideal_block_cache.h"

#include <gtest/gtest.h>

#include <string>

#include "analysis_test_util.h"

namespace pagesim::sim {
namespace {

// Hits (0 or 1 per request) of `sequence` under `policy` at `capacity` blocks, as a string
// of 'h' and '.'.
std::string run(IdealPolicy policy, std::int64_t capacity, std::string_view sequence) {
  IdealBlockCache cache(policy, capacity);
  std::string out;
  for (const auto& blocks : testing::letters(sequence)) {
    out += cache.lookup_then_use(blocks) == 1 ? 'h' : '.';
    EXPECT_LE(cache.cached_blocks(), capacity);
  }
  return out;
}

TEST(IdealBlockCache, LruOnABACBA) {
  EXPECT_EQ(run(IdealPolicy::kLru, 1, "ABACBA"), "......");
  // cap 2: A B | A hit -> (A B) | C evicts B | B evicts A | A evicts C: misses.
  EXPECT_EQ(run(IdealPolicy::kLru, 2, "ABACBA"), "..h...");
  EXPECT_EQ(run(IdealPolicy::kLru, 3, "ABACBA"), "..h.hh");
}

TEST(IdealBlockCache, FifoOnABACBA) {
  EXPECT_EQ(run(IdealPolicy::kFifo, 1, "ABACBA"), "......");
  // cap 2: A B | A hit (stays oldest) | C evicts A -> (B C) | B hit | A evicts B.
  EXPECT_EQ(run(IdealPolicy::kFifo, 2, "ABACBA"), "..h.h.");
  EXPECT_EQ(run(IdealPolicy::kFifo, 3, "ABACBA"), "..h.hh");
}

TEST(IdealBlockCache, LfuOnABACBA) {
  EXPECT_EQ(run(IdealPolicy::kLfu, 1, "ABACBA"), "......");
  // cap 2: A B | A hit (A used twice) | C evicts B (once) | B evicts C (once, tie with
  // nothing: A has 2) | A hit.
  EXPECT_EQ(run(IdealPolicy::kLfu, 2, "ABACBA"), "..h..h");
  EXPECT_EQ(run(IdealPolicy::kLfu, 3, "ABACBA"), "..h.hh");
}

TEST(IdealBlockCache, PoliciesDifferOnAABCA) {
  // cap 2, A A B C A: LRU and FIFO evict A (least recent / first in) for C; LFU keeps A
  // (two uses) and evicts B.
  EXPECT_EQ(run(IdealPolicy::kLru, 2, "AABCA"), ".h...");
  EXPECT_EQ(run(IdealPolicy::kFifo, 2, "AABCA"), ".h...");
  EXPECT_EQ(run(IdealPolicy::kLfu, 2, "AABCA"), ".h..h");
}

TEST(IdealBlockCache, LfuBreaksTiesByLeastRecentUse) {
  // cap 2, A B C A: A and B both used once; A is older, so C evicts A; A misses.
  EXPECT_EQ(run(IdealPolicy::kLfu, 2, "ABCA"), "....");
  EXPECT_EQ(run(IdealPolicy::kLfu, 2, "ABCB"), "...h");
}

TEST(IdealBlockCache, CapacityZeroCachesNothing) {
  EXPECT_EQ(run(IdealPolicy::kLru, 0, "AAAA"), "....");
  EXPECT_EQ(run(IdealPolicy::kFifo, 0, "AAAA"), "....");
  EXPECT_EQ(run(IdealPolicy::kLfu, 0, "AAAA"), "....");
}

TEST(IdealBlockCache, ARequestLongerThanTheCacheEvictsItsOwnBlocks) {
  IdealBlockCache cache(IdealPolicy::kLru, 2);
  const auto blocks = prompt_blocks(testing::request_of({1, 2, 3}), 4, 4, true);
  EXPECT_EQ(cache.lookup_then_use(blocks), 0u);
  EXPECT_EQ(cache.cached_blocks(), 2);
  EXPECT_EQ(cache.lookup_then_use(blocks), 0u);  // block 1 was evicted by block 3
}

}  // namespace
}  // namespace pagesim::sim
