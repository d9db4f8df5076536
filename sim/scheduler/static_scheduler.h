// StaticScheduler: request-level (static) batching, as FasterTransformer serves: a batch of
// up to max_num_seqs requests is admitted FCFS when nothing runs, and no request joins until
// every request of the batch has finished. Finished requests release their memory at once.
// A sequence that outgrows its reservation is preempted by recompute.
#pragma once

#include "sim/scheduler/scheduler.h"

namespace pagesim::sim {

class StaticScheduler final : public Scheduler {
 public:
  using Scheduler::Scheduler;
  void schedule(double now, IterationPlan& plan) override;
};

}  // namespace pagesim::sim
