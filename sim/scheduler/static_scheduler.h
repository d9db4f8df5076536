// StaticScheduler: request-level (static) batching, as FasterTransformer serves: a batch of
// up to max_num_seqs requests is admitted FCFS when nothing runs, and no request joins until
// every request of the batch has finished. Finished requests release their memory at once.
// A sequence that outgrows its reservation is preempted by recompute.
#pragma once

#include <memory>

#include "sim/scheduler/scheduler.h"
#include "sim/scheduler/scheduler_kind.h"

namespace pagesim::sim {

class StaticScheduler final : public Scheduler {
 public:
  using Scheduler::Scheduler;
  void schedule(double now, IterationPlan& plan) override;
};

// scheduler.kind: static, over any pool.
std::unique_ptr<Scheduler> make_static_scheduler(const SchedulerSettings& settings, PoolRef pool);
inline constexpr SchedulerDescriptor kStaticSchedulerKind = {
    .kind = SchedulerKind::kStatic,
    .name = "static",
    .summary = "a batch runs to completion before the next starts",
    .traits = {.chunked_prefill = false, .repeats_decode_plans = true},
    .allocators = kEveryAllocatorKind,
    .build = &make_static_scheduler,
};

}  // namespace pagesim::sim
