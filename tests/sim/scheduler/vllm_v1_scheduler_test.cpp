// vllm-v1 on small traces whose timelines were worked out by hand, under a constant cost
// model of 1 s per iteration: the one token budget over running then waiting requests,
// preemption of the last admitted request with no admission in that step, whole-block
// prefix hits, and re-admission hits that rule out a preempt/re-admit livelock.
#include <gtest/gtest.h>

#include "allocator/paged/paged_allocator.h"
#include "sim_harness.h"

namespace pagesim::sim {
namespace {

using testing::parse_csv;
using testing::trace_req;

// The pool as the experiment builds it for vllm-v1: vLLM v1's single free-block queue.
alloc::PagedAllocator v1_pool(std::int64_t blocks, std::int32_t bs, bool prefix_cache) {
  alloc::PagedAllocatorSettings s;
  s.num_blocks = blocks;
  s.block_size = bs;
  s.prefix_cache = prefix_cache;
  s.single_free_queue = true;
  return alloc::PagedAllocator(s);
}

SchedulerSettings v1(std::int64_t budget) {
  SchedulerSettings s;
  s.kind = SchedulerKind::kVllmV1;
  s.max_num_batched_tokens = budget;
  return s;
}

// Budget 8, blocks of 4. r0 (20, 2) and r1 (4, 2) at 0. it0: waiting FCFS: r0 takes the
// whole budget (chunk 8), r1 waits. it1: running r0 gets its next 8. it2: r0's last 4, then
// the 4 left admit r1 whole: both sample their first token at t = 3. it3 decodes both; they
// finish at 4.
TEST(VllmV1Scheduler, OneTokenBudgetOverRunningThenWaiting) {
  auto a = v1_pool(100, 4, false);
  auto o = testing::simulate({trace_req(0, 0, 20, 2), trace_req(1, 0, 4, 2)}, a, v1(8));
  EXPECT_EQ(o.iterations_run, 4);
  EXPECT_EQ(o.iterations[0].at("prefill_tokens"), "8");
  EXPECT_EQ(o.iterations[0].at("batch_requests"), "1");
  EXPECT_EQ(o.iterations[1].at("prefill_tokens"), "8");
  EXPECT_EQ(o.iterations[2].at("prefill_tokens"), "8");
  EXPECT_EQ(o.iterations[2].at("batch_requests"), "2");
  EXPECT_EQ(o.iterations[3].at("decode_tokens"), "2");
  EXPECT_DOUBLE_EQ(o.value(0, "ttft_s"), 3);
  EXPECT_DOUBLE_EQ(o.value(1, "ttft_s"), 3);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 4);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 4);
}

// long_prefill_token_threshold 8 under a budget of 100: r0 and r1 (20 tokens, 2 out) at 0
// each prefill at most 8 tokens a step, admitted or running (vLLM's Scheduler.schedule caps
// num_new_tokens in both loops): 16, 16, then the last 4 of each; first tokens at 3.
TEST(VllmV1Scheduler, LongPrefillThresholdCapsEachPrefillPerStep) {
  auto a = v1_pool(100, 4, false);
  SchedulerSettings s = v1(100);
  s.long_prefill_token_threshold = 8;
  auto o = testing::simulate({trace_req(0, 0, 20, 2), trace_req(1, 0, 20, 2)}, a, s);
  EXPECT_EQ(o.iterations_run, 4);
  EXPECT_EQ(o.iterations[0].at("prefill_tokens"), "16");
  EXPECT_EQ(o.iterations[1].at("prefill_tokens"), "16");
  EXPECT_EQ(o.iterations[2].at("prefill_tokens"), "8");
  EXPECT_DOUBLE_EQ(o.value(0, "ttft_s"), 3);
  EXPECT_DOUBLE_EQ(o.value(1, "ttft_s"), 3);
}

// From vLLM 0.31.0 (long_prefill_cap_needs_company) the cap applies only while more than one
// request runs or waits. r0 (20 tokens, 3 out) alone at 0 takes its whole prompt in step 0;
// r1 (20, 2) arrives at 0.5: step 1 counts two requests, so r1's prefill is capped at 8.
TEST(VllmV1Scheduler, LongPrefillThresholdSparesALoneRequestFromVllm031) {
  auto a = v1_pool(100, 4, false);
  SchedulerSettings s = v1(100);
  s.long_prefill_token_threshold = 8;
  s.long_prefill_cap_needs_company = true;
  auto o = testing::simulate({trace_req(0, 0, 20, 3), trace_req(1, 0.5, 20, 2)}, a, s);
  EXPECT_EQ(o.iterations[0].at("prefill_tokens"), "20");
  EXPECT_EQ(o.iterations[1].at("prefill_tokens"), "8");
  EXPECT_EQ(o.iterations[2].at("prefill_tokens"), "8");
  EXPECT_EQ(o.iterations[3].at("prefill_tokens"), "4");
  EXPECT_DOUBLE_EQ(o.value(0, "ttft_s"), 1);
  s.long_prefill_cap_needs_company = false;  // before 0.31.0: always capped
  auto a2 = v1_pool(100, 4, false);
  auto o2 = testing::simulate({trace_req(0, 0, 20, 3), trace_req(1, 0.5, 20, 2)}, a2, s);
  EXPECT_EQ(o2.iterations[0].at("prefill_tokens"), "8");
  EXPECT_DOUBLE_EQ(o2.value(0, "ttft_s"), 3);
}

// Pool of 6 blocks of 4, budget 100, no prefix cache. r0 and r1 (4, 12) at 0, r2 (4, 2) at
// 4.5. it0 admits r0 and r1 (1 block each). At it_k each holds 4 + k tokens: 2 blocks each
// from it1, 3 each from it5 (free 0), so r2 waits. it9: r0 needs its 4th block; the last
// running request, r1 (9 generated), is preempted; its 3 blocks come back (free 2 after
// r0's). r2 would fit, but v1 admits nothing in a step that preempted. it10, it11: r1 heads
// the waiting queue and needs 4 blocks (13 tokens): FCFS, r2 waits behind it. r0 finishes
// at t = 12; it12 re-admits r1 (13 tokens) then r2 (4): 17 prefill tokens. r2 finishes at
// 14, r1 at 15.
TEST(VllmV1Scheduler, PreemptsTheLastRunningAndAdmitsNothingThatStep) {
  auto a = v1_pool(6, 4, false);
  auto o = testing::simulate({trace_req(0, 0, 4, 12), trace_req(1, 0, 4, 12), trace_req(2, 4.5, 4, 2)}, a, v1(100));
  EXPECT_EQ(o.iterations_run, 15);
  EXPECT_EQ(o.iterations[9].at("preemptions"), "1");
  EXPECT_EQ(o.iterations[9].at("batch_requests"), "1");
  EXPECT_EQ(o.iterations[10].at("batch_requests"), "1");
  EXPECT_EQ(o.iterations[12].at("prefill_tokens"), "17");
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 12);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 15);
  EXPECT_DOUBLE_EQ(o.value(2, "first_token_s"), 13);
  EXPECT_DOUBLE_EQ(o.value(2, "finish_s"), 14);
  EXPECT_EQ(o.request(1).at("preemptions"), "1");
  EXPECT_EQ(o.request(1).at("recomputed_tokens"), "13");
  EXPECT_EQ(o.request(0).at("preemptions"), "0");
  EXPECT_EQ(o.summary.recompute_preemptions, 1);
}

// Blocks of 4 with the prefix cache. r0 (8 tokens, ids 1 2) at 0 caches both blocks. r1
// (the same 8 tokens) at 2: v1 caps hits at (8 - 1) / 4 = 1 whole block, so it computes
// its last block again (4 cached, not 7). r2 (9 tokens, ids 1 2 3) at 4: (9 - 1) / 4 = 2
// blocks hit, 1 token computed.
TEST(VllmV1Scheduler, HitsAreWholeBlocksLeavingTheLastTokenToCompute) {
  auto a = v1_pool(100, 4, true);
  auto r0 = trace_req(0, 0, 8, 1);
  r0.hash_ids = {1, 2};
  auto r1 = trace_req(1, 2, 8, 1);
  r1.hash_ids = {1, 2};
  auto r2 = trace_req(2, 4, 9, 1);
  r2.hash_ids = {1, 2, 3};
  auto o = testing::simulate_hashed({r0, r1, r2}, 4, a, v1(100));
  EXPECT_EQ(o.request(0).at("cached_tokens"), "0");
  EXPECT_EQ(o.request(1).at("cached_tokens"), "4");
  EXPECT_EQ(o.request(2).at("cached_tokens"), "8");
  ASSERT_EQ(o.iterations_run, 3);
  EXPECT_EQ(o.iterations[1].at("prefill_tokens"), "4");
  EXPECT_EQ(o.iterations[2].at("prefill_tokens"), "1");
  ASSERT_TRUE(o.summary.prefix_cache.has_value());
  EXPECT_EQ(o.summary.prefix_cache->prompt_tokens, 25);
  EXPECT_EQ(o.summary.prefix_cache->hit_tokens, 12);
  EXPECT_EQ(o.summary.prefix_cache->hit_blocks, 3);
}

// The preempt/re-admit livelock. Blocks of 64, a pool of 3, budget 65. r0 (64, 60) at 0
// holds 2 blocks from it1 until it finishes at t = 60: one block is left. r1 (128 tokens,
// ids 1 2; output 1) arrives at 0.5; it1 admits its first chunk, 64 tokens (r0's decode took
// 1 of the budget): one full block, cached under id 1. it2: its second chunk needs a block,
// none is free, and r1 is the last running request: it preempts itself. Its block keeps
// its hash in the free queue, so re-admission would hit it and need 2 blocks at once: r1
// waits until r0 finishes (1 preemption), then hits 64 tokens and computes 64.
// The same trace without ids hits the same: vLLM hashes every full block of a request, not
// only those a trace names (SchedulerTraits::caches_preempted_blocks gives the others keys of
// the request's own). Had the freed block lost its hash (no prefix cache: every re-admission
// starts from nothing), each re-admission would fit its first chunk again and preempt itself
// at the next: once every 2 iterations for as long as r0 runs.
TEST(VllmV1Scheduler, ReadmissionHitsItsFreedBlocksSoPreemptionsAreBounded) {
  auto r0 = trace_req(0, 0, 64, 60);
  auto r1 = trace_req(1, 0.5, 128, 1);
  r1.hash_ids = {1, 2};
  {
    auto a = v1_pool(3, 64, true);
    auto o = testing::simulate_hashed({r0, r1}, 64, a, v1(65));
    EXPECT_EQ(o.request(1).at("preemptions"), "1");
    EXPECT_EQ(o.request(1).at("cached_tokens"), "0");
    EXPECT_EQ(o.request(1).at("readmission_cached_tokens"), "64");
    EXPECT_EQ(o.request(1).at("recomputed_tokens"), "0");  // nothing generated before the preemption
    EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 60);
    EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 61);
    EXPECT_EQ(o.iterations[2].at("preemptions"), "1");
    EXPECT_EQ(o.iterations[60].at("readmission_hit_tokens"), "64");
    EXPECT_EQ(o.iterations[60].at("prefill_tokens"), "64");
  }
  r1.hash_ids.clear();
  {
    auto a = v1_pool(3, 64, true);
    auto o = testing::simulate_hashed({r0, r1}, 64, a, v1(65));
    EXPECT_EQ(o.request(1).at("preemptions"), "1");
    EXPECT_EQ(o.request(1).at("readmission_cached_tokens"), "64");
    EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 61);
  }
  {
    auto a = v1_pool(3, 64, false);
    auto o = testing::simulate_hashed({r0, r1}, 64, a, v1(65));
    // Preempted at it2, it4, ..., it58 (re-admitted at each odd iteration in between).
    EXPECT_EQ(o.request(1).at("preemptions"), "29") << "without hits the re-admissions thrash";
    EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 60);
  }
}

}  // namespace
}  // namespace pagesim::sim
