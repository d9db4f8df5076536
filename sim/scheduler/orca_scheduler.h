// OrcaScheduler: iteration-level batching over a reserving (contiguous) allocator, as the
// vLLM paper's Orca baselines. Each iteration every running sequence grows by its newest
// token inside its reservation (a sequence that outgrows it — only possible with an
// under-estimating reservation such as fixed:N — is preempted by recompute); then waiting
// requests are admitted FCFS while the allocator can place them, batched tokens stay
// <= max_num_batched_tokens and running sequences <= max_num_seqs. No watermark: the
// reservation already covers growth.
#pragma once

#include <memory>

#include "sim/scheduler/scheduler.h"
#include "sim/scheduler/scheduler_kind.h"

namespace pagesim::sim {

class OrcaScheduler final : public Scheduler {
 public:
  using Scheduler::Scheduler;
  void schedule(double now, IterationPlan& plan) override;
};

// scheduler.kind: orca, over any pool (the Orca baselines reserve in a contiguous one).
std::unique_ptr<Scheduler> make_orca_scheduler(const SchedulerSettings& settings, PoolRef pool);
inline constexpr SchedulerDescriptor kOrcaSchedulerKind = {
    .kind = SchedulerKind::kOrca,
    .name = "orca",
    .summary = "iteration-level batching over a reserving allocator (Orca baselines)",
    .traits = {.chunked_prefill = false, .repeats_decode_plans = true},
    .allocators = kEveryAllocatorKind,
    .build = &make_orca_scheduler,
};

}  // namespace pagesim::sim
