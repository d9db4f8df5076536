// Hand-computed cases for PagedAllocatorSettings::single_free_queue (vLLM v1's
// FreeKVCacheBlockQueue: every released block, cached or not, in release order; a request's
// blocks released last to first; a hit takes its block out of the queue; the head goes
// first) against the default (never-cached free blocks first), and for whole-block hits.
#include <gtest/gtest.h>

#include <vector>

#include "allocator/paged/paged_allocator.h"
#include "hashed_request.h"

namespace pagesim::alloc {
namespace {

PagedAllocator pool(bool single_queue) {
  PagedAllocatorSettings s;
  s.num_blocks = 4;
  s.block_size = 4;
  s.prefix_cache = true;
  s.single_free_queue = single_queue;
  return PagedAllocator(s);
}

AdmitRequest req(SeqId id, std::int64_t prompt, const std::vector<BlockHash>& h) {
  return test_support::hashed_request(id, prompt, h, /*output=*/4);
}

// A (8 tokens, hashes 11 12) takes blocks 0 1, C (8 tokens, no hashes) blocks 2 3. A is
// freed (release order: 1 then 0), then C (3 then 2). D (4 tokens) needs one block:
//   single queue: the least recently released, block 1, whose hash 12 is evicted although
//   blocks 2 and 3 hold nothing cached;
//   default: block 2 (never-cached blocks first), nothing evicted.
// E (hashes 11 12) then hits: single queue, block 0 only (it leaves the queue), and takes
// block 3 (released before 2); default, both blocks.
TEST(SingleFreeQueue, LeastRecentlyReleasedGoesFirstCachedOrNot) {
  const std::vector<BlockHash> h = {11, 12};
  for (bool single : {true, false}) {
    SCOPED_TRACE(single ? "single queue" : "default");
    auto a = pool(single);
    ASSERT_TRUE(a.admit(req(1, 8, h)).admitted);
    ASSERT_TRUE(a.admit(req(2, 8, {})).admitted);
    EXPECT_EQ(a.block_table(1), (std::vector<BlockId>{0, 1}));
    EXPECT_EQ(a.block_table(2), (std::vector<BlockId>{2, 3}));
    a.free(1);
    a.free(2);
    a.validate();
    EXPECT_EQ(a.num_free_blocks(), 4);
    ASSERT_TRUE(a.admit(req(3, 4, {})).admitted);
    a.validate();
    const AdmitResult e = a.admit(req(4, 8, h));
    ASSERT_TRUE(e.admitted);
    a.validate();
    if (single) {
      EXPECT_EQ(a.block_table(3), (std::vector<BlockId>{1}));
      EXPECT_EQ(a.stats().prefix.evictions, 1);
      EXPECT_EQ(e.cached_tokens, 4);
      EXPECT_EQ(a.block_table(4), (std::vector<BlockId>{0, 3}));
    } else {
      EXPECT_EQ(a.block_table(3), (std::vector<BlockId>{2}));
      EXPECT_EQ(a.stats().prefix.evictions, 0);
      EXPECT_EQ(e.cached_tokens, 7);
      EXPECT_EQ(a.block_table(4), (std::vector<BlockId>{0, 1}));
    }
    EXPECT_EQ(a.num_free_blocks(), 1);
    a.free(3);
    a.free(4);
    a.validate();
    EXPECT_EQ(a.num_free_blocks(), 4);
  }
}

// A prompt's tail goes before its head: after A (12 tokens, hashes 11 12 13) is freed, three
// one-block admissions evict 13, then 12, then 11 (block 3, never used, goes first).
TEST(SingleFreeQueue, APromptsTailIsEvictedBeforeItsHead) {
  auto a = pool(true);
  ASSERT_TRUE(a.admit(req(1, 12, {11, 12, 13})).admitted);
  a.free(1);
  for (SeqId s = 2; s <= 5; ++s) {
    ASSERT_TRUE(a.admit(req(s, 4, {})).admitted);
    a.validate();
  }
  EXPECT_EQ(a.block_table(2), (std::vector<BlockId>{3}));
  EXPECT_EQ(a.block_table(3), (std::vector<BlockId>{2}));  // hash 13, A's tail
  EXPECT_EQ(a.block_table(4), (std::vector<BlockId>{1}));
  EXPECT_EQ(a.block_table(5), (std::vector<BlockId>{0}));  // hash 11, A's head
  EXPECT_EQ(a.stats().prefix.evictions, 3);
}

// Whole-block hits (vLLM v1): a prompt of exactly two cached blocks hits one of them and
// computes its last block again; with a ninth token it hits both.
TEST(SingleFreeQueue, WholeBlockHitsLeaveTheLastTokenToCompute) {
  auto a = pool(true);
  const std::vector<BlockHash> h = {11, 12};  // outlives the requests that point to it
  ASSERT_TRUE(a.admit(req(1, 8, h)).admitted);
  AdmitRequest same = req(2, 8, h);
  same.whole_block_hits = true;
  EXPECT_EQ(a.blocks_to_admit(same), 1);
  const AdmitResult r = a.admit(same);
  EXPECT_EQ(r.cached_tokens, 4);
  EXPECT_EQ(r.held_tokens, 8);
  AdmitRequest longer = req(3, 9, h);
  longer.whole_block_hits = true;
  EXPECT_EQ(a.admit(longer).cached_tokens, 8);
  a.validate();
}

}  // namespace
}  // namespace pagesim::alloc
