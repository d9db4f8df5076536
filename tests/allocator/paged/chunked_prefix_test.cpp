// Hand-computed cases for the prefix cache of PagedAllocator under chunked prefill
// (AdmitRequest::max_new_tokens): admission looks the whole prompt up, the chunk budget
// applies to the tokens after the hits, later chunks' full prompt blocks are cached as append
// fills them; and the hit counters of first admissions and re-admissions are kept apart.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "allocator/paged/paged_allocator.h"
#include "hashed_request.h"

namespace pagesim::alloc {
namespace {

constexpr std::int32_t kBlock = 4;

PagedAllocator make_cached(std::int64_t blocks) {
  PagedAllocatorSettings s;
  s.num_blocks = blocks;
  s.block_size = kBlock;
  s.prefix_cache = true;
  return PagedAllocator(s);
}

// Prompt of `prompt` tokens whose full blocks are keyed by `h` (any distinct values serve as
// chained hashes here: equal prefixes are given equal leading values).
AdmitRequest req(SeqId id, std::int64_t prompt, const std::vector<BlockHash>& h,
                 std::int64_t max_new_tokens = std::numeric_limits<std::int64_t>::max()) {
  return test_support::hashed_request(id, prompt, h, /*output=*/4, max_new_tokens);
}

const std::vector<BlockHash> kDoc = {11, 12, 13, 14};          // 16 tokens
const std::vector<BlockHash> kDocLonger = {11, 12, 13, 14, 15};  // the same 16, then 4 more

// A 16-token prompt admitted with a 6-token chunk holds 6 tokens: block 0 full (cached at
// once), block 1 half. Appends fill blocks 1..3, each cached as it fills; a second request
// with the same prompt sees 1, 3, then all 4 blocks cached.
TEST(ChunkedPrefixCache, LaterChunksCacheTheirBlocksAsAppendFillsThem) {
  PagedAllocator a = make_cached(32);
  const AdmitResult r = a.admit(req(1, 16, kDoc, 6));
  ASSERT_TRUE(r.admitted);
  EXPECT_EQ(r.cached_tokens, 0);
  EXPECT_EQ(r.held_tokens, 6);
  EXPECT_EQ(a.sequence_tokens(1), 6);
  a.validate();
  // A whole-prompt admission of the same prompt now: 4 blocks minus the hits (referenced by
  // sequence 1, so they cost nothing).
  EXPECT_EQ(a.blocks_to_admit(req(2, 16, kDoc)), 4 - 1);
  ASSERT_TRUE(a.append(1, 6));  // 12 tokens: blocks 1 and 2 full
  a.validate();
  EXPECT_EQ(a.blocks_to_admit(req(2, 16, kDoc)), 4 - 3);
  ASSERT_TRUE(a.append(1, 4));  // 16 tokens: all four cached
  a.validate();
  EXPECT_EQ(a.blocks_to_admit(req(2, 16, kDoc)), 0);
  const AdmitResult r2 = a.admit(req(2, 16, kDoc));
  EXPECT_EQ(r2.cached_tokens, 15);  // the last token is always computed
  EXPECT_EQ(r2.held_tokens, 16);
  EXPECT_EQ(a.block_table(2), a.block_table(1));
  a.validate();
  const PrefixCacheStats st = a.stats().prefix;
  EXPECT_EQ(st.prompt_tokens, 32);
  EXPECT_EQ(st.hit_tokens, 15);
  EXPECT_EQ(st.hit_blocks, 4);
  EXPECT_EQ(st.miss_blocks, 4);
  EXPECT_DOUBLE_EQ(st.hit_rate(), 15.0 / 32.0);
}

// The whole prompt is looked up, whatever the chunk: 16 of a 20-token prompt are cached, so
// a chunk of 2 holds 16 + 2 tokens (5 blocks), and the budget pays for the 2 only.
TEST(ChunkedPrefixCache, AdmissionHoldsEveryHitAndChunksTheTokensAfterThem) {
  PagedAllocator a = make_cached(32);
  ASSERT_TRUE(a.admit(req(1, 16, kDoc)).admitted);
  a.free(1);  // its 4 blocks stay cached, evictable
  EXPECT_EQ(a.blocks_to_admit(req(2, 20, kDocLonger, 2)), 5 - 4 + 4);  // evictable hits count
  const AdmitResult r = a.admit(req(2, 20, kDocLonger, 2));
  ASSERT_TRUE(r.admitted);
  EXPECT_EQ(r.cached_tokens, 16);
  EXPECT_EQ(r.held_tokens, 18);
  EXPECT_EQ(a.block_table(2).size(), 5u);
  a.validate();
  ASSERT_TRUE(a.append(2, 2));  // block 4 fills: cached under 15
  a.validate();
  const AdmitResult r3 = a.admit(req(3, 20, kDocLonger, 1));
  EXPECT_EQ(r3.cached_tokens, 19);
  EXPECT_EQ(r3.held_tokens, 20);
  EXPECT_EQ(a.block_table(3), a.block_table(2));
  a.validate();
}

// A chunk never holds more than the prompt (+ generated) tokens, and a chunk of 1 after a
// fully cached block-aligned prompt holds the prompt: the last token is recomputed in place.
TEST(ChunkedPrefixCache, HeldTokensStopAtThePrompt) {
  PagedAllocator a = make_cached(32);
  ASSERT_TRUE(a.admit(req(1, 16, kDoc)).admitted);
  const AdmitResult r = a.admit(req(2, 16, kDoc, 1));
  EXPECT_EQ(r.cached_tokens, 15);
  EXPECT_EQ(r.held_tokens, 16);
  const AdmitResult big = a.admit(req(3, 7, {}, 100));
  EXPECT_EQ(big.held_tokens, 7);
  a.validate();
}

// Another request computes the same blocks while a chunked one is still appending: the
// second copy is not cached (the hash keeps its first block), and when the chunked request
// frees its copies they go straight to the free list.
TEST(ChunkedPrefixCache, ABlockCachedMeanwhileElsewhereIsNotCachedTwice) {
  PagedAllocator a = make_cached(32);
  ASSERT_TRUE(a.admit(req(1, 16, kDoc, 4)).admitted);  // block 0 cached
  ASSERT_TRUE(a.admit(req(2, 16, kDoc)).admitted);     // hits block 0, caches blocks 1..3
  ASSERT_TRUE(a.append(1, 12));                        // its blocks 1..3: hashes already cached
  a.validate();
  const std::vector<BlockId> t1 = a.block_table(1), t2 = a.block_table(2);
  EXPECT_EQ(t1[0], t2[0]);
  EXPECT_NE(t1[1], t2[1]);
  const std::int64_t free_before = a.num_free_blocks();
  a.free(1);
  a.validate();
  EXPECT_EQ(a.num_free_blocks(), free_before + 3);  // block 0 is still held by sequence 2
  a.free(2);
  EXPECT_EQ(a.admit(req(3, 16, kDoc)).cached_tokens, 15);
  EXPECT_EQ(a.block_table(3), t2);
  a.validate();
}

// A re-admitted request (after a recompute preemption) finds its own blocks: the hits are
// counted apart, and the re-admission adds nothing to the first-admission counters.
TEST(ChunkedPrefixCache, ReadmissionHitsAreCountedApart) {
  PagedAllocator a = make_cached(32);
  ASSERT_TRUE(a.admit(req(1, 16, kDoc)).admitted);
  a.free(1);  // preempted by recompute
  AdmitRequest again = req(2, 16, kDoc);
  again.generated_tokens = 3;
  again.readmission = true;
  const AdmitResult r = a.admit(again);
  EXPECT_EQ(r.cached_tokens, 16);
  EXPECT_EQ(r.held_tokens, 19);
  const PrefixCacheStats st = a.stats().prefix;
  EXPECT_EQ(st.prompt_tokens, 16);
  EXPECT_EQ(st.hit_tokens, 0);
  EXPECT_EQ(st.hit_blocks, 0);
  EXPECT_EQ(st.miss_blocks, 4);
  EXPECT_EQ(st.readmission_hit_tokens, 16);
  EXPECT_DOUBLE_EQ(st.hit_rate(), 0.0);
  a.validate();
}

// Every first-admitted prompt token is in the denominator: prompts without hashes and those
// shorter than a block too, so the rate does not move with the block size.
TEST(ChunkedPrefixCache, PromptsWithoutFullBlocksCountInTheHitRate) {
  PagedAllocator a = make_cached(32);
  ASSERT_TRUE(a.admit(req(1, 16, kDoc)).admitted);
  ASSERT_TRUE(a.admit(req(2, 3, {})).admitted);
  ASSERT_TRUE(a.admit(req(3, 16, kDoc)).admitted);
  const PrefixCacheStats st = a.stats().prefix;
  EXPECT_EQ(st.prompt_tokens, 35);
  EXPECT_EQ(st.hit_tokens, 15);
  EXPECT_DOUBLE_EQ(st.hit_rate(), 15.0 / 35.0);
}

TEST(ChunkedPrefixCache, ANonPositiveChunkIsMisuse) {
  PagedAllocator a = make_cached(8);
  EXPECT_THROW(a.admit(req(1, 16, kDoc, 0)), AllocatorError);
  EXPECT_THROW((void)a.blocks_to_admit(req(1, 16, kDoc, -1)), AllocatorError);
}

}  // namespace
}  // namespace pagesim::alloc
