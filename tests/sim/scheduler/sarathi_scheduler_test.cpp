// Prefix-cache hits under the paged pool's schedulers: chunked prefill (sarathi) and the
// re-admission of a recompute-preempted request (vllm), hand-traced.
#include <gtest/gtest.h>

#include "allocator/paged/paged_allocator.h"
#include "sim_harness.h"

namespace pagesim::sim {
namespace {

using testing::parse_csv;
using testing::trace_req;

// Budget 8 tokens, blocks of 4 with the prefix cache. r0 (16 tokens, hash ids 1..4) runs
// in two chunks; each chunk's full blocks are cached as they are filled, so all four are
// cached when it finishes at t = 2. At t = 5 r1 (12 tokens, ids 1..3) and r2 (7 tokens, no
// ids) arrive. Admission looks r1's whole prompt up: its three blocks are cached, so only its
// last token is computed (11 cached), 7 tokens of the budget are left and r2's whole prompt
// fits in the same iteration: both finish at t = 6. Cached tokens cost no budget.
TEST(SarathiPrefixCache, CachedTokensDoNotSpendTheTokenBudget) {
  alloc::PagedAllocatorSettings ps;
  ps.num_blocks = 100;
  ps.block_size = 4;
  ps.prefix_cache = true;
  alloc::PagedAllocator a(ps);
  SchedulerSettings s;
  s.kind = SchedulerKind::kSarathi;
  s.watermark = 0;
  s.chunk_tokens = 8;
  auto r0 = trace_req(0, 0, 16, 1);
  r0.hash_ids = {1, 2, 3, 4};
  auto r1 = trace_req(1, 5, 12, 1);
  r1.hash_ids = {1, 2, 3};
  auto r2 = trace_req(2, 5, 7, 1);
  auto o = testing::simulate_hashed({r0, r1, r2}, 4, a, s);
  EXPECT_EQ(o.request(0).at("cached_tokens"), "0");
  EXPECT_EQ(o.request(1).at("cached_tokens"), "11");
  EXPECT_EQ(o.iterations[2].at("prefill_tokens"), "8");  // 1 of r1 + 7 of r2
  EXPECT_EQ(o.iterations[2].at("prefix_prompt_tokens"), "19");
  EXPECT_EQ(o.iterations[2].at("prefix_hit_tokens"), "11");
  EXPECT_DOUBLE_EQ(o.value(2, "finish_s"), 6);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 6);
  // Hit rate over all first-admitted prompt tokens, r2's (no hash ids) included.
  ASSERT_TRUE(o.summary.prefix_cache.has_value());
  EXPECT_EQ(o.summary.prefix_cache->prompt_tokens, 16 + 12 + 7);
  EXPECT_EQ(o.summary.prefix_cache->hit_tokens, 11);
  EXPECT_DOUBLE_EQ(o.summary.prefix_hit_rate, 11.0 / 35.0);
  a.validate();
}

// vllm, blocks of 4, a pool of 5, one iteration per second, no shared prefix. r0 and r1
// (8-token prompts, ids 1 2 and 3 4, 8 output tokens) are admitted at t = 0 (2 blocks each).
// At t = 1 r0 takes the last free block; r1 finds none and preempts itself (recompute): its
// two cached blocks become evictable. It needs 3 blocks (8 + 1 generated tokens) minus its
// hits, but hits on evictable blocks cost their block, so it waits; at t = 5 r0's fourth
// block evicts the block of id 4 (released first, least recent). r0 finishes at t = 8 and r1
// comes back finding the block of id 3 only: 4 tokens, its own, a re-admission hit. The hit
// rate of first admissions is 0 of 16 prompt tokens. r1 computes 5 tokens, grows a fourth
// block at t = 12 (evicting r0's block of id 2) and finishes at t = 15.
TEST(VllmPrefixCache, ReadmissionHitsOnItsOwnBlocksAreNotHits) {
  alloc::PagedAllocatorSettings ps;
  ps.num_blocks = 5;
  ps.block_size = 4;
  ps.prefix_cache = true;
  alloc::PagedAllocator a(ps);
  SchedulerSettings s;
  s.kind = SchedulerKind::kVllm;
  s.watermark = 0;
  auto r0 = trace_req(0, 0, 8, 8);
  r0.hash_ids = {1, 2};
  auto r1 = trace_req(1, 0, 8, 8);
  r1.hash_ids = {3, 4};
  auto o = testing::simulate_hashed({r0, r1}, 4, a, s);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 8);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 15);
  EXPECT_EQ(o.request(1).at("preemptions"), "1");
  EXPECT_EQ(o.request(1).at("cached_tokens"), "0");
  EXPECT_EQ(o.request(1).at("readmission_cached_tokens"), "4");
  EXPECT_EQ(o.request(1).at("recomputed_tokens"), "5");
  ASSERT_EQ(o.iterations.size(), 15u);
  EXPECT_EQ(o.iterations[0].at("prefix_prompt_tokens"), "16");
  EXPECT_EQ(o.iterations[8].at("prefix_prompt_tokens"), "0");
  EXPECT_EQ(o.iterations[8].at("readmission_hit_tokens"), "4");
  EXPECT_EQ(o.iterations[8].at("prefill_tokens"), "5");
  EXPECT_EQ(o.iterations[5].at("evicted_blocks"), "1");
  EXPECT_EQ(o.iterations[12].at("evicted_blocks"), "1");
  ASSERT_TRUE(o.summary.prefix_cache.has_value());
  const PrefixCacheSummary& p = *o.summary.prefix_cache;
  EXPECT_EQ(p.prompt_tokens, 16);
  EXPECT_EQ(p.hit_tokens, 0);
  EXPECT_EQ(p.readmission_hit_tokens, 4);
  EXPECT_EQ(p.hit_blocks, 0);
  EXPECT_EQ(p.miss_blocks, 4);
  EXPECT_EQ(p.evicted_blocks, 2);
  EXPECT_EQ(o.summary.prefix_hit_rate, 0.0);
}

}  // namespace
}  // namespace pagesim::sim
