// RadixAllocator: hand-computed cases of matching, insertion, locking, LRU eviction of
// unreferenced leaves and the memory classes; validate() after every operation.
#include "allocator/radix/radix_allocator.h"

#include <gtest/gtest.h>

#include <vector>

#include "hashed_request.h"

namespace pagesim::alloc {
namespace {

RadixAllocator pool(std::int64_t pages, std::int32_t page_size = 1) {
  RadixAllocatorSettings s;
  s.num_pages = pages;
  s.page_size = page_size;
  return RadixAllocator(s);
}

AdmitRequest req(SeqId seq, std::int64_t prompt, std::int64_t output, const std::vector<BlockHash>& keys) {
  return test_support::hashed_request(seq, prompt, keys, output);
}

TEST(RadixAllocator, RejectsBadSettings) {
  EXPECT_THROW(pool(0), AllocatorError);
  EXPECT_THROW(pool(4, 0), AllocatorError);
}

// Page size 1: a prompt of 5 tokens keyed {1,2,3,4,5}, then one sharing 3 tokens. The
// second hits 3 tokens, its 4th and 5th tokens branch off page 2.
TEST(RadixAllocator, MatchesTheLongestPrefixTokenByToken) {
  auto a = pool(16);
  const std::vector<BlockHash> k1{1, 2, 3, 4, 5}, k2{1, 2, 3, 9, 8};
  AdmitResult r1 = a.admit(req(1, 5, 2, k1));
  ASSERT_TRUE(r1.admitted);
  EXPECT_EQ(r1.cached_tokens, 0);
  a.validate();
  EXPECT_EQ(a.match_pages(k2), 3);
  AdmitResult r2 = a.admit(req(2, 5, 2, k2));
  ASSERT_TRUE(r2.admitted);
  EXPECT_EQ(r2.cached_tokens, 3);
  a.validate();
  // 5 + 2 pages owned; shared pages count once.
  EXPECT_EQ(a.breakdown().token_states, 7);
  EXPECT_EQ(a.breakdown().free, 9);
  EXPECT_EQ(a.stats().logical_blocks, 10);
  EXPECT_EQ(a.stats().physical_blocks, 7);
  EXPECT_EQ(a.block_table(2)[2], a.block_table(1)[2]);
  EXPECT_NE(a.block_table(2)[3], a.block_table(1)[3]);
  EXPECT_EQ(a.stats().prefix.hit_tokens, 3);
  EXPECT_EQ(a.stats().prefix.prompt_tokens, 10);
}

// A fully cached prompt still computes its last token (SGLang's input_len - 1 cap).
TEST(RadixAllocator, LastPromptTokenIsAlwaysComputed) {
  auto a = pool(16);
  const std::vector<BlockHash> k{1, 2, 3, 4};
  ASSERT_TRUE(a.admit(req(1, 4, 1, k)).admitted);
  a.free(1);
  a.validate();
  EXPECT_EQ(a.breakdown().cached_free, 4);
  AdmitResult r = a.admit(req(2, 4, 1, k));
  EXPECT_EQ(r.cached_tokens, 3);
  a.validate();
  // The last token is computed again, and its page, keyed like the cached page 3, is
  // swapped for it (SGLang's insert keeps the tree's copy): nothing is left cached-free.
  EXPECT_EQ(a.breakdown().cached_free, 0);
  EXPECT_EQ(a.breakdown().token_states, 4);
  EXPECT_EQ(a.block_table(2), std::vector<BlockId>({0, 1, 2, 3}));
}

// Freed prompts stay cached (cached_free, inside free). A new prompt needing more pages
// than are free evicts unreferenced leaves, least recently used first, each with its whole
// run (SGLang's RadixCache.evict frees whole nodes): A's 3 pages go though 2 were needed.
TEST(RadixAllocator, EvictsUnreferencedLeavesLeastRecentlyUsedFirst) {
  auto a = pool(6);
  const std::vector<BlockHash> ka{1, 2, 3}, kb{7, 8, 9};
  ASSERT_TRUE(a.admit(req(1, 3, 1, ka)).admitted);  // pages 0,1,2: one run
  ASSERT_TRUE(a.admit(req(2, 3, 1, kb)).admitted);  // pages 3,4,5: one run
  a.free(1);  // A's path freed first: older
  a.free(2);
  a.validate();
  MemoryBreakdown b = a.breakdown();
  EXPECT_EQ(b.free, 6);
  EXPECT_EQ(b.cached_free, 6);
  EXPECT_EQ(b.token_states, 0);
  // 2 fresh pages: A's leaf (2) goes with its run, pages 1 and 0.
  const std::vector<BlockHash> kc{5, 6};
  ASSERT_TRUE(a.admit(req(3, 2, 1, kc)).admitted);
  a.validate();
  EXPECT_EQ(a.stats().prefix.evictions, 3);
  EXPECT_EQ(a.match_pages(ka), 0);
  EXPECT_EQ(a.match_pages(kb), 3);
  EXPECT_EQ(a.breakdown().cached_free, 3);
}

// Runs split where a match ends and where a sibling joins (RadixCache._split_node): A's
// pages 0,1,2; B shares 0,1 and adds page 3 beside 2, leaving runs [0,1], [2], [3]. One
// page short, the LRU leaf 2 goes alone; two more pages short, 3 goes, then [0,1].
TEST(RadixAllocator, EvictionFollowsTheSplitRuns) {
  auto a = pool(5);
  const std::vector<BlockHash> ka{1, 2, 3}, kb{1, 2, 9};
  ASSERT_TRUE(a.admit(req(1, 3, 1, ka)).admitted);
  a.free(1);
  AdmitResult rb = a.admit(req(2, 3, 1, kb));
  ASSERT_TRUE(rb.admitted);
  EXPECT_EQ(rb.cached_tokens, 2);
  a.free(2);
  a.validate();
  ASSERT_TRUE(a.admit(req(3, 2, 1, {5, 6})).admitted);  // page 4 free, one eviction
  a.validate();
  EXPECT_EQ(a.stats().prefix.evictions, 1);
  EXPECT_EQ(a.match_pages(ka), 2);
  EXPECT_EQ(a.match_pages(kb), 3);
  ASSERT_TRUE(a.admit(req(4, 2, 1, {})).admitted);  // evicts [3], then [0,1]
  a.validate();
  EXPECT_EQ(a.stats().prefix.evictions, 4);
  EXPECT_EQ(a.match_pages(kb), 0);
  EXPECT_EQ(a.breakdown().free, 1);
}

// A referenced path cannot be evicted; the pool reports no room instead.
TEST(RadixAllocator, LockedPagesAreNeverEvicted) {
  auto a = pool(4);
  const std::vector<BlockHash> k{1, 2, 3};
  ASSERT_TRUE(a.admit(req(1, 3, 1, k)).admitted);
  EXPECT_FALSE(a.can_admit(req(2, 2, 1, {})));
  EXPECT_FALSE(a.admit(req(2, 2, 1, {})).admitted);
  a.validate();
  // Sharing two of the locked pages costs one fresh page only.
  const std::vector<BlockHash> k2{1, 2, 4};
  EXPECT_EQ(a.pages_to_admit(req(2, 3, 1, k2), 100), 1);
  ASSERT_TRUE(a.admit(req(2, 3, 1, k2)).admitted);
  a.validate();
  EXPECT_EQ(a.num_available_pages(), 0);
}

// Page size 4: only whole pages match; the rest of a page is rounding.
TEST(RadixAllocator, PagesMatchWhole) {
  auto a = pool(8, 4);
  const std::vector<BlockHash> k1{11, 12}, k2{11, 13};
  ASSERT_TRUE(a.admit(req(1, 10, 3, k1)).admitted);  // 3 pages, 2 keyed
  a.validate();
  EXPECT_EQ(a.breakdown().token_states, 10);
  EXPECT_EQ(a.breakdown().rounding, 2);
  AdmitResult r = a.admit(req(2, 9, 1, k2));
  EXPECT_EQ(r.cached_tokens, 4);
  a.validate();
  ASSERT_TRUE(a.append(2, 3));  // 12 tokens: still 3 pages
  EXPECT_EQ(a.sequence_tokens(2), 12);
  EXPECT_EQ(a.block_table(2).size(), 3u);
  a.validate();
}

// admit_matched caps the hits at a match made earlier: pages inserted since then (this
// iteration's other admissions) are computed again, then swapped for the tree's copies
// (SGLang's insert frees the duplicate KV), so only one copy stays.
TEST(RadixAllocator, AdmitMatchedIgnoresPagesInsertedSince) {
  auto a = pool(16);
  const std::vector<BlockHash> k{1, 2, 3, 4};
  const std::int64_t matched_before = a.match_pages(k);
  const std::uint64_t clock_before = a.clock();
  ASSERT_TRUE(a.admit(req(1, 4, 1, k)).admitted);
  EXPECT_EQ(a.match_pages(k), 4);
  EXPECT_EQ(a.match_pages(k, clock_before), 0);  // inserted after the clock reading
  AdmitResult r = a.admit_matched(req(2, 4, 1, k), matched_before);
  ASSERT_TRUE(r.admitted);
  EXPECT_EQ(r.cached_tokens, 0);
  EXPECT_EQ(r.held_tokens, 4);
  a.validate();
  EXPECT_EQ(a.breakdown().token_states, 4);
  EXPECT_EQ(a.block_table(2), a.block_table(1));
  a.free(2);
  a.validate();
  EXPECT_EQ(a.breakdown().free, 12);
  EXPECT_EQ(a.breakdown().cached_free, 0);
}

// The duplicate swap happens page by page along the path: a prompt that extends one
// inserted in the same iteration takes the shared pages and inserts its own beyond them.
TEST(RadixAllocator, InBatchDuplicateLetsTheRestJoinTheTree) {
  auto a = pool(16);
  const std::vector<BlockHash> ka{1, 2}, kb{1, 2, 3, 4};
  const std::uint64_t clock_before = a.clock();
  ASSERT_TRUE(a.admit(req(1, 3, 1, ka)).admitted);
  ASSERT_TRUE(a.admit_matched(req(2, 5, 1, kb), a.match_pages(kb, clock_before)).admitted);
  a.validate();
  EXPECT_EQ(a.match_pages(kb), 4);
  EXPECT_EQ(a.stats().physical_blocks, 6);  // A's 3 pages, B's pages 3, 4 and its last
}

// Chunked prefill: admit() looks up the whole prompt and holds the hits plus at most
// max_new_tokens; append() inserts later chunks' full pages, even a page filled across two
// chunks.
TEST(RadixAllocator, LaterChunksJoinTheTreeAsTheyFillPages) {
  auto a = pool(16, 2);
  const std::vector<BlockHash> k{1, 2, 3, 4};  // 9-token prompt, 4 full pages of 2
  AdmitRequest first = req(1, 9, 5, k);
  first.max_new_tokens = 3;
  AdmitResult r = a.admit(first);
  ASSERT_TRUE(r.admitted);
  EXPECT_EQ(r.held_tokens, 3);
  EXPECT_EQ(a.match_pages(k), 1);  // page 1 is half full
  ASSERT_TRUE(a.append(1, 2));     // 5 tokens: pages 0 and 1 full
  a.validate();
  EXPECT_EQ(a.match_pages(k), 2);
  ASSERT_TRUE(a.append(1, 4));
  a.validate();
  EXPECT_EQ(a.match_pages(k), 4);
  // Another request with this prompt hits all 4 pages (8 tokens, all but the last); the one
  // token left fits its 2-token chunk, so it holds the whole prompt.
  AdmitRequest second = req(2, 9, 5, k);
  second.max_new_tokens = 2;
  r = a.admit(second);
  EXPECT_EQ(r.cached_tokens, 8);
  EXPECT_EQ(r.held_tokens, 9);
  a.validate();
}

// First admissions count every prompt token (hash-less and sub-page prompts too) and their
// hits; a re-admission after a recompute preemption counts its hits apart.
TEST(RadixAllocator, ReadmissionHitsAreCountedApart) {
  auto a = pool(32, 2);
  const std::vector<BlockHash> k{1, 2, 3};
  ASSERT_TRUE(a.admit(req(1, 7, 4, k)).admitted);
  ASSERT_TRUE(a.admit(req(2, 1, 4, {})).admitted);  // shorter than a page, no keys
  a.free(1);
  AdmitRequest back = req(3, 7, 4, k);
  back.generated_tokens = 2;
  back.readmission = true;
  AdmitResult r = a.admit(back);
  EXPECT_EQ(r.cached_tokens, 6);
  EXPECT_EQ(r.held_tokens, 9);
  a.validate();
  const PrefixCacheStats st = a.stats().prefix;
  EXPECT_EQ(st.prompt_tokens, 8);
  EXPECT_EQ(st.hit_tokens, 0);
  EXPECT_EQ(st.miss_blocks, 3);
  EXPECT_EQ(st.hit_blocks, 0);
  EXPECT_EQ(st.readmission_hit_tokens, 6);
  EXPECT_DOUBLE_EQ(st.hit_rate(), 0.0);
}

// cached_prefix_tokens (the prefix_aware router's question) is the match in tokens, and
// changes nothing: no hit counted, no recency touched (the LRU victim stays the same).
TEST(RadixAllocator, CachedPrefixTokensTouchesNothing) {
  auto a = pool(4);
  const std::vector<BlockHash> ka{1, 2}, kb{5, 6};
  ASSERT_TRUE(a.admit(req(1, 2, 1, ka)).admitted);
  ASSERT_TRUE(a.admit(req(2, 2, 1, kb)).admitted);
  a.free(1);
  a.free(2);
  const std::vector<BlockHash> probe{1, 2, 9};
  EXPECT_EQ(a.cached_prefix_tokens(probe), 2);
  EXPECT_EQ(a.cached_prefix_tokens(kb), 2);
  EXPECT_EQ(a.stats().prefix.prompt_tokens, 4);
  EXPECT_EQ(a.stats().prefix.hit_tokens, 0);
  // Two fresh pages: A's path, the least recently used, goes.
  ASSERT_TRUE(a.admit(req(3, 2, 1, {})).admitted);
  a.validate();
  EXPECT_EQ(a.cached_prefix_tokens(ka), 0);
  EXPECT_EQ(a.cached_prefix_tokens(kb), 2);
}

// fork shares tree pages and copies private ones, queueing the copies.
TEST(RadixAllocator, ForkSharesTreePagesAndCopiesPrivateOnes) {
  auto a = pool(16, 2);
  const std::vector<BlockHash> k{1, 2};
  ASSERT_TRUE(a.admit(req(1, 5, 4, k)).admitted);  // 2 tree pages + 1 private (1 token)
  ASSERT_TRUE(a.fork(1, 2));
  a.validate();
  const auto copies = a.take_pending_copies();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].src, a.block_table(1)[2]);
  EXPECT_EQ(copies[0].dst, a.block_table(2)[2]);
  EXPECT_EQ(a.breakdown().token_states, 6);
  EXPECT_EQ(a.breakdown().rounding, 2);
  a.free(1);
  a.free(2);
  a.validate();
  EXPECT_EQ(a.breakdown().cached_free, 4);
  EXPECT_THROW(a.free(2), AllocatorError);
}

}  // namespace
}  // namespace pagesim::alloc
