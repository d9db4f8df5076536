// Hand-traced cases of the offload tiers inside PagedAllocator: where evicted blocks go,
// what a lower-tier hit loads and what the transfers cost, the CPU budget shared with swap
// preemption, write-through, and the settings refused.
#include <gtest/gtest.h>

#include <vector>

#include "allocator/paged/paged_allocator.h"
#include "allocator/tier/tier_stack.h"

namespace pagesim::alloc {
namespace {

constexpr double kBytesPerBlock = 1e6;

// Prompt block keys of document `doc`: equal documents share prefixes block by block.
std::vector<BlockHash> keys(std::int64_t doc, std::int64_t blocks) {
  std::vector<BlockHash> out;
  for (std::int64_t i = 0; i < blocks; ++i) out.push_back(static_cast<BlockHash>(doc * 1000 + i + 1));
  return out;
}

TierSettings tier(TierKind kind, std::int64_t capacity) {
  TierSettings t;
  t.kind = kind;
  t.capacity_blocks = capacity;
  t.read_bytes_per_s = kind == TierKind::kCpu ? 1e9 : 1e8;   // 1 ms / 10 ms per block
  t.write_bytes_per_s = kind == TierKind::kCpu ? 5e8 : 5e7;  // 2 ms / 20 ms per block
  t.latency_s = kind == TierKind::kCpu ? 1e-4 : 1e-3;
  return t;
}

PagedAllocatorSettings settings(std::int64_t gpu_blocks, std::int64_t cpu_blocks, std::vector<TierSettings> tiers,
                                TierWritePolicy policy = TierWritePolicy::kWriteBack) {
  PagedAllocatorSettings s;
  s.num_blocks = gpu_blocks;
  s.block_size = 4;
  s.num_cpu_blocks = cpu_blocks;
  s.prefix_cache = true;
  s.offload.tiers = std::move(tiers);
  s.offload.write_policy = policy;
  s.offload.bytes_per_block = kBytesPerBlock;
  return s;
}

AdmitResult admit(PagedAllocator& a, SeqId id, const std::vector<BlockHash>& k, std::int64_t prompt) {
  AdmitRequest r;
  r.seq = id;
  r.prompt_tokens = prompt;
  r.output_tokens = 4;
  r.prompt_block_hashes = k;
  AdmitResult res = a.admit(r);
  a.validate();
  return res;
}

TEST(TierStack, WriteBackMovesEvictedBlocksDownAndLoadsThemBack) {
  PagedAllocator a(settings(4, 8, {tier(TierKind::kCpu, 4)}));
  const auto doc_a = keys(1, 2), doc_b = keys(2, 4);
  ASSERT_TRUE(admit(a, 1, doc_a, 8).admitted);
  a.free(1);  // A1 released first, then A0: both evictable
  EXPECT_TRUE(a.take_tier_transfer().empty());
  // B needs all 4 GPU blocks: 2 free, then A1 and A0 are evicted into the CPU tier.
  ASSERT_TRUE(admit(a, 2, doc_b, 16).admitted);
  const TierStack& t = *a.tiers();
  EXPECT_EQ(t.tier(0).size(), 2);
  EXPECT_TRUE(t.tier(0).contains(doc_a[0]));
  EXPECT_TRUE(t.tier(0).contains(doc_a[1]));
  TierTransfer tr = a.take_tier_transfer();
  EXPECT_EQ(tr.stored_blocks, 2);
  EXPECT_EQ(tr.loaded_blocks, 0);
  EXPECT_DOUBLE_EQ(tr.seconds, 1e-4 + 2 * 2e-3);  // one batched write: latency + 2 blocks
  a.free(2);
  // A again (9 tokens): both prompt blocks are found in the CPU tier and loaded; the third
  // block is new. 3 GPU blocks are taken: B3, B2, B1 move down into the tier.
  EXPECT_EQ(a.cached_prefix_tokens(doc_a), 8);
  AdmitRequest probe;
  probe.seq = 3;
  probe.prompt_tokens = 9;
  probe.output_tokens = 4;
  probe.prompt_block_hashes = doc_a;
  EXPECT_EQ(a.blocks_to_admit(probe), 3);
  const AdmitResult res = admit(a, 3, doc_a, 9);
  ASSERT_TRUE(res.admitted);
  EXPECT_EQ(res.cached_tokens, 8);
  EXPECT_EQ(t.counters(0).hit_tokens, 8);
  EXPECT_EQ(t.counters(0).loaded_blocks, 2);
  EXPECT_EQ(t.tier(0).size(), 3);  // A's blocks left the tier (write_back), B3..B1 came in
  EXPECT_FALSE(t.tier(0).contains(doc_a[0]));
  EXPECT_TRUE(t.tier(0).contains(doc_b[3]));
  tr = a.take_tier_transfer();
  EXPECT_EQ(tr.loaded_blocks, 2);
  EXPECT_EQ(tr.stored_blocks, 3);
  EXPECT_DOUBLE_EQ(tr.seconds, (1e-4 + 2 * 1e-3) + (1e-4 + 3 * 2e-3));
  EXPECT_EQ(a.breakdown().token_states, 9);
}

TEST(TierStack, VictimsCascadeToDiskAndFallOffTheLastTier) {
  PagedAllocator a(settings(2, 4, {tier(TierKind::kCpu, 1), tier(TierKind::kDisk, 1)}));
  // Four documents of one cached block each (8 tokens: the second block is not a prompt
  // block key), each admission evicting the document before it from the GPU.
  for (SeqId id = 1; id <= 4; ++id) {
    ASSERT_TRUE(admit(a, id, keys(static_cast<std::int64_t>(id), 1), 8).admitted);
    a.free(id);
  }
  // The GPU evicted docs 1, 2, 3 in that order: the CPU tier (1 block) holds 3, disk (1
  // block) holds 2, doc 1 fell off the disk.
  const TierStack& t = *a.tiers();
  EXPECT_TRUE(t.tier(0).contains(keys(3, 1)[0]));
  EXPECT_TRUE(t.tier(1).contains(keys(2, 1)[0]));
  EXPECT_EQ(t.find(keys(1, 1)[0]), -1);
  EXPECT_EQ(t.dropped_blocks(), 1);
  EXPECT_EQ(t.counters(0).stored_blocks, 3);
  EXPECT_EQ(t.counters(0).evicted_blocks, 2);
  EXPECT_EQ(t.counters(1).stored_blocks, 2);
  // A disk hit: doc 2 loads from disk at its bandwidth.
  a.take_tier_transfer();
  ASSERT_TRUE(admit(a, 9, keys(2, 1), 5).admitted);
  EXPECT_EQ(t.counters(1).hit_tokens, 4);
  const TierTransfer tr = a.take_tier_transfer();
  EXPECT_EQ(tr.loaded_blocks, 1);
  // Loading doc 2 (disk read) took a GPU block: doc 4's block moved to CPU (CPU write), doc
  // 3 from CPU to disk (disk write, into the slot doc 2's load freed). The CPU-to-disk move
  // is the host's: the GPU pays the disk read and the CPU write only.
  EXPECT_DOUBLE_EQ(tr.seconds, (1e-3 + 1e-2) + (1e-4 + 2e-3));
  EXPECT_EQ(tr.stored_blocks, 1);
  EXPECT_EQ(t.counters(1).stored_blocks, 3);
  EXPECT_TRUE(t.tier(1).contains(keys(3, 1)[0]));
}

TEST(TierStack, SwapOutTakesCpuBlocksFromTheTierNeverCountingOneTwice) {
  // CPU budget 4 blocks, shared: the CPU tier may fill all of it while nothing is swapped.
  PagedAllocator a(settings(4, 4, {tier(TierKind::kCpu, 4)}));
  ASSERT_TRUE(admit(a, 1, keys(1, 3), 12).admitted);
  a.free(1);
  ASSERT_TRUE(admit(a, 2, keys(2, 4), 16).admitted);  // evicts doc 1's 3 blocks into the tier
  a.free(2);
  EXPECT_EQ(a.tiers()->tier(0).size(), 3);
  EXPECT_EQ(a.num_free_cpu_blocks(), 1);
  // A 3-block sequence evicts 3 of doc 2's blocks: the tier fills the whole budget (4),
  // dropping 2 (there is no tier below).
  ASSERT_TRUE(admit(a, 3, keys(3, 2), 9).admitted);
  EXPECT_EQ(a.tiers()->tier(0).size(), 4);
  EXPECT_EQ(a.tiers()->dropped_blocks(), 2);
  EXPECT_EQ(a.num_free_cpu_blocks(), 0);
  // It swaps out: its 3 CPU blocks are reclaimed from the tier (dropped).
  const SeqId group[] = {3};
  ASSERT_TRUE(a.swap_out(group).has_value());
  a.validate();
  EXPECT_EQ(a.tiers()->tier(0).size(), 1);
  EXPECT_EQ(a.tiers()->dropped_blocks(), 5);
  EXPECT_EQ(a.num_free_cpu_blocks(), 0);  // 3 swapped + 1 tier + 0 free == 4
  // The tier cannot grow while swap holds the rest: each store replaces its one block.
  ASSERT_TRUE(admit(a, 4, keys(4, 4), 16).admitted);  // evicts 3 cached GPU blocks
  EXPECT_EQ(a.tiers()->tier(0).size(), 1);
  EXPECT_EQ(a.tiers()->dropped_blocks(), 8);
  // No more to reclaim than the tier holds: a 4-block swap-out is refused, nothing changes.
  const SeqId group4[] = {4};
  EXPECT_FALSE(a.swap_out(group4).has_value());
  a.validate();
  a.free(4);
  ASSERT_TRUE(a.swap_in(group).has_value());
  a.validate();
  // Swap-in freed the CPU blocks: the tier may use them again, never beyond the budget.
  EXPECT_EQ(a.num_free_cpu_blocks() + a.tiers()->tier(0).size(), 4);
}

TEST(TierStack, WriteThroughStoresAtCachingAndKeepsCopiesOnLoad) {
  PagedAllocator a(settings(4, 8, {tier(TierKind::kCpu, 8)}, TierWritePolicy::kWriteThrough));
  ASSERT_TRUE(admit(a, 1, keys(1, 2), 8).admitted);
  EXPECT_EQ(a.tiers()->tier(0).size(), 2);  // written as soon as cached
  TierTransfer tr = a.take_tier_transfer();
  EXPECT_EQ(tr.stored_blocks, 2);
  a.free(1);
  ASSERT_TRUE(admit(a, 2, keys(2, 4), 16).admitted);  // evicts doc 1 from the GPU: no write
  tr = a.take_tier_transfer();
  EXPECT_EQ(tr.stored_blocks, 4);  // doc 2's own blocks, written through
  a.free(2);
  ASSERT_TRUE(admit(a, 3, keys(1, 2), 9).admitted);
  EXPECT_EQ(a.tiers()->counters(0).hit_tokens, 8);
  EXPECT_TRUE(a.tiers()->tier(0).contains(keys(1, 2)[0]));  // the copy stays
  tr = a.take_tier_transfer();
  EXPECT_EQ(tr.loaded_blocks, 2);
  EXPECT_EQ(tr.stored_blocks, 0);
}

TEST(TierStack, RefusesMeaninglessSettings) {
  auto bad = [](PagedAllocatorSettings s) { EXPECT_THROW(PagedAllocator{s}, AllocatorError); };
  PagedAllocatorSettings no_cache = settings(4, 8, {tier(TierKind::kCpu, 4)});
  no_cache.prefix_cache = false;
  bad(no_cache);
  bad(settings(4, 8, {tier(TierKind::kCpu, 9)}));  // larger than the shared CPU budget
  bad(settings(4, 8, {tier(TierKind::kDisk, 4), tier(TierKind::kCpu, 4)}));
  bad(settings(4, 8, {tier(TierKind::kDisk, 4), tier(TierKind::kDisk, 4)}));
  bad(settings(4, 8, {tier(TierKind::kDisk, 0)}));
  TierSettings slow = tier(TierKind::kDisk, 4);
  slow.read_bytes_per_s = 0;
  bad(settings(4, 8, {slow}));
  TierSettings protect = tier(TierKind::kDisk, 4);
  protect.eviction = EvictionKind::kLruProtectWaiting;
  bad(settings(4, 8, {protect}));
  PagedAllocatorSettings no_bytes = settings(4, 8, {tier(TierKind::kDisk, 4)});
  no_bytes.offload.bytes_per_block = 0;
  bad(no_bytes);
}

}  // namespace
}  // namespace pagesim::alloc
