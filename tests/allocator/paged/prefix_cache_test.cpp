// Hand-computed cases for the prefix cache inside PagedAllocator: hits after an identical
// prefix, misses after divergence, eviction order, and block hashing.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "allocator/pool/block_hash.h"
#include "allocator/paged/paged_allocator.h"
#include "hashed_request.h"

namespace pagesim::alloc {
namespace {

// Chained hashes of the full blocks of `tokens`.
std::vector<BlockHash> hashes(const std::vector<std::int32_t>& tokens, std::int32_t bs) {
  std::vector<BlockHash> out;
  BlockHash h = kRootBlockHash;
  for (std::size_t i = 0; i + bs <= tokens.size(); i += bs) {
    h = chain_block_hash(h, std::span(tokens).subspan(i, bs));
    out.push_back(h);
  }
  return out;
}

std::vector<std::int32_t> seq_tokens(std::int32_t first, std::size_t n) {
  std::vector<std::int32_t> t(n);
  std::iota(t.begin(), t.end(), first);
  return t;
}

PagedAllocator make_cached(std::int64_t blocks, EvictionKind ev = EvictionKind::kLru) {
  PagedAllocatorSettings s;
  s.num_blocks = blocks;
  s.block_size = 4;
  s.prefix_cache = true;
  s.eviction = ev;
  return PagedAllocator(s);
}

AdmitRequest req(SeqId id, std::int64_t prompt, const std::vector<BlockHash>& h) {
  return test_support::hashed_request(id, prompt, h, /*output=*/8);
}

TEST(BlockHash, ChainedHashesDependOnTheWholePrefix) {
  auto a = hashes(seq_tokens(0, 12), 4);
  auto b = seq_tokens(0, 12);
  b[1] = 99;  // diverge in the first block
  auto hb = hashes(b, 4);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_NE(a[0], hb[0]);
  EXPECT_NE(a[2], hb[2]);  // the third block's tokens are equal, its prefix is not
  EXPECT_EQ(a, hashes(seq_tokens(0, 12), 4));
  EXPECT_NE(chain_block_hash(kRootBlockHash, 5, 0), chain_block_hash(kRootBlockHash, 5, 1));
}

TEST(PrefixCache, IdenticalPrefixHitsAndSharesBlocks) {
  PagedAllocator a = make_cached(16);
  auto h = hashes(seq_tokens(0, 10), 4);  // 2 full blocks of a 10-token prompt
  auto r1 = a.admit(req(1, 10, h));
  ASSERT_TRUE(r1.admitted);
  EXPECT_EQ(r1.cached_tokens, 0);
  auto r2 = a.admit(req(2, 10, h));
  ASSERT_TRUE(r2.admitted);
  EXPECT_EQ(r2.cached_tokens, 8);
  EXPECT_EQ(a.block_table(2)[0], a.block_table(1)[0]);
  EXPECT_EQ(a.block_table(2)[1], a.block_table(1)[1]);
  EXPECT_NE(a.block_table(2)[2], a.block_table(1)[2]);  // partial block never shared
  EXPECT_EQ(a.stats().physical_blocks, 4);
  auto st = a.stats().prefix;
  EXPECT_EQ(st.hit_blocks, 2);
  EXPECT_EQ(st.miss_blocks, 2);
  EXPECT_EQ(st.hit_tokens, 8);
  EXPECT_EQ(st.prompt_tokens, 20);
  EXPECT_DOUBLE_EQ(st.hit_rate(), 0.4);
  a.validate();
}

TEST(PrefixCache, DivergenceStopsTheHitAtTheFirstDifferentBlock) {
  PagedAllocator a = make_cached(16);
  auto t1 = seq_tokens(0, 12);
  auto t2 = t1;
  t2[5] = -1;  // second block differs
  auto h1 = hashes(t1, 4), h2 = hashes(t2, 4);
  ASSERT_TRUE(a.admit(req(1, 12, h1)).admitted);
  auto r = a.admit(req(2, 12, h2));
  EXPECT_EQ(r.cached_tokens, 4);
  EXPECT_EQ(a.block_table(2)[0], a.block_table(1)[0]);
  EXPECT_NE(a.block_table(2)[1], a.block_table(1)[1]);
  EXPECT_NE(a.block_table(2)[2], a.block_table(1)[2]);
  a.validate();
}

TEST(PrefixCache, FullyCachedPromptStillComputesOneToken) {
  PagedAllocator a = make_cached(16);
  auto h = hashes(seq_tokens(0, 8), 4);
  ASSERT_TRUE(a.admit(req(1, 8, h)).admitted);
  EXPECT_EQ(a.admit(req(2, 8, h)).cached_tokens, 7);
}

TEST(PrefixCache, FreedBlocksStayCachedAndCountAsFree) {
  PagedAllocator a = make_cached(4);
  auto h = hashes(seq_tokens(0, 8), 4);
  ASSERT_TRUE(a.admit(req(1, 8, h)).admitted);
  a.free(1);
  EXPECT_EQ(a.num_free_blocks(), 4);
  MemoryBreakdown b = a.breakdown();
  EXPECT_EQ(b.free, 16);
  EXPECT_EQ(b.cached_free, 8);
  EXPECT_EQ(a.blocks_to_admit(req(2, 8, h)), 2);  // reusing evictable blocks still takes them
  auto r = a.admit(req(2, 8, h));
  EXPECT_EQ(r.cached_tokens, 7);
  EXPECT_EQ(a.breakdown().cached_free, 0);
  EXPECT_EQ(a.breakdown().token_states, 8);
  a.validate();
}

TEST(PrefixCache, LruEvictsLeastRecentlyReleasedDeepestBlockFirst) {
  PagedAllocator a = make_cached(4);
  auto ha = hashes(seq_tokens(0, 8), 4);
  auto hb = hashes(seq_tokens(100, 8), 4);
  ASSERT_TRUE(a.admit(req(1, 8, ha)).admitted);  // blocks 0,1
  ASSERT_TRUE(a.admit(req(2, 8, hb)).admitted);  // blocks 2,3
  a.free(1);  // releases 1 then 0
  a.free(2);  // releases 3 then 2
  // LRU order now: 1, 0, 3, 2. A 4-token request with no hashes takes block 1.
  AdmitRequest plain;
  plain.seq = 3;
  plain.prompt_tokens = 4;
  ASSERT_TRUE(a.admit(plain).admitted);
  EXPECT_EQ(a.block_table(3)[0], 1);
  EXPECT_EQ(a.stats().prefix.evictions, 1);
  // A's first block survives; its second is gone.
  auto r = a.admit(req(4, 8, ha));
  EXPECT_EQ(r.cached_tokens, 4);
  EXPECT_EQ(a.block_table(4)[0], 0);
  a.validate();
}

TEST(PrefixCache, LruRefreshesOnReuseButFifoDoesNot) {
  for (EvictionKind ev : {EvictionKind::kLru, EvictionKind::kFifo}) {
    PagedAllocator a = make_cached(3, ev);
    auto ha = hashes(seq_tokens(0, 4), 4);
    auto hb = hashes(seq_tokens(50, 4), 4);
    ASSERT_TRUE(a.admit(req(1, 4, ha)).admitted);  // block 0, cached first
    ASSERT_TRUE(a.admit(req(2, 4, hb)).admitted);  // block 1
    a.free(1);
    a.free(2);
    ASSERT_TRUE(a.admit(req(3, 4, ha)).admitted);  // reuse A's block 0
    a.free(3);                                     // A released again, after B
    AdmitRequest plain;
    plain.seq = 9;
    plain.prompt_tokens = 8;  // needs 2 blocks: block 2 from the free list, then one victim
    ASSERT_TRUE(a.admit(plain).admitted);
    BlockId victim = a.block_table(9)[1];
    EXPECT_EQ(victim, ev == EvictionKind::kLru ? 1 : 0) << to_string(ev);
    a.validate();
  }
}

// One block A hit once after its first use, one block B never hit and released last:
// LRU and FIFO evict A (released / cached earlier), LFU evicts B (fewer hits).
TEST(PrefixCache, LfuKeepsTheMoreUsedBlock) {
  for (EvictionKind ev : {EvictionKind::kLru, EvictionKind::kFifo, EvictionKind::kLfu}) {
    PagedAllocator a = make_cached(4, ev);
    auto ha = hashes(seq_tokens(0, 4), 4);
    auto hb = hashes(seq_tokens(50, 4), 4);
    ASSERT_TRUE(a.admit(req(1, 4, ha)).admitted);  // block 0 cached under A, 0 hits
    a.free(1);
    ASSERT_EQ(a.admit(req(2, 4, ha)).cached_tokens, 3);  // hit: A has 1 hit
    a.free(2);
    ASSERT_TRUE(a.admit(req(3, 4, hb)).admitted);  // block 1 cached under B, 0 hits
    a.free(3);                                     // B released after A
    AdmitRequest plain;
    plain.seq = 9;
    plain.prompt_tokens = 12;  // blocks 2, 3 from the free list, then one victim
    ASSERT_TRUE(a.admit(plain).admitted);
    EXPECT_EQ(a.block_table(9)[2], ev == EvictionKind::kLfu ? 1 : 0) << to_string(ev);
    a.validate();
  }
}

// A hit on a block another request still holds counts too.
TEST(PrefixCache, LfuCountsHitsOnReferencedBlocks) {
  PagedAllocator a = make_cached(3, EvictionKind::kLfu);
  auto ha = hashes(seq_tokens(0, 4), 4);
  auto hb = hashes(seq_tokens(50, 4), 4);
  ASSERT_TRUE(a.admit(req(1, 4, ha)).admitted);        // block 0
  ASSERT_EQ(a.admit(req(2, 4, ha)).cached_tokens, 3);  // shares block 0 while 1 holds it
  a.free(1);
  a.free(2);  // A released first, with 1 hit
  ASSERT_TRUE(a.admit(req(3, 4, hb)).admitted);  // block 1
  a.free(3);
  AdmitRequest plain;
  plain.seq = 9;
  plain.prompt_tokens = 8;  // block 2, then the victim
  ASSERT_TRUE(a.admit(plain).admitted);
  EXPECT_EQ(a.block_table(9)[1], 1);
  a.validate();
}

// With equal counts LFU is LRU: the deepest block of the earliest freed prompt goes first.
TEST(PrefixCache, LfuTiesGoToTheLeastRecentlyReleased) {
  PagedAllocator a = make_cached(4, EvictionKind::kLfu);
  auto ha = hashes(seq_tokens(0, 8), 4);
  auto hb = hashes(seq_tokens(100, 8), 4);
  ASSERT_TRUE(a.admit(req(1, 8, ha)).admitted);  // blocks 0,1
  ASSERT_TRUE(a.admit(req(2, 8, hb)).admitted);  // blocks 2,3
  a.free(1);  // releases 1 then 0
  a.free(2);  // releases 3 then 2
  AdmitRequest plain;
  plain.seq = 3;
  plain.prompt_tokens = 12;  // three victims: 1, 0, 3
  ASSERT_TRUE(a.admit(plain).admitted);
  EXPECT_EQ(a.block_table(3), (std::vector<BlockId>{1, 0, 3}));
  a.validate();
}

// Two cached blocks, A released before B. LRU evicts A; once a waiting request holds A's
// hash, lru_protect_waiting evicts B instead; when it leaves the queue, A again.
TEST(PrefixCache, ProtectWaitingSparesWhatTheQueueWillHit) {
  auto ha = hashes(seq_tokens(0, 4), 4);
  auto hb = hashes(seq_tokens(50, 4), 4);
  for (int held : {0, 1, 2}) {  // 2: held, then released
    PagedAllocator a = make_cached(2, EvictionKind::kLruProtectWaiting);
    ASSERT_TRUE(a.admit(req(1, 4, ha)).admitted);  // block 0
    ASSERT_TRUE(a.admit(req(2, 4, hb)).admitted);  // block 1
    a.free(1);
    a.free(2);
    if (held >= 1) a.hold_pending_prefix(ha);
    if (held == 2) a.release_pending_prefix(ha);
    EXPECT_EQ(a.num_pending_prefix_hashes(), held == 1 ? 1 : 0);
    a.validate();
    AdmitRequest plain;
    plain.seq = 9;
    plain.prompt_tokens = 4;
    ASSERT_TRUE(a.admit(plain).admitted);
    EXPECT_EQ(a.block_table(9)[0], held == 1 ? 1 : 0) << "held " << held;
    if (held == 1) {
      EXPECT_EQ(a.admit(req(3, 4, ha)).cached_tokens, 3);  // the waiting request hits
    }
    a.validate();
  }
}

TEST(PrefixCache, ProtectWaitingCountsHoldersAndProtectsBlocksCachedLater) {
  PagedAllocator a = make_cached(3, EvictionKind::kLruProtectWaiting);
  auto ha = hashes(seq_tokens(0, 4), 4);
  auto hb = hashes(seq_tokens(50, 4), 4);
  auto hc = hashes(seq_tokens(90, 4), 4);
  a.hold_pending_prefix(ha);  // two waiting requests with prompt A, before A is cached
  a.hold_pending_prefix(ha);
  a.release_pending_prefix(ha);  // one of them left: A still held once
  ASSERT_TRUE(a.admit(req(1, 4, ha)).admitted);  // block 0, protected as it is cached
  ASSERT_TRUE(a.admit(req(2, 4, hb)).admitted);  // block 1
  ASSERT_TRUE(a.admit(req(3, 4, hc)).admitted);  // block 2
  a.hold_pending_prefix(hc);
  a.free(1);
  a.free(2);
  a.free(3);  // release order 0, 1, 2; protected 0 and 2
  a.validate();
  AdmitRequest plain;
  plain.seq = 9;
  plain.prompt_tokens = 12;  // all three: unprotected 1, then protected by LRU: 0, 2
  ASSERT_TRUE(a.admit(plain).admitted);
  EXPECT_EQ(a.block_table(9), (std::vector<BlockId>{1, 0, 2}));
  a.validate();
  a.release_pending_prefix(ha);
  a.release_pending_prefix(hc);
  EXPECT_EQ(a.num_pending_prefix_hashes(), 0);
  EXPECT_THROW(a.release_pending_prefix(ha), AllocatorError);  // no waiting request holds it
}

TEST(PrefixCache, OtherPoliciesIgnoreTheWaitingQueue) {
  PagedAllocator a = make_cached(2, EvictionKind::kLru);
  auto ha = hashes(seq_tokens(0, 4), 4);
  a.hold_pending_prefix(ha);
  EXPECT_EQ(a.num_pending_prefix_hashes(), 0);
  a.release_pending_prefix(ha);
  a.release_pending_prefix(ha);  // not tracked, so not checked
  a.validate();
}

TEST(PrefixCache, EvictionKindNames) {
  ASSERT_EQ(kEvictionKindNames.size(), 4u);
  EXPECT_EQ(to_string(EvictionKind::kLru), "lru");
  EXPECT_EQ(to_string(EvictionKind::kFifo), "fifo");
  EXPECT_EQ(to_string(EvictionKind::kLfu), "lfu");
  EXPECT_EQ(to_string(EvictionKind::kLruProtectWaiting), "lru_protect_waiting");
  EXPECT_EQ(to_string(static_cast<EvictionKind>(7)), "?");
  // Each table entry is its value's name, and the policies call themselves by it.
  for (const auto& [kind, name] : kEvictionKindNames) {
    EXPECT_EQ(to_string(kind), name);
    EXPECT_EQ(make_eviction_policy(kind, 4)->name(), name);
  }
}

TEST(PrefixCache, TooManyHashesForThePromptIsMisuse) {
  PagedAllocator a = make_cached(8);
  auto h = hashes(seq_tokens(0, 8), 4);
  EXPECT_THROW(a.admit(req(1, 7, h)), AllocatorError);
}

}  // namespace
}  // namespace pagesim::alloc
