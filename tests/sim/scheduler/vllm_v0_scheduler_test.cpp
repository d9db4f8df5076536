// vllm-v0 (prefill-first) on small traces whose timelines were worked out by hand, under a
// constant cost model of 1 s per iteration. The traces are those of VllmScheduler's tests
// (scheduler_test.cpp), so the two policies can be read side by side.
#include <gtest/gtest.h>

#include "allocator/paged/paged_allocator.h"
#include "sim_harness.h"

namespace pagesim::sim {
namespace {

using testing::no_watermark;
using testing::paged;
using testing::simulate;
using testing::trace_req;

// r0 (prompt 10, output 3) at 0; r1 (prompt 5, output 2) at 0.5.
// it0 [0,1): prefill r0.  it1 [1,2): r1 can be admitted, so the iteration prefills r1 only
// and r0's decode waits (vllm would batch both).  it2 [2,3): decode both; r1 finishes at 3.
// it3 [3,4): decode r0, which finishes at 4 (a second later than under vllm).
TEST(VllmV0Scheduler, PrefillOnlyIterationStallsDecodes) {
  auto a = paged(100, 4);
  auto o = simulate({trace_req(0, 0, 10, 3), trace_req(1, 0.5, 5, 2)}, a, no_watermark(SchedulerKind::kVllmV0));
  EXPECT_EQ(o.iterations_run, 4);
  EXPECT_DOUBLE_EQ(o.value(0, "first_token_s"), 1);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 4);
  EXPECT_DOUBLE_EQ(o.value(1, "ttft_s"), 1.5);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 3);
  EXPECT_EQ(o.iterations[1].at("batch_requests"), "1");
  EXPECT_EQ(o.iterations[1].at("prefill_tokens"), "5");
  EXPECT_EQ(o.iterations[1].at("decode_tokens"), "0");
  EXPECT_EQ(o.iterations[2].at("batch_requests"), "2");
  EXPECT_EQ(o.iterations[2].at("prefill_tokens"), "0");
  EXPECT_EQ(o.iterations[2].at("decode_tokens"), "2");
  EXPECT_EQ(a.num_sequences(), 0);
  a.validate();
}

// Pool of 5 blocks of 4 slots. r0 (8, 8) and r1 (4, 4) both at 0: it0 prefills both (2 + 1
// blocks). it1 decodes both (each grows a block, free 0). it2: r0 finds no free block, the
// latest arrival r1 is preempted (recompute, 2 generated) and r0 decodes alone. it3: r1
// (6 tokens, 2 blocks) can be admitted, so it3 re-prefills r1 only: r0 waits. it4: r0 again
// finds no free block and r1 is preempted a second time (3 generated). it5 re-prefills r1's
// 7 tokens; its 4th token finishes it at t = 6. r0 then decodes alone it6..it9 (its 5th to
// 8th tokens) and finishes at t = 10.
TEST(VllmV0Scheduler, RecomputedRequestIsReprefilledAlone) {
  auto a = paged(5, 4);
  auto o = simulate({trace_req(0, 0, 8, 8), trace_req(1, 0, 4, 4)}, a, no_watermark(SchedulerKind::kVllmV0));
  EXPECT_EQ(o.iterations_run, 10);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 10);
  EXPECT_DOUBLE_EQ(o.value(1, "first_token_s"), 1);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 6);
  EXPECT_EQ(o.request(1).at("preemptions"), "2");
  EXPECT_EQ(o.request(1).at("recomputed_tokens"), "13");
  EXPECT_EQ(o.iterations[0].at("prefill_tokens"), "12");
  EXPECT_EQ(o.iterations[2].at("preemptions"), "1");
  EXPECT_EQ(o.iterations[2].at("decode_tokens"), "1");
  EXPECT_EQ(o.iterations[3].at("prefill_tokens"), "6");
  EXPECT_EQ(o.iterations[3].at("decode_tokens"), "0");
  EXPECT_EQ(o.iterations[4].at("preemptions"), "1");
  EXPECT_EQ(o.iterations[5].at("prefill_tokens"), "7");
  EXPECT_EQ(o.iterations[5].at("decode_tokens"), "0");
  EXPECT_EQ(o.summary.recompute_preemptions, 2);
  a.validate();
}

// Swap preemption at 0.5 s per block: it2 swaps r1's 2 blocks out (it2 lasts 2 s). While r1
// is swapped nothing is admitted, and a swap-in needs 2 blocks + 1 free: only after r0
// finishes at t = 9 (it7) does it8 swap r1 in (+1 s) and decode it; it9 finishes r1 at 12.
// Same as vllm: with nothing waiting, the two policies agree.
TEST(VllmV0Scheduler, SwapPreemptionAsVllmWhenNothingWaits) {
  auto a = paged(5, 4, 8);
  SchedulerSettings s = no_watermark(SchedulerKind::kVllmV0);
  s.preemption = PreemptionMode::kSwap;
  auto o = simulate({trace_req(0, 0, 8, 8), trace_req(1, 0, 4, 4)}, a, s, 1.0, 0.5);
  EXPECT_EQ(o.iterations_run, 10);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 9);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 12);
  EXPECT_EQ(o.iterations[2].at("swap_out_blocks"), "2");
  EXPECT_EQ(o.iterations[8].at("swap_in_blocks"), "2");
  EXPECT_EQ(o.summary.swap_preemptions, 1);
  a.validate();
}

// A swapped group blocks admission: r2 (prompt 4, output 1) arrives at 2.5 while r1 is
// swapped out (it2 [2,4)), and waits through r0's decodes. it8 [9,11) swaps r1 in and
// decodes its 3rd token; only then, at t = 11, is r2 admitted, and it9 [11,12) prefills r2
// alone (it finishes at 12) while r1's last decode waits for it10 [12,13).
TEST(VllmV0Scheduler, NothingIsAdmittedWhileAGroupIsSwapped) {
  auto a = paged(5, 4, 8);
  SchedulerSettings s = no_watermark(SchedulerKind::kVllmV0);
  s.preemption = PreemptionMode::kSwap;
  auto o = simulate({trace_req(0, 0, 8, 8), trace_req(1, 0, 4, 4), trace_req(2, 2.5, 4, 1)}, a, s, 1.0, 0.5);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 9);
  EXPECT_DOUBLE_EQ(o.value(2, "first_scheduled_s"), 11);
  EXPECT_DOUBLE_EQ(o.value(2, "finish_s"), 12);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 13);
  EXPECT_EQ(o.iterations[9].at("decode_tokens"), "0");
  a.validate();
}

}  // namespace
}  // namespace pagesim::sim
