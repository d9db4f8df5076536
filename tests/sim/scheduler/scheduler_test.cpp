// Each scheduler on small traces whose timelines were worked out by hand, under a constant
// cost model of 1 s per iteration (see the comments for each timeline).
#include <gtest/gtest.h>

#include "allocator/contiguous/contiguous_allocator.h"
#include "allocator/paged/paged_allocator.h"
#include "sim_harness.h"

namespace pagesim::sim {
namespace {

using testing::no_watermark;
using testing::paged;
using testing::simulate;
using testing::trace_req;

// r0 (prompt 10, output 3) at 0; r1 (prompt 5, output 2) at 0.5.
// it0 [0,1): prefill r0.  it1 [1,2): decode r0 + prefill r1 (mixed batch).
// it2 [2,3): decode both; both finish at 3.
TEST(VllmScheduler, ContinuousBatchingTimeline) {
  auto a = paged(100, 4);
  auto o = simulate({trace_req(0, 0, 10, 3), trace_req(1, 0.5, 5, 2)}, a, no_watermark(SchedulerKind::kVllm));
  EXPECT_EQ(o.iterations_run, 3);
  EXPECT_DOUBLE_EQ(o.value(0, "first_token_s"), 1);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 3);
  EXPECT_DOUBLE_EQ(o.value(1, "ttft_s"), 1.5);
  EXPECT_DOUBLE_EQ(o.value(1, "e2e_s"), 2.5);
  EXPECT_DOUBLE_EQ(o.value(0, "tpot_s"), 1.0);
  EXPECT_DOUBLE_EQ(o.value(0, "normalized_latency_s_per_token"), 1.0);
  EXPECT_EQ(o.iterations[1].at("batch_requests"), "2");
  EXPECT_EQ(o.iterations[1].at("prefill_tokens"), "5");
  EXPECT_EQ(o.iterations[1].at("decode_tokens"), "1");
  // At it1 r0 holds 10 prompt + its first token, r1 its 5 prompt tokens.
  EXPECT_EQ(o.iterations[1].at("token_states"), "16");
  EXPECT_EQ(a.num_sequences(), 0);
  a.validate();
}

// Pool of 5 blocks of 4 slots. r0 (8, 8) and r1 (4, 4) both at 0, both admitted at it0
// (2 + 1 blocks). it1: both grow a block (free 0). it2: r0 needs a free block (vLLM's
// conservative check), so the latest arrival r1 is preempted (recompute, 2 generated).
// it3: r1 re-admitted (6 tokens, 2 blocks, free 0). it4: r0 again finds no free block and
// r1 is preempted a second time (3 generated). r0 finishes at t = 8 (it7); it8 re-prefills
// r1's 7 tokens and its 4th token finishes it at t = 9.
TEST(VllmScheduler, RecomputePreemptionOfTheLatestArrival) {
  auto a = paged(5, 4);
  auto o = simulate({trace_req(0, 0, 8, 8), trace_req(1, 0, 4, 4)}, a, no_watermark(SchedulerKind::kVllm));
  EXPECT_EQ(o.iterations_run, 9);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 8);
  EXPECT_DOUBLE_EQ(o.value(1, "first_token_s"), 1);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 9);
  EXPECT_EQ(o.request(1).at("preemptions"), "2");
  EXPECT_EQ(o.request(1).at("recomputes"), "2");
  EXPECT_EQ(o.request(1).at("recomputed_tokens"), "13");
  EXPECT_EQ(o.iterations[3].at("prefill_tokens"), "6");
  EXPECT_EQ(o.iterations[8].at("prefill_tokens"), "7");
  EXPECT_EQ(o.iterations[2].at("preemptions"), "1");
  EXPECT_EQ(o.summary.preemptions, 2);
  EXPECT_EQ(o.summary.recompute_preemptions, 2);
  a.validate();
}

// Same trace, swap preemption at 0.5 s per block: at it2 r1's 2 blocks go to the CPU
// (it2 lasts 2 s); r1 comes back only when 2 blocks + 1 free remain, after r0 finishes at
// t = 9; it8 swaps in (+1 s) and decodes, it9 finishes r1 at t = 12. No re-prefill.
TEST(VllmScheduler, SwapPreemptionMovesBlocksAndCostsTime) {
  auto a = paged(5, 4, 8);
  SchedulerSettings s = no_watermark(SchedulerKind::kVllm);
  s.preemption = PreemptionMode::kSwap;
  auto o = simulate({trace_req(0, 0, 8, 8), trace_req(1, 0, 4, 4)}, a, s, 1.0, 0.5);
  EXPECT_EQ(o.iterations_run, 10);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 9);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 12);
  EXPECT_EQ(o.request(1).at("recomputes"), "0");
  EXPECT_EQ(o.request(1).at("recomputed_tokens"), "0");
  EXPECT_DOUBLE_EQ(o.value(1, "swapped_bytes"), 4 * 4);  // 2 blocks out + 2 in, 4 slots, 1 B/token
  EXPECT_EQ(o.iterations[2].at("swap_out_blocks"), "2");
  EXPECT_DOUBLE_EQ(std::stod(o.iterations[2].at("duration_s")), 2.0);
  EXPECT_EQ(o.iterations[8].at("swap_in_blocks"), "2");
  EXPECT_EQ(o.iterations[8].at("prefill_tokens"), "0");
  EXPECT_EQ(o.summary.swap_preemptions, 1);
  EXPECT_EQ(a.num_free_cpu_blocks(), 8);
  a.validate();
}

// Watermark 30% of 12 blocks = 3 kept free. r1 needs 8 blocks: after r0's 2 (then 3)
// blocks too few remain, so r1 waits until r0 finishes at t = 2.
TEST(VllmScheduler, WatermarkDelaysAdmission) {
  auto a = paged(12, 4);
  SchedulerSettings s = no_watermark(SchedulerKind::kVllm);
  s.watermark = 0.3;
  auto o = simulate({trace_req(0, 0, 8, 2), trace_req(1, 0, 32, 1)}, a, s);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 2);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 3);  // admitted at t = 2
}

// Batched-token limit: 10 + 10 tokens > 15, so the second prompt waits one iteration.
TEST(VllmScheduler, TokenBudgetSplitsPrefills) {
  auto a = paged(100, 4);
  SchedulerSettings s = no_watermark(SchedulerKind::kVllm);
  s.max_num_batched_tokens = 15;
  auto o = simulate({trace_req(0, 0, 10, 1), trace_req(1, 0, 10, 1)}, a, s);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 1);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 2);
}

// Orca over a first-fit contiguous pool of 64 slots with oracle reservations: r0 reserves
// 15 slots, r1 needs 60 and waits until r0 finishes at t = 5 (it0 prefill + 4 decodes);
// r1 then runs it5..it34 and finishes at t = 35.
TEST(OrcaScheduler, ReservationsBlockAdmissionUntilMemoryFrees) {
  alloc::ContiguousSettings cs;
  cs.capacity_slots = 64;
  cs.placement = alloc::PlacementKind::kFirstFit;
  cs.reservation = alloc::ReservationPolicy::oracle();
  alloc::ContiguousAllocator a(cs);
  auto o = simulate({trace_req(0, 0, 10, 5), trace_req(1, 0, 30, 30)}, a, no_watermark(SchedulerKind::kOrca));
  EXPECT_EQ(o.iterations_run, 35);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 5);
  EXPECT_DOUBLE_EQ(o.value(1, "first_scheduled_s"), 5);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 35);
  // it0: r0 holds 10 tokens of a 15-slot reservation: 5 reserved, nothing over-reserved.
  EXPECT_EQ(o.iterations[0].at("token_states"), "10");
  EXPECT_EQ(o.iterations[0].at("reserved"), "5");
  EXPECT_EQ(o.iterations[0].at("over_reserved"), "0");
  EXPECT_EQ(o.iterations[0].at("free"), "49");
  EXPECT_EQ(o.iterations[0].at("unusable_free"), "49");  // the 49-slot hole cannot take r1's 60
  EXPECT_EQ(o.summary.preemptions, 0);
}

// Orca with an under-estimating fixed reservation: r0 (prompt 4, output 6) reserves
// 4 + 2 = 6 slots; at it3 its 7th token does not fit, so it is preempted (recompute) and
// re-admitted at once with prompt + 3 generated tokens.
TEST(OrcaScheduler, OutgrowingAFixedReservationPreemptsByRecompute) {
  alloc::ContiguousSettings cs;
  cs.capacity_slots = 64;
  cs.placement = alloc::PlacementKind::kFirstFit;
  cs.reservation = alloc::ReservationPolicy::fixed(2);
  alloc::ContiguousAllocator a(cs);
  auto o = simulate({trace_req(0, 0, 4, 6)}, a, no_watermark(SchedulerKind::kOrca));
  EXPECT_GE(std::stoi(o.request(0).at("recomputes")), 1);
  EXPECT_EQ(a.num_sequences(), 0);
  a.validate();
}

// Static batching, batch size 2: r0 (10, 3) and r1 (10, 5) run together; r2 (5, 1) arrives
// at 0.5 but waits for the whole batch (finished at t = 5), then finishes at 6.
TEST(StaticScheduler, NewRequestsWaitForTheWholeBatch) {
  auto a = paged(100, 4);
  SchedulerSettings s = no_watermark(SchedulerKind::kStatic);
  s.max_num_seqs = 2;
  auto o = simulate({trace_req(0, 0, 10, 3), trace_req(1, 0, 10, 5), trace_req(2, 0.5, 5, 1)}, a, s);
  EXPECT_EQ(o.iterations_run, 6);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 3);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 5);
  EXPECT_DOUBLE_EQ(o.value(2, "first_scheduled_s"), 5);
  EXPECT_DOUBLE_EQ(o.value(2, "e2e_s"), 5.5);
}

// Sarathi, budget 8 tokens: r0's 20-token prompt takes chunks 8, 8, 4; r1 (4 tokens) fills
// the rest of it2's budget. Both sample their first token at t = 3 and finish at 4.
TEST(SarathiScheduler, ChunkedPrefillUnderATokenBudget) {
  auto a = paged(100, 4);
  SchedulerSettings s = no_watermark(SchedulerKind::kSarathi);
  s.chunk_tokens = 8;
  auto o = simulate({trace_req(0, 0, 20, 2), trace_req(1, 0, 4, 2)}, a, s);
  EXPECT_EQ(o.iterations_run, 4);
  EXPECT_EQ(o.iterations[0].at("prefill_tokens"), "8");
  EXPECT_EQ(o.iterations[1].at("prefill_tokens"), "8");
  EXPECT_EQ(o.iterations[2].at("prefill_tokens"), "8");
  EXPECT_EQ(o.iterations[2].at("batch_requests"), "2");
  EXPECT_DOUBLE_EQ(o.value(0, "ttft_s"), 3);
  EXPECT_DOUBLE_EQ(o.value(1, "ttft_s"), 3);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 4);
  EXPECT_DOUBLE_EQ(o.value(1, "finish_s"), 4);
  a.validate();
}

// Sarathi keeps decoding while a long prompt is chunked: r0 (4, 6) decodes every iteration
// although r1's 40-token prompt arrives at t = 1.
TEST(SarathiScheduler, DecodesAreNotStalledByLongPrompts) {
  auto a = paged(100, 4);
  SchedulerSettings s = no_watermark(SchedulerKind::kSarathi);
  s.chunk_tokens = 8;
  auto o = simulate({trace_req(0, 0, 4, 6), trace_req(1, 1, 40, 1)}, a, s);
  EXPECT_DOUBLE_EQ(o.value(0, "finish_s"), 6);
  EXPECT_DOUBLE_EQ(o.value(0, "tpot_s"), 1);
}

// Parallel sampling n = 2, block 4: the 6-token prompt fills 1.5 blocks. After the prefill
// the group forks; at it1 the first sample's write copies the shared half block (CoW) and
// the second writes in place: 4 logical + ... = blocks {shared full, copy, original}.
TEST(ParallelSampling, ForkAfterPrefillSharesPromptBlocks) {
  auto a = paged(100, 4);
  auto o = simulate({trace_req(0, 0, 6, 3, 2)}, a, no_watermark(SchedulerKind::kVllm));
  EXPECT_EQ(o.iterations_run, 3);
  EXPECT_EQ(o.iterations[1].at("batch_seqs"), "2");
  EXPECT_EQ(o.iterations[1].at("decode_tokens"), "2");
  EXPECT_EQ(o.iterations[1].at("logical_blocks"), "4");
  EXPECT_EQ(o.iterations[1].at("physical_blocks"), "3");
  EXPECT_EQ(o.iterations[1].at("token_states"), "10");  // 4 shared + 3 + 3
  EXPECT_GT(o.summary.sharing_saving_pct, 0);
  EXPECT_EQ(a.num_sequences(), 0);
  a.validate();
}

// Beam search with 4 beams: the group keeps 4 sequences every step, shares blocks, and
// frees everything at the end; the same seed gives the same run.
TEST(BeamSearch, KeepsWidthSharesBlocksAndIsSeeded) {
  auto run = [](std::uint64_t seed) {
    auto a = paged(400, 4);
    auto o = simulate({trace_req(0, 0, 30, 40, 1, 4), trace_req(1, 3, 20, 30, 1, 4)}, a,
                      no_watermark(SchedulerKind::kVllm), 1.0, 0.0, seed);
    EXPECT_EQ(a.num_sequences(), 0);
    EXPECT_EQ(a.num_free_blocks(), 400);
    a.validate();
    return o;
  };
  auto o1 = run(7), o2 = run(7), o3 = run(8);
  for (std::size_t i = 1; i < o1.iterations.size(); ++i) {
    EXPECT_EQ(std::stoll(o1.iterations[i].at("decode_tokens")) % 4, 0) << "iteration " << i;
    EXPECT_GE(std::stoll(o1.iterations[i].at("logical_blocks")), std::stoll(o1.iterations[i].at("physical_blocks")));
  }
  EXPECT_GT(o1.summary.sharing_saving_pct, 20);
  EXPECT_EQ(o1.iterations.size(), o2.iterations.size());
  for (std::size_t i = 0; i < o1.iterations.size(); ++i) EXPECT_EQ(o1.iterations[i], o2.iterations[i]);
  bool differs = false;
  for (std::size_t i = 0; i < std::min(o1.iterations.size(), o3.iterations.size()); ++i)
    differs |= o1.iterations[i] != o3.iterations[i];
  EXPECT_TRUE(differs) << "another seed should give other surviving beams";
}

TEST(Scheduler, VllmNeedsAPagedAllocator) {
  alloc::ContiguousSettings cs;
  cs.capacity_slots = 64;
  alloc::ContiguousAllocator a(cs);
  EXPECT_THROW(make_scheduler(no_watermark(SchedulerKind::kVllm), a), std::invalid_argument);
  EXPECT_THROW(make_scheduler(no_watermark(SchedulerKind::kSarathi), a), std::invalid_argument);
}

TEST(Scheduler, ARequestThatNeverFitsIsAnError) {
  auto a = paged(4, 4);  // 16 slots
  try {
    simulate({trace_req(0, 0, 10, 20)}, a, no_watermark(SchedulerKind::kVllm));
    FAIL() << "expected SimulationError";
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("request 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("never"), std::string::npos) << e.what();
  }
}

TEST(Scheduler, CanEverScheduleNamesTheLimitingKey) {
  Request r;
  r.prompt_tokens = 10;
  r.output_tokens = 20;
  std::string why, key;
  auto tiny = paged(4, 4);  // 16 slots
  EXPECT_FALSE(make_scheduler(no_watermark(SchedulerKind::kVllm), tiny)->can_ever_schedule(r, &why, &key));
  EXPECT_EQ(key, "kv.slots");

  auto big = paged(1024, 16);
  SchedulerSettings budget = no_watermark(SchedulerKind::kVllm);
  budget.max_num_batched_tokens = 100;
  r.prompt_tokens = 200;
  r.output_tokens = 1;
  EXPECT_FALSE(make_scheduler(budget, big)->can_ever_schedule(r, &why, &key));
  EXPECT_EQ(key, "scheduler.max_num_batched_tokens");
  EXPECT_NE(why.find("max_num_batched_tokens = 100"), std::string::npos) << why;

  alloc::ContiguousSettings cs;
  cs.capacity_slots = 4096;
  cs.max_seq_len = 64;
  alloc::ContiguousAllocator contiguous(cs);
  EXPECT_FALSE(make_scheduler(no_watermark(SchedulerKind::kOrca), contiguous)->can_ever_schedule(r, &why, &key));
  EXPECT_EQ(key, "allocator.max_seq_len");

  r.prompt_tokens = 10;
  EXPECT_TRUE(make_scheduler(budget, big)->can_ever_schedule(r, &why, &key));
}

}  // namespace
}  // namespace pagesim::sim
