// Review: request lifecycle corner cases of the shared scheduler mechanics.
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

alloc::ContiguousSettings first_fit(std::int64_t slots, alloc::ReservationPolicy reservation) {
  alloc::ContiguousSettings cs;
  cs.capacity_slots = slots;
  cs.placement = alloc::PlacementKind::kFirstFit;
  cs.reservation = reservation;
  return cs;
}

// Orca over 20 slots with oracle reservations: r0 (4, 6) takes 10 slots, r1 (2, 3, n = 3)
// 5. After r1's prefill the first fork fits (20 used), the second does not: r1 is
// preempted by recompute and must no longer count any sequence as running.
TEST(SchedulerLifecycle, FailedForkLeavesNoRunningSequenceBehind) {
  alloc::ContiguousAllocator a(first_fit(20, alloc::ReservationPolicy::oracle()));
  auto sched = make_scheduler(no_watermark(SchedulerKind::kOrca), a);
  Request r0, r1;
  r0.id = 0, r0.prompt_tokens = 4, r0.output_tokens = 6;
  r1.id = 1, r1.prompt_tokens = 2, r1.output_tokens = 3, r1.n = 3;
  sched->add_request(&r0);
  sched->add_request(&r1);
  IterationPlan plan;
  sched->schedule(0, plan);
  ASSERT_EQ(plan.prefills.size(), 2u);
  ASSERT_EQ(sched->num_running_seqs(), 2);
  r1.to_prefill = r1.prefilled = 0;  // the engine applies r1's prefill
  r1.generated = 1;
  EXPECT_FALSE(sched->fork_to_width(&r1));
  EXPECT_EQ(sched->num_running(), 1u);
  EXPECT_EQ(sched->num_waiting(), 1u);
  EXPECT_TRUE(r1.seqs.empty());
  EXPECT_EQ(sched->num_running_seqs(), 1) << "only r0's sequence runs";
  EXPECT_EQ(a.num_sequences(), 1);
}

// The same failed fork run end to end: the preemption it makes happens outside any plan's
// counters, yet the run's total must equal the requests' own counts.
TEST(SchedulerLifecycle, PreemptionsOfFailedForksAreCounted) {
  alloc::ContiguousAllocator a(first_fit(20, alloc::ReservationPolicy::oracle()));
  const testing::Outcome o =
      simulate({trace_req(0, 0, 4, 6), trace_req(1, 0, 2, 3, 3)}, a, no_watermark(SchedulerKind::kOrca));
  ASSERT_EQ(o.requests.size(), 2u);
  const std::int64_t recomputes = std::stoll(o.request(1).at("recomputes"));
  EXPECT_GE(recomputes, 1) << "r1's forks fail until r0 finishes";
  EXPECT_EQ(o.summary.preemptions, recomputes);
  EXPECT_EQ(o.summary.preemptions, o.summary.recompute_preemptions + o.summary.swap_preemptions);
  std::int64_t per_iteration = 0;
  for (const auto& row : o.iterations) per_iteration += std::stoll(row.at("preemptions"));
  EXPECT_EQ(per_iteration, recomputes);
}

// Static batching (and Orca) over a paged pool of 5 blocks of 4 with a CPU pool and swap
// preemption: r0 and r1 (8, 8) take 2 blocks each; at it1 r0 grows into the last free
// block and r1 cannot grow. These policies never swap a group back in, so r1 must be
// preempted by recompute, not parked in the swapped queue for ever.
TEST(SchedulerLifecycle, PoliciesWithoutSwapInDoNotSwapOut) {
  for (SchedulerKind kind : {SchedulerKind::kStatic, SchedulerKind::kOrca}) {
    auto a = paged(5, 4, 8);
    SchedulerSettings s = no_watermark(kind);
    s.preemption = PreemptionMode::kSwap;
    testing::Outcome o;
    ASSERT_NO_THROW(o = simulate({trace_req(0, 0, 8, 8), trace_req(1, 0, 8, 8)}, a, s)) << to_string(kind);
    EXPECT_EQ(o.requests.size(), 2u) << to_string(kind);
    EXPECT_EQ(o.request(1).at("recomputes"), "1") << to_string(kind);
    EXPECT_EQ(a.num_sequences(), 0);
    a.validate();
  }
}

// Orca over 12 slots with a fixed reservation of 2 output tokens: r0 and r1 (4, 6) take
// 6 slots each. At it3 both outgrow their reservation and are preempted by recompute in
// the same iteration; only one re-admission (7 tokens + 2) fits, and FCFS says it is r0's,
// the earlier arrival.
TEST(SchedulerLifecycle, PreemptedTogetherKeepArrivalOrder) {
  alloc::ContiguousAllocator a(first_fit(12, alloc::ReservationPolicy::fixed(2)));
  auto o = simulate({trace_req(0, 0, 4, 6), trace_req(1, 0, 4, 6)}, a, no_watermark(SchedulerKind::kOrca));
  ASSERT_EQ(o.requests.size(), 2u);
  EXPECT_EQ(o.requests[0].at("id"), "0") << "r0 should finish first";
  EXPECT_LT(o.value(0, "finish_s"), o.value(1, "finish_s"));
}

}  // namespace
}  // namespace pagesim::sim
